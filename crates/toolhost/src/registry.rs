//! The flags of every command that boots the tool-set registry alone.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use anyhow::Result;
use toolhost_catalog::{Catalog, Root};
use toolhost_host::{ConfigFile, PluginHost, homes_dir};
use toolhost_runtime::{Runtime, ServerLauncher};
use toolhost_toolsets::{PluginRunner, Registry};

use crate::catalog_args::CatalogArgs;

#[derive(clap::Args)]
pub struct RegistryArgs {
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

impl RegistryArgs {
    /// Boots with the configuration file and the tool roots (none is fine).
    pub async fn boot(&self) -> Result<Booted> {
        let config = ConfigFile::load(self.config.as_deref())?;
        boot(
            &config,
            self.catalog.roots_if_any()?,
            self.catalog.data.clone(),
            self.catalog.user.clone(),
        )
        .await
    }
}

/// A registry booted alone, with the runtime its third-party plugins run on (when
/// `TOOLHOST_PLUGINS` names any).
pub struct Booted {
    registry: Registry,
    runtime: Option<Runtime>,
}

impl std::ops::Deref for Booted {
    type Target = Registry;

    fn deref(&self) -> &Registry {
        &self.registry
    }
}

impl Booted {
    /// Stops the MCP servers, then the plugins' workers.
    pub async fn shutdown(&self) {
        self.registry.shutdown().await;
        if let Some(runtime) = &self.runtime {
            runtime.shutdown().await;
        }
    }
}

/// Boots strictly over a catalog of `roots`: any error names the plugin, root or server
/// at fault. Stdio MCP servers start in a sandbox of their own; third-party plugins run on
/// a runtime started for them (users' homes under `data`, as `user` unless a turn names
/// one).
pub async fn boot(
    config: &ConfigFile,
    roots: Vec<Root>,
    data: Option<PathBuf>,
    user: Option<String>,
) -> Result<Booted> {
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots)));
    let servers = ServerLauncher::new(&config.runtime);
    let runtime = if toolhost_host::plugins::named_third_party().is_empty() {
        None
    } else {
        let mut runtime_config = config.runtime.clone();
        // A short-lived command: helpers started ahead of need would only cost.
        runtime_config.sandbox.spares = 0;
        let env = toolhost_host::tool_env(
            config,
            &catalog.read().unwrap_or_else(|e| e.into_inner()),
            homes_dir(data.as_deref()),
        );
        Some(Runtime::new(runtime_config, env)?)
    };
    let plugins = runtime.as_ref().map(|runtime| PluginHost {
        runner: Arc::new(toolhost_host::plugins::RuntimeRunner::new(
            runtime.clone(),
            data.clone(),
            user.clone(),
        )) as Arc<dyn PluginRunner>,
        secrets: &toolhost_host::plugins::no_secrets,
    });
    let registry = toolhost_host::boot_registry(config, &catalog, &servers, plugins).await;
    match registry {
        Ok(registry) => Ok(Booted { registry, runtime }),
        Err(e) => {
            if let Some(runtime) = &runtime {
                runtime.shutdown().await;
            }
            Err(e.into())
        }
    }
}
