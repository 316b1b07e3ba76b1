//! Registries: a static tree reachable as a directory or an http(s) URL.
//!
//! ```text
//! <base>/index.json                                  {"bundles":[{"name":"core-utils","versions":["0.1.0"]}]}
//! <base>/bundles/<name>/<version>/manifest.json
//! <base>/bundles/<name>/<version>/<asset path>        every asset beside its manifest
//! ```
//!
//! Over http(s) the fetch sends no cookies and no credentials (a URL with a user name or
//! password is refused), follows at most 5 redirects and never from https to http, and caps
//! every body: 1 MiB for the index and manifests, the declared size for an asset (a body that
//! runs past it is a size mismatch, found while streaming, not after).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::manifest::MAX_MANIFEST_BYTES;
use crate::relpath;
use crate::trust::registry_id;

/// The largest index accepted.
pub const MAX_INDEX_BYTES: usize = 1024 * 1024;
/// The largest asset accepted, whatever the manifest declares.
pub const MAX_ASSET_BYTES: u64 = 512 * 1024 * 1024;

/// `index.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// Every bundle with its versions.
    #[serde(default)]
    pub bundles: Vec<IndexEntry>,
}

/// One bundle in the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexEntry {
    /// Its name.
    pub name: String,
    /// Its versions, in any order.
    #[serde(default)]
    pub versions: Vec<String>,
}

impl Index {
    /// The newest version of `name` ([`compare_versions`] order).
    pub fn latest(&self, name: &str) -> Option<&str> {
        self.bundles
            .iter()
            .find(|b| b.name == name)?
            .versions
            .iter()
            .max_by(|a, b| compare_versions(a, b))
            .map(String::as_str)
    }

    /// Adds `name@version` (idempotent), keeping entries sorted.
    pub fn add(&mut self, name: &str, version: &str) {
        match self.bundles.iter_mut().find(|b| b.name == name) {
            Some(entry) => {
                if !entry.versions.iter().any(|v| v == version) {
                    entry.versions.push(version.to_string());
                }
                entry.versions.sort_by(|a, b| compare_versions(a, b));
            }
            None => self.bundles.push(IndexEntry {
                name: name.to_string(),
                versions: vec![version.to_string()],
            }),
        }
        self.bundles.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// Orders versions by their dot-separated parts, numerically where both parts are numbers
/// (`0.10.0` after `0.9.1`), else as text; a pre-release suffix (`1.0.0-rc1`) sorts before the
/// release.
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |v: &str| -> (Vec<String>, Option<String>) {
        match v.split_once('-') {
            Some((core, pre)) => (
                core.split('.').map(str::to_string).collect(),
                Some(pre.to_string()),
            ),
            None => (v.split('.').map(str::to_string).collect(), None),
        }
    };
    let (ca, pa) = split(a);
    let (cb, pb) = split(b);
    for (x, y) in ca.iter().zip(cb.iter()) {
        let ord = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(nx), Ok(ny)) => nx.cmp(&ny),
            _ => x.cmp(y),
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| match (pa, pb) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    })
}

/// A registry that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The base is neither an http(s) URL nor a directory.
    #[error("registry `{0}` is neither an http(s) URL nor an existing directory")]
    BadBase(String),
    /// The URL carries a user name or password.
    #[error(
        "registry URL `{0}` carries credentials; registries are fetched without credentials, remove the user:password part"
    )]
    Credentials(String),
    /// A name, version or path in a request is not allowed.
    #[error("`{value}` cannot be fetched from a registry: it must {why}")]
    BadName {
        /// The value.
        value: String,
        /// What it must be.
        why: &'static str,
    },
    /// The thing is not in the registry.
    #[error("not found in the registry: {0}")]
    NotFound(String),
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The body is larger than allowed.
    #[error("{what} is larger than {limit} bytes; refused")]
    TooLarge {
        /// What was fetched.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// The transfer failed (connection refused, reset, cut short, timeout).
    #[error("{what}: transfer failed: {why}")]
    Transfer {
        /// What was fetched.
        what: String,
        /// Why.
        why: String,
    },
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `index.json` is not an index.
    #[error(
        "{0}: not a registry index ({1}); expected {{\"bundles\": [{{\"name\", \"versions\"}}]}}"
    )]
    BadIndex(String, String),
}

/// A fetched asset's digest and length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    /// SHA-256, lowercase hex.
    pub sha256: String,
    /// Bytes written.
    pub size: u64,
}

#[derive(Clone, Debug)]
enum Source {
    Dir(PathBuf),
    #[cfg(feature = "http")]
    Http(url::Url),
}

/// A registry to read from.
#[derive(Clone, Debug)]
pub struct Registry {
    id: String,
    source: Source,
}

impl Registry {
    /// Opens `base`: an http(s) URL or a directory.
    ///
    /// # Errors
    /// [`RegistryError::BadBase`] or [`RegistryError::Credentials`].
    pub fn open(base: &str) -> Result<Self, RegistryError> {
        let trimmed = base.trim();
        if crate::trust::is_http(trimmed) {
            let url =
                url::Url::parse(trimmed).map_err(|_| RegistryError::BadBase(base.to_string()))?;
            if !url.username().is_empty() || url.password().is_some() {
                return Err(RegistryError::Credentials(base.to_string()));
            }
            #[cfg(feature = "http")]
            {
                return Ok(Self {
                    id: registry_id(trimmed),
                    source: Source::Http(url),
                });
            }
            #[cfg(not(feature = "http"))]
            {
                return Err(RegistryError::BadBase(format!(
                    "{base} (this build has no `http` feature; use a directory)"
                )));
            }
        }
        let path = Path::new(trimmed.strip_prefix("file://").unwrap_or(trimmed));
        if !path.is_dir() {
            return Err(RegistryError::BadBase(base.to_string()));
        }
        Ok(Self {
            id: registry_id(trimmed),
            source: Source::Dir(PathBuf::from(registry_id(trimmed))),
        })
    }

    /// The registry's id (see [`registry_id`]).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Reads `index.json`.
    ///
    /// # Errors
    /// A missing or malformed index, or a transfer failure.
    pub fn index(&self) -> Result<Index, RegistryError> {
        let bytes = self.get_small("index.json", MAX_INDEX_BYTES)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| RegistryError::BadIndex(format!("{}/index.json", self.id), e.to_string()))
    }

    /// The exact bytes of `bundles/<name>/<version>/manifest.json`.
    ///
    /// # Errors
    /// Bad names, a missing manifest, a transfer failure, or more than 1 MiB.
    pub fn manifest_bytes(&self, name: &str, version: &str) -> Result<Vec<u8>, RegistryError> {
        check(name)?;
        check(version)?;
        self.get_small(
            &format!("bundles/{name}/{version}/manifest.json"),
            MAX_MANIFEST_BYTES,
        )
    }

    /// Streams asset `path` of `name@version` into `out`, hashing as it goes and stopping as
    /// soon as more than `declared_size` bytes arrive.
    ///
    /// # Errors
    /// Bad names, a missing asset, a transfer failure, or a body longer than declared
    /// ([`RegistryError::TooLarge`]).
    pub fn fetch_asset(
        &self,
        name: &str,
        version: &str,
        path: &str,
        declared_size: u64,
        out: &mut dyn Write,
    ) -> Result<Fetched, RegistryError> {
        check(name)?;
        check(version)?;
        relpath::check_path(path).map_err(|why| RegistryError::BadName {
            value: path.to_string(),
            why,
        })?;
        let limit = declared_size.min(MAX_ASSET_BYTES);
        let rel = format!("bundles/{name}/{version}/{path}");
        match &self.source {
            Source::Dir(base) => {
                let file_path = base.join(&rel);
                let file = std::fs::File::open(&file_path).map_err(|source| {
                    if source.kind() == std::io::ErrorKind::NotFound {
                        RegistryError::NotFound(file_path.display().to_string())
                    } else {
                        RegistryError::Io {
                            path: file_path.clone(),
                            source,
                        }
                    }
                })?;
                copy_capped(file, out, limit, &file_path.display().to_string())
            }
            #[cfg(feature = "http")]
            Source::Http(base) => http::fetch(base, &rel, limit, out),
        }
    }

    fn get_small(&self, rel: &str, limit: usize) -> Result<Vec<u8>, RegistryError> {
        let mut buf = Vec::new();
        match &self.source {
            Source::Dir(base) => {
                let file_path = base.join(rel);
                let file = std::fs::File::open(&file_path).map_err(|source| {
                    if source.kind() == std::io::ErrorKind::NotFound {
                        RegistryError::NotFound(file_path.display().to_string())
                    } else {
                        RegistryError::Io {
                            path: file_path.clone(),
                            source,
                        }
                    }
                })?;
                copy_capped(
                    file,
                    &mut buf,
                    limit as u64,
                    &file_path.display().to_string(),
                )?;
            }
            #[cfg(feature = "http")]
            Source::Http(base) => {
                http::fetch(base, rel, limit as u64, &mut buf)?;
            }
        }
        Ok(buf)
    }
}

fn check(component: &str) -> Result<(), RegistryError> {
    relpath::check_component(component).map_err(|why| RegistryError::BadName {
        value: component.to_string(),
        why,
    })
}

fn copy_capped(
    mut from: impl Read,
    out: &mut dyn Write,
    limit: u64,
    what: &str,
) -> Result<Fetched, RegistryError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = from.read(&mut buf).map_err(|e| RegistryError::Transfer {
            what: what.to_string(),
            why: e.to_string(),
        })?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > limit {
            return Err(RegistryError::TooLarge {
                what: what.to_string(),
                limit,
            });
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| RegistryError::Transfer {
                what: what.to_string(),
                why: format!("cannot write: {e}"),
            })?;
    }
    Ok(Fetched {
        sha256: hex::encode(hasher.finalize()),
        size: total,
    })
}

#[cfg(feature = "http")]
mod http {
    //! The http(s) side: one request per fetch, on a thread of its own with a current-thread
    //! runtime, so callers inside or outside an async runtime can use it.

    use std::io::Write;
    use std::time::Duration;

    use sha2::{Digest, Sha256};

    use super::{Fetched, RegistryError};

    const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    const READ_TIMEOUT: Duration = Duration::from_secs(30);
    const MAX_REDIRECTS: usize = 5;

    pub(super) fn fetch(
        base: &url::Url,
        rel: &str,
        limit: u64,
        out: &mut dyn Write,
    ) -> Result<Fetched, RegistryError> {
        let mut joined = base.as_str().trim_end_matches('/').to_string();
        joined.push('/');
        joined.push_str(rel);
        let url = url::Url::parse(&joined).map_err(|_| RegistryError::BadBase(joined.clone()))?;
        let what = url.to_string();
        // The body is streamed into a channel so the caller's writer stays on this thread.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>, RegistryError>>(16);
        let worker = std::thread::spawn(move || run(url, limit, &tx));
        let mut hasher = Sha256::new();
        let mut total = 0u64;
        let mut failure = None;
        for piece in rx {
            match piece {
                Ok(bytes) => {
                    total += bytes.len() as u64;
                    hasher.update(&bytes);
                    if let Err(e) = out.write_all(&bytes) {
                        failure = Some(RegistryError::Transfer {
                            what,
                            why: format!("cannot write: {e}"),
                        });
                        break;
                    }
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let _ = worker.join();
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(Fetched {
            sha256: hex::encode(hasher.finalize()),
            size: total,
        })
    }

    fn run(
        url: url::Url,
        limit: u64,
        tx: &std::sync::mpsc::SyncSender<Result<Vec<u8>, RegistryError>>,
    ) {
        let what = url.to_string();
        let transfer = |why: String| RegistryError::Transfer {
            what: what.clone(),
            why,
        };
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                let _ = tx.send(Err(transfer(format!("cannot start the I/O runtime: {e}"))));
                return;
            }
        };
        runtime.block_on(async {
            let client = match reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .read_timeout(READ_TIMEOUT)
                .user_agent(concat!("agent-bundles/", env!("CARGO_PKG_VERSION")))
                .redirect(reqwest::redirect::Policy::custom(|attempt| {
                    let downgrade = attempt
                        .previous()
                        .last()
                        .is_some_and(|prev| prev.scheme() == "https")
                        && attempt.url().scheme() != "https";
                    let credentials =
                        !attempt.url().username().is_empty() || attempt.url().password().is_some();
                    if attempt.previous().len() > MAX_REDIRECTS || downgrade || credentials {
                        attempt.stop()
                    } else {
                        attempt.follow()
                    }
                }))
                .build()
            {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(Err(transfer(e.to_string())));
                    return;
                }
            };
            let mut response = match client.get(url.clone()).send().await {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(transfer(e.to_string())));
                    return;
                }
            };
            let status = response.status();
            if status.as_u16() == 404 {
                let _ = tx.send(Err(RegistryError::NotFound(what.clone())));
                return;
            }
            if !status.is_success() {
                let _ = tx.send(Err(RegistryError::Status {
                    url: what.clone(),
                    status: status.as_u16(),
                }));
                return;
            }
            if response.content_length().is_some_and(|len| len > limit) {
                let _ = tx.send(Err(RegistryError::TooLarge {
                    what: what.clone(),
                    limit,
                }));
                return;
            }
            let mut total = 0u64;
            loop {
                match response.chunk().await {
                    Ok(Some(bytes)) => {
                        total += bytes.len() as u64;
                        if total > limit {
                            let _ = tx.send(Err(RegistryError::TooLarge {
                                what: what.clone(),
                                limit,
                            }));
                            return;
                        }
                        if tx.send(Ok(bytes.to_vec())).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(transfer(e.to_string())));
                        return;
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_numerically() {
        use std::cmp::Ordering::*;
        assert_eq!(compare_versions("0.10.0", "0.9.1"), Greater);
        assert_eq!(compare_versions("1.0.0", "1.0.0"), Equal);
        assert_eq!(compare_versions("1.0.0-rc1", "1.0.0"), Less);
        assert_eq!(compare_versions("1.0", "1.0.1"), Less);
        let mut index = Index::default();
        index.add("b", "0.9.1");
        index.add("b", "0.10.0");
        index.add("a", "1");
        index.add("b", "0.10.0");
        assert_eq!(index.latest("b"), Some("0.10.0"));
        assert_eq!(index.bundles[0].name, "a");
        assert_eq!(index.bundles[1].versions, ["0.9.1", "0.10.0"]);
    }

    #[test]
    fn credentials_and_bad_bases_are_refused() {
        assert!(matches!(
            Registry::open("https://user:pw@reg.example/"),
            Err(RegistryError::Credentials(_))
        ));
        assert!(matches!(
            Registry::open("/definitely/not/here"),
            Err(RegistryError::BadBase(_))
        ));
    }
}
