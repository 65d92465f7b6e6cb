//! The layer graph of ARCHITECTURE.md, pinned. Cargo already refuses a cycle (a lower crate
//! cannot name a higher one without the higher one's own dependency on it breaking the
//! build); this test also refuses edges the graph does not have, such as the figures leaf
//! learning about the game.

use std::collections::BTreeMap;

/// Each workspace crate and the workspace crates it may depend on.
const GRAPH: [(&str, &[&str]); 10] = [
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
    // Training on libtorch, and the trainer executable (the command line's `train` over it).
    (
        "torch",
        &["dhumbal-agents", "dhumbal-game", "dhumbal-learn"],
    ),
    ("trainer", &["dhumbal", "dhumbal-learn", "dhumbal-torch"]),
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
    deps_where(manifest, |name| {
        name.starts_with("dhumbal-") || name == "dhumbal"
    })
}

/// The names in the `[dependencies]` table of a manifest that `keep` accepts.
fn deps_where(manifest: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
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
            && keep(name)
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

/// libtorch is loaded by one program, the trainer: no other crate names tch or torch-sys, and
/// `dhumbal-run` is not linked against libtorch (it starts in milliseconds, without the CUDA
/// libraries; ARCHITECTURE.md, "Two executables").
#[test]
fn only_the_trainer_links_libtorch() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (dir, _) in GRAPH {
        let path = if dir == "." {
            format!("{root}/Cargo.toml")
        } else {
            format!("{root}/crates/{dir}/Cargo.toml")
        };
        let manifest = std::fs::read_to_string(&path).unwrap();
        let torch = deps_where(&manifest, |name| name == "tch" || name == "torch-sys");
        let allowed = matches!(dir, "torch" | "trainer");
        assert_eq!(
            !torch.is_empty(),
            allowed,
            "{path}: only dhumbal-torch and the trainer may depend on tch/torch-sys, found {torch:?}"
        );
    }
    let bin = env!("CARGO_BIN_EXE_dhumbal-run");
    let Ok(out) = std::process::Command::new("ldd").arg(bin).output() else {
        return; // no ldd on this system: the manifests above still hold
    };
    let libs = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ldd {bin}: {libs}");
    assert!(
        !libs.contains("libtorch") && !libs.contains("libc10") && !libs.contains("libcud"),
        "dhumbal-run links libtorch or CUDA:\n{libs}"
    );
}
