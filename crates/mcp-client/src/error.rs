//! Why a configured MCP server cannot be used (boot is strict about it).

/// One `[mcp_servers.NAME]` entry is wrong.
#[derive(Debug, thiserror::Error)]
#[error("MCP server `{server}`: {problem}")]
pub struct ServerConfigError {
    /// The server's name.
    pub server: String,
    /// What is wrong.
    #[source]
    pub problem: Problem,
}

/// What is wrong with a server's configuration.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The name cannot prefix tool names.
    #[error(
        "a server name must match ^[a-zA-Z0-9_-]{{1,64}}$ without `__` (it prefixes tool names)"
    )]
    InvalidName,
    /// Both `command` and `url` are given.
    #[error("give `command` (stdio) or `url` (Streamable HTTP), not both")]
    BothTransports,
    /// Neither `command` nor `url` is given.
    #[error("give `command` (stdio) or `url` (Streamable HTTP)")]
    NoTransport,
    /// `url` is not a URL.
    #[error("`url`: {0}")]
    InvalidUrl(#[source] url::ParseError),
    /// `url` is not http or https.
    #[error("`url` must be http or https")]
    NotHttp,
    /// Sandbox settings on a Streamable HTTP server, which Toolhost does not start.
    #[error(
        "`{0}` applies to stdio servers only: Toolhost does not start a server it reaches by `url`"
    )]
    StdioOnly(&'static str),
    /// A granted path is relative.
    #[error("`{key}` names {}, which is not an absolute path", path.display())]
    RelativePath {
        /// `read_only` or `read_write`.
        key: &'static str,
        /// The path.
        path: std::path::PathBuf,
    },
    /// A header that HTTP cannot carry.
    #[error("`headers`: `{0}` is not a valid HTTP header name and value")]
    InvalidHeader(String),
    /// Headers on a stdio server.
    #[error("`headers` apply to servers reached by `url` only")]
    HeadersNeedUrl,
    /// `bearer_token_env` names a variable that is not set.
    #[error("`bearer_token_env`: ${0} is not set")]
    BearerTokenUnset(String),
}
