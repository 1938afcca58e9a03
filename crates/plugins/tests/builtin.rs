//! The builtin loader map: every plugin boots (the gated ones when named), every native
//! tool's arguments are described, and bad settings fail boot naming the section.
#![allow(clippy::unwrap_used)]

use toolhost_toolsets::{
    BootError, BootOptions, CorePlugins, Registry, Tools, ToolsetsConfig, undescribed_properties,
};

fn boot(core: CorePlugins, enabled: Option<&str>) -> Result<Registry, BootError> {
    Registry::boot(
        core,
        BootOptions {
            enabled: enabled.map(str::to_string),
            ..BootOptions::default()
        },
    )
}

#[test]
fn the_builtin_map_boots_and_every_native_field_is_described() {
    let core = toolhost_plugins::builtin();
    let gated: Vec<&str> = core.names().filter(|n| !core.is_always_on(n)).collect();
    assert!(!gated.is_empty());
    let r = boot(core.clone(), Some(&gated.join(","))).unwrap();
    assert!(r.tool_set("web").is_some());
    for entry in r.tool_sets() {
        if let Tools::Static(map) = &entry.set.tools {
            for (name, tool) in map.iter() {
                let missing = undescribed_properties(&tool.input_schema());
                assert!(missing.is_empty(), "{name}: no description for {missing:?}");
                assert!(!tool.description().is_empty(), "{name}");
            }
        }
    }
}

#[test]
fn bad_settings_fail_boot_with_a_typed_error_naming_the_section() {
    for (plugin, settings) in [
        ("web", serde_json::json!({ "timeout": "soon" })),
        ("web", serde_json::json!({ "allow_everything": true })),
        ("utilities", serde_json::json!(1)),
    ] {
        let mut config = ToolsetsConfig::default();
        config.plugins.insert(plugin.into(), settings);
        let e = Registry::boot(
            toolhost_plugins::builtin(),
            BootOptions {
                enabled: Some("web".into()),
                config,
                ..BootOptions::default()
            },
        )
        .err()
        .unwrap();
        let BootError::Load { plugin: at, source } = &e else {
            panic!("{e}")
        };
        assert_eq!(at, plugin);
        let text = e.to_string();
        assert!(
            text.starts_with(&format!(
                "plugin `{plugin}` failed to load: [plugins.{plugin}]: "
            )),
            "{text}"
        );
        if plugin == "web" {
            let typed = source
                .downcast_ref::<toolhost_plugins::web::WebLoadError>()
                .unwrap();
            assert!(
                matches!(typed, toolhost_plugins::web::WebLoadError::Settings(_)),
                "{typed}"
            );
        }
    }
}
