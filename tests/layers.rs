//! The layer graph of ARCHITECTURE.md, pinned. Cargo already refuses a cycle (a lower crate
//! cannot name a higher one without the higher one's own dependency on it breaking the
//! build); this test also refuses edges the graph does not have, such as the figures leaf
//! learning about the game.

use std::collections::BTreeMap;

/// Each workspace crate and the workspace crates it may depend on.
const GRAPH: [(&str, &[&str]); 8] = [
    ("game", &[]),
    ("agents", &["dhumbal-game"]),
    ("learn", &["dhumbal-agents", "dhumbal-game"]),
    (
        "runner",
        &["dhumbal-agents", "dhumbal-game", "dhumbal-learn"],
    ),
    ("plots", &[]),
    ("report", &["dhumbal-plots", "dhumbal-runner"]),
    (
        ".",
        &[
            "dhumbal-agents",
            "dhumbal-game",
            "dhumbal-learn",
            "dhumbal-plots",
            "dhumbal-report",
            "dhumbal-runner",
        ],
    ),
    // The Python package: above the command line, whose `main_from` runs scenarios for
    // `dhumbal.run`.
    (
        "python",
        &[
            "dhumbal",
            "dhumbal-agents",
            "dhumbal-game",
            "dhumbal-learn",
            "dhumbal-runner",
        ],
    ),
];

/// The `dhumbal` and `dhumbal-*` names in the `[dependencies]` table of a manifest (not
/// dev-dependencies: tests may use anything).
fn workspace_deps(manifest: &str) -> Vec<String> {
    let mut deps = Vec::new();
    let mut section = String::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if section == "[dependencies]"
            && let Some(name) = line.split(['.', '=', ' ']).next()
            && (name.starts_with("dhumbal-") || name == "dhumbal")
        {
            deps.push(name.to_string());
        }
    }
    deps.sort();
    deps
}

#[test]
fn crates_depend_only_down_the_layer_graph() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut found = BTreeMap::new();
    for (dir, allowed) in GRAPH {
        let path = if dir == "." {
            format!("{root}/Cargo.toml")
        } else {
            format!("{root}/crates/{dir}/Cargo.toml")
        };
        let manifest = std::fs::read_to_string(&path).unwrap();
        let deps = workspace_deps(&manifest);
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            deps, allowed,
            "{path}: its workspace dependencies are not those of the layer graph (ARCHITECTURE.md)"
        );
        found.insert(dir, deps);
    }
    // Every crate of the workspace is in the graph.
    let mut dirs: Vec<String> = std::fs::read_dir(format!("{root}/crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let listed: Vec<String> = GRAPH
        .iter()
        .filter(|(d, _)| *d != ".")
        .map(|(d, _)| d.to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        dirs, listed,
        "a crate under crates/ is missing from the layer graph"
    );
    assert_eq!(found.len(), GRAPH.len());
}
