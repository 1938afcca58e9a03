//! Bearer tokens: the configuration stores only their SHA-256, each naming the user a
//! request with that token acts as. Every HTTP surface authenticates through [`Tokens`].

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::Caller;

/// The SHA-256 of a token, as lowercase hex (what `[[serve.tokens]] sha256` holds).
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push(char::from(HEX[usize::from(b >> 4)]));
        hex.push(char::from(HEX[usize::from(b & 15)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether `s` looks like what [`hash_token`] returns.
pub fn is_token_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Token hash → the caller it authenticates. Empty means no authentication: every request
/// is the server's default caller.
#[derive(Debug, Default, Clone)]
pub struct Tokens {
    by_hash: HashMap<String, Caller>,
}

impl Tokens {
    /// `hash` must satisfy [`is_token_hash`] (case does not matter). The caller's user
    /// must pass the user-name rule: it names a home.
    pub fn insert(
        &mut self,
        hash: &str,
        caller: Caller,
    ) -> Result<(), toolhost_catalog::CatalogError> {
        toolhost_catalog::validate_user(caller.user())?;
        self.by_hash.insert(hash.to_ascii_lowercase(), caller);
        Ok(())
    }

    /// No tokens: the surface serves its one default caller, on loopback only.
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// The caller an `Authorization` header value authenticates, if any. Only hashes are
    /// compared, so the time taken says nothing about the configured tokens.
    pub fn authenticate(&self, authorization: &str) -> Option<&Caller> {
        let (scheme, token) = authorization.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let token = token.trim();
        if token.is_empty() {
            return None;
        }
        self.by_hash.get(&hash_token(token))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use toolhost_runtime::UserSpace;

    #[test]
    fn hashes_are_sha256_hex() {
        // printf %s abc | sha256sum
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_token_hash(&hash_token("x")));
        assert!(!is_token_hash("abc"));
    }

    #[test]
    fn only_the_right_bearer_token_authenticates() {
        let ada = Caller::new(UserSpace {
            user: "ada@example.com".into(),
            home: "/data/ada@example.com".into(),
        });
        let mut tokens = Tokens::default();
        tokens
            .insert(&hash_token("s3cret").to_uppercase(), ada.clone())
            .unwrap();
        let mut tools = ada.clone();
        tools.space.user = "tools".into();
        // F4: a token for the user `tools` would make the global tool root a home.
        assert!(tokens.insert(&hash_token("t"), tools).is_err());
        assert_eq!(tokens.authenticate("Bearer s3cret"), Some(&ada));
        assert_eq!(tokens.authenticate("bearer  s3cret "), Some(&ada));
        for bad in ["Bearer wrong", "Basic s3cret", "s3cret", "Bearer ", ""] {
            assert_eq!(tokens.authenticate(bad), None, "{bad:?}");
        }
    }
}
