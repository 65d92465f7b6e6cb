//! Decision traces: every event of chosen deals (games, for point scoring), one JSON Lines
//! file per traced unit under `<stage>/traces/`, described by `schemas/trace.schema.json`
//! and docs/traces.md.
//!
//! A unit is traced when its deal number is listed (`output.trace.deals`, `--trace`) or a
//! multiple of `output.trace.every`; it is then traced under every seating arrangement it is
//! played. Tracing reads what the engine and agents already do: the seats' wrappers
//! ([`crate::tournament`]'s `Timed`) write each decision, with the legal actions in the
//! engine's order and the agent's [`Agent::explain`], and an [`Observer`] writes the deal, the
//! cards drawn and the reshuffles; nothing of it draws randomness, so a traced run's records
//! equal an untraced one's. An untraced unit carries no tracer and pays nothing.
//!
//! The trace of a unit travels with its records and is written by the part writer before the
//! part that holds them is renamed into place: a unit whose records exist has its trace.
//!
//! Traces are read back through the types of [`read`] ([`Trace::read`]), never by keys looked
//! up in a `serde_json::Value`.

pub mod read;

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::{Value, json};

use dhumbal_game::{
    Candidate, Card, CardSet, Choice, Event, Explanation, Observation, Observer, Phase, Pick,
    RoundOutcome, RoundState, Table,
};

use crate::scenario::rules_spec::ScoringName;
pub use read::{Trace, TraceError};

/// The trace format's version, in every trace's first line.
pub const FORMAT: u32 = 2;

/// Where a stage's traces go, beside `rounds/`.
pub const TRACES_DIR: &str = "traces";

/// The first trace under `root` (`root/traces/`, `root/<stage>/traces/`) written in another
/// format than [`FORMAT`], with its format: a run started by an older build that this one must
/// not finish (its traces would mix two formats), nor `show` or the replay page read.
pub fn other_format(root: &std::path::Path) -> Option<(std::path::PathBuf, u64)> {
    let mut dirs = vec![root.join(TRACES_DIR)];
    if let Ok(entries) = std::fs::read_dir(root) {
        dirs.extend(entries.flatten().map(|e| e.path().join(TRACES_DIR)));
    }
    dirs.into_iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .find_map(|path| {
            let format = file_format(&path)?;
            (format != u64::from(FORMAT)).then_some((path, format))
        })
}

/// The `format` of the trace at `path` (its first line's), when it can be read.
pub fn file_format(path: &std::path::Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(file), &mut line).ok()?;
    read::format_of(&line)
}

/// Which units a stage traces, by deal number (coins: the session's number, the records'
/// `deal` of its first round; points: the game's number).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TraceSelection {
    pub deals: Vec<u64>,
    /// Also every deal whose number is a multiple of this.
    pub every: Option<u64>,
}

impl TraceSelection {
    pub fn is_empty(&self) -> bool {
        self.deals.is_empty() && self.every.is_none()
    }

    /// Whether match `m` (a session or a game) is traced.
    pub fn traces(&self, m: u64) -> bool {
        self.deals.contains(&m) || self.every.is_some_and(|e| m.is_multiple_of(e))
    }
}

/// The file of the trace of match `m` under seating arrangement `a`.
pub fn file_name(m: u64, a: u64) -> String {
    format!("deal-{m:06}-arrangement-{a:03}.jsonl")
}

/// One unit's trace as it is written: JSON Lines, shared by the seats' wrappers and the round
/// observer of the unit (one thread plays a unit; the lock is never contended).
///
/// Events are serialized straight into the buffer from borrowed views of the engine's values
/// ([`Serialize`] structs below), never through a `serde_json::Value` tree: a traced round of
/// four heuristics writes about 40 KB, and building a tree of maps and strings for it cost more
/// than playing a thousand untraced rounds. The buffer is a list of chunks of about a
/// megabyte, so that a long session's trace (tens of megabytes) is never copied to grow.
#[derive(Clone, Default)]
pub struct Tracer(Arc<Mutex<Vec<Vec<u8>>>>);

/// A chunk of a [`Tracer`]'s text is closed once it holds this much.
const CHUNK: usize = 1 << 20;

impl Tracer {
    /// Appends one event as a line.
    pub fn line(&self, event: impl Serialize) {
        let mut chunks = self.0.lock().expect("a tracer's lock is never poisoned");
        if chunks.last().is_none_or(|c| c.len() >= CHUNK) {
            chunks.push(Vec::with_capacity(CHUNK + CHUNK / 4));
        }
        let text = chunks.last_mut().expect("pushed above");
        serde_json::to_writer(&mut *text, &event)
            .expect("a trace event serializes (its maps have string keys)");
        text.push(b'\n');
    }

    /// The text written so far.
    pub fn text(&self) -> String {
        let chunks = self.0.lock().expect("a tracer's lock is never poisoned");
        String::from_utf8(chunks.concat()).expect("serde_json writes UTF-8")
    }

    /// The text written so far, taken (the tracer is left empty): a finished unit's trace
    /// moves into its records instead of being copied. UTF-8 (as serde_json writes it), in
    /// chunks that end with whole lines.
    pub fn take(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.0.lock().expect("a tracer's lock is never poisoned"))
    }

    /// After `agent` answered the decision `obs` asked for (`out`): the decision, with the
    /// agent's explanation, when it was answered. `ns`: the time it took.
    pub fn decided<T>(
        &self,
        agent: &mut dyn dhumbal_game::Agent,
        obs: &Observation<'_>,
        out: &Result<T, dhumbal_game::AgentError>,
        choice: impl FnOnce(&T) -> Choice,
        ns: u64,
    ) {
        if let Ok(answer) = out {
            let explanation = agent.explain(obs);
            self.decision(agent.name(), obs, &choice(answer), explanation, ns);
        }
    }

    /// A decision: what the seat saw, the legal actions in the engine's order (as `show` says
    /// them), the choice and the explanation's candidates as indices into them, the agent's
    /// explanation and the time it took.
    pub fn decision(
        &self,
        agent: &str,
        obs: &Observation<'_>,
        choice: &Choice,
        explanation: Option<Explanation>,
        ns: u64,
    ) {
        let legal = legal_choices(obs);
        self.line(DecisionEvent {
            event: "decision",
            round: obs.round,
            turn: obs.turn,
            seat: obs.seat,
            agent,
            phase: phase_name(obs.phase),
            view: View(obs),
            legal: Texts(&legal),
            choice: Index(&legal, choice),
            explanation: explanation.as_ref().map(|e| ExplanationJson(e, &legal)),
            ns,
        });
    }

    /// The end of the session or game: rounds played, the final standings, the winner.
    pub fn game_end(&self, rounds: u32, standings: &[i64], winner: usize) {
        #[derive(Serialize)]
        struct GameEnd<'a> {
            event: &'static str,
            rounds: u32,
            standings: &'a [i64],
            winner: usize,
        }
        self.line(GameEnd {
            event: "game_end",
            rounds,
            standings,
            winner,
        });
    }

    /// The end of a round: every hand shown and the outcome.
    pub fn round_end(&self, o: &RoundOutcome, standings: &[i64], points: bool) {
        #[derive(Serialize)]
        struct RoundEnd<'a> {
            event: &'static str,
            round: u32,
            end: &'static str,
            turns: u32,
            caller: Option<usize>,
            call_success: bool,
            winner: Option<usize>,
            hands: Hands<'a>,
            hand_values: &'a [u32],
            change: &'a [i64],
            standings: &'a [i64],
            eliminated: &'a [bool],
        }
        let n = o.seats;
        self.line(RoundEnd {
            event: "round_end",
            round: o.round,
            end: o.end.as_str(),
            turns: o.turns,
            caller: o.caller,
            call_success: o.call_success,
            winner: o.winner,
            hands: Hands(&o.final_hands[..n]),
            hand_values: &o.hand_values[..n],
            change: if points {
                &o.points_delta[..n]
            } else {
                &o.coin_delta[..n]
            },
            standings,
            eliminated: &o.eliminated[..n],
        });
    }
}

#[derive(Serialize)]
struct DecisionEvent<'a> {
    event: &'static str,
    round: u32,
    turn: u32,
    seat: usize,
    agent: &'a str,
    phase: &'static str,
    view: View<'a>,
    legal: Texts<'a>,
    choice: Index<'a>,
    explanation: Option<ExplanationJson<'a>>,
    ns: u64,
}

/// Cards as their names ("9♥"), written without a string per card.
struct Cards<'a>(&'a [Card]);

impl Serialize for Cards<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for card in self.0 {
            seq.serialize_element(&Name(card))?;
        }
        seq.end()
    }
}

/// A set of cards, in the set's order.
struct Set(CardSet);

impl Serialize for Set {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for card in self.0.iter() {
            seq.serialize_element(&Name(&card))?;
        }
        seq.end()
    }
}

/// The hands of the first seats of a round in play.
struct SeatHands<'a>(&'a RoundState, usize);

impl Serialize for SeatHands<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((0..self.1).map(|p| Cards(self.0.hand(p).as_slice())))
    }
}

/// One hand per seat.
struct Hands<'a>(&'a [dhumbal_game::Hand]);

impl Serialize for Hands<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|h| Cards(h.as_slice())))
    }
}

/// Anything shown, written as a JSON string through its `Display`.
struct Name<'a, T: std::fmt::Display>(&'a T);

impl<T: std::fmt::Display> Serialize for Name<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self.0)
    }
}

/// The legal choices as `show` says them ("discard 9♥ 9♠", "take 5♦", "draw", "call",
/// "play on"): the cards of a discard or a take are the words after the verb.
struct Texts<'a>(&'a [Choice]);

impl Serialize for Texts<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Name))
    }
}

/// A choice as its index among the legal ones, a discard matched by its cards in any order (an
/// agent may answer a discard's cards in another order than the engine lists them; the engine
/// accepts it and puts them down in its own); one that is not among them (an illegal answer,
/// which the engine then refuses) as its text.
struct Index<'a>(&'a [Choice], &'a Choice);

impl Serialize for Index<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let same = |c: &Choice| match (c, self.1) {
            (Choice::Discard(a), Choice::Discard(b)) => {
                a.len() == b.len() && a.to_set() == b.to_set()
            }
            (a, b) => a == b,
        };
        match self.0.iter().position(same) {
            Some(i) => s.serialize_u64(i as u64),
            None => s.collect_str(self.1),
        }
    }
}

/// An explanation, its candidates' choices as indices into the decision's legal choices.
struct ExplanationJson<'a>(&'a Explanation, &'a [Choice]);

impl Serialize for ExplanationJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("score", &e.score)?;
        map.serialize_entry("candidates", &Candidates(&e.candidates, self.1))?;
        map.serialize_entry("notes", &e.notes)?;
        map.end()
    }
}

struct Candidates<'a>(&'a [Candidate], &'a [Choice]);

impl Serialize for Candidates<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            seq.serialize_element(&CandidateJson(c, self.1))?;
        }
        seq.end()
    }
}

struct CandidateJson<'a>(&'a Candidate, &'a [Choice]);

impl Serialize for CandidateJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("choice", &Index(self.1, &c.choice))?;
        map.serialize_entry("score", &finite(c.score))?;
        map.serialize_entry("details", &Details(&c.details))?;
        map.end()
    }
}

struct Details<'a>(&'a [(String, f64)]);

impl Serialize for Details<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, finite(*v))))
    }
}

/// JSON has no NaN or infinity: they are written as null.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// What the deciding seat sees (the fields of its observation), nothing hidden, less what the
/// round's `deal` line already says and the events since rebuild: the seats still in the game
/// and the standings (the same all round), and the pile's cards (the deal's face-up card, then
/// each discard, less each take, and each reshuffle's), of which it gives the count.
struct View<'a>(&'a Observation<'a>);

impl Serialize for View<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let obs = self.0;
        let mut map = s.serialize_map(Some(12))?;
        map.serialize_entry("hand", &Cards(obs.hand.as_slice()))?;
        map.serialize_entry("hand_value", &obs.hand_value)?;
        map.serialize_entry("starter", &obs.starter)?;
        map.serialize_entry("hand_sizes", obs.hand_sizes)?;
        map.serialize_entry("pile_size", &obs.pile.len())?;
        map.serialize_entry("top_set", &obs.top_set)?;
        map.serialize_entry("pickable", &Cards(obs.pickable))?;
        map.serialize_entry("discarded", &Cards(obs.discarded))?;
        map.serialize_entry("known", &Known(obs.known))?;
        map.serialize_entry("stock", &obs.stock_len)?;
        map.serialize_entry("call_threshold", &obs.call_threshold)?;
        map.serialize_entry("restocked", &obs.restocked.map(Set))?;
        map.end()
    }
}

/// What each seat is known to hold.
struct Known<'a>(&'a [CardSet]);

impl Serialize for Known<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|k| Set(*k)))
    }
}
/// A traced unit's first line: what is played (match `m` of `stage` under seating arrangement
/// `a`), by whom, in which seat (`seats`: one [`seat_json`] per seat, in seat order).
pub fn game_json(stage: &crate::scenario::Stage, m: u64, a: u64, seats: Vec<Value>) -> Value {
    json!({
        "event": "game",
        "format": FORMAT,
        "stage": stage.name,
        "deal": m,
        "arrangement": a,
        "rules": dhumbal_game::rules::Preset::ALL
            .iter()
            .find(|p| {
                let mut v = p.variant();
                v.players = stage.rules.variant().players;
                v == *stage.rules.variant()
            })
            .map_or("custom", |p| p.name()),
        "scoring": if stage.session.is_some() { ScoringName::Coins } else { ScoringName::Points },
        "players": seats.len(),
        "session": stage.session,
        "seed": stage.seed,
        "seats": seats,
    })
}

/// One seat of the [`game_json`] line: the agent of scenario slot `slot` sitting in `seat`.
pub fn seat_json(seat: usize, slot: usize, agent: &str, kind: &str, params: Value) -> Value {
    json!({
        "seat": seat,
        "slot": slot,
        "agent": agent,
        "kind": kind,
        "params": params,
    })
}

/// Writes the round's own events: the deal (every hand, the face-up card), the card each
/// draw brought (the decision says only "draw") and each reshuffle.
pub struct RoundObserver<'a> {
    pub tracer: &'a Tracer,
    pub round: u32,
    pub standings: Vec<i64>,
    /// The seats still in the game.
    pub active: Vec<bool>,
}

impl<'a> RoundObserver<'a> {
    /// The observer of round `round`, about to be played at `table`: the standings and the
    /// seats still in as they are before it.
    pub fn new(tracer: &'a Tracer, round: u32, table: &Table) -> RoundObserver<'a> {
        RoundObserver {
            tracer,
            round,
            standings: table.standings().to_vec(),
            active: table.active().to_vec(),
        }
    }
}

impl Observer for RoundObserver<'_> {
    fn event(&mut self, s: &RoundState, e: &Event) {
        #[derive(Serialize)]
        struct Deal<'a> {
            event: &'static str,
            round: u32,
            hands: SeatHands<'a>,
            pile: Cards<'a>,
            stock: usize,
            standings: &'a [i64],
            active: &'a [bool],
        }
        #[derive(Serialize)]
        struct Drew<'a> {
            event: &'static str,
            round: u32,
            turn: u32,
            seat: usize,
            card: Option<Name<'a, Card>>,
            stock: usize,
        }
        #[derive(Serialize)]
        struct Reshuffle<'a> {
            event: &'static str,
            round: u32,
            turn: u32,
            stock: usize,
            pile: Cards<'a>,
        }
        let players = self.standings.len();
        match e {
            Event::Dealt => self.tracer.line(Deal {
                event: "deal",
                round: self.round,
                hands: SeatHands(s, players),
                pile: Cards(s.pile().as_slice()),
                stock: s.stock().len(),
                standings: &self.standings,
                active: &self.active,
            }),
            Event::Took {
                seat,
                pick: Pick::Stock,
            } => self.tracer.line(Drew {
                event: "drew",
                round: self.round,
                turn: s.turn(),
                seat: *seat,
                card: s.hand(*seat).as_slice().last().map(Name),
                stock: s.stock().len(),
            }),
            Event::Reshuffled => self.tracer.line(Reshuffle {
                event: "reshuffle",
                round: self.round,
                turn: s.turn(),
                stock: s.stock().len(),
                pile: Cards(s.pile().as_slice()),
            }),
            _ => {}
        }
    }
}

/// Every legal answer to the decision `obs` asks for, in the engine's order.
pub fn legal_choices(obs: &Observation<'_>) -> Vec<Choice> {
    match obs.phase {
        Phase::Call => vec![Choice::Call(true), Choice::Call(false)],
        Phase::Discard => {
            let mut all = Vec::new();
            obs.for_each_legal_discard(|d| {
                all.push(Choice::Discard(
                    dhumbal_game::Discard::from_slice(d).expect("a legal discard fits"),
                ));
                true
            });
            all
        }
        Phase::Pick => obs
            .pickable
            .iter()
            .map(|&c| Choice::Pick(Pick::Pile(c)))
            .chain(std::iter::once(Choice::Pick(Pick::Stock)))
            .collect(),
    }
}

pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Call => "call",
        Phase::Discard => "discard",
        Phase::Pick => "pick",
    }
}

/// The phase [`phase_name`] names `name`.
pub fn phase_from_name(name: &str) -> Option<Phase> {
    match name {
        "call" => Some(Phase::Call),
        "discard" => Some(Phase::Discard),
        "pick" => Some(Phase::Pick),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_game::Discard;

    fn discard(cards: &str) -> Choice {
        let cards: Vec<Card> = cards.split(' ').map(|c| c.parse().unwrap()).collect();
        Choice::Discard(Discard::from_slice(&cards).unwrap())
    }

    #[test]
    fn a_choice_is_its_index_among_the_legal_ones_a_discard_in_any_order() {
        let legal = [
            discard("9H"),
            discard("9S"),
            discard("9H 9S"),
            Choice::Call(false),
        ];
        let index = |c: &Choice| serde_json::to_string(&Index(&legal, c)).unwrap();
        assert_eq!(index(&discard("9H 9S")), "2");
        assert_eq!(index(&discard("9S 9H")), "2");
        assert_eq!(index(&discard("9S")), "1");
        assert_eq!(index(&Choice::Call(false)), "3");
        // Not legal: said in words.
        assert_eq!(index(&discard("9H 9S 9D")), "\"discard 9♥ 9♠ 9♦\"");
        assert_eq!(index(&Choice::Call(true)), "\"call\"");
    }
}
