//! The layer graph of ARCHITECTURE.md, pinned. Cargo already refuses a cycle (a lower crate
//! cannot name a higher one without the higher one's own dependency on it breaking the
//! build); this test also refuses edges the graph does not have, such as the figures leaf
//! learning about the game.

use std::collections::BTreeMap;

/// Each workspace crate and the workspace crates it may depend on.
const GRAPH: [(&str, &[&str]); 14] = [
    ("game", &[]),
    ("agents", &["dhumbal-game"]),
    // Exact best responses on small variants: the engine and the agents' families, nothing of
    // files or threads.
    ("exploit", &["dhumbal-agents", "dhumbal-game"]),
    ("learn", &["dhumbal-agents", "dhumbal-game"]),
    // The statistics: numbers in, numbers out (the game only in its tests' simulations).
    ("stats", &[]),
    // The optimizers of tuning: asked and told numbers, the game's random streams only.
    ("optimize", &["dhumbal-game"]),
    (
        "runner",
        &[
            "dhumbal-agents",
            "dhumbal-game",
            "dhumbal-learn",
            "dhumbal-optimize",
            "dhumbal-stats",
        ],
    ),
    ("plots", &[]),
    (
        "report",
        &["dhumbal-plots", "dhumbal-runner", "dhumbal-stats"],
    ),
    // A study's web table: the study's engine in the runner, the HTTP server here.
    ("serve", &["dhumbal-runner"]),
    (
        ".",
        &[
            "dhumbal-agents",
            "dhumbal-game",
            "dhumbal-learn",
            "dhumbal-plots",
            "dhumbal-report",
            "dhumbal-runner",
            "dhumbal-serve",
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

/// What cargo itself resolves: for each workspace crate (by its directory, `.` for the root),
/// the names of the packages it depends on for building (normal and build dependencies, not
/// dev-dependencies: tests may use anything). Read from `cargo metadata`, so that a
/// dependency written in any of the manifest's forms (a target table, a renamed package, a
/// workspace inheritance) is seen.
fn resolved_deps() -> BTreeMap<String, Vec<String>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = std::process::Command::new(cargo)
        .current_dir(root)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut graph = BTreeMap::new();
    for package in meta["packages"].as_array().unwrap() {
        let manifest = std::path::Path::new(package["manifest_path"].as_str().unwrap());
        let dir = manifest.parent().unwrap().strip_prefix(root).unwrap();
        let dir = match dir.strip_prefix("crates") {
            Ok(sub) => sub.to_string_lossy().into_owned(),
            Err(_) => ".".to_string(),
        };
        let mut deps: Vec<String> = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .map(|d| d["name"].as_str().unwrap().to_string())
            .collect();
        deps.sort();
        deps.dedup();
        graph.insert(dir, deps);
    }
    graph
}

#[test]
fn crates_depend_only_down_the_layer_graph() {
    let resolved = resolved_deps();
    for (dir, allowed) in GRAPH {
        let deps: Vec<&str> = resolved
            .get(dir)
            .unwrap_or_else(|| panic!("crate `{dir}` of the layer graph is not in the workspace"))
            .iter()
            .map(String::as_str)
            .filter(|name| name.starts_with("dhumbal-") || *name == "dhumbal")
            .collect();
        assert_eq!(
            deps, allowed,
            "{dir}: its workspace dependencies are not those of the layer graph (ARCHITECTURE.md)"
        );
    }
    // Every crate of the workspace is in the graph.
    let listed: Vec<&str> = GRAPH.iter().map(|(d, _)| *d).collect();
    for dir in resolved.keys() {
        assert!(
            listed.contains(&dir.as_str()),
            "crate `{dir}` is missing from the layer graph"
        );
    }
}

/// libtorch is loaded by one program, the trainer: no other crate names tch or torch-sys, and
/// `dhumbal-run` is not linked against libtorch (it starts in milliseconds, without the CUDA
/// libraries; ARCHITECTURE.md, "Two executables").
#[test]
fn only_the_trainer_links_libtorch() {
    for (dir, deps) in resolved_deps() {
        let torch: Vec<&String> = deps
            .iter()
            .filter(|name| *name == "tch" || *name == "torch-sys")
            .collect();
        let allowed = matches!(dir.as_str(), "torch" | "trainer");
        assert_eq!(
            !torch.is_empty(),
            allowed,
            "{dir}: only dhumbal-torch and the trainer may depend on tch/torch-sys, found {torch:?}"
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

/// `anyhow` is for the binaries' layer (`src/`, the trainer): a library crate that does not
/// depend on it cannot return its errors, so the compiler keeps the library crates to typed
/// errors (style.md, "Errors"; ARCHITECTURE.md, Invariants).
#[test]
fn only_the_binaries_depend_on_anyhow() {
    for (dir, deps) in resolved_deps() {
        let allowed = matches!(dir.as_str(), "." | "trainer");
        assert!(
            allowed || !deps.iter().any(|name| name == "anyhow"),
            "{dir}: a library crate depends on anyhow; return the crate's typed `Error` instead"
        );
    }
}
