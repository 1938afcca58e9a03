//! A response body that holds something until the body is dropped: which is when the
//! client has it all, or closed the stream before.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use http_body::Frame;

/// `inner`, holding a guard whose drop means "the response is over".
pub(crate) struct HoldingBody<H> {
    inner: Body,
    _held: H,
}

impl<H: Send + Unpin + 'static> HoldingBody<H> {
    pub(crate) fn wrap(inner: Body, held: H) -> Body {
        Body::new(HoldingBody { inner, _held: held })
    }
}

impl<H: Unpin> http_body::Body for HoldingBody<H> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
