//! `toolhost token new|hash`: bearer tokens for `toolhost serve`.

use std::io::{Read, Write};
use std::process::ExitCode;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use toolhost_host::{ConfigFile, hash_token};
use toolhost_store::{NewToken, Role, Scope};

use crate::store_args::StoreArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Make a random token for USER. It is stored (in the store `serve` uses: --database,
    /// $TOOLHOST_DATABASE_URL, [store] url, else the embedded one), as its hash only, and
    /// printed once; with --no-store, it is printed with the `[[serve.tokens]]` entry that
    /// holds its hash (put it in toolhost.toml).
    New {
        #[arg(long, value_name = "EMAIL")]
        user: String,
        /// What the token is for (stored tokens).
        #[arg(long, default_value = "cli")]
        name: String,
        /// A scope it allows: tools:read, tools:call or admin (repeatable; default
        /// tools:read and tools:call; stored tokens).
        #[arg(long = "scope", value_name = "SCOPE", value_parser = parse_scope)]
        scopes: Vec<Scope>,
        /// Bind it to this agent: its bearer then is that agent (stored tokens).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// Days until it stops working (stored tokens; default: never).
        #[arg(long, value_name = "DAYS")]
        expires_in_days: Option<u32>,
        /// The user's role when the store does not know the user yet: viewer, operator or
        /// admin (default viewer).
        #[arg(long, value_name = "ROLE", value_parser = parse_role)]
        role: Option<Role>,
        /// The configuration file (for [store]).
        #[arg(long, value_name = "PATH")]
        config: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print the SHA-256 of a token (read from stdin, so it stays out of shell history).
    Hash,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match args.command {
        Command::New {
            user,
            name,
            scopes,
            agent,
            expires_in_days,
            role,
            config,
            store,
        } => {
            toolhost_catalog::validate_user(&user)?;
            let config = ConfigFile::load(config.as_deref())?;
            if store.location(&config)?.is_some() {
                let new = StoredToken {
                    user,
                    name,
                    scopes,
                    agent,
                    expires_in_days,
                    role,
                };
                return stored_token(&store, &config, new, &mut out);
            }
            if !scopes.is_empty() || agent.is_some() || expires_in_days.is_some() {
                bail!(
                    "--scope, --agent and --expires-in-days need a store (drop --no-store): \
                     a [[serve.tokens]] entry has every scope and no agent"
                );
            }
            let mut bytes = [0u8; 32];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut bytes))
                .context("cannot read /dev/urandom")?;
            let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(out, "token: {token}")?;
            writeln!(out)?;
            writeln!(out, "[[serve.tokens]]")?;
            writeln!(out, "user = {}", toml::Value::String(user))?;
            writeln!(out, "sha256 = \"{}\"", hash_token(&token))?;
        }
        Command::Hash => {
            let mut token = String::new();
            std::io::stdin().read_to_string(&mut token)?;
            let token = token.trim_end_matches(['\n', '\r']);
            if token.is_empty() {
                bail!("no token on stdin");
            }
            writeln!(out, "{}", hash_token(token))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_scope(text: &str) -> Result<Scope, String> {
    Scope::parse(text)
        .ok_or_else(|| format!("{text:?} is not a scope: tools:read, tools:call or admin"))
}

fn parse_role(text: &str) -> Result<Role, String> {
    Role::parse(text).ok_or_else(|| format!("{text:?} is not a role: viewer, operator or admin"))
}

struct StoredToken {
    user: String,
    name: String,
    scopes: Vec<Scope>,
    agent: Option<String>,
    expires_in_days: Option<u32>,
    role: Option<Role>,
}

/// Stores the token (and the user, when new) and prints it once.
fn stored_token(
    args: &StoreArgs,
    config: &ConfigFile,
    new: StoredToken,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (token, secret) = runtime.block_on(async {
        let Some(store) = args.open(config).await? else {
            bail!("no store is named");
        };
        if let Some(agent) = &new.agent
            && !config.agents.contains_key(agent)
            && store.agent(agent).await?.is_none()
        {
            bail!("no agent `{agent}`: toolhost.toml has no [agents.{agent}], and no stored agent has that id");
        }
        let actor = format!("cli:{}", whoami());
        match (store.user(&new.user).await?, new.role) {
            (Some(existing), Some(role)) if existing.role != role => {
                store.put_user(&actor, &new.user, role).await?;
            }
            (Some(_), _) => {}
            (None, role) => {
                store
                    .put_user(&actor, &new.user, role.unwrap_or(Role::Viewer))
                    .await?;
            }
        }
        let scopes = match new.scopes.is_empty() {
            true => vec![Scope::ToolsRead, Scope::ToolsCall],
            false => new.scopes,
        };
        let expires_at = new.expires_in_days.map(|days| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            now.saturating_add(i64::from(days) * 24 * 3600 * 1000)
        });
        let created = store
            .create_token(
                &actor,
                NewToken {
                    name: new.name,
                    user: new.user,
                    scopes,
                    agent: new.agent,
                    expires_at,
                },
            )
            .await?;
        store.close().await;
        Ok(created)
    })?;
    writeln!(out, "token: {secret}")?;
    writeln!(out)?;
    writeln!(
        out,
        "stored as {} for {} ({}){}; it is shown only this once",
        token.id,
        token.user,
        token
            .scopes
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        token
            .agent
            .as_deref()
            .map(|a| format!(", bound to agent {a}"))
            .unwrap_or_default()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Who runs the command, for the audit log.
fn whoami() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into())
}
