//! `schemas/scenario.schema.json` is generated from the scenario types; this test fails when
//! the committed file drifts from them. Regenerate with
//! `UPDATE_SCHEMA=1 cargo test --test schema` (or `dhumbal-run schema > schemas/scenario.schema.json`).

#[test]
fn committed_schema_matches_the_types() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/scenario.schema.json");
    let generated = serde_json::to_string_pretty(&dhumbal::scenario::json_schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/scenario.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test --test schema` and commit it"
    );
}

#[test]
fn every_scenario_starts_with_the_schema_modeline() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let mut stack = vec![std::path::PathBuf::from(root)];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let first = text.lines().next().unwrap_or("");
                assert!(
                    first.starts_with("# yaml-language-server: $schema=")
                        && first.ends_with("schemas/scenario.schema.json"),
                    "{} must start with the yaml-language-server modeline",
                    path.display()
                );
                // The relative path in the modeline must reach the schema.
                let rel = first.trim_start_matches("# yaml-language-server: $schema=");
                assert!(
                    path.parent().unwrap().join(rel).is_file(),
                    "{}: modeline path {rel} does not exist",
                    path.display()
                );
                // And the scenario itself must be valid.
                dhumbal::scenario::load(&path, &Default::default())
                    .unwrap_or_else(|e| panic!("{e}"));
                seen += 1;
            }
        }
    }
    assert!(seen >= 8, "expected the shipped scenarios, found {seen}");
}
