//! The Python SDK's test server (`py_server.py`) for the tests of any crate: started on a
//! free loopback port, killed on drop. Include it with `#[path]`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// The venv's Python that `scripts/test` installs the SDK into.
pub fn python() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = std::env::var_os("TOOLHOST_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target/mcp-venv/bin/python"));
    assert!(
        p.exists(),
        "{} is missing: run scripts/test, which installs the MCP SDKs",
        p.display()
    );
    p
}

/// The Python server, killed on drop.
pub struct PyServer {
    child: Child,
    /// Its Streamable HTTP endpoint.
    pub url: String,
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server, requiring `Authorization: Bearer TOKEN` and, when given, the header
/// `NAME=VALUE`.
pub fn py_server(token: &str, header: Option<&str>) -> PyServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/mcp-client/tests/mcp-servers/py_server.py");
    let mut cmd = Command::new(python());
    cmd.arg(script).arg(port.to_string()).arg(token);
    if let Some(h) = header {
        cmd.arg(h);
    }
    let server = PyServer {
        child: cmd.spawn().unwrap(),
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    for _ in 0..300 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the Python MCP server did not start");
}
