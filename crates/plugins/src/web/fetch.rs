//! `web_fetch`: GET a URL through the egress guard, honour robots.txt, convert HTML to
//! Markdown, and return a slice of it with the index to continue from.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_runtime::NativeContext;
use url::Url;

use super::egress::Egress;
use super::robots::Robots;
use super::{WebLoadError, WebSettings};
use toolhost_toolsets::{Annotations, Tool, ToolError, typed_tool};

const DEFAULT_LENGTH: usize = 20_000;
const MAX_LENGTH: usize = 100_000;
const ROBOTS_TTL: Duration = Duration::from_secs(3600);
const ROBOTS_REDIRECTS: usize = 5;

#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// The http or https URL to fetch.
    url: String,
    /// Character position in the converted page to start at; use the `next_start_index`
    /// of a previous call to read on.
    #[serde(default)]
    start_index: usize,
    /// Most characters to return (default 20000, at most 100000).
    #[serde(default)]
    max_length: Option<usize>,
    /// Return the page's source instead of converting HTML to Markdown.
    #[serde(default)]
    raw: bool,
}

pub(crate) struct Fetcher {
    client: reqwest::Client,
    egress: Egress,
    settings: WebSettings,
    robots: Mutex<HashMap<String, (Instant, Robots)>>,
}

/// Resolves host names through the egress guard: the connector only ever sees checked
/// addresses.
struct GuardedResolver(Egress);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let egress = self.0;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = egress.resolve(&host, 0).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

impl Fetcher {
    pub(crate) fn new(settings: WebSettings) -> Result<Arc<Fetcher>, WebLoadError> {
        // reqwest is built without a bundled crypto provider: use ring's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let egress = Egress {
            allow_private: settings.allow_private,
            allow_loopback: settings.allow_loopback,
        };
        let client = reqwest::Client::builder()
            .user_agent(settings.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(settings.timeout)
            .connect_timeout(Duration::from_secs(10))
            .dns_resolver(Arc::new(GuardedResolver(egress)))
            .build()
            .map_err(WebLoadError::Client)?;
        Ok(Arc::new(Fetcher {
            client,
            egress,
            settings,
            robots: Mutex::new(HashMap::new()),
        }))
    }

    async fn fetch(&self, args: FetchArgs, ctx: &NativeContext) -> Result<Value, ToolError> {
        let url = Url::parse(args.url.trim())
            .map_err(|e| ToolError::InvalidArguments(format!("not a URL: {e}")))?;
        // Redirects are followed here, not by reqwest, so that every hop passes the same
        // checks as the first URL: the egress guard and the target site's robots.txt.
        let mut at = url.clone();
        let mut hops = 0;
        // One deadline for the fetch, redirects included: each hop gets what is left.
        let now = Instant::now();
        let deadline = now
            .checked_add(self.settings.timeout)
            .unwrap_or(now + Duration::from_secs(365 * 24 * 3600));
        let response = loop {
            self.admit(&at).await.map_err(|e| match e {
                ToolError::Refused(why) if hops > 0 => {
                    ToolError::Refused(format!("redirect to {at}: {why}"))
                }
                other => other,
            })?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ToolError::Failed(format!(
                    "{url} timed out after {:?} (at {at})",
                    self.settings.timeout
                )));
            }
            ctx.progress(format!("fetching {at}"));
            let response = self
                .client
                .get(at.clone())
                .timeout(left)
                .header(
                    reqwest::header::ACCEPT,
                    "text/html, text/plain;q=0.9, */*;q=0.5",
                )
                .send()
                .await
                .map_err(|e| ToolError::Failed(describe(&e)))?;
            let status = response.status();
            if !status.is_redirection() {
                break response;
            }
            let Some(location) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
            else {
                break response;
            };
            let next = at.join(location).map_err(|_| {
                ToolError::Failed(format!(
                    "{at} answered {status} with an unusable Location {location:?}"
                ))
            })?;
            hops += 1;
            if hops > self.settings.max_redirects {
                return Err(ToolError::Failed(format!(
                    "{url} redirects more than {} times (last to {next})",
                    self.settings.max_redirects
                )));
            }
            at = next;
        };
        let status = response.status();
        let final_url = response.url().to_string();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let (body, cut) = read_capped(response, self.settings.max_bytes).await?;
        if !status.is_success() {
            let snippet: String = body.chars().take(300).collect();
            return Err(ToolError::Failed(format!(
                "{final_url} answered {status}: {snippet}"
            )));
        }
        let is_html = content_type.contains("html")
            || (content_type.is_empty() && body.trim_start().starts_with('<'));
        let text = if is_html && !args.raw {
            html_to_markdown(&body)
        } else {
            body
        };
        Ok(slice(
            &text,
            &args,
            json!({
                "url": url.as_str(),
                "final_url": final_url,
                "status": status.as_u16(),
                "content_type": content_type,
                "body_cut_at_bytes": cut.then_some(self.settings.max_bytes),
            }),
        ))
    }

    /// Refuses a URL the egress guard or its site's robots.txt does not allow.
    async fn admit(&self, url: &Url) -> Result<(), ToolError> {
        self.egress.check_url(url).map_err(ToolError::Refused)?;
        // Say so plainly when the host itself is refused (the connector checks it again,
        // on the addresses it actually connects to).
        if let Some(url::Host::Domain(host)) = url.host() {
            let port = url.port_or_known_default().unwrap_or(80);
            self.egress.resolve(host, port).await.map_err(|e| {
                if e.starts_with("refused") {
                    ToolError::Refused(e.trim_start_matches("refused: ").to_string())
                } else {
                    ToolError::Failed(e)
                }
            })?;
        }
        if self.settings.respect_robots {
            let robots = self.robots_for(url).await;
            let path = match url.query() {
                Some(q) => format!("{}?{q}", url.path()),
                None => url.path().to_string(),
            };
            if !robots.allows(&path) {
                return Err(ToolError::Refused(format!(
                    "robots.txt of {} disallows {path} for this agent",
                    url.origin().ascii_serialization()
                )));
            }
        }
        Ok(())
    }

    async fn robots_for(&self, url: &Url) -> Robots {
        let origin = url.origin().ascii_serialization();
        if let Ok(cache) = self.robots.lock()
            && let Some((at, robots)) = cache.get(&origin)
            && at.elapsed() < ROBOTS_TTL
        {
            return robots.clone();
        }
        let token = self
            .settings
            .user_agent
            .split(['/', ' '])
            .next()
            .unwrap_or("Toolhost")
            .to_string();
        let robots = match self.get_robots_txt(&origin).await {
            Some(r) if r.status().is_success() => match read_capped(r, 512 * 1024).await {
                Ok((text, _)) => Robots::parse(&text, &token),
                Err(_) => Robots::disallow_all(),
            },
            // RFC 9309: a 4xx means there are no rules; anything else, assume the worst.
            Some(r) if r.status().is_client_error() => Robots::allow_all(),
            _ => Robots::disallow_all(),
        };
        if let Ok(mut cache) = self.robots.lock() {
            if cache.len() > 1024 {
                cache.clear();
            }
            cache.insert(origin, (Instant::now(), robots.clone()));
        }
        robots
    }

    /// GETs `origin/robots.txt`, following up to five redirects (RFC 9309 asks for at
    /// least five) to addresses the egress guard allows. `None` if it cannot be had.
    async fn get_robots_txt(&self, origin: &str) -> Option<reqwest::Response> {
        let mut at = Url::parse(&format!("{origin}/robots.txt")).ok()?;
        for _ in 0..=ROBOTS_REDIRECTS {
            let response = self.client.get(at.clone()).send().await.ok()?;
            if !response.status().is_redirection() {
                return Some(response);
            }
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)?
                .to_str()
                .ok()?;
            at = at.join(location).ok()?;
            self.egress.check_url(&at).ok()?;
        }
        None
    }
}

/// The whole error chain: reqwest hides the interesting part (our refusal) in sources.
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
) -> Result<(String, bool), ToolError> {
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ToolError::Failed(describe(&e)))?
    {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok((String::from_utf8_lossy(&body).into_owned(), cut))
}

fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "svg", "iframe", "head", "nav", "footer",
        ])
        .build();
    match converter.convert(html) {
        Ok(md) => md.trim().to_string(),
        Err(_) => html.to_string(),
    }
}

/// `{content: [text], structuredContent: {...}}` with the requested slice.
fn slice(text: &str, args: &FetchArgs, mut meta: Value) -> Value {
    let total = text.chars().count();
    let len = args
        .max_length
        .unwrap_or(DEFAULT_LENGTH)
        .clamp(1, MAX_LENGTH);
    let start = args.start_index.min(total);
    let part: String = text.chars().skip(start).take(len).collect();
    let end = start + part.chars().count();
    let next = (end < total).then_some(end);
    let mut shown = part;
    if start >= total && total > 0 {
        shown = format!("[start_index {start} is past the end: the page has {total} characters]");
    } else if let Some(next) = next {
        shown.push_str(&format!(
            "\n\n[{} more characters: call web_fetch again with start_index={next} to read on]",
            total - end
        ));
    }
    if let Value::Object(m) = &mut meta {
        m.insert("start_index".into(), json!(start));
        m.insert("total_length".into(), json!(total));
        m.insert("next_start_index".into(), json!(next));
    }
    json!({ "content": [{ "type": "text", "text": shown }], "structuredContent": meta })
}

pub(crate) fn tool(fetcher: Arc<Fetcher>) -> Tool {
    typed_tool(
        "web_fetch",
        "Fetch a web page (http or https) and return its content as Markdown. Long pages come in slices: call again with the returned start_index to read on. Private and local network addresses are refused, and robots.txt is honoured.",
        Annotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(true),
            timeout: Some(Duration::from_secs(60)),
        },
        move |args: FetchArgs, ctx: NativeContext| {
            let fetcher = Arc::clone(&fetcher);
            async move {
                let mut watch = ctx.clone();
                tokio::select! {
                    r = fetcher.fetch(args, &ctx) => r,
                    _ = watch.cancelled() => Err(ToolError::Cancelled),
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_with_a_continuation_index() {
        let text = "abcdefghij";
        let args = |start, len| FetchArgs {
            url: String::new(),
            start_index: start,
            max_length: Some(len),
            raw: false,
        };
        let v = slice(text, &args(0, 4), json!({}));
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .starts_with("abcd\n\n[6 more")
        );
        assert_eq!(v["structuredContent"]["next_start_index"], 4);
        let v = slice(text, &args(8, 4), json!({}));
        assert_eq!(v["content"][0]["text"], "ij");
        assert_eq!(v["structuredContent"]["next_start_index"], Value::Null);
        let v = slice(text, &args(50, 4), json!({}));
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .contains("past the end")
        );
    }

    #[test]
    fn converts_html_without_scripts() {
        let md = html_to_markdown(
            "<html><head><title>t</title><script>evil()</script></head><body><h1>Hi</h1><p>A <a href=\"/x\">link</a>.</p></body></html>",
        );
        assert!(md.contains("# Hi") && md.contains("[link](/x)"), "{md}");
        assert!(!md.contains("evil"), "{md}");
    }
}
