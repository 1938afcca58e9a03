//! The host's side of the sandbox: what the machine offers, whether that is enough, and
//! turning "run this program for this user" into a call of the helper.

use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::process::Child;

use toolhost_netpolicy::Reach;

use crate::cgroup::{Cgroups, Lease};
use crate::config::{Requirement, SandboxConfig};
use crate::egress::Egress;
use crate::layout::{self, View};
use crate::quota::{HomeQuota, Watched};
use crate::spares::{self, GroupLimits, Spares};
use crate::spec::{Limits, Mount, Spec};
use crate::{Layer, SandboxError};

/// The embedded sandbox as this host runs it. Built once per runtime.
#[derive(Debug)]
pub struct Sandbox {
    config: SandboxConfig,
    helper: PathBuf,
    layers: Vec<Layer>,
    /// Why tools cannot run, when a required layer is missing.
    unavailable: Option<String>,
    cgroups: Option<Arc<Cgroups>>,
    spares: Arc<Spares>,
    system: SystemView,
    root_host: bool,
    quota: Arc<HomeQuota>,
    /// Processes started in it so far.
    starts: std::sync::atomic::AtomicU64,
}

/// One process to start in the sandbox. Paths are host paths; the sandbox translates them.
#[derive(Debug)]
pub struct Launch<'a> {
    /// The program: a path, or a name looked up in `search_path`.
    pub program: &'a Path,
    /// Where a program named without a directory is looked for: the tools' `PATH`.
    pub search_path: &'a str,
    /// Its arguments.
    pub args: Vec<LaunchArg>,
    /// Its working directory.
    pub cwd: &'a Path,
    /// The user it runs for (which decides its uid on a root host).
    pub user: &'a str,
    /// What of the host it sees.
    pub view: &'a View,
    /// Extra read-write mounts (the worker's socket directory).
    pub extra: Vec<Mount>,
    /// Whether it gets the network (through the supervisor).
    pub network: bool,
    /// A per-call process (CPU time is limited); a worker otherwise.
    pub per_call: bool,
}

/// Replaces the spare helper a start used, when dropped. The tool's owner holds it until
/// the call that needed the sandbox is done (a worker's first call, a per-call process's
/// run): a helper starting meanwhile would take CPU from that call.
#[derive(Debug)]
pub struct Refill(Arc<Sandbox>);

impl Drop for Refill {
    fn drop(&mut self) {
        self.0.refill();
    }
}

/// One argument of a [`Launch`].
#[derive(Debug)]
pub enum LaunchArg {
    /// Passed as it is.
    Text(String),
    /// A host path, passed as the sandbox shows it.
    Path(PathBuf),
}

impl Sandbox {
    /// Probes the machine (in a fresh helper process) and sets up cgroups.
    pub fn new(config: SandboxConfig) -> Sandbox {
        let helper = config
            .helper
            .clone()
            .or_else(|| std::env::current_exe().ok())
            .unwrap_or_else(|| PathBuf::from("toolhost"));
        let mut layers = match probe(&helper) {
            Ok(layers) => layers,
            Err(why) => vec![Layer {
                name: "helper".into(),
                available: false,
                detail: why,
            }],
        };
        let cgroups = match Cgroups::new().and_then(|c| {
            if config.cgroups {
                Ok(c)
            } else {
                Err("turned off by the configuration ([sandbox] cgroups = false)".into())
            }
        }) {
            Ok(c) => {
                set_layer(
                    &mut layers,
                    "cgroups",
                    true,
                    format!("enforced: {}", c.describe()),
                );
                Some(Arc::new(c))
            }
            Err(why) => {
                let was = layers
                    .iter()
                    .find(|l| l.name == "cgroups")
                    .map(|l| l.detail.clone());
                let detail = match was {
                    Some(found) if !found.is_empty() => format!("not enforced: {why} ({found})"),
                    _ => format!("not enforced: {why}"),
                };
                set_layer(&mut layers, "cgroups", false, detail);
                None
            }
        };
        let root_host = rustix::process::getuid().is_root();
        let unavailable =
            settings_refused(&config, root_host).or_else(|| missing(&config, &layers));
        let system = system_view();
        let quota = Arc::new(HomeQuota::new(config.home_mb, config.home_files));
        Sandbox {
            config,
            helper,
            layers,
            unavailable,
            cgroups,
            spares: Arc::default(),
            system,
            root_host,
            quota,
            starts: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many processes have started in the sandbox (tool processes, workers, servers).
    pub fn starts(&self) -> u64 {
        self.starts.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What the probe found, layer by layer.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The configuration this sandbox was built from.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The binary that builds sandboxes (its hidden helper modes).
    pub fn helper(&self) -> &Path {
        &self.helper
    }

    /// `Err` with what is missing when the configuration requires a layer this machine
    /// does not offer: then no tool runs.
    pub fn ready(&self) -> Result<(), SandboxError> {
        match &self.unavailable {
            Some(why) => Err(SandboxError::Unavailable(why.clone())),
            None => Ok(()),
        }
    }

    /// The host uid a user's tools run as (a root host gives each user its own). `Err`
    /// when no tool may run (among other reasons, a uid range that `validate` refused).
    pub fn uid_for(&self, user: &str) -> Result<u32, SandboxError> {
        self.ready()?;
        if !self.root_host {
            return Ok(rustix::process::getuid().as_raw());
        }
        // FNV-1a: stable across runs and builds, unlike std's hasher.
        let hash = user.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let span = u64::from(self.config.uid_count.max(1));
        u32::try_from(hash % span)
            .ok()
            .and_then(|n| self.config.uid_base.checked_add(n))
            .ok_or_else(|| {
                SandboxError::Unavailable("[sandbox] uid_base + uid_count overflows".into())
            })
    }

    /// Whether a sandbox may start for the user whose home is `home`, by its quota:
    /// `Ok` with the bytes left (if there is a byte quota), `Err` saying why not.
    pub async fn admit(&self, home: &Path, roots: &[PathBuf]) -> Result<Option<u64>, SandboxError> {
        self.quota.admit(home, roots).await
    }

    /// Keeps the sandbox whose process group is `pgid` (using the home `home`) under the
    /// quota's watch while the returned handle lives.
    pub fn watch(&self, home: &Path, pgid: i32) -> Option<Watched> {
        self.quota.watch(home, pgid)
    }

    /// Makes a user's home writable by that user's sandbox uid (a root host only). Tool
    /// roots inside it stay as they are: they are mounted read-only anyway.
    pub fn prepare_home(
        &self,
        home: &Path,
        user: &str,
        keep: &[PathBuf],
    ) -> Result<(), SandboxError> {
        self.ready()?;
        std::fs::create_dir_all(home).map_err(|e| SandboxError::io(home, e))?;
        if !self.root_host {
            return Ok(());
        }
        let uid = self.uid_for(user)?;
        let meta = std::fs::metadata(home).map_err(|e| SandboxError::io(home, e))?;
        if meta.uid() == uid {
            return Ok(());
        }
        chown_tree(home, uid, keep).map_err(|e| SandboxError::io(home, e))
    }

    /// The spec of a fresh sandbox running `launch` with the environment `env`.
    pub fn spec(
        &self,
        launch: Launch<'_>,
        env: Vec<(String, String)>,
    ) -> Result<Spec, SandboxError> {
        self.ready()?;
        let inside = |p: &Path| -> Result<PathBuf, SandboxError> {
            launch
                .view
                .inside(p)
                .or_else(|| {
                    launch
                        .extra
                        .iter()
                        .find_map(|m| p.strip_prefix(&m.source).ok().map(|r| m.target.join(r)))
                })
                .ok_or_else(|| SandboxError::OutsideView(p.to_path_buf()))
        };
        let mut mounts = self.system.mounts.clone();
        let program = self.program_inside(launch.program, launch.search_path, &mut mounts)?;
        mounts.extend(launch.view.mounts().iter().cloned());
        mounts.extend(launch.extra.iter().cloned());
        let mut args = Vec::with_capacity(launch.args.len());
        for a in &launch.args {
            args.push(match a {
                LaunchArg::Text(t) => t.clone(),
                LaunchArg::Path(p) => inside(p)?.display().to_string(),
            });
        }
        let uid = self.uid_for(launch.user)?;
        let mut files = self.system.files.clone();
        let network = match launch.network {
            true => Some(self.egress(&mut files)?),
            false => None,
        };
        Ok(Spec {
            program,
            args,
            cwd: inside(launch.cwd)?,
            uid,
            gid: uid,
            mounts,
            links: self.system.links.clone(),
            files,
            tmp_bytes: self.config.tmp_mb * 1024 * 1024,
            limits: Limits {
                processes: Some(self.config.max_user_processes),
                open_files: Some(self.config.max_open_files),
                file_size: Some(self.config.max_file_mb * 1024 * 1024),
                cpu_seconds: launch.per_call.then_some(self.config.cpu_seconds),
            },
            network,
            cgroups: Vec::new(),
            env,
            landlock: self.has("landlock"),
            seccomp: self.has("seccomp"),
            hostname: "toolhost".into(),
        })
    }

    /// Where a networked tool may connect; its resolv.conf names the DNS relay.
    fn egress(&self, files: &mut [(PathBuf, String)]) -> Result<Egress, SandboxError> {
        if !self.has("seccomp") || !self.has("network-supervisor") {
            return Err(SandboxError::Unavailable(
                "a tool with the network needs the network supervisor (seccomp user \
                 notification: its connections go through it, which keeps the tool off \
                 the host's private networks), and this machine does not offer it; see \
                 `toolhost sandbox status`"
                    .into(),
            ));
        }
        for (path, content) in files.iter_mut() {
            if path == Path::new("/etc/resolv.conf") {
                content.clone_from(&self.system.networked_resolv);
            }
        }
        let dns = match self.config.dns.is_empty() {
            true => self.system.resolvers.clone(),
            false => self.config.dns.clone(),
        };
        Ok(Egress {
            reach: Reach {
                networks: self.config.network_private.clone(),
                ..Reach::default()
            },
            dns,
            tcp_ports: self.config.network_ports.clone(),
        })
    }

    /// Starts the sandbox `spec` describes: hands it to a spare helper, or to a new one
    /// when none is ready. The child's stdin stays open for the tool after the spec.
    ///
    /// The spare used is replaced when the returned [`Refill`] is dropped: once the tool
    /// is done with the call that needed it, so that starting the next helper does not
    /// compete with that call for CPU.
    pub async fn start(
        self: &Arc<Self>,
        mut spec: Spec,
    ) -> Result<(Child, Option<Lease>, Refill), SandboxError> {
        let refill = Refill(Arc::clone(self));
        self.starts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (mut child, lease) = match self.spares.take() {
            Some(spare) => (spare.child, spare.lease),
            None => {
                let lease = match &self.cgroups {
                    Some(c) => Some(
                        c.lease(self.limits().memory, self.limits().processes)
                            .map_err(SandboxError::Start)?,
                    ),
                    None => None,
                };
                // The helper joins its cgroups itself, before it forks.
                spec.cgroups = lease.as_ref().map(|l| l.dirs.clone()).unwrap_or_default();
                let mut child =
                    spares::command(&self.helper)
                        .spawn()
                        .map_err(|e| SandboxError::Spawn {
                            program: self.helper.clone(),
                            source: e,
                        })?;
                spares::started(&mut child)
                    .await
                    .map_err(SandboxError::Start)?;
                (child, lease)
            }
        };
        let json = serde_json::to_vec(&spec).map_err(|e| SandboxError::Start(e.to_string()))?;
        let mut frame = (json.len() as u64).to_le_bytes().to_vec();
        frame.extend_from_slice(&json);
        let written = match child.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&frame).await,
            None => Err(std::io::Error::other("no stdin")),
        };
        written.map_err(|e| {
            SandboxError::Start(format!("cannot hand the sandbox helper its spec: {e}"))
        })?;
        Ok((child, lease, refill))
    }

    /// Keeps `[sandbox] spares` helpers ready (inside a Tokio runtime; otherwise a no-op).
    pub fn refill(&self) {
        if self.unavailable.is_none() {
            self.spares.refill(
                self.config.spares,
                &self.helper,
                self.cgroups.clone(),
                self.limits(),
            );
        }
    }

    /// Waits until the spare helpers being started are ready.
    pub async fn settled(&self) {
        self.spares.settled().await;
    }

    fn limits(&self) -> GroupLimits {
        GroupLimits {
            memory: self.config.memory_mb * 1024 * 1024,
            processes: self.config.max_processes,
        }
    }

    fn has(&self, layer: &str) -> bool {
        self.layers.iter().any(|l| l.name == layer && l.available)
    }

    /// The interpreter's path inside; an interpreter outside the system directories
    /// (`/opt/node/bin/node`, say) brings its installation along, read-only.
    fn program_inside(
        &self,
        program: &Path,
        search_path: &str,
        mounts: &mut Vec<Mount>,
    ) -> Result<PathBuf, SandboxError> {
        let found = if program.is_absolute() {
            Some(program.to_path_buf())
        } else {
            search_path
                .split(':')
                .map(|d| Path::new(d).join(program))
                .find(|p| p.is_file())
        };
        let not_found = |source| SandboxError::Spawn {
            program: program.to_path_buf(),
            source,
        };
        let Some(found) = found else {
            return Err(not_found(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("not found on the tools' PATH ({search_path})"),
            )));
        };
        let real = std::fs::canonicalize(&found).map_err(not_found)?;
        let in_system = |p: &Path| layout::SYSTEM_DIRS.iter().any(|d| p.starts_with(d));
        if in_system(&found) && in_system(&real) {
            return Ok(found);
        }
        // …/prefix/bin/node → …/prefix
        let prefix = real
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("/"));
        if prefix == Path::new("/") {
            return Err(SandboxError::Start(format!(
                "cannot tell the installation directory of {}",
                real.display()
            )));
        }
        mounts.push(Mount {
            source: prefix.to_path_buf(),
            target: prefix.to_path_buf(),
            writable: false,
        });
        Ok(real)
    }
}

fn set_layer(layers: &mut Vec<Layer>, name: &str, available: bool, detail: String) {
    match layers.iter_mut().find(|l| l.name == name) {
        Some(l) => {
            l.available = available;
            l.detail = detail;
        }
        None => layers.push(Layer {
            name: name.into(),
            available,
            detail,
        }),
    }
}

/// Why the settings themselves keep every tool from running, if they do: a uid range that
/// is unsafe, or (on a root host, where it is used) shared with host accounts.
fn settings_refused(config: &SandboxConfig, root_host: bool) -> Option<String> {
    let why = match config.validate() {
        Err(why) => why.to_string(),
        Ok(()) if root_host => {
            let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
            let found = config.accounts_in_range(&read("/etc/passwd"), &read("/etc/group"));
            if found.is_empty() {
                return None;
            }
            format!(
                "[sandbox] uid_base = {} with uid_count = {} overlaps host accounts ({}): \
                 they would own some user's tool files; choose a range no account uses",
                config.uid_base,
                config.uid_count,
                found.join(", ")
            )
        }
        Ok(()) => return None,
    };
    Some(format!("the sandbox cannot start, so no tool runs: {why}"))
}

/// What a required layer lacks, in one sentence, or `None` when all are there.
fn missing(config: &SandboxConfig, layers: &[Layer]) -> Option<String> {
    let absent = |names: &[&str]| -> Vec<String> {
        layers
            .iter()
            .filter(|l| names.contains(&l.name.as_str()) && !l.available)
            .map(|l| format!("{} ({})", l.name, l.detail))
            .collect()
    };
    if let Some(helper) = layers.iter().find(|l| l.name == "helper") {
        return Some(format!("the sandbox helper cannot run: {}", helper.detail));
    }
    let mut lacking = Vec::new();
    for req in &config.require {
        lacking.extend(match req {
            Requirement::Namespaces => absent(&[
                "user-namespace",
                "mount-namespace",
                "pid-namespace",
                "network-namespace",
                "ipc-namespace",
                "uts-namespace",
            ]),
            Requirement::Landlock => absent(&["landlock"]),
            Requirement::Seccomp => absent(&["seccomp", "no-new-privs"]),
            Requirement::Cgroups => absent(&["cgroups"]),
        });
    }
    if lacking.is_empty() {
        None
    } else {
        Some(format!(
            "the sandbox cannot start, so no tool runs: missing {} (set [sandbox] require to \
             the layers this machine has, or enabled = false to run without a sandbox)",
            lacking.join("; ")
        ))
    }
}

fn probe(helper: &Path) -> Result<Vec<Layer>, String> {
    let out = std::process::Command::new(helper)
        .arg(super::PROBE_MODE)
        .env_clear()
        .output()
        .map_err(|e| format!("cannot run {}: {e}", helper.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {} failed: {}",
            helper.display(),
            super::PROBE_MODE,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "{} is not a toolhost binary with a sandbox helper ({e})",
            helper.display()
        )
    })
}

/// What every sandbox shows of the system, read-only: directories and binary files as
/// mounts, symlinks recreated, small /etc files as copies.
fn system_view() -> SystemView {
    let mut view = SystemView::default();
    for dir in layout::SYSTEM_DIRS.iter().chain(layout::ETC_BINDS) {
        let path = Path::new(dir);
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if layout::SYSTEM_DIRS.contains(dir) && meta.file_type().is_symlink() {
            if let Ok(to) = std::fs::read_link(path) {
                view.links.push((path.to_path_buf(), to));
            }
            continue;
        }
        // /etc entries are often symlinks (localtime): show what they point to.
        let Ok(source) = std::fs::canonicalize(path) else {
            continue;
        };
        view.mounts.push(Mount {
            source,
            target: path.to_path_buf(),
            writable: false,
        });
    }
    for file in layout::ETC_COPIES {
        if let Ok(text) = std::fs::read_to_string(file) {
            view.files.push((PathBuf::from(file), text));
        }
    }
    let host_resolv = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let (resolv, resolvers) = layout::networked_resolv_conf(&host_resolv);
    view.resolvers = resolvers;
    view.networked_resolv = resolv;
    view.files
        .push(("/etc/passwd".into(), layout::PASSWD.into()));
    view.files.push(("/etc/group".into(), layout::GROUP.into()));
    view.files
        .push(("/etc/hostname".into(), "toolhost\n".into()));
    view
}

#[derive(Debug, Default)]
struct SystemView {
    mounts: Vec<Mount>,
    links: Vec<(PathBuf, PathBuf)>,
    files: Vec<(PathBuf, String)>,
    /// A networked sandbox's /etc/resolv.conf, and the host's resolvers behind it.
    networked_resolv: String,
    resolvers: Vec<SocketAddr>,
}

fn chown_tree(dir: &Path, uid: u32, keep: &[PathBuf]) -> std::io::Result<()> {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid))?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if keep.iter().any(|k| k == &path) {
            continue;
        }
        if entry.file_type()?.is_dir() {
            chown_tree(&path, uid, keep)?;
        } else {
            std::os::unix::fs::lchown(&path, Some(uid), Some(uid))?;
        }
    }
    Ok(())
}
