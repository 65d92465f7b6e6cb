//! `dhumbal-run serve`: a study's web table (docs/studies.md). Reads the scenario's `study:`,
//! opens (or resumes) the study's folder and serves the participants' page and its API
//! ([`dhumbal_serve`]) until stopped. On this machine only by default; another `--host`
//! prints a warning and is refused unless every participant needs a code (listed codes, or
//! sign-up behind an access code).
//!
//! Exit codes: 2 bad input (arguments, the scenario, a folder of another study), 1 the server
//! could not listen or stopped. Ctrl-C ends it: every decision is already on disk.

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;

use dhumbal_runner::folder::Refusal;
use dhumbal_runner::scenario::{Overrides, StudyCodes};
use dhumbal_runner::study::Folder;

use super::settings;

/// `dhumbal-run serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A scenario file with a `study:` section.
    #[arg(value_name = "STUDY")]
    pub scenario: PathBuf,
    /// The port to listen on (0: any free port, printed).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The address to listen on: 127.0.0.1 (this machine only) unless given; 0.0.0.0 serves
    /// every network the machine is on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// The study's folder (default: the scenario's output folder, reports/<name>/): the
    /// journals, traces and records. Serving again into it resumes every participant.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `dhumbal-run serve`.
pub fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        out: args.out.clone(),
        ..Overrides::default()
    };
    let scenario = match settings::load(&args.scenario, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let Some(study) = scenario.study.clone() else {
        return Err(Refusal(format!(
            "{} has no `study:` section: serve needs one (docs/studies.md)",
            args.scenario.display()
        ))
        .into());
    };
    if !args.host.is_loopback() {
        eprintln!(
            "warning: serving on {}: anyone who can reach this machine can open the page",
            args.host
        );
        if study.codes == StudyCodes::SignUp && study.access_code.is_none() {
            return Err(Refusal(format!(
                "--host {}: a study served beyond this machine needs codes: list them \
                 (`study.participants`) or give sign-up an `access_code`",
                args.host
            ))
            .into());
        }
    }
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("cannot read {}", args.scenario.display()))?;
    let folder = Folder::open(
        &scenario.output.dir,
        &scenario.name,
        &study,
        &args.scenario,
        &text,
    )?;
    let dir = folder.dir.clone();
    let options = dhumbal_serve::Options {
        name: scenario.name.clone(),
        study: Arc::new(study),
        folder,
        addr: SocketAddr::new(args.host, args.port),
        on_listen: Box::new(move |addr| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "serving the study at http://{addr}/");
            let _ = writeln!(out, "writing to {}", dir.display());
            let _ = writeln!(out, "Ctrl-C stops; serving again resumes every participant");
            let _ = out.flush();
        }),
    };
    dhumbal_serve::serve(options)?;
    Ok(ExitCode::SUCCESS)
}
