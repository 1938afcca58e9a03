//! The host: everything a surface needs, booted once in one order and shut down in the
//! reverse one.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolhost_catalog::{Catalog, Root};
use toolhost_runtime::{Runtime, ToolEnv};
use toolhost_toolsets::{AgentConfig, Registry, Turn, TurnRequest};

use crate::store::{AgentStore, CallLog, TokenStore, TracingCallLog};
use crate::{
    AgentSource, CallMetrics, Caller, CatalogSource, ConfigFile, HostError, RoutedSource, Tokens,
    WatchedCatalog, boot_registry, homes_dir, user_space,
};

/// What to boot.
pub struct HostOptions {
    /// The operator's configuration.
    pub config: ConfigFile,
    /// The tool roots, in override order (later roots win by tool name).
    pub roots: Vec<Root>,
    /// The data directory (`DATA_PATH`): homes at `DATA_PATH/USER`, per-user tools at
    /// `DATA_PATH/USER/tools`. Without one, homes live under Toolhost's own data folder.
    pub data: Option<PathBuf>,
    /// The caller when a surface names none (stdio, HTTP without tokens); `default`
    /// when `None`.
    pub user: Option<String>,
    /// Boot the tool-set registry too (plugins, tool sets, MCP servers): for agents.
    pub tool_sets: bool,
    /// Watch the tool roots and reload on edits (a long-running surface does).
    pub watch: bool,
    /// A persistent store beside the configuration file: its agents and tokens join the
    /// file's, and it keeps the call log. `None`: the file alone, calls logged by tracing.
    pub store: Option<Arc<dyn Persistence>>,
    /// The fleet this host is a gateway of: folder tools run on its runners. `None`: on
    /// this host.
    pub fleet: Option<Arc<dyn crate::Fleet>>,
}

/// A persistent store as the host uses it: given the configuration file's agents and
/// tokens (read-only, they keep their ids), what the host serves; and where calls go.
pub trait Persistence: Send + Sync {
    /// The agents to serve: `config`'s and the store's.
    fn agents(&self, config: Arc<dyn AgentStore>) -> Arc<dyn AgentStore>;
    /// The tokens to accept: `config`'s and the store's; callers' homes under `data`.
    fn tokens(&self, config: Arc<dyn TokenStore>, data: Option<&Path>) -> Arc<dyn TokenStore>;
    /// Where finished calls are recorded.
    fn call_log(&self) -> Arc<dyn CallLog>;
    /// Where 2025-11-25 MCP sessions are kept for every gateway of a fleet; `None` (the
    /// default): each server keeps its own, in memory.
    fn mcp_sessions(&self) -> Option<Arc<dyn crate::store::SessionRecords>> {
        None
    }
    /// Sealed secret `name` of `owner` (a plugin's credential: `plugin:NAME`), opened.
    fn secret(&self, owner: String, name: String) -> crate::plugins::SecretFuture {
        let _ = (owner, name);
        Box::pin(async { None })
    }
}

/// Which tools a catalog source shows a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogView {
    /// The catalog alone (its roots may include the one user's own).
    Shared,
    /// The catalog, overridden for each caller by their `DATA_PATH/USER/tools`.
    PerCaller,
}

/// A booted host. Dropping it stops watching; [`Host::shutdown`] also stops the runtime's
/// workers and the tool sets' MCP servers in order.
pub struct Host {
    config: Arc<ConfigFile>,
    catalog: Arc<WatchedCatalog>,
    runtime: Runtime,
    registry: Option<Arc<Registry>>,
    default_caller: Caller,
    agents: Arc<dyn AgentStore>,
    tokens: Arc<dyn TokenStore>,
    data: Option<PathBuf>,
    call_log: Arc<dyn CallLog>,
    metrics: Arc<CallMetrics>,
    /// Announces edits to third-party plugins' files (when watching).
    _plugin_watch: Option<crate::plugin_watch::PluginWatch>,
    fleet: Option<Arc<dyn crate::Fleet>>,
    mcp_sessions: Option<Arc<dyn crate::store::SessionRecords>>,
}

impl Host {
    /// Boots the host: checks every user name the configuration holds, scans the catalog,
    /// starts the runtime and, when asked, the tool-set registry. Must be called inside a
    /// Tokio runtime (watchers and workers run on it).
    pub async fn boot(options: HostOptions) -> Result<Host, HostError> {
        let HostOptions {
            config,
            roots,
            data,
            user,
            tool_sets,
            watch,
            store,
            fleet,
        } = options;
        // First: a name that breaks the user-name rule must not reach anything.
        let default_caller = Caller::new(user_space(data.as_deref(), user.as_deref())?);
        let mut tokens = Tokens::default();
        for t in &config.serve.tokens {
            tokens.insert(
                &t.sha256,
                Caller::new(user_space(data.as_deref(), Some(&t.user))?),
            )?;
        }
        let catalog = Catalog::scan(roots);
        let catalog = Arc::new(if watch {
            WatchedCatalog::watch(catalog)
        } else {
            WatchedCatalog::unwatched(catalog)
        });
        let env = tool_env(&config, &catalog.read(), homes_dir(data.as_deref()));
        let runtime = match &fleet {
            None => Runtime::new(config.runtime.clone(), env)?,
            Some(fleet) => {
                // A gateway runs no tool process: no spare sandboxes wait here.
                let mut runtime_config = config.runtime.clone();
                runtime_config.sandbox.spares = 0;
                let local = toolhost_runtime::LocalExecutor::new(&runtime_config, env)?
                    .dispatch_folders_to(fleet.dispatch());
                Runtime::with_executor(runtime_config, local)?
            }
        };
        let registry = if tool_sets {
            let runner: Arc<dyn toolhost_toolsets::PluginRunner> = Arc::new(
                crate::plugins::RuntimeRunner::new(runtime.clone(), data.clone(), user.clone()),
            );
            let secrets = |owner: String, name: String| match &store {
                Some(store) => store.secret(owner, name),
                None => crate::plugins::no_secrets(owner, name),
            };
            Some(Arc::new(
                boot_registry(
                    &config,
                    catalog.shared(),
                    &runtime.servers(),
                    Some(crate::registry::PluginHost {
                        runner,
                        secrets: &secrets,
                    }),
                )
                .await?,
            ))
        } else {
            None
        };
        let config = Arc::new(config);
        let file_agents = Arc::clone(&config) as Arc<dyn AgentStore>;
        let file_tokens = Arc::new(tokens) as Arc<dyn TokenStore>;
        let (agents, tokens, call_log) = match &store {
            Some(store) => (
                store.agents(file_agents),
                store.tokens(file_tokens, data.as_deref()),
                store.call_log(),
            ),
            None => (
                file_agents,
                file_tokens,
                Arc::new(TracingCallLog) as Arc<dyn CallLog>,
            ),
        };
        let mcp_sessions = store.as_ref().and_then(|s| s.mcp_sessions());
        let tokens = with_issuers(&config, tokens, data.as_deref())?;
        // Every call any surface records is counted on its way to the log.
        let metrics = Arc::new(CallMetrics::default());
        let call_log: Arc<dyn CallLog> = Arc::new(crate::metrics::Metered {
            metrics: Arc::clone(&metrics),
            next: call_log,
        });
        let plugin_watch = match (&registry, watch) {
            (Some(registry), true) => {
                let roots = registry
                    .plugins()
                    .iter()
                    .filter_map(|p| p.entry.as_deref())
                    .filter_map(|entry| toolhost_runtime::PluginModule::at("", entry).ok())
                    .map(|m| m.root)
                    .collect();
                crate::plugin_watch::watch(roots, &catalog)
            }
            _ => None,
        };
        Ok(Host {
            config,
            catalog,
            runtime,
            registry,
            default_caller,
            agents,
            tokens,
            data,
            call_log,
            metrics,
            _plugin_watch: plugin_watch,
            fleet,
            mcp_sessions,
        })
    }

    /// Where 2025-11-25 MCP sessions are kept for every gateway, when they are shared.
    pub fn mcp_sessions(&self) -> Option<&Arc<dyn crate::store::SessionRecords>> {
        self.mcp_sessions.as_ref()
    }

    /// The fleet this host is a gateway of, if it is one.
    pub fn fleet(&self) -> Option<&Arc<dyn crate::Fleet>> {
        self.fleet.as_ref()
    }

    /// The configuration it booted with.
    pub fn config(&self) -> &ConfigFile {
        &self.config
    }

    /// Runs every call.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The catalog of its tool roots.
    pub fn catalog(&self) -> &Arc<WatchedCatalog> {
        &self.catalog
    }

    /// The folders of the same name that `tool` wins over, earliest root first: what the
    /// catalog's winner shadows, or, for a user's own tool (not the catalog's winner), that
    /// winner and what it shadows.
    pub fn shadowed_by(&self, tool: &toolhost_catalog::Tool) -> Vec<PathBuf> {
        let catalog = self.catalog.read();
        match catalog.get(&tool.manifest.name) {
            Some(won) if won.tool.dir == tool.dir => won.shadows.clone(),
            Some(won) => {
                let mut all = won.shadows.clone();
                all.push(won.tool.dir.clone());
                all
            }
            None => Vec::new(),
        }
    }

    /// The tool-set registry, when booted with `tool_sets`.
    pub fn registry(&self) -> Option<&Arc<Registry>> {
        self.registry.as_ref()
    }

    /// The turn a caller (`user`) of agent `id`, granted as `agent` says, would get now:
    /// in `workspace` and `org` when given, else the agent's own. What the API's
    /// effective tools and the console's agent form (for an unsaved agent) both show, so
    /// that they never disagree. `None` when this host serves no tool sets. The caller
    /// must `end` the turn.
    pub async fn agent_turn(
        &self,
        id: &str,
        agent: &AgentConfig,
        user: &str,
        workspace: Option<String>,
        org: Option<String>,
    ) -> Option<Turn> {
        let registry = self.registry.as_ref()?;
        let request = TurnRequest {
            workspace_id: workspace.or_else(|| agent.workspace.clone()),
            org_id: org.or_else(|| agent.org.clone()),
            user_id: Some(user.to_string()),
            frontend_url: None,
        };
        Some(registry.resolve_grants(id, &agent.grants, &request).await)
    }

    /// The caller when a surface names none.
    pub fn default_caller(&self) -> &Caller {
        &self.default_caller
    }

    /// The agents it serves.
    pub fn agents(&self) -> Arc<dyn AgentStore> {
        Arc::clone(&self.agents)
    }

    /// The bearer tokens its HTTP surfaces accept.
    pub fn tokens(&self) -> Arc<dyn TokenStore> {
        Arc::clone(&self.tokens)
    }

    /// Tokens or users changed (a token revoked, a role changed): what this host
    /// remembers of them is forgotten, and so is what every gateway of its fleet does.
    pub fn access_changed(&self) {
        self.tokens.forget_remembered();
        if let Some(fleet) = &self.fleet {
            fleet.access_changed();
        }
    }

    /// Where finished calls are recorded.
    pub fn call_log(&self) -> Arc<dyn CallLog> {
        Arc::clone(&self.call_log)
    }

    /// The counters of the calls recorded so far.
    pub fn metrics(&self) -> &CallMetrics {
        &self.metrics
    }

    /// The catalog as a tool source. [`CatalogView::PerCaller`] needs a data directory;
    /// without one it is the shared view.
    pub fn catalog_source(&self, view: CatalogView) -> Arc<CatalogSource> {
        let data = match view {
            CatalogView::PerCaller => self.data.clone(),
            CatalogView::Shared => None,
        };
        Arc::new(CatalogSource::new(Arc::clone(&self.catalog), data))
    }

    /// The main endpoint's tools: the catalog (seen as `view` says) for unbound callers,
    /// the bound agent's tools for a caller whose credential is bound to an agent.
    pub fn endpoint_source(&self, view: CatalogView) -> Arc<RoutedSource> {
        Arc::new(RoutedSource::new(
            self.catalog_source(view),
            self.registry.clone(),
            Arc::clone(&self.agents),
            Arc::clone(&self.catalog),
        ))
    }

    /// `agent`'s resolved tool sets as a tool source. Boots with `tool_sets` only.
    pub async fn agent_source(&self, agent: &str) -> Result<Arc<AgentSource>, HostError> {
        let unknown = || HostError::UnknownAgent(agent.to_string());
        let registry = self.registry.as_ref().ok_or_else(unknown)?;
        if self.agents.agent(agent).await?.is_none() {
            return Err(unknown());
        }
        Ok(Arc::new(AgentSource::new(
            Arc::clone(registry),
            Arc::clone(&self.agents),
            agent,
            &self.catalog,
        )))
    }

    /// Stops the runtime's workers, then the tool sets' MCP servers. Calls still running
    /// are cancelled.
    pub async fn shutdown(&self) {
        self.runtime.shutdown().await;
        if let Some(registry) = &self.registry {
            registry.shutdown().await;
        }
    }
}

/// `tokens`, and after them the access tokens of the configured OAuth issuers (if any).
fn with_issuers(
    config: &ConfigFile,
    tokens: Arc<dyn TokenStore>,
    data: Option<&Path>,
) -> Result<Arc<dyn TokenStore>, HostError> {
    if config.serve.oauth.issuers.is_empty() {
        return Ok(tokens);
    }
    let issuers = crate::oauth::Issuers::new(&config.serve.oauth, data)?;
    // A request that names no endpoint (the HTTP API) is asked for the main one's tokens.
    let main = config.serve.public_url.as_ref().map(|u| format!("{u}/mcp"));
    Ok(Arc::new(crate::oauth::OAuthTokens::new(
        tokens, issuers, main,
    )))
}

/// Refuses to serve HTTP on `addr` when that would let anyone in: anything but loopback
/// needs `[[serve.tokens]]`, OAuth issuers or a `store`, and with those no default user
/// may be named (`user_named`). OAuth issuers on a wildcard address need
/// `[serve] public_url`: access tokens name the URL clients use, which such an address
/// does not tell.
/// Checked before booting, so that nothing starts for a server that must not.
pub fn check_exposure(
    config: &ConfigFile,
    addr: SocketAddr,
    user_named: bool,
    store: bool,
) -> Result<(), HostError> {
    let oauth = !config.serve.oauth.issuers.is_empty();
    // A store always holds tokens (its first admin's), and then every request needs one.
    let no_tokens = config.serve.tokens.is_empty() && !store && !oauth;
    if no_tokens && !addr.ip().is_loopback() {
        return Err(HostError::Unauthenticated(addr));
    }
    if oauth && config.serve.public_url.is_none() && addr.ip().is_unspecified() {
        return Err(HostError::NoPublicUrl(addr));
    }
    if !no_tokens && user_named {
        return Err(HostError::UserWithTokens);
    }
    Ok(())
}

/// The environment of tools run for `catalog`'s roots, for users whose homes lie in
/// `homes`: the one place it is built.
pub fn tool_env(config: &ConfigFile, catalog: &Catalog, homes: PathBuf) -> ToolEnv {
    ToolEnv {
        vars: config.env.clone(),
        resources: config.resources_json(),
        tools_dirs: catalog.roots().iter().map(|r| r.path.clone()).collect(),
        homes: Some(homes),
    }
}
