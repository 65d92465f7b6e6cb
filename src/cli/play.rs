//! `dhumbal-run play`: a person at the table. One game (point scoring: until it ends; coin
//! scoring: a session of `--rounds` rounds) against agents, the person in one seat answering
//! through the terminal ([`Human`], which sees only that seat's observation and the round's
//! public events).
//!
//! The game is a scenario stage's (its rules, and its agents seated as listed, whatever the
//! stage's seating, the person in `--seat`'s place) or one given on the command line
//! (`--rules`, `--players`, `--opponent`; the opponents default to the paper's four
//! heuristics in turn). It is played as a tournament plays a unit: the
//! engine's own rounds (`Table::play_round`), streams keyed by the seed and the deal
//! (`--deal`), the agents' lifecycle hooks; so the same seed and the same answers give the same
//! game, and `--out DIR` writes the trace a traced tournament writes
//! (`DIR/traces/deal-NNNNNN-arrangement-000.jsonl`, docs/traces.md) for `dhumbal-run show`.
//! The trace is written as the game goes (before each of the person's decisions and at each
//! round's end), so a game stopped by `q`, the end of input or Ctrl-C keeps what was played.
//!
//! A hint (`?`) asks the advisor agent (`--advisor`, default `ismcts`) to decide on the same
//! observation with its own random stream, never the game's: asking changes nothing in the
//! game, and the trace holds only what was played.
//!
//! Exit codes: 0 the game was played to its end; 2 bad input (arguments, the scenario); 130
//! stopped before the end (`q`, the end of input, Ctrl-C), the trace so far kept.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde_json::Value;

use dhumbal_agents::heuristic::Style;
use dhumbal_agents::registry::Standalone;
use dhumbal_game::rng::{
    ChaChaStreams, Purpose, PyRandom, PythonStreams, Streams, chacha_stream, deal_id,
};
use dhumbal_game::{Preset, Table};
use dhumbal_runner::folder::{self, Refusal};
use dhumbal_runner::human::{
    self, Advisor, Console, History, Human, PublicLog, SharedConsole, game_summary, round_summary,
};
use dhumbal_runner::render::Paint;
use dhumbal_runner::scenario::{self, AgentDef, Generator, Overrides, SeatEntry, Stage};
use dhumbal_runner::tournament::{self, Timed};
use dhumbal_runner::trace::{self, RoundObserver, Tracer};

use super::settings;

/// Rounds of a coin session when neither `--rounds` nor the scenario says (a scenario's
/// one-round sessions, the default, make no game).
pub const DEFAULT_ROUNDS: u32 = 10;

/// The advisor when `--advisor` is not given.
pub const DEFAULT_ADVISOR: &str = "ismcts";

/// The advisor's random stream: keyed like an agent's, by a slot no scenario has (slots are
/// seats, fewer than 8), so that it never meets a seat's stream.
const ADVISOR_SLOT: u32 = u32::MAX;

/// `dhumbal-run play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// A scenario file: its stage's rules and agents, you in --seat's place. Without one, the
    /// game is --rules, --players and --opponent.
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// The scenario's stage to play (default: the first).
    #[arg(long, value_name = "NAME", requires = "scenario")]
    pub stage: Option<String>,
    /// Your seat, from 0 (who starts the first round follows the rules).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seat: usize,
    /// The rules preset (without a scenario): paper, jhyap, yaniv or simplified-2p.
    #[arg(long, value_name = "PRESET", value_parser = parse_preset, conflicts_with = "scenario")]
    pub rules: Option<Preset>,
    /// Players at the table, you included (without a scenario; default: the preset's).
    #[arg(long, value_name = "N", conflicts_with = "scenario", value_parser = clap::value_parser!(u8).range(2..=8))]
    pub players: Option<u8>,
    /// An opponent (without a scenario), repeatable, seated in order in the seats other than
    /// yours and repeated in turn if fewer are given: a kind name (`balanced`, `ismcts`,
    /// `random`; see `dhumbal-run agents`) or an entry as in a scenario
    /// (`{kind: ismcts, params: {iterations: 200}}`). Default: the paper's heuristics
    /// aggressive, conservative, balanced, opportunistic in turn.
    #[arg(long = "opponent", value_name = "AGENT", conflicts_with = "scenario")]
    pub opponents: Vec<String>,
    /// The seed (default: the scenario's; without a scenario, one drawn from the clock and
    /// printed, so that the game can be played again).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Which deal to play: the session (coins) or game (points) number, as a tournament
    /// numbers them: with the same seed, rules and seating, the cards of that deal.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub deal: u64,
    /// Coin scoring: rounds in the session (default: the scenario's session when longer than
    /// one round, else 10). Point games end by themselves.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,
    /// The agent that answers `?` with its choice and its top three candidates: a kind name
    /// or an entry in JSON (`{"kind": "ismcts", "params": {"iterations": 2000}}`); `none` for
    /// no hints. It decides on your observation only, with its own random stream.
    #[arg(long, value_name = "AGENT", default_value = DEFAULT_ADVISOR)]
    pub advisor: String,
    /// Write the game's trace to DIR/traces/ (`dhumbal-run show DIR` replays it). Without
    /// it, nothing is written.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace the trace of the same deal in --out.
    #[arg(long)]
    pub force: bool,
    /// Colours: auto (when the output is a terminal and NO_COLOR is not set), always, never.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    Preset::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

/// The terminal (or whatever stdin and stdout are): a line typed is a line read; input that
/// is not a terminal is echoed after its prompt, so that a transcript reads as a session.
struct Terminal {
    echo: bool,
}

impl Console for Terminal {
    fn show(&mut self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn ask(&mut self, prompt: &str) -> Option<String> {
        self.show(prompt);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                let line = line.trim_end_matches(['\n', '\r']).to_string();
                if self.echo {
                    self.show(&format!("{line}\n"));
                }
                Some(line)
            }
        }
    }
}

/// The trace file, appended to as the game goes.
struct TraceFile {
    path: PathBuf,
    file: std::fs::File,
    written: usize,
    error: Option<std::io::Error>,
}

impl TraceFile {
    /// Writes what `tracer` holds beyond what is on disk (the first failure is kept).
    fn flush(&mut self, tracer: &Tracer) {
        if self.error.is_some() {
            return;
        }
        let text = tracer.text();
        if text.len() > self.written {
            match self.file.write_all(&text.as_bytes()[self.written..]) {
                Ok(()) => self.written = text.len(),
                Err(e) => self.error = Some(e),
            }
        }
    }
}

fn refuse(message: String) -> anyhow::Error {
    Refusal(message).into()
}

/// `dhumbal-run play`.
pub fn play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let (mut stage, agents) = match &args.scenario {
        Some(path) => match from_scenario(path, &args)? {
            Ok(game) => game,
            Err(code) => return Ok(code),
        },
        None => from_command_line(&args)?,
    };
    let players = stage.players();
    let seat = args.seat;
    if seat >= players {
        return Err(refuse(format!(
            "--seat {seat}: the table has {players} seats, 0 to {}",
            players - 1
        )));
    }
    if stage.is_points() {
        if args.rounds.is_some() {
            return Err(refuse(
                "--rounds is for coin scoring; a point game goes on until one player is left \
                 (or the rules' round cap)"
                    .into(),
            ));
        }
        stage.session = None;
    } else {
        let scenario_session = stage.session.filter(|&s| s > 1 && args.scenario.is_some());
        stage.session = Some(args.rounds.or(scenario_session).unwrap_or(DEFAULT_ROUNDS));
    }
    let m = args.deal;
    if m >= 1 << 44 {
        return Err(refuse(format!("--deal {m}: deals are numbered below 2^44")));
    }
    let mut advisor = advisor(&args.advisor, &stage, m)?;

    // The trace file, claimed before anything is played.
    let trace_file = match &args.out {
        None => None,
        Some(dir) => Some(open_trace(dir, m, args.force)?),
    };

    let paint = match args.color {
        ColorWhen::Always => Paint::colour(),
        ColorWhen::Never => Paint::plain(),
        ColorWhen::Auto => Paint::for_terminal(std::io::stdout().is_terminal()),
    };
    let console: SharedConsole = Arc::new(Mutex::new(Terminal {
        echo: !std::io::stdin().is_terminal(),
    }));
    let labels: Arc<[String]> = (0..players)
        .map(|s| {
            if s == seat {
                "you".to_string()
            } else {
                agents[s].id.clone()
            }
        })
        .collect();
    let points = stage.is_points();
    let history = History::default();
    let stop = Arc::new(AtomicBool::new(false));
    let tracer = Tracer::default();
    let file = trace_file.map(|f| Arc::new(Mutex::new(f)));

    human::show(&console, &introduction(&args, &stage, &labels, seat, paint));

    // Every seat's decisions go to the trace as a tournament's do; before the person's, the
    // trace so far goes to disk.
    let mut seated: Vec<Timed> = (0..players)
        .map(|s| {
            if s != seat {
                return Timed::new(agents[s].recipe.build(&agents[s].id), Some(tracer.clone()));
            }
            let person = Box::new(Human::new(
                Arc::clone(&console),
                Arc::clone(&labels),
                history.clone(),
                paint,
                advisor.take(),
                Arc::clone(&stop),
            ));
            let timed = Timed::new(person, Some(tracer.clone()));
            match file.clone() {
                Some(file) => timed.before_deciding(move |tracer| {
                    file.lock()
                        .expect("a trace file's lock is never poisoned")
                        .flush(tracer)
                }),
                None => timed,
            }
        })
        .collect();
    let seats_json: Vec<Value> = (0..players)
        .map(|s| {
            if s == seat {
                trace::seat_json(s, s, "human", "human", Value::Null)
            } else {
                let def = &agents[s];
                trace::seat_json(
                    s,
                    s,
                    &def.id,
                    &def.kind,
                    def.spec.get("params").cloned().unwrap_or(Value::Null),
                )
            }
        })
        .collect();
    tracer.line(trace::game_json(&stage, m, 0, seats_json));

    let mut table = Table::new((*stage.rules).clone());
    table.start_game(&mut seated);
    let slots: Vec<u32> = (0..players as u32).collect();
    let mut python = match stage.generator {
        Generator::Python => Some(PythonStreams(PyRandom::new(stage.seed.wrapping_add(m)))),
        Generator::Chacha => None,
    };
    let mut chacha = ChaChaStreams::new(stage.seed, deal_id(m, 0), &slots);
    let flush = || {
        if let Some(f) = &file {
            f.lock()
                .expect("a trace file's lock is never poisoned")
                .flush(&tracer);
        }
    };
    let mut round = 0u32;
    let finished = loop {
        if tournament::over(&table, round, stage.session) {
            break true;
        }
        let streams: &mut dyn Streams = match (&mut python, &mut chacha) {
            (Some(p), _) => p,
            (None, c) => {
                c.set_deal(deal_id(m, round));
                c
            }
        };
        let mut observer = (
            RoundObserver::new(&tracer, round, &table),
            PublicLog {
                history: &history,
                labels: &labels,
                human: seat,
                paint,
            },
        );
        let was_in = table.active()[seat];
        let outcome = match table.play_round(&mut seated, streams, &mut observer) {
            Ok(outcome) => outcome,
            Err(_) if stop.load(Ordering::Relaxed) => break false,
            Err(e) => {
                flush();
                return Err(anyhow::anyhow!("round {round}: {e}"));
            }
        };
        tracer.round_end(&outcome, table.standings(), points);
        flush();
        round += 1;
        let mut text = String::new();
        // What happened after the person's last decision, up to the end of the round.
        let news = history.take_new();
        if was_in && !news.is_empty() {
            text.push_str(&paint.dim("since your last turn:"));
            text.push('\n');
            for line in news {
                text.push_str(&format!("  {line}\n"));
            }
        }
        text.push_str(&round_summary(
            &outcome,
            table.standings(),
            &labels,
            points,
            paint,
        ));
        human::show(&console, &text);
        if tournament::over(&table, round, stage.session) {
            continue;
        }
        if !table.active()[seat] {
            if was_in {
                human::show(&console, "you are out of the game; the others play on.\n");
            }
            continue;
        }
        if !pause(&console, round) {
            stop.store(true, Ordering::Relaxed);
            break false;
        }
    };
    let where_ = file.as_ref().map(|f| {
        f.lock()
            .expect("a trace file's lock is never poisoned")
            .path
            .clone()
    });
    if !finished {
        flush();
        check_written(&file)?;
        let kept = match &where_ {
            Some(p) => format!("; the trace so far is in {}", p.display()),
            None => String::new(),
        };
        human::show(
            &console,
            &format!("stopped after {round} finished round(s){kept}.\n"),
        );
        return Ok(ExitCode::from(130));
    }
    table.end_game(&mut seated);
    tracer.game_end(round, table.standings(), table.leader());
    flush();
    check_written(&file)?;
    let mut text = game_summary(
        round,
        table.standings(),
        table.leader(),
        &labels,
        points,
        paint,
    );
    if let (Some(path), Some(dir)) = (&where_, &args.out) {
        text.push_str(&format!(
            "trace: {} (replay: dhumbal-run show {} --deal {m})\n",
            path.display(),
            settings::shell_word(&dir.display().to_string())
        ));
    }
    human::show(&console, &text);
    Ok(ExitCode::SUCCESS)
}

/// Between rounds: the person reads the round's end, then goes on (`q` or the end of input
/// stops).
fn pause(console: &SharedConsole, next: u32) -> bool {
    loop {
        let Some(line) = human::ask(console, &format!("Enter for round {next} (q to stop): "))
        else {
            human::show(console, "\n(end of input)\n");
            return false;
        };
        match line.trim().to_lowercase().as_str() {
            "q" | "quit" | "exit" | "stop" => return false,
            "?" | "h" | "help" | "hint" | "history" => human::show(
                console,
                "  the round is over: Enter plays the next one, q stops\n",
            ),
            _ => return true,
        }
    }
}

fn check_written(file: &Option<Arc<Mutex<TraceFile>>>) -> anyhow::Result<()> {
    if let Some(f) = file {
        let f = f.lock().expect("a trace file's lock is never poisoned");
        if let Some(e) = &f.error {
            anyhow::bail!("cannot write the trace {}: {e}", f.path.display());
        }
    }
    Ok(())
}

/// The first lines: the game, the seats, how to answer.
fn introduction(
    args: &PlayArgs,
    stage: &Stage,
    labels: &[String],
    seat: usize,
    paint: Paint,
) -> String {
    let rules = trace::game_json(stage, args.deal, 0, Vec::new());
    let what = match stage.session {
        Some(n) => format!(
            "coins, a session of {n} round{}",
            if n == 1 { "" } else { "s" }
        ),
        None => "points, until one player is left".into(),
    };
    let mut text = paint.bold(&format!(
        "dhumbal-run play: {} rules, {} players, {what}; seed {}, deal {}",
        rules["rules"].as_str().unwrap_or("custom"),
        labels.len(),
        stage.seed,
        args.deal
    ));
    text.push('\n');
    let seats: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(s, l)| format!("{s} {l}"))
        .collect();
    text.push_str(&format!(
        "seats: {}. You are seat {seat}.\n\
         At each decision: a number, or cards (9h 10h jh); ? a hint, h the round's history, \
         q to stop, help.\n",
        seats.join(", ")
    ));
    text
}

/// The stage of a scenario, its agents one per seat.
fn from_scenario(
    path: &Path,
    args: &PlayArgs,
) -> anyhow::Result<Result<(Stage, Vec<AgentDef>), ExitCode>> {
    let overrides = Overrides {
        seed: args.seed,
        ..Overrides::default()
    };
    let scenario = match settings::load(path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(Err(code)),
    };
    let stage = match &args.stage {
        None => scenario.stages[0].clone(),
        Some(name) => match scenario.stages.iter().find(|s| &s.name == name) {
            Some(s) => s.clone(),
            None => {
                let names: Vec<&str> = scenario.stages.iter().map(|s| s.name.as_str()).collect();
                return Err(refuse(format!(
                    "--stage {name}: {} has no such stage; its stages: {}",
                    path.display(),
                    names.join(", ")
                )));
            }
        },
    };
    let mut agents = Vec::new();
    for (s, entry) in stage.seats.iter().enumerate() {
        match entry {
            SeatEntry::Agent(def) => agents.push(def.clone()),
            SeatEntry::WinnerOf(i) if s != args.seat => {
                return Err(refuse(format!(
                    "stage `{}` seats the winner of stage `{}` in seat {s}, which only a run \
                     decides; play another --stage, or take that seat (--seat {s})",
                    stage.name, scenario.stages[*i].name
                )));
            }
            // The person takes that seat: any agent stands in for the entry.
            SeatEntry::WinnerOf(_) => agents.push(placeholder(&stage)?),
        }
    }
    Ok(Ok((stage, agents)))
}

/// An agent definition for a seat the person takes (never built).
fn placeholder(stage: &Stage) -> anyhow::Result<AgentDef> {
    let recipe = Standalone::recipe(&serde_json::json!({"kind": "random"}), &stage.rules)
        .map_err(|p| anyhow::anyhow!("the random agent does not resolve: {p:?}"))?;
    Ok(AgentDef {
        id: "human".into(),
        kind: "human".into(),
        recipe,
        spec: Value::Null,
    })
}

/// The game the command line describes, as a one-stage scenario read like a file: rules
/// (a preset and the player count), the seed, one deal, the opponents (a stand-in in the
/// person's seat).
fn from_command_line(args: &PlayArgs) -> anyhow::Result<(Stage, Vec<AgentDef>)> {
    let preset = args.rules.unwrap_or(Preset::Paper);
    let players = args.players.unwrap_or(preset.variant().players) as usize;
    if args.seat >= players {
        return Err(refuse(format!(
            "--seat {}: the table has {players} seats, 0 to {}",
            args.seat,
            players - 1
        )));
    }
    let given: Vec<String> = if args.opponents.is_empty() {
        Style::ALL.iter().map(|s| s.name().to_string()).collect()
    } else {
        args.opponents.clone()
    };
    if given.len() > players - 1 && !args.opponents.is_empty() {
        return Err(refuse(format!(
            "{} opponents given (--opponent) for {} other seat(s)",
            given.len(),
            players - 1
        )));
    }
    let mut entries = Vec::new();
    let mut next = 0;
    for s in 0..players {
        if s == args.seat {
            entries.push("{kind: random, id: human}".to_string());
            continue;
        }
        let g = given[next % given.len()].trim();
        next += 1;
        if g.starts_with('{') {
            entries.push(g.to_string());
        } else if !g.is_empty()
            && g.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
        {
            entries.push(format!("{{kind: {g}}}"));
        } else {
            return Err(refuse(format!(
                "--opponent `{g}`: expected a kind name (see `dhumbal-run agents`) or an entry \
                 such as '{{kind: ismcts, params: {{iterations: 200}}}}'"
            )));
        }
    }
    let seed = args.seed.unwrap_or_else(clock_seed);
    let count = if matches!(
        preset.variant().scoring,
        dhumbal_game::rules::Scoring::Points(_)
    ) {
        "games: 1"
    } else {
        "deals: 1"
    };
    let mut text = format!(
        "name: play\nseed: {seed}\n{count}\nrules: {{preset: {}, players: {players}}}\nagents:\n",
        preset.name()
    );
    for e in &entries {
        text.push_str(&format!("  - {e}\n"));
    }
    let origin = Path::new("the command line");
    let scenario = scenario::parse(origin, &text, &Overrides::default()).map_err(|e| {
        // One `--opponent` fills several seats in turn: its problem is said once.
        let mut problems: Vec<String> = Vec::new();
        for p in &e.problems {
            let at = opponent_of(&p.path, args.seat)
                .map(|k| format!("--opponent {}: ", given[k % given.len()]))
                .unwrap_or_default();
            let line = format!("{at}{}", p.message);
            if !problems.contains(&line) {
                problems.push(line);
            }
        }
        refuse(format!(
            "the game asked for cannot be played:\n  {}",
            problems.join("\n  ")
        ))
    })?;
    let stage = scenario.stages[0].clone();
    let agents = stage
        .seats
        .iter()
        .map(|e| match e {
            SeatEntry::Agent(d) => d.clone(),
            SeatEntry::WinnerOf(_) => unreachable!("the command line seats no winner"),
        })
        .collect();
    Ok((stage, agents))
}

/// Which `--opponent` a problem at `agents.K...` is about.
fn opponent_of(path: &str, human: usize) -> Option<usize> {
    let rest = path.strip_prefix("agents.")?;
    let k: usize = rest.split('.').next()?.parse().ok()?;
    (k != human).then(|| if k > human { k - 1 } else { k })
}

/// A seed for a game nobody gave one: from the clock, small enough to type again.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (nanos % 1_000_000) as u64
}

/// `--advisor`: `none`, a kind name or a JSON entry, resolved under the stage's rules.
fn advisor(given: &str, stage: &Stage, m: u64) -> anyhow::Result<Option<Advisor>> {
    let given = given.trim();
    if given == "none" {
        return Ok(None);
    }
    let entry: Value = if given.starts_with('{') {
        serde_json::from_str(given)
            .map_err(|e| refuse(format!("--advisor: `{given}` is not a JSON entry: {e}")))?
    } else {
        serde_json::json!({ "kind": given })
    };
    let recipe = Standalone::recipe(&entry, &stage.rules).map_err(|problems| {
        let p: Vec<String> = problems
            .iter()
            .map(|(field, message)| {
                if field.is_empty() {
                    message.clone()
                } else {
                    format!("`{field}`: {message}")
                }
            })
            .collect();
        refuse(format!("--advisor {given}: {}", p.join("; ")))
    })?;
    let agent = recipe.build(&recipe.default_id());
    if agent.oracle() {
        return Err(refuse(format!(
            "--advisor {given}: an oracle sees every hand; the advisor sees only yours"
        )));
    }
    Ok(Some(Advisor {
        agent,
        rng: chacha_stream(stage.seed, Purpose::Agent(ADVISOR_SLOT), deal_id(m, 0)),
    }))
}

/// Makes `DIR/traces/` and opens the deal's trace file, refusing a results folder of a run
/// and, unless `force`, an existing trace of the same deal.
fn open_trace(dir: &Path, m: u64, force: bool) -> anyhow::Result<TraceFile> {
    if let Some(what) = folder::earlier_run(dir) {
        return Err(refuse(format!(
            "--out {}: it holds {what}; write the game somewhere else",
            dir.display()
        )));
    }
    let traces = dir.join(trace::TRACES_DIR);
    let path = traces.join(trace::file_name(m, 0));
    if path.exists() && !force {
        return Err(refuse(format!(
            "--out {}: {} exists (a game of deal {m} played before); --force replaces it, \
             --deal or --out plays elsewhere",
            dir.display(),
            path.display()
        )));
    }
    std::fs::create_dir_all(&traces)
        .with_context(|| format!("cannot create {}", traces.display()))?;
    let file =
        std::fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(TraceFile {
        path,
        file,
        written: 0,
        error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_the_opponent_they_are_about() {
        assert_eq!(opponent_of("agents.1.kind", 0), Some(0));
        assert_eq!(opponent_of("agents.0.kind", 1), Some(0));
        assert_eq!(opponent_of("agents.2", 1), Some(1));
        assert_eq!(opponent_of("agents.1", 1), None);
        assert_eq!(opponent_of("rules.players", 1), None);
    }
}
