//! A results folder and the rules for touching it: a run never writes over another run's
//! results unless asked (`--force`), and keeps a copy of everything it read (`source/`), so
//! that the folder alone can be audited and rerun to the same records (`dhumbal-run rerun`).
//!
//! ```text
//! DIR/manifest.json        what ran, how fast (written when the run ends)
//! DIR/progress.json        how far the run is, after every part
//! DIR/shards/I-of-N.json   the same for each shard of a study played by several machines
//! DIR/source/run.json      program version, command-line overrides, inputs and their hashes,
//!                          the resolved scenario (written before the first round)
//! DIR/source/<file>.yaml   the scenario as written, byte for byte
//! DIR/source/...           every file it names (Rhai scripts), at the same relative paths
//! DIR/scripts.log          what scripts printed
//! DIR/<stage>/             records (`rounds/`, a Parquet dataset), summary and report of each
//!                          stage (DIR itself without stages), and its traced deals (`traces/`)
//! ```

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::{Doing, Result};
use crate::scenario::Scenario;

/// Files a run writes at the top of its folder.
const RUN_FILES: &[&str] = &[
    "manifest.json",
    "progress.json",
    "progress.json.tmp",
    "scripts.log",
    "shards",
];
/// Files and folders a run writes in a stage's folder (the top folder when unstaged).
const STAGE_FILES: &[&str] = &[
    crate::dataset::DATASET_DIR,
    crate::dataset::INCOMING_DIR,
    "rounds.csv",
    "rounds.csv.tmp",
    "rounds.parquet",
    "summary.csv",
    crate::sequential::DECISION_FILE,
    "sequential.json.tmp",
    crate::exploit::GAIN_TEST_FILE,
    "gain-test.json.tmp",
    "report.md",
    "stats.json",
    "tables",
    "figures",
    crate::trace::TRACES_DIR,
];
/// The folder with the copy of the run's inputs.
pub const SOURCE_DIR: &str = "source";

/// Bad input: what the user asked for cannot be done as asked (the CLI exits with 2). The
/// message says what to do instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// Whether `dir` holds the results of a run (finished or not), and if so, in a few words.
pub fn earlier_run(dir: &Path) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(dir.join("manifest.json"))
        && let Ok(m) = serde_json::from_str::<Value>(&text)
    {
        let rounds = m["rounds"].as_u64().unwrap_or(0);
        let name = m["scenario"]["name"].as_str().unwrap_or("?");
        return Some(format!("a finished run of `{name}` ({rounds} rounds)"));
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("progress.json"))
        && let Ok(p) = serde_json::from_str::<Value>(&text)
    {
        let rounds: u64 = p["stages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| s["totals"]["rounds"].as_u64().unwrap_or(0))
            .sum();
        return Some(format!("an unfinished run ({rounds} rounds on disk)"));
    }
    let has_records = |d: &Path| {
        ["rounds", "rounds.csv", "rounds.parquet"]
            .iter()
            .any(|f| d.join(f).exists())
    };
    if has_records(dir) || stage_dirs(dir).iter().any(|d| has_records(d)) {
        return Some("records of an earlier run".into());
    }
    None
}

/// Sub-folders of `dir` that hold a stage's outputs.
fn stage_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && [
                    "rounds",
                    ".incoming",
                    "rounds.csv",
                    "rounds.parquet",
                    "summary.csv",
                ]
                .iter()
                .any(|f| p.join(f).exists())
        })
        .collect()
}

/// Makes `dir` ready for a run: refuses (a [`Refusal`]) to start over another run's results
/// unless `force`, and with `force` removes what a run writes (only that: other files stay).
/// With `resume`, the folder must hold the unfinished run.
pub fn claim(dir: &Path, resume: bool, force: bool) -> Result<()> {
    if resume {
        if dir.join("shards").is_dir() {
            return Err(Refusal(format!(
                "--resume: {} holds a study played as shards; nothing was changed. Run its \
                 shards again (each plays only what is missing), then `dhumbal-run merge {}`",
                dir.display(),
                dir.display()
            ))
            .into());
        }
        if !dir.join("progress.json").is_file() {
            let what = if dir.is_dir() {
                format!(
                    "{} holds no unfinished run (no progress.json)",
                    dir.display()
                )
            } else {
                format!("{} does not exist", dir.display())
            };
            return Err(Refusal(format!(
                "--resume: {what}; nothing was changed. Resume with the scenario and the --out \
                 of the interrupted run"
            ))
            .into());
        }
        return Ok(());
    }
    if let Some(what) = earlier_run(dir) {
        if !force {
            return Err(Refusal(format!(
                "{} holds {what}; nothing was changed.\n  --resume continues an interrupted \
                 run, --force replaces the earlier results, --out DIR writes somewhere else",
                dir.display()
            ))
            .into());
        }
        clear(dir)?;
    }
    std::fs::create_dir_all(dir).doing("cannot create", dir)
}

/// Makes `dir` ready for a shard of a study: the shards of one study share the folder, so it
/// must be empty or hold a run of the same scenario (same hash in `source/run.json`). The
/// first shard to get there writes `source/` (whole, through a temporary folder: shards
/// starting together write the same copy, and one of them lands).
pub fn join(dir: &Path, scenario: &Scenario, cli: &CommandLine) -> Result<()> {
    let hash = scenario.hash();
    let check = |saved: &SavedRun| -> Result<()> {
        if saved.hash.as_deref() == Some(hash.as_str()) {
            return Ok(());
        }
        let diff = differences(&saved.resolved, &scenario.resolved_json(), 8);
        Err(Refusal(format!(
            "--shard: {} holds a run of another scenario; nothing was changed. The shards of \
             a study share one folder and one scenario. What differs:{}\nUse another --out \
             for this study",
            dir.display(),
            diff.iter().map(|d| format!("\n  {d}")).collect::<String>()
        ))
        .into())
    };
    // Records first, then the source: a shard lands `source/` before it writes a record, so
    // records of this study seen here have their source by the next look. The other order
    // refused a shard whose sibling, starting with it, landed both between the two looks
    // (seen once in the Slurm test: one of four shards of a fresh study failed).
    let records = earlier_run(dir);
    if let Ok(saved) = saved_run(dir) {
        return check(&saved);
    }
    if let Some(what) = records {
        return Err(Refusal(format!(
            "--shard: {} holds {what} without its source/run.json; nothing was changed. Use \
             another --out for this study",
            dir.display()
        ))
        .into());
    }
    std::fs::create_dir_all(dir).doing("cannot create", dir)?;
    let tmp = dir.join(format!(".source-{}.tmp", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    write_sources_into(&tmp, scenario, cli)?;
    if std::fs::rename(&tmp, dir.join(SOURCE_DIR)).is_err() {
        // Another shard's copy landed first.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    check(&saved_run(dir)?)
}

/// Removes what a run writes in `dir`, and nothing else.
fn clear(dir: &Path) -> Result<()> {
    let remove = |p: &Path| -> Result<()> {
        if p.is_dir() {
            std::fs::remove_dir_all(p)
        } else if p.exists() {
            std::fs::remove_file(p)
        } else {
            Ok(())
        }
        .doing("--force: cannot remove", p)
    };
    for stage in stage_dirs(dir) {
        for f in STAGE_FILES {
            remove(&stage.join(f))?;
        }
        // A test's outcome half saved by a killed shard (`sequential.json.<pid>.tmp`).
        for entry in std::fs::read_dir(&stage).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let outcome = [
                crate::sequential::DECISION_FILE,
                crate::exploit::GAIN_TEST_FILE,
            ]
            .iter()
            .any(|f| {
                name.strip_prefix(f)
                    .is_some_and(|rest| rest.starts_with('.'))
            });
            if outcome && name.ends_with(".tmp") {
                remove(&entry.path())?;
            }
        }
        // Gone if it held nothing else.
        let _ = std::fs::remove_dir(&stage);
    }
    for f in RUN_FILES.iter().chain(STAGE_FILES).chain(&[SOURCE_DIR]) {
        remove(&dir.join(f))?;
    }
    Ok(())
}

/// Settings given on the command line that change the records (kept so that a rerun from the
/// folder applies them too).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    pub seed: Option<u64>,
    pub rounds: Option<u64>,
    /// Deals traced besides the scenario's (`--trace`).
    pub trace: Vec<u64>,
}

/// Copies the scenario as written and every file it read into `dir/source/`, and writes
/// `source/run.json`. The scenario keeps its place relative to its inputs, so
/// `dhumbal-run DIR/source/<file>.yaml` finds them as the original did.
pub fn write_sources(dir: &Path, scenario: &Scenario, cli: &CommandLine) -> Result<()> {
    write_sources_into(&dir.join(SOURCE_DIR), scenario, cli)
}

/// [`write_sources`] into the folder `source`.
fn write_sources_into(source: &Path, scenario: &Scenario, cli: &CommandLine) -> Result<()> {
    let text = std::fs::read(&scenario.path).doing("cannot read", &scenario.path)?;
    // Every input once, as the scenario wrote it (the same script may serve several stages).
    let mut inputs: Vec<(String, String)> = Vec::new();
    for stage in &scenario.stages {
        for seat in &stage.seats {
            if let crate::scenario::SeatEntry::Agent(def) = seat {
                for (path, source) in def.recipe.sources() {
                    if !inputs.iter().any(|(p, _)| *p == path) {
                        inputs.push((path, source));
                    }
                }
            }
        }
    }
    // How many levels above the scenario's folder the inputs reach (`../agents/x.rhai`):
    // the copy keeps that many of the scenario's parent folders.
    let up = inputs
        .iter()
        .map(|(p, _)| leading_parents(Path::new(p)))
        .max()
        .unwrap_or(0);
    let scenario_dir = std::fs::canonicalize(&scenario.path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let kept: Vec<String> = scenario_dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let kept = &kept[kept.len().saturating_sub(up)..];
    let file_name = scenario.path.file_name().map_or_else(
        || "scenario.yaml".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut scenario_rel = PathBuf::new();
    for k in kept {
        scenario_rel.push(k);
    }
    let scenario_folder = scenario_rel.clone();
    scenario_rel.push(&file_name);

    let write = |rel: &Path, bytes: &[u8]| -> Result<()> {
        let path = source.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).doing("cannot create", parent)?;
        }
        std::fs::write(&path, bytes).doing("cannot write", &path)
    };
    write(&scenario_rel, &text)?;
    let mut listed = Vec::new();
    for (written, body) in &inputs {
        let copy = if Path::new(written).is_absolute() {
            // Cannot sit at the same relative place: kept for the record, read from where it was.
            let mut p = PathBuf::from("absolute");
            p.extend(Path::new(written).components().filter_map(|c| match c {
                Component::Normal(s) => Some(s),
                _ => None,
            }));
            p
        } else {
            normalize(&scenario_folder.join(written))
        };
        write(&copy, body.as_bytes())?;
        listed.push(json!({
            "path": written,
            "copy": slash(&copy),
            "fnv1a": format!("{:016x}", dhumbal_game::hash::fnv1a(body.as_bytes())),
        }));
    }
    let run = json!({
        "program": "dhumbal-run",
        "version": env!("CARGO_PKG_VERSION"),
        "scenario_file": scenario.path.display().to_string(),
        "scenario": slash(&scenario_rel),
        "scenario_fnv1a": format!("{:016x}", dhumbal_game::hash::fnv1a(&text)),
        "command_line": { "seed": cli.seed, "rounds": cli.rounds, "trace": cli.trace },
        "inputs": listed,
        "scenario_hash": scenario.hash(),
        "resolved": scenario.resolved_json(),
    });
    write(
        Path::new("run.json"),
        &serde_json::to_vec_pretty(&run).expect("JSON"),
    )
}

/// What `source/run.json` says about how to run the folder's scenario again.
pub struct SavedRun {
    /// The copy of the scenario file.
    pub scenario: PathBuf,
    pub command_line: CommandLine,
    /// The resolved scenario the run started with.
    pub resolved: Value,
    /// Its hash (`Scenario::hash`).
    pub hash: Option<String>,
    /// The scenario file the run was started from, as it was named then (relative to the
    /// folder it was started in): what reads the run when the copy cannot be loaded alone
    /// (a network's checkpoint is not copied into `source/`).
    pub original: Option<PathBuf>,
}

/// Reads `dir/source/run.json`; a folder without a readable one is refused (not a results
/// folder of this program).
pub fn saved_run(dir: &Path) -> std::result::Result<SavedRun, Refusal> {
    let path = dir.join(SOURCE_DIR).join("run.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Refusal(format!(
            "{} is not a results folder of this version of dhumbal-run (cannot read {}: {e})",
            dir.display(),
            path.display()
        ))
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Refusal(format!("{} is not valid JSON: {e}", path.display())))?;
    let scenario = v["scenario"]
        .as_str()
        .ok_or_else(|| Refusal(format!("{} names no scenario", path.display())))?;
    Ok(SavedRun {
        scenario: dir.join(SOURCE_DIR).join(scenario),
        command_line: CommandLine {
            seed: v["command_line"]["seed"].as_u64(),
            rounds: v["command_line"]["rounds"].as_u64(),
            trace: v["command_line"]["trace"]
                .as_array()
                .map(|a| a.iter().filter_map(|d| d.as_u64()).collect())
                .unwrap_or_default(),
        },
        resolved: v["resolved"].clone(),
        hash: v["scenario_hash"].as_str().map(str::to_string),
        original: v["scenario_file"].as_str().map(PathBuf::from),
    })
}

/// Where two resolved scenarios differ, one line each (at most `limit`), in the scenario
/// file's words: `seed: 5 there, 9 here`, `stage `league`: deals 2 there, 3 here`, `stage
/// `league`, agent `x`: params.call_bonus 50.0 there, 60.0 here`, `output.trace.deals: [] there,
/// [1] here`, or a script that changed, by name.
pub fn differences(there: &Value, here: &Value, limit: usize) -> Vec<String> {
    let mut found = Differences {
        out: Vec::new(),
        limit,
    };
    found.walk("", "", there, here);
    let mut out = found.out;
    out.truncate(limit);
    out
}

/// The differences found so far, and how many are wanted.
struct Differences {
    out: Vec<String>,
    limit: usize,
}

impl Differences {
    /// The differences of `a` (there) and `b` (here) at `path` under `ctx` (the stage and
    /// agent, in words).
    fn walk(&mut self, ctx: &str, path: &str, a: &Value, b: &Value) {
        if self.out.len() >= self.limit || a == b {
            return;
        }
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => self.objects(ctx, path, x, y),
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (u, v)) in x.iter().zip(y).enumerate() {
                    let (c, p) = element(ctx, path, i, u, v);
                    self.walk(&c, &p, u, v);
                }
            }
            _ => self.out.push(line(
                ctx,
                path,
                format!("{} there, {} here", short(a), short(b)),
            )),
        }
    }

    /// The differences of two mappings: a script that changed by name, a stage's sample size in
    /// the file's words, then every key.
    fn objects(&mut self, ctx: &str, path: &str, x: &Map<String, Value>, y: &Map<String, Value>) {
        let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
        keys.sort();
        keys.dedup();
        // A script whose text changed: named, rather than its hash.
        let script = x.get("script").filter(|s| Some(*s) == y.get("script"));
        if let Some(script) = script
            && x.get("source_fnv1a") != y.get("source_fnv1a")
        {
            let what = format!(
                "the script {} changed since the run began (source_fnv1a {} there, {} here)",
                script,
                short(x.get("source_fnv1a").unwrap_or(&Value::Null)),
                short(y.get("source_fnv1a").unwrap_or(&Value::Null)),
            );
            self.out.push(if ctx.is_empty() {
                what
            } else {
                format!("{ctx}: {what}")
            });
        }
        // A stage (it has a name under `stages`): its sample size in the file's words,
        // deals or games, rather than the sessions (`matches`) it is played as.
        let stage = !ctx.is_empty() && path.is_empty() && x.contains_key("matches");
        if stage {
            self.sample_size(ctx, sample(x), sample(y));
        }
        for k in keys {
            if script.is_some() && k == "source_fnv1a" {
                continue;
            }
            if stage && k == "matches" {
                continue;
            }
            // `records` in the resolved scenario is what the file's `output:` says of them.
            let key = if ctx.is_empty() && path.is_empty() && k == "records" {
                "output"
            } else {
                k.as_str()
            };
            let p = if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            };
            self.walk(
                ctx,
                &p,
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
            );
        }
    }

    /// A stage's sample sizes there (`s`) and here (`t`), if they differ.
    fn sample_size(&mut self, ctx: &str, s: Option<(&str, u64)>, t: Option<(&str, u64)>) {
        if s == t {
            return;
        }
        let word =
            |v: Option<(&str, u64)>| v.map_or("none".to_string(), |(w, n)| format!("{n} {w}"));
        match (s, t) {
            (Some((w, m)), Some((v, n))) if w == v => {
                self.out.push(line(ctx, w, format!("{m} there, {n} here")))
            }
            _ => self.out.push(line(
                ctx,
                "sample size",
                format!("{} there, {} here", word(s), word(t)),
            )),
        }
    }
}

/// One difference: `ctx` (the stage and agent, in words) and `path` (the key under them).
fn line(ctx: &str, path: &str, what: String) -> String {
    match (ctx.is_empty(), path.is_empty()) {
        (true, _) => format!("{path}: {what}"),
        (false, true) => format!("{ctx}: {what}"),
        (false, false) => format!("{ctx}: {path} {what}"),
    }
}

/// A stage's sample size as the scenario gives it: deals (coins, `session` rounds per
/// session) or games (points).
fn sample(stage: &Map<String, Value>) -> Option<(&'static str, u64)> {
    let matches = stage.get("matches")?.as_u64()?;
    Some(match stage.get("session").and_then(Value::as_u64) {
        Some(session) => ("deals", matches * session),
        None => ("games", matches),
    })
}

/// What names the `i`-th element of the array at `path`: a stage by its name, an agent by
/// its id (a seat of `winner_of` by that), anything else by its index.
fn element(ctx: &str, path: &str, i: usize, a: &Value, b: &Value) -> (String, String) {
    let named = |key: &str| {
        b.get(key)
            .or_else(|| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let join = |what: String| {
        if ctx.is_empty() {
            what
        } else {
            format!("{ctx}, {what}")
        }
    };
    match (ctx.is_empty(), path) {
        (true, "stages") => match named("name") {
            Some(name) => (join(format!("stage `{name}`")), String::new()),
            None => (join(format!("stage {}", i + 1)), String::new()),
        },
        (false, "agents") => match (named("id"), named("winner_of")) {
            (Some(id), _) => (join(format!("agent `{id}`")), String::new()),
            (None, Some(of)) => (
                join(format!("seat {} (winner_of `{of}`)", i + 1)),
                String::new(),
            ),
            (None, None) => (join(format!("agent {}", i + 1)), String::new()),
        },
        _ => (ctx.to_string(), format!("{path}[{i}]")),
    }
}

/// A value as JSON, cut to 60 characters.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}...", &s[..s.floor_char_boundary(57)])
    } else {
        s
    }
}

/// The number of `..` a relative path starts with (after removing `.`).
fn leading_parents(p: &Path) -> usize {
    let mut depth: isize = 0;
    let mut most: isize = 0;
    for c in p.components() {
        match c {
            Component::ParentDir => {
                depth -= 1;
                most = most.min(depth);
            }
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    (-most) as usize
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            _ => {}
        }
    }
    out
}

/// A relative path with `/` on every platform (for JSON).
fn slash(p: &Path) -> String {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Compares the records of two runs' stage folders, ignoring the measured `decision_ns`:
/// `Ok(rows)` when equal, else a description of the first difference. Parts are read one at
/// a time (their boundaries may differ, say after a resume), so memory does not grow with the
/// records.
pub fn same_records(a: &Path, b: &Path) -> Result<std::result::Result<usize, String>> {
    let (mut x, mut y) = (RowCursor::new(a)?, RowCursor::new(b)?);
    let mut row = 0usize;
    loop {
        let (left, right) = (x.ready()?, y.ready()?);
        if left == 0 || right == 0 {
            return Ok(if left == right {
                Ok(row)
            } else {
                Err(format!(
                    "{} rows there, {} here",
                    row + left + x.rest(),
                    row + right + y.rest()
                ))
            });
        }
        let n = left.min(right);
        let (fx, fy) = (x.take(n)?, y.take(n)?);
        if fx.get_column_names() != fy.get_column_names() {
            return Ok(Err("the columns differ".into()));
        }
        for (cx, cy) in fx.columns().iter().zip(fy.columns()) {
            let (sx, sy) = (cx.as_materialized_series(), cy.as_materialized_series());
            if !sx.equals_missing(sy) {
                let first = (0..n)
                    .find(|&i| sx.get(i).ok() != sy.get(i).ok())
                    .unwrap_or(0);
                return Ok(Err(format!(
                    "column `{}` differs first at row {}",
                    cx.name(),
                    row + first
                )));
            }
        }
        row += n;
    }
}

/// The records of a stage folder, a part at a time (a `rounds.csv` without parts is one part),
/// `decision_ns` left out and names as text.
struct RowCursor {
    parts: std::vec::IntoIter<crate::dataset::Part>,
    csv: Option<PathBuf>,
    frame: Option<polars_core::prelude::DataFrame>,
    at: usize,
}

impl RowCursor {
    fn new(dir: &Path) -> Result<RowCursor> {
        let has_parts = crate::dataset::Dataset::exists(dir);
        let parts = if has_parts {
            crate::dataset::Dataset::open(dir)?.parts
        } else {
            Vec::new()
        };
        Ok(RowCursor {
            parts: parts.into_iter(),
            csv: (!has_parts).then(|| dir.join("rounds.csv")),
            frame: None,
            at: 0,
        })
    }

    /// Rows left in the current frame, loading the next when it is used up (0: the end).
    fn ready(&mut self) -> Result<usize> {
        use polars_core::prelude::DataType;
        loop {
            if let Some(f) = &self.frame
                && self.at < f.height()
            {
                return Ok(f.height() - self.at);
            }
            let (df, path) = if let Some(part) = self.parts.next() {
                (crate::dataset::read_part(&part.path, None)?, part.path)
            } else if let Some(csv) = self.csv.take() {
                (
                    crate::records::read_csv(&csv, None).doing("cannot read", &csv)?,
                    csv,
                )
            } else {
                self.frame = None;
                return Ok(0);
            };
            let mut df = df.drop("decision_ns").unwrap_or(df);
            for name in ["stage", "agent", "end_reason"] {
                if let Ok(c) = df.column(name)
                    && c.dtype() != &DataType::String
                {
                    let text = c.cast(&DataType::String).doing("cannot read", &path)?;
                    df.with_column(text).doing("cannot read", &path)?;
                }
            }
            self.frame = Some(df);
            self.at = 0;
        }
    }

    /// The next `n` rows (after [`RowCursor::ready`] said there are as many).
    fn take(&mut self, n: usize) -> Result<polars_core::prelude::DataFrame> {
        let f = self.frame.as_ref().expect("ready first");
        let out = f.slice(self.at as i64, n);
        self.at += n;
        Ok(out)
    }

    /// Rows in the parts not loaded yet.
    fn rest(&self) -> usize {
        self.parts
            .as_slice()
            .iter()
            .map(|p| p.meta.rows as usize)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_above_the_scenario() {
        assert_eq!(leading_parents(Path::new("a/b.rhai")), 0);
        assert_eq!(leading_parents(Path::new("../a/b.rhai")), 1);
        assert_eq!(leading_parents(Path::new("./../../a/../b.rhai")), 2);
        assert_eq!(leading_parents(Path::new("a/../../b.rhai")), 1);
        assert_eq!(
            normalize(Path::new("x/./y/../z.rhai")),
            PathBuf::from("x/z.rhai")
        );
    }

    #[test]
    fn differences_name_the_changed_leaf() {
        let a = json!({"stages": [{"agents": [{"source_fnv1a": "aa", "id": "x"}]}], "seed": 1});
        let b = json!({"stages": [{"agents": [{"source_fnv1a": "bb", "id": "x"}]}], "seed": 1});
        assert_eq!(
            differences(&a, &b, 5),
            vec!["stage 1, agent `x`: source_fnv1a \"aa\" there, \"bb\" here"]
        );
        assert!(differences(&a, &a, 5).is_empty());
    }

    #[test]
    fn differences_speak_the_scenario_files_words() {
        let stage = |matches: u64, session: Value, cap: u64| {
            json!({"name": "league", "matches": matches, "session": session, "seed": 5,
                   "rules": {"cap": cap}, "agents": [{"id": "a", "params": {"k": 1}}]})
        };
        let a = json!({"seed": 5, "stages": [stage(2, json!(1), 100)],
                       "records": {"trace": {"deals": []}}});
        let b = json!({"seed": 5, "stages": [stage(3, json!(1), 50)],
                       "records": {"trace": {"deals": [1]}}});
        assert_eq!(
            differences(&a, &b, 8),
            vec![
                "output.trace.deals: [] there, [1] here",
                "stage `league`: deals 2 there, 3 here",
                "stage `league`: rules.cap 100 there, 50 here",
            ]
        );
        // Sessions of 4 rounds: the deals are what the file says.
        let c = json!({"seed": 5, "stages": [stage(2, json!(4), 100)],
                       "records": {"trace": {"deals": []}}});
        assert_eq!(
            differences(&a, &c, 8),
            vec![
                "stage `league`: deals 2 there, 8 here",
                "stage `league`: session 1 there, 4 here"
            ]
        );
        // Point scoring: games.
        let d = json!({"seed": 5, "stages": [stage(3, Value::Null, 100)],
                       "records": {"trace": {"deals": []}}});
        let e = json!({"seed": 5, "stages": [stage(4, Value::Null, 100)],
                       "records": {"trace": {"deals": []}}});
        assert_eq!(
            differences(&d, &e, 8),
            vec!["stage `league`: games 3 there, 4 here"]
        );
    }
}
