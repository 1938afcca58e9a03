//! `toolhost plugins secret PLUGIN NAME`: seals a third-party plugin's credential in the
//! store, where `[plugins.PLUGIN] credentials.KEY = { secret = "NAME" }` finds it at boot.
//! The value is read from stdin (so it stays out of shell history) and never printed.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toolhost_host::ConfigFile;
use toolhost_store::AuditEvent;

use crate::store_args::StoreArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The plugin's name (its manifest's).
    plugin: String,
    /// The secret's name.
    name: String,
    /// Remove it instead.
    #[arg(long)]
    delete: bool,
    /// The configuration file (for [store]).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.plugin.is_empty() || args.name.is_empty() {
        bail!("give the plugin's name and the secret's name");
    }
    let config = ConfigFile::load(args.config.as_deref())?;
    let value = if args.delete {
        None
    } else {
        let mut value = String::new();
        std::io::stdin()
            .read_to_string(&mut value)
            .context("reading the secret from stdin")?;
        let value = value.trim_end_matches(['\n', '\r']).to_string();
        if value.is_empty() {
            bail!(
                "no secret on stdin (pipe it in: `printf %s \"$TOKEN\" | toolhost plugins secret {} {}`)",
                args.plugin,
                args.name
            );
        }
        Some(value)
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let Some(store) = args.store.open(&config).await? else {
            bail!("plugin secrets live in the store: drop --no-store");
        };
        let owner = format!("plugin:{}", args.plugin);
        let actor = std::env::var("USER").unwrap_or_else(|_| "cli".into());
        let target = format!("{owner}/{}", args.name);
        let event = match &value {
            Some(value) => {
                store.put_secret(&owner, &args.name, value).await?;
                AuditEvent::change(
                    &actor,
                    "plugin_secret.set",
                    "plugin_secret",
                    &target,
                    None,
                    Some(&serde_json::json!({"set": true})),
                )
            }
            None => {
                if !store.delete_secret(&owner, &args.name).await? {
                    bail!("the store has no secret `{}` of `{owner}`", args.name);
                }
                AuditEvent::change(
                    &actor,
                    "plugin_secret.delete",
                    "plugin_secret",
                    &target,
                    Some(&serde_json::json!({"set": true})),
                    None,
                )
            }
        };
        store.record_audit(event).await?;
        store.close().await;
        eprintln!(
            "{} secret `{}` of plugin `{}`",
            if value.is_some() { "sealed" } else { "removed" },
            args.name,
            args.plugin
        );
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
