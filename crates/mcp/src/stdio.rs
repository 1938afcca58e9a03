//! `toolhost mcp`: one MCP session on stdin/stdout.

use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// Longest JSON-RPC line accepted on stdin; a longer one is answered with a parse error
/// and dropped without being buffered whole.
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Serves one session until the client closes stdin or `stop` is cancelled. Calls still
/// running then are cancelled at once (a client that closed stdin will read no result),
/// and given the runtime's grace period to run their abort handlers.
pub async fn serve_stdio(
    server: McpServer,
    stop: CancellationToken,
) -> Result<(), rmcp::service::ServerInitializeError> {
    let session = server.session();
    let gone = session.session_token();
    let (stdin, stdout) = crate::std_streams::std_streams();
    let stdin = EofSignal {
        inner: stdin,
        eof: gone.clone(),
    };
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new(stdin, stdout)
        .with_max_line_length(MAX_LINE);
    let running = session.serve_with_ct(transport, stop.child_token()).await?;
    let ended = tokio::select! {
        r = running.waiting() => Some(r),
        () = stop.cancelled() => None,
    };
    gone.cancel();
    tracing::debug!(?ended, "stdio session ended");
    server.settle_abandoned().await;
    Ok(())
}

/// Cancels `eof` when the client closes its end of stdin.
struct EofSignal<R> {
    inner: R,
    eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(r) = &poll
            && (r.is_err() || buf.filled().len() == before)
        {
            self.eof.cancel();
        }
        poll
    }
}
