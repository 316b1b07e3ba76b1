//! Redirects: `<`, `>`, `>>`, `2>&1`, `&>`, onto workspace files or the shell's own devices
//! (`/dev/null`, `/dev/stdin`, `/dev/stdout`, `/dev/stderr`).

use super::{Failed, Interpreter};
use crate::shell::expand::Expander;
use crate::shell::plan::{Fd, Redirect, Word};
use crate::shell::stream::{Fds, Sink, Source};
use crate::shell::workspace::{GuestPath, lexical, strerror};

impl Interpreter<'_> {
    /// Applies one redirect to `fds`; the error is the message to print.
    ///
    /// `/dev/null`, `/dev/stdin`, `/dev/stdout` and `/dev/stderr` are the shell's own, as bash
    /// provides them where the system lacks them: the guest's `/dev` is the workspace's.
    pub(super) fn redirect(
        &self,
        redirect: &Redirect,
        expander: &Expander<'_>,
        fds: &mut Fds,
    ) -> Result<(), Failed> {
        match redirect {
            Redirect::Read { target } => {
                let (name, target) = self.target(target, expander)?;
                match target {
                    Target::Device(Device::Null) => fds.stdin = Source::Empty,
                    Target::Device(Device::Stdin) => {}
                    Target::Device(device @ (Device::Stdout | Device::Stderr)) => {
                        return Err(format!(
                            "{name}: reading the shell's {} is not supported",
                            device.name()
                        )
                        .into());
                    }
                    Target::File(path) => {
                        let file = self
                            .ws
                            .open_read(&path)
                            .map_err(|e| format!("{name}: {}", strerror(&e)))?;
                        fds.stdin = Source::File(file);
                    }
                }
            }
            Redirect::Write { fd, target, append } => {
                let (name, path) = self.target(target, expander)?;
                let (sink, copy_of) = self.sink(&name, &path, *append, fds)?;
                set(fds, *fd, sink, copy_of);
            }
            Redirect::Dup { fd, to } => {
                let copy = duplicate(fds, *to)?;
                set(fds, *fd, copy, Some(*to));
            }
            Redirect::Both { target, append } => {
                let (name, path) = self.target(target, expander)?;
                let (sink, _) = self.sink(&name, &path, *append, fds)?;
                let copy = sink
                    .try_clone()
                    .map_err(|e| format!("{name}: {}", strerror(&e)))?;
                fds.stdout = copy;
                fds.stderr = sink;
                fds.merged = true;
            }
        }
        Ok(())
    }

    /// Opens `path` for writing, or the device it names; with the stream it is a copy of, for
    /// `/dev/stdout` and `/dev/stderr`.
    fn sink(
        &self,
        name: &str,
        target: &Target,
        append: bool,
        fds: &Fds,
    ) -> Result<(Sink, Option<Fd>), String> {
        match target {
            Target::Device(Device::Null) => Ok((Sink::Null, None)),
            Target::Device(Device::Stdout) => Ok((duplicate(fds, Fd::Stdout)?, Some(Fd::Stdout))),
            Target::Device(Device::Stderr) => Ok((duplicate(fds, Fd::Stderr)?, Some(Fd::Stderr))),
            Target::Device(Device::Stdin) => Err(format!(
                "{name}: writing the shell's stdin is not supported"
            )),
            Target::File(path) => self
                .ws
                .open_write(path, append)
                .map(|file| (Sink::File(file), None))
                .map_err(|e| format!("{name}: {}", strerror(&e))),
        }
    }

    /// Expands a redirect target to one of the shell's devices or one path inside the
    /// workspace.
    fn target(&self, word: &Word, expander: &Expander<'_>) -> Result<(String, Target), Failed> {
        let fields = expander.fields(word)?;
        let [name] = fields.as_slice() else {
            return Err(format!("{}: ambiguous redirect", word.source).into());
        };
        if name.is_empty() {
            return Err(": No such file or directory".to_owned().into());
        }
        if let Some(device) = Device::named(expander.cwd, name) {
            return Ok((name.clone(), Target::Device(device)));
        }
        let path = GuestPath::resolve(expander.cwd, name)
            .map_err(|e| format!("{name}: {}", e.reason()))?;
        Ok((name.clone(), Target::File(path)))
    }
}

/// Points `fd` at `sink`, which is a copy of the stream `copy_of` (if any), keeping track of
/// whether stdout and stderr now lead to the same place.
fn set(fds: &mut Fds, fd: Fd, sink: Sink, copy_of: Option<Fd>) {
    fds.merged = match copy_of {
        Some(other) if other != fd => true,
        Some(_) => fds.merged,
        None => false,
    };
    match fd {
        Fd::Stdout => fds.stdout = sink,
        Fd::Stderr => fds.stderr = sink,
    }
}

/// A second handle on the stream `fd` points to.
fn duplicate(fds: &Fds, fd: Fd) -> Result<Sink, String> {
    match fd {
        Fd::Stdout => fds.stdout.try_clone(),
        Fd::Stderr => fds.stderr.try_clone(),
    }
    .map_err(|e| format!("redirection error: cannot duplicate fd: {}", strerror(&e)))
}

/// What a redirect names: one of the shell's devices, or a file in the workspace.
enum Target {
    Device(Device),
    File(GuestPath),
}

/// The device files the shell provides itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Device {
    Null,
    Stdin,
    Stdout,
    Stderr,
}

impl Device {
    /// The device `name` names from `cwd` (`/dev/null`, or `null` in `/dev`), whatever the
    /// workspace's mount: the devices are the shell's, not the workspace's.
    fn named(cwd: &GuestPath, name: &str) -> Option<Self> {
        match lexical(cwd, name).as_str() {
            "/dev/null" => Some(Self::Null),
            "/dev/stdin" => Some(Self::Stdin),
            "/dev/stdout" => Some(Self::Stdout),
            "/dev/stderr" => Some(Self::Stderr),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Null => "/dev/null",
            Self::Stdin => "stdin",
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}
