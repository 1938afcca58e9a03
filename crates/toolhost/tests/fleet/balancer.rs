//! A load balancer for the fleet's tests: every HTTP request goes to the next gateway in
//! turn, on a connection of its own (the client's connection is closed after each
//! response, so a keep-alive client cannot stick to one gateway either). Responses,
//! server-sent event streams included, are passed through as they arrive.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub struct Balancer {
    pub addr: String,
    stop: Arc<AtomicBool>,
    /// Requests sent to each gateway.
    pub sent: Arc<Vec<AtomicUsize>>,
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(&self.addr);
    }
}

impl Balancer {
    pub fn start(gateways: Vec<String>) -> Balancer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let sent: Arc<Vec<AtomicUsize>> =
            Arc::new(gateways.iter().map(|_| AtomicUsize::new(0)).collect());
        let next = Arc::new(AtomicUsize::new(0));
        let (stop2, sent2) = (Arc::clone(&stop), Arc::clone(&sent));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (gateways, next, sent) =
                    (gateways.clone(), Arc::clone(&next), Arc::clone(&sent2));
                std::thread::spawn(move || {
                    let _ = serve(conn, &gateways, &next, &sent);
                });
            }
        });
        Balancer { addr, stop, sent }
    }
}

/// Passes requests from `client` to the gateways in turn, one per connection.
fn serve(
    client: TcpStream,
    gateways: &[String],
    next: &AtomicUsize,
    sent: &[AtomicUsize],
) -> std::io::Result<()> {
    let mut reader = BufReader::new(client.try_clone()?);
    let mut head = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("connection:") || lower.starts_with("keep-alive:") {
            continue;
        }
        head.push(line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let n = next.fetch_add(1, Ordering::Relaxed) % gateways.len();
    sent[n].fetch_add(1, Ordering::Relaxed);
    let mut upstream = TcpStream::connect(&gateways[n])?;
    let mut request = head.concat();
    request.push_str("Connection: close\r\n\r\n");
    upstream.write_all(request.as_bytes())?;
    upstream.write_all(&body)?;
    // A client that goes away closes the gateway's connection too (that is how a
    // 2026-07-28 client cancels).
    let (mut watched, closing) = (client.try_clone()?, upstream.try_clone()?);
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        let _ = watched.read(&mut byte);
        let _ = closing.shutdown(std::net::Shutdown::Both);
    });
    // The response, as it comes, with the client's connection closed at its end.
    let mut upstream_reader = BufReader::new(upstream);
    let mut client = client;
    let mut first = true;
    let mut buf = [0u8; 8192];
    loop {
        if first {
            // Tell the client this connection ends with the response.
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if upstream_reader.read_line(&mut line)? == 0 {
                    return Ok(());
                }
                let end = line == "\r\n";
                if !line.to_ascii_lowercase().starts_with("connection:") && !end {
                    head.push(line);
                }
                if end {
                    break;
                }
            }
            head.push("Connection: close\r\n\r\n".into());
            client.write_all(head.concat().as_bytes())?;
            first = false;
        }
        let n = upstream_reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        client.write_all(&buf[..n])?;
    }
    let _ = client.shutdown(std::net::Shutdown::Both);
    Ok(())
}
