//! The MCP server proper: an rmcp [`ServerHandler`] over a [`ToolSource`] and the runtime.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    CustomRequest, CustomResult, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::{CancellationToken, DropGuard};
use toolhost_host::store::{CallLog, TracingCallLog};
use toolhost_host::{CallTrace, Caller, Hints, Host, Scope, ToolInfo, ToolSource};
use toolhost_runtime::{CallEvent, Runtime, ToolResult};

use crate::http::StreamClosed;

/// Tools per `tools/list` page. Large enough that most catalogs fit on one page (clients
/// that ignore `nextCursor` still see everything), small enough to bound one response.
pub(crate) const PAGE_SIZE: usize = 500;

/// State shared by every session of one server.
struct Shared {
    source: Arc<dyn ToolSource>,
    runtime: Runtime,
    /// The caller when the transport names none (stdio, or HTTP without tokens).
    default_caller: Caller,
    /// When the last call was abandoned (client gone or cancelled), in ms since `epoch`,
    /// so that shutdown can give its abort handler the grace period to run.
    epoch: Instant,
    last_abandoned_ms: AtomicU64,
    in_flight: AtomicUsize,
    call_log: Arc<dyn CallLog>,
}

/// Serves a [`ToolSource`] over MCP. rmcp runs one handler per session: make each with
/// [`McpServer::session`]; they share the tools, the runtime and the default caller.
pub struct McpServer {
    shared: Arc<Shared>,
    /// Ends this session's calls and `list_changed` forwarding; cancelled when the handler
    /// is dropped (the session is over) or by a transport that learns of the end first.
    session_end: CancellationToken,
    _session_guard: DropGuard,
}

impl McpServer {
    /// Serves `source` with `host`'s runtime, default caller and call log.
    pub fn for_host(host: &Host, source: Arc<dyn ToolSource>) -> Self {
        McpServer::with_call_log(
            source,
            host.runtime().clone(),
            host.default_caller().clone(),
            host.call_log(),
        )
    }

    /// Serves `source` with `runtime`; `default_caller` is whom requests without an
    /// authenticated caller act as. Calls are logged by tracing.
    pub fn new(source: Arc<dyn ToolSource>, runtime: Runtime, default_caller: Caller) -> Self {
        McpServer::with_call_log(source, runtime, default_caller, Arc::new(TracingCallLog))
    }

    fn with_call_log(
        source: Arc<dyn ToolSource>,
        runtime: Runtime,
        default_caller: Caller,
        call_log: Arc<dyn CallLog>,
    ) -> Self {
        McpServer::from_shared(Arc::new(Shared {
            source,
            runtime,
            default_caller,
            epoch: Instant::now(),
            last_abandoned_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            call_log,
        }))
    }

    fn from_shared(shared: Arc<Shared>) -> Self {
        let session_end = CancellationToken::new();
        McpServer {
            shared,
            _session_guard: session_end.clone().drop_guard(),
            session_end,
        }
    }

    /// A handler for a new session, sharing tools, runtime and callers with this one.
    pub fn session(&self) -> McpServer {
        McpServer::from_shared(Arc::clone(&self.shared))
    }

    /// Cancelled when this session ends: its calls are cancelled and its `list_changed`
    /// forwarding stops. A transport that learns of the end first (stdin closed) cancels it.
    pub(crate) fn session_token(&self) -> CancellationToken {
        self.session_end.clone()
    }

    /// At shutdown, after the sessions were ended: waits (a little) for their calls to let
    /// go, then until every abandoned call has had the runtime's cancel grace period to run
    /// its abort handler (its processes are killed after that).
    pub async fn settle_abandoned(&self) {
        let until = Instant::now() + Duration::from_secs(2);
        while self.shared.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let at = self.shared.last_abandoned_ms.load(Ordering::Relaxed);
        if at == 0 {
            return;
        }
        let grace = self.shared.runtime.config().cancel_grace + Duration::from_millis(200);
        let until = self.shared.epoch + Duration::from_millis(at) + grace;
        tokio::time::sleep_until(until.into()).await;
    }

    /// Where its calls are recorded (the HTTP layer records the calls it refuses).
    pub(crate) fn call_log(&self) -> Arc<dyn CallLog> {
        Arc::clone(&self.shared.call_log)
    }

    /// The caller a request comes from: the one HTTP authentication attached, else the
    /// default.
    fn caller(&self, extensions: &rmcp::model::Extensions) -> Caller {
        extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Caller>())
            .unwrap_or(&self.shared.default_caller)
            .clone()
    }
}

/// Counts a call in flight and notes when it was abandoned; its [`CallTrace`] records it
/// in the call log however it ends.
struct CallGuard<'a> {
    shared: &'a Shared,
    trace: CallTrace,
}

impl<'a> CallGuard<'a> {
    fn new(shared: &'a Shared, trace: CallTrace) -> Self {
        shared.in_flight.fetch_add(1, Ordering::Relaxed);
        CallGuard { shared, trace }
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.shared.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.trace.finished() {
            let ms = self.shared.epoch.elapsed().as_millis().max(1);
            let ms = u64::try_from(ms).unwrap_or(u64::MAX);
            self.shared
                .last_abandoned_ms
                .fetch_max(ms, Ordering::Relaxed);
        }
    }
}

/// One page of `tools`, which are ordered by name: those after `cursor` (the name of the
/// last tool of the previous page), and the cursor of the next page if any.
pub(crate) fn page(
    tools: Vec<ToolInfo>,
    cursor: Option<&str>,
    size: usize,
) -> (Vec<ToolInfo>, Option<String>) {
    let start = match cursor {
        Some(c) => tools.partition_point(|t| t.name.as_str() <= c),
        None => 0,
    };
    let mut rest = tools.into_iter().skip(start);
    let items: Vec<ToolInfo> = rest.by_ref().take(size).collect();
    let next = match rest.next() {
        Some(_) => items.last().map(|t| t.name.clone()),
        None => None,
    };
    (items, next)
}

fn mcp_tool(t: ToolInfo) -> Tool {
    let tool = Tool::new(t.name, t.description, t.input_schema).with_title(t.title);
    match t.hints {
        Some(h) => tool.with_annotations(annotations(h)),
        None => tool,
    }
}

/// A caller whose credential lacks `scope` gets an error naming it (never an empty list or
/// "unknown tool", which would send the model looking elsewhere).
fn missing_scope(caller: &Caller, scope: Scope) -> Result<(), ErrorData> {
    if caller.may(scope) {
        return Ok(());
    }
    Err(ErrorData::invalid_request(
        format!(
            "insufficient scope: this token lacks `{}`; ask for a token that has it",
            scope.as_str()
        ),
        None,
    ))
}

/// Hints are what MCP calls tool annotations.
fn annotations(h: Hints) -> ToolAnnotations {
    ToolAnnotations::from_raw(None, h.read_only, h.destructive, h.idempotent, h.open_world)
}

/// The runtime's result as MCP's. Content blocks are the runtime's normalised MCP blocks;
/// one that is not valid MCP becomes an error result saying so rather than a protocol error.
fn mcp_result(result: ToolResult) -> CallToolResult {
    let blocks: Result<Vec<ContentBlock>, _> = result.content.into_iter().map(block).collect();
    let mut r = match blocks {
        Ok(blocks) if result.is_error => CallToolResult::error(blocks),
        Ok(blocks) => CallToolResult::success(blocks),
        Err(e) => {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool returned content that is not valid MCP: {e}"
            ))]);
        }
    };
    r.structured_content = result.structured_content;
    r
}

/// One content block as MCP's. A plain text block (most results) is built directly;
/// anything else goes through rmcp's deserialiser, which checks it.
fn block(value: Value) -> Result<ContentBlock, serde_json::Error> {
    match value {
        Value::Object(mut map)
            if map.len() == 2 && map.get("type").and_then(Value::as_str) == Some("text") =>
        {
            match map.remove("text") {
                Some(Value::String(text)) => Ok(ContentBlock::text(text)),
                other => {
                    if let Some(other) = other {
                        map.insert("text".into(), other);
                    }
                    serde_json::from_value(Value::Object(map))
                }
            }
        }
        other => serde_json::from_value(other),
    }
}

/// The invalid-params error for a known method whose params are malformed.
fn malformed(method: &str, params: Option<Value>) -> Option<ErrorData> {
    let params = params.unwrap_or(Value::Null);
    let problem = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "tools/list" => serde_json::from_value::<Option<PaginatedRequestParams>>(params).err(),
        _ => return None,
    };
    let detail = problem.map_or_else(|| "malformed params".to_string(), |e| e.to_string());
    Some(ErrorData::invalid_params(
        format!("invalid params for {method}: {detail}"),
        None,
    ))
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context.extensions);
        missing_scope(&caller, Scope::ToolsRead)?;
        let tools = self.shared.source.tools(&caller).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (items, next) = page(tools, cursor, PAGE_SIZE);
        // The list is per user and changes whenever a tool folder does: clients may keep it
        // privately, and should ask again (list_changed tells them when it matters).
        let mut result = ListToolsResult::with_all_items(items.into_iter().map(mcp_tool).collect())
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private);
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut caller = self.caller(&context.extensions);
        // An agent's endpoint: its calls are the agent's.
        if caller.agent.is_none() {
            caller.agent = self.shared.source.agent().map(str::to_string);
        }
        // rmcp's own request logs are off (they hold the arguments, secrets included): this
        // line and the runtime's (arguments redacted) take their place.
        tracing::debug!(user = %caller.user(), tool = %request.name, "tools/call");
        let surface = match context.extensions.get::<axum::http::request::Parts>() {
            Some(_) => "mcp-http",
            None => "mcp-stdio",
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let denied = |why: &str| {
            CallTrace::deny(&*self.shared.call_log, &caller, &request.name, surface, why);
        };
        if let Err(e) = missing_scope(&caller, Scope::ToolsCall) {
            denied(&e.message);
            return Err(e);
        }
        let Some(target) = self.shared.source.resolve(&caller, &request.name).await else {
            let message = format!("unknown tool: {}", request.name);
            denied(&message);
            return Err(ErrorData::invalid_params(message, None));
        };
        let progress_token = context.meta.get_progress_token();
        let stream_closed = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<StreamClosed>())
            .map(|s| s.0.clone())
            .unwrap_or_default();
        let trace = CallTrace::begin(
            Arc::clone(&self.shared.call_log),
            &caller,
            &request.name,
            surface,
            &args,
            &target,
        );
        let mut guard = CallGuard::new(&self.shared, trace);
        // Dropping `call` (on any of these ends) fires the tool's abort signal and kills it
        // after the grace period.
        let mut call = self.shared.runtime.call(target.request(args, caller.space));
        let mut gone = std::pin::pin!(async {
            tokio::select! {
                () = context.ct.cancelled() => "cancelled",
                () = stream_closed.cancelled() => "the client closed the stream",
                () = self.session_end.cancelled() => "the session ended",
            }
        });
        let result = loop {
            let event = tokio::select! {
                event = call.next() => event,
                why = &mut gone => return Err(ErrorData::internal_error(why, None)),
            };
            match event {
                Some(CallEvent::Progress(p)) => {
                    let Some(token) = &progress_token else {
                        continue;
                    };
                    let text = p.text();
                    let mut param = ProgressNotificationParam::new(token.clone(), p.seq as f64);
                    if !text.is_empty() {
                        param.message = Some(text);
                    }
                    // Sending waits for a slow client (the runtime coalesces progress
                    // meanwhile), and forever for a session that stopped sending.
                    tokio::select! {
                        // A client that stopped listening still gets its result.
                        _ = context.peer.notify_progress(param) => {}
                        why = &mut gone => return Err(ErrorData::internal_error(why, None)),
                    }
                }
                Some(CallEvent::Done(r)) => break r,
                None => break ToolResult::error("the call ended without a result"),
            }
        };
        guard.trace.finish(&result);
        Ok(mcp_result(result).into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // rmcp hands us known methods whose params did not parse as a custom request;
        // for those the client needs "invalid params" and what is wrong, not "no such method".
        Err(
            malformed(&request.method, request.params).unwrap_or_else(|| {
                let message = format!("method not found: {}", request.method);
                ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None)
            }),
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A 2025-11-25 (or older) session: it hears about list changes as plain
        // notifications for as long as it lasts.
        let caller = self.caller(&context.extensions);
        let mut changes = self.shared.source.changes();
        let end = self.session_end.clone();
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    () = end.cancelled() => break,
                    c = changes.recv() => c,
                };
                match change {
                    Ok(c) if !c.concerns(&caller) => continue,
                    Ok(_) | Err(RecvError::Lagged(_)) => {
                        if peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    Err(RecvError::Closed) => break,
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // The 2026-07-28 way: the client holds a `subscriptions/listen` request open.
        let caller = self.caller(&context.request_context().extensions);
        let mut changes = self.shared.source.changes();
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                () = self.session_end.cancelled() => return Ok(()),
                c = changes.recv() => c,
            };
            match change {
                Ok(c) if !c.concerns(&caller) => {}
                Ok(_) | Err(RecvError::Lagged(_)) => {
                    if context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
                Err(RecvError::Closed) => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn tools(names: &[&str]) -> Vec<ToolInfo> {
        names
            .iter()
            .map(|n| ToolInfo {
                name: n.to_string(),
                title: n.to_string(),
                description: String::new(),
                input_schema: Arc::default(),
                hints: None,
            })
            .collect()
    }

    fn names(t: &[ToolInfo]) -> Vec<&str> {
        t.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn content_blocks_are_what_rmcp_would_read() {
        // The direct path for plain text blocks must agree with rmcp's deserialiser.
        for block_json in [
            json!({"type": "text", "text": "hi"}),
            json!({"text": "", "type": "text"}),
            json!({"type": "text", "text": "hi", "annotations": {"priority": 0.5}}),
            json!({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
        ] {
            let expected: ContentBlock = serde_json::from_value(block_json.clone()).unwrap();
            assert_eq!(block(block_json).unwrap(), expected);
        }
        for bad in [
            json!({"type": "text", "text": 5}),
            json!({"type": "text", "txt": "hi"}),
            json!({"type": "nope"}),
        ] {
            assert!(block(bad).is_err());
        }
    }

    #[test]
    fn pages_follow_names_and_survive_changes_between_pages() {
        let all = tools(&["a", "b", "c", "d", "e"]);
        let (p1, c1) = page(all.clone(), None, 2);
        assert_eq!((names(&p1), c1.as_deref()), (vec!["a", "b"], Some("b")));
        let (p2, c2) = page(all.clone(), c1.as_deref(), 2);
        assert_eq!((names(&p2), c2.as_deref()), (vec!["c", "d"], Some("d")));
        let (p3, c3) = page(all, c2.as_deref(), 2);
        assert_eq!((names(&p3), c3), (vec!["e"], None));
        // "b" was removed and "bb" added after page one: nothing is skipped or repeated.
        let (p2, _) = page(tools(&["a", "bb", "c", "d"]), Some("b"), 2);
        assert_eq!(names(&p2), vec!["bb", "c"]);
        let (exact, next) = page(tools(&["a", "b"]), None, 2);
        assert_eq!((exact.len(), next), (2, None));
    }

    #[test]
    fn malformed_params_of_known_methods_are_invalid_params() {
        let e = malformed("tools/call", Some(serde_json::json!({"name": 5}))).unwrap();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(
            e.message.starts_with("invalid params for tools/call: "),
            "{e:?}"
        );
        assert!(malformed("foo/bar", None).is_none());
    }

    #[test]
    fn tool_errors_stay_results() {
        let r = mcp_result(ToolResult::error("boom"));
        assert_eq!(r.is_error, Some(true));
        let mut odd = ToolResult::text("x");
        odd.content = vec![serde_json::json!({"type": "nonsense"})];
        let r = mcp_result(odd);
        assert_eq!(r.is_error, Some(true));
    }
}
