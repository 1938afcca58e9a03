//! Standard input and output as non-blocking streams, whatever the client gave us.
//!
//! Node.js (and so most MCP clients) connects a child's stdio with Unix socket pairs, not
//! pipes. rmcp's `stdio_pipes` only makes FIFOs non-blocking and falls back to Tokio's
//! blocking stdio for anything else, which costs two thread hand-offs per message (one on
//! a blocking-pool thread reading, one writing). For sockets we do the I/O ourselves with
//! `MSG_DONTWAIT`, on our own duplicates of the descriptors: the file descriptions stay
//! blocking, so nothing else that shares them (a child, the parent) sees its mode change.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rustix::fs::FileType;
use rustix::net::{RecvFlags, SendFlags, SocketType};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub(crate) type Reader = Box<dyn AsyncRead + Send + Unpin>;
pub(crate) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Stdin and stdout as streams: our own socket I/O when both are sockets, rmcp's pipe
/// transport (or Tokio's blocking handles) otherwise.
pub(crate) fn std_streams() -> (Reader, Writer) {
    if let Some((read, write)) = socket_pair() {
        return (Box::new(read), Box::new(write));
    }
    let (read, write) = rmcp::transport::stdio_pipes();
    (Box::new(read), Box::new(write))
}

fn socket_pair() -> Option<(Socket, Socket)> {
    let read = Socket::dup(io::stdin().as_fd())?;
    let write = Socket::dup(io::stdout().as_fd())?;
    tracing::debug!("stdio: both ends are sockets; using non-blocking socket I/O");
    Some((read, write))
}

/// One end of a stream socket, read and written without blocking.
struct Socket {
    fd: AsyncFd<OwnedFd>,
}

impl Socket {
    /// A duplicate of `fd` registered with the reactor, if it is a stream socket (a
    /// datagram or sequenced-packet socket would cut messages at our buffer's size).
    fn dup(fd: std::os::fd::BorrowedFd<'_>) -> Option<Self> {
        let stat = rustix::fs::fstat(fd).ok()?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::Socket
            || rustix::net::sockopt::socket_type(fd).ok()? != SocketType::STREAM
        {
            return None;
        }
        let own = rustix::io::fcntl_dupfd_cloexec(fd, 0).ok()?;
        Some(Self {
            fd: toolhost_sandbox::reactor::register(own).ok()?,
        })
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let into = buf.initialize_unfilled();
            match ready.try_io(|fd| Ok(rustix::net::recv(fd, &mut *into, RecvFlags::DONTWAIT)?)) {
                Ok(Ok((n, _))) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut ready = ready!(self.fd.poll_write_ready(cx))?;
            let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
            match ready.try_io(|fd| Ok(rustix::net::send(fd, data, flags)?)) {
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::net::UnixStream;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn reads_and_writes_a_socket_without_changing_its_mode() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let mut socket = Socket::dup(ours.as_fd()).unwrap();
        socket.write_all(b"ping\n").await.unwrap();
        let mut got = [0u8; 5];
        std::io::Read::read_exact(&mut theirs, &mut got).unwrap();
        assert_eq!(&got, b"ping\n");

        std::io::Write::write_all(&mut theirs, b"pong\n").unwrap();
        let mut back = [0u8; 5];
        socket.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"pong\n");

        // The shared file description stays blocking for whoever else holds it.
        let flags = rustix::fs::fcntl_getfl(&ours).unwrap();
        assert!(!flags.contains(rustix::fs::OFlags::NONBLOCK));

        drop(theirs);
        assert_eq!(socket.read(&mut back).await.unwrap(), 0, "end of stream");
    }

    #[tokio::test]
    async fn only_stream_sockets_are_taken() {
        let (read, _write) = rustix::pipe::pipe().unwrap();
        assert!(Socket::dup(read.as_fd()).is_none(), "a pipe");
        let (packets, _other) = std::os::unix::net::UnixDatagram::pair().unwrap();
        assert!(Socket::dup(packets.as_fd()).is_none(), "a datagram socket");
    }
}
