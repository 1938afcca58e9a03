//! The seed's container layout: which host paths a tool sees, and where.
//!
//! ```text
//! /officer/tools          first global tool root (read-only); more roots: /officer/tools-2, …
//! /officer/user           the user's home (read-write)
//! /officer/user/tools     the user's own tool root, when it lies in the home (read-only)
//! /officer/data           the directory of OFFICER_EMAIL_DB (read-write), when configured
//! /run/toolhost/cache/harness   the Node.js harness (read-only)
//! /run/toolhost/cache/ts        the user's own transpiled code (read-only)
//! /usr, /bin, /lib…       the system, read-only; a few files of /etc; /tmp, /dev, /proc
//! ```

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use super::spec::Mount;

pub(crate) const TOOLS: &str = "/officer/tools";
pub(crate) const USER: &str = "/officer/user";
pub(crate) const DATA: &str = "/officer/data";
pub(crate) const CACHE: &str = "/run/toolhost/cache";

/// What of Toolhost's cache a user's sandbox sees: the harness (Toolhost's own code,
/// shared) and that user's transpiled code, never another user's.
#[derive(Debug)]
pub struct CacheView<'a> {
    /// The harness directory, shown read-only to every user.
    pub harness: &'a Path,
    /// This user's transpiled code, shown read-only.
    pub transpiled: &'a Path,
}

/// One user's view: the tool-specific mounts, and how to translate host paths into it.
#[derive(Debug, Clone)]
pub struct View {
    /// Host path → sandbox path, parents before children.
    mounts: Vec<Mount>,
    /// The home, as the sandbox shows it.
    home: PathBuf,
    tools_dirs: Vec<PathBuf>,
    email_db: Option<PathBuf>,
}

impl View {
    /// The view of a user whose home is `home`, with the tool roots `tools_dirs` (read-only;
    /// those inside the home at their place in it), Toolhost's cache, and the email
    /// database's directory, if any.
    pub fn new(
        home: &Path,
        tools_dirs: &[PathBuf],
        cache: &CacheView<'_>,
        email_db: Option<&Path>,
    ) -> View {
        let mut mounts = vec![
            Mount {
                source: home.to_path_buf(),
                target: USER.into(),
                writable: true,
            },
            Mount {
                source: cache.harness.to_path_buf(),
                target: Path::new(CACHE).join("harness"),
                writable: false,
            },
            Mount {
                source: cache.transpiled.to_path_buf(),
                target: Path::new(CACHE).join("ts"),
                writable: false,
            },
        ];
        let mut inside_dirs = Vec::new();
        let mut global = 0;
        for root in tools_dirs {
            // A root that does not exist (yet) has nothing to show.
            if !root.is_dir() {
                continue;
            }
            let target = match root.strip_prefix(home) {
                Ok(rel) if !rel.as_os_str().is_empty() => Path::new(USER).join(rel),
                _ => {
                    global += 1;
                    if global == 1 {
                        PathBuf::from(TOOLS)
                    } else {
                        PathBuf::from(format!("{TOOLS}-{global}"))
                    }
                }
            };
            inside_dirs.push(target.clone());
            mounts.push(Mount {
                source: root.clone(),
                target,
                writable: false,
            });
        }
        let mut email = None;
        if let Some(db) = email_db
            && let (Some(dir), Some(name)) = (db.parent(), db.file_name())
        {
            mounts.push(Mount {
                source: dir.to_path_buf(),
                target: DATA.into(),
                writable: true,
            });
            email = Some(Path::new(DATA).join(name));
        }
        // Parents before children, so a read-only root inside the home lands on top.
        mounts.sort_by_key(|m| m.target.components().count());
        View {
            mounts,
            home: USER.into(),
            tools_dirs: inside_dirs,
            email_db: email,
        }
    }

    /// The view of a long-lived server (a stdio MCP server): its own `home` and the host
    /// paths it was granted, each at its own path, so that the paths its configuration
    /// names mean the same inside. Nothing of Toolhost's is shown.
    pub fn at_host_paths(home: &Path, grants: &[Mount]) -> View {
        let mut mounts = vec![Mount {
            source: home.to_path_buf(),
            target: home.to_path_buf(),
            writable: true,
        }];
        mounts.extend(grants.iter().map(|g| Mount {
            source: g.source.clone(),
            target: g.source.clone(),
            writable: g.writable,
        }));
        mounts.sort_by_key(|m| m.target.components().count());
        View {
            mounts,
            home: home.to_path_buf(),
            tools_dirs: Vec::new(),
            email_db: None,
        }
    }

    /// Its mounts, parents before children.
    pub fn mounts(&self) -> &[Mount] {
        &self.mounts
    }

    /// The home, as the sandbox shows it.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The tool roots, as the sandbox shows them.
    pub fn tools_dirs(&self) -> &[PathBuf] {
        &self.tools_dirs
    }

    /// The email database, as the sandbox shows it.
    pub fn email_db(&self) -> Option<&Path> {
        self.email_db.as_deref()
    }

    /// Where a host path appears inside the sandbox, if it does.
    pub fn inside(&self, host: &Path) -> Option<PathBuf> {
        self.mounts
            .iter()
            .filter_map(|m| host.strip_prefix(&m.source).ok().map(|rel| (m, rel)))
            .max_by_key(|(m, _)| m.source.components().count())
            .map(|(m, rel)| {
                if rel.as_os_str().is_empty() {
                    m.target.clone()
                } else {
                    m.target.join(rel)
                }
            })
    }
}

/// System directories shown read-only at their own paths (or recreated as the same
/// symlinks, on merged-/usr systems).
pub(crate) const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// What of /etc a tool may read: name resolution, certificates, time zones, the dynamic
/// linker's cache. Not passwd or shadow: those are written fresh. Directories and binary
/// files are bound read-only…
pub(crate) const ETC_BINDS: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
];

/// …and small text files are copied into the sandbox's /etc, which costs no mount.
pub(crate) const ETC_COPIES: &[&str] = &[
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/timezone",
    "/etc/ld.so.conf",
    "/etc/ca-certificates.conf",
    "/etc/os-release",
    "/etc/debian_version",
];

/// A networked sandbox's resolv.conf, and the nameservers its DNS relay asks, from the
/// host's resolv.conf: the tool asks 127.0.0.1 (the relay), with the host's search
/// domains and options.
pub(crate) fn networked_resolv_conf(host: &str) -> (String, Vec<SocketAddr>) {
    let mut conf = String::from("nameserver 127.0.0.1\n");
    let mut servers = Vec::new();
    for line in host.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("nameserver") => {
                // A scoped IPv6 address (fe80::1%eth0) names the host's interface.
                let ip = words.next().map(|w| w.split('%').next().unwrap_or(w));
                if let Some(ip) = ip.and_then(|ip| ip.parse::<IpAddr>().ok()) {
                    servers.push(SocketAddr::new(ip, 53));
                }
            }
            Some("search" | "domain" | "options") => {
                conf.push_str(line.trim());
                conf.push('\n');
            }
            _ => {}
        }
    }
    (conf, servers)
}

pub(crate) const PASSWD: &str = "root:x:0:0:officer:/officer/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
pub(crate) const GROUP: &str = "root:x:0:\nnogroup:x:65534:\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_networked_sandbox_asks_its_relay_with_the_hosts_search_domains() {
        let host = "# generated\nnameserver 10.255.255.53\nnameserver fe80::1%eth0\n\
                    search corp.example\noptions ndots:2 edns0\nsortlist 10.0.0.0\n";
        let (conf, servers) = networked_resolv_conf(host);
        assert_eq!(
            conf,
            "nameserver 127.0.0.1\nsearch corp.example\noptions ndots:2 edns0\n"
        );
        assert_eq!(
            servers,
            [
                "10.255.255.53:53".parse().unwrap(),
                "[fe80::1]:53".parse().unwrap()
            ]
        );
    }

    #[test]
    fn maps_roots_home_and_cache() {
        let tmp = tempfile::tempdir().unwrap();
        let at = |p: &str| tmp.path().join(p.trim_start_matches('/'));
        for d in ["/srv/tools", "/data/u@x.org/tools", "/opt/more"] {
            std::fs::create_dir_all(at(d)).unwrap();
        }
        let view = View::new(
            &at("/data/u@x.org"),
            &[
                at("/srv/tools"),
                at("/data/u@x.org/tools"),
                at("/opt/more"),
                at("/gone"),
            ],
            &CacheView {
                harness: &at("/root/.cache/toolhost/harness-0123"),
                transpiled: &at("/root/.cache/toolhost/ts/u1"),
            },
            Some(&at("/var/mail/emails.db")),
        );
        let inside = |p: &str| view.inside(&at(p)).map(|p| p.display().to_string());
        assert_eq!(
            inside("/srv/tools/echo/index.ts").unwrap(),
            "/officer/tools/echo/index.ts"
        );
        assert_eq!(inside("/opt/more/x").unwrap(), "/officer/tools-2/x");
        assert_eq!(
            inside("/data/u@x.org/tools/t/index.ts").unwrap(),
            "/officer/user/tools/t/index.ts"
        );
        assert_eq!(
            inside("/data/u@x.org/notes.txt").unwrap(),
            "/officer/user/notes.txt"
        );
        assert_eq!(inside("/data/u@x.org").unwrap(), "/officer/user");
        assert_eq!(
            inside("/root/.cache/toolhost/harness-0123/harness.mjs").unwrap(),
            "/run/toolhost/cache/harness/harness.mjs"
        );
        assert_eq!(
            inside("/root/.cache/toolhost/ts/u1").unwrap(),
            "/run/toolhost/cache/ts"
        );
        // Another user's transpiled code, and the rest of the cache, are not there.
        assert_eq!(inside("/root/.cache/toolhost/ts/u2/x.js"), None);
        assert_eq!(inside("/root/.cache/toolhost/ts"), None);
        assert_eq!(inside("/data/other@x.org/notes.txt"), None);
        assert_eq!(inside("/etc/shadow"), None);
        assert_eq!(
            view.email_db().unwrap(),
            Path::new("/officer/data/emails.db")
        );
        let dirs: Vec<_> = view
            .tools_dirs()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            dirs,
            ["/officer/tools", "/officer/user/tools", "/officer/tools-2"]
        );
        // The user's tool root is mounted after (on top of) the home.
        let order: Vec<_> = view
            .mounts()
            .iter()
            .map(|m| m.target.display().to_string())
            .collect();
        let home = order.iter().position(|t| t == "/officer/user").unwrap();
        let tools = order
            .iter()
            .position(|t| t == "/officer/user/tools")
            .unwrap();
        assert!(home < tools);
    }
}
