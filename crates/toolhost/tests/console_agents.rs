//! The console's agent form in a real Chromium: `serve --database` with the fixture tools
//! and one toolhost.toml agent, driven by `tests/browser/agents.mjs` (playwright-core on
//! Debian's chromium, both installed by `scripts/test`). Creates an agent with a per-tool
//! deny while the effective-tools panel follows, saves and reloads it, edits it in two
//! tabs (the second save gets the conflict banner with its edits kept, then saves over),
//! exports it as TOML (which toolhost.toml's parser takes) and imports it as a new agent,
//! and checks validation, filter and bulk toggles, the read-only file agent, saving
//! without JavaScript and deleting. The panel's tools are the API's effective tools.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/browser.rs"]
mod browser;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::path::Path;

use api_client::{Api, json_of};
use browser::{assert_budgets, assert_screenshots, run_script, serve_console};
use common::Fixture;
use serde_json::{Value, json};

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn has(list: &Value, text: &str) -> bool {
    names(list).iter().any(|l| l.contains(text))
}

#[test]
fn the_agent_form_in_chromium() {
    let f = Fixture::new();
    let mut config = f.config_text();
    config.push_str(
        "[console]\nwarn_tools_above = 3\n\n[agents.filebot]\nname = \"File bot\"\n\
         grants = [{ tool_set = \"time\" }]\n",
    );
    std::fs::write(f.config(), config).unwrap();
    let (mut server, token, base) = serve_console(&f);
    let result: Value = run_script("agents", &base, &token, &[]);
    let p = &result["pages"];

    // The list and the form's grid.
    assert_eq!(p["list"]["agents"], json!(["filebot"]), "{}", p["list"]);
    assert_eq!(p["list"]["readOnly"], json!(["filebot"]));
    assert_eq!(
        p["form"]["categories"],
        json!(["Folder tools", "Utilities"])
    );
    assert_eq!(p["form"]["panel"], json!([]));

    // Validation beside the fields, the edits kept.
    let invalid = &p["invalid"];
    assert!(
        invalid["name"].as_str().unwrap().contains("required"),
        "{invalid}"
    );
    assert!(
        invalid["icon"]
            .as_str()
            .unwrap()
            .contains("Lucide has no icon"),
        "{invalid}"
    );
    assert_eq!(
        (&invalid["keptId"], &invalid["keptGrant"]),
        (&json!("helper"), &json!(true))
    );

    // The panel: four tools are over the threshold of 3; the denied tool leaves it.
    assert_eq!(p["overThreshold"], true);
    let deny = &p["afterDeny"];
    assert_eq!(
        deny["panel"],
        json!(["convert_timezone", "echo", "get_current_time"])
    );
    assert!(has(&deny["excluded"], "`slow` of `data-tools`"), "{deny}");
    assert_eq!(deny["overThreshold"], false);
    assert_eq!(deny["folder"]["count"], "1/2");
    assert_eq!(
        deny["folder"]["indeterminate"], true,
        "some of the set's tools are on"
    );

    // Filter and bulk toggles: only the row shown.
    assert_eq!(p["filtered"], json!(["convert_weight"]));
    assert_eq!(p["bulk"]["units"]["granted"], true);
    assert_eq!(p["bulk"]["units"]["allowed"], json!(["convert_weight"]));
    assert_eq!(
        p["bulk"]["folder"]["allowed"],
        json!(["echo"]),
        "hidden rows untouched"
    );
    assert_eq!(p["bulkOff"]["allowed"], json!([]));
    let utilities = p["category"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Utilities")
        .unwrap();
    assert_eq!(
        (&utilities["count"], &utilities["indeterminate"]),
        (&json!("1/2"), &json!(true))
    );

    // Saved and reloaded intact.
    assert_eq!(p["saved"], "Saved.");
    let r = &p["reloaded"];
    assert_eq!(
        (&r["name"], &r["icon"]),
        (&json!("Helper"), &json!("#i-clock"))
    );
    assert_eq!(r["folder"]["granted"], true);
    assert_eq!(r["folder"]["allowed"], json!(["echo"]));
    assert_eq!(r["time"]["layer"], "search");
    assert_eq!(r["units"]["granted"], false);
    assert_eq!(
        r["panel"],
        json!(["convert_timezone", "echo", "get_current_time"])
    );

    // The conflict: their change shown, the form's edits kept, then saved over.
    let c = &p["conflict"];
    assert_eq!(c["status"], 409);
    assert!(
        has(&c["theirs"], "Description: now “Changed in the first tab.”"),
        "{c}"
    );
    assert!(has(&c["mine"], "Name: “Helper” → “Helper B”"), "{c}");
    assert!(
        has(&c["mine"], "tool set `time`: `convert_timezone` now denied"),
        "{c}"
    );
    assert_eq!(
        (&c["keptName"], &c["keptDeny"]),
        (&json!("Helper B"), &json!(true))
    );
    assert_eq!(c["takeTheirs"], "/agents/helper");
    let over = &p["savedOver"];
    assert_eq!(over["name"], "Helper B");
    assert_eq!(
        over["description"], "Tells the time and echoes.",
        "mine, over theirs"
    );
    assert_eq!(over["time"]["allowed"], json!(["get_current_time"]));

    // The store has what the form showed, and the API's effective tools are the panel's.
    let api = Api {
        addr: &server.addr,
        token: Some(token.clone()),
    };
    let helper = json_of(&api.request("GET", "/agents/helper", None));
    assert_eq!(helper["version"], 3, "{helper}");
    // Time first: granted before the form was re-rendered with its errors, it kept its
    // place; a grant added later follows (within a layer, order is precedence).
    let grants = &helper["grants"];
    assert_eq!(
        grants,
        &json!([
            {"tool_set": "time", "layer": "search", "default": "allow", "rules": {"convert_timezone": "deny"}},
            {"tool_set": "data-tools", "layer": "session", "default": "allow", "rules": {"slow": "deny"}},
        ]),
        "{helper}"
    );
    let effective = json_of(&api.request("GET", "/agents/helper/effective-tools", None));
    let tools: Vec<&str> = effective["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["echo", "get_current_time"], "{effective}");

    // The export is toolhost.toml; its import made the same agent under a new id.
    let exported = result["exported"].as_str().unwrap();
    assert_eq!(result["exportName"], "agent-helper.toml");
    let parsed: toml::Table = toml::from_str(exported).unwrap();
    let agent = &parsed["agents"]["helper"];
    assert_eq!(agent["name"].as_str(), Some("Helper B"), "{exported}");
    toolhost_host::ConfigFile::parse(Path::new("exported.toml"), exported)
        .unwrap_or_else(|e| panic!("toolhost.toml's parser refuses the export: {e}\n{exported}"));
    assert!(
        p["importError"].as_str().unwrap().contains("line 1"),
        "{}",
        p["importError"]
    );
    let imported = &p["imported"];
    assert!(
        imported["notice"]
            .as_str()
            .unwrap()
            .contains("not saved yet"),
        "{imported}"
    );
    assert_eq!(
        (&imported["id"], &imported["name"]),
        (&json!("helper-copy"), &json!("Helper B"))
    );
    let copy = json_of(&api.request("GET", "/agents/helper-copy", None));
    assert_eq!(&copy["grants"], grants, "{copy}");

    // toolhost.toml's agent is read-only; its panel is its turn.
    let file_agent = &p["fileAgent"];
    assert_eq!(
        (
            &file_agent["readOnly"],
            &file_agent["disabled"],
            &file_agent["save"]
        ),
        (&json!(true), &json!(true), &json!(0))
    );
    assert_eq!(
        file_agent["panel"],
        json!(["convert_timezone", "get_current_time"])
    );

    // Without JavaScript: saved, the unchecked row denied.
    let plain = &p["noScript"];
    assert_eq!(
        plain["units"]["allowed"],
        json!(["convert_distance", "convert_temperature", "convert_weight"])
    );
    assert_eq!(names(&plain["panel"]).len(), 3, "{plain}");

    // The keyboard reaches a set's switch, with the focus visible.
    let keys = &p["keyboard"];
    assert_eq!(keys["granted"], true, "{keys}");
    assert_ne!(keys["outline"], "none", "{keys}");
    assert_eq!(keys["count"], "4/4", "{keys}");

    // Deleted.
    assert_eq!(
        p["afterDelete"],
        json!(["filebot", "helper", "helper-copy"])
    );
    assert_eq!(api.request("GET", "/agents/plain", None).status, 404);

    assert_budgets(&result, 2);
    assert_screenshots(&["agents-list", "agent-form", "agent-conflict"]);
    server.stop();
}
