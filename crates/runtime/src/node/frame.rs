//! Length-prefixed JSON frames: a 4-byte big-endian length, then that many bytes of JSON.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

pub(crate) fn encode(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body.as_bytes());
    frame
}

#[derive(Debug)]
pub(crate) enum ReadError {
    Io(io::Error),
    TooLarge(usize),
    Malformed(String),
}

/// Reads one frame; `Ok(None)` at a clean end of stream. A frame longer than `max` is a
/// protocol violation: the worker's own caps keep honest frames well below it.
pub(crate) async fn read<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
) -> Result<Option<Value>, ReadError> {
    let mut head = [0u8; 4];
    match r.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(ReadError::Io(e)),
    }
    let len = u32::from_be_bytes(head) as usize;
    if len > max {
        return Err(ReadError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).await.map_err(ReadError::Io)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| ReadError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn round_trips_and_rejects_oversized_frames() {
        let mut bytes = encode(&json!({"type": "ready"}));
        bytes.extend(encode(&json!({"n": 1})));
        let mut r = bytes.as_slice();
        assert_eq!(
            read(&mut r, 100).await.unwrap(),
            Some(json!({"type": "ready"}))
        );
        assert_eq!(read(&mut r, 100).await.unwrap(), Some(json!({"n": 1})));
        assert!(read(&mut r, 100).await.unwrap().is_none());
        let big = encode(&json!({"x": "y".repeat(200)}));
        assert!(matches!(
            read(&mut big.as_slice(), 100).await,
            Err(ReadError::TooLarge(_))
        ));
        let bad = [0, 0, 0, 2, b'{', b'x'];
        assert!(matches!(
            read(&mut bad.as_slice(), 100).await,
            Err(ReadError::Malformed(_))
        ));
    }
}
