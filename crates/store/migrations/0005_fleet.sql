-- A fleet's shared catalog (issue 19). Tool folders are stored once each, by content:
-- `bundles` holds each folder's bundle (a deterministic tar, gzipped, base64) under the
-- BLAKE3 digest of the tar. A publish writes every bundle first, then one epoch: the
-- roots it lists and, per root, its tool folders by bundle; gateways serve the newest
-- epoch, and runners fetch a call's bundle by name, so they run exactly what was resolved.
CREATE TABLE bundles (
    hash        TEXT PRIMARY KEY,
    size        BIGINT NOT NULL,
    packed      TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE catalog_epochs (
    epoch         BIGINT PRIMARY KEY,
    published_at  BIGINT NOT NULL,
    publisher     TEXT NOT NULL
);

-- A root of an epoch: its position (higher wins, as in a local catalog), a name for its
-- folder on the gateways, and its `toolset.toml` when it has one.
CREATE TABLE catalog_roots (
    epoch     BIGINT NOT NULL REFERENCES catalog_epochs (epoch) ON DELETE CASCADE,
    position  BIGINT NOT NULL,
    name      TEXT NOT NULL,
    toolset   TEXT,
    PRIMARY KEY (epoch, position)
);

CREATE TABLE catalog_folders (
    epoch     BIGINT NOT NULL REFERENCES catalog_epochs (epoch) ON DELETE CASCADE,
    position  BIGINT NOT NULL,
    folder    TEXT NOT NULL,
    bundle    TEXT NOT NULL REFERENCES bundles (hash),
    PRIMARY KEY (epoch, position, folder)
);

-- 2025-11-25 MCP sessions, so that one opened on a gateway continues on another: the
-- SHA-256 of the session id, the user it belongs to, and the client's `initialize`
-- request, which a gateway that never saw the session replays to restore it.
CREATE TABLE mcp_sessions (
    id_hash     TEXT PRIMARY KEY,
    user_name   TEXT NOT NULL,
    initialize  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_by_last_seen ON mcp_sessions (last_seen);
