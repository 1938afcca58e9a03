//! What a running tool reports about one call (progress, log lines, the outcome), on its
//! way to the loop that runs the call.
//!
//! That loop makes progress only while the call's caller polls it, and a caller may fall
//! behind (an MCP client that reads slowly, say) while the tool floods. So the queue is
//! bounded by what it holds, not by what was sent: past [`MAX_PROGRESS`] waiting updates, a
//! new update replaces the newest waiting one (which it supersedes), counting how many it
//! stands for; past [`MAX_LOGS`] waiting log lines, new lines are dropped and counted, and
//! the count is reported in their place. The outcome (result, error, death) is never
//! dropped, and the last update always arrives.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::node::WorkerEvent;

/// Progress updates waiting for the call loop.
pub(crate) const MAX_PROGRESS: usize = 64;
/// Log lines waiting for the call loop.
pub(crate) const MAX_LOGS: usize = 256;

/// An event, and for a progress update how many updates the tool sent that it stands for
/// (1, or more when it replaced waiting ones).
pub(crate) struct Received {
    pub event: WorkerEvent,
    pub stands_for: u64,
}

#[derive(Default)]
struct State {
    queue: VecDeque<(WorkerEvent, u64)>,
    progress: usize,
    logs: usize,
    dropped_logs: u64,
    senders: usize,
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    ready: Notify,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A call's event queue: any number of senders, one receiver.
pub(crate) fn channel() -> (EventSender, EventReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            senders: 1,
            ..State::default()
        }),
        ready: Notify::new(),
    });
    (EventSender(Arc::clone(&shared)), EventReceiver(shared))
}

pub(crate) struct EventSender(Arc<Shared>);

impl Clone for EventSender {
    fn clone(&self) -> Self {
        self.0.state().senders += 1;
        EventSender(Arc::clone(&self.0))
    }
}

impl Drop for EventSender {
    fn drop(&mut self) {
        self.0.state().senders -= 1;
        self.0.ready.notify_one();
    }
}

impl EventSender {
    /// Queues `event`; `false` when the receiver is gone (nobody waits for the call).
    pub fn send(&self, event: WorkerEvent) -> bool {
        let mut st = self.0.state();
        if st.closed {
            return false;
        }
        match event {
            WorkerEvent::Progress(_) if st.progress >= MAX_PROGRESS => {
                // The newest waiting update is superseded by this one: replace it in place
                // of pushing, so order holds and the last update survives.
                let newest = st
                    .queue
                    .iter()
                    .rposition(|(e, _)| matches!(e, WorkerEvent::Progress(_)));
                if let Some(i) = newest
                    && let Some((_, stood_for)) = st.queue.remove(i)
                {
                    st.queue.push_back((event, stood_for + 1));
                    drop(st);
                    self.0.ready.notify_one();
                    return true;
                }
                st.progress += 1;
                st.queue.push_back((event, 1));
            }
            WorkerEvent::Progress(_) => {
                st.progress += 1;
                st.queue.push_back((event, 1));
            }
            WorkerEvent::Log { .. } if st.logs >= MAX_LOGS => {
                st.dropped_logs += 1;
                return true;
            }
            WorkerEvent::Log { .. } => {
                st.logs += 1;
                st.queue.push_back((event, 1));
            }
            outcome => st.queue.push_back((outcome, 1)),
        }
        drop(st);
        self.0.ready.notify_one();
        true
    }
}

pub(crate) struct EventReceiver(Arc<Shared>);

impl Drop for EventReceiver {
    fn drop(&mut self) {
        let mut st = self.0.state();
        st.closed = true;
        st.queue.clear();
    }
}

impl EventReceiver {
    /// The next event; `None` once every sender is gone and nothing waits.
    pub async fn recv(&mut self) -> Option<Received> {
        loop {
            // Registered before looking, so a send in between is not missed.
            let ready = self.0.ready.notified();
            {
                let mut st = self.0.state();
                // Once the lines that did fit are delivered, say how many did not.
                if st.dropped_logs > 0 && st.logs == 0 {
                    let n = std::mem::take(&mut st.dropped_logs);
                    return Some(Received {
                        event: WorkerEvent::Log {
                            level: "warn".into(),
                            text: format!(
                                "toolhost: {n} lines of the tool's log were dropped while \
                                 the call's caller was not reading"
                            ),
                        },
                        stands_for: 1,
                    });
                }
                if let Some((event, stands_for)) = st.queue.pop_front() {
                    match event {
                        WorkerEvent::Progress(_) => st.progress -= 1,
                        WorkerEvent::Log { .. } => st.logs -= 1,
                        _ => {}
                    }
                    return Some(Received { event, stands_for });
                }
                if st.senders == 0 {
                    return None;
                }
            }
            ready.await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn progress(n: u64) -> WorkerEvent {
        WorkerEvent::Progress(vec![json!({"type": "text", "text": n.to_string()})])
    }

    fn text(e: &WorkerEvent) -> String {
        match e {
            WorkerEvent::Progress(c) => c[0]["text"].as_str().unwrap().to_string(),
            WorkerEvent::Log { text, .. } => text.clone(),
            WorkerEvent::Result { .. } => "result".into(),
            _ => "other".into(),
        }
    }

    #[tokio::test]
    async fn a_flood_costs_bounded_memory_keeps_order_and_the_last_update() {
        let (tx, mut rx) = channel();
        let sent = 100_000u64;
        for n in 1..=sent {
            assert!(tx.send(progress(n)));
        }
        for n in 0..10_000 {
            tx.send(WorkerEvent::Log {
                level: "log".into(),
                text: format!("line {n}"),
            });
        }
        tx.send(WorkerEvent::Result {
            value: json!("done"),
            truncated_from: None,
        });
        drop(tx);
        let mut got = Vec::new();
        let mut stood_for = 0;
        let mut last = 0;
        while let Some(r) = rx.recv().await {
            if let WorkerEvent::Progress(_) = r.event {
                let n: u64 = text(&r.event).parse().unwrap();
                assert!(n > last, "order kept");
                last = n;
                stood_for += r.stands_for;
            }
            got.push(text(&r.event));
        }
        assert!(got.len() <= MAX_PROGRESS + MAX_LOGS + 2, "{}", got.len());
        assert_eq!(last, sent, "the last update arrives");
        assert_eq!(stood_for, sent, "every update sent is accounted for");
        assert!(
            got.iter()
                .any(|t| t.contains("9744 lines of the tool's log were dropped"))
        );
        assert_eq!(got.last().unwrap(), "result");
    }

    #[tokio::test]
    async fn ends_when_every_sender_is_gone_and_refuses_once_the_receiver_is() {
        let (tx, mut rx) = channel();
        let other = tx.clone();
        drop(tx);
        other.send(progress(1));
        drop(other);
        assert!(rx.recv().await.is_some());
        assert!(rx.recv().await.is_none());
        let (tx, rx) = channel();
        drop(rx);
        assert!(!tx.send(progress(1)));
    }
}
