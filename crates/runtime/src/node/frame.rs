//! Length-prefixed JSON frames: a 4-byte big-endian length, then that many bytes of JSON.

use std::io;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt};

/// `message` as a frame, serialised in place behind its length.
pub(crate) fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut frame = Vec::with_capacity(256);
    frame.extend_from_slice(&[0; 4]);
    serde_json::to_writer(&mut frame, message)?;
    let len = (frame.len() - 4) as u32;
    frame[..4].copy_from_slice(&len.to_be_bytes());
    Ok(frame)
}

#[derive(Debug)]
pub(crate) enum ReadError {
    Io(io::Error),
    TooLarge(usize),
    Malformed(String),
}

/// Reads one frame; `Ok(None)` at a clean end of stream. A frame longer than `max` is a
/// protocol violation: the worker's own caps keep honest frames well below it.
/// The frame's JSON must be a `T`; anything else is `Malformed`.
pub(crate) async fn read<R: AsyncRead + Unpin, T: DeserializeOwned>(
    r: &mut R,
    max: usize,
) -> Result<Option<T>, ReadError> {
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
    use serde_json::{Value, json};

    fn encode(v: &Value) -> Vec<u8> {
        super::encode(v).unwrap()
    }

    #[tokio::test]
    async fn round_trips_and_rejects_oversized_frames() {
        let mut bytes = encode(&json!({"type": "ready"}));
        bytes.extend(encode(&json!({"n": 1})));
        let mut r = bytes.as_slice();
        assert_eq!(
            read::<_, Value>(&mut r, 100).await.unwrap(),
            Some(json!({"type": "ready"}))
        );
        assert_eq!(
            read::<_, Value>(&mut r, 100).await.unwrap(),
            Some(json!({"n": 1}))
        );
        assert!(read::<_, Value>(&mut r, 100).await.unwrap().is_none());
        let big = encode(&json!({"x": "y".repeat(200)}));
        assert!(matches!(
            read::<_, Value>(&mut big.as_slice(), 100).await,
            Err(ReadError::TooLarge(_))
        ));
        let bad = [0, 0, 0, 2, b'{', b'x'];
        assert!(matches!(
            read::<_, Value>(&mut bad.as_slice(), 100).await,
            Err(ReadError::Malformed(_))
        ));
    }
}
