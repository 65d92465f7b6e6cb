//! `dhumbal-run rerun DIR`: plays a results folder's scenario again from the folder alone and
//! checks that the records are the same, bit for bit (decision times aside).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::folder;

use super::console::Console;
use super::settings::{self, Threads, shell_word};
use crate::experiment::{Mode, stages};

/// `dhumbal-run rerun`.
#[derive(Args, Debug)]
pub struct RerunArgs {
    /// A run's output folder.
    pub dir: PathBuf,
    /// Where the new run goes (default: DIR-rerun).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub threads: Threads,
    /// Replace an earlier rerun in the --out folder.
    #[arg(long)]
    pub force: bool,
    /// Do not write statistics reports for the new run.
    #[arg(long)]
    pub no_report: bool,
}

pub fn rerun(args: RerunArgs) -> anyhow::Result<ExitCode> {
    let RerunArgs {
        dir,
        out,
        threads,
        force,
        no_report,
    } = args;
    let saved = folder::saved_run(&dir)?;
    let out = out.unwrap_or_else(|| {
        let mut name = dir
            .file_name()
            .map_or_else(|| "run".into(), |n| n.to_os_string());
        name.push("-rerun");
        dir.with_file_name(name)
    });
    let scenario = match settings::load_saved(&saved, &out) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let console = Console::new()?;
    let report = match stages::play(
        &scenario,
        &stages::Settings {
            threads: threads.threads,
            mode: Mode::from_flags(false, force),
            report: !no_report,
            overview: true,
            csv: false,
            shard: None,
            stages: Vec::new(),
            command_line: saved.command_line.clone(),
            // A rerun is a check from scratch: interrupted, it starts again.
            resume_command: format!(
                "dhumbal-run rerun {} --out {} --force",
                shell_word(&dir.display().to_string()),
                shell_word(&out.display().to_string())
            ),
        },
        &console,
    ) {
        Ok(r) => r,
        Err(e) => {
            drop(console);
            return Ok(super::exit_with(e));
        }
    };
    let mut differ = 0;
    for (i, stage) in report.stages.iter().enumerate() {
        let original = if scenario.staged {
            dir.join(&stage.name)
        } else {
            dir.clone()
        };
        match folder::same_records(&original, &scenario.stage_dir(i))? {
            Ok(rows) => println!(
                "stage `{}`: {rows} rows identical to {} (decision times aside)",
                stage.name,
                original.display()
            ),
            Err(why) => {
                differ += 1;
                println!(
                    "stage `{}`: records DIFFER from {}: {why}",
                    stage.name,
                    original.display()
                );
            }
        }
    }
    Ok(if differ == 0 {
        println!("rerun reproduces {}", dir.display());
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
