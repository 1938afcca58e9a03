//! A child's stderr, drained on a thread (so the child never blocks on a full pipe), echoed
//! to the test's output and kept, so that a test fails when the child panicked even though
//! it went on answering (review row 75: no output ever contains `panicked`).
#![allow(dead_code)]

use std::io::BufRead;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Collected {
    what: String,
    text: Arc<Mutex<String>>,
    ended: mpsc::Receiver<()>,
}

impl Collected {
    /// Drains `stderr`; `already` is what the test read from it before (such as the line
    /// announcing the server's address). Each line is echoed prefixed with `what`.
    pub fn start(what: &str, already: String, mut stderr: impl BufRead + Send + 'static) -> Self {
        let text = Arc::new(Mutex::new(already));
        let (done, ended) = mpsc::channel();
        let (kept, prefix) = (Arc::clone(&text), what.to_string());
        std::thread::spawn(move || {
            let mut line = String::new();
            while stderr.read_line(&mut line).unwrap_or(0) > 0 {
                eprint!("{prefix}: {line}");
                kept.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_str(&line);
                line.clear();
            }
            let _ = done.send(());
        });
        Collected {
            what: what.to_string(),
            text,
            ended,
        }
    }

    /// What the child wrote so far.
    pub fn text(&self) -> String {
        self.text.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Call once the child has exited: waits for the rest of its stderr (a grandchild
    /// that kept the pipe open only shortens what is checked) and fails on a panic.
    pub fn assert_no_panic(&self) {
        let _ = self.ended.recv_timeout(Duration::from_secs(10));
        let text = self.text();
        assert!(
            !text.contains("panicked"),
            "{} panicked:\n{text}",
            self.what
        );
    }
}
