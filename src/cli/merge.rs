//! `dhumbal-run merge DIR...`: checks and finishes a study played as shards.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Args;

use dhumbal_runner::folder;
use dhumbal_runner::run as runner;

use super::console::Console;
use super::progress::Terminal;
use super::settings;
use crate::experiment::stages;

/// `dhumbal-run merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' folder(s).
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Where the merged study goes (needed with several DIRs; default: DIR itself).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace another run's results in the --out folder.
    #[arg(long)]
    pub force: bool,
    /// Also write each stage's records as rounds.csv.
    #[arg(long)]
    pub csv: bool,
    /// Do not write the statistics reports.
    #[arg(long)]
    pub no_report: bool,
}

/// What a refused merge of a study with units missing says: the stage, the shards that owe
/// their share and the commands that finish them (in their folder), the stages after it, and
/// the merge again.
fn incomplete(
    i: &runner::Incomplete,
    saved: &folder::SavedRun,
    dirs: &[PathBuf],
    target: &std::path::Path,
) -> String {
    let word = |p: &std::path::Path| settings::shell_word(&p.display().to_string());
    let mut text = format!(
        "error: cannot merge yet: stage `{}` is not complete: {} of its {} units have no \
         records (units {}, in {}); nothing was changed.\n",
        i.stage,
        i.missing(),
        i.units,
        i.gap_list(),
        i.dir.display()
    );
    // A shard's command: the study's scenario (its copy in source/, which every shard's
    // records were checked against) and settings, its folder, its share.
    let command = |folder: &str, shard: String, stage: &str| {
        let mut line = settings::command(
            &saved.scenario,
            None,
            saved.command_line.seed,
            saved.command_line.rounds,
        );
        if !saved.command_line.trace.is_empty() {
            let deals: Vec<String> = saved
                .command_line
                .trace
                .iter()
                .map(u64::to_string)
                .collect();
            line.push_str(&format!(" --trace {}", deals.join(",")));
        }
        line.push_str(&format!(" --out {folder} --shard {shard}"));
        if i.staged {
            line.push_str(&format!(" --stage {}", settings::shell_word(stage)));
        }
        line
    };
    let shared = word(&dirs[0]);
    match (i.looks, i.count) {
        (Some(looks), count) if !looks.decided => {
            let n = count.map_or("N".to_string(), |c| c.to_string());
            text.push_str(&format!(
                "It is a sequential test that has not decided yet: {} of at most {} matches \
                 are on disk, in order. Each look is played by every shard, then the test \
                 looks: run every shard of it again, once per look, until it decides \
                 (`dhumbal-run status {shared} --stage {}` exits with 0 once it has; \
                 scripts/slurm/drive.sbatch does all this on Slurm):\n  {}, for each I from 0 \
                 to {}\n",
                looks.matches_done,
                looks.max,
                settings::shell_word(&i.stage),
                command(&shared, format!("I/{n}"), &i.stage),
                count.map_or("N-1".to_string(), |c| (c - 1).to_string()),
            ));
            for later in &i.later {
                text.push_str(&format!(
                    "then the shards of stage `{later}` (after `{}` is complete)\n",
                    i.stage
                ));
            }
        }
        (_, Some(count)) => {
            let names: Vec<String> = i
                .shards
                .iter()
                .map(|(s, _)| format!("{s}/{count}"))
                .collect();
            text.push_str(&format!(
                "{} {} {} share of `{}`; run {} (a shard run again plays only \
                 what is missing; `--resume` does not apply to shards):\n",
                if i.shards.len() == 1 {
                    "Shard"
                } else {
                    "Shards"
                },
                names.join(", "),
                if i.shards.len() == 1 {
                    "has not finished its"
                } else {
                    "have not finished their"
                },
                i.stage,
                if i.shards.len() == 1 { "it" } else { "them" },
            ));
            for (s, folder) in &i.shards {
                let folder = match (i.separate, folder) {
                    (false, _) => shared.clone(),
                    (true, Some(f)) => word(f),
                    (true, None) => "FOLDER".to_string(),
                };
                text.push_str(&format!(
                    "  {}{}\n",
                    command(&folder, format!("{s}/{count}"), &i.stage),
                    if folder == "FOLDER" {
                        "   (no folder given holds this shard: run it into a new FOLDER and \
                         add that to the merge)"
                    } else {
                        ""
                    }
                ));
            }
            for later in &i.later {
                text.push_str(&format!(
                    "then the shards of stage `{later}` (after `{}` is complete):\n  {}, for \
                     each I from 0 to {}\n",
                    i.stage,
                    command(
                        if i.separate { "FOLDER" } else { &shared },
                        format!("I/{count}"),
                        later
                    ),
                    count - 1
                ));
            }
        }
        (_, None) => {
            text.push_str(&format!(
                "No shard of this study has run yet (no shards/I-of-N.json): run each of its N \
                 shards, `{}` for I from 0 to N-1",
                command(&shared, "I/N".into(), &i.stage)
            ));
            text.push_str(".\n");
        }
    }
    let mut again = format!("dhumbal-run merge {}", {
        let all: Vec<String> = dirs.iter().map(|d| word(d)).collect();
        all.join(" ")
    });
    if i.separate {
        again.push_str(&format!(" --out {}", word(target)));
    }
    text.push_str(&format!("Then merge again: {again}\n"));
    text
}

/// `dhumbal-run merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let MergeArgs {
        dirs,
        out,
        force,
        csv,
        no_report,
    } = args;
    let target = match (&out, dirs.as_slice()) {
        (Some(out), _) => out.clone(),
        (None, [one]) => one.clone(),
        (None, _) => {
            eprintln!("error: merging several folders needs --out (where the merged study goes)");
            return Ok(ExitCode::from(2));
        }
    };
    let saved = folder::saved_run(&dirs[0])?;
    let scenario = match settings::load_saved(&saved, &target) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let reporter = Terminal::new(!no_report, Arc::new(AtomicBool::new(false)), String::new());
    let report = match runner::merge(
        &scenario,
        &runner::MergeOptions {
            dirs: dirs.clone(),
            force,
            csv,
        },
        &reporter,
    ) {
        Ok(report) => report,
        Err(dhumbal_runner::Error::Incomplete(i)) => {
            eprint!("{}", incomplete(&i, &saved, &dirs, &target));
            return Ok(ExitCode::from(2));
        }
        Err(e) => return Err(e.into()),
    };
    println!(
        "merged {} rounds of {} stage(s) into {}",
        report.rounds,
        report.stages.len(),
        target.display()
    );
    if !no_report {
        let console = Console::new()?;
        stages::overview(&target, &target, &Default::default(), &console);
    }
    Ok(ExitCode::SUCCESS)
}
