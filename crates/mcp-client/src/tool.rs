//! One tool of an MCP server, called through the runtime like any native tool: progress
//! notifications come back as progress, cancelling the call sends `notifications/cancelled`.

use std::sync::{Arc, Weak};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;
use toolhost_runtime::{NativeContext, NativeOutput, NativeTool, ToolError};

use super::connect::Connection;

pub(crate) struct McpTool {
    /// `server__tool`.
    pub(crate) name: String,
    /// The name the server knows it by.
    pub(crate) remote: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
    /// The connection it was listed on; gone when that connection was replaced.
    pub(crate) connection: Weak<Connection>,
}

impl NativeTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn call(&self, args: Value, ctx: NativeContext) -> NativeOutput {
        let connection = self.connection.upgrade();
        let remote = self.remote.clone();
        Box::pin(async move {
            let connection = connection.ok_or_else(|| ToolError::failed(
                "the connection to this MCP server was lost: the tool is back once the server answers again",
            ))?;
            call(&connection, &remote, args, ctx).await
        })
    }
}

async fn call(
    connection: &Arc<Connection>,
    remote: &str,
    args: Value,
    mut ctx: NativeContext,
) -> Result<Value, ToolError> {
    let params: CallToolRequestParams =
        serde_json::from_value(serde_json::json!({ "name": remote, "arguments": args }))
            .map_err(|e| ToolError::InvalidArguments(format!("cannot build the request: {e}")))?;
    let peer = connection.service.peer().clone();
    let handle = peer
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .map_err(|e| ToolError::failed(format!("the MCP server is unreachable: {e}")))?;
    let (id, token) = (handle.id.clone(), handle.progress_token.clone());
    if let Ok(mut routes) = connection.routes.lock() {
        routes.insert(token.clone(), (ctx.clone(), f64::NEG_INFINITY));
    }
    let outcome = tokio::select! {
        r = handle.await_response() => Some(r),
        _ = ctx.cancelled() => None,
    };
    if let Ok(mut routes) = connection.routes.lock() {
        routes.remove(&token);
    }
    match outcome {
        None => {
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled by the caller".into()),
                ))
                .await;
            Err(ToolError::Cancelled)
        }
        Some(Ok(ServerResult::CallToolResult(result))) => {
            serde_json::to_value(result).map_err(ToolError::failed)
        }
        Some(Ok(_)) => Err(ToolError::failed(
            "the MCP server sent an unexpected response",
        )),
        Some(Err(e)) => Err(ToolError::failed(format!("the MCP server failed: {e}"))),
    }
}
