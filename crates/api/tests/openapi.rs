//! The committed `docs/openapi.json` is the document the code generates: a change to the
//! API that is not in the committed spec (or the reverse) fails here.
//! `TOOLHOST_UPDATE_OPENAPI=1 cargo test -p toolhost-api --test openapi` rewrites it.

use std::path::Path;

#[test]
fn the_committed_spec_is_the_generated_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let generated = toolhost_api::openapi();
    if std::env::var_os("TOOLHOST_UPDATE_OPENAPI").is_some() {
        if let Err(e) = std::fs::write(&path, &generated) {
            panic!("cannot write {}: {e}", path.display());
        }
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json differs from what the code generates: run \
         `TOOLHOST_UPDATE_OPENAPI=1 cargo test -p toolhost-api --test openapi` and commit it"
    );
    let doc: serde_json::Value = match serde_json::from_str(&generated) {
        Ok(doc) => doc,
        Err(e) => panic!("the generated document is not JSON: {e}"),
    };
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["paths"]["/agents/{id}"]["put"].is_object());
}
