//! `/mcp-servers`: the configuration file's servers (read-only) and the stored ones,
//! created, read, replaced (with the `version` read, else 409) and deleted, each change
//! served from the next turn on; and a test that connects and lists a server's tools
//! without calling any.
//!
//! Secrets (the bearer token, header values, `env` values) are write-only: answers name
//! them and never show a value. On a replace, a secret sent as `null` keeps its stored
//! value, so a form that never saw the secrets can still save.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use toolhost_host::McpServerError;
use toolhost_mcp_client::{McpServerConfig, ProbeError};
use toolhost_store::StoredMcpServer;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::body::Body;
use crate::params::Params;
use crate::{ApiState, Problem};

/// An MCP server's settings, as sent.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpServerBody {
    /// Its name (to create one): the tool set its tools come in, and their prefix
    /// (`NAME__TOOL`).
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// The version read (to replace one).
    #[serde(default)]
    pub(crate) version: Option<i64>,
    /// stdio: the program and its arguments.
    #[serde(default)]
    pub(crate) command: Vec<String>,
    /// Streamable HTTP: the endpoint URL.
    #[serde(default)]
    pub(crate) url: Option<String>,
    /// The stdio server's environment. Secret: `null` keeps the stored value.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, Option<String>>,
    /// Headers sent to an HTTP server. Secret: `null` keeps the stored value.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, Option<String>>,
    /// Sent as `Authorization: Bearer …`. Secret: absent or `null` keeps the stored one,
    /// `""` removes it.
    #[serde(default)]
    pub(crate) bearer_token: Option<String>,
    /// The stdio server's working directory.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub(crate) cwd: Option<PathBuf>,
    /// Run the stdio server in the sandbox (default true).
    #[serde(default)]
    pub(crate) sandbox: Option<bool>,
    /// Let the sandboxed server connect out (default false).
    #[serde(default)]
    pub(crate) network: Option<bool>,
    /// Host paths the sandboxed server may read.
    #[serde(default)]
    #[schema(value_type = Vec<String>)]
    pub(crate) read_only: Vec<PathBuf>,
    /// Host paths the sandboxed server may read and write.
    #[serde(default)]
    #[schema(value_type = Vec<String>)]
    pub(crate) read_write: Vec<PathBuf>,
    /// Seconds for connecting and listing, per turn (default 10).
    #[serde(default)]
    pub(crate) timeout: Option<f64>,
    /// Seconds the last good listing may be served while the server fails (default 300).
    #[serde(default)]
    pub(crate) stale_for: Option<f64>,
    /// Seconds of the first back-off after a failure (default 5).
    #[serde(default)]
    pub(crate) backoff: Option<f64>,
    /// A Lucide icon name for its tools.
    #[serde(default)]
    pub(crate) icon: Option<String>,
    /// What it is for.
    #[serde(default)]
    pub(crate) description: Option<String>,
}

/// An MCP server, its secrets named but never shown.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct McpServerOut {
    /// Its name.
    pub(crate) name: String,
    /// `store`, or `config` (toolhost.toml's: read-only here).
    pub(crate) source: String,
    /// `stdio `COMMAND`` or `streamable HTTP URL`.
    pub(crate) transport: String,
    /// stdio: the program and its arguments.
    pub(crate) command: Vec<String>,
    /// Streamable HTTP: the endpoint URL.
    pub(crate) url: Option<String>,
    /// The names of its environment variables (values are secret).
    pub(crate) env: Vec<String>,
    /// The names of its headers (values are secret).
    pub(crate) headers: Vec<String>,
    /// Whether it has a bearer token.
    pub(crate) bearer_token: bool,
    /// The stdio server's working directory.
    pub(crate) cwd: Option<String>,
    /// Whether a stdio server runs in the sandbox.
    pub(crate) sandbox: bool,
    /// Whether the sandboxed server may connect out.
    pub(crate) network: bool,
    /// Host paths it may read.
    pub(crate) read_only: Vec<String>,
    /// Host paths it may read and write.
    pub(crate) read_write: Vec<String>,
    /// Seconds for connecting and listing.
    pub(crate) timeout: Option<f64>,
    /// Seconds a stale listing may be served.
    pub(crate) stale_for: Option<f64>,
    /// Seconds of the first back-off.
    pub(crate) backoff: Option<f64>,
    /// Its Lucide icon.
    pub(crate) icon: Option<String>,
    /// What it is for.
    pub(crate) description: Option<String>,
    /// How its last listing went (see `/plugins`); absent when it is not served.
    #[schema(value_type = Option<Object>)]
    pub(crate) health: Option<serde_json::Value>,
    /// Bumped by each change (0 for the file's).
    pub(crate) version: i64,
    /// Milliseconds since the Unix epoch.
    pub(crate) created_at: i64,
    /// Milliseconds since the Unix epoch.
    pub(crate) updated_at: i64,
}

fn out(name: &str, c: &McpServerConfig, source: &str) -> McpServerOut {
    let paths = |p: &[PathBuf]| p.iter().map(|p| p.display().to_string()).collect();
    McpServerOut {
        name: name.to_string(),
        source: source.to_string(),
        transport: match &c.url {
            Some(url) => format!("streamable HTTP {url}"),
            None => format!("stdio `{}`", c.command.join(" ")),
        },
        command: c.command.clone(),
        url: c.url.clone(),
        env: c.env.keys().cloned().collect(),
        headers: c.headers.keys().cloned().collect(),
        bearer_token: c.bearer_token.is_some() || c.bearer_token_env.is_some(),
        cwd: c.cwd.as_ref().map(|p| p.display().to_string()),
        sandbox: c.sandbox,
        network: c.network,
        read_only: paths(&c.read_only),
        read_write: paths(&c.read_write),
        timeout: c.timeout.map(|d| d.as_secs_f64()),
        stale_for: c.stale_for.map(|d| d.as_secs_f64()),
        backoff: c.backoff.map(|d| d.as_secs_f64()),
        icon: c.icon.clone(),
        description: c.description.clone(),
        health: None,
        version: 0,
        created_at: 0,
        updated_at: 0,
    }
}

fn stored_out(s: &StoredMcpServer) -> McpServerOut {
    McpServerOut {
        version: s.version,
        created_at: s.created_at,
        updated_at: s.updated_at,
        ..out(&s.name, &s.config, "store")
    }
}

/// How server `name`'s last listing went, when it is served.
fn health(state: &ApiState, name: &str) -> Option<serde_json::Value> {
    let source = state.host.registry()?.external_source(name)?;
    serde_json::to_value(source.health()).ok()
}

fn unprocessable(field: &str, detail: impl Into<String>) -> Problem {
    Problem::new(StatusCode::UNPROCESSABLE_ENTITY, detail).at(field)
}

fn seconds(field: &str, value: Option<f64>) -> Result<Option<Duration>, Problem> {
    value
        .map(|s| {
            Duration::try_from_secs_f64(s)
                .map_err(|_| unprocessable(field, "must be a non-negative number of seconds"))
        })
        .transpose()
}

impl McpServerBody {
    /// The settings, each secret sent as `null` taken from `current`.
    fn into_config(self, current: Option<&McpServerConfig>) -> Result<McpServerConfig, Problem> {
        let keep = |field: &str, key: &str, stored: Option<&String>| {
            stored.cloned().ok_or_else(|| {
                unprocessable(
                    &format!("{field}.{key}"),
                    "null keeps a stored value, and there is none: send the value",
                )
            })
        };
        let mut env = BTreeMap::new();
        for (key, value) in self.env {
            let value = match value {
                Some(v) => v,
                None => keep("env", &key, current.and_then(|c| c.env.get(&key)))?,
            };
            env.insert(key, value);
        }
        let mut headers = BTreeMap::new();
        for (key, value) in self.headers {
            let value = match value {
                Some(v) => v,
                None => keep("headers", &key, current.and_then(|c| c.headers.get(&key)))?,
            };
            headers.insert(key, value);
        }
        let bearer_token = match self.bearer_token {
            Some(t) if t.is_empty() => None,
            Some(t) => Some(t),
            None => current.and_then(|c| c.bearer_token.clone()),
        };
        let defaults = McpServerConfig::default();
        Ok(McpServerConfig {
            command: self.command,
            env,
            cwd: self.cwd,
            sandbox: self.sandbox.unwrap_or(defaults.sandbox),
            network: self.network.unwrap_or(defaults.network),
            read_only: self.read_only,
            read_write: self.read_write,
            url: self.url,
            bearer_token,
            headers,
            bearer_token_env: None,
            timeout: seconds("timeout", self.timeout)?,
            stale_for: seconds("stale_for", self.stale_for)?,
            backoff: seconds("backoff", self.backoff)?,
            icon: self.icon,
            description: self.description,
        })
    }
}

fn from_config_file(name: &str) -> Problem {
    Problem::new(
        StatusCode::CONFLICT,
        format!("MCP server `{name}` comes from toolhost.toml: change it there"),
    )
}

fn host_problem(e: McpServerError) -> Problem {
    match e {
        McpServerError::FromConfig(name) => from_config_file(&name),
        McpServerError::NoRegistry => Problem::new(StatusCode::CONFLICT, e.to_string()),
        McpServerError::Invalid(e) => Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}

/// The servers, by name: the file's and the stored ones.
#[utoipa::path(get, path = "/mcp-servers", operation_id = "listMcpServers", tag = "mcp-servers",
    responses((status = 200, body = Vec<McpServerOut>), (status = 401, body = Problem), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<ApiState>,
    who: Principal,
) -> Result<Json<Vec<McpServerOut>>, Problem> {
    who.reader()?;
    let config = &state.host.config().mcp_servers;
    let mut items: Vec<McpServerOut> = config
        .iter()
        .map(|(name, c)| out(name, c, "config"))
        .collect();
    for s in state.store.mcp_servers().await? {
        if !config.contains_key(&s.name) {
            items.push(stored_out(&s));
        }
    }
    items.sort_by(|a, b| a.name.cmp(&b.name));
    for item in &mut items {
        item.health = health(&state, &item.name);
    }
    Ok(Json(items))
}

/// One server.
#[utoipa::path(get, path = "/mcp-servers/{name}", operation_id = "getMcpServer", tag = "mcp-servers",
    params(("name" = String, Path, description = "The server's name")),
    responses((status = 200, body = McpServerOut), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn get(
    State(state): State<ApiState>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<McpServerOut>, Problem> {
    who.reader()?;
    let mut found = match state.host.config().mcp_servers.get(&name) {
        Some(c) => out(&name, c, "config"),
        None => match state.store.mcp_server(&name).await? {
            Some(s) => stored_out(&s),
            None => return Err(Problem::not_found("MCP server", &name)),
        },
    };
    found.health = health(&state, &name);
    Ok(Json(found))
}

/// Adds a server: granted by name (`mcp_server = "NAME"`) from the next turn on. Its
/// settings are checked as `[mcp_servers]` are at boot; it is not contacted (see the
/// test action).
#[utoipa::path(post, path = "/mcp-servers", operation_id = "createMcpServer", tag = "mcp-servers",
    request_body = McpServerBody,
    responses((status = 201, body = McpServerOut), (status = 409, body = Problem), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(state): State<ApiState>,
    who: Principal,
    Body(body): Body<McpServerBody>,
) -> Result<(StatusCode, Json<McpServerOut>), Problem> {
    who.operator()?;
    let Some(name) = body.name.clone() else {
        return Err(unprocessable("name", "required to create an MCP server"));
    };
    if body.version.is_some() {
        return Err(unprocessable("version", "a new server has no version yet"));
    }
    if state.host.config().mcp_servers.contains_key(&name) {
        return Err(from_config_file(&name));
    }
    if state.store.mcp_server(&name).await?.is_some() {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            format!("MCP server `{name}` already exists"),
        ));
    }
    let config = body.into_config(None)?;
    state
        .host
        .check_mcp_server(&name, &config)
        .map_err(host_problem)?;
    let stored = state
        .store
        .create_mcp_server(who.actor(), &name, config.clone())
        .await?;
    state
        .host
        .put_mcp_server(&name, config)
        .await
        .map_err(host_problem)?;
    Ok((StatusCode::CREATED, Json(stored_out(&stored))))
}

/// Replaces a server's settings, if it is still at `version`; secrets sent as `null` keep
/// their stored values. Turns from now on use the new settings (the old connection or
/// process is closed).
#[utoipa::path(put, path = "/mcp-servers/{name}", operation_id = "updateMcpServer", tag = "mcp-servers",
    params(("name" = String, Path, description = "The server's name")),
    request_body = McpServerBody,
    responses((status = 200, body = McpServerOut), (status = 404, body = Problem),
        (status = 409, body = Problem), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn update(
    State(state): State<ApiState>,
    who: Principal,
    Path(name): Path<String>,
    Body(body): Body<McpServerBody>,
) -> Result<Json<McpServerOut>, Problem> {
    who.operator()?;
    if state.host.config().mcp_servers.contains_key(&name) {
        return Err(from_config_file(&name));
    }
    let Some(version) = body.version else {
        return Err(unprocessable(
            "version",
            "required: the version read, so that a concurrent change is not lost",
        ));
    };
    if body.name.as_ref().is_some_and(|n| *n != name) {
        return Err(unprocessable(
            "name",
            "differs from the path: a server keeps its name",
        ));
    }
    let Some(current) = state.store.mcp_server(&name).await? else {
        return Err(Problem::not_found("MCP server", &name));
    };
    let config = body.into_config(Some(&current.config))?;
    state
        .host
        .check_mcp_server(&name, &config)
        .map_err(host_problem)?;
    let stored = state
        .store
        .update_mcp_server(who.actor(), &name, config.clone(), version)
        .await?;
    state
        .host
        .put_mcp_server(&name, config)
        .await
        .map_err(host_problem)?;
    Ok(Json(stored_out(&stored)))
}

/// If given, the version read.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct VersionQuery {
    /// The version read: if it changed since, the delete is a 409.
    pub(crate) version: Option<i64>,
}

/// Deletes a server and its secrets; turns from now on leave it out (agents granting it
/// get a warning).
#[utoipa::path(delete, path = "/mcp-servers/{name}", operation_id = "deleteMcpServer", tag = "mcp-servers",
    params(("name" = String, Path, description = "The server's name"), VersionQuery),
    responses((status = 204), (status = 404, body = Problem), (status = 409, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn delete(
    State(state): State<ApiState>,
    who: Principal,
    Path(name): Path<String>,
    Params(q): Params<VersionQuery>,
) -> Result<StatusCode, Problem> {
    who.operator()?;
    if state.host.config().mcp_servers.contains_key(&name) {
        return Err(from_config_file(&name));
    }
    state
        .store
        .delete_mcp_server(who.actor(), &name, q.version)
        .await?;
    state
        .host
        .remove_mcp_server(&name)
        .await
        .map_err(host_problem)?;
    Ok(StatusCode::NO_CONTENT)
}

/// What a test found.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TestOut {
    /// Whether the server answered with its tools.
    pub(crate) success: bool,
    /// Its tools, by its own names.
    pub(crate) tools: Vec<ProbedToolOut>,
    /// Why not, when it did not.
    pub(crate) error: Option<String>,
}

/// A tool a server lists.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProbedToolOut {
    /// The server's name for it.
    pub(crate) name: String,
    /// What it does.
    pub(crate) description: String,
}

async fn probe(state: &ApiState, name: &str, config: McpServerConfig) -> Result<TestOut, Problem> {
    match state.host.probe_mcp_server(name, config).await {
        Ok(tools) => Ok(TestOut {
            success: true,
            tools: tools
                .into_iter()
                .map(|t| ProbedToolOut {
                    name: t.name,
                    description: t.description,
                })
                .collect(),
            error: None,
        }),
        Err(ProbeError::Config(e)) => Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            e.to_string(),
        )),
        Err(ProbeError::Failed(e)) => Ok(TestOut {
            success: false,
            tools: Vec::new(),
            error: Some(e),
        }),
    }
}

/// Tests settings before saving them: connects (starting a stdio server in the sandbox),
/// lists the tools and disconnects, calling none. A server that fails is a `success:
/// false` answer saying why.
#[utoipa::path(post, path = "/mcp-servers/test", operation_id = "testMcpServerSettings", tag = "mcp-servers",
    request_body = McpServerBody,
    responses((status = 200, body = TestOut), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn test_settings(
    State(state): State<ApiState>,
    who: Principal,
    Body(body): Body<McpServerBody>,
) -> Result<Json<TestOut>, Problem> {
    who.operator()?;
    let name = body.name.clone().unwrap_or_else(|| "test".into());
    let current = state.store.mcp_server(&name).await?.map(|s| s.config);
    let config = body.into_config(current.as_ref())?;
    Ok(Json(probe(&state, &name, config).await?))
}

/// Tests a server as it is configured: connects, lists the tools and disconnects, calling
/// none.
#[utoipa::path(post, path = "/mcp-servers/{name}/test", operation_id = "testMcpServer", tag = "mcp-servers",
    params(("name" = String, Path, description = "The server's name")),
    responses((status = 200, body = TestOut), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn test(
    State(state): State<ApiState>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<TestOut>, Problem> {
    who.operator()?;
    let config = match state.host.config().mcp_servers.get(&name) {
        Some(c) => c.clone(),
        None => match state.store.mcp_server(&name).await? {
            Some(s) => s.config,
            None => return Err(Problem::not_found("MCP server", &name)),
        },
    };
    Ok(Json(probe(&state, &name, config).await?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// JSON shaped like MCP server bodies, with hostile strings, numbers and nulls where
    /// the fields are.
    fn body() -> impl Strategy<Value = Value> {
        let text = prop_oneof![
            Just(String::new()),
            "[a-zA-Z0-9_-]{1,70}",
            "\\PC{0,80}",
            Just("\u{0}\r\n\u{202e}".to_string()),
            Just("http://127.0.0.1:1/mcp".to_string()),
        ];
        let seconds = prop_oneof![
            any::<f64>().prop_map(|n| json!(n)),
            Just(json!(-1)),
            Just(json!(1e300)),
            Just(Value::Null),
            Just(json!("ten")),
        ];
        let secrets =
            proptest::collection::btree_map(text.clone(), proptest::option::of(text.clone()), 0..3);
        (
            proptest::option::of(text.clone()),
            proptest::collection::vec(text.clone(), 0..3),
            proptest::option::of(text.clone()),
            secrets.clone(),
            secrets,
            proptest::option::of(text),
            seconds,
            any::<Option<bool>>(),
        )
            .prop_map(
                |(name, command, url, env, headers, token, timeout, sandbox)| {
                    let mut b = json!({"command": command, "env": env, "headers": headers,
                        "timeout": timeout});
                    for (key, v) in [("name", name), ("url", url), ("bearer_token", token)] {
                        if let Some(v) = v {
                            b[key] = json!(v);
                        }
                    }
                    if let Some(s) = sandbox {
                        b["sandbox"] = json!(s);
                    }
                    b
                },
            )
    }

    proptest! {
        /// Any such body is settings or a clear error naming a field; what converts is
        /// checked by the client's own rules without a panic.
        #[test]
        fn any_body_is_settings_or_an_error(b in body(), stored in any::<bool>()) {
            let parsed: Result<McpServerBody, _> = serde_json::from_value(b);
            if let Ok(body) = parsed {
                let current = McpServerConfig {
                    bearer_token: Some("t".into()),
                    ..McpServerConfig::default()
                };
                match body.into_config(stored.then_some(&current)) {
                    Ok(config) => {
                        let launcher = toolhost_runtime::ServerLauncher::new(&Default::default());
                        let servers = std::iter::once(("p".to_string(), config)).collect();
                        let _ = toolhost_mcp_client::sources(&servers, &launcher);
                    }
                    Err(p) => prop_assert!(p.field.is_some() && p.status == 422),
                }
            }
        }
    }
}
