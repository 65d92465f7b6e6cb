//! The records of every shipped scenario, pinned. Each stage's `rounds.csv`, with its
//! `decision_ns` field blanked (a measurement, not a result), hashes (64-bit FNV-1a) to the
//! digest kept in `tests/fixtures/records.json`. A change of structure must leave them all
//! unchanged; a change that means to change results updates the fixture on purpose.
//!
//! - `cargo test --test records`: every scenario under `scenarios/` at 3 deals (or games) per
//!   stage.
//! - `DHUMBAL_RECORDS_FULL=1 cargo test --release --test records`: at the scenarios' own
//!   sizes (minutes).
//! - `DHUMBAL_RECORDS_BIN=path/to/dhumbal-run`: the records of another build (an older
//!   commit, say) instead of this one; with `DHUMBAL_RECORDS_BLESS=1` they are written to
//!   the fixture instead of compared, which is how the fixture is made from a build that is
//!   known to be right.
//! - `DHUMBAL_RECORDS_ONLY=scenarios/a.yaml,scenarios/b.yaml`: only these scenarios (with
//!   `DHUMBAL_RECORDS_BLESS=1`, their digests replace theirs in the fixture and the others'
//!   stay), so that a new scenario's full-size digests can be added without playing them all.
//!
//! The quick and the full lists name the same stages, which a test that plays nothing checks:
//! a new scenario blessed at one size only fails it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const FIXTURE: &str = "tests/fixtures/records.json";
/// Deals (coins) or games (points) per stage in the quick check, rounded up to whole
/// sessions.
const SMALL: u64 = 3;

/// Every `.yaml` under `scenarios/`, as paths relative to the repository, sorted.
fn scenarios() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                out.push(path);
            }
        }
    }
    let root = Path::new(ROOT);
    let mut found = Vec::new();
    walk(&root.join("scenarios"), &mut found);
    let mut names: Vec<String> = found
        .iter()
        .map(|p| {
            p.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    // Training-only, tuning-only and exploit-only files (a `train:`, `tune:` or `exploit:`
    // section and no stages) make agents or measurements and play no stage of their own;
    // tests/learning.rs, tests/tuning.rs and tests/exploit.rs cover them. Those that
    // also play stages seat the checkpoints and agent files shipped beside them, so their
    // records are pinned like any other's. A study (`study:`) is served to people, not run;
    // tests/serve.rs plays its games.
    names.retain(|n| {
        std::fs::read_to_string(root.join(n)).is_ok_and(|t| {
            !t.contains("\nstudy:")
                && (!(t.contains("\ntrain:") || t.contains("\ntune:") || t.contains("\nexploit:"))
                    || t.contains("\nstages:")
                    || t.contains("\nagents:"))
        })
    });
    names.sort();
    names
}

/// FNV-1a of the CSV text with every line's `decision_ns` (the third field from the end:
/// only booleans follow it, so names with commas cannot shift it) left empty.
fn digest(csv: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    };
    for (i, line) in csv.split_inclusive(|&b| b == b'\n').enumerate() {
        let commas: Vec<usize> = line
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b',')
            .map(|(i, _)| i)
            .collect();
        if i == 0 || commas.len() < 3 {
            eat(line);
            continue;
        }
        let (start, end) = (commas[commas.len() - 3], commas[commas.len() - 2]);
        eat(&line[..=start]);
        eat(&line[end..]);
    }
    format!("{h:016x}")
}

/// Every stage's digest of one scenario run into a fresh folder: `"<scenario>"` for a
/// single-stage file, `"<scenario>#<stage>"` for each stage of a staged one.
fn run(bin: &Path, scenario: &str, full: bool) -> BTreeMap<String, String> {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin);
    cmd.current_dir(ROOT)
        .arg(scenario)
        .arg("--out")
        .arg(out.path())
        .args(["--no-report", "--threads", "2"]);
    if writes_csv_when_asked(bin) {
        // Older builds wrote rounds.csv by default; later ones write it when asked.
        cmd.arg("--csv");
    }
    if !full {
        // `--rounds` must be whole sessions in every stage.
        let parsed = dhumbal::scenario::load(
            &Path::new(ROOT).join(scenario),
            &dhumbal::scenario::Overrides::default(),
        )
        .unwrap();
        let session = parsed
            .stages
            .iter()
            .map(|s| u64::from(s.session.unwrap_or(1)))
            .fold(1, |a, b| a * b / gcd(a, b));
        cmd.args([
            "--rounds",
            &SMALL
                .div_ceil(session)
                .max(1)
                .saturating_mul(session)
                .to_string(),
        ]);
    }
    let result = cmd.output().unwrap();
    assert!(
        result.status.success(),
        "{scenario}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let mut digests = BTreeMap::new();
    let mut dirs = vec![out.path().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "rounds.csv") {
                let stage = dir.strip_prefix(out.path()).unwrap().to_string_lossy();
                let key = if stage.is_empty() {
                    scenario.to_string()
                } else {
                    format!("{scenario}#{stage}")
                };
                digests.insert(key, digest(&std::fs::read(&path).unwrap()));
            }
        }
    }
    assert!(!digests.is_empty(), "{scenario}: no rounds.csv written");
    digests
}

/// The longest session of a scenario's stages, in rounds (1 for stages of single rounds or
/// games).
fn longest_session(scenario: &str) -> u32 {
    dhumbal::scenario::load(
        &Path::new(ROOT).join(scenario),
        &dhumbal::scenario::Overrides::default(),
    )
    .map_or(1, |parsed| {
        parsed
            .stages
            .iter()
            .map(|s| s.session.unwrap_or(1))
            .max()
            .unwrap_or(1)
    })
}

/// Whether `bin` has the `--csv` option (builds before it wrote `rounds.csv` always).
fn writes_csv_when_asked(bin: &Path) -> bool {
    let help = Command::new(bin).args(["run", "--help"]).output().unwrap();
    String::from_utf8_lossy(&help.stdout).contains("--csv")
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[test]
fn shipped_scenarios_keep_their_records() {
    let bin = std::env::var_os("DHUMBAL_RECORDS_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_dhumbal-run")),
        PathBuf::from,
    );
    let full = std::env::var_os("DHUMBAL_RECORDS_FULL").is_some();
    let size = if full { "full" } else { "small" };
    // As many scenarios at a time as there are cores: several play one long session (the
    // paper's 1,024-round ones), which one thread plays whatever `--threads` says. The longest
    // sessions are taken first (the queue is popped from its end), so that none is left to
    // run alone at the end.
    let only: Option<Vec<String>> = std::env::var("DHUMBAL_RECORDS_ONLY")
        .ok()
        .map(|list| list.split(',').map(|s| s.trim().to_string()).collect());
    let mut queue = scenarios();
    if let Some(only) = &only {
        for name in only {
            assert!(
                queue.contains(name),
                "DHUMBAL_RECORDS_ONLY: {name} is not a shipped scenario (paths as \
                 `scenarios/...yaml`, comma-separated)"
            );
        }
        queue.retain(|s| only.contains(s));
    }
    queue.sort_by_cached_key(|scenario| longest_session(scenario));
    let queue = std::sync::Mutex::new(queue);
    let got = std::sync::Mutex::new(BTreeMap::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let Some(scenario) = queue.lock().unwrap().pop() else {
                        return;
                    };
                    let digests = run(&bin, &scenario, full);
                    got.lock().unwrap().extend(digests);
                }
            });
        }
    });
    let got = got.into_inner().unwrap();
    let path = Path::new(ROOT).join(FIXTURE);
    let mut fixture: serde_json::Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    // The stages of the scenarios played: all of them, or those DHUMBAL_RECORDS_ONLY names.
    let played = |stage: &str| {
        only.as_ref().is_none_or(|o| {
            o.iter()
                .any(|s| stage.split('#').next() == Some(s.as_str()))
        })
    };
    if std::env::var_os("DHUMBAL_RECORDS_BLESS").is_some() {
        let mut kept: BTreeMap<String, String> =
            serde_json::from_value(fixture[size].clone()).unwrap_or_default();
        kept.retain(|stage, _| !played(stage));
        kept.extend(got);
        fixture[size] = serde_json::to_value(&kept).unwrap();
        let text = serde_json::to_string_pretty(&fixture).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want: BTreeMap<String, String> = serde_json::from_value(fixture[size].clone())
        .unwrap_or_else(|_| panic!("{FIXTURE} has no `{size}` digests"));
    let mut problems = Vec::new();
    for (stage, digest) in &got {
        match want.get(stage) {
            Some(w) if w == digest => {}
            Some(w) => problems.push(format!(
                "{stage}: records changed ({w} before, {digest} now)"
            )),
            None => problems.push(format!(
                "{stage}: not in {FIXTURE}; a new scenario needs its digest \
                 (DHUMBAL_RECORDS_BLESS=1 cargo test --test records, then review the diff)"
            )),
        }
    }
    for stage in want.keys().filter(|s| played(s) && !got.contains_key(*s)) {
        problems.push(format!("{stage}: in {FIXTURE} but no longer written"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The full-size digests name every stage the quick ones do (and no other), so that a new
/// scenario cannot be pinned at the quick size only: nothing is played.
#[test]
fn the_full_size_fixture_covers_every_stage_of_the_quick_one() {
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(ROOT).join(FIXTURE)).unwrap())
            .unwrap();
    let keys = |size: &str| -> std::collections::BTreeSet<String> {
        fixture[size]
            .as_object()
            .unwrap_or_else(|| panic!("{FIXTURE} has no `{size}` digests"))
            .keys()
            .cloned()
            .collect()
    };
    let (small, full) = (keys("small"), keys("full"));
    let only_small: Vec<&String> = small.difference(&full).collect();
    let only_full: Vec<&String> = full.difference(&small).collect();
    assert!(
        only_small.is_empty() && only_full.is_empty(),
        "{FIXTURE}: the quick and full-size digests differ.\nOnly quick ({}): {only_small:?}\n\
         Only full ({}): {only_full:?}\nPin the missing size: DHUMBAL_RECORDS_FULL=1 \
         DHUMBAL_RECORDS_BLESS=1 DHUMBAL_RECORDS_ONLY=<the scenarios> cargo test --release \
         --test records shipped, then review the diff",
        only_small.len(),
        only_full.len()
    );
}
