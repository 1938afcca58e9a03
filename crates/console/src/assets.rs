//! The console's own stylesheet and the vendored scripts, embedded in the binary and
//! served with a year's caching: pages name them with `?v=` and a hash of their content.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

static CSS: &str = include_str!("../assets/console.css");
static HTMX: &[u8] = include_bytes!("../assets/vendor/htmx.min.js");
static HTMX_SSE: &[u8] = include_bytes!("../assets/vendor/htmx-ext-sse.min.js");

/// FNV-1a of `bytes`, as 16 hex digits.
fn hash(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}")
}

/// The stylesheet's version, for `?v=`.
pub(crate) fn css_version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| hash(CSS.as_bytes()))
}

/// The scripts' version, for `?v=`.
pub(crate) fn js_version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| hash(&[HTMX, HTMX_SSE].concat()))
}

pub(crate) async fn serve(Path(file): Path<String>) -> Response {
    let (kind, body): (&str, &'static [u8]) = match file.as_str() {
        "console.css" => ("text/css; charset=utf-8", CSS.as_bytes()),
        "htmx.min.js" => ("text/javascript; charset=utf-8", HTMX),
        "htmx-ext-sse.min.js" => ("text/javascript; charset=utf-8", HTMX_SSE),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        body,
    )
        .into_response()
}
