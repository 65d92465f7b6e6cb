//! Running a whole scenario: stages in order, chunks of units in parallel, each written as a
//! part of the stage's dataset; what is finished is read from the parts, so that `--resume`
//! finishes a run and shards on many machines play a study between them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::dataset::{Dataset, PartWriter, StageKey};
use crate::error::{Doing, Error, Result, copy_error};
use crate::folder::{self, CommandLine, Refusal};
use crate::progress::{Progress, StageProgress};
use crate::scenario::{AgentDef, Scenario, SeatEntry, Stage};
use crate::tournament::{Halt, Lineup, Pulse, StageTotals, UnitError};

/// A stage cannot start yet: it seats the winner of an earlier stage whose records are not
/// complete (other shards are still playing it). Not bad input: the same command succeeds once
/// they are (the CLI exits with 3).
#[derive(Debug)]
pub struct Waiting {
    /// The stage that cannot start.
    pub stage: String,
    /// The earlier stage it needs complete: whose winner it seats, or (an `exploit:`
    /// responder's gain test) whose records its looks read.
    pub waits_for: String,
    /// Why it needs that stage.
    pub needs: Needs,
    /// A shard's run: what it played before it stopped, and where every stage stands (as
    /// [`RunReport::shard_stages`]); empty otherwise.
    pub shard_stages: Vec<ShardStage>,
    /// Rounds this invocation played before it stopped, and in how many seconds.
    pub rounds_now: u64,
    pub seconds: f64,
}

/// What a waiting stage needs of the earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// It seats that stage's winner.
    Winner,
    /// Its sequential test of the gain reads that stage's records deal by deal (an
    /// `exploit:` responder's against the target's self-play).
    Baseline,
}

impl Waiting {
    /// `seats the winner of stage `X`` or `tests its gain against stage `X``.
    pub fn relation(&self) -> String {
        match self.needs {
            Needs::Winner => format!("seats the winner of stage `{}`", self.waits_for),
            Needs::Baseline => format!(
                "tests its gain deal by deal against stage `{}`",
                self.waits_for
            ),
        }
    }
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stage `{}` {}, whose records are not complete yet; \
             play that stage to the end first (shards: `dhumbal-run merge` says what is \
             missing; on Slurm, submit the shards of a stage as a job that depends on those of \
             the stage before, as scripts/slurm/submit.sh does)",
            self.stage,
            self.relation()
        )
    }
}

impl std::error::Error for Waiting {}

/// A slice of a study: shard `index` of `count` plays a contiguous, fixed share of the parts
/// of every stage (see [`Shard::units`]), so that `count` machines together play each unit
/// once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The units of a stage of `units` units cut into parts of `part_units` that this shard
    /// plays: parts `index*P/count .. (index+1)*P/count` of the stage's `P` parts, so that
    /// shards split at part boundaries and a part is never shared.
    pub fn units(&self, units: u64, part_units: u64) -> std::ops::Range<u64> {
        let step = part_units.max(1);
        let parts = units.div_ceil(step);
        let bound = |i: u64| {
            let part = (u128::from(parts) * u128::from(i) / u128::from(self.count)) as u64;
            (part * step).min(units)
        };
        bound(self.index)..bound(self.index + 1)
    }

    /// This shard's share of the units `look` (a sequential test's look, played by every
    /// shard before the test looks): an equal, contiguous slice, so that the shards are busy
    /// alike whatever the part grid.
    pub fn within(&self, look: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let len = u128::from(look.end - look.start);
        let bound = |i: u64| look.start + (len * u128::from(i) / u128::from(self.count)) as u64;
        bound(self.index)..bound(self.index + 1)
    }

    /// `I/N` with I from 0.
    pub fn parse(text: &str) -> std::result::Result<Shard, BadShard> {
        let bad = || BadShard(text.to_string());
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// A shard that is not `I/N` with `0 <= I < N` (the text as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: expected I/N with 0 <= I < N, say 0/4")]
pub struct BadShard(pub String);

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub threads: usize,
    /// Finish the unfinished run in the output folder, to exactly the records an uninterrupted
    /// run gives.
    pub resume: bool,
    /// Replace another run's results in the output folder (otherwise refused).
    pub force: bool,
    /// Play one shard of the study: its share of every stage, into a folder the shards share
    /// (`merge` completes it). A shard plays only units no part holds yet, so a failed shard
    /// is simply run again.
    pub shard: Option<Shard>,
    /// Play only these stages (by name; all if empty). Earlier stages they seat winners of must
    /// be complete on disk.
    pub stages: Vec<String>,
    /// Also write each finished stage's records as `rounds.csv` (as `output.csv: true`).
    pub csv: bool,
    /// The command line's `--seed` and `--rounds`, kept in `source/run.json` for a rerun.
    pub command_line: CommandLine,
    /// Set (by a Ctrl-C handler, say) to stop: finished units are written, progress saved,
    /// and the run ends with [`Interrupted`].
    pub stop: Arc<AtomicBool>,
}

/// The run stopped on request (`RunOptions::stop`); everything finished is on disk and
/// `--resume` continues.
#[derive(Debug)]
pub struct Interrupted {
    pub stage: String,
    /// Rounds (coins) or games (points) of the stage on disk, of `units`.
    pub done: u64,
    pub units: u64,
    /// "rounds" or "games": what `done` counts.
    pub unit: &'static str,
    pub dir: PathBuf,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted: stage `{}` has {} of {} {} on disk, in {}",
            self.stage,
            self.done,
            self.units,
            self.unit,
            self.dir.display()
        )
    }
}

impl std::error::Error for Interrupted {}

/// What the runner tells its caller as it goes: the CLI draws a progress bar, prints each
/// stage's table and attaches the statistics report to finished stages.
///
/// Time spent in [`Reporter::stage_done`] is not the run's: rounds per second measure play,
/// records and a tap's work (which goes on beside play).
pub trait Reporter: Sync {
    /// A stage is about to run `units` units, `done` of them already finished (resume, or
    /// other shards). `pulse` counts play as it happens (records follow a part at a time),
    /// until [`Reporter::stage_done`] (or the next stage).
    fn stage_start(
        &self,
        _stage: &Stage,
        _lineup: &[AgentDef],
        _units: u64,
        _done: u64,
        _pulse: &Arc<Pulse>,
    ) {
    }
    /// A stage finished: its records, `summary.csv` and `progress.json` are on disk, so
    /// whatever is done here (a report, say) cannot cost the stage's data.
    fn stage_done(&self, _stage: &Stage, _result: &StageResult) {}
    /// The design's 95% intervals of each agent's headline rates (what the stage's report
    /// puts in stats.json's `ci95`: by deal or game in blocked designs), for `summary.csv`
    /// and the stage's table; asked once per finished stage, before `summary.csv` is written.
    /// `None` (the default): the summary gives Wilson's and says so.
    fn intervals(
        &self,
        _stage: &Stage,
        _result: &StageResult,
    ) -> Option<Vec<crate::summary::DesignIntervals>> {
        None
    }
    /// A tap on the records of `stage`, which this invocation is about to play whole (every
    /// unit, none played before: not resumed, not a shard, not a sequential test, which may
    /// stop anywhere), `agents` in its slots: it sees every chunk of records in unit order,
    /// on a thread of its own while play goes on, so that a report need not read them back.
    /// `None` (the default): no tap.
    fn tap(&self, _stage: &Stage, _agents: &[AgentDef]) -> Option<Box<dyn RecordTap + '_>> {
        None
    }
}

/// Sees a stage's records while they are played ([`Reporter::tap`]).
pub trait RecordTap: Send {
    /// The records of `units`, the units right after the last chunk's (the stage's first
    /// chunk first).
    fn records(&mut self, units: std::ops::Range<u64>, records: &[crate::records::Records]);
    /// The stage is on disk, complete, and every one of its units was seen once, in order:
    /// called before [`Reporter::intervals`] is asked about the stage. A tap of a stage that
    /// stopped early (or whose thread panicked) is dropped instead.
    fn complete(self: Box<Self>);
}

/// A reporter that says nothing.
pub struct Quiet;
impl Reporter for Quiet {}

/// One finished stage.
#[derive(Clone)]
pub struct StageResult {
    pub name: String,
    pub dir: PathBuf,
    /// The agent in each slot, as played (a `winner_of` resolved).
    pub agents: Vec<AgentDef>,
    pub totals: StageTotals,
    /// The stage plays point games (until one player is left) rather than coins.
    pub points: bool,
    pub seconds: f64,
    /// Finished before this invocation (`--resume`, other shards): nothing was played or
    /// written for it this time.
    pub restored: bool,
    /// The design's intervals of each agent's rates ([`Reporter::intervals`]), set when the
    /// stage is finished; `None`: Wilson's stand in.
    pub intervals: Option<Vec<crate::summary::DesignIntervals>>,
}

impl StageResult {
    /// The slot `winner_of` seats: the highest game-win rate under point scoring, the highest
    /// win rate under coin scoring (see [`StageTotals::winner`]).
    pub fn winner(&self) -> usize {
        self.totals.winner(self.points)
    }

    /// [`Self::winner`] and what decided it.
    pub fn winner_by(&self) -> (usize, crate::totals::Decided) {
        self.totals.winner_by(self.points)
    }
}

/// The whole run.
#[derive(Clone)]
pub struct RunReport {
    /// The stages finished (complete on disk), in order.
    pub stages: Vec<StageResult>,
    /// What went wrong without costing results (agents' output that could not be logged).
    pub warnings: Vec<String>,
    /// Wall time of this invocation, reports excluded.
    pub seconds: f64,
    /// Rounds of the finished stages, including those found on disk.
    pub rounds: u64,
    /// Rounds played by this invocation.
    pub rounds_now: u64,
    /// A shard's run: every stage of the scenario, with what this shard played of it and what
    /// is still missing.
    pub shard_stages: Vec<ShardStage>,
    /// A merge: the shards' folders (stage seconds are then summed over the shards).
    pub merged_from: Vec<PathBuf>,
}

/// Where a stage stands after a shard's run: what this shard played of it, and which shards
/// (of as many as this one's study has) have not finished their share yet.
#[derive(Clone, Debug)]
pub struct ShardStage {
    pub name: String,
    /// This invocation played (its share of) the stage; false for a stage it was not asked to
    /// play (`--stage`) or did not reach.
    pub played: bool,
    /// Rounds this invocation played in it.
    pub rounds_now: u64,
    /// The stage's units, and this shard's share of them.
    pub units: u64,
    pub share: std::ops::Range<u64>,
    /// Every unit of the stage is on disk.
    pub complete: bool,
    /// The shards (indices, of this shard's count) whose share is not all on disk (of a
    /// sequential test: of its first look not on disk).
    pub shards_missing: Vec<u64>,
    /// A sequential test's stage, played one look per wave of shards: where it stands.
    pub looks: Option<Looks>,
}

/// Where a sequential test played by shards stands: matches on disk in order, its looks, and
/// whether it has decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Looks {
    /// Matches per look.
    pub every: u64,
    /// Matches on disk from the first on, in order (the looks taken, or being taken).
    pub matches_done: u64,
    /// The test's maximum.
    pub max: u64,
    /// The test has decided (its outcome is saved), after `matches_done` matches.
    pub decided: bool,
}

impl Looks {
    /// Of `stage`, from `dataset`; `None` for a stage not played in looks.
    fn of(stage: &Stage, dataset: &Dataset) -> Option<Looks> {
        let every = look_matches(stage)?;
        let arrangements = stage.arrangements().max(1);
        let units = stage_units(stage);
        let done = dataset
            .missing(0..units)
            .first()
            .map_or(units, |gap| gap.start);
        Some(Looks {
            every,
            matches_done: done / arrangements,
            max: stage.matches,
            decided: dataset.stop.is_some(),
        })
    }
}

/// The units of a stage (every seating of every session or game).
fn stage_units(stage: &Stage) -> u64 {
    stage.matches * stage.arrangements()
}

/// The units in one part of `stage`: the part grid that shards and `merge` share.
fn part_units(scenario: &Scenario, stage: &Stage) -> u64 {
    let per_unit = u64::from(stage.session.unwrap_or(8)).max(1);
    (scenario.output.chunk_rounds / per_unit).max(1)
}

/// The matches of a look of `stage`, if it is played in looks (a sequential test).
fn look_matches(stage: &Stage) -> Option<u64> {
    match (&stage.sequential, &stage.gain_test) {
        (Some(plan), _) => Some(plan.every),
        (None, Some(plan)) => Some(plan.every),
        (None, None) => None,
    }
}

/// The units of the first look of a sequential `stage` that `dataset` lacks units of (up to
/// the test's stop, if it has stopped); `None` once every look it needs is on disk.
fn open_look(stage: &Stage, dataset: &Dataset) -> Option<std::ops::Range<u64>> {
    let every = look_matches(stage)?.max(1);
    let arrangements = stage.arrangements().max(1);
    let first = dataset
        .missing(0..dataset.target(stage_units(stage)))
        .first()?
        .start;
    let look = first / arrangements / every;
    let from = look * every;
    let to = (from + every).min(stage.matches);
    Some(from * arrangements..to * arrangements)
}

/// What `shard` plays of `stage` now: its share of the stage, or of a sequential test, its
/// share of the first look not on disk (a look is played by every shard, then the test looks;
/// see [`play_in_looks`]); empty when it has nothing to play.
fn shard_share(
    scenario: &Scenario,
    stage: &Stage,
    dataset: &Dataset,
    shard: Shard,
) -> std::ops::Range<u64> {
    if look_matches(stage).is_none() {
        return shard.units(stage_units(stage), part_units(scenario, stage));
    }
    open_look(stage, dataset).map_or(0..0, |look| shard.within(look))
}

/// The shards of `count` whose share of `stage` is not all in `dataset`.
fn shards_missing(scenario: &Scenario, stage: &Stage, dataset: &Dataset, count: u64) -> Vec<u64> {
    (0..count)
        .filter(|&index| {
            let share = shard_share(scenario, stage, dataset, Shard { index, count });
            !share.is_empty() && !dataset.missing(share).is_empty()
        })
        .collect()
}

/// Where every stage of `scenario` stands for `shard`, read from the disk; `played` names the
/// stages this invocation played, with the rounds it played in each.
fn shard_status(
    scenario: &Scenario,
    shard: Shard,
    played: &[(String, u64)],
) -> Result<Vec<ShardStage>> {
    let mut out = Vec::with_capacity(scenario.stages.len());
    for (index, stage) in scenario.stages.iter().enumerate() {
        let dataset = Dataset::open(&scenario.stage_dir(index))?;
        let units = stage_units(stage);
        let now = played.iter().find(|(n, _)| *n == stage.name);
        out.push(ShardStage {
            name: stage.name.clone(),
            played: now.is_some(),
            rounds_now: now.map_or(0, |(_, r)| *r),
            units,
            share: shard_share(scenario, stage, &dataset, shard),
            complete: dataset.is_complete(units),
            shards_missing: shards_missing(scenario, stage, &dataset, shard.count),
            looks: Looks::of(stage, &dataset),
        });
    }
    Ok(out)
}

/// Where one stage of a run (single or shards) stands on disk: [`status`].
#[derive(Clone, Debug)]
pub struct StageStatus {
    pub name: String,
    /// Units the stage needs (a sequential test that has stopped: up to its stop), and those
    /// on disk.
    pub units: u64,
    pub units_done: u64,
    pub complete: bool,
    /// A stage that needs an earlier one that is not complete: that stage, and why (it seats
    /// its winner, or tests its gain against it).
    pub waits_for: Option<(String, Needs)>,
    /// A sequential test's looks, and its LLR at the last look on disk.
    pub looks: Option<Looks>,
    pub test: Option<TestStanding>,
    /// The shards (of the study's count, read from `shards/I-of-N.json`) that still owe their
    /// share of it (of a sequential test: of its next look).
    pub shards_missing: Vec<u64>,
}

/// A sequential test's state at its last look on disk.
#[derive(Clone, Debug, PartialEq)]
pub struct TestStanding {
    /// Matches the LLR rests on (whole looks on disk).
    pub matches: u64,
    pub llr: f64,
    pub bounds: (f64, f64),
    /// `decide:`: the leader and its closest rival at that look.
    pub pair: Option<(String, String)>,
    /// Once it has decided: the decision, as its outcome file says it.
    pub decision: Option<String>,
}

/// The shards' progress files in `root/shards/`: (I, N) of each `I-of-N.json`.
fn shard_files(root: &Path) -> Vec<(u64, u64)> {
    std::fs::read_dir(root.join(SHARDS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let (i, n) = name.strip_suffix(".json")?.split_once("-of-")?;
            let (i, n) = (i.parse::<u64>().ok()?, n.parse::<u64>().ok()?);
            (i < n).then_some((i, n))
        })
        .collect()
}

/// The most common of `counts` (the larger where two are as common).
fn most_common(mut counts: Vec<u64>) -> Option<u64> {
    counts.sort_unstable();
    counts
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| (run.len(), run[0]))
        .map(|run| run[0])
}

/// The study's number of shards, from the progress files shards leave in `root/shards/`
/// (the most common N); `None` if no shard left one.
pub fn shard_count(root: &Path) -> Option<u64> {
    most_common(shard_files(root).into_iter().map(|(_, n)| n).collect())
}

/// Where every stage of the run in `scenario`'s output folder stands, read from the disk
/// alone (nothing is written, and nothing needs to be running): units on disk, a sequential
/// test's looks and LLR, the shards that owe their share.
pub fn status(scenario: &Scenario) -> Result<Vec<StageStatus>> {
    let hash = scenario.hash();
    let count = shard_count(&scenario.output.dir);
    let mut results: Vec<Option<StageResult>> = Vec::new();
    let mut out = Vec::with_capacity(scenario.stages.len());
    for (index, stage) in scenario.stages.iter().enumerate() {
        let dir = scenario.stage_dir(index);
        let dataset = Dataset::open(&dir)?;
        let units = dataset.target(stage_units(stage));
        let units_done = units
            - dataset
                .missing(0..units)
                .iter()
                .map(|g| g.end - g.start)
                .sum::<u64>();
        let complete = units_done == units;
        let agents = seat_agents(stage, &results, &scenario.stages);
        // A gain test's baseline (the self-play) not complete yet: the test cannot look.
        let baseline = stage.gain_test.as_ref().and_then(|plan| {
            let k = scenario.stages[..index]
                .iter()
                .position(|s| s.name == plan.against)?;
            results[k].is_none().then(|| plan.against.clone())
        });
        let waits_for = match &agents {
            Err(Error::Waiting(w)) => Some((w.waits_for.clone(), w.needs)),
            _ => baseline.clone().map(|b| (b, Needs::Baseline)),
        };
        let looks = Looks::of(stage, &dataset);
        let test = match (&stage.sequential, &stage.gain_test, looks, &agents) {
            (Some(plan), _, Some(looks), Ok(agents)) if looks.matches_done >= looks.every => Some(
                test_standing(plan, stage, agents.len(), &dir, &dataset, looks)?,
            ),
            (None, Some(plan), Some(looks), Ok(_))
                if baseline.is_none() && looks.matches_done >= looks.every =>
            {
                Some(gain_standing(plan, stage, scenario, &dir, &dataset, looks)?)
            }
            _ => None,
        };
        let result = match agents {
            Ok(agents) if complete => {
                let lineup = Lineup {
                    stage,
                    agents,
                    decision_sample: scenario.output.decision_sample,
                    trace: scenario.output.trace.clone(),
                };
                dataset.check(&key_of(&hash, &lineup))?;
                Some(stage_result(
                    &lineup,
                    &dir,
                    dataset.totals(lineup.agents.len()),
                    0.0,
                ))
            }
            _ => None,
        };
        results.push(result);
        out.push(StageStatus {
            name: stage.name.clone(),
            units,
            units_done,
            complete,
            waits_for,
            looks,
            test,
            shards_missing: count.map_or_else(Vec::new, |n| {
                if complete {
                    Vec::new()
                } else {
                    shards_missing(scenario, stage, &dataset, n)
                }
            }),
        });
    }
    Ok(out)
}

/// A sequential test's LLR at the last whole look of `looks` on disk, replayed from the records
/// as a run's looks are.
fn test_standing(
    plan: &crate::sequential::Plan,
    stage: &Stage,
    agents: usize,
    stage_dir: &Path,
    dataset: &Dataset,
    looks: Looks,
) -> Result<TestStanding> {
    use crate::sequential::{decide_course, match_scores, sequential};
    let shape = test_shape(stage, agents);
    let every = looks.every.max(1);
    let upto = if looks.decided {
        looks.matches_done
    } else {
        (looks.matches_done / every) * every
    };
    let (pair, course) = if plan.decide {
        let (pair, _, course) = decide_course(dataset, plan, shape, upto)?;
        let names = (pair.candidate.clone(), pair.baseline.clone());
        (Some(names), course)
    } else {
        let scores = match_scores(
            dataset,
            plan,
            0..upto,
            shape.arrangements,
            shape.rounds_per_match,
            shape.points,
        )?;
        let config = plan.config(shape.arrangements, shape.rounds_per_match);
        let course = sequential(&scores, &config, plan.every, stage.matches).map_err(|source| {
            Error::Sequential {
                stage: stage.name.clone(),
                source,
            }
        })?;
        (None, course)
    };
    Ok(TestStanding {
        matches: upto,
        llr: course.llr,
        bounds: course.bounds,
        pair,
        decision: crate::sequential::Outcome::read(stage_dir)
            .ok()
            .flatten()
            .map(|o| o.decision),
    })
}

/// An `exploit:` responder's gain test at the last whole look of `looks` on disk: the gains
/// of its deals over the self-play's (complete), replayed as the run's looks are.
fn gain_standing(
    plan: &crate::exploit::GainPlan,
    stage: &Stage,
    scenario: &Scenario,
    stage_dir: &Path,
    dataset: &Dataset,
    looks: Looks,
) -> Result<TestStanding> {
    let every = looks.every.max(1);
    let upto = if looks.decided {
        looks.matches_done
    } else {
        (looks.matches_done / every) * every
    };
    let base = Dataset::open(&scenario.output.dir.join(&plan.against))?;
    let gains = crate::exploit::deal_gains(
        plan,
        dataset,
        &base,
        stage.is_points(),
        stage.arrangements(),
        0..upto,
    )?;
    let course = crate::exploit::GainOutcome::course(plan, &gains, stage.matches)?;
    Ok(TestStanding {
        matches: upto,
        llr: course.llr,
        bounds: course.bounds,
        pair: None,
        decision: crate::exploit::GainOutcome::read(stage_dir)
            .ok()
            .flatten()
            .map(|o| o.decision),
    })
}

/// Plays every stage of `scenario` (or a shard's share of them), writing records, summaries
/// and the manifest.
/// Whether `--stage name` selects `stage`: its name, or the sweep it is a point of
/// (`--stage threshold` plays `threshold/threshold=5`, ...).
fn named(stage: &str, name: &str) -> bool {
    stage == name
        || stage
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('/'))
}

pub fn run(scenario: &Scenario, opts: &RunOptions, reporter: &dyn Reporter) -> Result<RunReport> {
    crate::clock::calibrate_in_background();
    check_stage_names(scenario, opts)?;
    let (progress_file, progress) = open_progress(scenario, opts)?;
    let mut run = Run {
        scenario,
        opts,
        reporter,
        progress,
        progress_file,
        pool: crate::workers::pool(opts.threads)?,
        start: Instant::now(),
        hash: scenario.hash(),
        results: Vec::new(),
        rounds_now: 0,
        shard_played: Vec::new(),
        reporter_seconds: 0.0,
    };
    for (index, stage) in scenario.stages.iter().enumerate() {
        run.stage(index, stage)?;
    }
    run.report()
}

/// Every `--stage` names a stage (or a sweep) of the scenario.
fn check_stage_names(scenario: &Scenario, opts: &RunOptions) -> Result<()> {
    for name in &opts.stages {
        if !scenario.stages.iter().any(|s| named(&s.name, name)) {
            let names: Vec<&str> = scenario.stages.iter().map(|s| s.name.as_str()).collect();
            return Err(Refusal(format!(
                "--stage {name}: the scenario has no such stage; its stages: {}",
                names.join(", ")
            ))
            .into());
        }
    }
    Ok(())
}

/// The output folder claimed (or joined, by a shard) and the run's progress file, saved: from
/// here on (the sources are copied), `--resume` finishes whatever happens. The scripts' log is
/// attached to its file (opened only if an agent writes to it).
fn open_progress(scenario: &Scenario, opts: &RunOptions) -> Result<(PathBuf, Progress)> {
    let root = &scenario.output.dir;
    let progress_file = match opts.shard {
        None => {
            folder::claim(root, opts.resume, opts.force)?;
            if !opts.resume {
                folder::write_sources(root, scenario, &opts.command_line)?;
            }
            root.join(PROGRESS_FILE)
        }
        Some(shard) => {
            folder::join(root, scenario, &opts.command_line)?;
            root.join(SHARDS_DIR)
                .join(format!("{}-of-{}.json", shard.index, shard.count))
        }
    };
    let progress = match opts.shard {
        // A shard run again (resubmitted) keeps its earlier stages and seconds.
        Some(_) => Progress::read(&progress_file)
            .ok()
            .filter(|p| p.scenario_hash == scenario.hash())
            .map_or_else(|| Progress::start(&progress_file, scenario, false), Ok)?,
        None => {
            if opts.resume {
                check_resume(root, scenario, &opts.command_line)?;
            }
            Progress::start(&progress_file, scenario, opts.resume)?
        }
    };
    progress.save(&progress_file)?;
    scenario.agent_log.attach(&root.join(match opts.shard {
        None => "scripts.log".to_string(),
        Some(s) => format!("{SHARDS_DIR}/scripts-{}-of-{}.log", s.index, s.count),
    }));
    Ok((progress_file, progress))
}

/// A run in progress: what every stage's step reads and updates.
struct Run<'a> {
    scenario: &'a Scenario,
    opts: &'a RunOptions,
    reporter: &'a dyn Reporter,
    progress: Progress,
    progress_file: PathBuf,
    pool: Arc<rayon::ThreadPool>,
    start: Instant,
    hash: String,
    /// Each stage's result once it is complete on disk; `None` for a stage that is not.
    results: Vec<Option<StageResult>>,
    rounds_now: u64,
    /// A shard's run: the stages it played, with the rounds it played in each.
    shard_played: Vec<(String, u64)>,
    /// Time spent in the reporter's `stage_done` (reports): not the run's.
    reporter_seconds: f64,
}

impl Run<'_> {
    /// Stage `index`: skipped (not selected, or finished before and only finalised), or
    /// played.
    fn stage(&mut self, index: usize, stage: &Stage) -> Result<()> {
        let opts = self.opts;
        let selected = opts.stages.is_empty() || opts.stages.iter().any(|n| named(&stage.name, n));
        let agents = match seat_agents(stage, &self.results, &self.scenario.stages) {
            Ok(agents) => agents,
            // A stage this run does not play may wait for its winners.
            Err(_) if !selected => {
                self.results.push(None);
                return Ok(());
            }
            Err(e) => return Err(self.waiting(e)),
        };
        // A gain test looks at the self-play deal by deal: shards that have not all played
        // their share of it leave this stage to the next wave (one machine plays it first).
        if let Some(plan) = &stage.gain_test
            && selected
            && let Some(k) = self.scenario.stages[..index]
                .iter()
                .position(|s| s.name == plan.against)
            && self.results[k].is_none()
        {
            return Err(self.waiting(
                Waiting {
                    stage: stage.name.clone(),
                    waits_for: plan.against.clone(),
                    needs: Needs::Baseline,
                    shard_stages: Vec::new(),
                    rounds_now: 0,
                    seconds: 0.0,
                }
                .into(),
            ));
        }
        let lineup = Lineup {
            stage,
            agents,
            decision_sample: self.scenario.output.decision_sample,
            trace: self.scenario.output.trace.clone(),
        };
        let dir = self.scenario.stage_dir(index);
        let key = key_of(&self.hash, &lineup);
        let dataset = Dataset::open(&dir)?;
        dataset.check(&key)?;
        let saved_seconds = self
            .progress
            .stages
            .iter()
            .find(|s| s.name == stage.name)
            .map_or(0.0, |s| s.seconds);
        let at = StageAt {
            lineup: &lineup,
            dir: &dir,
            dataset: &dataset,
            key: &key,
            saved_seconds,
        };
        if !selected || (opts.shard.is_none() && dataset.is_complete(lineup.units())) {
            return self.restore(&at, selected);
        }
        self.play(&at)
    }

    /// A shard that must wait says what it played before, and what is missing.
    fn waiting(&self, e: Error) -> Error {
        match (self.opts.shard, e) {
            (Some(shard), Error::Waiting(mut waiting)) => {
                match shard_status(self.scenario, shard, &self.shard_played) {
                    Ok(status) => waiting.shard_stages = status,
                    Err(e) => return e,
                }
                waiting.rounds_now = self.rounds_now;
                waiting.seconds = self.start.elapsed().as_secs_f64() - self.reporter_seconds;
                Error::Waiting(waiting)
            }
            (_, e) => e,
        }
    }

    /// A stage this invocation does not play: its result if it is complete on disk, finalised
    /// when selected (it may have finished before without its summary: a kill after the last
    /// part).
    fn restore(&mut self, at: &StageAt<'_>, selected: bool) -> Result<()> {
        let (stage, units, dataset) = (at.lineup.stage, at.lineup.units(), at.dataset);
        let on_disk = dataset.totals(at.key.agents.len());
        let mut result = dataset.is_complete(units).then(|| {
            let mut r = stage_result(at.lineup, at.dir, on_disk, at.saved_seconds);
            r.restored = true;
            r
        });
        if let Some(result) = &mut result
            && selected
        {
            result.intervals = self.reporter.intervals(stage, result);
            finish_stage(result, dataset, self.scenario, self.opts)?;
            let target = dataset.target(units);
            set_stage(
                &mut self.progress,
                stage,
                0..target,
                dataset,
                result.seconds,
            );
            self.progress.save(&self.progress_file)?;
            self.stage_done(stage, result);
        }
        self.results.push(result);
        Ok(())
    }

    /// Plays what is missing of a stage (a shard: of its share), then finishes it.
    fn play(&mut self, at: &StageAt<'_>) -> Result<()> {
        let StageAt {
            lineup,
            dir,
            dataset,
            key,
            saved_seconds,
        } = *at;
        let (scenario, opts, stage, units) =
            (self.scenario, self.opts, lineup.stage, lineup.units());
        std::fs::create_dir_all(dir).doing("cannot create", dir)?;
        if opts.shard.is_none() {
            // One process owns the folder: what a killed run left half written goes.
            let _ = std::fs::remove_dir_all(dir.join(crate::dataset::INCOMING_DIR));
        }
        let part_units = part_units(scenario, stage);
        let rounds_before = self.rounds_now;
        // A shard's share; of a sequential test, the whole stage (its looks are shared out
        // as they come, in play_in_looks).
        let slice = match opts.shard {
            Some(s) if !stage.tests_sequentially() => s.units(units, part_units),
            _ => 0..units,
        };
        let work = crate::pipeline::cut(&dataset.missing(slice.clone()), part_units);
        set_stage(
            &mut self.progress,
            stage,
            slice.clone(),
            dataset,
            saved_seconds,
        );
        self.progress.save(&self.progress_file)?;
        let writer = PartWriter::new(dir, key.clone(), stage.is_points())?;
        let pulse = Arc::new(Pulse::new(opts.stop.clone()));
        let (mut done, mut totals) = {
            let sp = self.progress.stages.last().expect("set above");
            (sp.units_done, sp.totals.clone())
        };
        let reporter = self.reporter;
        reporter.stage_start(stage, &lineup.agents, slice.end - slice.start, done, &pulse);
        let stage_start = Instant::now();
        let (progress, progress_file, rounds_now) = (
            &mut self.progress,
            &self.progress_file,
            &mut self.rounds_now,
        );
        let mut landed = |meta: &crate::dataset::PartMeta| -> Result<()> {
            totals.absorb(&meta.totals);
            done += meta.end - meta.start;
            *rounds_now += meta.rounds;
            let sp = progress.stages.last_mut().expect("set above");
            sp.units_done = done;
            sp.complete = done == sp.units_total;
            sp.totals = totals.clone();
            sp.seconds = saved_seconds + stage_start.elapsed().as_secs_f64();
            progress.save(progress_file)
        };
        // Played whole here, no part of it on disk: a tap may see every record (of a stage
        // begun before, by this run or a shard, it could not).
        let whole = opts.shard.is_none()
            && !stage.tests_sequentially()
            && units > 0
            && dataset.units_done() == 0;
        let job = crate::pipeline::StageJob {
            lineup,
            pool: &self.pool,
            threads: opts.threads,
            work,
            writer: &writer,
            landed: &mut landed,
            pulse: &pulse,
            tap: whole.then(|| reporter.tap(stage, &lineup.agents)).flatten(),
        };
        let crate::pipeline::Played {
            written,
            failure,
            tap,
        } = play_job(stage, &self.hash, dir, part_units, opts.shard, job);
        written?;
        let seconds = saved_seconds + stage_start.elapsed().as_secs_f64();
        match failure {
            Some(Halt::Failed(e)) => return Err(describe_failure(stage, &e, dir)),
            Some(Halt::Stopped) => return Err(stopped(stage, units, dir)?),
            None => {}
        }
        let dataset = Dataset::open(dir)?;
        // A sequential stage ends at its stop.
        let slice = slice.start..dataset.target(slice.end);
        set_stage(&mut self.progress, stage, slice, &dataset, seconds);
        self.progress.save(&self.progress_file)?;
        let on_disk = dataset.totals(key.agents.len());
        if opts.shard.is_some() {
            // Other shards may still be playing: `merge` finishes the stage.
            let complete = dataset.is_complete(units);
            self.shard_played
                .push((stage.name.clone(), self.rounds_now - rounds_before));
            self.results
                .push(complete.then(|| stage_result(lineup, dir, on_disk, seconds)));
            return Ok(());
        }
        let mut result = stage_result(lineup, dir, on_disk, seconds);
        if let Some(tap) = tap
            && dataset.is_complete(units)
        {
            tap.complete();
        }
        result.intervals = reporter.intervals(stage, &result);
        finish_stage(&result, &dataset, scenario, opts)?;
        self.stage_done(stage, &result);
        self.results.push(Some(result));
        Ok(())
    }

    /// Tells the reporter that `stage` is done; the time it takes is not the run's.
    fn stage_done(&mut self, stage: &Stage, result: &StageResult) {
        let heard = Instant::now();
        self.reporter.stage_done(stage, result);
        self.reporter_seconds += heard.elapsed().as_secs_f64();
    }

    /// The run's report, and its manifest (a whole run of every stage only).
    fn report(self) -> Result<RunReport> {
        let (scenario, opts) = (self.scenario, self.opts);
        let seconds = self.start.elapsed().as_secs_f64() - self.reporter_seconds;
        let stages: Vec<StageResult> = self.results.into_iter().flatten().collect();
        let rounds = stages.iter().map(|r| r.totals.rounds).sum();
        let shard_stages = match opts.shard {
            Some(shard) => shard_status(scenario, shard, &self.shard_played)?,
            None => Vec::new(),
        };
        let report = RunReport {
            warnings: scenario
                .agent_log
                .failure()
                .map(|why| format!("agents' output was not logged: {why}"))
                .into_iter()
                .collect(),
            stages,
            seconds,
            rounds,
            rounds_now: self.rounds_now,
            shard_stages,
            merged_from: Vec::new(),
        };
        if opts.shard.is_none() && opts.stages.is_empty() {
            crate::summary::write_manifest(
                &scenario.output.dir.join("manifest.json"),
                scenario,
                opts,
                &report,
            )?;
        }
        Ok(report)
    }
}

/// A stage about to be restored or played: its lineup, folder, dataset as found, key, and the
/// seconds spent on it before this invocation.
#[derive(Clone, Copy)]
struct StageAt<'a> {
    lineup: &'a Lineup<'a>,
    dir: &'a Path,
    dataset: &'a Dataset,
    key: &'a StageKey,
    saved_seconds: f64,
}

/// The error of a stage stopped on request: how much of it is on disk.
fn stopped(stage: &Stage, units: u64, dir: &Path) -> Result<Error> {
    let done = Dataset::open(dir)?.units_done();
    // Coins: a unit is a session of rounds; points: a game.
    let per_unit = u64::from(stage.session.unwrap_or(1));
    Ok(Interrupted {
        stage: stage.name.clone(),
        done: done * per_unit,
        units: units * per_unit,
        unit: if stage.session.is_some() {
            "rounds"
        } else {
            "games"
        },
        dir: dir.to_path_buf(),
    }
    .into())
}

/// How to merge.
#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    /// The folders the shards wrote: one folder they shared (merged in place when it is the
    /// scenario's output folder), or several, whose parts are gathered into the output folder.
    pub dirs: Vec<PathBuf>,
    /// Replace another run's results in the output folder (several folders only).
    pub force: bool,
    /// Also write each stage's records as `rounds.csv`.
    pub csv: bool,
}

/// Finishes a study played as shards: gathers the parts (from several folders, if so),
/// checks that every stage holds each of its units exactly once, written by this program for
/// this scenario (`scenario`: the study's, loaded from its `source/`, with the output folder
/// where the merged run goes), then writes what a single run writes at the end of each stage
/// (summary, `rounds.csv` if asked, the reporter's report) and the manifest.
pub fn merge(
    scenario: &Scenario,
    opts: &MergeOptions,
    reporter: &dyn Reporter,
) -> Result<RunReport> {
    let root = &scenario.output.dir;
    let hash = scenario.hash();
    let in_place = check_shards(scenario, opts, &hash)?;
    if !in_place {
        folder::claim(root, false, opts.force)?;
        folder::write_sources(root, scenario, &saved_command_line(&opts.dirs[0])?)?;
        for index in 0..scenario.stages.len() {
            gather(scenario, index, &opts.dirs)?;
        }
    }
    let start = Instant::now();
    // Every stage is checked before anything is written: a merge that refuses leaves the
    // shards' folder as it was.
    let mut checked = check_merged(scenario, &hash, &opts.dirs)?;
    // The run's report holds each stage's result as checked.
    let stages: Vec<StageResult> = checked.iter().map(|(result, _)| result.clone()).collect();
    let mut progress = Progress::start(&root.join(PROGRESS_FILE), scenario, false)?;
    let mut reporter_seconds = 0.0;
    for ((result, dataset), stage) in checked.iter_mut().zip(&scenario.stages) {
        let _ = std::fs::remove_dir_all(result.dir.join(crate::dataset::INCOMING_DIR));
        result.intervals = reporter.intervals(stage, result);
        finish_stage(
            result,
            dataset,
            scenario,
            &RunOptions {
                csv: opts.csv,
                ..RunOptions::default()
            },
        )?;
        let units = dataset.parts.last().map_or(0, |p| p.meta.stage_units);
        set_stage(
            &mut progress,
            stage,
            0..dataset.target(units),
            dataset,
            result.seconds,
        );
        progress.save(&root.join(PROGRESS_FILE))?;
        let heard = Instant::now();
        reporter.stage_done(stage, result);
        reporter_seconds += heard.elapsed().as_secs_f64();
    }
    let rounds = stages.iter().map(|r| r.totals.rounds).sum();
    let report = RunReport {
        warnings: Vec::new(),
        stages,
        seconds: start.elapsed().as_secs_f64() - reporter_seconds,
        rounds,
        rounds_now: 0,
        shard_stages: Vec::new(),
        merged_from: opts.dirs.clone(),
    };
    crate::summary::write_manifest(
        &root.join("manifest.json"),
        scenario,
        &RunOptions::default(),
        &report,
    )?;
    Ok(report)
}

/// Refuses folders that hold runs of another scenario (`hash`), and an output folder among
/// several merged ones; whether the merge is in place (one folder, the output folder).
fn check_shards(scenario: &Scenario, opts: &MergeOptions, hash: &str) -> Result<bool> {
    let root = &scenario.output.dir;
    for dir in &opts.dirs {
        let saved = folder::saved_run(dir)?;
        if saved.hash.as_deref() != Some(hash) {
            return Err(Refusal(format!(
                "{} holds a run of another scenario than {} (hash {}, not {hash}); only the \
                 shards of one study merge",
                dir.display(),
                opts.dirs[0].display(),
                saved.hash.as_deref().unwrap_or("none")
            ))
            .into());
        }
    }
    let in_place = opts.dirs.len() == 1 && same_folder(&opts.dirs[0], root);
    if !in_place && let Some(d) = opts.dirs.iter().find(|d| same_folder(d, root)) {
        return Err(Refusal(format!(
            "merge: --out {} is one of the folders being merged; nothing was changed. Merge \
             several folders into a new one",
            d.display()
        ))
        .into());
    }
    Ok(in_place)
}

/// Checks that every stage of the merged folder holds each of its units exactly once,
/// written for this scenario (`hash`); each stage's result and records, in stage order.
/// Nothing is written.
fn check_merged(
    scenario: &Scenario,
    hash: &str,
    dirs: &[PathBuf],
) -> Result<Vec<(StageResult, Dataset)>> {
    let shard_seconds = shard_seconds(dirs);
    let mut checked: Vec<(StageResult, Dataset)> = Vec::new();
    let mut results: Vec<Option<StageResult>> = Vec::new();
    for (index, stage) in scenario.stages.iter().enumerate() {
        let lineup = Lineup {
            stage,
            agents: seat_agents(stage, &results, &scenario.stages)?,
            decision_sample: scenario.output.decision_sample,
            trace: scenario.output.trace.clone(),
        };
        let dir = scenario.stage_dir(index);
        let key = key_of(hash, &lineup);
        let dataset = Dataset::open(&dir)?;
        // Units without records: the shards that owe them, named.
        if dataset.check(&key).is_ok() {
            let gaps = dataset.missing(0..dataset.target(key.stage_units));
            if !gaps.is_empty() {
                return Err(incomplete(scenario, index, &dataset, gaps, dirs)?.into());
            }
        }
        let complete = dataset.check(&key).and_then(|()| {
            dataset.check_complete()?;
            Ok(())
        });
        if let Err(e) = complete {
            return Err(Refusal(format!(
                "cannot merge stage `{}`: {e:#}; nothing was changed",
                stage.name
            ))
            .into());
        }
        let seconds = shard_seconds.get(&stage.name).copied().unwrap_or(0.0);
        let result = stage_result(&lineup, &dir, dataset.totals(key.agents.len()), seconds);
        results.push(Some(result.clone()));
        checked.push((result, dataset));
    }
    Ok(checked)
}

/// Refuses (a [`Refusal`]) to `--resume` the run in `root` with settings or a scenario other than
/// those it was started with, saying what differs in the command line's words (`--rounds`,
/// `--seed`, `--trace`) and the scenario file's (a stage's deals, an agent's parameter, a
/// script), and what to do.
fn check_resume(root: &Path, scenario: &Scenario, cli: &CommandLine) -> Result<()> {
    if let Some((path, format)) = crate::trace::other_format(root) {
        return Err(Refusal(format!(
            "--resume: {} holds traces of format {format} ({}), written by an older \
             dhumbal-run; this one writes format {}, and one run's traces are of one format. \
             Finish it with the build that started it, or start over with --force in place of \
             --resume",
            root.display(),
            path.display(),
            crate::trace::FORMAT
        ))
        .into());
    }
    // Without the folder's source/run.json, `Progress::start` compares the hashes alone.
    let Ok(saved) = folder::saved_run(root) else {
        return Ok(());
    };
    if saved.hash.as_deref() == Some(scenario.hash().as_str()) {
        return Ok(());
    }
    let was = &saved.command_line;
    let with = |flag: &str, value: Option<String>| match value {
        Some(v) => format!("with {flag} {v}"),
        None => format!("without {flag}"),
    };
    let gives = |flag: &str, value: Option<String>| match value {
        Some(v) => format!("gives {flag} {v}"),
        None => format!("gives no {flag}"),
    };
    let deals = |d: &[u64]| {
        (!d.is_empty()).then(|| d.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
    };
    // Each setting that differs: (what it was, the line that says so).
    let mut settings: Vec<(String, String)> = Vec::new();
    if was.rounds != cli.rounds {
        settings.push((
            was.rounds
                .map_or("no --rounds".into(), |r| format!("--rounds {r}")),
            format!(
                "--rounds: this folder was started {}, this command {} (--rounds replaces \
                 every stage's sample size: its deals, or games under point scoring)",
                with("--rounds", was.rounds.map(|r| r.to_string())),
                gives("--rounds", cli.rounds.map(|r| r.to_string())),
            ),
        ));
    }
    if was.seed != cli.seed {
        settings.push((
            was.seed
                .map_or("no --seed".into(), |s| format!("--seed {s}")),
            format!(
                "--seed: this folder was started {}, this command {}",
                with("--seed", was.seed.map(|s| s.to_string())),
                gives("--seed", cli.seed.map(|s| s.to_string())),
            ),
        ));
    }
    if was.trace != cli.trace {
        settings.push((
            deals(&was.trace).map_or("no --trace".into(), |d| format!("--trace {d}")),
            format!(
                "--trace: this folder was started {}, this command {}",
                with("--trace", deals(&was.trace)),
                gives("--trace", deals(&cli.trace)),
            ),
        ));
    }
    // The scenario file and its scripts, compared under the folder's own settings, so that
    // a changed setting is not also reported as every stage it changes.
    let as_started = crate::scenario::load(
        &scenario.path,
        &crate::scenario::Overrides {
            seed: was.seed,
            rounds: was.rounds,
            trace: was.trace.clone(),
            out: Some(root.to_path_buf()),
        },
    );
    let files: Vec<String> = match as_started {
        Ok(s) if saved.hash.as_deref() == Some(s.hash().as_str()) => Vec::new(),
        Ok(s) => folder::differences(&saved.resolved, &s.resolved_json(), 8),
        Err(_) => folder::differences(&saved.resolved, &scenario.resolved_json(), 8),
    };
    let mut message = format!(
        "--resume: {} was started {}; nothing was changed. What differs:",
        root.display(),
        if files.is_empty() {
            "with other settings"
        } else {
            "from a different scenario"
        }
    );
    for line in settings.iter().map(|(_, l)| l).chain(&files) {
        message.push_str(&format!("\n  {line}"));
    }
    message.push_str("\nTo finish the interrupted run, resume it as it was started");
    if !settings.is_empty() {
        let flags: Vec<&str> = settings.iter().map(|(f, _)| f.as_str()).collect();
        message.push_str(&format!(" ({})", flags.join(", ")));
    }
    if !files.is_empty() {
        message.push_str(
            ", with the scenario file and scripts as they were (the folder's source/ holds \
             the copy it was started with)",
        );
    }
    message.push_str(&format!(
        ". To play with this command's settings instead, start over: the same command with \
         --force in place of --resume (it removes the records, summaries and reports a run \
         writes in {}; other files stay), or with another --out",
        root.display()
    ));
    Err(Refusal(message).into())
}

/// `merge` found a stage that lacks units: which, the shards that still owe them, and the
/// stages after it that are not complete either. Bad input (the CLI exits with 2); nothing was
/// changed.
#[derive(Debug)]
pub struct Incomplete {
    pub stage: String,
    /// Whether the scenario has stages (each in a folder of its own, `--stage` names them).
    pub staged: bool,
    pub units: u64,
    /// The units without records.
    pub gaps: Vec<std::ops::Range<u64>>,
    /// Where the stage's parts are.
    pub dir: PathBuf,
    /// The study's number of shards, read from the shards' progress files
    /// (`shards/I-of-N.json`; the most common where they differ), if any shard left one.
    pub count: Option<u64>,
    /// The shards (of `count`) whose share has units missing, each with the merged folder that
    /// holds its progress file, if one does.
    pub shards: Vec<(u64, Option<PathBuf>)>,
    /// The stages after it that are not complete either.
    pub later: Vec<String>,
    /// Several folders (shards with an --out of their own) were given, not one they shared.
    pub separate: bool,
    /// A sequential test's stage: where its looks stand.
    pub looks: Option<Looks>,
}

impl Incomplete {
    /// Units without records.
    pub fn missing(&self) -> u64 {
        self.gaps.iter().map(|g| g.end - g.start).sum()
    }

    /// The first gaps, as `a..b, c..d, ...`.
    pub fn gap_list(&self) -> String {
        let list: Vec<String> = self
            .gaps
            .iter()
            .take(4)
            .map(|g| format!("{}..{}", g.start, g.end))
            .collect();
        format!(
            "{}{}",
            list.join(", "),
            if self.gaps.len() > 4 { ", ..." } else { "" }
        )
    }
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot merge: stage `{}` is not complete: {} of its {} units have no records yet \
             (units {}) in {}; nothing was changed. ",
            self.stage,
            self.missing(),
            self.units,
            self.gap_list(),
            self.dir.display()
        )?;
        match (self.looks, self.count) {
            (Some(looks), _) if !looks.decided => write!(
                f,
                "It is a sequential test that has not decided yet ({} of at most {} matches on \
                 disk, in order): run every shard again, once per look, until it decides \
                 (scripts/slurm/drive.sbatch does this on Slurm)",
                looks.matches_done, looks.max
            )?,
            (_, Some(count)) => {
                let names: Vec<String> = self
                    .shards
                    .iter()
                    .map(|(i, _)| format!("{i}/{count}"))
                    .collect();
                write!(
                    f,
                    "Shard(s) {} have not finished their share: run them again (each plays \
                     only what is missing)",
                    names.join(", ")
                )?;
            }
            (_, None) => f.write_str("No shard has started it: run the study's shards")?,
        }
        if !self.later.is_empty() {
            write!(
                f,
                ", then the stage(s) after it ({})",
                self.later.join(", ")
            )?;
        }
        f.write_str(", then merge again")
    }
}

impl std::error::Error for Incomplete {}

/// What [`Incomplete`] says of stage `index`, whose `gaps` are missing.
fn incomplete(
    scenario: &Scenario,
    index: usize,
    dataset: &Dataset,
    gaps: Vec<std::ops::Range<u64>>,
    dirs: &[PathBuf],
) -> Result<Incomplete> {
    let stage = &scenario.stages[index];
    // The shards' progress files, `I-of-N.json`, in each folder.
    let found: Vec<(u64, u64, PathBuf)> = dirs
        .iter()
        .flat_map(|dir| {
            shard_files(dir)
                .into_iter()
                .map(|(i, n)| (i, n, dir.clone()))
        })
        .collect();
    let count = most_common(found.iter().map(|(_, n, _)| *n).collect());
    let shards = match count {
        Some(count) => shards_missing(scenario, stage, dataset, count)
            .into_iter()
            .map(|i| {
                let dir = found
                    .iter()
                    .find(|(j, n, _)| *j == i && *n == count)
                    .map(|(_, _, d)| d.clone());
                (i, dir)
            })
            .collect(),
        None => Vec::new(),
    };
    let mut later = Vec::new();
    for (j, s) in scenario.stages.iter().enumerate().skip(index + 1) {
        if !Dataset::open(&scenario.stage_dir(j))?.is_complete(stage_units(s)) {
            later.push(s.name.clone());
        }
    }
    Ok(Incomplete {
        stage: stage.name.clone(),
        staged: scenario.staged,
        units: stage_units(stage),
        gaps,
        dir: dataset.dir.clone(),
        count,
        shards,
        later,
        separate: dirs.len() > 1,
        looks: Looks::of(stage, dataset),
    })
}

/// Whether two paths name the same folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The command-line settings a folder's run was started with.
fn saved_command_line(dir: &Path) -> Result<CommandLine> {
    Ok(folder::saved_run(dir)?.command_line)
}

/// Links (or copies) the parts of stage `index` from every folder of `dirs` into the output
/// folder. A part found in two folders is refused: each unit must come from one shard.
fn gather(scenario: &Scenario, index: usize, dirs: &[PathBuf]) -> Result<()> {
    let target = scenario.stage_dir(index).join(crate::dataset::DATASET_DIR);
    std::fs::create_dir_all(&target).doing("cannot create", &target)?;
    let stage = &scenario.stages[index];
    let mut from: std::collections::HashMap<String, PathBuf> = Default::default();
    for dir in dirs {
        let stage_dir = if scenario.staged {
            dir.join(&stage.name)
        } else {
            dir.clone()
        };
        for part in Dataset::open(&stage_dir)?.parts {
            let name = part
                .path
                .file_name()
                .expect("a part has a name")
                .to_string_lossy()
                .into_owned();
            if let Some(first) = from.get(&name) {
                return Err(Refusal(format!(
                    "stage `{}`: units {}..{} are in {} and in {}; each unit must come from \
                     one shard (remove one copy)",
                    stage.name,
                    part.meta.start,
                    part.meta.end,
                    first.display(),
                    part.path.display()
                ))
                .into());
            }
            let to = target.join(&name);
            if std::fs::hard_link(&part.path, &to).is_err() {
                // Another filesystem: copied under a temporary name and renamed, so that
                // `rounds/` never holds half a part.
                let incoming = target.with_file_name(crate::dataset::INCOMING_DIR);
                std::fs::create_dir_all(&incoming).doing("cannot create", &incoming)?;
                let tmp = incoming.join(format!("{name}.{}.tmp", std::process::id()));
                std::fs::copy(&part.path, &tmp)
                    .and_then(|_| std::fs::File::open(&tmp)?.sync_all())
                    .and_then(|()| std::fs::rename(&tmp, &to))
                    .map_err(copy_error("cannot copy", &part.path, &to))?;
            }
            from.insert(name, part.path);
        }
        // The traces of those units (a unit's trace is beside its records).
        let traces = stage_dir.join(crate::trace::TRACES_DIR);
        if let Ok(entries) = std::fs::read_dir(&traces) {
            let into = target.with_file_name(crate::trace::TRACES_DIR);
            std::fs::create_dir_all(&into).doing("cannot create", &into)?;
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "jsonl") {
                    continue;
                }
                let to = into.join(entry.file_name());
                if !to.exists() && std::fs::hard_link(&path, &to).is_err() {
                    std::fs::copy(&path, &to).map_err(copy_error("cannot copy", &path, &to))?;
                }
            }
        }
    }
    Ok(())
}

/// Seconds each stage took, summed over the shards' progress files in `dirs` (machine time,
/// not wall time: shards run side by side).
fn shard_seconds(dirs: &[PathBuf]) -> std::collections::HashMap<String, f64> {
    let mut seconds = std::collections::HashMap::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir.join(SHARDS_DIR)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let Ok(p) = Progress::read(&path) else {
                continue;
            };
            for s in p.stages {
                *seconds.entry(s.name).or_insert(0.0) += s.seconds;
            }
        }
    }
    seconds
}

/// Plays a stage's job: a sequential test's or a gain test's look by look, any other
/// stage's units as they come (only that one hands back the job's tap: the tests read their
/// records back between looks, so no tap sees them in one pass).
fn play_job<'t>(
    stage: &Stage,
    hash: &str,
    dir: &Path,
    part_units: u64,
    shard: Option<Shard>,
    job: crate::pipeline::StageJob<'_, 't>,
) -> crate::pipeline::Played<'t> {
    let (written, failure) = match (&stage.sequential, &stage.gain_test) {
        (Some(plan), _) => play_sequential(plan, hash, dir, part_units, shard, job),
        (None, Some(plan)) => play_gain_test(plan, hash, dir, part_units, shard, job),
        (None, None) => return crate::pipeline::play_stage(job),
    };
    crate::pipeline::Played {
        written,
        failure,
        tap: None,
    }
}

/// Plays a sequential stage (`job.work` is ignored): batches of `plan.every` matches in match
/// order, and after each batch the test on the scores of every match so far, read back from
/// the records on disk ([`play_in_looks`]); the outcome is kept in the stage's folder
/// ([`crate::sequential::DECISION_FILE`]), which makes the stage complete at its stop.
fn play_sequential(
    plan: &crate::sequential::Plan,
    scenario_hash: &str,
    dir: &Path,
    part_units: u64,
    shard: Option<Shard>,
    job: crate::pipeline::StageJob<'_, '_>,
) -> (Result<()>, Option<Halt>) {
    use crate::sequential::{Outcome, decide_course, match_scores, sequential};
    let stage = job.lineup.stage;
    let arrangements = stage.arrangements();
    let per = u64::from(stage.session.unwrap_or(1));
    let points = stage.is_points();
    let shape = test_shape(stage, job.lineup.agents.len());
    let config = plan.config(arrangements, shape.rounds_per_match);
    let max = stage.matches;
    let mut scores: Vec<f64> = Vec::new();
    let mut look = |from: u64, to: u64| -> Result<Option<Outcome>> {
        let dataset = Dataset::open(dir)?;
        Ok(if plan.decide {
            // The pair may change from look to look: every look is replayed from the
            // records, as the report does.
            let (pair, all, course) = decide_course(&dataset, plan, shape, to)?;
            Outcome::new(scenario_hash, &stage.name, &pair, shape, &all, &course)
        } else {
            scores.extend(match_scores(
                &dataset,
                plan,
                from..to,
                arrangements,
                per,
                points,
            )?);
            let course = sequential(&scores, &config, plan.every, max).map_err(|source| {
                Error::Sequential {
                    stage: stage.name.clone(),
                    source,
                }
            })?;
            Outcome::new(scenario_hash, &stage.name, plan, shape, &scores, &course)
        })
    };
    play_in_looks(plan.every, dir, part_units, shard, job, &mut look)
}

/// Plays an `exploit:` responder's stage that tests its gain sequentially (`job.work` is
/// ignored): looks every `plan.every` deals, the gains read back from its records and from
/// the self-play's (the folder `plan.against` beside `dir`, played in full before it); the
/// outcome is kept in the stage's folder ([`crate::exploit::GAIN_TEST_FILE`]).
fn play_gain_test(
    plan: &crate::exploit::GainPlan,
    scenario_hash: &str,
    dir: &Path,
    part_units: u64,
    shard: Option<Shard>,
    job: crate::pipeline::StageJob<'_, '_>,
) -> (Result<()>, Option<Halt>) {
    use crate::exploit::{GainOutcome, deal_gains};
    let stage = job.lineup.stage;
    let arrangements = stage.arrangements();
    let points = stage.is_points();
    let max = stage.matches;
    let against = dir.parent().unwrap_or(Path::new(".")).join(&plan.against);
    let mut gains: Vec<f64> = Vec::new();
    let mut look = |from: u64, to: u64| -> Result<Option<GainOutcome>> {
        let mine = Dataset::open(dir)?;
        let base = Dataset::open(&against)?;
        gains.extend(deal_gains(
            plan,
            &mine,
            &base,
            points,
            arrangements,
            from..to,
        )?);
        let course = GainOutcome::course(plan, &gains, max)?;
        Ok(GainOutcome::new(
            scenario_hash,
            &stage.name,
            plan,
            arrangements,
            max,
            &gains,
            &course,
        ))
    };
    play_in_looks(plan.every, dir, part_units, shard, job, &mut look)
}

/// What the matches of `stage` (with `agents` agents) are, for its sequential test.
fn test_shape(stage: &Stage, agents: usize) -> crate::sequential::Shape {
    let points = stage.is_points();
    crate::sequential::Shape {
        max_matches: stage.matches,
        arrangements: stage.arrangements(),
        rounds_per_match: if points {
            1
        } else {
            u64::from(stage.session.unwrap_or(1))
        },
        points,
        agents: agents as u64,
    }
}

/// A sequential test's outcome, kept in the stage's folder when the test decides.
trait Decided {
    fn save(&self, stage_dir: &Path) -> Result<()>;
}

impl Decided for crate::sequential::Outcome {
    fn save(&self, stage_dir: &Path) -> Result<()> {
        crate::sequential::Outcome::save(self, stage_dir)
    }
}

impl Decided for crate::exploit::GainOutcome {
    fn save(&self, stage_dir: &Path) -> Result<()> {
        crate::exploit::GainOutcome::save(self, stage_dir)
    }
}

/// Plays a stage in batches of `every` matches in match order, each the units no part holds
/// yet, and after each batch calls `look` with the batch's matches; it stops at the first look
/// whose test decides, keeping the outcome, or at the stage's maximum. Looks fall
/// on the same matches whatever the threads, and a resumed run replays the same looks from the
/// records, so the stop is the same.
///
/// A shard replays the looks on disk the same way, then plays its share of the first look
/// that lacks units ([`Shard::within`]) and returns: the test looks once every shard has played
/// its share, so one array of shards is one look (scripts/slurm/drive.sbatch submits them until
/// the test decides). The shard that completes a look (any that finds it complete) takes the
/// look and keeps the outcome if it decides; every shard computes the same one from the same
/// records, so which one writes it does not matter.
fn play_in_looks<O: Decided>(
    every: u64,
    dir: &Path,
    part_units: u64,
    shard: Option<Shard>,
    job: crate::pipeline::StageJob<'_, '_>,
    look: &mut dyn FnMut(u64, u64) -> Result<Option<O>>,
) -> (Result<()>, Option<Halt>) {
    let crate::pipeline::StageJob {
        lineup,
        pool,
        threads,
        writer,
        landed,
        pulse,
        ..
    } = job;
    let stage = lineup.stage;
    let arrangements = stage.arrangements();
    let max = stage.matches;
    let mut from = 0;
    while from < max {
        let to = (from + every).min(max);
        let units = from * arrangements..to * arrangements;
        let dataset = match Dataset::open(dir) {
            Ok(d) => d,
            Err(e) => return (Err(e), None),
        };
        let mine = shard.map_or(units.clone(), |s| s.within(units.clone()));
        let work = crate::pipeline::cut(&dataset.missing(mine), part_units);
        let others_owe = shard.is_some() && !dataset.missing(units.clone()).is_empty();
        if !work.is_empty() {
            if pulse.stopping() {
                return (Ok(()), Some(Halt::Stopped));
            }
            let played = crate::pipeline::play_stage(crate::pipeline::StageJob {
                lineup,
                pool,
                threads,
                work,
                writer,
                landed: &mut *landed,
                pulse,
                tap: None,
            });
            if played.written.is_err() || played.failure.is_some() {
                return (played.written, played.failure);
            }
        }
        if others_owe {
            // Played its share of this look: the test looks once the other shards have too.
            match Dataset::open(dir) {
                Ok(d) if d.missing(units).is_empty() => {}
                Ok(_) => return (Ok(()), None),
                Err(e) => return (Err(e), None),
            }
        }
        match look(from, to) {
            Err(e) => return (Err(e), None),
            Ok(Some(outcome)) => return (outcome.save(dir), None),
            Ok(None) => {}
        }
        if others_owe {
            // The look this shard completed did not decide: the next array plays the next.
            return (Ok(()), None);
        }
        from = to;
    }
    (
        Err(Error::Internal(format!(
            "stage `{}`: the sequential test reached its maximum without an outcome",
            stage.name
        ))),
        None,
    )
}

/// What every part of the stage `lineup` plays must say of itself.
fn key_of(scenario_hash: &str, lineup: &Lineup<'_>) -> StageKey {
    StageKey {
        scenario: scenario_hash.to_string(),
        stage: lineup.stage.name.clone(),
        agents: lineup.agents.iter().map(|a| a.id.clone()).collect(),
        stage_units: lineup.units(),
    }
}

/// Where a run keeps its progress, and where shards keep theirs.
pub const PROGRESS_FILE: &str = "progress.json";
pub const SHARDS_DIR: &str = "shards";

/// Records `stage`'s state in `progress` (replacing an earlier entry of the same stage): the
/// units of `slice` (the whole stage, or a shard's share) on disk, and their totals.
fn set_stage(
    progress: &mut Progress,
    stage: &Stage,
    slice: std::ops::Range<u64>,
    dataset: &Dataset,
    seconds: f64,
) {
    let missing: u64 = dataset
        .missing(slice.clone())
        .iter()
        .map(|r| r.end - r.start)
        .sum();
    let total = slice.end - slice.start;
    progress.stages.retain(|s| s.name != stage.name);
    progress.stages.push(StageProgress {
        name: stage.name.clone(),
        units_total: total,
        units_done: total - missing,
        complete: missing == 0,
        seconds,
        totals: dataset.totals_within(slice, stage.seats.len()),
    });
}

/// What follows a stage's last part: `summary.csv`, `rounds.csv` if asked for, and the replay
/// page of its traces (`traces/replay.html`) if it has any.
fn finish_stage(
    result: &StageResult,
    dataset: &Dataset,
    scenario: &Scenario,
    opts: &RunOptions,
) -> Result<()> {
    crate::summary::write_summary_csv(&result.dir.join("summary.csv"), result)?;
    if (scenario.output.csv || opts.csv) && !result.dir.join("rounds.csv").is_file() {
        crate::dataset::write_csv(&result.dir, dataset)?;
    }
    crate::viewer::write_viewer(&result.dir)?;
    crate::crash::point("stage-finished");
    Ok(())
}

/// The agents of a stage, `winner_of` resolved: a winner keeps its definition (a script is
/// recompiled for this stage's rules) and, if its id is taken, gets its stage's name appended.
fn seat_agents(
    stage: &Stage,
    results: &[Option<StageResult>],
    stages: &[Stage],
) -> Result<Vec<AgentDef>> {
    let mut agents = Vec::with_capacity(stage.seats.len());
    let mut winner_from = Vec::with_capacity(stage.seats.len());
    for seat in &stage.seats {
        match seat {
            SeatEntry::Agent(def) => {
                agents.push(def.clone());
                winner_from.push(None);
            }
            SeatEntry::WinnerOf(i) => {
                let Some(result) = &results[*i] else {
                    return Err(Waiting {
                        stage: stage.name.clone(),
                        waits_for: stages[*i].name.clone(),
                        needs: Needs::Winner,
                        shard_stages: Vec::new(),
                        rounds_now: 0,
                        seconds: 0.0,
                    }
                    .into());
                };
                let mut def = result.agents[result.winner()].clone();
                if let Some(recipe) = def.recipe.for_rules(&stage.rules).map_err(|e| {
                    Error::Play(format!(
                        "recompiling {} for stage `{}`: {e}",
                        def.kind, stage.name
                    ))
                })? {
                    def.recipe = recipe;
                }
                agents.push(def);
                winner_from.push(Some(result.name.clone()));
            }
        }
    }
    // Keep ids unique: a winner meeting an agent of the same name is told apart by its stage,
    // then by a number if need be.
    for i in 0..agents.len() {
        let Some(from) = &winner_from[i] else {
            continue;
        };
        let taken = |id: &str, agents: &[AgentDef]| {
            agents.iter().enumerate().any(|(j, a)| j != i && a.id == id)
        };
        if taken(&agents[i].id, &agents) {
            let base = format!("{}-{from}", agents[i].id);
            let mut id = base.clone();
            let mut n = 2;
            while taken(&id, &agents) {
                id = format!("{base}-{n}");
                n += 1;
            }
            agents[i].id = id;
        }
    }
    Ok(agents)
}

fn stage_result(lineup: &Lineup<'_>, dir: &Path, totals: StageTotals, seconds: f64) -> StageResult {
    StageResult {
        name: lineup.stage.name.clone(),
        dir: dir.to_path_buf(),
        agents: lineup.agents.clone(),
        totals,
        points: lineup.stage.is_points(),
        seconds,
        restored: false,
        intervals: None,
    }
}

/// An agent or the engine failed: where, what, and what to do. An agent's error (a bug in a
/// script, say) is not a crash: the same deal would fail again, so `--resume` is no help
/// until the agent is fixed, and fixing a script changes the scenario.
fn describe_failure(stage: &Stage, e: &UnitError, dir: &Path) -> Error {
    let deal = match stage.session {
        Some(len) => format!("deal {}", e.matchno * u64::from(len) + u64::from(e.round)),
        None => format!("game {}, round {}", e.matchno, e.round),
    };
    Error::Play(format!(
        "stage `{}`, {deal}, seating {}: {}\nThe run stopped; the records of the finished \
         chunks are in {}. Fix the agent, then run again with --force (a changed agent is a \
         changed scenario, which --resume refuses)",
        stage.name,
        e.arrangement,
        e.error,
        dir.display()
    ))
}
