//! Agents and their grants: typed references to tool sets and MCP servers, each with a
//! precedence layer, a default for tools without a rule of their own, and per-tool rules
//! by stable tool key (so a source gaining tools never resets another tool's rule).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sqlx::{Any, Row, Transaction};
use toolhost_toolsets::{AgentConfig, Grant, GrantSource, Layer};

use crate::audit::{AuditEvent, record_in};
use crate::{Page, Store, StoreError, now_ms};

/// An agent as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agent {
    /// Its id (a slug).
    pub id: String,
    /// What it is.
    #[serde(flatten)]
    pub spec: AgentSpec,
    /// Bumped by every change; an update must name the version it read.
    pub version: i64,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Milliseconds since the Unix epoch.
    pub updated_at: i64,
}

/// What an agent is: everything a client sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Its display name.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// A Lucide icon name.
    #[serde(default)]
    pub icon: Option<String>,
    /// The workspace its turns run in (tool-set factories read it).
    #[serde(default)]
    pub workspace: Option<String>,
    /// The organisation its turns run in.
    #[serde(default)]
    pub org: Option<String>,
    /// In precedence order: within a layer, a later grant's tool wins a name.
    #[serde(default)]
    pub grants: Vec<GrantSpec>,
}

/// One grant: exactly one of `tool_set` and `mcp_server`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantSpec {
    /// A tool set, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_set: Option<String>,
    /// An MCP server, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<String>,
    /// Its precedence layer.
    #[serde(default)]
    pub layer: Layer,
    /// What a tool without a rule gets (new tools of the source follow it).
    #[serde(default)]
    pub default: Rule,
    /// Per tool, by its key (the name it claims).
    #[serde(default)]
    pub rules: BTreeMap<String, Rule>,
}

/// Allowed or denied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// The tool is in the agent's turn.
    #[default]
    Allow,
    /// The tool is left out.
    Deny,
}

impl Rule {
    fn as_str(self) -> &'static str {
        match self {
            Rule::Allow => "allow",
            Rule::Deny => "deny",
        }
    }

    fn parse(text: &str) -> Rule {
        match text {
            "deny" => Rule::Deny,
            _ => Rule::Allow,
        }
    }
}

fn layer_str(layer: Layer) -> &'static str {
    match layer {
        Layer::Session => "session",
        Layer::Search => "search",
        Layer::SubAgent => "sub-agent",
    }
}

fn parse_layer(text: &str) -> Layer {
    match text {
        "search" => Layer::Search,
        "sub-agent" => Layer::SubAgent,
        _ => Layer::Session,
    }
}

impl GrantSpec {
    /// The grant the resolver takes: a tool passes when its rule (or, without one, the
    /// default) allows it. An explicit rule always beats the default.
    pub fn to_grant(&self) -> Option<Grant> {
        let source = match (&self.tool_set, &self.mcp_server) {
            (Some(id), None) => GrantSource::ToolSet(id.clone()),
            (None, Some(name)) => GrantSource::McpServer(name.clone()),
            _ => return None,
        };
        let with = |rule| {
            self.rules
                .iter()
                .filter(|(_, r)| **r == rule)
                .map(|(k, _)| k.clone())
                .collect::<Vec<_>>()
        };
        Some(Grant {
            source,
            layer: self.layer,
            allow: (self.default == Rule::Deny).then(|| with(Rule::Allow)),
            deny: with(Rule::Deny),
        })
    }

    /// The same grant as the configuration file writes it.
    pub fn from_grant(grant: &Grant) -> GrantSpec {
        let (tool_set, mcp_server) = match &grant.source {
            GrantSource::ToolSet(id) => (Some(id.clone()), None),
            GrantSource::McpServer(name) => (None, Some(name.clone())),
        };
        let mut rules = BTreeMap::new();
        for key in grant.allow.iter().flatten() {
            rules.insert(key.clone(), Rule::Allow);
        }
        // An explicit deny always wins.
        for key in &grant.deny {
            rules.insert(key.clone(), Rule::Deny);
        }
        GrantSpec {
            tool_set,
            mcp_server,
            layer: grant.layer,
            default: match grant.allow {
                Some(_) => Rule::Deny,
                None => Rule::Allow,
            },
            rules,
        }
    }

    fn kind_and_ref(&self) -> (&'static str, &str) {
        match (&self.tool_set, &self.mcp_server) {
            (Some(id), _) => ("tool_set", id),
            (None, Some(name)) => ("mcp_server", name),
            (None, None) => ("tool_set", ""),
        }
    }
}

impl AgentSpec {
    /// What the resolver takes.
    pub fn to_config(&self) -> AgentConfig {
        AgentConfig {
            name: Some(self.name.clone()),
            description: Some(self.description.clone()).filter(|d| !d.is_empty()),
            icon: self.icon.clone(),
            workspace: self.workspace.clone(),
            org: self.org.clone(),
            grants: self.grants.iter().filter_map(GrantSpec::to_grant).collect(),
        }
    }

    /// An agent of the configuration file, as the store keeps it.
    pub fn from_config(id: &str, config: &AgentConfig) -> AgentSpec {
        AgentSpec {
            name: config.name.clone().unwrap_or_else(|| id.to_string()),
            description: config.description.clone().unwrap_or_default(),
            icon: config.icon.clone(),
            workspace: config.workspace.clone(),
            org: config.org.clone(),
            grants: config.grants.iter().map(GrantSpec::from_grant).collect(),
        }
    }

    /// Every problem is an [`StoreError::Invalid`] naming the field.
    pub fn validate(&self) -> Result<(), StoreError> {
        let name = self.name.trim();
        if name.is_empty() || self.name.chars().count() > 100 {
            return Err(StoreError::invalid("name", "must hold 1 to 100 characters"));
        }
        if self.description.chars().count() > 2000 {
            return Err(StoreError::invalid(
                "description",
                "must hold at most 2000 characters",
            ));
        }
        if let Some(icon) = &self.icon
            && !crate::is_icon_name(icon)
        {
            return Err(StoreError::invalid(
                "icon",
                format!("{icon:?} is not a Lucide icon name (kebab-case, like `book-open`)"),
            ));
        }
        for (field, value) in [("workspace", &self.workspace), ("org", &self.org)] {
            if value
                .as_ref()
                .is_some_and(|v| v.is_empty() || v.len() > 200)
            {
                return Err(StoreError::invalid(field, "must hold 1 to 200 characters"));
            }
        }
        if self.grants.len() > 500 {
            return Err(StoreError::invalid("grants", "at most 500 grants"));
        }
        let mut seen = BTreeSet::new();
        for (i, g) in self.grants.iter().enumerate() {
            let at = |f: &str| format!("grants[{i}]{f}");
            match (&g.tool_set, &g.mcp_server) {
                (Some(_), Some(_)) | (None, None) => {
                    return Err(StoreError::invalid(
                        at(""),
                        "name exactly one of `tool_set` and `mcp_server`",
                    ));
                }
                (Some(id), None) if !crate::is_ref(id) => {
                    return Err(StoreError::invalid(at(".tool_set"), "not a tool-set id"));
                }
                (None, Some(n)) if !crate::is_ref(n) => {
                    return Err(StoreError::invalid(at(".mcp_server"), "not a server name"));
                }
                _ => {}
            }
            let (kind, id) = g.kind_and_ref();
            if !seen.insert((kind, id.to_string(), layer_str(g.layer))) {
                return Err(StoreError::invalid(
                    at(""),
                    format!("grants {kind} `{id}` in layer {} twice", layer_str(g.layer)),
                ));
            }
            if g.rules.len() > 10_000 {
                return Err(StoreError::invalid(at(".rules"), "at most 10000 rules"));
            }
            if let Some(key) = g.rules.keys().find(|k| k.is_empty() || k.len() > 200) {
                return Err(StoreError::invalid(
                    at(".rules"),
                    format!("{key:?} is not a tool key (1 to 200 bytes)"),
                ));
            }
        }
        Ok(())
    }
}

impl Store {
    /// Agents by id, `limit` (1 to 500) after the cursor `after`.
    pub async fn agents(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<Agent>, StoreError> {
        let limit = limit.clamp(1, 500);
        let rows = sqlx::query(
            "SELECT id, name, description, icon, workspace, org, version, created_at, updated_at \
             FROM agents WHERE id > $1 ORDER BY id LIMIT $2",
        )
        .bind(after.unwrap_or(""))
        .bind(limit as i64 + 1)
        .fetch_all(&self.pool)
        .await?;
        let agents = rows.iter().map(agent_from_row).collect::<Result<_, _>>()?;
        let mut page = Page::cut(agents, limit, |a: &Agent| a.id.clone());
        // The page's grants and rules in two statements (not two per agent): its agents
        // are exactly those with ids after the cursor up to its last.
        if let Some(last) = page.items.last().map(|a| a.id.clone()) {
            let grants = sqlx::query(
                "SELECT agent_id, ordinal, kind, ref, layer, default_rule FROM agent_grants \
                 WHERE agent_id > $1 AND agent_id <= $2 ORDER BY agent_id, ordinal",
            )
            .bind(after.unwrap_or(""))
            .bind(&last)
            .fetch_all(&self.pool)
            .await?;
            let rules = sqlx::query(
                "SELECT agent_id, ordinal, tool_key, rule FROM agent_tool_rules \
                 WHERE agent_id > $1 AND agent_id <= $2",
            )
            .bind(after.unwrap_or(""))
            .bind(&last)
            .fetch_all(&self.pool)
            .await?;
            let mut by_agent = grants_by_agent(&grants, &rules)?;
            for agent in &mut page.items {
                agent.spec.grants = by_agent.remove(&agent.id).unwrap_or_default();
            }
        }
        Ok(page)
    }

    /// One agent.
    pub async fn agent(&self, id: &str) -> Result<Option<Agent>, StoreError> {
        let row = sqlx::query(
            "SELECT id, name, description, icon, workspace, org, version, created_at, updated_at \
             FROM agents WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        match row {
            Some(row) => {
                let mut agent = agent_from_row(&row)?;
                self.load_grants(&mut agent).await?;
                Ok(Some(agent))
            }
            None => Ok(None),
        }
    }

    async fn load_grants(&self, agent: &mut Agent) -> Result<(), StoreError> {
        let grants = sqlx::query(
            "SELECT agent_id, ordinal, kind, ref, layer, default_rule FROM agent_grants \
             WHERE agent_id = $1 ORDER BY ordinal",
        )
        .bind(&agent.id)
        .fetch_all(&self.pool)
        .await?;
        let rules = sqlx::query(
            "SELECT agent_id, ordinal, tool_key, rule FROM agent_tool_rules WHERE agent_id = $1",
        )
        .bind(&agent.id)
        .fetch_all(&self.pool)
        .await?;
        agent.spec.grants = grants_by_agent(&grants, &rules)?
            .remove(&agent.id)
            .unwrap_or_default();
        Ok(())
    }

    /// Creates agent `id`; `actor` is who, for the audit log.
    pub async fn create_agent(
        &self,
        actor: &str,
        id: &str,
        spec: AgentSpec,
    ) -> Result<Agent, StoreError> {
        if !crate::is_ref(id) {
            return Err(StoreError::invalid(
                "id",
                "must match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$",
            ));
        }
        spec.validate()?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO agents (id, name, description, icon, workspace, org, version, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7) ON CONFLICT (id) DO NOTHING",
        )
        .bind(id)
        .bind(&spec.name)
        .bind(&spec.description)
        .bind(&spec.icon)
        .bind(&spec.workspace)
        .bind(&spec.org)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::Exists {
                kind: "agent",
                id: id.to_string(),
            });
        }
        write_grants(&mut tx, id, &spec.grants).await?;
        let agent = Agent {
            id: id.to_string(),
            spec,
            version: 1,
            created_at: now,
            updated_at: now,
        };
        record_in(
            &mut tx,
            AuditEvent::change(actor, "agent.create", "agent", id, None, Some(&agent)),
        )
        .await?;
        tx.commit().await?;
        Ok(agent)
    }

    /// Replaces agent `id` with `spec` if it is still at `version`.
    pub async fn update_agent(
        &self,
        actor: &str,
        id: &str,
        spec: AgentSpec,
        version: i64,
    ) -> Result<Agent, StoreError> {
        spec.validate()?;
        let before = self
            .agent(id)
            .await?
            .ok_or_else(|| StoreError::not_found("agent", id))?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE agents SET name = $1, description = $2, icon = $3, workspace = $4, org = $5, \
             version = version + 1, updated_at = $6 WHERE id = $7 AND version = $8",
        )
        .bind(&spec.name)
        .bind(&spec.description)
        .bind(&spec.icon)
        .bind(&spec.workspace)
        .bind(&spec.org)
        .bind(now)
        .bind(id)
        .bind(version)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(self.conflict_or_gone(&mut tx, "agent", id, version).await);
        }
        sqlx::query("DELETE FROM agent_grants WHERE agent_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        write_grants(&mut tx, id, &spec.grants).await?;
        let agent = Agent {
            id: id.to_string(),
            spec,
            version: version + 1,
            created_at: before.created_at,
            updated_at: now,
        };
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "agent.update",
                "agent",
                id,
                Some(&before),
                Some(&agent),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(agent)
    }

    /// Deletes agent `id` (if still at `version`, when given); its tokens go with it.
    pub async fn delete_agent(
        &self,
        actor: &str,
        id: &str,
        version: Option<i64>,
    ) -> Result<(), StoreError> {
        let before = self
            .agent(id)
            .await?
            .ok_or_else(|| StoreError::not_found("agent", id))?;
        let expected = version.unwrap_or(before.version);
        let mut tx = self.pool.begin().await?;
        let deleted = sqlx::query("DELETE FROM agents WHERE id = $1 AND version = $2")
            .bind(id)
            .bind(expected)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(self.conflict_or_gone(&mut tx, "agent", id, expected).await);
        }
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "agent.delete",
                "agent",
                id,
                Some(&before),
                None::<&Agent>,
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Why an update of a row at `expected` touched nothing: it changed, or it is gone.
    pub(crate) async fn conflict_or_gone(
        &self,
        tx: &mut Transaction<'_, Any>,
        kind: &'static str,
        id: &str,
        expected: i64,
    ) -> StoreError {
        let sql = match kind {
            "agent" => "SELECT version FROM agents WHERE id = $1",
            _ => "SELECT version FROM mcp_servers WHERE name = $1",
        };
        let found = sqlx::query(sql).bind(id).fetch_optional(&mut **tx).await;
        match found {
            Ok(Some(row)) => match row.try_get::<i64, _>("version") {
                Ok(found) => StoreError::Conflict {
                    kind,
                    id: id.to_string(),
                    expected,
                    found,
                },
                Err(e) => StoreError::Database(e),
            },
            Ok(None) => StoreError::not_found(kind, id),
            Err(e) => StoreError::Database(e),
        }
    }
}

async fn write_grants(
    tx: &mut Transaction<'_, Any>,
    agent: &str,
    grants: &[GrantSpec],
) -> Result<(), StoreError> {
    for (ordinal, g) in grants.iter().enumerate() {
        let (kind, reference) = g.kind_and_ref();
        sqlx::query(
            "INSERT INTO agent_grants (agent_id, ordinal, kind, ref, layer, default_rule) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(agent)
        .bind(ordinal as i64)
        .bind(kind)
        .bind(reference)
        .bind(layer_str(g.layer))
        .bind(g.default.as_str())
        .execute(&mut **tx)
        .await?;
        for (key, rule) in &g.rules {
            sqlx::query(
                "INSERT INTO agent_tool_rules (agent_id, ordinal, tool_key, rule) VALUES ($1, $2, $3, $4)",
            )
            .bind(agent)
            .bind(ordinal as i64)
            .bind(key)
            .bind(rule.as_str())
            .execute(&mut **tx)
            .await?;
        }
    }
    Ok(())
}

/// Grant rows (`agent_id, ordinal, kind, ref, layer, default_rule`) and rule rows
/// (`agent_id, ordinal, tool_key, rule`) as each agent's grants, in ordinal order.
fn grants_by_agent(
    grants: &[sqlx::any::AnyRow],
    rules: &[sqlx::any::AnyRow],
) -> Result<BTreeMap<String, Vec<GrantSpec>>, StoreError> {
    let mut by_key: BTreeMap<(String, i64), GrantSpec> = BTreeMap::new();
    for row in grants {
        let kind: String = row.try_get("kind")?;
        let reference: String = row.try_get("ref")?;
        let (tool_set, mcp_server) = match kind.as_str() {
            "mcp_server" => (None, Some(reference)),
            _ => (Some(reference), None),
        };
        by_key.insert(
            (row.try_get("agent_id")?, row.try_get("ordinal")?),
            GrantSpec {
                tool_set,
                mcp_server,
                layer: parse_layer(&row.try_get::<String, _>("layer")?),
                default: Rule::parse(&row.try_get::<String, _>("default_rule")?),
                rules: BTreeMap::new(),
            },
        );
    }
    for row in rules {
        let key: (String, i64) = (row.try_get("agent_id")?, row.try_get("ordinal")?);
        if let Some(g) = by_key.get_mut(&key) {
            g.rules.insert(
                row.try_get("tool_key")?,
                Rule::parse(&row.try_get::<String, _>("rule")?),
            );
        }
    }
    let mut by_agent: BTreeMap<String, Vec<GrantSpec>> = BTreeMap::new();
    for ((agent, _), grant) in by_key {
        by_agent.entry(agent).or_default().push(grant);
    }
    Ok(by_agent)
}

fn agent_from_row(row: &sqlx::any::AnyRow) -> Result<Agent, StoreError> {
    Ok(Agent {
        id: row.try_get("id")?,
        spec: AgentSpec {
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            icon: row.try_get("icon")?,
            workspace: row.try_get("workspace")?,
            org: row.try_get("org")?,
            grants: Vec::new(),
        },
        version: row.try_get("version")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}
