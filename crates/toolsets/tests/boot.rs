//! Boot is strict: every misconfiguration fails with a message naming the plugin.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use toolhost_toolsets::{
    BootError, BootOptions, CorePlugins, Gating, LoadError, Owner, Plugin, PluginSettings,
    Registry, ToolMap, ToolSet, Tools, ToolsetsConfig,
};

fn alpha(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin(
        "alpha",
        vec![set(
            "alpha-tools",
            ToolMap::new().with(echo("alpha_echo", "Echo.")),
        )],
    ))
}
fn beta(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin(
        "beta",
        vec![set(
            "beta-tools",
            ToolMap::new().with(echo("beta_echo", "Echo.")),
        )],
    ))
}
fn beta_dup(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin(
        "beta",
        vec![set("alpha-tools", ToolMap::new().with(echo("x", "Echo.")))],
    ))
}
fn future_api(_: &PluginSettings) -> Result<Plugin, LoadError> {
    let mut p = plugin("future", vec![]);
    p.api_version = 99;
    Ok(p)
}
fn ancient_api(_: &PluginSettings) -> Result<Plugin, LoadError> {
    let mut p = plugin("ancient", vec![]);
    p.api_version = 0;
    Ok(p)
}
fn bad_id(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin("badid", vec![set("Bad_Id", ToolMap::new())]))
}
fn bad_tool(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin(
        "badtool",
        vec![set(
            "ok-id",
            ToolMap::new().with(echo("has space", "Echo.")),
        )],
    ))
}
fn long_tool(_: &PluginSettings) -> Result<Plugin, LoadError> {
    let name = "n".repeat(65);
    Ok(plugin(
        "longtool",
        vec![set("ok-id", ToolMap::new().with(echo(&name, "Echo.")))],
    ))
}
fn failing(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Err("the database is not configured".into())
}
fn misnamed(_: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin("something-else", vec![]))
}
fn settings_echo(s: &PluginSettings) -> Result<Plugin, LoadError> {
    let id = s["set_id"].as_str().unwrap_or("default-id").to_string();
    Ok(plugin("configured", vec![set(&id, ToolMap::new())]))
}

fn boot(core: CorePlugins, enabled: Option<&str>) -> Result<Registry, BootError> {
    Registry::boot(
        core,
        BootOptions {
            enabled: enabled.map(str::to_string),
            ..BootOptions::default()
        },
    )
}

fn err(core: CorePlugins, enabled: Option<&str>) -> String {
    match boot(core, enabled) {
        Ok(_) => panic!("boot should fail"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn gated_plugins_load_only_when_named() {
    let core = || {
        CorePlugins::new()
            .always_on("alpha", alpha)
            .gated("beta", beta)
    };
    let r = boot(core(), None).unwrap();
    assert!(r.tool_set("alpha-tools").is_some());
    assert!(r.tool_set("beta-tools").is_none());
    let gating: Vec<_> = r
        .plugins()
        .iter()
        .map(|p| (p.name.as_str(), p.gating))
        .collect();
    assert_eq!(
        gating,
        [("alpha", Gating::AlwaysOn), ("beta", Gating::Disabled)]
    );
    assert_eq!(
        r.find_in_disabled(|s| s.id == "beta-tools"),
        Some(("beta".to_string(), "beta-tools".to_string()))
    );

    let r = boot(core(), Some(" beta , ")).unwrap();
    assert!(r.tool_set("beta-tools").is_some());
    assert_eq!(r.plugins()[1].gating, Gating::Enabled);
}

#[test]
fn always_on_plugin_named_in_the_env_var_fails() {
    let core = CorePlugins::new().always_on("alpha", alpha);
    let e = err(core, Some("alpha"));
    assert!(e.contains("plugin `alpha` is always on"), "{e}");
}

#[test]
fn unknown_plugin_name_fails() {
    let core = CorePlugins::new()
        .always_on("alpha", alpha)
        .gated("beta", beta);
    let e = err(core, Some("beta,gamma"));
    assert!(e.contains("`gamma`, which is not a core plugin"), "{e}");
    assert!(e.contains("alpha, beta"), "lists the known plugins: {e}");
}

#[test]
fn api_version_outside_the_window_fails() {
    let e = err(CorePlugins::new().always_on("future", future_api), None);
    assert!(
        e.contains("plugin `future` 0.1.0 targets plugin API v99"),
        "{e}"
    );
    let e = err(
        CorePlugins::new().gated("ancient", ancient_api),
        Some("ancient"),
    );
    assert!(
        e.contains("plugin `ancient` 0.1.0 targets plugin API v0"),
        "{e}"
    );
}

#[test]
fn duplicate_set_id_names_both_owners() {
    let core = CorePlugins::new()
        .always_on("alpha", alpha)
        .gated("beta", beta_dup);
    let e = err(core, Some("beta"));
    assert_eq!(
        e,
        "tool set id `alpha-tools` is contributed twice: by plugin `alpha` and by plugin `beta`"
    );
    // A tool root whose set id clashes with a plugin's.
    let e = Registry::boot(
        CorePlugins::new().always_on("alpha", alpha),
        BootOptions {
            extra_sets: vec![(
                ToolSet::new("alpha-tools", "x", "x", "x", Tools::Static(ToolMap::new())),
                Owner::Folder {
                    root: "/srv/tools".into(),
                },
            )],
            ..BootOptions::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("by plugin `alpha` and by tool root /srv/tools"),
        "{e}"
    );
}

#[test]
fn invalid_set_id_fails() {
    let e = err(CorePlugins::new().always_on("badid", bad_id), None);
    assert!(
        e.contains("plugin `badid`: tool set id `Bad_Id` is not kebab-case"),
        "{e}"
    );
}

#[test]
fn invalid_tool_name_fails() {
    let e = err(CorePlugins::new().always_on("badtool", bad_tool), None);
    assert!(
        e.contains("plugin `badtool`, tool set `ok-id`: tool name `has space`"),
        "{e}"
    );
    let e = err(CorePlugins::new().always_on("longtool", long_tool), None);
    assert!(e.contains("plugin `longtool`"), "{e}");
}

#[test]
fn loader_failure_and_misnamed_manifest_fail() {
    let e = err(CorePlugins::new().always_on("failing", failing), None);
    assert_eq!(
        e,
        "plugin `failing` failed to load: the database is not configured"
    );
    let e = err(CorePlugins::new().always_on("misnamed", misnamed), None);
    assert!(
        e.contains("`misnamed` returned a plugin named `something-else`"),
        "{e}"
    );
}

#[test]
fn settings_reach_the_plugin_and_unknown_sections_fail() {
    let mut config = ToolsetsConfig::default();
    config.plugins.insert(
        "configured".into(),
        serde_json::json!({"set_id": "from-config"}),
    );
    let r = Registry::boot(
        CorePlugins::new().always_on("configured", settings_echo),
        BootOptions {
            config: config.clone(),
            ..BootOptions::default()
        },
    )
    .unwrap();
    assert!(r.tool_set("from-config").is_some());

    config.plugins.insert("nope".into(), serde_json::json!({}));
    let e = Registry::boot(
        CorePlugins::new().always_on("configured", settings_echo),
        BootOptions {
            config,
            ..BootOptions::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("[plugins.nope]"), "{e}");
}

#[derive(serde::Deserialize, Default, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
struct Typed {
    set_id: String,
    #[serde(with = "toolhost_spec::seconds::secs")]
    timeout: std::time::Duration,
}

#[test]
fn typed_settings_default_when_absent_and_name_the_section_when_wrong() {
    let absent: Typed = toolhost_toolsets::settings("typed", &serde_json::Value::Null).unwrap();
    assert_eq!(absent, Typed::default());
    let given: Typed =
        toolhost_toolsets::settings("typed", &serde_json::json!({"set_id": "x", "timeout": 1.5}))
            .unwrap();
    assert_eq!(given.timeout, std::time::Duration::from_millis(1500));
    let e =
        toolhost_toolsets::settings::<Typed>("typed", &serde_json::json!({"nope": 1})).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("[plugins.typed]: unknown field `nope`"),
        "{e}"
    );
    let e = toolhost_toolsets::settings::<Typed>("typed", &serde_json::json!({"timeout": -1}))
        .unwrap_err();
    assert!(e.to_string().contains("non-negative"), "{e}");
}
