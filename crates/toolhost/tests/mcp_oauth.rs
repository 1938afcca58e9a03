//! `serve` as an OAuth resource server, over real HTTP, with an authorization server the
//! test runs itself (`mcp/issuer.rs`: metadata and a JWKS on loopback): the protected
//! resource metadata at both well-known URLs, the 401 and 403 challenges exactly, good
//! tokens listing and calling, every kind of bad token refused, key rotation, and
//! Toolhost's own tokens beside the issuer's.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/issuer.rs"]
mod issuer;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::time::Duration;

use common::{Fixture, Server};
use issuer::{Issuer, Key, now};
use raw_http::{MCP_POST, Response, Session, send_to};
use serde_json::{Value, json};

const AGENT: &str = "[agents.helper]\ngrants = [{ tool_set = \"data-tools\" }]\n";
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const CALL_ECHO: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi from a jwt"}}}"#;
/// The scopes a client gets to use the tools.
const TOOLS: &str = "tools:read tools:call";

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The body of a response that may be an SSE stream of one message.
fn message(r: &Response) -> Value {
    let body = r
        .body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&r.body);
    serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.body))
}

fn tool_names(session: &Session) -> Vec<String> {
    let r = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let mut names: Vec<String> = message(&r)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// `initialize` at `path` with `auth` (if any).
fn initialize(addr: &str, path: &str, auth: Option<&str>) -> Response {
    let mut headers = MCP_POST.to_vec();
    let auth = auth.map(bearer);
    if let Some(a) = &auth {
        headers.push(("Authorization", a));
    }
    send_to(addr, "POST", path, &headers, INIT.as_bytes())
}

/// GET `path` without a token.
fn get(addr: &str, path: &str) -> Response {
    send_to(addr, "GET", path, &[], b"")
}

#[test]
fn serve_accepts_the_access_tokens_of_a_configured_issuer_and_challenges_without_one() {
    let k1 = Key::ed25519("k1");
    let k2 = Key::p256("k2");
    let stranger = Key::ed25519("k1");
    let idp = Issuer::start(&[&k1]);
    let f = Fixture::new();
    // A second issuer whose keys cannot be fetched: its tokens get 503, never 401.
    let down = format!("{}/down", idp.url);
    std::fs::write(
        f.config(),
        format!(
            "{}{AGENT}[[serve.oauth.issuers]]\nissuer = {:?}\n\n[[serve.oauth.issuers]]\nissuer = {down:?}\njwks_uri = \"http://127.0.0.1:1/jwks\"\n",
            f.config_text(),
            idp.url
        ),
    )
    .unwrap();
    let db = f.dir.path().join("store/toolhost.db");
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut server = Server::start(cmd);
    let addr = server.addr.clone();
    let base = format!("http://{addr}");
    let mcp = format!("{base}/mcp");
    let agent = format!("{base}/agents/helper/mcp");
    let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let agent_prm = format!("{base}/.well-known/oauth-protected-resource/agents/helper/mcp");

    // The metadata, at both well-known URLs, without a token.
    let expected = |resource: &str, name: &str| {
        json!({
            "resource": resource,
            "authorization_servers": [idp.url, down],
            "scopes_supported": ["tools:read", "tools:call", "admin"],
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        })
    };
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = get(&addr, path);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(message(&r), expected(&mcp, "Toolhost"), "{path}");
    }
    let r = get(
        &addr,
        "/.well-known/oauth-protected-resource/agents/helper/mcp",
    );
    assert_eq!(message(&r), expected(&agent, "Toolhost (agent helper)"));
    assert_eq!(
        get(
            &addr,
            "/.well-known/oauth-protected-resource/agents/nobody/mcp"
        )
        .status,
        404
    );

    // No token: where to get one, and which scopes to ask for.
    let r = initialize(&addr, "/mcp", None);
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(
        r.header("www-authenticate").unwrap(),
        format!(r#"Bearer resource_metadata="{prm}", scope="{TOOLS}""#)
    );
    let r = initialize(&addr, "/agents/helper/mcp", None);
    assert_eq!(
        r.header("www-authenticate").unwrap(),
        format!(r#"Bearer resource_metadata="{agent_prm}", scope="{TOOLS}""#)
    );

    // A good token lists and calls.
    let ada = k1.sign(&idp.claims(&mcp, "ada@example.com", TOOLS));
    let session = Session::open(&addr, &[("Authorization", &bearer(&ada))]);
    assert_eq!(tool_names(&session), ["echo", "slow"]);
    let r = session.post(CALL_ECHO);
    assert!(r.body.contains("hi from a jwt"), "{}", r.body);
    let fetched = idp.jwks_fetches();
    assert_eq!(fetched, 1, "the keys are fetched once, then cached");

    // Every bad token: 401 invalid_token, the same challenge whatever is wrong.
    let invalid =
        format!(r#"Bearer error="invalid_token", resource_metadata="{prm}", scope="{TOOLS}""#);
    let good = idp.claims(&mcp, "ada@example.com", TOOLS);
    let with = |key: &str, value: Value| {
        let mut c = good.clone();
        c[key] = value;
        c
    };
    let unsigned_header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"; // {"alg":"none","typ":"JWT"}
    let payload = ada.split('.').nth(1).unwrap();
    let hs256 = {
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        h.kid = Some("k1".into());
        let secret =
            jsonwebtoken::EncodingKey::from_secret(k1.jwk()["x"].as_str().unwrap().as_bytes());
        jsonwebtoken::encode(&h, &good, &secret.unwrap()).unwrap()
    };
    let bad_tokens = [
        (
            "another audience",
            k1.sign(&with("aud", json!("https://other.example/mcp"))),
        ),
        (
            "the agent's audience at /mcp",
            k1.sign(&with("aud", json!(agent))),
        ),
        (
            "no audience",
            k1.sign(&{
                let mut c = good.clone();
                c.as_object_mut().unwrap().remove("aud");
                c
            }),
        ),
        (
            "another issuer",
            k1.sign(&with("iss", json!("https://id.example.com"))),
        ),
        ("expired", k1.sign(&with("exp", json!(now() - 120)))),
        ("not yet valid", k1.sign(&with("nbf", json!(now() + 300)))),
        ("a bad signature", stranger.sign(&good)),
        ("an unknown kid", stranger.sign_as("k9", &good)),
        ("alg none", format!("{unsigned_header}.{payload}.")),
        ("HS256 keyed with the public key", hs256),
        (
            "a user the name rule refuses",
            k1.sign(&with("sub", json!("tools"))),
        ),
        ("garbage", "not-a-token".to_string()),
    ];
    for (what, token) in &bad_tokens {
        let r = initialize(&addr, "/mcp", Some(token));
        assert_eq!(r.status, 401, "{what}: {}", r.body);
        assert_eq!(r.header("www-authenticate").unwrap(), invalid, "{what}");
    }
    // Unknown kids made the server look again at most once (rate-limited).
    assert!(idp.jwks_fetches() <= fetched + 1, "{}", idp.jwks_fetches());

    // A token for one endpoint is no token for another.
    let r = initialize(&addr, "/agents/helper/mcp", Some(&ada));
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(
        r.header("www-authenticate").unwrap(),
        format!(
            r#"Bearer error="invalid_token", resource_metadata="{agent_prm}", scope="{TOOLS}""#
        )
    );
    let for_agent = k1.sign(&idp.claims(&agent, "ada@example.com", TOOLS));
    let r = initialize(&addr, "/agents/helper/mcp", Some(&for_agent));
    assert_eq!(r.status, 200, "{}", r.body);

    // Listing only: calling gets 403 insufficient_scope, asking for both scopes at once.
    let reader = k1.sign(&idp.claims(&mcp, "bo@example.com", "tools:read"));
    let session = Session::open(&addr, &[("Authorization", &bearer(&reader))]);
    assert_eq!(tool_names(&session), ["echo", "slow"]);
    let r = session.post(CALL_ECHO);
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        r.header("www-authenticate").unwrap(),
        format!(
            r#"Bearer error="insufficient_scope", scope="{TOOLS}", resource_metadata="{prm}", error_description="this token lacks tools:call""#
        )
    );
    let error = &message(&r)["error"];
    assert_eq!(message(&r)["id"], 3);
    assert!(
        error["message"].as_str().unwrap().contains("tools:call"),
        "{error}"
    );
    // Without any tool scope, listing is refused the same way.
    let none = k1.sign(&idp.claims(&mcp, "cy@example.com", "openid"));
    let session = Session::open(&addr, &[("Authorization", &bearer(&none))]);
    let r = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains(r#"scope="tools:read""#),
        "{:?}",
        r.header("www-authenticate")
    );

    // An issuer whose keys cannot be had: 503, the token may be good.
    let claims = json!({"iss": down, "aud": mcp, "sub": "ada@example.com", "exp": now() + 600});
    let r = initialize(&addr, "/mcp", Some(&k1.sign(&claims)));
    assert_eq!(r.status, 503, "{}", r.body);

    // Toolhost's own tokens work beside the issuer's, and the HTTP API takes the JWT.
    let admin = stored::admin_token(&server.logs());
    let session = Session::open(&addr, &[("Authorization", &bearer(&admin))]);
    assert_eq!(tool_names(&session), ["echo", "slow"]);
    let api = |token: &str| {
        let auth = bearer(token);
        send_to(
            &addr,
            "GET",
            "/api/v1/agents",
            &[("Authorization", &auth)],
            b"",
        )
    };
    assert_eq!(api(&ada).status, 200);
    assert_eq!(api(&bad_tokens[0].1).status, 401);

    // Rotation: a key published later is fetched once a token names it (the last fetch
    // being old enough).
    idp.publish(&k2);
    std::thread::sleep(Duration::from_millis(5200));
    let before = idp.jwks_fetches();
    let rotated = k2.sign(&idp.claims(&mcp, "ada@example.com", TOOLS));
    let session = Session::open(&addr, &[("Authorization", &bearer(&rotated))]);
    assert_eq!(tool_names(&session), ["echo", "slow"]);
    assert_eq!(idp.jwks_fetches(), before + 1);
    // The old key still works.
    let session = Session::open(&addr, &[("Authorization", &bearer(&ada))]);
    assert_eq!(tool_names(&session), ["echo", "slow"]);
    assert!(server.stop().success());
}

#[test]
fn issuers_on_a_wildcard_address_need_the_public_url() {
    let f = Fixture::new();
    std::fs::write(
        f.config(),
        "[[serve.oauth.issuers]]\nissuer = \"https://id.example.com\"\n",
    )
    .unwrap();
    let out = f
        .toolhost()
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("set [serve] public_url"), "{stderr}");
}

/// The official TypeScript SDK's client, given an issuer's access token as its bearer
/// header: every check of `tests/mcp-clients/ts_client.mjs` (listing, calls, progress,
/// cancellation, list_changed) passes as it does with Toolhost's own tokens.
#[test]
fn typescript_sdk_with_an_access_token() {
    let key = Key::ed25519("k1");
    let idp = Issuer::start(&[&key]);
    let f = Fixture::new();
    std::fs::write(
        f.config(),
        format!(
            "{}[[serve.oauth.issuers]]\nissuer = {:?}\n",
            f.config_text(),
            idp.url
        ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"]).arg(f.data());
    let mut server = Server::start(cmd);
    // The fixture's user: the script checks the slow tool's abort marker in its home.
    let token = key.sign(&idp.claims(&server.url, "tester", TOOLS));
    let dir = common::clients_dir();
    let mut node = std::process::Command::new("node");
    node.current_dir(&dir).arg(dir.join("ts_client.mjs")).arg(
        json!({
            "transport": "http",
            "url": server.url,
            "token": token,
            "home": f.home("tester"),
            "tools": f.tools(),
        })
        .to_string(),
    );
    common::run_client(node, "the TypeScript SDK with an access token");
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}
