-- The web console's sign-ins. The cookie holds a random secret; the row keeps only its
-- SHA-256, and the token signed in with, sealed (AES-256-GCM) like every secret, so that
-- each request is checked against that token as it is now (revoked, expired, its user's
-- role changed). Signing out deletes the row.
CREATE TABLE console_sessions (
    hash        TEXT PRIMARY KEY,
    user_name   TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    ciphertext  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
