//! Traces read back: one type per event of format 2 ([`Event`], tagged by its `event` field;
//! `schemas/trace.schema.json`), a whole trace read by [`Trace::read`], its first line by
//! [`head`], one line by [`event`].
//!
//! Every reader of a trace (`show`, the replay page's writer, `--resume`'s check of the format)
//! goes through these types, so that a field a reader needs is a field the writer fills: a key
//! looked up in a `serde_json::Value` that the writer never wrote reads as null, silently. The
//! writer (the parent module) serializes borrowed views of the engine's values instead of these
//! types, for speed; a test reads what it writes back through them, every kind of event, and
//! writes them out again as the same JSON.
//!
//! A trace of another format (its first line, the `game` event, says which) is refused with
//! what to do, and every other problem names the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use dhumbal_game::{EndReason, Phase};

use super::{FORMAT, phase_from_name, phase_name};
use crate::scenario::rules_spec::ScoringName;

/// One line of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Game(Game),
    Deal(Deal),
    Decision(Box<Decision>),
    Drew(Drew),
    Reshuffle(Reshuffle),
    RoundEnd(RoundEnd),
    GameEnd(GameEnd),
}

impl Event {
    /// The round the event belongs to (`None` for the game's first and last lines).
    pub fn round(&self) -> Option<u32> {
        match self {
            Event::Game(_) | Event::GameEnd(_) => None,
            Event::Deal(e) => Some(e.round),
            Event::Decision(e) => Some(e.round),
            Event::Drew(e) => Some(e.round),
            Event::Reshuffle(e) => Some(e.round),
            Event::RoundEnd(e) => Some(e.round),
        }
    }
}

/// A trace's first line: what is played, under which rules, by whom.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Game {
    /// The trace format, [`FORMAT`].
    pub format: u32,
    pub stage: String,
    /// Coins: the session's number; points: the game's number.
    pub deal: u64,
    /// The seating arrangement (rotation or permutation number).
    pub arrangement: u64,
    /// The preset the rules equal (players aside), or `custom`.
    pub rules: String,
    pub scoring: ScoringName,
    pub players: usize,
    /// Rounds per session (coins); `None` for a game played to its end (points).
    pub session: Option<u32>,
    pub seed: u64,
    /// One per seat, in seat order.
    pub seats: Vec<Seat>,
}

/// One seat of the [`Game`] line: the agent of scenario slot `slot` sitting in `seat`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seat {
    pub seat: usize,
    /// The agent's place in the scenario's list.
    pub slot: usize,
    /// The agent's id.
    pub agent: String,
    pub kind: String,
    /// The agent's parameters as resolved: free-form, as its family takes them.
    pub params: Value,
}

/// A round's deal. Cards are written as `show` names them (`10♥`, `Jk1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deal {
    pub round: u32,
    /// Every seat's hand as dealt (empty for a seat out of the game).
    pub hands: Vec<Vec<String>>,
    /// The face-up card(s).
    pub pile: Vec<String>,
    pub stock: usize,
    /// Coins, or points, before the round.
    pub standings: Vec<i64>,
    /// The seats still in the game.
    pub active: Vec<bool>,
}

/// A decision: what the seat saw, every legal answer, the answer and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    pub round: u32,
    pub turn: u32,
    pub seat: usize,
    /// The agent's name.
    pub agent: String,
    #[serde(with = "phase")]
    pub phase: Phase,
    pub view: View,
    /// Every legal answer in the engine's order, as `show` says it (`discard 9♥ 9♠`, `take
    /// 5♦`, `draw`, `call`, `play on`).
    pub legal: Vec<String>,
    pub choice: ChoiceRef,
    pub explanation: Option<Explanation>,
    /// Time the agent took, in nanoseconds (a measurement).
    pub ns: u64,
}

impl Decision {
    /// How `choice` (the decision's, or one of its candidates') is said: the legal choice it
    /// indexes, or its own text.
    pub fn said<'a>(&'a self, choice: &'a ChoiceRef) -> &'a str {
        match choice {
            ChoiceRef::Index(i) => self.legal.get(*i).map_or("?", String::as_str),
            ChoiceRef::Text(text) => text,
        }
    }

    /// Whether every choice indexes one of the legal choices.
    fn check(&self) -> Result<(), String> {
        let candidates = self.explanation.iter().flat_map(|e| &e.candidates);
        let chosen = std::iter::once(&self.choice).chain(candidates.map(|c| &c.choice));
        match chosen.into_iter().find_map(|c| match c {
            ChoiceRef::Index(i) if *i >= self.legal.len() => Some(*i),
            _ => None,
        }) {
            Some(i) => Err(format!(
                "choice {i} is not among the decision's {} legal choices",
                self.legal.len()
            )),
            None => Ok(()),
        }
    }
}

/// What the deciding seat saw (its observation, nothing hidden from it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct View {
    pub hand: Vec<String>,
    pub hand_value: u32,
    pub starter: usize,
    /// Every seat's hand size.
    pub hand_sizes: Vec<usize>,
    /// Cards on the discard pile (which they are follows from the events).
    pub pile_size: usize,
    /// How many cards at the top of the pile formed the previous player's discard.
    pub top_set: usize,
    /// Cards it may take from the pile now (pick phase).
    pub pickable: Vec<String>,
    /// What it has just discarded (pick phase).
    pub discarded: Vec<String>,
    /// Per seat, the cards publicly known to be in its hand.
    pub known: Vec<Vec<String>>,
    pub stock: usize,
    pub call_threshold: u32,
    /// The cards the last reshuffle put into the stock; `None` before any.
    pub restocked: Option<Vec<String>>,
}

/// A choice as a trace writes it: its index in the decision's `legal` list, or, for an answer
/// that is not legal (which the engine refuses), its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ChoiceRef {
    Index(usize),
    Text(String),
}

impl<'de> Deserialize<'de> for ChoiceRef {
    /// A number or a string; anything else is refused saying what a choice is.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ChoiceRef, D::Error> {
        struct Choice;
        impl serde::de::Visitor<'_> for Choice {
            type Value = ChoiceRef;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a choice: its index in the decision's `legal` list, or its text")
            }

            fn visit_u64<E: serde::de::Error>(self, i: u64) -> Result<ChoiceRef, E> {
                usize::try_from(i)
                    .map(ChoiceRef::Index)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(i), &self))
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<ChoiceRef, E> {
                Ok(ChoiceRef::Text(text.to_string()))
            }
        }
        d.deserialize_any(Choice)
    }
}

/// Why an agent chose what it chose ([`dhumbal_game::Agent::explain`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explanation {
    /// What a candidate's score measures (`value shed`, `visits`, ...).
    pub score: String,
    /// The candidates it weighed, best first where it ranks them.
    pub candidates: Vec<Candidate>,
    pub notes: Vec<String>,
}

/// One candidate of an [`Explanation`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    pub choice: ChoiceRef,
    /// `None` where the score was not finite.
    pub score: Option<f64>,
    /// Other numbers, named (in name order); `None` where not finite.
    pub details: BTreeMap<String, Option<f64>>,
}

/// A draw from the stock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drew {
    pub round: u32,
    pub turn: u32,
    pub seat: usize,
    /// The card the draw brought (hidden from the other seats).
    pub card: Option<String>,
    /// Cards left in the stock.
    pub stock: usize,
}

/// The stock rebuilt from the pile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reshuffle {
    pub round: u32,
    pub turn: u32,
    /// The rebuilt stock's size.
    pub stock: usize,
    /// What stayed on the pile.
    pub pile: Vec<String>,
}

/// A round's end: every hand shown and the outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundEnd {
    pub round: u32,
    #[serde(with = "end_reason")]
    pub end: EndReason,
    pub turns: u32,
    pub caller: Option<usize>,
    pub call_success: bool,
    pub winner: Option<usize>,
    pub hands: Vec<Vec<String>>,
    pub hand_values: Vec<u32>,
    /// Coins won or lost, or points added, per seat.
    pub change: Vec<i64>,
    /// After the round.
    pub standings: Vec<i64>,
    pub eliminated: Vec<bool>,
}

/// The end of the session or game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameEnd {
    pub rounds: u32,
    pub standings: Vec<i64>,
    /// Most coins, or the last one standing.
    pub winner: usize,
}

/// A decision's phase by its name ([`phase_name`]).
mod phase {
    use super::*;

    pub fn serialize<S: Serializer>(phase: &Phase, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(phase_name(*phase))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Phase, D::Error> {
        let name = String::deserialize(d)?;
        phase_from_name(&name).ok_or_else(|| {
            let all = [Phase::Call, Phase::Discard, Phase::Pick].map(phase_name);
            serde::de::Error::custom(format!("no phase `{name}` (one of {})", all.join(", ")))
        })
    }
}

/// A round's end by its name ([`EndReason::as_str`]).
mod end_reason {
    use super::*;

    pub fn serialize<S: Serializer>(end: &EndReason, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(end.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EndReason, D::Error> {
        let name = String::deserialize(d)?;
        EndReason::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no round end `{name}`")))
    }
}

/// A whole trace, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its first line.
    pub game: Game,
    /// The lines after it, in order.
    pub events: Vec<Event>,
}

/// Why a trace could not be read. Each names the file, and the line where there is one.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not JSON, or not an event of this format (a field missing, of another type, unknown).
    #[error("{path} line {line}: not a trace event ({message})")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path} does not start with a `game` event: not a trace")]
    NotATrace { path: PathBuf },
    #[error("{path} line {line}: trace format {found}, {}", what_to_do(.found))]
    Format {
        path: PathBuf,
        line: usize,
        found: u64,
    },
}

/// What to do with a trace of format `found`.
fn what_to_do(found: &u64) -> String {
    if *found > u64::from(FORMAT) {
        format!("newer than this program's {FORMAT}; read it with a newer dhumbal-run")
    } else {
        format!(
            "written by an older dhumbal-run; this one reads format {FORMAT} (the run's command \
             again with --force writes them in this format)"
        )
    }
}

impl Trace {
    /// Reads the trace at `path`, refusing one of another format with what to do.
    ///
    /// Every line is parsed before the first is judged, so that a line that is not JSON at all
    /// (a file damaged or cut short) is named first, then a first line of another format, then
    /// the first event whose fields are not this format's.
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let lines = (1..)
            .zip(text.lines())
            .filter(|(_, l)| !l.trim().is_empty());
        let mut events = Vec::new();
        let mut first = None;
        let mut wrong = None;
        for (line, l) in lines {
            first.get_or_insert((line, l));
            match parse(l.as_bytes()) {
                Ok(e) => events.push(e),
                Err(e) if e.is_syntax() || e.is_eof() => return Err(invalid(path, line, e)),
                Err(e) => {
                    wrong.get_or_insert_with(|| invalid(path, line, e));
                }
            }
        }
        let Some((line, l)) = first else {
            return Err(TraceError::NotATrace {
                path: path.to_path_buf(),
            });
        };
        check_head(path, line, l.as_bytes())?;
        if let Some(e) = wrong {
            return Err(e);
        }
        let mut events = events.into_iter();
        match events.next() {
            Some(Event::Game(game)) => Ok(Trace {
                path: path.to_path_buf(),
                game,
                events: events.collect(),
            }),
            _ => Err(TraceError::NotATrace {
                path: path.to_path_buf(),
            }),
        }
    }
}

impl Trace {
    /// The trace with every control character of its text written out visibly
    /// ([`dhumbal_agents::escape_controls`]), for a terminal: a script's notes and printed
    /// text, the agents' ids, the choices and cards of a trace come from outside this program,
    /// and a terminal obeys an escape code among them (clears the screen, retitles the window).
    /// Events without any are kept as read.
    pub fn escape_controls(self) -> Trace {
        Trace {
            path: self.path,
            game: match escaped(Event::Game(self.game.clone())) {
                Event::Game(game) => game,
                _ => self.game,
            },
            events: self.events.into_iter().map(escaped).collect(),
        }
    }
}

/// `event` with the control characters of its strings (map keys included) escaped; as it is
/// when it has none (its JSON then holds no escape sequence and no raw control character).
fn escaped(event: Event) -> Event {
    let Ok(json) = serde_json::to_string(&event) else {
        return event;
    };
    if !json.contains('\\') && !json.chars().any(char::is_control) {
        return event;
    }
    fn walk(v: &mut Value) {
        match v {
            Value::String(s) => {
                if let std::borrow::Cow::Owned(e) = dhumbal_agents::escape_controls(s) {
                    *s = e;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (k, mut x) in entries {
                    walk(&mut x);
                    map.insert(dhumbal_agents::escape_controls(&k).into_owned(), x);
                }
            }
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::from_str::<Value>(&json) else {
        return event;
    };
    walk(&mut value);
    serde_json::from_value(value).unwrap_or(event)
}

/// The first line of the trace at `path`, its `game` event, refusing another format.
pub fn head(path: &Path) -> Result<Game, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
    let mut text = Vec::new();
    for line in 1.. {
        text.clear();
        if std::io::BufRead::read_until(&mut reader, b'\n', &mut text).map_err(io)? == 0 {
            break;
        }
        if text.trim_ascii().is_empty() {
            continue;
        }
        check_head(path, line, &text)?;
        if let Event::Game(game) = event(path, line, &text)? {
            return Ok(game);
        }
        break;
    }
    Err(TraceError::NotATrace {
        path: path.to_path_buf(),
    })
}

/// Line `line` of the trace at `path` (`text`), read as an event of this format.
pub fn event(path: &Path, line: usize, text: &[u8]) -> Result<Event, TraceError> {
    parse(text).map_err(|e| invalid(path, line, e))
}

/// The `format` a trace's first line says, if it says one.
pub fn format_of(line: &str) -> Option<u64> {
    serde_json::from_str::<Head>(line).ok()?.format
}

/// What a trace's first line is read for before its fields are: whether it is a `game` event
/// and its format (a line of another format has other fields).
#[derive(Deserialize)]
struct Head {
    event: Option<String>,
    format: Option<u64>,
}

/// Refuses a first line (line `line` of `path`) that is not a `game` event, or one of
/// another format. A `game` line that says no format passes: its fields are then found wanting.
fn check_head(path: &Path, line: usize, text: &[u8]) -> Result<(), TraceError> {
    let head: Head = serde_json::from_slice(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => TraceError::NotATrace {
            path: path.to_path_buf(),
        },
        _ => invalid(path, line, e),
    })?;
    if head.event.as_deref() != Some("game") {
        return Err(TraceError::NotATrace {
            path: path.to_path_buf(),
        });
    }
    match head.format {
        Some(found) if found != u64::from(FORMAT) => Err(TraceError::Format {
            path: path.to_path_buf(),
            line,
            found,
        }),
        _ => Ok(()),
    }
}

/// One line as an event, its choices checked to index its legal ones.
fn parse(text: &[u8]) -> Result<Event, serde_json::Error> {
    let event: Event = serde_json::from_slice(text)?;
    if let Event::Decision(d) = &event {
        d.check().map_err(serde::de::Error::custom)?;
    }
    Ok(event)
}

fn invalid(path: &Path, line: usize, e: serde_json::Error) -> TraceError {
    TraceError::Invalid {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Quiet, RunOptions, run};
    use crate::scenario::{Overrides, parse};

    /// The trace of deal 0 (a session of two rounds) at a table of two where nobody may call (a
    /// threshold of 0), so that its rounds run the stock out and reshuffle, as a run writes it.
    fn written() -> String {
        let text = "name: t\nseed: 5\ndeals: 2\nsession: 2\n\
            rules: {preset: paper, players: 2, threshold: 0, turn_limit: 120}\n\
            agents: [{kind: aggressive}, {kind: random}]\n\
            output: {trace: {deals: [0]}}\n";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.yaml");
        std::fs::write(&file, text).unwrap();
        let mut scenario = parse(&file, text, &Overrides::default()).unwrap();
        scenario.output.dir = dir.path().join("out");
        let options = RunOptions {
            threads: 1,
            ..RunOptions::default()
        };
        run(&scenario, &options, &Quiet).unwrap();
        let path = scenario.output.dir.join(super::super::TRACES_DIR);
        std::fs::read_to_string(path.join(super::super::file_name(0, 0))).unwrap()
    }

    /// A trace as the writer writes it reads back through the types, every kind of event, and
    /// each event written out again is the JSON it was read from: the writer writes no field the
    /// types lack, and the types need none it does not write.
    #[test]
    fn a_written_trace_reads_back_whole_with_every_kind_of_event() {
        let text = written();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::super::file_name(0, 0));
        std::fs::write(&path, &text).unwrap();
        let trace = Trace::read(&path).unwrap();
        assert_eq!(trace.game.format, FORMAT);
        assert_eq!(trace.game.scoring, ScoringName::Coins);
        assert_eq!((trace.game.players, trace.game.session), (2, Some(2)));
        assert_eq!(head(&path).unwrap(), trace.game);
        let events: Vec<Event> = std::iter::once(Event::Game(trace.game.clone()))
            .chain(trace.events.iter().cloned())
            .collect();
        assert_eq!(events.len(), text.lines().count());
        for (event, line) in events.iter().zip(text.lines()) {
            let written: Value = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(event).unwrap(), written, "{line}");
        }
        let kinds: std::collections::BTreeSet<String> = text
            .lines()
            .map(|l| serde_json::from_str::<Head>(l).unwrap().event.unwrap())
            .collect();
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [
                "deal",
                "decision",
                "drew",
                "game",
                "game_end",
                "reshuffle",
                "round_end"
            ]
        );
        let explained = events.iter().any(|e| match e {
            Event::Decision(d) => d
                .explanation
                .as_ref()
                .is_some_and(|x| !x.candidates.is_empty()),
            _ => false,
        });
        assert!(explained, "a heuristic explains its decisions");
        assert!(matches!(trace.events.last(), Some(Event::GameEnd(_))));
    }

    /// A trace whose first line says another format is refused, naming the file and the line
    /// and what to do; so is a line of another format's shape in a trace of this one, and a
    /// choice that indexes no legal choice.
    #[test]
    fn a_line_of_another_format_is_refused_naming_file_and_line() {
        let text = written();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deal-000000-arrangement-000.jsonl");
        let write = |lines: &[String]| std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let with = |i: usize, edit: &dyn Fn(&mut Value)| {
            let mut all = lines.clone();
            let mut v: Value = serde_json::from_str(&all[i]).unwrap();
            edit(&mut v);
            all[i] = v.to_string();
            all
        };
        let message = |e: TraceError| {
            let m = e.to_string();
            assert!(m.contains(&path.display().to_string()), "{m}");
            m
        };

        // The first line of format 1: refused before any of its events is read.
        write(&with(0, &|g| g["format"] = 1.into()));
        let e = Trace::read(&path).unwrap_err();
        assert!(
            matches!(
                e,
                TraceError::Format {
                    line: 1,
                    found: 1,
                    ..
                }
            ),
            "{e}"
        );
        let m = message(e);
        assert!(
            m.contains("line 1: trace format 1, written by an older"),
            "{m}"
        );
        assert!(m.contains("--force"), "{m}");
        assert!(matches!(
            head(&path),
            Err(TraceError::Format { found: 1, .. })
        ));
        write(&with(0, &|g| g["format"] = 3.into()));
        let m = message(Trace::read(&path).unwrap_err());
        assert!(
            m.contains("trace format 3, newer than this program's 2"),
            "{m}"
        );

        // The first decision as format 1 wrote it (its choice an object with its text).
        let at = lines
            .iter()
            .position(|l| l.contains(r#""event":"decision""#))
            .unwrap();
        write(&with(at, &|d| {
            d["choice"] = serde_json::json!({"text": "draw"})
        }));
        let e = Trace::read(&path).unwrap_err();
        assert!(
            matches!(e, TraceError::Invalid { line, .. } if line == at + 1),
            "{e}"
        );
        let m = message(e);
        assert!(
            m.contains(&format!("line {}: not a trace event", at + 1)),
            "{m}"
        );
        assert!(m.contains("expected a choice: its index"), "{m}");
        // A field the writer does not write, or one it does left out.
        write(&with(at, &|d| d["note"] = "x".into()));
        let m = message(Trace::read(&path).unwrap_err());
        assert!(m.contains("unknown field `note`"), "{m}");
        write(&with(at, &|d| {
            drop(d.as_object_mut().unwrap().remove("legal"))
        }));
        let m = message(Trace::read(&path).unwrap_err());
        assert!(m.contains("missing field `legal`"), "{m}");
        // A choice beyond the legal ones.
        write(&with(at, &|d| d["choice"] = 99.into()));
        let m = message(Trace::read(&path).unwrap_err());
        assert!(m.contains("choice 99 is not among"), "{m}");

        // A line that is not JSON is named before the fields of an earlier one.
        let mut broken = with(0, &|g| drop(g.as_object_mut().unwrap().remove("seed")));
        broken[2] = "not json".into();
        write(&broken);
        let m = message(Trace::read(&path).unwrap_err());
        assert!(m.contains("line 3: not a trace event"), "{m}");
        broken[2] = lines[2].clone();
        write(&broken);
        let m = message(Trace::read(&path).unwrap_err());
        assert!(
            m.contains("line 1: not a trace event (missing field `seed`"),
            "{m}"
        );

        // Not a trace at all.
        write(&lines[1..]);
        let e = Trace::read(&path).unwrap_err();
        assert!(matches!(e, TraceError::NotATrace { .. }), "{e}");
        assert!(matches!(head(&path), Err(TraceError::NotATrace { .. })));
    }
}
