//! `dhumbal-run tune FILE` over the experiment engine's tunings
//! ([`crate::experiment::produce::tunings`], docs/tuning.md): the search with a progress bar
//! showing the best so far (drawn here), then the confirmation stage (the tuned agent against
//! the start on fresh deals, a sequential test) played and reported like any stage, then the
//! tuning's own report (`tune/<id>/report.md`).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use dhumbal_runner::scenario::{Overrides, Tuning};
use dhumbal_runner::tune::{Evaluation, Method, TuneReporter, TuneResult};

use super::settings::Entries;
use crate::experiment;

/// `dhumbal-run tune`.
#[derive(Args, Debug, Clone)]
#[command(
    mut_arg("scenario", |a| a.help("The scenario file whose `tune:` section to run")),
    mut_arg("resume", |a| a.help(
        "Continue a search stopped by Ctrl-C or a kill (its log in tune/<id>/), and its \
        confirmation"
    )),
    mut_arg("force", |a| a.help(
        "Tune afresh, replacing the agent file, the search's records and its confirmation"
    )),
    mut_arg("out", |a| a.help(
        "Where the tuning records go (default: the scenario's output folder)"
    )),
)]
pub struct TuneArgs {
    #[command(flatten)]
    pub entries: Entries,
}

/// `dhumbal-run tune`.
pub fn tune(args: TuneArgs) -> anyhow::Result<ExitCode> {
    args.entries.produce(
        Overrides::default(),
        "tuning",
        "has no `tune:` section: nothing to tune (docs/tuning.md)",
        |s| s.tunings.iter().map(|t| t.id.as_str()).collect(),
        experiment::produce::tunings,
    )
}

/// The search's progress bar: evaluations, deals, and the best so far.
#[derive(Default)]
pub struct TuneTerminal {
    bar: Mutex<Option<ProgressBar>>,
}

impl TuneReporter for TuneTerminal {
    fn start(&self, t: &Tuning, done: u64) {
        let mut bar = self.bar.lock().expect("bar");
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
        let opponents: Vec<String> = t
            .lineups
            .iter()
            .map(|l| {
                l.iter()
                    .map(|d| d.id.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect();
        let unit = unit(t);
        if done == 0 {
            println!(
                "tuning `{}`: {} parameter{} of `{}` by {}, {} {unit} in evaluations of {}, objective {}, {} players against [{}]; writes {}",
                t.id,
                t.params.len(),
                if t.params.len() == 1 { "" } else { "s" },
                t.start_agent.id,
                Method::of(&t.optimizer).title(),
                t.budget,
                t.batch,
                t.objective.name(),
                t.rules.players(),
                opponents.join("] or ["),
                t.output.display()
            );
        } else {
            println!("tuning `{}`: resuming after {done} {unit}", t.id);
        }
        if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(t.budget);
            b.set_style(
                ProgressStyle::with_template(&format!(
                    "{{prefix}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, ETA {{eta}}{{msg}}"
                ))
                .expect("template")
                .progress_chars("=> "),
            );
            b.set_prefix(t.id.clone());
            b.set_position(done);
            b.reset_eta();
            *bar = Some(b);
        }
    }

    fn evaluated(&self, _t: &Tuning, e: &Evaluation, best: &str) {
        if let Some(b) = self.bar.lock().expect("bar").as_ref() {
            b.set_position(e.deals_total);
            b.set_message(format!("; best so far: {best}"));
        }
    }

    fn finished(&self, t: &Tuning, r: &TuneResult) {
        if let Some(b) = self.bar.lock().expect("bar").take() {
            b.finish_and_clear();
        }
        if !r.stopped && r.waiting.is_none() {
            println!(
                "tuning `{}`: {} evaluations, {} {} in {:.1} s; best: {}; written to {}",
                t.id,
                r.evaluations,
                r.deals,
                unit(t),
                r.seconds,
                r.best,
                r.output.display()
            );
        }
    }
}

/// What a tuning's budget counts: games under point scoring, deals under coin scoring.
fn unit(t: &Tuning) -> &'static str {
    if matches!(
        t.rules.variant().scoring,
        dhumbal_game::rules::Scoring::Points(_)
    ) {
        "games"
    } else {
        "deals"
    }
}
