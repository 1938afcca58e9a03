//! Reading a tool's output line by line in bounded memory.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Calls `each(line, dropped)` for every line of `stream`, keeping at most `max_line`
/// bytes of a line (`dropped` counts the rest): a tool that writes gigabytes without a
/// newline costs the host nothing. Ends at end of stream or on a read error.
pub(crate) async fn for_each_line(
    mut stream: impl AsyncRead + Unpin,
    max_line: usize,
    mut each: impl FnMut(String, usize),
) {
    let mut line: Vec<u8> = Vec::new();
    let mut dropped = 0usize;
    let mut buf = [0u8; 8192];
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                each(String::from_utf8_lossy(&line).into_owned(), dropped);
                line.clear();
                dropped = 0;
            } else if line.len() < max_line {
                line.push(b);
            } else {
                dropped += 1;
            }
        }
    }
    if !line.is_empty() {
        each(String::from_utf8_lossy(&line).into_owned(), dropped);
    }
}
