//! `dhumbal-run show RUN_DIR --deal N`: a traced deal replayed in the terminal, turn by turn,
//! from its trace (`<stage>/traces/deal-NNNNNN-arrangement-AAA.jsonl`, docs/traces.md): the
//! deal, every decision with the agent's top candidates where it explains itself, the cards
//! drawn where the viewer may see them, and a summary of each round. `--seat K` shows only
//! what seat K saw. Drawn by the text renderer ([`dhumbal_runner::render`]) that the Python
//! environments' `render()` uses too.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use dhumbal_game::EndReason;
use dhumbal_runner::folder::Refusal;
use dhumbal_runner::render::{self, Entry, Hand, Paint, Scene, Seat};
use dhumbal_runner::scenario::rules_spec::ScoringName;
use dhumbal_runner::trace::read::{Deal, Decision, Event, Game, GameEnd, RoundEnd};
use dhumbal_runner::trace::{self, Trace};

/// `dhumbal-run show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A run's output folder (its traces are in traces/, or in <stage>/traces/ for a staged
    /// scenario), or one stage's folder.
    #[arg(value_name = "RUN_DIR")]
    pub dir: PathBuf,
    /// The traced deal to show: under coin scoring the session's number, under point
    /// scoring the game's number (as `--trace` names them). May be left out when the
    /// stage traced one deal; a deal that was not traced is refused with the list of those
    /// that were.
    #[arg(long, value_name = "N")]
    pub deal: Option<u64>,
    /// The stage, for a staged scenario whose stages traced several (without it, the only
    /// stage with traces).
    #[arg(long, value_name = "NAME")]
    pub stage: Option<String>,
    /// The seating arrangement (a traced deal is traced under each one it is played);
    /// default: the first.
    #[arg(long, value_name = "A")]
    pub arrangement: Option<u64>,
    /// Only this round of the session or game (numbered from 0).
    #[arg(long, value_name = "R")]
    pub round: Option<u32>,
    /// Show only what seat K saw: its own hand and candidates, the others' hands face down
    /// (with the cards they took from the pile), their decisions by their public effect (what
    /// they discarded, took from the pile, or that they drew), and at a round's end their hand
    /// values only. Without it, every hand and every decision is shown.
    #[arg(long, value_name = "K")]
    pub seat: Option<usize>,
    /// Write the deal as a web page to FILE instead (the replay viewer: every arrangement of
    /// the deal traced, or the one --arrangement names; one self-contained page, no server).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["round", "seat"])]
    pub html: Option<PathBuf>,
    /// Wrap the agents' notes to N columns (0: never). Default: the terminal's width, and no
    /// wrapping when the output is not a terminal.
    #[arg(long, value_name = "N")]
    pub width: Option<usize>,
}

/// `dhumbal-run show`.
pub fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let dir = traces_dir(&args.dir, args.stage.as_deref())?;
    let traced = traced(&dir)?;
    let deal = match args.deal {
        Some(d) if traced.contains_key(&d) => d,
        Some(d) => {
            return Err(refuse(format!(
                "deal {d} was not traced in {}; traced deals: {} (a run traces deals with \
                 --trace DEALS or output.trace)",
                dir.display(),
                list(traced.keys())
            )));
        }
        None if traced.len() == 1 => *traced.keys().next().expect("one"),
        None => {
            return Err(refuse(format!(
                "{} holds the traces of {} deals: {}; pick one with --deal N",
                dir.display(),
                traced.len(),
                list(traced.keys())
            )));
        }
    };
    let arrangements = &traced[&deal];
    let arrangement = match args.arrangement {
        Some(a) if arrangements.contains(&a) => a,
        Some(a) => {
            return Err(refuse(format!(
                "deal {deal} was not traced under arrangement {a}; its arrangements: {}",
                list(arrangements)
            )));
        }
        None => *arrangements
            .iter()
            .next()
            .expect("a traced deal has a file"),
    };
    // `--html FILE`: the replay viewer's page (crates/runner/src/viewer.rs) of the deal.
    if let Some(out) = &args.html {
        if let Some(parent) = out.parent()
            && !parent.as_os_str().is_empty()
            && !parent.is_dir()
        {
            return Err(refuse(format!(
                "--html {}: the folder {} does not exist",
                out.display(),
                parent.display()
            )));
        }
        let chosen: Vec<u64> = match args.arrangement {
            Some(a) => vec![a],
            None => arrangements.iter().copied().collect(),
        };
        let paths: Vec<PathBuf> = chosen
            .iter()
            .map(|&a| dir.join(trace::file_name(deal, a)))
            .collect();
        dhumbal_runner::viewer::write_html(&paths, out)?;
        println!(
            "wrote {} (deal {deal}, {} arrangement{})",
            out.display(),
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let path = dir.join(trace::file_name(deal, arrangement));
    // What the agents wrote (notes, printed text), their ids, the choices and the cards are
    // shown with their control characters escaped: a terminal would obey them.
    let trace = read(&path)?.escape_controls();
    let players = trace.game.players;
    if let Some(k) = args.seat
        && k >= players
    {
        return Err(refuse(format!(
            "--seat {k}: the game has {players} seats, 0 to {}",
            players.saturating_sub(1)
        )));
    }
    if let Some(r) = args.round {
        check_round(&trace, r, deal, arrangement)?;
    }
    let terminal = std::io::stdout().is_terminal();
    let view = View {
        seat: args.seat,
        round: args.round,
        paint: Paint::for_terminal(terminal),
        arrangements: arrangements.len(),
        width: match args.width {
            Some(0) => None,
            Some(w) => Some(w),
            None if terminal => terminal_width(),
            None => None,
        },
    };
    let lines = view.replay(&trace);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = lines
        .iter()
        .try_for_each(|l| writeln!(out, "{l}"))
        .and_then(|()| out.flush());
    match written {
        // `show ... | head` closes the pipe: not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write to stdout"))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Refuses `--round r` where the trace has no round `r`, saying which it has.
fn check_round(trace: &Trace, r: u32, deal: u64, arrangement: u64) -> anyhow::Result<()> {
    let rounds: BTreeSet<u64> = (trace.events.iter())
        .filter_map(|e| match e {
            Event::Deal(d) => Some(u64::from(d.round)),
            _ => None,
        })
        .collect();
    if rounds.contains(&u64::from(r)) {
        return Ok(());
    }
    let one = if rounds.len() == 1 {
        " (a deal of coin scoring is one round unless its stage plays sessions, `session:`; \
         a game of point scoring is several)"
    } else {
        ""
    };
    Err(refuse(format!(
        "--round {r}: deal {deal} (arrangement {arrangement}) played rounds {}{one}",
        list(&rounds)
    )))
}

/// The width of the terminal on stdout, in columns, if it says.
fn terminal_width() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

fn refuse(message: String) -> anyhow::Error {
    Refusal(message).into()
}

/// Numbers for a message, the first 20 of them.
fn list<'a>(values: impl IntoIterator<Item = &'a u64>) -> String {
    let all: Vec<String> = values.into_iter().map(u64::to_string).collect();
    if all.len() > 20 {
        format!("{}, ... ({} in all)", all[..20].join(", "), all.len())
    } else {
        all.join(", ")
    }
}

/// The folder of the traces to show: `DIR/traces` (a single-stage run, or a stage's folder),
/// `DIR/<stage>/traces`, or the only stage's of those.
fn traces_dir(dir: &Path, stage: Option<&str>) -> anyhow::Result<PathBuf> {
    if !dir.is_dir() {
        return Err(refuse(format!(
            "{} is not a folder (show reads a run's output folder)",
            dir.display()
        )));
    }
    let staged: Vec<String> = {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| refuse(format!("cannot read {}: {e}", dir.display())))?
            .filter_map(Result::ok)
            .filter(|e| e.path().join(trace::TRACES_DIR).is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        names.sort();
        names
    };
    let own = dir.join(trace::TRACES_DIR);
    match stage {
        Some(name) => {
            let path = dir.join(name).join(trace::TRACES_DIR);
            if path.is_dir() {
                Ok(path)
            } else if own.is_dir() {
                Err(refuse(format!(
                    "{} is a single-stage run (its traces are in {}): leave out --stage",
                    dir.display(),
                    own.display()
                )))
            } else if staged.is_empty() {
                Err(no_traces(dir))
            } else {
                Err(refuse(format!(
                    "no stage `{name}` with traces in {}; stages with traces: {}",
                    dir.display(),
                    staged.join(", ")
                )))
            }
        }
        None if own.is_dir() => Ok(own),
        None => match staged.as_slice() {
            [] => Err(no_traces(dir)),
            [one] => Ok(dir.join(one).join(trace::TRACES_DIR)),
            several => Err(refuse(format!(
                "several stages of {} have traces: {}; pick one with --stage NAME",
                dir.display(),
                several.join(", ")
            ))),
        },
    }
}

fn no_traces(dir: &Path) -> anyhow::Error {
    refuse(format!(
        "{} holds no traces (neither traces/ nor <stage>/traces/): a run writes them for the \
         deals given with --trace DEALS or the scenario's output.trace",
        dir.display()
    ))
}

/// The traced deals of a folder and, for each, its arrangements.
fn traced(dir: &Path) -> anyhow::Result<BTreeMap<u64, BTreeSet<u64>>> {
    let mut out: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| refuse(format!("cannot read {}: {e}", dir.display())))?;
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let parsed = name
            .strip_prefix("deal-")
            .and_then(|r| r.strip_suffix(".jsonl"))
            .and_then(|r| r.split_once("-arrangement-"))
            .and_then(|(d, a)| Some((d.parse::<u64>().ok()?, a.parse::<u64>().ok()?)));
        if let Some((d, a)) = parsed {
            out.entry(d).or_default().insert(a);
        }
    }
    if out.is_empty() {
        return Err(refuse(format!(
            "{} holds no trace files (deal-NNNNNN-arrangement-AAA.jsonl)",
            dir.display()
        )));
    }
    Ok(out)
}

/// The trace at `path`, read through its types; one that cannot be read (another format, a
/// damaged line) is refused, saying which file and line and what to do.
fn read(path: &Path) -> anyhow::Result<Trace> {
    Trace::read(path).map_err(|e| refuse(e.to_string()))
}

/// How a trace is shown: by whom (every seat, or one), which rounds, in which paint.
struct View {
    seat: Option<usize>,
    round: Option<u32>,
    paint: Paint,
    arrangements: usize,
    /// The columns notes are wrapped to, if any.
    width: Option<usize>,
}

/// One seat's turn as it is being gathered: its decisions, the card it drew, the reshuffle.
struct Turn<'a> {
    round: u32,
    turn: u32,
    seat: usize,
    /// The first decision of the turn (what the seat held then).
    first: &'a Decision,
    actions: Vec<String>,
    /// Lines under the turn's line: candidates, notes, a reshuffle.
    below: Vec<String>,
}

/// What the replay's lines share: the seats' names, the columns' widths, the unit of the
/// standings (`coins` or `points`).
struct Table {
    names: Vec<String>,
    /// The widths of the names and of the turn lines' hands.
    widths: (usize, usize),
    scoring: &'static str,
}

impl Table {
    /// Seat `s`'s name, `?` for a seat the game does not have.
    fn name(&self, s: usize) -> &str {
        self.names.get(s).map_or("?", String::as_str)
    }
}

impl View {
    /// Whether the viewer sees seat `s`'s hand and reasons.
    fn sees(&self, s: usize) -> bool {
        self.seat.is_none_or(|k| k == s)
    }

    fn shows(&self, round: u32) -> bool {
        self.round.is_none_or(|r| r == round)
    }

    fn replay(&self, trace: &Trace) -> Vec<String> {
        let game = &trace.game;
        let events = &trace.events;
        let names: Vec<String> = game.seats.iter().map(|s| s.agent.clone()).collect();
        let name_w = names.iter().map(|n| render::width(n)).max().unwrap_or(0);
        // The hands of the turn lines in one column, as wide as the widest.
        let hand_w = events
            .iter()
            .filter_map(|e| match e {
                Event::Decision(d) => Some(d),
                _ => None,
            })
            .map(|d| render::width(&render::hand(&self.turn_hand(d.seat, d), Paint::plain())))
            .max()
            .unwrap_or(0);
        let table = Table {
            names,
            widths: (name_w, hand_w),
            scoring: match game.scoring {
                ScoringName::Coins => "coins",
                ScoringName::Points => "points",
            },
        };
        let mut out = self.header(game, &table);
        let mut turn: Option<Turn> = None;
        // The seats still in the game in the round being shown.
        let mut active: Vec<bool> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            if let Some(round) = e.round()
                && !self.shows(round)
            {
                continue;
            }
            match e {
                Event::Deal(deal) => {
                    let first = events[i + 1..]
                        .iter()
                        .take_while(|x| !matches!(x, Event::RoundEnd(_)))
                        .find_map(|x| match x {
                            Event::Decision(d) => Some(&**d),
                            _ => None,
                        });
                    out.push(String::new());
                    active = (0..table.names.len())
                        .map(|s| deal.active.get(s).copied().unwrap_or(true))
                        .collect();
                    out.extend(self.deal(deal, first, &table));
                }
                Event::Decision(d) => {
                    let same = turn.as_ref().is_some_and(|x| {
                        x.round == d.round && x.turn == d.turn && x.seat == d.seat
                    });
                    if !same {
                        if let Some(done) = turn.take() {
                            out.extend(self.turn_lines(&done, &table));
                        }
                        turn = Some(Turn {
                            round: d.round,
                            turn: d.turn,
                            seat: d.seat,
                            first: d,
                            actions: Vec::new(),
                            below: Vec::new(),
                        });
                    }
                    let current = turn.as_mut().expect("set above");
                    self.decision(d, current);
                }
                Event::Drew(drew) => {
                    if let Some(t) = turn.as_mut()
                        && self.sees(t.seat)
                        && let Some(card) = &drew.card
                        && let Some(last) = t.actions.last_mut()
                    {
                        *last = format!("draw → {}", self.paint.card(card));
                    }
                }
                Event::Reshuffle(r) => {
                    let line = format!(
                        "         {}",
                        self.paint.dim(&format!(
                            "the pile is turned over into the stock: {} cards; the pile keeps {}",
                            r.stock,
                            r.pile.join(" ")
                        ))
                    );
                    match turn.as_mut() {
                        Some(t) => t.below.push(line),
                        None => out.push(line),
                    }
                }
                Event::RoundEnd(end) => {
                    if let Some(done) = turn.take() {
                        out.extend(self.turn_lines(&done, &table));
                    }
                    out.extend(self.round_end(end, &active, &table));
                }
                Event::GameEnd(end) if self.round.is_none() => {
                    out.push(String::new());
                    out.push(self.game_end(end, &table));
                }
                _ => {}
            }
        }
        if let Some(done) = turn.take() {
            out.extend(self.turn_lines(&done, &table));
        }
        out
    }

    fn header(&self, game: &Game, table: &Table) -> Vec<String> {
        let p = self.paint;
        let mut out = vec![p.bold(&format!(
            "stage {} · deal {} · arrangement {}{} · rules {} ({} scoring) · seed {}",
            game.stage,
            game.deal,
            game.arrangement,
            if self.arrangements > 1 {
                format!(" of {} traced", self.arrangements)
            } else {
                String::new()
            },
            game.rules,
            match game.scoring {
                ScoringName::Coins => "coin",
                ScoringName::Points => "point",
            },
            game.seed,
        ))];
        let seats: Vec<String> = game
            .seats
            .iter()
            .map(|s| {
                if s.agent == s.kind {
                    format!("{} {}", s.seat, s.agent)
                } else {
                    format!("{} {} ({})", s.seat, s.agent, s.kind)
                }
            })
            .collect();
        out.push(format!("seats: {}", seats.join(" · ")));
        out.push(match self.seat {
            None => "view: every hand and every decision".to_string(),
            Some(k) => format!(
                "view: seat {k} ({}) only: the other hands face down, their decisions by what \
                 they showed",
                table.name(k)
            ),
        });
        out
    }

    /// The deal of a round: every seat's hand (or its count), the pile, the stock.
    fn deal(&self, e: &Deal, first: Option<&Decision>, table: &Table) -> Vec<String> {
        let p = self.paint;
        let view = first.map(|f| &f.view);
        let starter = view.map(|v| v.starter);
        let seats = e
            .hands
            .iter()
            .enumerate()
            .map(|(s, h)| Seat {
                seat: s,
                name: table.names.get(s).cloned().unwrap_or_default(),
                hand: if self.sees(s) {
                    Hand::Shown {
                        cards: h.clone(),
                        value: None,
                    }
                } else {
                    Hand::Hidden {
                        count: h.len(),
                        known: Vec::new(),
                    }
                },
                standing: e.standings.get(s).copied(),
                active: e.active.get(s).copied().unwrap_or(!h.is_empty()),
                acting: self.seat == Some(s),
            })
            .collect();
        let scene = Scene {
            heading: None,
            seats,
            standings: table.scoring.to_string(),
            pile: e.pile.clone(),
            top_set: 1,
            pickable: Vec::new(),
            stock: e.stock,
            threshold: view.map(|v| v.call_threshold),
            decision: None,
        };
        let mut out = vec![p.bold(&format!(
            "── round {}{} ──",
            e.round,
            starter.map_or(String::new(), |s| format!(
                " · seat {s} ({}) starts",
                table.name(s)
            ))
        ))];
        out.extend(scene.lines(p));
        out
    }

    /// Adds a decision to its turn: the action as the viewer may see it and, for a seat the
    /// viewer sees, the agent's top candidates and notes.
    fn decision(&self, e: &Decision, t: &mut Turn) {
        let p = self.paint;
        let seen = self.sees(t.seat);
        let chosen = e.said(&e.choice);
        let action = match chosen {
            "call" => Some(p.bold("call")),
            // Playing on tells the others nothing (nor that the seat could have called).
            "play on" => seen.then(|| "play on".to_string()),
            "draw" => Some("draw".to_string()),
            _ => Some(p.words(chosen)),
        };
        t.actions.extend(action);
        if !seen {
            return;
        }
        let Some(expl) = &e.explanation else {
            return;
        };
        let entries: Vec<(usize, Entry)> = expl
            .candidates
            .iter()
            .enumerate()
            .map(|(rank, c)| {
                let mut entry = Entry::new(e.said(&c.choice));
                entry.score = c.score;
                entry.details = c
                    .details
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), (*v)?)))
                    .collect();
                entry.chosen = entry.text == chosen;
                (rank, entry)
            })
            .collect();
        // The top three, and the chosen one where it ranks lower.
        let mut shown: Vec<Entry> = entries.iter().take(3).map(|(_, e)| e.clone()).collect();
        if let Some((rank, e)) = entries.iter().skip(3).find(|(_, e)| e.chosen) {
            let mut e = e.clone();
            e.text = format!("{} (ranked {} of {})", e.text, rank + 1, entries.len());
            shown.push(e);
        }
        let score = Some(expl.score.as_str()).filter(|s| !s.is_empty());
        t.below
            .extend(render::options(&shown, score, p, "           "));
        // A note under the candidates, wrapped at the width to its own column: `· ` on its
        // first line, aligned text on the others.
        const NOTE: &str = "             ";
        let text_width = self.width.map(|w| w.saturating_sub(NOTE.len() + 2).max(20));
        for note in &expl.notes {
            for (i, line) in render::wrap(note, text_width).iter().enumerate() {
                let mark = if i == 0 { "· " } else { "  " };
                t.below
                    .push(format!("{NOTE}{}", p.dim(&format!("{mark}{line}"))));
            }
        }
    }

    /// What the viewer sees of seat `seat`'s hand at its decision `e`.
    fn turn_hand(&self, seat: usize, e: &Decision) -> Hand {
        let v = &e.view;
        if self.sees(seat) {
            Hand::Shown {
                cards: v.hand.clone(),
                value: Some(v.hand_value),
            }
        } else {
            // Public: how many cards it holds and those it took from the pile.
            Hand::Hidden {
                count: v.hand_sizes.get(seat).copied().unwrap_or(0),
                known: v.known.get(seat).cloned().unwrap_or_default(),
            }
        }
    }

    fn turn_lines(&self, t: &Turn, table: &Table) -> Vec<String> {
        let p = self.paint;
        if t.actions.is_empty() && t.below.is_empty() {
            return Vec::new();
        }
        let (name_w, hand_w) = table.widths;
        let hand = self.turn_hand(t.seat, t.first);
        let mut out = vec![format!(
            "  turn {:>3}  {} {}  {}  {}",
            t.turn,
            t.seat,
            render::pad(table.name(t.seat), name_w),
            render::pad(&render::hand(&hand, p), hand_w),
            t.actions.join(" · ")
        )];
        out.extend(t.below.iter().cloned());
        out
    }

    fn round_end(&self, e: &RoundEnd, active: &[bool], table: &Table) -> Vec<String> {
        let p = self.paint;
        let scoring = table.scoring;
        let name = |s: usize| table.name(s);
        let end = match e.end {
            EndReason::Call => "a call",
            EndReason::EmptyHand => "an empty hand",
            EndReason::TurnLimit => "the turn limit",
            EndReason::StockExhausted => "an exhausted stock",
            other => other.as_str(),
        };
        let mut summary = format!("end of round {} by {end} after {} turns", e.round, e.turns);
        match (e.caller, e.call_success) {
            (Some(c), true) if e.winner == Some(c) => {
                summary.push_str(&format!(": seat {c} ({}) called and wins", name(c)));
            }
            (Some(c), success) => {
                let how = if success {
                    " and succeeded"
                } else {
                    " and failed"
                };
                summary.push_str(&format!(": seat {c} ({}) called{how}", name(c)));
                if let Some(w) = e.winner {
                    summary.push_str(&format!("; seat {w} ({}) wins", name(w)));
                }
            }
            (None, _) => {
                if let Some(w) = e.winner {
                    summary.push_str(&format!(": seat {w} ({}) wins", name(w)));
                }
            }
        }
        let mut out = vec![format!("  {}", p.bold(&summary))];
        let playing = |s: usize| active.get(s).copied().unwrap_or(true);
        // What each seat's row shows: its hand at the end and its change, or, for a seat
        // out of the game before this round, only its standing.
        let rows: Vec<(String, String)> = (e.hands.iter().enumerate())
            .map(|(s, hand)| {
                if playing(s) {
                    let value = e.hand_values.get(s).copied();
                    (
                        self.final_hand(hand, value, s, p),
                        signed(e.change.get(s).copied()),
                    )
                } else {
                    (p.dim("out of the game"), String::new())
                }
            })
            .collect();
        let change_w = rows.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        let hand_w = rows
            .iter()
            .map(|(h, _)| render::width(h))
            .max()
            .unwrap_or(0);
        for (s, (hand, change)) in rows.iter().enumerate() {
            let out_now = playing(s) && e.eliminated.get(s) == Some(&true);
            out.push(format!(
                "    {} {}  {}  {:>change_w$} → {} {scoring}{}",
                s,
                render::pad(name(s), table.widths.0),
                render::pad(hand, hand_w),
                change,
                e.standings.get(s).map_or("?".to_string(), i64::to_string),
                if out_now { " · out" } else { "" },
            ));
        }
        out
    }

    /// The last line: who won the game (points) or leads the session (coins), the standings.
    fn game_end(&self, e: &GameEnd, table: &Table) -> String {
        let points = table.scoring == "points";
        let standings: Vec<String> = e.standings.iter().map(i64::to_string).collect();
        self.paint.bold(&format!(
            "{} after {} round{}: seat {} ({}) {} · {}: {}",
            if points { "game over" } else { "session over" },
            e.rounds,
            if e.rounds == 1 { "" } else { "s" },
            e.winner,
            table.name(e.winner),
            if points { "wins" } else { "leads" },
            table.scoring,
            standings.join(" ")
        ))
    }

    /// A hand at a round's end: the cards for a seat the viewer sees, the value for the others.
    fn final_hand(&self, cards: &[String], value: Option<u32>, s: usize, p: Paint) -> String {
        let value = value.map_or(String::new(), |v| format!("({v})"));
        if self.sees(s) {
            format!("{} {}", p.cards(cards), p.dim(&value))
        } else {
            format!("{} {}", p.face_down(cards.len()), p.dim(&value))
        }
    }
}

/// A change with its sign: `+57`, `0`, `-57` (`?` where the trace gives none).
fn signed(change: Option<i64>) -> String {
    match change {
        Some(x) if x > 0 => format!("+{x}"),
        Some(x) => x.to_string(),
        None => "?".to_string(),
    }
}
