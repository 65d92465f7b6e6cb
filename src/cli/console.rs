//! The terminal as the experiment engine's front end ([`crate::experiment::Hooks`]): lines on
//! stdout, warnings on stderr, progress bars on a terminal, and Ctrl-C (one handler for the
//! whole command, [`Interrupt`]: the first stops the work cleanly, a second quits at once).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use dhumbal_agents::escape_lines;
use dhumbal_runner::train::TrainReporter;
use dhumbal_runner::tune::TuneReporter;

use super::interrupt::Interrupt;
use super::progress::{Terminal, TrainTerminal};
use super::tune::TuneTerminal;
use crate::experiment::{Hooks, StageHooks};

/// The terminal's hooks, with Ctrl-C handled while it lives.
pub struct Console {
    interrupt: Interrupt,
    tune: TuneTerminal,
    train: TrainTerminal,
}

impl Console {
    /// Installs the Ctrl-C handler (unregistered when the console is dropped, so that a run
    /// inside another process, the Python package's, leaves none behind).
    pub fn new() -> anyhow::Result<Console> {
        Ok(Console {
            interrupt: Interrupt::install()?,
            tune: TuneTerminal::default(),
            train: TrainTerminal::default(),
        })
    }
}

impl Hooks for Console {
    fn stop(&self) -> Arc<AtomicBool> {
        self.interrupt.flag()
    }

    // Lines and warnings may quote what came from outside (a scenario's paths, a script's
    // error): shown with their control characters escaped.
    fn say(&self, line: &str) {
        println!("{}", escape_lines(line));
    }

    fn warn(&self, line: &str) {
        eprintln!("warning: {}", escape_lines(line));
    }

    fn stages(&self, report: bool, resume: &str) -> Box<dyn StageHooks + '_> {
        Box::new(Terminal::new(
            report,
            self.interrupt.flag(),
            resume.to_string(),
        ))
    }

    fn tunings(&self) -> &dyn TuneReporter {
        &self.tune
    }

    fn trainings(&self) -> &dyn TrainReporter {
        &self.train
    }
}

impl StageHooks for Terminal {
    fn end(&self) {
        self.end_stage();
    }
}
