//! An OAuth authorization server as far as a resource server sees one: its metadata
//! (`/.well-known/openid-configuration`) and its JWKS, served on loopback by a thread,
//! with keys the test makes and signs access tokens with.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// A signing key: Ed25519 or P-256, made from random bytes.
pub struct Key {
    pub kid: String,
    pub alg: Algorithm,
    encoding: EncodingKey,
}

fn random32() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    bytes
}

impl Key {
    /// An Ed25519 key (its PKCS #8 form is a fixed prefix and the 32-byte seed).
    pub fn ed25519(kid: &str) -> Key {
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend_from_slice(&random32());
        Key {
            kid: kid.to_string(),
            alg: Algorithm::EdDSA,
            encoding: EncodingKey::from_ed_der(&der),
        }
    }

    /// A P-256 key (PKCS #8 around an ECPrivateKey without its optional public key).
    pub fn p256(kid: &str) -> Key {
        let mut der = vec![
            0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d,
            0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x27,
            0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20,
        ];
        der.extend_from_slice(&random32());
        Key {
            kid: kid.to_string(),
            alg: Algorithm::ES256,
            encoding: EncodingKey::from_ec_der(&der),
        }
    }

    /// Its public half, as a JWKS lists it.
    pub fn jwk(&self) -> Value {
        let mut jwk =
            serde_json::to_value(Jwk::from_encoding_key(&self.encoding, self.alg).unwrap())
                .unwrap();
        jwk["kid"] = json!(self.kid);
        jwk["use"] = json!("sig");
        jwk
    }

    /// `claims` signed by this key, its `kid` in the header.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }

    /// `claims` signed by this key, with `kid` in the header (another key's, say).
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(kid.to_string());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The authorization server: serves until the test process ends.
pub struct Issuer {
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub url: String,
    jwks: Arc<Mutex<Vec<Value>>>,
    jwks_fetches: Arc<AtomicUsize>,
}

impl Issuer {
    pub fn start(keys: &[&Key]) -> Issuer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let jwks = Arc::new(Mutex::new(keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()));
        let jwks_fetches = Arc::new(AtomicUsize::new(0));
        let (served, fetches, issuer) = (Arc::clone(&jwks), Arc::clone(&jwks_fetches), url.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("");
                let (status, body) = match path {
                    "/.well-known/openid-configuration" => (
                        "200 OK",
                        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}).to_string(),
                    ),
                    "/jwks" => {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        let keys = served.lock().unwrap().clone();
                        ("200 OK", json!({ "keys": keys }).to_string())
                    }
                    _ => ("404 Not Found", String::new()),
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Issuer {
            url,
            jwks,
            jwks_fetches,
        }
    }

    /// Publishes `key` too (a rotation's new key).
    pub fn publish(&self, key: &Key) {
        self.jwks.lock().unwrap().push(key.jwk());
    }

    /// How many times its JWKS was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }

    /// The claims of a good token of this issuer for `resource`: user `sub`, `scope`,
    /// valid for ten minutes.
    pub fn claims(&self, resource: &str, sub: &str, scope: &str) -> Value {
        json!({
            "iss": self.url,
            "aud": resource,
            "sub": sub,
            "scope": scope,
            "iat": now(),
            "exp": now() + 600,
        })
    }
}
