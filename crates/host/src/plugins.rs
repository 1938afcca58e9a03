//! Third-party (Platypus) plugins named in `TOOLHOST_PLUGINS`: found as Platypus finds
//! them (a path to the entry file or package folder, or a package name resolved from the
//! plugin directory's `node_modules`), configured from `[plugins.NAME]` (credentials from
//! the file, the environment or the store's sealed secrets), and loaded on the runtime.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use toolhost_runtime::{PluginModule, PluginOp, Runtime};
use toolhost_toolsets::{
    CorePlugins, PluginFuture, PluginRunner, ThirdPartyPlugin, load_third_party, manifest_name,
};

use crate::users::user_space;

/// How long importing a plugin and describing its tools may take at boot (a cold worker
/// in a fresh sandbox, and the AI SDK's import, take most of it).
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// Where package names in `TOOLHOST_PLUGINS` are resolved from (its `node_modules`):
/// `TOOLHOST_PLUGIN_DIR`, else the working directory.
pub fn plugin_dir() -> PathBuf {
    std::env::var_os("TOOLHOST_PLUGIN_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Why a third-party plugin could not be set up before loading.
#[derive(Debug, thiserror::Error)]
pub enum PluginSetupError {
    /// Its spec names nothing loadable.
    #[error("TOOLHOST_PLUGINS names `{spec}`: {why}")]
    NotFound {
        /// As named.
        spec: String,
        /// What was looked for.
        why: String,
    },
    /// `[plugins.NAME]` does not fit.
    #[error("[plugins.{plugin}] in toolhost.toml: {why}")]
    Settings {
        /// The plugin.
        plugin: String,
        /// What is wrong.
        why: String,
    },
    /// A credential's source has no value.
    #[error("[plugins.{plugin}] credentials.{key}: {why}")]
    Credential {
        /// The plugin.
        plugin: String,
        /// The credential.
        key: String,
        /// Why it has no value.
        why: String,
    },
}

/// `[plugins.NAME]` of a third-party plugin.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    /// Handed to the plugin's `configSchema` (defaults applied there).
    config: Option<Value>,
    /// Handed to its `credentialsSchema`, each value from where it says.
    credentials: Option<BTreeMap<String, Credential>>,
    /// Whether its worker's sandbox has the network (default: yes, as in Platypus, where
    /// plugins run in the backend; `[sandbox]`'s policy still applies).
    network: Option<bool>,
}

/// Where one credential's value comes from.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Credential {
    /// `{ env = "VAR" }`, `{ secret = "NAME" }` (the store's sealed secret `NAME` of
    /// `plugin:PLUGIN`). Tried first: any other value is the credential itself.
    From(Source),
    /// Written in the file.
    Value(Value),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Source {
    env: Option<String>,
    secret: Option<String>,
}

/// What [`SecretLookup`] returns.
pub type SecretFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send>>;

/// The store's sealed secrets: (owner, name) → value, if it has one.
pub type SecretLookup<'a> = &'a (dyn Fn(String, String) -> SecretFuture + Sync);

/// A lookup for hosts without a store: no secrets.
pub fn no_secrets(_: String, _: String) -> SecretFuture {
    Box::pin(async { None })
}

/// The third-party plugins `TOOLHOST_PLUGINS` names now.
pub fn named_third_party() -> Vec<String> {
    third_party_specs(
        std::env::var("TOOLHOST_PLUGINS").ok().as_deref(),
        &toolhost_plugins::builtin(),
    )
}

/// The entries of `TOOLHOST_PLUGINS` that are not core plugins.
pub fn third_party_specs(enabled: Option<&str>, core: &CorePlugins) -> Vec<String> {
    let core: Vec<&str> = core.names().collect();
    enabled
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && !core.contains(s))
        .map(str::to_string)
        .collect()
}

/// The entry file `spec` names: a path (to a file, or a package folder), else a package
/// in `dir/node_modules`.
pub fn resolve_spec(spec: &str, dir: &Path) -> Result<PathBuf, PluginSetupError> {
    let not_found = |why: String| PluginSetupError::NotFound {
        spec: spec.into(),
        why,
    };
    let is_path = spec.starts_with('/')
        || spec.starts_with("./")
        || spec.starts_with("../")
        || [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"]
            .iter()
            .any(|e| spec.ends_with(e));
    let candidate = if is_path {
        let p = PathBuf::from(spec);
        if p.is_absolute() { p } else { dir.join(p) }
    } else {
        if spec.split('/').any(|part| part == ".." || part.is_empty()) || spec.contains('\\') {
            return Err(not_found("not a package name".into()));
        }
        dir.join("node_modules").join(spec)
    };
    if candidate.is_file() {
        return Ok(candidate);
    }
    if candidate.is_dir() {
        return package_entry(&candidate).ok_or_else(|| {
            not_found(format!(
                "{} has no entry file (package.json `exports`, `module` or `main`, or index.js/index.ts)",
                candidate.display()
            ))
        });
    }
    Err(not_found(if is_path {
        format!("{} does not exist", candidate.display())
    } else {
        format!(
            "no package at {} (package names resolve from TOOLHOST_PLUGIN_DIR's node_modules, else the working directory's; or give a path)",
            candidate.display()
        )
    }))
}

/// A package folder's entry file, as Node.js imports it: `exports["."]` (its `import`,
/// `node` or `default` condition), `module`, `main`, then `index.*`.
fn package_entry(dir: &Path) -> Option<PathBuf> {
    let pkg: Option<Value> = std::fs::read(dir.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    fn pick(v: &Value) -> Option<&str> {
        match v {
            Value::String(s) => Some(s),
            Value::Object(o) => ["import", "node", "default"]
                .iter()
                .find_map(|k| o.get(*k).and_then(pick)),
            _ => None,
        }
    }
    let from_pkg = pkg.as_ref().and_then(|p| {
        let exports = p.get("exports");
        let dot = exports.and_then(|e| e.get(".")).or(exports);
        dot.and_then(pick)
            .or_else(|| p.get("module").and_then(Value::as_str))
            .or_else(|| p.get("main").and_then(Value::as_str))
            .map(str::to_string)
    });
    let candidates = from_pkg
        .into_iter()
        .chain(["index.js", "index.mjs", "index.ts", "index.cjs"].map(str::to_string));
    candidates.map(|c| dir.join(c)).find(|p| p.is_file())
}

/// `[plugins.NAME]` applied to `module`: settings, credentials with their values, network.
async fn configure(
    module: &mut PluginModule,
    name: &str,
    table: Option<&Value>,
    secrets: SecretLookup<'_>,
) -> Result<(), PluginSetupError> {
    let settings: Settings = match table {
        Some(v) => Settings::deserialize(v).map_err(|e| PluginSetupError::Settings {
            plugin: name.into(),
            why: format!("{e} (a third-party plugin takes `config`, `credentials` and `network`)"),
        })?,
        None => Settings::default(),
    };
    let mut credentials = serde_json::Map::new();
    let mut values = Vec::new();
    for (key, c) in settings.credentials.unwrap_or_default() {
        let value = match c {
            Credential::Value(v) => v,
            Credential::From(Source {
                env: Some(var),
                secret: None,
            }) => Value::String(std::env::var(&var).map_err(|_| PluginSetupError::Credential {
                plugin: name.into(),
                key: key.clone(),
                why: format!("the environment variable {var} is not set"),
            })?),
            Credential::From(Source {
                env: None,
                secret: Some(secret),
            }) => Value::String(secrets(format!("plugin:{name}"), secret.clone()).await.ok_or_else(|| {
                PluginSetupError::Credential {
                    plugin: name.into(),
                    key: key.clone(),
                    why: format!(
                        "the store has no secret `{secret}` of `plugin:{name}` (set it with `toolhost plugins secret {name} {secret}`)"
                    ),
                }
            })?),
            Credential::From(_) => {
                return Err(PluginSetupError::Credential {
                    plugin: name.into(),
                    key,
                    why: "give a value, { env = \"VAR\" } or { secret = \"NAME\" }".into(),
                });
            }
        };
        collect_strings(&value, &mut values);
        credentials.insert(key, value);
    }
    module.settings = serde_json::json!({
        "config": settings.config,
        "credentials": (!credentials.is_empty()).then_some(Value::Object(credentials)),
    });
    module.secrets = values;
    module.network = settings.network.unwrap_or(true);
    Ok(())
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Plugin operations on the host's runtime: as the turn's user (its home and sandbox),
/// else as the host's default user.
pub struct RuntimeRunner {
    runtime: Runtime,
    data: Option<PathBuf>,
    default_user: Option<String>,
}

impl RuntimeRunner {
    /// Runs on `runtime`, users' homes under `data`.
    pub fn new(runtime: Runtime, data: Option<PathBuf>, default_user: Option<String>) -> Self {
        RuntimeRunner {
            runtime,
            data,
            default_user,
        }
    }
}

impl PluginRunner for RuntimeRunner {
    fn code_version(&self, module: &PluginModule) -> Option<String> {
        self.runtime.executor().plugin_version(module)
    }

    fn run(
        &self,
        user: Option<&str>,
        module: &Arc<PluginModule>,
        op: PluginOp,
        timeout: Duration,
    ) -> PluginFuture {
        let runtime = self.runtime.clone();
        let module = Arc::clone(module);
        let space = user_space(
            self.data.as_deref(),
            user.filter(|u| !u.is_empty())
                .or(self.default_user.as_deref()),
        );
        Box::pin(async move {
            let space = space.map_err(|e| {
                toolhost_runtime::PluginError::Plugin(format!("the turn's user: {e}"))
            })?;
            runtime
                .executor()
                .plugin_op(&space, &module, &op, timeout)
                .await
        })
    }
}

/// Loads every third-party plugin `TOOLHOST_PLUGINS` names, in its order.
pub async fn load_all(
    specs: &[String],
    dir: &Path,
    plugins: &BTreeMap<String, Value>,
    runner: &Arc<dyn PluginRunner>,
    secrets: SecretLookup<'_>,
) -> Result<Vec<ThirdPartyPlugin>, crate::HostError> {
    let mut loaded = Vec::with_capacity(specs.len());
    for spec in specs {
        let entry = resolve_spec(spec, dir).map_err(crate::HostError::Plugin)?;
        let probe = Arc::new(PluginModule::at(spec, &entry).map_err(|e| {
            crate::HostError::Plugin(PluginSetupError::NotFound {
                spec: spec.clone(),
                why: format!("{}: {e}", entry.display()),
            })
        })?);
        let name = manifest_name(runner.as_ref(), &probe, LOAD_TIMEOUT).await?;
        let mut module = probe.named(&name);
        configure(&mut module, &name, plugins.get(&name), secrets)
            .await
            .map_err(crate::HostError::Plugin)?;
        let third = load_third_party(runner.as_ref(), Arc::new(module), LOAD_TIMEOUT).await?;
        loaded.push(ThirdPartyPlugin {
            plugin: third.plugin(runner),
            spec: spec.clone(),
            entry: third.module.entry.clone(),
            notes: third.notes(),
        });
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_an_entry_file_a_package_folder_or_a_package_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let pkg = base.join("node_modules/@acme/crm");
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"exports": {".": {"types": "./x.d.ts", "import": "./dist/index.js"}}}"#,
        )
        .unwrap();
        std::fs::write(pkg.join("dist/index.js"), "").unwrap();
        std::fs::create_dir_all(base.join("local")).unwrap();
        std::fs::write(base.join("local/index.ts"), "").unwrap();

        assert_eq!(
            resolve_spec("@acme/crm", base).unwrap(),
            pkg.join("dist/index.js")
        );
        assert_eq!(
            resolve_spec("./local", base).unwrap(),
            base.join("./local").join("index.ts")
        );
        let file = base.join("local/index.ts");
        assert_eq!(resolve_spec(file.to_str().unwrap(), base).unwrap(), file);
        // A package name never leaves node_modules.
        for bad in ["@acme/../../local", "a//b", "a\\b"] {
            let e = resolve_spec(bad, base).unwrap_err().to_string();
            assert!(e.contains("not a package name"), "{bad}: {e}");
        }
        let e = resolve_spec("missing-plugin", base)
            .unwrap_err()
            .to_string();
        assert!(e.contains("TOOLHOST_PLUGINS names `missing-plugin`"), "{e}");
        assert!(e.contains("node_modules"), "{e}");
    }

    #[test]
    fn credentials_come_from_the_file_the_environment_or_the_store_and_are_kept_to_redact() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.js"), "").unwrap();
        let module = || PluginModule::at("x", &dir.path().join("index.js")).unwrap();
        // A variable every test process has (setting one would need `unsafe`).
        let path = std::env::var("PATH").unwrap();
        let secrets = |owner: String, name: String| -> SecretFuture {
            Box::pin(async move {
                (owner == "plugin:crm" && name == "client").then(|| "from-the-store".to_string())
            })
        };
        let table: Value = serde_json::json!({
            "config": {"region": "eu"},
            "credentials": {
                "a": "written",
                "b": {"env": "PATH"},
                "c": {"secret": "client"},
                "d": {"user": "u", "pass": "p"}
            },
            "network": false
        });
        let mut m = module();
        rt.block_on(configure(&mut m, "crm", Some(&table), &secrets))
            .unwrap();
        assert_eq!(m.settings["config"], serde_json::json!({"region": "eu"}));
        assert_eq!(
            m.settings["credentials"],
            serde_json::json!({"a": "written", "b": path, "c": "from-the-store", "d": {"user": "u", "pass": "p"}})
        );
        let mut kept = m.secrets.clone();
        kept.sort();
        let mut expected = vec![
            path.clone(),
            "from-the-store".into(),
            "p".into(),
            "u".into(),
            "written".into(),
        ];
        expected.sort();
        assert_eq!(kept, expected);
        assert!(!m.network);

        let missing = serde_json::json!({"credentials": {"c": {"secret": "other"}}});
        let e = rt
            .block_on(configure(&mut module(), "crm", Some(&missing), &secrets))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("credentials.c") && e.contains("toolhost plugins secret crm other"),
            "{e}"
        );
        let unknown = serde_json::json!({"settings": {}});
        let e = rt
            .block_on(configure(&mut module(), "crm", Some(&unknown), &secrets))
            .unwrap_err()
            .to_string();
        assert!(e.contains("[plugins.crm]") && e.contains("settings"), "{e}");
    }
}
