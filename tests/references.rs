//! Every reference resolves from a clone: no tracked file outside `.ci/` (the CI's own entry
//! point, which runs beside a folder a clone does not have) may point at the folder `shared`
//! beside the checkout, or at any path inside a folder named so (the two strings of
//! [`needles`]). The paper and its public code are cited in docs/paper-code.md instead.
//!
//! The files are those `git ls-files` lists (tracked, and new files not ignored); outside a
//! git checkout (a source tarball, say) the test is skipped, saying so.

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The forbidden strings, spelt in pieces so that this file does not contain them.
fn needles() -> [String; 2] {
    [format!("../{}", "shared"), format!("{}/", "shared")]
}

/// Every tracked file (relative paths), or None outside a git checkout.
fn tracked() -> Option<Vec<String>> {
    let out = Command::new("git")
        // Tracked files and new ones not ignored (what the next commit may add).
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(ROOT)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// `(path, line number, line)` of every line of the tracked files outside `.ci/` that holds
/// a forbidden string.
fn offenders(files: &[String]) -> Vec<(String, usize, String)> {
    let needles = needles();
    let mut found = Vec::new();
    for path in files.iter().filter(|p| !p.starts_with(".ci/")) {
        // A file deleted in the working tree but not yet in the index has nothing to check.
        let Ok(bytes) = std::fs::read(Path::new(ROOT).join(path)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                found.push((path.clone(), i + 1, line.trim().chars().take(160).collect()));
            }
        }
    }
    found
}

#[test]
fn no_tracked_file_points_outside_the_clone() {
    let Some(files) = tracked() else {
        eprintln!("references: not a git checkout (or no git): skipped, nothing to list");
        return;
    };
    assert!(
        files.iter().any(|f| f == "README.md"),
        "git ls-files did not list README.md: {} files",
        files.len()
    );
    let found = offenders(&files);
    let list: Vec<String> = found
        .iter()
        .map(|(p, n, l)| format!("  {p}:{n}: {l}"))
        .collect();
    assert!(
        found.is_empty(),
        "{} line(s) of tracked files point at `../{s}` or `{s}/`, which a clone does not have \
         (cite the paper through docs/paper-code.md; use e.g. /scratch/... as an example path):\n{}",
        found.len(),
        list.join("\n"),
        s = "shared",
    );
}

/// The check itself finds what it looks for (so that a silent pass means something).
#[test]
fn the_check_finds_a_reference() {
    let dir = std::env::temp_dir().join(format!("dhumbal-references-{}", std::process::id()));
    std::fs::create_dir_all(dir.join(".ci")).unwrap();
    let bad = format!("see ../{}/seeds/000.txt\n", "shared");
    std::fs::write(dir.join("a.md"), &bad).unwrap();
    std::fs::write(dir.join(".ci/run"), &bad).unwrap();
    // offenders() reads relative to ROOT, so give it absolute paths through a relative join.
    let rel = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let found = offenders(&[rel("a.md"), ".ci/run".to_string()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, 1);
}
