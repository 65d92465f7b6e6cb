//! What the terminal shows while stages play and networks train: a progress bar on a
//! terminal (nothing when stderr is not one), each stage's table when it ends, where its
//! report went, and what Ctrl-C does when it is pressed.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use dhumbal_runner::records::Records;
use dhumbal_runner::run::{RecordTap, Reporter, StageResult};
use dhumbal_runner::scenario::{self, AgentDef, Stage};
use dhumbal_runner::tournament::Pulse;

/// Progress bar on a terminal, nothing otherwise; summaries on stdout.
pub struct Terminal {
    /// Write each stage's statistics report once its records are safe.
    report: bool,
    /// The stage in play: its bar, and the flag that ends its ticker.
    stage: Mutex<Option<(Option<ProgressBar>, Arc<AtomicBool>)>>,
    /// Set by Ctrl-C.
    stop: Arc<AtomicBool>,
    resume_command: String,
    /// The analysis of the stage just finished, by stage name, made once for its summary's
    /// intervals and its report: by its tap ([`StreamTap`]) when it was played whole, else in
    /// `intervals` from its dataset.
    analysis: Mutex<Option<(String, Analyzed)>>,
}

/// The report's pass over a stage's records, fed as they are played: when the stage ends,
/// its analysis needs no second reading of the dataset (on a million rounds, about a tenth of
/// the time of a run with its report).
struct StreamTap<'a> {
    stream: dhumbal_report::metrics::Stream,
    info: dhumbal_report::StageInfo,
    out: &'a Mutex<Option<(String, Analyzed)>>,
}

impl RecordTap for StreamTap<'_> {
    fn records(&mut self, _units: std::ops::Range<u64>, records: &[Records]) {
        self.stream.push(records);
    }

    fn complete(self: Box<Self>) {
        // Records the pass cannot make sense of are left to the reading of the dataset,
        // which names the file.
        if let Ok(Some(acc)) = self.stream.finish() {
            let opts = dhumbal_report::Options::default();
            let analyzed = dhumbal_report::analyze_for_report(&self.info, acc, &opts);
            *self.out.lock().expect("lock") = Some((self.info.name.clone(), analyzed));
        }
    }
}

/// What [`dhumbal_report::analyze_stage`] and [`dhumbal_report::analyze_for_report`] give.
type Analyzed = (
    dhumbal_report::StageAnalysis,
    dhumbal_report::metrics::Accumulated,
);

impl Terminal {
    /// A reporter that writes each stage's statistics when `report`, watches `stop` (set by
    /// Ctrl-C) and names `resume_command` as the way to finish.
    pub fn new(report: bool, stop: Arc<AtomicBool>, resume_command: String) -> Terminal {
        Terminal {
            report,
            stage: Mutex::new(None),
            stop,
            resume_command,
            analysis: Mutex::new(None),
        }
    }

    /// Clears the bar and stops the ticker of the stage in play, if any.
    pub fn end_stage(&self) {
        if let Some((bar, over)) = self.stage.lock().expect("lock").take() {
            over.store(true, Ordering::Relaxed);
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
        }
    }
}

impl Reporter for Terminal {
    fn stage_start(
        &self,
        stage: &Stage,
        _lineup: &[AgentDef],
        units: u64,
        done: u64,
        pulse: &Arc<Pulse>,
    ) {
        self.end_stage();
        let per_unit = stage.session.map(u64::from);
        let bar = std::io::stderr().is_terminal().then(|| {
            let (len, unit) = match per_unit {
                Some(n) => (units * n, "rounds"),
                None => (units, "games"),
            };
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{prefix}} [{{bar:40}}] {{human_pos}}/{{human_len}} {unit}{{msg}}, {{rate}}, ETA {{eta}}"
                ))
                .expect("template")
                .with_key("rate", rate)
                .progress_chars("=> "),
            );
            bar.set_prefix(stage.name.clone());
            bar.set_position(done * per_unit.unwrap_or(1));
            bar.reset_eta();
            bar
        });
        let over = Arc::new(AtomicBool::new(false));
        // The ticker: moves the bar from the live counts several times a second, whatever
        // the agents' speed (records are written a chunk at a time), and says what Ctrl-C
        // does when it is pressed.
        {
            let (bar, over, pulse, stop) = (
                bar.clone(),
                Arc::clone(&over),
                Arc::clone(pulse),
                Arc::clone(&self.stop),
            );
            let resume = self.resume_command.clone();
            std::thread::spawn(move || {
                let mut told = false;
                while !over.load(Ordering::Relaxed) {
                    if let Some(bar) = &bar {
                        let rounds = pulse.rounds.load(Ordering::Relaxed);
                        match per_unit {
                            Some(n) => bar.set_position(done * n + rounds),
                            None => {
                                bar.set_position(done + pulse.units.load(Ordering::Relaxed));
                                bar.set_message(format!(" ({rounds} rounds)"));
                            }
                        }
                    }
                    if !told && stop.load(Ordering::Relaxed) {
                        told = true;
                        let text = format!(
                            "Ctrl-C: stopping once the chunks in play are saved (Ctrl-C again quits \
                             at once, losing them); then `{resume}` finishes the run"
                        );
                        match &bar {
                            Some(bar) => bar.println(text),
                            None => eprintln!("{text}"),
                        }
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        }
        *self.stage.lock().expect("lock") = Some((bar, over));
    }

    fn intervals(
        &self,
        stage: &Stage,
        result: &StageResult,
    ) -> Option<Vec<dhumbal_runner::summary::DesignIntervals>> {
        // The design's intervals come from the stage's analysis, which its report needs
        // anyway: made once, here (or by the stage's tap as it played), and kept for
        // `stage_done`. With --no-report nothing is
        // analysed (a run that asks for records alone pays for nothing more): the summary
        // and the table give Wilson's interval, and say so (`win_ci95_method`).
        if !self.report {
            return None;
        }
        let mut slot = self.analysis.lock().expect("lock");
        let analyzed = match slot.take().filter(|(name, _)| *name == stage.name) {
            Some((_, tapped)) => Ok(tapped),
            None => {
                let info = dhumbal_report::StageInfo::of_stage(stage, &result.agents);
                let opts = dhumbal_report::Options::default();
                // Not played whole here (resumed, sharded): the report, if one is written,
                // fits the ratings (`report_analyzed`).
                dhumbal_report::analyze_stage(&result.dir, &info, &opts)
            }
        };
        match analyzed {
            Ok(analyzed) => {
                let intervals = dhumbal_report::design_intervals(&analyzed.0);
                *slot = Some((stage.name.clone(), analyzed));
                Some(intervals)
            }
            Err(e) => {
                eprintln!(
                    "warning: stage `{}`: the design's intervals could not be computed \
                     ({e:#}); summary.csv and the table give Wilson's",
                    stage.name
                );
                None
            }
        }
    }

    fn tap(&self, stage: &Stage, agents: &[AgentDef]) -> Option<Box<dyn RecordTap + '_>> {
        // With --no-report nothing is analysed.
        self.report.then(|| {
            let info = dhumbal_report::StageInfo::of_stage(stage, agents);
            Box::new(StreamTap {
                stream: dhumbal_report::metrics::Stream::new(&info),
                info,
                out: &self.analysis,
            }) as Box<dyn RecordTap + '_>
        })
    }

    fn stage_done(&self, stage: &Stage, result: &StageResult) {
        self.end_stage();
        println!(
            "\nstage `{}`: {} rounds in {:.2} s",
            result.name, result.totals.rounds, result.seconds
        );
        print!("{}", dhumbal_runner::summary::table(result));
        if let Ok(Some(o)) = dhumbal_runner::sequential::Outcome::read(&result.dir) {
            let what = if o.plan.decide {
                "winner"
            } else {
                "sequential test"
            };
            println!("{what}: {}", o.sentence());
            println!(
                "the table above is {}",
                dhumbal_runner::sequential::FIXED_SAMPLE
            );
        }
        println!();
        let analyzed = self
            .analysis
            .lock()
            .expect("lock")
            .take()
            .filter(|(name, _)| *name == stage.name);
        // A stage finished before this invocation has its report already, unless the run was
        // killed between its last part and the end of its report: then it is written now.
        let reported = result.restored && has_report(&result.dir);
        if self.report && !reported {
            let info = dhumbal_report::StageInfo::of_stage(stage, &result.agents);
            let opts = dhumbal_report::Options::default();
            let report = match analyzed {
                Some((_, (analysis, acc))) => {
                    dhumbal_report::report_analyzed(&result.dir, &opts, analysis, acc)
                }
                None => dhumbal_report::report_stage(&result.dir, &result.dir, &info, &opts),
            };
            report_done(stage, &report);
        }
    }
}

/// Whether the stage in `dir` has its whole report: `report.md`, written after the statistics
/// and figures, and for a stage that tested sequentially (it keeps its decision) the test in
/// `stats.json`, which is written before `report.md` (so no newer than it).
fn has_report(dir: &std::path::Path) -> bool {
    let modified = |name: &str| std::fs::metadata(dir.join(name)).and_then(|m| m.modified());
    let Ok(page) = modified("report.md") else {
        return false;
    };
    match dhumbal_runner::sequential::Outcome::read(dir) {
        Ok(None) => true,
        Ok(Some(_)) => {
            let stats = dhumbal_report::stats_file::StatsFile::read(dir);
            stats.is_ok_and(|s| s.sequential.is_some())
                && modified(dhumbal_report::stats_file::FILE).is_ok_and(|s| page >= s)
        }
        Err(_) => false,
    }
}

/// Says where a stage's report went, or why it could not be written (the records are complete
/// either way).
fn report_done(stage: &Stage, report: &dhumbal_report::Result<dhumbal_report::StageReport>) {
    match report {
        Ok(r) => {
            println!(
                "stage `{}`: statistics and figures in {}",
                stage.name,
                r.dir.join("report.md").display()
            );
            for (stem, e) in &r.figure_errors {
                eprintln!("warning: figure `{stem}` was not drawn: {e}");
            }
        }
        Err(e) => eprintln!(
            "warning: stage `{}`: the report could not be written ({e:#}); the records are \
                 complete, `dhumbal-run report` can retry",
            stage.name
        ),
    }
}

/// Training: a line per training and per evaluation, a bar of episodes on a terminal.
#[derive(Default)]
pub struct TrainTerminal {
    bar: Mutex<Option<ProgressBar>>,
}

impl dhumbal_runner::train::TrainReporter for TrainTerminal {
    fn start(&self, t: &scenario::Training, done: u64) {
        let mut bar = self.bar.lock().expect("bar");
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
        if done == 0 {
            match &t.plan {
                scenario::Plan::Neural(p) => println!(
                    "training `{}`: {} on the `{}` encoding, {} episodes at {} players, opponents {}, checkpoint {}",
                    p.id,
                    p.algorithm.name(),
                    p.encoding.name(),
                    p.episodes,
                    p.rules.players(),
                    p.opponents
                        .iter()
                        .map(|o| o.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.checkpoint.display()
                ),
                scenario::Plan::Tabular(p) => println!(
                    "training `{}`: {} over the tabular plan's 1,600 states, {} games to elimination, opponents {}, policy {}",
                    p.id,
                    p.method.name(),
                    p.episodes,
                    p.opponents
                        .iter()
                        .map(|o| o.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.policy.display()
                ),
            }
        } else {
            println!("training `{}`: resuming after {done} episodes", t.id());
        }
        if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(t.episodes());
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{bar:40}] {human_pos}/{human_len} episodes{msg}, {rate}, ETA {eta}",
                )
                .expect("template")
                .with_key("rate", rate)
                .progress_chars("=> "),
            );
            b.set_prefix(t.id().to_string());
            b.set_position(done);
            b.reset_eta();
            *bar = Some(b);
        }
    }

    fn episodes(&self, _t: &scenario::Training, done: u64, _last: &[dhumbal_learn::EpisodeRecord]) {
        if let Some(b) = self.bar.lock().expect("bar").as_ref() {
            b.set_position(done);
        }
    }

    fn evaluation(&self, t: &scenario::Training, e: &dhumbal_learn::EvalRecord) {
        let line = format!(
            "  after {:>7} episodes: wins {:.1}% [{:.1}, {:.1}] against {} ({} {}, learner in every seat)",
            e.episode,
            100.0 * e.win_rate,
            100.0 * e.low,
            100.0 * e.high,
            e.opponent,
            e.deals,
            match t.plan {
                scenario::Plan::Neural(_) => "deals",
                scenario::Plan::Tabular(_) => "games",
            }
        );
        match self.bar.lock().expect("bar").as_ref() {
            Some(b) => b.println(line),
            None => println!("{line}"),
        }
    }

    fn finished(&self, t: &scenario::Training, r: &dhumbal_runner::train::TrainResult) {
        if let Some(b) = self.bar.lock().expect("bar").take() {
            b.finish_and_clear();
        }
        println!(
            "training `{}`: {} episodes in {:.1} s ({:.0} episodes/s{}), checkpoint {}, records {}",
            t.id(),
            r.episodes,
            r.seconds,
            r.episodes as f64 / r.seconds.max(1e-9),
            if r.device.is_empty() {
                String::new()
            } else {
                format!(", {}", r.device)
            },
            r.checkpoint.display(),
            r.dir.display()
        );
    }
}

/// A bar's speed with one decimal (`{per_sec}` prints six).
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{:.1}/s", state.per_sec());
}
