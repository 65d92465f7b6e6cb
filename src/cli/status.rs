//! `dhumbal-run status DIR`: where a run or a sharded study stands, read from its folder.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::folder;
use dhumbal_runner::run as runner;

use super::settings;

/// A line to standard output, control characters escaped: folder names and `--stage` come
/// from the command line and are never passed raw to the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", dhumbal_agents::escape_controls(&format!($($arg)*)))
    };
}

/// The same to standard error.
macro_rules! warn {
    ($($arg:tt)*) => {
        eprintln!("{}", dhumbal_agents::escape_controls(&format!($($arg)*)))
    };
}

/// `dhumbal-run status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The run's folder (the shards' shared folder, for a study played as shards).
    pub dir: PathBuf,
    /// Only this stage; the exit code then says whether it is complete (0) or not yet (3), so
    /// that a script (scripts/slurm/drive.sbatch) can wait on it.
    #[arg(long)]
    pub stage: Option<String>,
}

/// `dhumbal-run status`.
pub fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let StatusArgs { dir, stage } = args;
    let saved = match saved_anywhere(&dir) {
        Ok(saved) => saved,
        // Before the first shard has copied the scenario in: nothing to report yet.
        Err(_) if stage.is_some() && !dir.join(folder::SOURCE_DIR).exists() => {
            say!(
                "{}: no run has started here yet (no {}/)",
                dir.display(),
                folder::SOURCE_DIR
            );
            return Ok(ExitCode::from(3));
        }
        Err(e) => {
            warn!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let scenario = match settings::load_saved(&saved, &dir) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if let Some(name) = &stage
        && !scenario.stages.iter().any(|s| &s.name == name)
    {
        let names: Vec<&str> = scenario.stages.iter().map(|s| s.name.as_str()).collect();
        warn!(
            "error: --stage {}: the study in {} has no such stage; its stages are: {}",
            settings::shell_word(name),
            dir.display(),
            names.join(", ")
        );
        return Ok(ExitCode::from(2));
    }
    let stages = runner::status(&scenario)?;
    let count = runner::shard_count(&dir);
    let finished = dir.join("manifest.json").is_file();
    say!(
        "`{}` in {}: {}",
        scenario.name,
        dir.display(),
        match (finished, count) {
            // A file of tunings or exploitability entries alone: its lines below say it all.
            _ if scenario.stages.is_empty() => "no stages of its own; its sections:".to_string(),
            (true, Some(n)) => format!("played as {n} shards, merged"),
            (true, None) => "finished".to_string(),
            (false, Some(n)) => format!("played as {n} shards, not merged yet"),
            (false, None) =>
                "not finished (a run in progress, or stopped: --resume goes on)".to_string(),
        }
    );
    for i in 0..scenario.tunings.len() {
        if stage.is_none() {
            say!(
                "  {}",
                tuning_line(&dhumbal_runner::tune::progress(&scenario, i)?)
            );
        }
    }
    for (i, x) in scenario.exploits.iter().enumerate() {
        if stage.is_some() {
            break;
        }
        let entry = x.dir(&scenario);
        if !dhumbal_runner::exploit::needs_work(&entry) {
            say!("  exploit `{}`: measured ({})", x.id, entry.display());
            continue;
        }
        if !entry.join(folder::SOURCE_DIR).is_dir() {
            say!("  exploit `{}`: not started", x.id);
            continue;
        }
        // Its stages, as a run of their own in the entry's folder (shards or one machine).
        let run = crate::experiment::produce::entry_run(&scenario, i);
        let count = runner::shard_count(&entry);
        say!(
            "  exploit `{}`: measuring{} ({})",
            x.id,
            count.map_or(String::new(), |n| format!(" as {n} shards")),
            entry.display()
        );
        for s in runner::status(&run)? {
            say!("    stage `{}`: {}", s.name, describe(&s, count));
        }
    }
    for s in stages
        .iter()
        .filter(|s| stage.as_ref().is_none_or(|n| &s.name == n))
    {
        say!("  stage `{}`: {}", s.name, describe(s, count));
    }
    Ok(match stage {
        Some(name) if !stages.iter().any(|s| s.name == name && s.complete) => ExitCode::from(3),
        _ => ExitCode::SUCCESS,
    })
}

/// The run saved in `dir`; where none is yet (its tunings and exploitability entries come
/// first, each in a folder of its own), the scenario saved by one of those: every copy is of
/// the same file, so the whole run's standing can be read from the start.
fn saved_anywhere(dir: &std::path::Path) -> Result<folder::SavedRun, folder::Refusal> {
    let own = folder::saved_run(dir);
    if own.is_ok() || dir.join(folder::SOURCE_DIR).exists() {
        return own;
    }
    let within = |section: &str, sub: &str| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join(section))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join(sub))
            .filter(|p| p.join(folder::SOURCE_DIR).is_dir())
            .collect();
        found.sort();
        found
    };
    let mut others = within("exploit", "");
    others.extend(within("tune", "confirm"));
    for other in others {
        if let Ok(mut saved) = folder::saved_run(&other) {
            // Its name and hash are the section's own run's; the file is the scenario's.
            saved.hash = None;
            return Ok(saved);
        }
    }
    own
}

/// One tuning's line.
fn tuning_line(p: &dhumbal_runner::tune::Progress) -> String {
    let state = match (p.written, p.confirmed) {
        (true, true) => "agent file written, confirmed",
        (true, false) => "agent file written",
        (false, _) if p.evaluations == 0 => "not started",
        (false, _) => "searching (or stopped: --resume goes on)",
    };
    format!(
        "tuning `{}`: {} evaluations, {} of {} deals; {state}",
        p.id, p.evaluations, p.deals, p.budget
    )
}

/// One stage's line.
fn describe(s: &runner::StageStatus, count: Option<u64>) -> String {
    let mut text = match (&s.waits_for, s.looks) {
        (Some((of, runner::Needs::Winner)), _) if s.units_done == 0 => {
            return format!("waits for the winner of `{of}`");
        }
        (Some((of, runner::Needs::Baseline)), _) if s.units_done == 0 => {
            return format!("waits for `{of}` to be complete (its gain test reads it)");
        }
        (_, Some(looks)) if looks.decided => format!(
            "sequential test, ended after {} of at most {} matches",
            looks.matches_done, looks.max
        ),
        (_, Some(looks)) => format!(
            "sequential test, not decided: {} of at most {} matches on disk (a look every {})",
            looks.matches_done, looks.max, looks.every
        ),
        (_, None) => format!(
            "{} of {} units on disk ({:.1}%)",
            s.units_done,
            s.units,
            100.0 * s.units_done as f64 / s.units.max(1) as f64
        ),
    };
    if let Some(test) = &s.test {
        text.push_str(&format!(
            "; LLR {:.3} at {} matches, bounds [{:.3}, {:.3}]",
            test.llr, test.matches, test.bounds.0, test.bounds.1
        ));
        if let Some((leader, rival)) = &test.pair {
            text.push_str(&format!(" (`{leader}` leads, `{rival}` closest)"));
        }
        if let Some(decision) = &test.decision {
            text.push_str(&format!(": {decision}"));
        }
    }
    if s.complete {
        text.push_str("; complete");
    } else if let Some(n) = count {
        let owing: Vec<String> = s
            .shards_missing
            .iter()
            .map(|i| format!("{i}/{n}"))
            .collect();
        let what = if s.looks.is_some() {
            "of the next look"
        } else {
            "of the stage"
        };
        if !owing.is_empty() {
            text.push_str(&format!(
                "; {} of {n} shards owe their share {what}: {}",
                owing.len(),
                owing.join(", ")
            ));
        }
    }
    text
}
