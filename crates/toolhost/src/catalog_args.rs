//! The flags that choose tool roots, shared by every command that reads the catalog.

use std::path::PathBuf;

use anyhow::Result;
use clap::builder::{PathBufValueParser, TypedValueParser};
use toolhost_catalog::{Catalog, Root, RootsConfig};
use toolhost_host::absolute_path;

#[derive(clap::Args, Debug, Clone)]
pub struct CatalogArgs {
    /// A tool root (repeatable; later roots override earlier ones by tool name).
    #[arg(long = "tools-dir", value_name = "DIR", value_parser = absolute())]
    pub tools_dirs: Vec<PathBuf>,
    /// Data directory: tools from DATA_PATH/tools, then DATA_PATH/EMAIL/tools with --user.
    #[arg(long, value_name = "DATA_PATH", value_parser = absolute())]
    pub data: Option<PathBuf>,
    /// Whose tools to add from DATA_PATH/EMAIL/tools (they override global tools).
    #[arg(long, value_name = "EMAIL")]
    pub user: Option<String>,
}

/// Paths made absolute as they are read: homes and roots are mounted into sandboxes, and
/// tools run elsewhere than the current directory.
fn absolute() -> impl TypedValueParser<Value = PathBuf> {
    PathBufValueParser::new().map(|p| absolute_path(&p))
}

impl CatalogArgs {
    pub fn is_empty(&self) -> bool {
        self.tools_dirs.is_empty() && self.data.is_none() && self.user.is_none()
    }

    /// Roots from the flags, else `PI_TOOLS_DIRS`, else the data layout. Warnings go to stderr
    /// (or the log file).
    pub fn roots(&self) -> Result<Vec<Root>> {
        let cfg = RootsConfig {
            tools_dirs: self.tools_dirs.clone(),
            env_tools_dirs: std::env::var("PI_TOOLS_DIRS").ok(),
            data: self.data.clone(),
            user: self.user.clone(),
        };
        let (roots, warnings) = cfg.resolve()?;
        for w in warnings {
            crate::warn(&w.to_string());
        }
        Ok(roots)
    }

    /// Like [`roots`](Self::roots), but no roots at all is fine (commands about tool sets
    /// work with plugins alone).
    pub fn roots_if_any(&self) -> Result<Vec<Root>> {
        if self.is_empty() && std::env::var_os("PI_TOOLS_DIRS").is_none() {
            return Ok(Vec::new());
        }
        self.roots()
    }

    pub fn scan(&self) -> Result<Catalog> {
        Ok(Catalog::scan(self.roots()?))
    }
}
