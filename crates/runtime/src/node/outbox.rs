//! Sending frames to a worker without a task hand-off in the common case.
//!
//! A frame is written straight from the sending task when the socket takes it whole;
//! otherwise it (or its rest) is queued for a writer task. Once anything is queued, later
//! frames queue behind it, so frames never interleave or reorder.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::Notify;

pub(crate) struct Outbox {
    half: Arc<OwnedWriteHalf>,
    queue: Arc<Mutex<VecDeque<Vec<u8>>>>,
    ready: Arc<Notify>,
}

impl Outbox {
    pub(super) fn new(half: OwnedWriteHalf) -> Outbox {
        let outbox = Outbox {
            half: Arc::new(half),
            queue: Arc::new(Mutex::new(VecDeque::new())),
            ready: Arc::new(Notify::new()),
        };
        let (half, queue, ready) = (
            Arc::clone(&outbox.half),
            Arc::clone(&outbox.queue),
            Arc::clone(&outbox.ready),
        );
        tokio::spawn(async move {
            loop {
                ready.notified().await;
                // The front stays queued until fully written, so senders keep queueing.
                while let Some(front) = queue.lock().ok().and_then(|q| q.front().cloned()) {
                    if write_all(&half, &front).await.is_err() {
                        if let Ok(mut q) = queue.lock() {
                            q.clear();
                        }
                        return;
                    }
                    if let Ok(mut q) = queue.lock() {
                        q.pop_front();
                    }
                }
            }
        });
        outbox
    }

    pub(super) fn send(&self, frame: Vec<u8>) {
        let Ok(mut queue) = self.queue.lock() else {
            return;
        };
        if queue.is_empty() {
            match self.half.try_write(&frame) {
                Ok(n) if n == frame.len() => return,
                Ok(n) => queue.push_back(frame[n..].to_vec()),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => queue.push_back(frame),
                // The worker is gone; its reader reports that.
                Err(_) => return,
            }
        } else {
            queue.push_back(frame);
        }
        drop(queue);
        self.ready.notify_one();
    }
}

async fn write_all(half: &OwnedWriteHalf, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        half.writable().await?;
        match half.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
