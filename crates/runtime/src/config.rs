//! Runtime settings: the `[runtime]`, `[env]` and `[resources]` tables of `toolhost.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use toolhost_sandbox::{InvalidSetting, SandboxConfig, View};

/// The `PATH` of every tool process.
pub(crate) const TOOL_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// How calls run. Every field has a default, so an empty config works.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeConfig {
    /// The Node.js executable for TypeScript and JavaScript tools.
    pub node: PathBuf,
    /// The Python interpreter for Python tools.
    pub python: PathBuf,
    /// The shell for Bash tools.
    pub bash: PathBuf,
    /// Node.js workers alive at once, over all users.
    pub max_workers: usize,
    /// Node.js workers one user may hold at once, so that no user can take every worker
    /// from the others; `None`: a quarter of `max_workers` (at least one). See
    /// [`RuntimeConfig::workers_per_user`].
    pub max_workers_per_user: Option<usize>,
    /// What one Node.js worker, and so one sandbox, serves.
    pub worker_scope: WorkerScope,
    /// Calls one worker runs concurrently before another worker is started.
    pub max_calls_per_worker: usize,
    /// A worker with no call for this long is retired.
    #[serde(with = "toolhost_spec::seconds::secs")]
    pub worker_idle_retire: Duration,
    /// Deadline of a call, unless the tool's `timeout` (TOOL.md) or the caller says otherwise.
    #[serde(with = "toolhost_spec::seconds::secs")]
    pub timeout: Duration,
    /// A call with no progress update for this long is stopped; progress resets it.
    #[serde(with = "toolhost_spec::seconds::secs")]
    pub idle_timeout: Duration,
    /// How long a cancelled call may take to settle before its process group is killed.
    #[serde(with = "toolhost_spec::seconds::millis")]
    pub cancel_grace: Duration,
    /// Most bytes of text a result may carry; the rest is cut with a note.
    pub max_result_bytes: usize,
    /// Where transpiled TypeScript and the embedded harness are kept.
    pub cache_dir: Option<PathBuf>,
    /// The `[sandbox]` table (a table of its own in `toolhost.toml`).
    #[serde(skip)]
    pub sandbox: SandboxConfig,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            node: "node".into(),
            python: "python3".into(),
            bash: "bash".into(),
            max_workers: 32,
            max_workers_per_user: None,
            worker_scope: WorkerScope::Tool,
            max_calls_per_worker: 64,
            worker_idle_retire: Duration::from_secs(300),
            timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(120),
            cancel_grace: Duration::from_millis(2000),
            max_result_bytes: 1024 * 1024,
            cache_dir: None,
            sandbox: SandboxConfig::default(),
        }
    }
}

impl RuntimeConfig {
    /// `Err` naming the first setting no call could work with (a limit of zero).
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        for (key, zero) in [
            ("max_workers", self.max_workers == 0),
            ("max_calls_per_worker", self.max_calls_per_worker == 0),
            ("max_result_bytes", self.max_result_bytes == 0),
            ("timeout", self.timeout.is_zero()),
            ("idle_timeout", self.idle_timeout.is_zero()),
        ] {
            if zero {
                return Err(InvalidSetting::new(
                    "runtime",
                    key,
                    format!("{key} must be at least 1: with 0 no call could succeed"),
                ));
            }
        }
        match self.sandbox.enabled {
            true => self.sandbox.validate(),
            false => Ok(()),
        }
    }

    /// Absolute (a relative one is taken from the current directory): sandboxes mount
    /// it, and tools run elsewhere.
    pub fn cache_dir(&self) -> PathBuf {
        let dir = self.cache_dir.clone().unwrap_or_else(default_cache_dir);
        std::path::absolute(&dir).unwrap_or(dir)
    }

    /// The most Node.js workers one user holds at once: `max_workers_per_user`, else a
    /// quarter of `max_workers`; at least one, at most `max_workers`.
    pub fn workers_per_user(&self) -> usize {
        let all = self.max_workers.max(1);
        self.max_workers_per_user.unwrap_or(all / 4).clamp(1, all)
    }
}

/// What one Node.js worker serves: the boundary between tools inside one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerScope {
    /// One tool folder of one user: a tool never shares its process (its heap, its
    /// globals, its arguments, secrets included) with another tool.
    #[default]
    Tool,
    /// All of one user's tools: fewer processes, but any of the user's tools can read
    /// and alter what the others receive and return (by patching `JSON.parse`, say),
    /// `sensitive` arguments included. Only for tools that trust each other.
    User,
}

fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("toolhost");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache/toolhost");
    }
    std::env::temp_dir().join("toolhost-cache")
}

/// The environment every tool process gets, and nothing else: the seed's variables.
#[derive(Debug, Clone, Default)]
pub struct ToolEnv {
    /// `[env]`: PI_SEARXNG_URL, OFFICER_APIFY_TOKEN, OFFICER_EMAIL_DB, … and any others
    /// the operator adds.
    pub vars: BTreeMap<String, String>,
    /// `[resources.NAME]` tables, passed as the JSON object `OFFICER_RESOURCES`.
    pub resources: serde_json::Map<String, Value>,
    /// The tool roots, passed as `PI_TOOLS_DIRS`.
    pub tools_dirs: Vec<PathBuf>,
    /// The directory holding the users' homes (`DATA_PATH`, or Toolhost's per-user
    /// folder), when they live in one: every home must lie inside it, and the email
    /// database's directory, which every sandbox shares, must not overlap it.
    pub homes: Option<PathBuf>,
}

/// Where one user's data lives: HOME, OFFICER_USER_HOME and OFFICER_USER_ROOT point here.
///
/// The runtime checks every call's space (the user-name rule, where the home lies, what
/// it overlaps) before a tool runs in it; [`UserSpace::in_homes`] checks the name first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserSpace {
    /// The user's name (the user-name rule of [`toolhost_catalog::validate_user`]).
    pub user: String,
    /// The user's home: its tools' working directory and `HOME`.
    pub home: PathBuf,
}

impl UserSpace {
    /// `HOMES/USER`, once `user` passes the user-name rule
    /// ([`toolhost_catalog::validate_user`]).
    pub fn in_homes(homes: &Path, user: &str) -> Result<UserSpace, toolhost_catalog::CatalogError> {
        toolhost_catalog::validate_user(user)?;
        Ok(UserSpace {
            user: user.to_string(),
            home: homes.join(user),
        })
    }
}

impl ToolEnv {
    /// The full environment of a tool process run for `space`, without a sandbox.
    pub fn for_user(&self, space: &UserSpace) -> Vec<(String, String)> {
        self.build(&space.home, &self.roots_for(space), None)
    }

    /// The tool roots a call for `space` sees: the runtime's, then the user's own
    /// `HOME/tools` (the seed's `DATA_PATH/EMAIL/tools`) when it is a folder (never a
    /// link: the user's tools could have planted it) and is not among them, so that a
    /// server for many users can run each one's own tools.
    pub fn roots_for(&self, space: &UserSpace) -> Vec<PathBuf> {
        let mut dirs = self.tools_dirs.clone();
        let own = space.home.join("tools");
        if !dirs.contains(&own) && toolhost_catalog::is_real_dir(&own) {
            dirs.push(own);
        }
        dirs
    }

    /// Whether `dir` lies under one of [`ToolEnv::roots_for`], without building that list:
    /// a folder under the user's own `HOME/tools` implies that it exists. Called per call.
    pub fn shows(&self, space: &UserSpace, dir: &Path) -> bool {
        self.tools_dirs.iter().any(|d| dir.starts_with(d))
            || dir
                .strip_prefix(&space.home)
                .is_ok_and(|rest| rest.starts_with("tools"))
    }

    /// The same inside a sandbox: the seed's paths (`/officer/user`, `/officer/tools`…).
    pub fn for_view(&self, view: &View) -> Vec<(String, String)> {
        self.build(view.home(), view.tools_dirs(), view.email_db())
    }

    /// The host path of `OFFICER_EMAIL_DB`, if configured.
    pub fn email_db(&self) -> Option<&Path> {
        self.vars
            .get("OFFICER_EMAIL_DB")
            .filter(|v| !v.is_empty())
            .map(Path::new)
    }

    fn build(
        &self,
        home: &Path,
        dirs: &[PathBuf],
        email_db: Option<&Path>,
    ) -> Vec<(String, String)> {
        let home = home.display().to_string();
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        env.insert("PATH".into(), TOOL_PATH.into());
        env.insert("LANG".into(), "C.UTF-8".into());
        env.insert("HOME".into(), home.clone());
        env.insert("OFFICER_USER_HOME".into(), home.clone());
        env.insert("OFFICER_USER_ROOT".into(), home);
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        env.insert("PI_TOOLS_DIRS".into(), dirs.join(":"));
        env.insert(
            "OFFICER_RESOURCES".into(),
            Value::Object(self.resources.clone()).to_string(),
        );
        for (k, v) in &self.vars {
            env.insert(k.clone(), v.clone());
        }
        if let Some(db) = email_db {
            env.insert("OFFICER_EMAIL_DB".into(), db.display().to_string());
        }
        env.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_sees_the_runtimes_roots_and_the_users_own_tools() {
        let env = ToolEnv {
            tools_dirs: vec![PathBuf::from("/srv/tools")],
            ..ToolEnv::default()
        };
        let space = UserSpace {
            user: "ann".into(),
            home: PathBuf::from("/data/ann"),
        };
        assert!(env.shows(&space, Path::new("/srv/tools/echo")));
        assert!(env.shows(&space, Path::new("/data/ann/tools/mine")));
        assert!(!env.shows(&space, Path::new("/srv/toolsets/echo")));
        assert!(!env.shows(&space, Path::new("/data/ann/toolsx/mine")));
        assert!(!env.shows(&space, Path::new("/data/bob/tools/theirs")));
        assert!(!env.shows(&space, Path::new("/elsewhere/echo")));
    }

    #[test]
    fn each_user_gets_a_quarter_of_the_workers_unless_told_otherwise() {
        let with = |max_workers, per_user| RuntimeConfig {
            max_workers,
            max_workers_per_user: per_user,
            ..RuntimeConfig::default()
        };
        assert_eq!(RuntimeConfig::default().workers_per_user(), 8);
        assert_eq!(with(2, None).workers_per_user(), 1);
        assert_eq!(with(10, None).workers_per_user(), 2);
        assert_eq!(with(4, Some(0)).workers_per_user(), 1);
        assert_eq!(with(4, Some(9)).workers_per_user(), 4);
    }

    #[test]
    fn worker_scope_is_tool_unless_set_to_user() -> Result<(), serde_json::Error> {
        assert_eq!(RuntimeConfig::default().worker_scope, WorkerScope::Tool);
        let c: RuntimeConfig = serde_json::from_value(serde_json::json!({"worker_scope": "user"}))?;
        assert_eq!(c.worker_scope, WorkerScope::User);
        let bad =
            serde_json::from_value::<RuntimeConfig>(serde_json::json!({"worker_scope": "all"}));
        assert!(bad.is_err_and(|e| {
            e.to_string()
                .contains("unknown variant `all`, expected `tool` or `user`")
        }));
        Ok(())
    }
}
