//! Rendering pages and errors, and the headers every answer carries.

use askama::Template;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::assets;

/// A page or an error page, as a response.
pub(crate) fn html<T: Template>(status: StatusCode, page: &T) -> Response {
    match page.render() {
        Ok(body) => (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
        Err(e) => {
            tracing::error!("console: a page could not be rendered: {e}");
            failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page could not be rendered",
            )
        }
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    reason: &'a str,
    message: &'a str,
    css: &'a str,
}

/// A plain error page (no navigation: it may be shown to someone not signed in).
pub(crate) fn failure(status: StatusCode, message: &str) -> Response {
    let page = ErrorPage {
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("Error"),
        message,
        css: assets::css_version(),
    };
    match page.render() {
        Ok(body) => (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
        Err(_) => (status, message.to_string()).into_response(),
    }
}

/// The store failed: logged, and a 503 page that says so without the details.
pub(crate) fn store_error(e: impl std::fmt::Display) -> Response {
    tracing::warn!("console: the store failed: {e}");
    failure(
        StatusCode::SERVICE_UNAVAILABLE,
        "The store did not answer. Try again in a moment; the server's log says more.",
    )
}

pub(crate) async fn not_found() -> Response {
    failure(StatusCode::NOT_FOUND, "There is no page here.")
}

/// Headers on every answer: a strict content security policy (scripts, styles and images
/// from this server only; no inline script or style, no frames), no sniffing, no referrer
/// to other sites, and pages (which show one user's data) never cached.
pub(crate) async fn headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}

/// `text` percent-encoded for a query string.
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
