//! The experiment engine (`dhumbal::experiment`) driven as a library, through a test's own
//! `Hooks`: a scenario that tunes an agent and then seats it is tuned first and played after;
//! bad input, a folder holding another run, and a stop each end with their own error and exit
//! code; a stopped run resumed gives the records of one that was never stopped.

mod common;
use common::{has_all, tmp_scenario};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dhumbal::experiment::{self, Error, Hooks, Mode, Options, StageHooks};
use dhumbal::runner::run::{Quiet, Reporter};
use dhumbal::runner::train::TrainReporter;
use dhumbal::runner::tune::TuneReporter;

/// Hooks that keep every line and, with `stop_early`, stop the run once its first stage has
/// played two thousand rounds.
#[derive(Default)]
struct Recorder {
    lines: Mutex<Vec<String>>,
    stop: Arc<AtomicBool>,
    stop_early: bool,
}

impl Hooks for Recorder {
    fn stop(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }
    fn say(&self, line: &str) {
        self.lines.lock().unwrap().push(line.to_string());
    }
    fn warn(&self, line: &str) {
        self.lines.lock().unwrap().push(format!("warning: {line}"));
    }
    fn stages(&self, _report: bool, _resume: &str) -> Box<dyn StageHooks + '_> {
        if self.stop_early {
            Box::new(StopEarly(Arc::clone(&self.stop)))
        } else {
            Box::new(Quiet)
        }
    }
    fn tunings(&self) -> &dyn TuneReporter {
        &Quiet
    }
    fn trainings(&self) -> &dyn TrainReporter {
        &Quiet
    }
}

/// Sets the stop flag once the stage has played 2000 rounds (as Ctrl-C would, from another
/// thread): play ends between rounds, the finished chunks kept.
struct StopEarly(Arc<AtomicBool>);

impl Reporter for StopEarly {
    fn stage_start(
        &self,
        _: &dhumbal::scenario::Stage,
        _: &[dhumbal::scenario::AgentDef],
        _: u64,
        _: u64,
        pulse: &Arc<dhumbal::tournament::Pulse>,
    ) {
        let (stop, pulse) = (Arc::clone(&self.0), Arc::clone(pulse));
        std::thread::spawn(move || {
            while pulse.rounds.load(Ordering::Relaxed) < 2000 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            stop.store(true, Ordering::SeqCst);
        });
    }
}
impl StageHooks for StopEarly {}

const TUNED_THEN_SEATED: &str = "name: tuned-then-seated
seed: 11
deals: 40
seating: rotate
rules: {preset: paper, players: 2}
tune:
  - id: agg
    agent: {kind: aggressive}
    params:
      pickup_threshold: {from: 0, to: 8}
    opponents: [balanced]
    budget: 200
    batch: 20
    confirm: false
    output: tuned/agg.json
agents:
  - tuned: tuned/agg.json
  - kind: balanced
";

#[test]
fn a_tuning_runs_before_the_stage_that_seats_it() {
    let (dir, file) = tmp_scenario("t.yaml", TUNED_THEN_SEATED);
    let out = dir.path().join("out");
    let hooks = Recorder::default();
    let options = Options {
        threads: Some(2),
        overrides: dhumbal::scenario::Overrides {
            out: Some(out.clone()),
            ..Default::default()
        },
        report: false,
        ..Options::default()
    };
    let outcome = experiment::run(&file, &options, &hooks).unwrap();
    assert_eq!(outcome.tuned.len(), 1, "{:?}", hooks.lines.lock().unwrap());
    assert_eq!(outcome.tuned[0].id, "agg");
    assert!(
        outcome.tuned[0]
            .best
            .as_deref()
            .unwrap()
            .starts_with("pickup_threshold=")
    );
    assert!(dir.path().join("tuned/agg.json").is_file());
    let played = outcome.played.expect("the stage was played");
    assert_eq!(played.stages.len(), 1);
    assert_eq!(played.rounds, 40 * 2);
    assert!(
        hooks
            .lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("records, summary and manifest in")),
        "{:?}",
        hooks.lines.lock().unwrap()
    );
    // Again into the same folder: refused (a folder holding another run), exit code 2; the
    // tuning is not done again (its agent file is there).
    let again = experiment::run(&file, &options, &Recorder::default())
        .err()
        .unwrap();
    assert!(matches!(again, Error::BadInput(_)), "{again}");
    assert_eq!(again.exit_code(), 2);
    assert!(again.to_string().contains("--force"), "{again}");
}

#[test]
fn bad_input_is_exit_code_two_with_the_line() {
    let (_dir, file) = tmp_scenario(
        "bad.yaml",
        "name: bad\nseed: 1\ndeals: 10\nrules: {preset: paper, players: 2}\nagents:\n  - kind: aggresive\n  - kind: random\n",
    );
    let e = experiment::run(&file, &Options::default(), &Recorder::default())
        .err()
        .unwrap();
    assert_eq!(e.exit_code(), 2);
    let text = e.to_string();
    has_all(&text, &["bad.yaml", ":6"]);
}

#[test]
fn a_stopped_run_is_interrupted_and_resumes_to_the_same_records() {
    let (dir, file) = tmp_scenario(
        "s.yaml",
        "name: s\nseed: 4\ndeals: 3000\nseating: permute\nrules: {preset: paper, players: 4}\n\
         output: {chunk_rounds: 512}\nagents:\n  - kind: aggressive\n  - kind: balanced\n  \
         - kind: conservative\n  - kind: random\n",
    );
    let options = |out: &str, mode: Mode| Options {
        threads: Some(2),
        mode,
        overrides: dhumbal::scenario::Overrides {
            out: Some(dir.path().join(out)),
            ..Default::default()
        },
        report: false,
        csv: true,
        ..Options::default()
    };
    let stopping = Recorder {
        stop_early: true,
        ..Recorder::default()
    };
    let e = experiment::run(&file, &options("a", Mode::Fresh), &stopping)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Interrupted { .. }), "{e}");
    assert_eq!(e.exit_code(), 130);
    assert!(e.to_string().contains("--resume"), "{e}");
    let resumed = experiment::run(&file, &options("a", Mode::Resume), &Recorder::default())
        .unwrap()
        .played
        .unwrap();
    assert!(resumed.rounds_now < resumed.rounds, "nothing was kept");
    experiment::run(&file, &options("b", Mode::Fresh), &Recorder::default()).unwrap();
    let csv = |run: &str| {
        let text = std::fs::read_to_string(dir.path().join(run).join("rounds.csv")).unwrap();
        // decision_ns (the third field from the end) is a measurement, not a result.
        text.lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split(',').collect();
                let n = f.len();
                f[n - 3] = "";
                f.join(",")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(csv("a"), csv("b"));
}
