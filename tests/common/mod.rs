//! What the integration tests share: starting the `dhumbal-run` binary, temporary folders and
//! scenario files, the "ran" and "refused with exit 2" checks, reading what a run wrote,
//! proptest's configuration, how a trace's decision says a choice, and an agent that shows a
//! test every observation.
#![allow(dead_code)]

pub mod browser;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use dhumbal::game::{Agent, Observation};

/// The binary, run from the repository's root (where `scenarios/` is).
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dhumbal-run"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// Runs the binary with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Runs the binary with `args`, requires success and returns what it did.
pub fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    o
}

/// Runs the binary with `args`, requires the refusal of bad input (exit 2, no panic) and
/// returns what it printed.
pub fn refused(args: &[&str]) -> String {
    let o = run(args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
    assert!(
        !t.contains("panicked") && !t.contains("RUST_BACKTRACE"),
        "{args:?}: {t}"
    );
    t
}

/// Everything it printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Requires `text` (what a run printed, a message, a page) to hold `part`, showing all of it
/// when it does not.
#[track_caller]
pub fn has(text: &str, part: &str) {
    assert!(text.contains(part), "no {part:?} in:\n{text}");
}

/// [`has`] for each of `parts`.
#[track_caller]
pub fn has_all(text: &str, parts: &[&str]) {
    for part in parts {
        has(text, part);
    }
}

/// Requires `text` not to hold `part`, showing all of it when it does.
#[track_caller]
pub fn lacks(text: &str, part: &str) {
    assert!(!text.contains(part), "{part:?} in:\n{text}");
}

/// `path` as a command-line argument.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("a path in UTF-8")
}

/// Starts the binary with `args`, every part of the records delayed by `delay_ms` (to be
/// stopped midway), its stdout and stderr made by `output` (`Stdio::null`, `Stdio::piped`).
pub fn slowed(args: &[&str], delay_ms: u64, output: fn() -> Stdio) -> std::process::Child {
    bin()
        .args(args)
        .env("DHUMBAL_RUN_CHUNK_DELAY_MS", delay_ms.to_string())
        .stdout(output())
        .stderr(output())
        .spawn()
        .unwrap()
}

/// Waits until the run writing `out` has `units` units of its first stage on disk.
pub fn wait_for_units(out: &Path, units: u64) {
    let start = std::time::Instant::now();
    loop {
        let done = std::fs::read_to_string(out.join("progress.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|p| p["stages"][0]["units_done"].as_u64())
            .unwrap_or(0);
        if done >= units {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "the run did not progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A temporary folder, removed when dropped.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Writes a scenario file `name` into `dir` and returns its path.
pub fn scenario(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// A fresh temporary folder holding the scenario file `name` (with `body`), and its path.
pub fn tmp_scenario(name: &str, body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tmp();
    let path = scenario(dir.path(), name, body);
    (dir, path)
}

/// Three random agents, as lines of a scenario's `agents:` list.
pub const RANDOM3: &str = "  - kind: random\n  - kind: random\n  - kind: random\n";

/// Writes `script` as `name` in `dir` beside a scenario `s.yaml` (5 deals) that seats it first
/// (its entry on line 5), with `extra` lines under its entry (`params:` on line 6 when given
/// first), then three random agents; the scenario's path.
pub fn script_scenario(dir: &Path, name: &str, script: &str, extra: &str) -> PathBuf {
    std::fs::write(dir.join(name), script).unwrap();
    let body = format!("name: x\nseed: 1\ndeals: 5\nagents:\n  - script: {name}\n{extra}{RANDOM3}");
    scenario(dir, "s.yaml", &body)
}

/// `validate` on `script` seated as `name` by [`script_scenario`] in a fresh temporary folder:
/// refused with exit 2 and no panic; what it said.
pub fn invalid_script(name: &str, script: &str, extra: &str) -> String {
    let dir = tmp();
    let file = script_scenario(dir.path(), name, script, extra);
    refused(&["validate", arg(&file)])
}

/// [`invalid_script`] for a script that fails its rehearsal (no extra settings): the refusal
/// names the seat's line of the scenario file, its entry and the rehearsal.
pub fn failed_rehearsal(name: &str, script: &str) -> String {
    let t = invalid_script(name, script, "");
    has(&t, "s.yaml:5:");
    has(&t, "`agents.0.script`");
    has(&t, "rehearsal");
    t
}

/// Runs the scenario `file` into `out`, with `extra` arguments after those; it must succeed.
pub fn play_into(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![arg(file), "--out", arg(out)];
    args.extend_from_slice(extra);
    ok(&args)
}

/// Writes the scenario `body` as `name` into a fresh temporary folder and plays it into `out`
/// there, with `extra` arguments; it must succeed. The folder, the run's folder and what the
/// run did.
pub fn play_scenario(
    name: &str,
    body: &str,
    extra: &[&str],
) -> (tempfile::TempDir, PathBuf, Output) {
    let (dir, file) = tmp_scenario(name, body);
    let out = dir.path().join("out");
    let o = play_into(&file, &out, extra);
    (dir, out, o)
}

/// Runs the binary with `args` and crash point `at` (`DHUMBAL_RUN_CRASH_AT`, such as
/// `part-placed:4`: it kills itself with SIGKILL there, crates/runner/src/crash.rs); what it did.
pub fn crashing(args: &[&str], at: &str) -> Output {
    let mut cmd = bin();
    cmd.args(args).env("DHUMBAL_RUN_CRASH_AT", at);
    cmd.output().expect("the binary runs")
}

/// [`crashing`] that must reach its crash point (killed, so no exit code).
pub fn killed(args: &[&str], at: &str) {
    let o = crashing(args, at);
    assert_eq!(
        o.status.code(),
        None,
        "{args:?} not killed at {at}: {}",
        text(&o)
    );
}

/// Runs the scenario `file` as two shards, each into a folder of its own under `dir` (`s0`,
/// `s1`), and merges them into `dir/merged` (without a report); the shards' folders and the
/// merged one.
pub fn shards_merged(file: &Path, dir: &Path) -> ([PathBuf; 2], PathBuf) {
    let shards = [0, 1].map(|i| {
        let out = dir.join(format!("s{i}"));
        play_into(file, &out, &["--shard", &format!("{i}/2")]);
        out
    });
    let merged = dir.join("merged");
    let (s0, s1) = (arg(&shards[0]), arg(&shards[1]));
    ok(&["merge", s0, s1, "--out", arg(&merged), "--no-report"]);
    (shards, merged)
}

/// The JSON file at `path`.
pub fn json_file(path: &Path) -> serde_json::Value {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The CSV file at `path` as rows of cells, its header first (cells never hold commas here).
pub fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

/// A JSON array of numbers, as `f64`s.
pub fn f64s(v: &serde_json::Value) -> Vec<f64> {
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    all.iter().map(|x| x.as_f64().expect("a number")).collect()
}

/// A JSON array of whole numbers.
pub fn u64s(v: &serde_json::Value) -> Vec<u64> {
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    all.iter()
        .map(|x| x.as_u64().expect("a whole number"))
        .collect()
}

/// A JSON array of strings.
pub fn strs(v: &serde_json::Value) -> Vec<&str> {
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    all.iter().map(|x| x.as_str().expect("a string")).collect()
}

/// Proptest's configuration for this suite: `cases` cases drawn from a fixed seed, so that a
/// run (in CI or here) tries the same cases every time and a failure reproduces; a failure's
/// shrunk case is also saved beside the test file (`*.proptest-regressions`, kept in git)
/// and tried first from then on. `PROPTEST_RNG_SEED=N` explores other cases.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let mut config = proptest::test_runner::Config::with_cases(cases);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(0x6468_756d_6261_6c21);
    }
    config
}

/// How a trace's decision `d` says the choice `c` (its own `choice`, or a candidate's): the
/// legal choice that index names ("discard 9♥ 9♠", "draw", "call").
pub fn said(d: &serde_json::Value, c: &serde_json::Value) -> String {
    let i = c
        .as_u64()
        .unwrap_or_else(|| panic!("a choice is an index among the legal ones: {c}"));
    d["legal"][i as usize]
        .as_str()
        .unwrap_or_else(|| panic!("no legal choice {i}: {d}"))
        .to_string()
}

/// Inside `impl Agent for T`, the decisions listed (`call`, `discard`, `discard_into`, `pick`)
/// with the trait's signatures: each is its name and its body, `discard_into` naming its
/// buffer as well, and the receiver, the observation and the random source are named first.
/// `decisions!(self, obs, rng => call { Ok(false) } discard_into(into) { ... })`.
macro_rules! decisions {
    ($s:ident, $obs:ident, $rng:ident => $($method:ident $(($into:ident))? $body:block)+) => {$(
        #[allow(unused_variables)]
        fn $method(
            &mut $s,
            $obs: &::dhumbal::game::Observation<'_>,
            $rng: &mut dyn ::dhumbal::rng::RandomSource,
            $($into: &mut ::dhumbal::game::Discard,)?
        ) -> Result<$crate::common::decisions!(@answer $method), ::dhumbal::game::AgentError>
        $body
    )+};
    (@answer call) => { bool };
    (@answer discard) => { ::dhumbal::game::Discard };
    (@answer discard_into) => { () };
    (@answer pick) => { ::dhumbal::game::Pick };
}
pub(crate) use decisions;

/// An agent that plays as `inner` and first shows `look` every observation it is asked to
/// decide on (call, discard and pick alike: `obs.phase` says which), counting them in
/// `looked`. Everything else, `oracle()` and the lifecycle hooks included, is passed on to
/// `inner`.
pub struct Probe<A, F> {
    pub inner: A,
    pub look: F,
    pub looked: u64,
}

impl<A: Agent, F: FnMut(&Observation<'_>) + Send> Probe<A, F> {
    pub fn new(inner: A, look: F) -> Self {
        Probe {
            inner,
            look,
            looked: 0,
        }
    }

    fn show(&mut self, obs: &Observation<'_>) {
        (self.look)(obs);
        self.looked += 1;
    }
}

impl<A: Agent, F: FnMut(&Observation<'_>) + Send> Agent for Probe<A, F> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    dhumbal::game::pass_on_to!(inner);

    decisions!(self, obs, rng =>
        call { self.show(obs); self.inner.call(obs, rng) }
        discard { self.show(obs); self.inner.discard(obs, rng) }
        pick { self.show(obs); self.inner.pick(obs, rng) }
    );
}
