//! The console's own stylesheet and the vendored scripts, embedded in the binary and
//! served with a year's caching: pages name them with `?v=` and a hash of their content.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

static CSS: &str = include_str!("../assets/console.css");

const JS: &str = "text/javascript; charset=utf-8";

/// The scripts: the vendored ones, and the console's own (one per page that needs more
/// than htmx; each is an ES module that finds its page's elements by `data-` attributes).
static SCRIPTS: &[(&str, &[u8])] = &[
    (
        "htmx.min.js",
        include_bytes!("../assets/vendor/htmx.min.js"),
    ),
    (
        "htmx-ext-sse.min.js",
        include_bytes!("../assets/vendor/htmx-ext-sse.min.js"),
    ),
    ("console.js", include_bytes!("../assets/js/console.js")),
    ("chat.js", include_bytes!("../assets/js/chat.js")),
    ("tokens.js", include_bytes!("../assets/js/tokens.js")),
    (
        "mcp-servers.js",
        include_bytes!("../assets/js/mcp-servers.js"),
    ),
    ("agents.js", include_bytes!("../assets/js/agents.js")),
    (
        "playground.js",
        include_bytes!("../assets/js/playground.js"),
    ),
];

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
    V.get_or_init(|| {
        hash(
            &SCRIPTS
                .iter()
                .flat_map(|(_, b)| b.iter().copied())
                .collect::<Vec<u8>>(),
        )
    })
}

pub(crate) async fn serve(Path(file): Path<String>) -> Response {
    let (kind, body): (&str, &'static [u8]) = if file == "console.css" {
        ("text/css; charset=utf-8", CSS.as_bytes())
    } else {
        match SCRIPTS.iter().find(|(name, _)| *name == file) {
            Some((_, body)) => (JS, body),
            None => return StatusCode::NOT_FOUND.into_response(),
        }
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
