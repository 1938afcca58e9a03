-- Toolhost's store. One migration set for SQLite and PostgreSQL: ids and names are TEXT,
-- times BIGINT milliseconds since the Unix epoch, JSON TEXT, flags BIGINT 0/1, so the
-- same statements and the same row types serve both engines.

CREATE TABLE users (
    name        TEXT PRIMARY KEY,
    role        TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
    created_at  BIGINT NOT NULL
);

CREATE TABLE agents (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    icon        TEXT,
    workspace   TEXT,
    org         TEXT,
    owner       TEXT,
    version     BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- A grant is a typed reference, never an untyped id.
CREATE TABLE agent_grants (
    agent_id     TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    ordinal     BIGINT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('tool_set', 'mcp_server')),
    ref          TEXT NOT NULL,
    layer        TEXT NOT NULL CHECK (layer IN ('session', 'search', 'sub-agent')),
    -- What a tool without a rule of its own gets: new tools of the source follow it.
    default_rule TEXT NOT NULL CHECK (default_rule IN ('allow', 'deny')),
    PRIMARY KEY (agent_id, ordinal),
    UNIQUE (agent_id, kind, ref, layer)
);

-- Rules by stable tool key: adding tools to a source never resets another tool's rule.
CREATE TABLE agent_tool_rules (
    agent_id  TEXT NOT NULL,
    ordinal  BIGINT NOT NULL,
    tool_key  TEXT NOT NULL,
    rule      TEXT NOT NULL CHECK (rule IN ('allow', 'deny')),
    PRIMARY KEY (agent_id, ordinal, tool_key),
    FOREIGN KEY (agent_id, ordinal) REFERENCES agent_grants (agent_id, ordinal) ON DELETE CASCADE
);

CREATE TABLE mcp_servers (
    name        TEXT PRIMARY KEY,
    -- The server's settings without its secrets (JSON).
    config      TEXT NOT NULL,
    version     BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- AES-256-GCM: a fresh 12-byte nonce per value, both base64.
CREATE TABLE secrets (
    owner       TEXT NOT NULL,
    name        TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    ciphertext  TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (owner, name)
);

CREATE TABLE api_tokens (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    -- SHA-256 of the whole token, hex: the token itself is never stored.
    hash          TEXT NOT NULL UNIQUE,
    user_name     TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    scopes        TEXT NOT NULL,
    -- An agent of the store or of the configuration file: no foreign key.
    agent_id      TEXT,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    last_used_at  BIGINT,
    revoked_at    BIGINT
);

CREATE TABLE tool_calls (
    id            TEXT PRIMARY KEY,
    started_at    BIGINT NOT NULL,
    duration_ms   BIGINT NOT NULL,
    principal     TEXT NOT NULL,
    token_id      TEXT,
    agent_id      TEXT,
    transport     TEXT NOT NULL,
    tool          TEXT NOT NULL,
    tool_set      TEXT,
    outcome       TEXT NOT NULL CHECK (outcome IN ('success', 'error', 'cancelled', 'timeout', 'denied')),
    error         TEXT,
    result_bytes  BIGINT NOT NULL,
    arguments     TEXT NOT NULL
);
CREATE INDEX tool_calls_by_time ON tool_calls (started_at, id);
CREATE INDEX tool_calls_by_tool ON tool_calls (tool, started_at);

CREATE TABLE audit_events (
    id          TEXT PRIMARY KEY,
    happened_at BIGINT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    old_value   TEXT,
    new_value   TEXT
);
CREATE INDEX audit_events_by_time ON audit_events (happened_at, id);
