//! What several commands share, checked once: the thread count, probabilities, the scenario
//! as loaded with the command line's overrides, and the command lines printed in messages.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::folder::SavedRun;
use dhumbal_runner::scenario::{self, Overrides, Scenario};

use crate::experiment::Hooks;
use crate::experiment::produce::How;

/// The entries `--id` names among `names` (all of them when none is named), or exit code 2
/// with the valid names for an id that is not one; `what` says which section (`training`).
pub fn chosen(
    path: &Path,
    what: &str,
    names: &[&str],
    ids: &[String],
) -> Result<Vec<usize>, ExitCode> {
    let mut which = Vec::new();
    for id in ids {
        match names.iter().position(|n| n == id) {
            Some(i) => which.push(i),
            None => {
                eprintln!(
                    "error: --id {id}: no such {what} in {}; its {what}s: {}",
                    path.display(),
                    names.join(", ")
                );
                return Err(ExitCode::from(2));
            }
        }
    }
    if which.is_empty() {
        which = (0..names.len()).collect();
    }
    Ok(which)
}

/// What `train`, `tune` and `exploit` take: the scenario, which entries of its section, and how to
/// produce them. Each command words the help of `scenario`, `--resume`, `--force` and
/// `--out` for its own section (`mut_arg`).
#[derive(Args, Debug, Clone)]
pub struct Entries {
    pub scenario: PathBuf,
    /// Only these entries (by id; repeat the flag for several). Default: all.
    #[arg(long = "id", value_name = "ID")]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub threads: Threads,
    #[arg(long)]
    pub resume: bool,
    #[arg(long)]
    pub force: bool,
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl Entries {
    /// Runs `work` on the entries of a scenario's section (`what`: `training`, `names`: the
    /// section's ids) that `--id` chose, with the terminal as its hooks: exit code 2 when the
    /// scenario cannot be loaded, has no such section (`none` says so), or an id is not one.
    pub fn produce<T>(
        self,
        overrides: Overrides,
        what: &str,
        none: &str,
        names: impl for<'s> Fn(&'s Scenario) -> Vec<&'s str>,
        work: impl FnOnce(
            &Path,
            &Scenario,
            &[usize],
            &How<'_>,
            &dyn Hooks,
        ) -> Result<T, crate::experiment::Error>,
    ) -> anyhow::Result<ExitCode> {
        let overrides = Overrides {
            out: self.out.clone(),
            ..overrides
        };
        let path = self.scenario;
        let scenario = match load(&path, &overrides) {
            Ok(s) => s,
            Err(code) => return Ok(code),
        };
        let names = names(&scenario);
        if names.is_empty() {
            eprintln!("error: {} {none}", path.display());
            return Ok(ExitCode::from(2));
        }
        let which = match chosen(&path, what, &names, &self.ids) {
            Ok(w) => w,
            Err(code) => return Ok(code),
        };
        let how = How::from_flags(self.threads.threads, self.resume, self.force, &overrides);
        super::with_console(|console| work(&path, &scenario, &which, &how, console))
    }
}

/// `--threads`, as every command that plays takes it.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct Threads {
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_parser = at_least_one)]
    pub threads: Option<usize>,
}

impl Threads {
    /// The count to run with: the one asked for, or every core.
    pub fn count(self) -> usize {
        self.threads.unwrap_or_else(cores)
    }
}

/// This machine's cores (1 when it cannot be told).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A count of at least 1 (`--threads`; each value of bench's list).
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("expected a whole number of at least 1, got `{s}`")),
    }
}

/// A probability strictly between 0 and 1 (`--alpha`, `--power`).
pub fn probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        Ok(p) => Err(format!("must be in (0, 1), got {p}")),
        Err(_) => Err(format!("expected a number in (0, 1), got `{s}`")),
    }
}

/// A difference of win rates in (0, 1] (`--delta`).
pub fn difference(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        Ok(p) => Err(format!("must be in (0, 1], got {p}")),
        Err(_) => Err(format!("expected a number in (0, 1], got `{s}`")),
    }
}

/// The exit code of an argument error, the error printed (`--help` and `--version` are not
/// errors: exit 0).
pub fn clap_exit(e: &clap::Error) -> ExitCode {
    let _ = e.print();
    if e.use_stderr() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The scenario at `path` with the command line's overrides, or exit code 2 with every
/// problem printed.
pub fn load(path: &Path, overrides: &Overrides) -> Result<Scenario, ExitCode> {
    scenario::load(path, overrides).map_err(|e| {
        eprint!("error: {e}");
        ExitCode::from(2)
    })
}

/// The scenario a run folder saved, loaded as that run was (its `--seed`, `--rounds` and
/// `--trace`) into `out`, or exit code 2 with every problem printed.
pub fn load_saved(saved: &SavedRun, out: &Path) -> Result<Scenario, ExitCode> {
    let overrides = Overrides {
        seed: saved.command_line.seed,
        rounds: saved.command_line.rounds,
        trace: saved.command_line.trace.clone(),
        out: Some(out.to_path_buf()),
    };
    match scenario::load(&saved.scenario, &overrides) {
        Ok(s) => Ok(s),
        Err(e) => {
            // The copy names files it does not hold (a network's checkpoint): the file the
            // run started from, where it is still there and still the same scenario.
            if let Some(original) = &saved.original
                && let Ok(s) = scenario::load(original, &overrides)
                && saved.hash.as_deref() == Some(s.hash().as_str())
            {
                return Ok(s);
            }
            eprint!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// The command line that runs `scenario` with these settings (for messages).
pub fn command(
    scenario: &Path,
    out: Option<&Path>,
    seed: Option<u64>,
    rounds: Option<u64>,
) -> String {
    crate::experiment::command(
        scenario,
        &Overrides {
            out: out.map(Path::to_path_buf),
            seed,
            rounds,
            trace: Vec::new(),
        },
    )
}

pub use crate::experiment::shell_word;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_probabilities_are_checked_with_a_reason() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert_eq!(at_least_one("0"), Err("must be at least 1".into()));
        assert!(at_least_one("-1").unwrap_err().contains("`-1`"));
        assert_eq!(probability("0.05"), Ok(0.05));
        assert!(probability("1").unwrap_err().contains("(0, 1)"));
        assert!(probability("0").is_err());
        assert_eq!(difference("1"), Ok(1.0));
        assert!(difference("0").is_err());
        assert!(difference("nan").is_err());
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("a/b.yaml"), "a/b.yaml");
        assert_eq!(shell_word("my study.yaml"), "'my study.yaml'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
