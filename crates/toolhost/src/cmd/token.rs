//! `toolhost token new|hash`: bearer tokens for `toolhost serve`.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toolhost_host::hash_token;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Make a random token for USER: prints the token (give it to the client) and the
    /// `[[serve.tokens]]` entry holding only its hash (put it in toolhost.toml).
    New {
        #[arg(long, value_name = "EMAIL")]
        user: String,
    },
    /// Print the SHA-256 of a token (read from stdin, so it stays out of shell history).
    Hash,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match args.command {
        Command::New { user } => {
            toolhost_catalog::validate_user(&user)?;
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
