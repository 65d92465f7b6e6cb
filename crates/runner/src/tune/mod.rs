//! Tuning runs of a scenario (`tune:`, docs/tuning.md): an optimizer ([`crate::optimize`])
//! asks for points of the agent's parameter space, each is played on deals of its own against
//! the tuning's opponents, and told back its objective; at the end the recommended point is
//! written as an agent file (`tuned: FILE` seats it). The confirmation against the start is a
//! stage of its own, which the caller runs once the file exists.
//!
//! Every evaluation's deals come from the search's seed and the evaluation's number (an SPSA
//! pair shares its deals), so the search plays the same games, asks the same points and ends
//! at the same parameters on any thread count. Each evaluation is appended to
//! `<output>/tune/<id>/evaluations.jsonl` and synced before the next begins; a resumed search
//! replays the log into a fresh optimizer (which then stands exactly where it stopped) and
//! goes on, so Ctrl-C or a kill loses at most the evaluation in progress.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use polars_core::prelude::{Column, DataFrame, PolarsResult};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use dhumbal_agents::{AgentLog, Recipe, registry};
use dhumbal_game::hash::{SPLITMIX64_GAMMA, splitmix64_mix};

use crate::error::{Doing, Error, Result};
use crate::folder::Refusal;
use crate::optimize::{Dim, Optimizer, Space, ntbea, spsa};
use crate::records::per_row;
use crate::scenario::FINAL_CANDIDATES;
use crate::scenario::{
    AgentDef, Generator, Objective, OptimizerChoice, Scenario, SeatEntry, Stage, Tuning,
};
use crate::tournament::{Lineup, Pulse};
use crate::train::{write_atomic, write_frame, write_json};

pub mod manifest;
mod shard;

pub use manifest::{Manifest, Method, Searched, Status};

/// How to tune.
pub struct TuneOptions {
    pub threads: usize,
    /// Continue the search whose log is in the records folder.
    pub resume: bool,
    /// Tune afresh over an existing agent file or log.
    pub force: bool,
    pub stop: Arc<AtomicBool>,
    /// Play this shard's share of the search's next evaluation (docs/cluster.md): the search
    /// goes on as far as the evaluations on disk take it, and waits for the other shards'
    /// shares where they do not ([`TuneResult::waiting`]).
    pub shard: Option<crate::run::Shard>,
}

/// One evaluation: a point played on the deals of its ask.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The ask it belongs to (its deals), and its place in the ask (SPSA: 0 is θ+, 1 θ−).
    pub ask: u64,
    pub index: usize,
    /// The point, one value per tuned parameter (a choice as its index).
    pub point: Vec<f64>,
    /// The objective: the mean over the evaluation's deals (games) of the agent's result,
    /// each deal counted under all its seatings; and its 95% interval (normal, on the deals).
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Deals (games) it played, before seatings.
    pub deals: u64,
    /// The search's deals so far, this one included.
    pub deals_total: u64,
    /// The recommendation after this evaluation's ask was told (the same for both points of
    /// an SPSA pair).
    pub recommended: Vec<f64>,
    /// 0: the optimizer's search; 1: the final re-evaluation of the best candidates.
    #[serde(default)]
    pub stage: u8,
}

impl Evaluation {
    /// Point `index` of ask `ask` (search stage `stage`) as played: its objective, interval
    /// and deals ([`evaluate`]); the search's totals and recommendation are filled in when
    /// it is recorded.
    fn played(
        (ask, index, stage): (u64, usize, u8),
        point: &[f64],
        (value, ci, deals): (f64, (f64, f64), u64),
    ) -> Evaluation {
        Evaluation {
            ask,
            index,
            point: point.to_vec(),
            value,
            ci_low: ci.0,
            ci_high: ci.1,
            deals,
            deals_total: 0,
            recommended: Vec::new(),
            stage,
        }
    }
}

/// What a tuning reports while it runs (the CLI draws a progress bar).
pub trait TuneReporter: Sync {
    fn start(&self, tuning: &Tuning, done_deals: u64);
    fn evaluated(&self, tuning: &Tuning, eval: &Evaluation, best: &str);
    fn finished(&self, tuning: &Tuning, result: &TuneResult);
}

impl TuneReporter for crate::run::Quiet {
    fn start(&self, _: &Tuning, _: u64) {}
    fn evaluated(&self, _: &Tuning, _: &Evaluation, _: &str) {}
    fn finished(&self, _: &Tuning, _: &TuneResult) {}
}

/// A finished (or stopped) search.
#[derive(Clone, Debug)]
pub struct TuneResult {
    pub id: String,
    pub dir: PathBuf,
    /// The agent file (written only when the search finished).
    pub output: PathBuf,
    pub evaluations: usize,
    pub deals: u64,
    pub stopped: bool,
    /// Played as a shard: the evaluation (ask) whose other shares are not on disk yet, where
    /// the search waits for the next wave of shards.
    pub waiting: Option<u64>,
    pub seconds: f64,
    /// The best point, as `name=value` pairs, and as an agent entry.
    pub best: String,
    pub entry: Value,
}

/// The records' name of the evaluation log.
pub const LOG: &str = "evaluations.jsonl";

/// Runs tuning `i` of the scenario: its search, unless its agent file exists (then it is
/// done, and `None` says so; `--force` searches afresh). An unfinished search's log is
/// continued only with `resume`, replaced only with `force`.
pub fn tune(
    scenario: &Scenario,
    i: usize,
    options: &TuneOptions,
    reporter: &dyn TuneReporter,
) -> Result<Option<TuneResult>> {
    crate::clock::calibrate_in_background();
    let t = &scenario.tunings[i];
    let dir = t.dir(scenario);
    if t.output.exists() && !options.force {
        return Ok(None);
    }
    if dir.join(LOG).exists() && !options.resume && !options.force && options.shard.is_none() {
        return Err(Refusal(format!(
            "{} holds the log of a search of `{}` that has not written {}: `--resume` continues it, `--force` starts afresh",
            dir.display(),
            t.id,
            t.output.display()
        ))
        .into());
    }
    let pool = crate::workers::pool(options.threads)?;
    let r = pool.install(|| search(scenario, t, options, reporter))?;
    reporter.finished(t, &r);
    Ok(Some(r))
}

/// Whether tuning `i` of `scenario` has work left: its agent file is missing, or its search
/// finished here but its confirmation did not (stopped by Ctrl-C or a kill). The check sits
/// beside the code that writes what it looks for.
pub fn needs_work(scenario: &Scenario, i: usize) -> bool {
    let t = &scenario.tunings[i];
    let dir = t.dir(scenario);
    !t.output.exists()
        || (t.confirm.is_some() && dir.join(LOG).exists() && !confirmed(&dir.join("confirm")))
}

/// Where tuning `i` of `scenario` stands on disk ([`progress`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub id: String,
    /// Evaluations in its log (whole asks), and the deals they played, of the budget.
    pub evaluations: usize,
    pub deals: u64,
    pub budget: u64,
    /// Its agent file exists; its confirmation was played to the end.
    pub written: bool,
    pub confirmed: bool,
}

/// Where tuning `i` of `scenario` stands, read from its folder alone (its evaluations log, as
/// a resumed search replays it, and the files it writes last); a log of another search is an
/// error.
pub fn progress(scenario: &Scenario, i: usize) -> Result<Progress> {
    let t = &scenario.tunings[i];
    let dir = t.dir(scenario);
    let log = dir.join(LOG);
    let done = if log.exists() {
        read_log(&log, &hash(t))?
    } else {
        Vec::new()
    };
    Ok(Progress {
        id: t.id.clone(),
        evaluations: done.len(),
        deals: done.iter().map(|e| e.deals).sum(),
        budget: t.budget,
        written: t.output.exists(),
        confirmed: confirmed(&dir.join("confirm")),
    })
}

/// Whether the confirmation stage in `dir` (`tune/<id>/confirm/`) was played to its end and
/// reported (its `stats.json`, the last file a confirmation writes).
pub fn confirmed(dir: &Path) -> bool {
    dir.join("stats.json").is_file()
}

/// The space of a tuning.
pub fn space(t: &Tuning) -> Space {
    Space {
        dims: t.params.iter().map(|p| p.dim.clone()).collect(),
    }
}

/// A fresh optimizer for a tuning.
fn optimizer(t: &Tuning) -> Box<dyn Optimizer> {
    let space = space(t);
    match &t.optimizer {
        OptimizerChoice::Ntbea(s) => ntbea(&space, &t.start, s, t.seed),
        OptimizerChoice::Spsa(s) => spsa(&space, &t.start, s, t.seed),
    }
}

/// The stable hash of what shapes a tuning's search (a log of another search is not resumed):
/// the resolved entry without its confirmation and output, and the text of every file the
/// agent is made from (a script edited between a stop and `--resume` is another search).
pub fn hash(t: &Tuning) -> String {
    let mut shape = t.spec.clone();
    if let Some(m) = shape.as_object_mut() {
        m.remove("confirm");
        m.remove("output");
    }
    let sources = t.start_agent.recipe.sources();
    let text =
        serde_json::to_string(&json!({ "search": shape, "sources": sources })).expect("JSON");
    format!("{:016x}", dhumbal_game::hash::fnv1a(text.as_bytes()))
}

fn search(
    scenario: &Scenario,
    t: &Tuning,
    options: &TuneOptions,
    reporter: &dyn TuneReporter,
) -> Result<TuneResult> {
    let started = Instant::now();
    let dir = t.dir(scenario);
    std::fs::create_dir_all(&dir).doing("cannot create", &dir)?;
    let log_path = dir.join(LOG);
    let hash = hash(t);
    let mut manifest = Manifest::running(t, &hash);
    let (done, log) = match options.shard {
        // Shards read the log; whoever completes an evaluation writes it whole.
        Some(_) if log_path.exists() => (read_log(&log_path, &hash)?, None),
        Some(_) => (Vec::new(), None),
        None => {
            let done = earlier_evaluations(&dir, &log_path, &hash, options.force)?;
            write_json(&dir.join(manifest::FILE), &manifest)?;
            (done, Some(open_log(&log_path, &hash)?))
        }
    };
    let mut opt = optimizer(t);
    reporter.start(t, done.iter().map(|e| e.deals).sum());
    let mut run = Searching {
        t,
        reporter,
        stop: &options.stop,
        shard: options.shard.map(|s| (s, dir.as_path(), hash.as_str())),
        log_path,
        log,
        done,
        evaluations: Vec::new(),
        used: 0,
        ask: 0,
    };
    // The last share of the budget re-evaluates the best candidates on fresh deals: the
    // search's own estimate of its best point is one noisy evaluation or a model's guess.
    let final_budget = t.final_budget();
    let mut flow = run.explore(&mut *opt, t.budget - final_budget)?;
    let mut best = opt.recommend();
    if flow == Flow::Done && final_budget > 0 {
        let candidates = candidates(&best, &run.evaluations);
        flow = run.final_rounds(&candidates, &best, final_budget)?;
        if flow == Flow::Done {
            best = pooled_best(&candidates, &run.evaluations);
        }
    }
    let Searching {
        evaluations, used, ..
    } = run;
    if let Flow::Waiting(ask) = flow {
        // Another shard completes this evaluation; nothing of the search's end is written.
        return Ok(TuneResult {
            id: t.id.clone(),
            dir,
            output: t.output.clone(),
            evaluations: evaluations.len(),
            deals: used,
            stopped: false,
            waiting: Some(ask),
            seconds: started.elapsed().as_secs_f64(),
            best: t.label(&best),
            entry: Value::Null,
        });
    }
    let stopped = flow == Flow::Stopped;
    let entry = agent_entry(t, &best);
    let frame_path = dir.join("evaluations.parquet");
    write_frame(
        &frame_path,
        &mut frame(t, &evaluations).doing("cannot write", &frame_path)?,
    )?;
    if !stopped {
        if let Some(parent) = t.output.parent() {
            std::fs::create_dir_all(parent).doing("cannot create", parent)?;
        }
        write_atomic(
            &t.output,
            (serde_json::to_string_pretty(&entry).doing("cannot write", &t.output)? + "\n")
                .as_bytes(),
        )?;
    }
    manifest.status = if stopped {
        Status::Stopped
    } else {
        Status::Finished
    };
    manifest.result = Some(Searched {
        method: Method::of(&t.optimizer),
        optimizer: opt.describe(),
        evaluations: evaluations.len(),
        deals: used,
        best: entry.clone(),
        best_point: best.clone(),
        best_label: t.label(&best),
        start_point: t.start.clone(),
    });
    write_json(&dir.join(manifest::FILE), &manifest)?;
    if !stopped {
        shard::clear(&dir);
    }
    Ok(TuneResult {
        id: t.id.clone(),
        dir,
        output: t.output.clone(),
        evaluations: evaluations.len(),
        deals: used,
        stopped,
        waiting: None,
        seconds: started.elapsed().as_secs_f64(),
        best: t.label(&best),
        entry,
    })
}

/// The evaluations of an earlier search to replay, its log rewritten to hold only them; none
/// for a new search (with `force`, or no log), whose folder is cleared of the last one's files.
fn earlier_evaluations(
    dir: &Path,
    log_path: &Path,
    hash: &str,
    force: bool,
) -> Result<Vec<Evaluation>> {
    if force || !log_path.exists() {
        // A new search: what the last one left (its records, and the confirmation of the
        // agent file it wrote, which this search replaces) goes.
        for f in [LOG, "evaluations.parquet", manifest::FILE, "report.md"] {
            let _ = std::fs::remove_file(dir.join(f));
        }
        shard::clear(dir);
        let _ = std::fs::remove_dir_all(dir.join("confirm"));
        return Ok(Vec::new());
    }
    let done = read_log(log_path, hash)?;
    // The log as the resumed search continues it: whole asks only (a line cut by a kill,
    // or half an SPSA pair, is played again).
    let mut text = format!("{}\n", json!({ "hash": hash }));
    for e in &done {
        text.push_str(&serde_json::to_string(e).doing("cannot write", log_path)?);
        text.push('\n');
    }
    write_atomic(log_path, text.as_bytes())?;
    Ok(done)
}

/// The evaluation log, opened to append (its first line, the search's hash, written if new).
fn open_log(log_path: &Path, hash: &str) -> Result<File> {
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .doing("cannot write", log_path)?;
    if log.metadata().doing("cannot read", log_path)?.len() == 0 {
        writeln!(log, "{}", json!({ "hash": hash })).doing("cannot write", log_path)?;
        log.sync_data().doing("cannot write", log_path)?;
    }
    Ok(log)
}

/// The agent entry of the point `best`, with the tuning's id and its paths relative to the
/// agent file.
fn agent_entry(t: &Tuning, best: &[f64]) -> Value {
    let mut e = t.entry_at(best);
    if let Some(m) = e.as_object_mut() {
        m.insert("id".into(), Value::from(t.id.clone()));
    }
    // Paths in the file are relative to the file (`tuned:` reads them so).
    let from = absolute(&t.folder);
    let to = absolute(t.output.parent().unwrap_or(Path::new(".")));
    rebase_paths(&mut e, &from, &to, &registry::path_fields());
    e
}

/// How a search's loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// Its budget is spent.
    Done,
    /// On request (Ctrl-C).
    Stopped,
    /// A shard: the other shares of this ask are not on disk yet.
    Waiting(u64),
}

/// A search under way: the log it appends to, the evaluations of an earlier run it replays
/// (`done`), and what it has played so far.
struct Searching<'a> {
    t: &'a Tuning,
    reporter: &'a dyn TuneReporter,
    stop: &'a AtomicBool,
    /// Played as a shard: which, the tuning's folder and the search's hash (its parts'),
    /// and no log open (it is written whole as each evaluation completes).
    shard: Option<(crate::run::Shard, &'a Path, &'a str)>,
    log_path: PathBuf,
    log: Option<File>,
    done: Vec<Evaluation>,
    evaluations: Vec<Evaluation>,
    /// Deals (games) played, and the number of the next ask.
    used: u64,
    ask: u64,
}

impl Searching<'_> {
    /// The optimizer's asks, each replayed from the log or played, and told, while they fit in
    /// `budget`; `true` if stopped on request.
    fn explore(&mut self, opt: &mut dyn Optimizer, budget: u64) -> Result<Flow> {
        let values = |evals: &[Evaluation]| evals.iter().map(|e| e.value).collect::<Vec<_>>();
        loop {
            let points = opt.ask();
            let cost = points.len() as u64 * self.t.batch;
            if self.used + cost > budget {
                return Ok(Flow::Done);
            }
            let evals = match replayed(&self.done, self.ask, &points, &self.log_path)? {
                Some(evals) => {
                    opt.tell(&values(&evals));
                    evals
                }
                None if self.stop.load(Ordering::SeqCst) => return Ok(Flow::Stopped),
                None => {
                    let Some(mut fresh) = self.fresh(&points, 0)? else {
                        return Ok(Flow::Waiting(self.ask));
                    };
                    // The optimizer is told first, so that the log keeps the recommendation after
                    // this ask.
                    opt.tell(&values(&fresh));
                    self.record(&mut fresh, &opt.recommend())?;
                    fresh
                }
            };
            self.evaluations.extend(evals);
            self.used += cost;
            self.ask += 1;
        }
    }

    /// The final re-evaluation of the `candidates` on fresh deals, one round of them after
    /// another while `budget` lasts (`best`: the search's recommendation, which the log keeps);
    /// `true` if stopped on request.
    fn final_rounds(&mut self, candidates: &[Vec<f64>], best: &[f64], budget: u64) -> Result<Flow> {
        let rounds = budget / (self.t.batch * candidates.len() as u64);
        for _ in 0..rounds {
            for c in candidates {
                let points = std::slice::from_ref(c);
                let evals = match replayed(&self.done, self.ask, points, &self.log_path)? {
                    Some(evals) => evals,
                    None if self.stop.load(Ordering::SeqCst) => return Ok(Flow::Stopped),
                    None => {
                        let Some(mut fresh) = self.fresh(points, 1)? else {
                            return Ok(Flow::Waiting(self.ask));
                        };
                        self.record(&mut fresh, best)?;
                        fresh
                    }
                };
                self.used += evals.iter().map(|e| e.deals).sum::<u64>();
                self.evaluations.extend(evals);
                self.ask += 1;
            }
        }
        Ok(Flow::Done)
    }

    /// The evaluations of the next ask (`points`, search stage `stage`), played here; as a
    /// shard, this shard's share played and the whole put together if every share is on
    /// disk (`None`: not yet).
    fn fresh(&self, points: &[Vec<f64>], stage: u8) -> Result<Option<Vec<Evaluation>>> {
        match self.shard {
            None => play(self.t, self.ask, points, stage).map(Some),
            Some((shard, dir, hash)) => {
                shard::share(self.t, dir, hash, (self.ask, stage), points, shard)
            }
        }
    }

    /// Completes fresh evaluations (the deals so far, the recommendation after them), appends
    /// them to the log, synced, and reports them.
    fn record(&mut self, fresh: &mut [Evaluation], best: &[f64]) -> Result<()> {
        let path = &self.log_path;
        let mut total = self.used;
        for e in fresh.iter_mut() {
            total += e.deals;
            e.deals_total = total;
            e.recommended = best.to_vec();
        }
        match &mut self.log {
            Some(log) => {
                for e in fresh.iter() {
                    let line = serde_json::to_string(e).doing("cannot write", path)?;
                    writeln!(log, "{line}").doing("cannot write", path)?;
                }
                log.sync_data().doing("cannot write", path)?;
            }
            None => {
                // A shard: the whole log, the search's hash and every evaluation so far.
                let hash = self.shard.map_or("", |(_, _, h)| h);
                let mut text = format!("{}\n", json!({ "hash": hash }));
                for e in self.evaluations.iter().chain(fresh.iter()) {
                    text.push_str(&serde_json::to_string(e).doing("cannot write", path)?);
                    text.push('\n');
                }
                write_atomic(path, text.as_bytes())?;
            }
        }
        let label = self.t.label(best);
        for e in fresh.iter() {
            self.reporter.evaluated(self.t, e, &label);
        }
        Ok(())
    }
}

/// `path` made absolute against the working folder (no file needs to exist).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    let p = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    // Drop `.` and resolve `..` lexically.
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `target` (absolute) relative to the folder `base` (absolute), with `..` where needed.
fn relative(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<_> = target.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

/// Rewrites every path field (`fields`: `script`, `checkpoint`, ...) of an agent entry, at
/// any depth, from relative to `from` to relative to `to`.
fn rebase_paths(v: &mut Value, from: &Path, to: &Path, fields: &[&str]) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::String(s) if fields.contains(&k.as_str()) => {
                        let p = Path::new(s.as_str());
                        if !p.is_absolute() {
                            let moved = relative(&absolute(&from.join(p)), to);
                            *s = moved.to_string_lossy().replace('\\', "/");
                        }
                    }
                    _ => rebase_paths(x, from, to, fields),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rebase_paths(x, from, to, fields)),
        _ => {}
    }
}

/// Candidates of the final round: the optimizer's recommendation, then the evaluated points
/// with the best mean of their own evaluations, distinct, at most [`FINAL_CANDIDATES`].
fn candidates(recommended: &[f64], evals: &[Evaluation]) -> Vec<Vec<f64>> {
    let mut out = vec![recommended.to_vec()];
    for (p, _) in means(evals, |_| true) {
        if out.len() >= FINAL_CANDIDATES {
            break;
        }
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Each evaluated point with the mean of its evaluations, best first (ties: first evaluated).
fn means(evals: &[Evaluation], keep: impl Fn(&Evaluation) -> bool) -> Vec<(Vec<f64>, f64)> {
    let mut seen: Vec<(Vec<f64>, f64, u64)> = Vec::new();
    for e in evals.iter().filter(|e| keep(e)) {
        match seen.iter_mut().find(|(p, _, _)| *p == e.point) {
            Some((_, sum, n)) => {
                *sum += e.value * e.deals as f64;
                *n += e.deals;
            }
            None => seen.push((e.point.clone(), e.value * e.deals as f64, e.deals)),
        }
    }
    let mut out: Vec<(Vec<f64>, f64)> = seen
        .into_iter()
        .map(|(p, s, n)| (p, s / n.max(1) as f64))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// The candidate with the best mean over its final-round evaluations: its search
/// evaluations are left out, since a candidate was chosen for them (their inclusion would
/// bring the winner's curse back).
fn pooled_best(candidates: &[Vec<f64>], evals: &[Evaluation]) -> Vec<f64> {
    means(evals, |e| e.stage == 1 && candidates.contains(&e.point))
        .into_iter()
        .next()
        .map_or_else(|| candidates[0].clone(), |(p, _)| p)
}

/// Each candidate of the final round with the mean of its final-round evaluations (over their
/// deals), best first: the first is the point the agent file got (none without a final round).
pub fn final_round(evals: &[Evaluation]) -> Vec<(Vec<f64>, f64)> {
    means(evals, |e| e.stage == 1)
}

/// Ask `ask`'s evaluations from the log of a resumed search, if it holds them; they must be of
/// the points the optimizer asks for now.
fn replayed(
    done: &[Evaluation],
    ask: u64,
    points: &[Vec<f64>],
    log: &Path,
) -> Result<Option<Vec<Evaluation>>> {
    let recorded: Vec<&Evaluation> = done.iter().filter(|e| e.ask == ask).collect();
    if recorded.len() != points.len() {
        return Ok(None);
    }
    if recorded.iter().zip(points).any(|(e, p)| e.point != *p) {
        return Err(Refusal(format!(
            "{}: evaluation {ask} was of other parameters than this search asks for; `--force` starts afresh",
            log.display()
        ))
        .into());
    }
    Ok(Some(recorded.into_iter().cloned().collect()))
}

/// Plays `points` on the deals of ask `ask` (stage 0: the search; 1: the final round).
fn play(t: &Tuning, ask: u64, points: &[Vec<f64>], stage: u8) -> Result<Vec<Evaluation>> {
    points
        .iter()
        .enumerate()
        .map(|(index, p)| {
            Ok(Evaluation::played(
                (ask, index, stage),
                p,
                evaluate(t, p, ask)?,
            ))
        })
        .collect()
}

fn read_log(path: &Path, hash: &str) -> Result<Vec<Evaluation>> {
    let text = std::fs::read_to_string(path).doing("cannot read", path)?;
    let mut lines = text.lines();
    let head: Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if head["hash"].as_str() != Some(hash) {
        return Err(Refusal(format!(
            "{} is the log of another search (the `tune:` entry changed since): `--force` starts afresh",
            path.display()
        ))
        .into());
    }
    let mut out = Vec::new();
    for line in lines {
        // A line cut by a kill is the evaluation in progress: it is played again.
        match serde_json::from_str::<Evaluation>(line) {
            Ok(e) => out.push(e),
            Err(_) => break,
        }
    }
    // Keep whole asks only (an SPSA pair cut in half is played again; an ask of the final
    // round has one point).
    if let Some((last, stage)) = out.last().map(|e| (e.ask, e.stage)) {
        let n = out.iter().filter(|e| e.ask == last).count();
        let per = if stage == 1 {
            1
        } else {
            out.iter().filter(|e| e.ask == 0).count().max(1)
        };
        if n < per {
            out.retain(|e| e.ask != last);
        }
    }
    Ok(out)
}

/// The seed of the deals of ask `ask` at lineup `lineup`: a stream of its own, apart from the
/// confirmation's and every other ask's.
fn ask_seed(seed: u64, ask: u64, lineup: usize) -> u64 {
    let a = splitmix64_mix(seed ^ splitmix64_mix(ask.wrapping_add(SPLITMIX64_GAMMA)));
    splitmix64_mix(a ^ (lineup as u64 + 1).wrapping_mul(SPLITMIX64_GAMMA))
}

/// The agent of a tuning at `point`.
pub fn agent_at(t: &Tuning, point: &[f64]) -> Result<AgentDef> {
    let entry = t.entry_at(point);
    let mut cx = Plain {
        rules: Some(t.rules.clone()),
        folder: t.folder.clone(),
        problems: Vec::new(),
        log: Arc::new(AgentLog::default()),
        planned: Vec::new(),
    };
    let recipe: Option<Arc<dyn Recipe>> = registry::resolve(&entry, &mut cx, "");
    match recipe {
        Some(recipe) if cx.problems.is_empty() => Ok(AgentDef {
            id: t.id.clone(),
            kind: recipe.kind(),
            recipe,
            spec: entry,
        }),
        _ => Err(Error::Internal(format!(
            "tuning `{}`: the agent at {} does not resolve: {}",
            t.id,
            t.label(point),
            cx.problems
                .iter()
                .map(|(f, m)| format!("{f}: {m}"))
                .collect::<Vec<_>>()
                .join("; ")
        ))),
    }
}

/// Plays `point` on the deals of ask `ask`; the objective, its interval and the deals played.
pub fn evaluate(t: &Tuning, point: &[f64], ask: u64) -> Result<(f64, (f64, f64), u64)> {
    let def = agent_at(t, point)?;
    let per = t.deals_per_lineup();
    let mut values: Vec<f64> = Vec::with_capacity(t.batch as usize);
    for i in 0..t.lineups.len() {
        values.extend(deal_values(t, &def, point, ask, i, 0..per)?);
    }
    Ok(summarize(&values))
}

/// The objective of each deal `deals` (of the ask's `deals_per_lineup`) of lineup `lineup`
/// at ask `ask`, `def` (the agent at `point`) in seat 0, in deal order: a deal's value is
/// the same whether the lineup's deals are played whole or in slices (each deal draws from
/// its own streams), which lets shards play an ask in shares.
fn deal_values(
    t: &Tuning,
    def: &AgentDef,
    point: &[f64],
    ask: u64,
    lineup: usize,
    deals: std::ops::Range<u64>,
) -> Result<Vec<f64>> {
    let points = matches!(t.objective, Objective::Games)
        || matches!(
            t.rules.variant().scoring,
            dhumbal_game::rules::Scoring::Points(_)
        );
    let mut agents = vec![def.clone()];
    agents.extend(t.lineups[lineup].iter().cloned());
    let stage = Stage {
        name: format!("{}/{ask}", t.id),
        seed: ask_seed(t.seed, ask, lineup),
        generator: Generator::Chacha,
        rules: t.rules.clone(),
        seats: agents.iter().cloned().map(SeatEntry::Agent).collect(),
        seating: t.seating,
        matches: t.deals_per_lineup(),
        session: if points { None } else { Some(1) },
        spec: Value::Null,
        sequential: None,
        gain_test: None,
    };
    let arrangements = stage.arrangements();
    let lineup_play = Lineup::untimed(&stage, agents);
    let (records, halt) = lineup_play.play_chunk(
        deals.start * arrangements..deals.end * arrangements,
        &Pulse::default(),
    );
    match halt {
        None => {}
        Some(crate::tournament::Halt::Failed(e)) => {
            return Err(Error::Play(format!(
                "tuning `{}`, evaluation {ask} at {}: deal {}, seating arrangement {}, round {}: {}",
                t.id,
                t.label(point),
                e.matchno,
                e.arrangement,
                e.round,
                e.error
            )));
        }
        // Its pulse is never told to stop: an evaluation plays to its end.
        Some(crate::tournament::Halt::Stopped) => {
            return Err(Error::Internal(format!(
                "tuning `{}`, evaluation {ask}: stopped",
                t.id
            )));
        }
    }
    let mut values = Vec::with_capacity((deals.end - deals.start) as usize);
    for deal in records.chunks(arrangements as usize) {
        let (mut won, mut rounds, mut coins, mut games_won) = (0u64, 0u64, 0i64, 0u64);
        for unit in deal {
            let mut game_won = false;
            for r in unit.rows().iter().filter(|r| r.slot == 0) {
                rounds += 1;
                won += u64::from(r.won);
                coins += r.coin_delta;
                game_won |= r.game_won;
            }
            games_won += u64::from(game_won);
        }
        values.push(match t.objective {
            Objective::Win => won as f64 / rounds.max(1) as f64,
            Objective::Economic => coins as f64 / rounds.max(1) as f64,
            Objective::Games => games_won as f64 / deal.len().max(1) as f64,
        });
    }
    Ok(values)
}

/// An evaluation's objective from its deals' values (in lineup order, then deal order): the
/// mean, its 95% interval (normal) and the deals.
fn summarize(values: &[f64]) -> (f64, (f64, f64), u64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if n > 1.0 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let half = 1.96 * (var / n).sqrt();
    (mean, (mean - half, mean + half), values.len() as u64)
}

fn frame(t: &Tuning, evals: &[Evaluation]) -> PolarsResult<DataFrame> {
    let mut cols = vec![
        Column::new(
            "evaluation".into(),
            (0..evals.len() as u64).collect::<Vec<_>>(),
        ),
        per_row("ask", evals, |e| e.ask),
        per_row("index", evals, |e| e.index as u64),
        per_row("stage", evals, |e| u32::from(e.stage)),
    ];
    for (k, p) in t.params.iter().enumerate() {
        let name = p.name.as_str().into();
        let chosen = || evals.iter().map(|e| &p.choices[e.point[k] as usize]);
        cols.push(match p.dim {
            // Choices as what they are: whole numbers, numbers, or true/false when every
            // choice is one (`[3, 5, 7]` is a column of integers); else names, and any other
            // value (an agent entry) as its JSON.
            Dim::Choice { .. } if p.choices.iter().all(|c| c.is_i64()) => {
                Column::new(name, chosen().filter_map(Value::as_i64).collect::<Vec<_>>())
            }
            Dim::Choice { .. } if p.choices.iter().all(Value::is_number) => {
                Column::new(name, chosen().filter_map(Value::as_f64).collect::<Vec<_>>())
            }
            Dim::Choice { .. } if p.choices.iter().all(Value::is_boolean) => Column::new(
                name,
                chosen().filter_map(Value::as_bool).collect::<Vec<_>>(),
            ),
            Dim::Choice { .. } => Column::new(
                name,
                chosen()
                    .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
                    .collect::<Vec<_>>(),
            ),
            Dim::Int { .. } => per_row(&p.name, evals, |e| e.point[k] as i64),
            Dim::Real { .. } => per_row(&p.name, evals, |e| e.point[k]),
        });
    }
    cols.extend([
        per_row("objective", evals, |e| e.value),
        per_row("ci_low", evals, |e| e.ci_low),
        per_row("ci_high", evals, |e| e.ci_high),
        per_row("deals", evals, |e| e.deals),
        per_row("deals_total", evals, |e| e.deals_total),
    ]);
    DataFrame::new(evals.len(), cols)
}

/// Resolution of an agent entry apart from a scenario's problem list: paths relative to the
/// scenario's folder, the problems collected as (field, message). The tuning resolver tries
/// each value of a range with it; the search makes each point's agent with it.
pub(crate) use dhumbal_agents::registry::Standalone as Plain;
