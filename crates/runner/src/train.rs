//! Training runs of a scenario (`train:`): each played by `dhumbal_learn::train` on a rayon
//! pool of the asked size, its records kept as Parquet in `<output>/train/<id>/`:
//! `episodes.parquet` (one row per episode), `evaluations.parquet` (one row per evaluation and
//! opponent) and `manifest.json`. Records are rewritten whole at each checkpoint (temporary
//! file, renamed), so that they always match the checkpoint a resumed training starts from.
//!
//! A checkpoint is never replaced unasked: training into an existing one needs `--resume`
//! (continue it) or `--force` (train afresh).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use polars_core::prelude::{DataFrame, PolarsResult};
use polars_io::prelude::{ParquetReader, ParquetWriter, SerReader};
use serde::{Deserialize, Serialize};

use dhumbal_learn::{Ended, EpisodeRecord, EvalRecord, Event};

use crate::error::{Doing, Error, Result, copy_error};
use crate::folder::Refusal;
use crate::records::per_row;
use crate::resolved::Resolved;
use crate::result_file::{self, Kind, ReadError};
use crate::scenario::{Plan, Scenario, Training};

/// How to train.
pub struct TrainOptions {
    pub threads: usize,
    /// Continue from the checkpoint when there is one.
    pub resume: bool,
    /// Train afresh over an existing checkpoint.
    pub force: bool,
    pub stop: Arc<AtomicBool>,
}

/// What a training reports while it runs (the CLI draws a progress bar).
pub trait TrainReporter: Sync {
    fn start(&self, training: &Training, done: u64);
    fn episodes(&self, training: &Training, done: u64, last: &[EpisodeRecord]);
    fn evaluation(&self, training: &Training, eval: &EvalRecord);
    fn finished(&self, training: &Training, result: &TrainResult);
}

impl TrainReporter for crate::run::Quiet {
    fn start(&self, _: &Training, _: u64) {}
    fn episodes(&self, _: &Training, _: u64, _: &[EpisodeRecord]) {}
    fn evaluation(&self, _: &Training, _: &EvalRecord) {}
    fn finished(&self, _: &Training, _: &TrainResult) {}
}

/// One finished (or stopped) training.
#[derive(Clone, Debug)]
pub struct TrainResult {
    pub id: String,
    pub dir: PathBuf,
    pub checkpoint: PathBuf,
    pub episodes: u64,
    pub stopped: bool,
    pub seconds: f64,
    pub device: String,
    /// The last evaluation against each opponent.
    pub last_evaluations: Vec<EvalRecord>,
}

/// Runs trainings `which` of the scenario, in order.
pub fn train(
    scenario: &Scenario,
    which: &[usize],
    options: &TrainOptions,
    reporter: &dyn TrainReporter,
) -> Result<Vec<TrainResult>> {
    let neural = which
        .iter()
        .any(|&i| scenario.trainings[i].neural().is_some());
    // Networks train where a backend is installed (the trainer executable); the command line
    // of a process without one runs the trainer instead of calling this.
    if neural && !dhumbal_learn::can_train() {
        return Err(Refusal(dhumbal_learn::TrainError::NoTorch.to_string()).into());
    }
    let pool = crate::workers::pool(options.threads)?;
    // Refuse before anything runs.
    for &i in which {
        let t = &scenario.trainings[i];
        writable(t)?;
        if t.output().exists() && !options.resume && !options.force {
            return Err(Refusal(format!(
                "training `{}`: {} exists; --resume continues it, --force trains afresh and replaces it",
                t.id(),
                t.output().display()
            ))
            .into());
        }
    }
    let mut results = Vec::new();
    for &i in which {
        let t = &scenario.trainings[i];
        let r = pool.install(|| one(scenario, t, options, reporter))?;
        let stopped = r.stopped;
        reporter.finished(t, &r);
        results.push(r);
        if stopped {
            break;
        }
    }
    Ok(results)
}

/// Refuses a training whose output (checkpoint or policy table) could not be written at the
/// end: a folder at its path, or a folder that cannot be created or written to. Checked before
/// the first episode, so that hours of training are never lost to a path.
fn writable(t: &Training) -> Result<()> {
    let path = t.output();
    let refuse = |why: String| -> Result<()> {
        Err(Refusal(format!(
            "training `{}`: cannot write its output {}: {why}; fix the path in the `train:` entry",
            t.id(),
            path.display()
        ))
        .into())
    };
    if path.is_dir() {
        return refuse("it is a folder (the path must name a file)".into());
    }
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        return refuse(format!("cannot create the folder {}: {e}", dir.display()));
    }
    // The checkpoint is written to a temporary file beside it, then renamed: the folder must
    // take a new file.
    let probe = dir.join(format!(".dhumbal-write-check-{}", std::process::id()));
    match File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => refuse(format!(
            "the folder {} cannot be written to: {e}",
            dir.display()
        )),
    }
}

fn one(
    scenario: &Scenario,
    t: &Training,
    options: &TrainOptions,
    reporter: &dyn TrainReporter,
) -> Result<TrainResult> {
    let dir = t.dir(scenario);
    std::fs::create_dir_all(&dir).doing("cannot create", &dir)?;
    // A tabular policy learns in seconds and is learned afresh (the same table for the same
    // entry): only networks resume.
    let resume = options.resume && t.output().is_file() && !options.force;
    let mut episodes: Vec<EpisodeRecord> = Vec::new();
    let mut evaluations: Vec<EvalRecord> = Vec::new();
    let started = Instant::now();
    let mut failed: Option<Error> = None;
    let mut done = 0;
    reporter.start(t, 0);
    let mut on_event = |event: Event<'_>| match event {
        Event::Resumed(e) => {
            done = e;
            match read_records(&dir, e) {
                Ok((ep, ev)) => {
                    episodes = ep;
                    evaluations = ev;
                }
                Err(err) => failed = Some(err),
            }
            reporter.start(t, e);
        }
        Event::Episodes(records) => {
            done += records.len() as u64;
            episodes.extend_from_slice(records);
            reporter.episodes(t, done, records);
        }
        Event::Evaluation(r) => {
            evaluations.push(r.clone());
            reporter.evaluation(t, r);
        }
        Event::Checkpoint(e) => {
            let upto: Vec<EpisodeRecord> =
                episodes.iter().filter(|r| r.episode < e).cloned().collect();
            if let Err(err) = write_records(&dir, &upto, &evaluations) {
                failed = Some(err);
            }
        }
    };
    let ended: Result<(u64, bool, String)> = match &t.plan {
        Plan::Neural(plan) => dhumbal_learn::train(plan, resume, &options.stop, &mut on_event)
            .map(|ended| match ended {
                Ended::Finished { episodes, device } => (episodes, false, device),
                Ended::Stopped { episodes } => (episodes, true, String::new()),
            })
            .map_err(|e| match e {
                dhumbal_learn::TrainError::NoTorch
                | dhumbal_learn::TrainError::Device(_)
                | dhumbal_learn::TrainError::Checkpoint(_) => {
                    Refusal(format!("training `{}`: {e}", plan.id)).into()
                }
                source => Error::Training {
                    id: plan.id.clone(),
                    source,
                },
            }),
        Plan::Tabular(plan) => {
            dhumbal_learn::tabular::learn(plan, &options.stop, &mut on_event)
                .map(|l| (l.episodes, l.stopped, "cpu (tabular)".to_string()))
                .map_err(|e| Error::Play(format!("training `{}`: {e}", plan.id)))
                .and_then(|x| {
                    // The table beside the records, so that the folder holds everything its
                    // figures are drawn from.
                    let (from, to) = (&plan.policy, dir.join("policy.csv"));
                    std::fs::copy(from, &to).map_err(copy_error("cannot copy", from, &to))?;
                    Ok(x)
                })
        }
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let (episodes_done, stopped, device) = ended?;
    let seconds = started.elapsed().as_secs_f64();
    let mut last: Vec<EvalRecord> = Vec::new();
    for e in evaluations.iter().rev() {
        if !last.iter().any(|l| l.opponent == e.opponent) {
            last.insert(0, e.clone());
        }
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        program: crate::dataset::PROGRAM.to_string(),
        scenario: scenario.path.display().to_string(),
        training: Resolved::new(t.spec.clone()).doing("cannot write", &dir.join(MANIFEST_FILE))?,
        hash: t.hash().to_string(),
        checkpoint: t.output().display().to_string(),
        episodes: episodes_done,
        finished: !stopped,
        device: device.clone(),
        threads: options.threads,
        seconds_this_run: seconds,
        last_evaluations: last.iter().map(LastEvaluation::of).collect(),
    };
    write_json(&dir.join(MANIFEST_FILE), &manifest)?;
    Ok(TrainResult {
        id: t.id().to_string(),
        dir,
        checkpoint: t.output().to_path_buf(),
        episodes: episodes_done,
        stopped,
        seconds,
        device,
        last_evaluations: last,
    })
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).doing("cannot write", &tmp)?;
    std::fs::rename(&tmp, path).doing("cannot write", path)?;
    Ok(())
}

/// Writes `value` to `path` as pretty JSON, through a temporary file.
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).doing("cannot write", path)?;
    write_atomic(path, text.as_bytes())
}

pub(crate) fn write_frame(path: &Path, df: &mut DataFrame) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut file = File::create(&tmp).doing("cannot write", &tmp)?;
    ParquetWriter::new(&mut file)
        .finish(df)
        .doing("cannot write", &tmp)?;
    file.sync_data().doing("cannot write", &tmp)?;
    std::fs::rename(&tmp, path).doing("cannot write", path)?;
    Ok(())
}

/// The episode records' columns, in order (docs/learning.md describes each).
pub const EPISODE_COLUMNS: &[&str] = &[
    "episode",
    "seat",
    "opponents",
    "reward",
    "win",
    "called",
    "call_success",
    "steps",
    "turns",
    "loss",
    "epsilon",
    "entropy",
];

fn write_records(dir: &Path, episodes: &[EpisodeRecord], evals: &[EvalRecord]) -> Result<()> {
    let n = episodes.len();
    let mut df = DataFrame::new(
        n,
        vec![
            per_row("episode", episodes, |r| r.episode),
            per_row("seat", episodes, |r| r.seat as u64),
            per_row("opponents", episodes, |r| r.opponents.clone()),
            per_row("reward", episodes, |r| r.reward),
            per_row("win", episodes, |r| r.win),
            per_row("called", episodes, |r| r.called),
            per_row("call_success", episodes, |r| r.call_success),
            per_row("steps", episodes, |r| u64::from(r.steps)),
            per_row("turns", episodes, |r| u64::from(r.turns)),
            per_row("loss", episodes, |r| r.loss),
            per_row("epsilon", episodes, |r| r.epsilon),
            per_row("entropy", episodes, |r| r.entropy),
        ],
    )
    .doing("cannot write", &dir.join("episodes.parquet"))?;
    write_frame(&dir.join("episodes.parquet"), &mut df)?;
    let m = evals.len();
    let mut ev = DataFrame::new(
        m,
        vec![
            per_row("episode", evals, |e| e.episode),
            per_row("opponent", evals, |e| e.opponent.clone()),
            per_row("deals", evals, |e| e.deals),
            per_row("rounds", evals, |e| e.rounds),
            per_row("win_rate", evals, |e| e.win_rate),
            per_row("low", evals, |e| e.low),
            per_row("high", evals, |e| e.high),
            per_row("mean_reward", evals, |e| e.mean_reward),
        ],
    )
    .doing("cannot write", &dir.join("evaluations.parquet"))?;
    write_frame(&dir.join("evaluations.parquet"), &mut ev)?;
    Ok(())
}

fn read_frame(path: &Path) -> Result<DataFrame> {
    let file = File::open(path).doing("cannot open", path)?;
    ParquetReader::new(file).finish().doing("cannot read", path)
}

fn col_u64(df: &DataFrame, name: &str) -> PolarsResult<Vec<u64>> {
    Ok(df
        .column(name)?
        .u64()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect())
}

fn col_f64(df: &DataFrame, name: &str) -> PolarsResult<Vec<f64>> {
    Ok(df
        .column(name)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

fn col_str(df: &DataFrame, name: &str) -> PolarsResult<Vec<String>> {
    Ok(df
        .column(name)?
        .str()?
        .iter()
        .map(|v| v.unwrap_or("").to_string())
        .collect())
}

/// The records of a training folder, episodes before `upto` (what a checkpoint holds).
pub fn read_records(dir: &Path, upto: u64) -> Result<(Vec<EpisodeRecord>, Vec<EvalRecord>)> {
    let path = dir.join("episodes.parquet");
    if !path.is_file() {
        return Ok((Vec::new(), Vec::new()));
    }
    let df = read_frame(&path)?;
    let u = |n| col_u64(&df, n).doing("cannot read", &path);
    let f = |n| col_f64(&df, n).doing("cannot read", &path);
    let b = |name: &str| -> Result<Vec<bool>> {
        Ok(df
            .column(name)
            .and_then(|c| c.bool())
            .doing("cannot read", &path)?
            .iter()
            .map(|v| v.unwrap_or(false))
            .collect())
    };
    let (episode, seat, steps, turns) = (u("episode")?, u("seat")?, u("steps")?, u("turns")?);
    let (reward, loss, epsilon, entropy) = (f("reward")?, f("loss")?, f("epsilon")?, f("entropy")?);
    let (win, called, success) = (b("win")?, b("called")?, b("call_success")?);
    let opponents = col_str(&df, "opponents").doing("cannot read", &path)?;
    let mut episodes = Vec::new();
    for i in 0..df.height() {
        if episode[i] >= upto {
            continue;
        }
        episodes.push(EpisodeRecord {
            episode: episode[i],
            seat: seat[i] as usize,
            opponents: opponents[i].clone(),
            reward: reward[i],
            win: win[i],
            called: called[i],
            call_success: success[i],
            steps: steps[i] as u32,
            turns: turns[i] as u32,
            loss: loss[i],
            epsilon: epsilon[i],
            entropy: entropy[i],
        });
    }
    let mut evals = Vec::new();
    let path = dir.join("evaluations.parquet");
    if path.is_file() {
        let df = read_frame(&path)?;
        let u = |n| col_u64(&df, n).doing("cannot read", &path);
        let f = |n| col_f64(&df, n).doing("cannot read", &path);
        let (episode, deals, rounds) = (u("episode")?, u("deals")?, u("rounds")?);
        let (rate, low, high, reward) = (f("win_rate")?, f("low")?, f("high")?, f("mean_reward")?);
        let opponent = col_str(&df, "opponent").doing("cannot read", &path)?;
        for i in 0..df.height() {
            if episode[i] > upto {
                continue;
            }
            evals.push(EvalRecord {
                episode: episode[i],
                opponent: opponent[i].clone(),
                rounds: rounds[i],
                deals: deals[i],
                win_rate: rate[i],
                low: low[i],
                high: high[i],
                mean_reward: reward[i],
            });
        }
    }
    Ok((episodes, evals))
}

/// The file in a training's folder that says what was trained and how far.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The format of a training's [`MANIFEST_FILE`] this build writes and reads; files written
/// before the key existed have the same layout (1).
pub const MANIFEST_FORMAT: u32 = 1;

/// What [`Manifest::read`] expects.
pub const MANIFEST_KIND: Kind = Kind::new(
    "training manifest",
    MANIFEST_FORMAT,
    "train again with this version (`dhumbal-run train FILE --force`), or use the \
             version that wrote it",
);

/// A training's `manifest.json`, rewritten as each run of it ends: what was trained (the
/// `train:` entry as resolved), how far, on what, and the last evaluation against each
/// opponent. Written and read through this one type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    #[serde(default = "result_file::format_one")]
    pub format: u32,
    pub program: String,
    /// The scenario file, as given.
    pub scenario: String,
    pub training: Resolved<ResolvedTraining>,
    /// The hash of what the learner learns from: a checkpoint of another hash is not resumed.
    pub hash: String,
    pub checkpoint: String,
    /// Episodes trained, in all runs of it.
    pub episodes: u64,
    /// Whether it trained all its episodes (else it was stopped).
    pub finished: bool,
    pub device: String,
    pub threads: usize,
    pub seconds_this_run: f64,
    pub last_evaluations: Vec<LastEvaluation>,
}

/// What readers use of a `train:` entry as resolved.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ResolvedTraining {
    /// `dqn`, `ddqn`, `ppo`, or a tabular method (`q-learning`, `value-iteration`).
    pub algorithm: String,
    /// The rules it learned under.
    pub rules: crate::scenario::RulesSpec,
}

impl ResolvedTraining {
    /// Whether a table learned it: an episode is then a whole game (a network's is a round).
    pub fn tabular(&self) -> bool {
        dhumbal_learn::tabular::Method::NAMES.contains(&self.algorithm.as_str())
    }
}

/// The last evaluation against one opponent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LastEvaluation {
    pub opponent: String,
    pub win_rate: f64,
    /// The win rate's 95% interval, by deal.
    pub low: f64,
    pub high: f64,
    pub deals: u64,
    pub rounds: u64,
    pub mean_reward: f64,
}

impl LastEvaluation {
    fn of(e: &EvalRecord) -> LastEvaluation {
        LastEvaluation {
            opponent: e.opponent.clone(),
            win_rate: e.win_rate,
            low: e.low,
            high: e.high,
            deals: e.deals,
            rounds: e.rounds,
            mean_reward: e.mean_reward,
        }
    }
}

impl Manifest {
    /// Reads `dir/manifest.json`, refusing another format with what to do.
    pub fn read(dir: &Path) -> Result<Manifest, ReadError> {
        result_file::read(&dir.join(MANIFEST_FILE), &MANIFEST_KIND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn sample() -> Manifest {
        let training = json!({
            "id": "t",
            "algorithm": "q-learning",
            "rules": crate::scenario::RulesSpec::from_variant(
                &dhumbal_game::rules::Preset::Paper.variant()
            ),
            "episodes": 10,
        });
        Manifest {
            format: MANIFEST_FORMAT,
            program: "dhumbal-run".into(),
            scenario: "s.yaml".into(),
            training: Resolved::new(training).unwrap(),
            hash: "00".into(),
            checkpoint: "t.csv".into(),
            episodes: 10,
            finished: true,
            device: "cpu (tabular)".into(),
            threads: 2,
            seconds_this_run: 0.5,
            last_evaluations: vec![LastEvaluation {
                opponent: "random".into(),
                win_rate: 0.75,
                low: 0.5,
                high: 0.9,
                deals: 20,
                rounds: 40,
                mean_reward: 1.5,
            }],
        }
    }

    #[test]
    fn a_training_manifest_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let m = sample();
        let text = serde_json::to_string_pretty(&m).unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), &text).unwrap();
        let back = Manifest::read(dir.path()).unwrap();
        assert_eq!(back, m);
        assert!(back.training.tabular());
        assert_eq!(
            back.training.rules.scoring,
            Some(crate::scenario::rules_spec::ScoringName::Coins)
        );
        // Written before the key existed: the same layout, format 1.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v.as_object_mut().unwrap().remove("format");
        std::fs::write(dir.path().join(MANIFEST_FILE), v.to_string()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), m);
    }

    #[test]
    fn a_training_manifest_of_another_format_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = serde_json::to_value(sample()).unwrap();
        v.as_object_mut().unwrap().insert("format".into(), 2.into());
        std::fs::write(dir.path().join(MANIFEST_FILE), v.to_string()).unwrap();
        let e = Manifest::read(dir.path()).unwrap_err();
        assert_eq!(e.other_format(), Some(2), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        // The entry's rules missing are named.
        let mut v = serde_json::to_value(sample()).unwrap();
        let training = v
            .get_mut("training")
            .and_then(Value::as_object_mut)
            .unwrap();
        training.remove("rules");
        std::fs::write(dir.path().join(MANIFEST_FILE), v.to_string()).unwrap();
        let e = Manifest::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("rules"), "{e}");
    }
}
