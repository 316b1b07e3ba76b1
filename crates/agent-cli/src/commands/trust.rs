//! `agent trust`.

use agent_core::settings::TrustedFolders;
use anyhow::{Context, Result};
use serde_json::json;

use super::{absolute, agent_home};
use crate::cli::permissions::TrustArgs;
use crate::exit::Exit;
use crate::output;

pub fn run(args: &TrustArgs) -> Result<Exit> {
    let store_path = agent_home()?.trusted_folders();
    let mut store = TrustedFolders::load(&store_path)?;
    if args.list {
        let folders: Vec<_> = store
            .folders()
            .iter()
            .map(|f| json!({"path": f.path, "trustedAt": f.trusted_at}))
            .collect();
        output::stdout_line(&serde_json::Value::Array(folders).to_string());
        return Ok(Exit::Success);
    }
    let dir = match &args.dir {
        Some(d) => absolute(d.clone())?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if args.revoke {
        let removed = store.untrust(&dir)?;
        output::stdout_line(
            &json!({"path": dir, "trusted": false, "changed": removed}).to_string(),
        );
    } else {
        if !dir.is_dir() {
            anyhow::bail!(
                "{} is not a directory; pass the project folder to trust",
                dir.display()
            );
        }
        store.trust(&dir)?;
        output::stdout_line(
            &json!({"path": std::fs::canonicalize(&dir)?, "trusted": true}).to_string(),
        );
    }
    Ok(Exit::Success)
}
