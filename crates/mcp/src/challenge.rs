//! `WWW-Authenticate` challenges (RFC 6750 §3, as the MCP authorization specification
//! uses them): what a client without a good token, or without a scope, is told.

use axum::http::HeaderValue;
use toolhost_host::Scope;

/// The scopes a client asks for to use the MCP endpoint at all.
pub(crate) const TOOL_SCOPES: [Scope; 2] = [Scope::ToolsRead, Scope::ToolsCall];

/// The 401 challenge. With OAuth (`metadata`, the URL of the protected resource
/// metadata): where to find the authorization server and which scopes to ask for, and
/// `invalid_token` when a token came and was refused. Without OAuth, a bare `Bearer`:
/// Toolhost's own tokens are not obtained by a client, so there is nothing to say.
pub(crate) fn unauthorized(metadata: Option<&str>, token_given: bool) -> HeaderValue {
    let Some(metadata) = metadata else {
        return HeaderValue::from_static("Bearer");
    };
    let mut params = Vec::new();
    if token_given {
        params.push(("error", "invalid_token".to_string()));
    }
    params.push(("resource_metadata", metadata.to_string()));
    params.push(("scope", scope_list(&TOOL_SCOPES)));
    header(&params)
}

/// The 403 challenge for a request that needs scopes the token lacks: `scope` is every
/// scope the client should ask for at once (what it has and what it lacks), so that a new
/// token does not lose what the old one allowed.
pub(crate) fn insufficient_scope(
    metadata: Option<&str>,
    scopes: &[Scope],
    lacking: &[Scope],
) -> HeaderValue {
    let mut params = vec![
        ("error", "insufficient_scope".to_string()),
        ("scope", scope_list(scopes)),
    ];
    if let Some(metadata) = metadata {
        params.push(("resource_metadata", metadata.to_string()));
    }
    params.push((
        "error_description",
        format!("this token lacks {}", scope_list(lacking)),
    ));
    header(&params)
}

/// Scope names in `Scope`'s order, space-separated.
pub(crate) fn scope_list(scopes: &[Scope]) -> String {
    let names: Vec<&str> = Scope::ALL
        .into_iter()
        .filter(|s| scopes.contains(s))
        .map(Scope::as_str)
        .collect();
    names.join(" ")
}

/// `Bearer k="v", …` with each value a quoted string. A value that cannot be a header
/// (it would take a control character from a configured URL) leaves its challenge bare.
fn header(params: &[(&str, String)]) -> HeaderValue {
    let text = params
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(", ");
    HeaderValue::from_str(&format!("Bearer {text}"))
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRM: &str = "https://tools.example.com/.well-known/oauth-protected-resource/mcp";

    #[test]
    fn the_401_points_at_the_metadata_and_names_the_scopes() {
        assert_eq!(
            unauthorized(Some(PRM), false),
            format!(r#"Bearer resource_metadata="{PRM}", scope="tools:read tools:call""#)
        );
        assert_eq!(
            unauthorized(Some(PRM), true),
            format!(
                r#"Bearer error="invalid_token", resource_metadata="{PRM}", scope="tools:read tools:call""#
            )
        );
        assert_eq!(unauthorized(None, true), "Bearer");
    }

    #[test]
    fn the_403_asks_for_every_scope_at_once() {
        assert_eq!(
            insufficient_scope(
                Some(PRM),
                &[Scope::ToolsCall, Scope::ToolsRead],
                &[Scope::ToolsCall]
            ),
            format!(
                r#"Bearer error="insufficient_scope", scope="tools:read tools:call", resource_metadata="{PRM}", error_description="this token lacks tools:call""#
            )
        );
        assert_eq!(
            insufficient_scope(None, &[Scope::ToolsRead], &[Scope::ToolsRead]),
            r#"Bearer error="insufficient_scope", scope="tools:read", error_description="this token lacks tools:read""#
        );
    }

    #[test]
    fn values_are_quoted_strings() {
        assert_eq!(
            header(&[("a", r#"x"y\z"#.to_string())]),
            r#"Bearer a="x\"y\\z""#
        );
        assert_eq!(header(&[("a", "line\nbreak".to_string())]), "Bearer");
    }
}
