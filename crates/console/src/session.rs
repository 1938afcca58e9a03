//! Signing in and out. A token (the admin's printed at first start, or any other a user
//! holds) is checked once here; the browser gets a cookie with a random session secret,
//! never the token. Each request then authenticates the session's token again, so a
//! revoked or expired token, or one whose scope no longer allows reading, signs its
//! sessions out.

use askama::Template;
use axum::Form;
use axum::extract::{FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use toolhost_host::{Caller, Scope};
use toolhost_store::{SESSION_COOKIE, session_cookie};

use crate::page::{self, encode};
use crate::{ConsoleState, assets};

/// The session cookie's name.
pub(crate) const COOKIE: &str = SESSION_COOKIE;

/// How long a session lasts.
const TTL_SECS: i64 = 12 * 3600;

/// The signed-in caller of a page. Without a live session, the page redirects to
/// `/sign-in` (and back afterwards).
pub(crate) struct Signed {
    pub(crate) caller: Caller,
}

impl FromRequestParts<ConsoleState> for Signed {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ConsoleState,
    ) -> Result<Signed, Response> {
        // An htmx request asks for a piece of the page the browser shows: the way back
        // after signing in is that page, and the sign-in page must replace the whole page.
        let htmx = parts.headers.contains_key("hx-request");
        let here = match parts
            .headers
            .get("hx-current-url")
            .and_then(|v| v.to_str().ok())
            .filter(|_| htmx)
            .and_then(path_of)
        {
            Some(page) => page,
            None => parts
                .uri
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .to_string(),
        };
        let to_sign_in = |here: &str, clear: bool| {
            let mut res = to_sign_in(here, clear);
            if htmx && let Some(target) = res.headers().get(header::LOCATION).cloned() {
                *res.status_mut() = StatusCode::UNAUTHORIZED;
                res.headers_mut().remove(header::LOCATION);
                res.headers_mut().insert("hx-redirect", target);
            }
            res
        };
        let Some(secret) = cookie(&parts.headers) else {
            return Err(to_sign_in(&here, false));
        };
        let Some(session) = state
            .store
            .session(&secret)
            .await
            .map_err(page::store_error)?
        else {
            return Err(to_sign_in(&here, true));
        };
        let caller = state
            .host
            .tokens()
            .authenticate(&format!("Bearer {}", session.token))
            .await
            .map_err(page::store_error)?;
        match caller {
            Some(caller) if caller.may(Scope::ToolsRead) => Ok(Signed { caller }),
            _ => {
                // The token was revoked, expired or lost its scope: so is the session.
                let _ = state.store.end_session(&secret).await;
                Err(to_sign_in(&here, true))
            }
        }
    }
}

/// The session secret among the request's cookies.
fn cookie(headers: &HeaderMap) -> Option<String> {
    session_cookie(
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
    .map(str::to_string)
}

/// The path and query of an absolute URL (`http://host/a?b` → `/a?b`).
fn path_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let at = rest.find('/')?;
    Some(rest[at..].split('#').next().unwrap_or("/").to_string())
}

/// A redirect to the sign-in page that comes back to `here`; `clear` drops a dead cookie.
fn to_sign_in(here: &str, clear: bool) -> Response {
    let target = if here == "/" {
        "/sign-in".to_string()
    } else {
        format!("/sign-in?next={}", encode(here))
    };
    let mut res = Redirect::to(&target).into_response();
    if clear {
        res.headers_mut()
            .insert(header::SET_COOKIE, clear_cookie(false));
    }
    res
}

fn clear_cookie(secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("toolhost_session=; Path=/; Max-Age=0"))
}

/// Where to go after signing in: a path of this site, else the overview.
fn local_path(next: Option<&str>) -> &str {
    match next {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.contains('\\')
                && !p.chars().any(|c| c.is_control()) =>
        {
            p
        }
        _ => "/",
    }
}

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage<'a> {
    error: Option<&'a str>,
    next: &'a str,
    css: &'a str,
}

#[derive(Deserialize)]
pub(crate) struct NextQuery {
    next: Option<String>,
}

pub(crate) async fn sign_in_page(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(q): Query<NextQuery>,
) -> Response {
    let next = local_path(q.next.as_deref());
    // Already signed in: on to the page.
    if let Some(secret) = cookie(&headers)
        && let Ok(Some(_)) = state.store.session(&secret).await
    {
        return Redirect::to(next).into_response();
    }
    page::html(
        StatusCode::OK,
        &SignInPage {
            error: None,
            next,
            css: assets::css_version(),
        },
    )
}

#[derive(Deserialize)]
pub(crate) struct SignInForm {
    token: String,
    next: Option<String>,
}

pub(crate) async fn sign_in(
    State(state): State<ConsoleState>,
    Form(form): Form<SignInForm>,
) -> Response {
    let next = local_path(form.next.as_deref());
    let token = form.token.trim();
    let refused = |why: &str| {
        page::html(
            StatusCode::UNAUTHORIZED,
            &SignInPage {
                error: Some(why),
                next,
                css: assets::css_version(),
            },
        )
    };
    if token.is_empty() {
        return refused("Enter a token.");
    }
    let caller = match state
        .host
        .tokens()
        .authenticate(&format!("Bearer {token}"))
        .await
    {
        Ok(caller) => caller,
        Err(e) => return page::store_error(e),
    };
    let Some(caller) = caller else {
        return refused(
            "That token was not accepted: it is unknown, revoked or expired. Check that you \
             pasted all of it.",
        );
    };
    if !caller.may(Scope::ToolsRead) {
        return refused("That token lacks the scope tools:read, which the console needs.");
    }
    let secret = match state
        .store
        .begin_session(caller.user(), token, TTL_SECS * 1000)
        .await
    {
        Ok(secret) => secret,
        Err(e) => return page::store_error(e),
    };
    let secure = if state.secure { "; Secure" } else { "" };
    let mut res = Redirect::to(next).into_response();
    match HeaderValue::from_str(&format!(
        "{COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age={TTL_SECS}{secure}"
    )) {
        Ok(v) => {
            res.headers_mut().insert(header::SET_COOKIE, v);
            res
        }
        Err(_) => page::failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no session could be made",
        ),
    }
}

/// Ends the session (POST only; the `Origin` check and the SameSite=Strict cookie keep
/// other sites from doing it) and goes to the sign-in page.
pub(crate) async fn sign_out(State(state): State<ConsoleState>, headers: HeaderMap) -> Response {
    if let Some(secret) = cookie(&headers)
        && let Err(e) = state.store.end_session(&secret).await
    {
        return page::store_error(e);
    }
    let mut res = Redirect::to("/sign-in").into_response();
    res.headers_mut()
        .insert(header::SET_COOKIE, clear_cookie(state.secure));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_and_next_paths() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; toolhost_session=ths_x ; b=2"),
        );
        assert_eq!(cookie(&h).as_deref(), Some("ths_x"));
        assert_eq!(cookie(&HeaderMap::new()), None);
        assert_eq!(local_path(Some("/catalog?q=x")), "/catalog?q=x");
        for bad in [
            "//evil.com",
            "https://evil.com",
            "/\\evil.com",
            "evil",
            "/a\nb",
        ] {
            assert_eq!(local_path(Some(bad)), "/", "{bad}");
        }
        assert_eq!(local_path(None), "/");
        assert_eq!(
            path_of("http://127.0.0.1:7878/catalog?q=x#top").as_deref(),
            Some("/catalog?q=x")
        );
        assert_eq!(path_of("nonsense"), None);
    }
}
