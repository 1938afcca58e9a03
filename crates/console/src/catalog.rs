//! `/catalog`: tool sets by category (A→Z, "Uncategorized" last) with their icons, owners
//! and tools, searched across names and descriptions by a GET form; a tool set's page; a
//! tool's page with its schema, annotations, what it shadows and its TOOL.md rendered.

use std::collections::{HashMap, HashSet};

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use toolhost_host::{Hints, ToolInfo};
use toolhost_runtime::ToolRef;
use toolhost_toolsets::{Owner, SourceHealth};

use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, markdown, page};

/// Tool sets per page.
const SETS_PER_PAGE: usize = 50;
/// Tools a search lists at most.
const MAX_TOOL_HITS: usize = 100;
/// The category of a set that names none.
const UNCATEGORIZED: &str = "Uncategorized";

pub(crate) struct HealthView {
    pub(crate) state: &'static str,
    pub(crate) error: String,
}

pub(crate) struct SetView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) category: String,
    pub(crate) description: String,
    pub(crate) icon: &'static str,
    pub(crate) owner_kind: &'static str,
    pub(crate) owner: String,
    pub(crate) tools: Vec<String>,
    pub(crate) factory: bool,
    pub(crate) health: Option<HealthView>,
}

pub(crate) struct Category {
    pub(crate) name: String,
    pub(crate) sets: Vec<SetView>,
}

pub(crate) struct ToolHit {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) icon: &'static str,
}

/// Every tool set the host has, sorted as agent forms show them, icons not yet taken.
fn all_sets(state: &ConsoleState) -> Vec<(SetView, Option<String>)> {
    let Some(registry) = state.host.registry() else {
        return Vec::new();
    };
    let mut sets: Vec<(SetView, Option<String>)> = registry
        .tool_sets()
        .map(|e| {
            let (owner_kind, owner) = match &e.owner {
                Owner::Plugin { name } => ("plugin", name.clone()),
                Owner::Folder { root } => ("tool root", root.display().to_string()),
                Owner::McpServer { name } => ("MCP server", name.clone()),
            };
            let health = match &e.owner {
                Owner::McpServer { name } => {
                    registry.external_source(name).map(|s| health(s.health()))
                }
                _ => None,
            };
            let category = if e.set.category.trim().is_empty() {
                UNCATEGORIZED.to_string()
            } else {
                e.set.category.clone()
            };
            let mut tools = e.set.known_tools();
            tools.sort();
            (
                SetView {
                    id: e.set.id.clone(),
                    name: e.set.name.clone(),
                    category,
                    description: e.set.description.clone(),
                    icon: "",
                    owner_kind,
                    owner,
                    tools,
                    factory: e.set.tools.kind() == "factory",
                    health,
                },
                e.set.icon.clone(),
            )
        })
        .collect();
    sets.sort_by(|(a, _), (b, _)| {
        let key = |s: &SetView| {
            (
                s.category == UNCATEGORIZED,
                s.category.to_lowercase(),
                s.name.to_lowercase(),
            )
        };
        key(a).cmp(&key(b))
    });
    sets
}

/// The names of the tools that have a page: those served to the caller, and those of
/// tool sets with a fixed list (a factory's are known only per turn).
async fn with_pages(state: &ConsoleState, who: &Signed) -> HashSet<String> {
    let mut names: HashSet<String> = state
        .endpoint
        .tools(&who.caller)
        .await
        .into_iter()
        .map(|t| t.name)
        .collect();
    if let Some(registry) = state.host.registry() {
        for e in registry.tool_sets() {
            if let Some(map) = e.set.tools.listed() {
                names.extend(map.keys().map(str::to_string));
            }
        }
    }
    names
}

pub(crate) fn health(h: SourceHealth) -> HealthView {
    match h {
        SourceHealth::NotContacted => HealthView {
            state: "not contacted",
            error: String::new(),
        },
        SourceHealth::Live => HealthView {
            state: "live",
            error: String::new(),
        },
        SourceHealth::Failing {
            error,
            failures,
            serving_stale,
        } => HealthView {
            state: if serving_stale {
                "failing, serving its last good listing"
            } else {
                "failing"
            },
            error: format!("{error} ({failures} in a row)"),
        },
    }
}

/// Whether every word of `words` is in one of `fields` (case-insensitive).
fn matches(words: &[String], fields: &[&str]) -> bool {
    let hay: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
    words
        .iter()
        .all(|w| hay.iter().any(|h| h.contains(w.as_str())))
}

#[derive(Deserialize)]
pub(crate) struct CatalogQuery {
    q: Option<String>,
    page: Option<String>,
}

#[derive(Template)]
#[template(path = "catalog.html")]
struct CatalogPage {
    layout: Layout,
    q: String,
    categories: Vec<Category>,
    matched_sets: usize,
    tools: Vec<ToolHit>,
    matched_tools: usize,
    page: usize,
    pages: usize,
    prev: Option<String>,
    next: Option<String>,
    /// Tools that have a page, to link.
    linked: HashSet<String>,
}

pub(crate) async fn index(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(query): Query<CatalogQuery>,
) -> Response {
    let q = query.q.unwrap_or_default().trim().to_string();
    let words: Vec<String> = q.split_whitespace().map(str::to_lowercase).collect();
    let mut icons = Icons::default();
    let sets = all_sets(&state);
    let set_icon: HashMap<String, Option<String>> = sets
        .iter()
        .flat_map(|(s, icon)| s.tools.iter().map(move |t| (t.clone(), icon.clone())))
        .collect();
    let matched: Vec<(SetView, Option<String>)> = sets
        .into_iter()
        .filter(|(s, _)| {
            let mut fields = vec![
                s.id.as_str(),
                s.name.as_str(),
                s.category.as_str(),
                s.description.as_str(),
                s.owner.as_str(),
            ];
            fields.extend(s.tools.iter().map(String::as_str));
            matches(&words, &fields)
        })
        .collect();
    let matched_sets = matched.len();
    let pages = matched_sets.div_ceil(SETS_PER_PAGE).max(1);
    let page_no = query
        .page
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, pages);
    let mut categories: Vec<Category> = Vec::new();
    for (mut set, icon) in matched
        .into_iter()
        .skip((page_no - 1) * SETS_PER_PAGE)
        .take(SETS_PER_PAGE)
    {
        set.icon = icons.take(icon.as_deref());
        match categories.last_mut() {
            Some(c) if c.name == set.category => c.sets.push(set),
            _ => categories.push(Category {
                name: set.category.clone(),
                sets: vec![set],
            }),
        }
    }
    // Tools are searched by name, label and description: only when asked.
    let (tools, matched_tools) = if words.is_empty() {
        (Vec::new(), 0)
    } else {
        let hits: Vec<ToolInfo> = state
            .endpoint
            .tools(&who.caller)
            .await
            .into_iter()
            .filter(|t| matches(&words, &[&t.name, &t.title, &t.description]))
            .collect();
        let n = hits.len();
        let shown = hits
            .into_iter()
            .take(MAX_TOOL_HITS)
            .map(|t| ToolHit {
                icon: icons.take(set_icon.get(&t.name).and_then(|i| i.as_deref())),
                name: t.name,
                title: t.title,
                description: t.description,
            })
            .collect();
        (shown, n)
    };
    icons.take(Some("search"));
    let link = |n: usize| {
        let mut url = format!("/catalog?page={n}");
        if !q.is_empty() {
            url.push_str("&q=");
            url.push_str(&page::encode(&q));
        }
        url
    };
    let linked = with_pages(&state, &who).await;
    let prev = (page_no > 1).then(|| link(page_no - 1));
    let next = (page_no < pages).then(|| link(page_no + 1));
    if prev.is_some() || next.is_some() {
        icons.take(Some("chevron-left"));
        icons.take(Some("chevron-right"));
    }
    let title = if q.is_empty() {
        "Catalog".to_string()
    } else {
        format!("“{q}” in the catalog")
    };
    let layout = Layout::new(&who.caller, "/catalog", title, icons);
    page::html(
        StatusCode::OK,
        &CatalogPage {
            layout,
            q,
            categories,
            matched_sets,
            tools,
            matched_tools,
            page: page_no,
            pages,
            prev,
            next,
            linked,
        },
    )
}

pub(crate) struct SetTool {
    pub(crate) name: String,
    pub(crate) description: String,
    /// Whether it has a page (served to the caller, or in a fixed list).
    pub(crate) visible: bool,
}

#[derive(Template)]
#[template(path = "tool_set.html")]
struct SetPage {
    layout: Layout,
    set: SetView,
    tools: Vec<SetTool>,
}

pub(crate) async fn set_page(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
) -> Response {
    let Some((mut set, icon)) = all_sets(&state).into_iter().find(|(s, _)| s.id == id) else {
        return page::failure(StatusCode::NOT_FOUND, "There is no tool set of that id.");
    };
    let mut icons = Icons::default();
    set.icon = icons.take(icon.as_deref());
    let served: HashMap<String, ToolInfo> = state
        .endpoint
        .tools(&who.caller)
        .await
        .into_iter()
        .map(|t| (t.name.clone(), t))
        .collect();
    let defined: HashMap<String, String> = match state.host.registry().and_then(|r| r.tool_set(&id))
    {
        Some(e) => match e.set.tools.listed() {
            Some(map) => map
                .iter()
                .map(|(k, t)| (k.to_string(), t.description()))
                .collect(),
            None => HashMap::new(),
        },
        None => HashMap::new(),
    };
    let tools = set
        .tools
        .iter()
        .map(|name| SetTool {
            name: name.clone(),
            description: served
                .get(name)
                .map(|t| t.description.clone())
                .or_else(|| defined.get(name).cloned())
                .unwrap_or_default(),
            visible: served.contains_key(name) || defined.contains_key(name),
        })
        .collect();
    let layout = Layout::new(&who.caller, "/catalog", set.name.clone(), icons);
    page::html(StatusCode::OK, &SetPage { layout, set, tools })
}

pub(crate) struct Param {
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) required: bool,
    pub(crate) description: String,
    pub(crate) default: String,
    pub(crate) choices: String,
}

pub(crate) struct FolderView {
    pub(crate) path: String,
    pub(crate) root: String,
    pub(crate) version: u64,
    pub(crate) language: String,
    pub(crate) network: bool,
    pub(crate) timeout: String,
    pub(crate) shadows: Vec<String>,
}

#[derive(Template)]
#[template(path = "tool.html")]
struct ToolPage {
    layout: Layout,
    name: String,
    title: String,
    description: String,
    icon: &'static str,
    set: Option<(String, String)>,
    /// Whether the signed-in caller may call it (else only agents granted its set may).
    callable: bool,
    badges: Vec<&'static str>,
    params: Vec<Param>,
    schema: String,
    folder: Option<FolderView>,
    /// TOOL.md rendered: escaped and sanitized by `markdown::render`.
    docs: String,
}

/// A tool as its page shows it: served to the signed-in caller, or defined by a tool set
/// that only agents are granted.
struct Found {
    title: String,
    description: String,
    schema: Value,
    hints: Option<Hints>,
    tool: ToolRef,
    set: Option<String>,
    icon: Option<String>,
    callable: bool,
}

async fn find_tool(state: &ConsoleState, who: &Signed, name: &str) -> Option<Found> {
    if let Some(target) = state.endpoint.resolve(&who.caller, name).await
        && let Some(info) = state
            .endpoint
            .tools(&who.caller)
            .await
            .into_iter()
            .find(|t| t.name == name)
    {
        return Some(Found {
            title: info.title,
            description: info.description,
            schema: Value::Object((*info.input_schema).clone()),
            hints: info.hints,
            tool: target.tool,
            set: target.set,
            icon: None,
            callable: true,
        });
    }
    // Not served to this caller (a plugin's tool, granted to agents only): its set's
    // definition, for the catalog.
    let registry = state.host.registry()?;
    registry.tool_sets().find_map(|e| {
        let map = e.set.tools.listed()?;
        let (_, tool) = map.iter().find(|(key, _)| *key == name)?;
        let a = tool.annotations();
        Some(Found {
            title: tool.target().name().to_string(),
            description: tool.description(),
            schema: tool.input_schema(),
            hints: Some(Hints {
                read_only: a.read_only,
                destructive: a.destructive,
                idempotent: a.idempotent,
                open_world: a.open_world,
            }),
            tool: tool.target().clone(),
            set: Some(e.set.id.clone()),
            icon: tool.icon().map(str::to_string),
            callable: false,
        })
    })
}

pub(crate) async fn tool_page(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(name): Path<String>,
) -> Response {
    let Some(found) = find_tool(&state, &who, &name).await else {
        return page::failure(StatusCode::NOT_FOUND, "There is no tool of that name.");
    };
    let sets = all_sets(&state);
    let in_set = match &found.set {
        Some(id) => sets.iter().find(|(s, _)| &s.id == id),
        None => sets.iter().find(|(s, _)| s.tools.contains(&name)),
    };
    let mut icons = Icons::default();
    let icon = icons.take(
        found
            .icon
            .as_deref()
            .or_else(|| in_set.and_then(|(_, i)| i.as_deref())),
    );
    let set = in_set.map(|(s, _)| (s.id.clone(), s.name.clone()));
    let (folder, docs) = match &found.tool {
        ToolRef::Folder(t) => {
            let shadows = state.host.shadowed_by(t);
            (
                Some(FolderView {
                    path: t.dir.display().to_string(),
                    root: t.root.display().to_string(),
                    version: t.manifest.version,
                    language: t.manifest.language.as_str().to_string(),
                    network: t.manifest.network,
                    timeout: t
                        .manifest
                        .timeout
                        .map(|d| format!("{} s", d.as_secs_f64()))
                        .unwrap_or_default(),
                    shadows: shadows.iter().map(|p| p.display().to_string()).collect(),
                }),
                markdown::render(&t.manifest.body),
            )
        }
        ToolRef::Native(_) | ToolRef::Plugin(_) => (None, String::new()),
    };
    let layout = Layout::new(&who.caller, "/catalog", found.title.clone(), icons);
    page::html(
        StatusCode::OK,
        &ToolPage {
            layout,
            badges: badges(found.hints),
            params: params(&found.schema),
            schema: serde_json::to_string_pretty(&found.schema).unwrap_or_default(),
            name,
            title: found.title,
            description: found.description,
            icon,
            set,
            callable: found.callable,
            folder,
            docs,
        },
    )
}

/// MCP's tool annotations, as badges.
fn badges(hints: Option<Hints>) -> Vec<&'static str> {
    let Some(h) = hints else { return Vec::new() };
    let mut out = Vec::new();
    let mut put = |v: Option<bool>, yes, no| {
        if let Some(v) = v {
            out.push(if v { yes } else { no });
        }
    };
    put(h.read_only, "read-only", "writes");
    put(h.destructive, "destructive", "not destructive");
    put(h.idempotent, "idempotent", "not idempotent");
    put(h.open_world, "open world", "closed world");
    out
}

/// The top-level properties of an object schema, required ones first.
fn params(schema: &Value) -> Vec<Param> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out: Vec<Param> = props
        .iter()
        .map(|(name, p)| Param {
            name: name.clone(),
            kind: match p.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" | "),
                _ => "any".into(),
            },
            required: required.contains(&name.as_str()),
            description: p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            default: p.get("default").map(Value::to_string).unwrap_or_default(),
            choices: p
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
        })
        .collect();
    out.sort_by_key(|p| !p.required);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn search_words_must_all_match_somewhere() {
        let w = |q: &str| {
            q.split_whitespace()
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        };
        let fields = ["slow", "Slow Steps", "Counts through steps with a pause"];
        assert!(matches(&w("PAUSE"), &fields));
        assert!(matches(&w("slow pause"), &fields));
        assert!(!matches(&w("slow fetch"), &fields));
        assert!(matches(&w(""), &fields));
    }

    #[test]
    fn schema_rows_and_badges() {
        let schema = json!({"type": "object", "required": ["steps"], "properties": {
            "delay_ms": {"type": "number", "default": 50},
            "steps": {"type": "number", "description": "How many"},
            "mode": {"type": ["string", "null"], "enum": ["a", "b"]}}});
        let p = params(&schema);
        assert_eq!(p[0].name, "steps");
        assert!(p[0].required && !p[1].required);
        let mode = p.iter().find(|p| p.name == "mode").unwrap();
        assert_eq!(
            (mode.kind.as_str(), mode.choices.as_str()),
            ("string | null", "\"a\", \"b\"")
        );
        assert_eq!(
            p.iter().find(|p| p.name == "delay_ms").unwrap().default,
            "50"
        );
        let b = badges(Some(Hints {
            read_only: Some(true),
            open_world: Some(false),
            ..Hints::default()
        }));
        assert_eq!(b, ["read-only", "closed world"]);
    }
}
