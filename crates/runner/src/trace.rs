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

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};

use dhumbal_game::{
    Card, CardSet, Choice, Event, Explanation, Observation, Observer, Phase, Pick, RoundOutcome,
    RoundState,
};

/// The trace format's version, in every trace's first line.
pub const FORMAT: u32 = 1;

/// Where a stage's traces go, beside `rounds/`.
pub const TRACES_DIR: &str = "traces";

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
#[derive(Clone, Default)]
pub struct Tracer(Arc<Mutex<String>>);

impl Tracer {
    pub fn line(&self, event: Value) {
        let mut text = self.0.lock().expect("a tracer's lock is never poisoned");
        text.push_str(&event.to_string());
        text.push('\n');
    }

    /// The text written so far.
    pub fn text(&self) -> String {
        self.0
            .lock()
            .expect("a tracer's lock is never poisoned")
            .clone()
    }

    /// The text written so far, taken (the tracer is left empty): a finished unit's trace
    /// moves into its records instead of being copied.
    pub fn take(&self) -> String {
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

    /// A decision: what the seat saw, the legal actions in the engine's order, the choice,
    /// the agent's explanation and the time it took.
    pub fn decision(
        &self,
        agent: &str,
        obs: &Observation<'_>,
        choice: &Choice,
        explanation: Option<Explanation>,
        ns: u64,
    ) {
        let legal: Vec<Value> = legal_choices(obs).iter().map(choice_json).collect();
        self.line(json!({
            "event": "decision",
            "round": obs.round,
            "turn": obs.turn,
            "seat": obs.seat,
            "agent": agent,
            "phase": phase_name(obs.phase),
            "view": view(obs),
            "legal": legal,
            "choice": choice_json(choice),
            "explanation": explanation.map(|e| explanation_json(&e)),
            "ns": ns,
        }));
    }

    /// The end of the session or game: rounds played, the final standings, the winner.
    pub fn game_end(&self, rounds: u32, standings: &[i64], winner: usize) {
        self.line(json!({
            "event": "game_end",
            "rounds": rounds,
            "standings": standings,
            "winner": winner,
        }));
    }

    /// The end of a round: every hand shown and the outcome.
    pub fn round_end(&self, o: &RoundOutcome, standings: &[i64], points: bool) {
        let seats = 0..o.seats;
        self.line(json!({
            "event": "round_end",
            "round": o.round,
            "end": o.end.as_str(),
            "turns": o.turns,
            "caller": o.caller,
            "call_success": o.call_success,
            "winner": o.winner,
            "hands": seats.clone().map(|s| cards(o.final_hands[s].as_slice())).collect::<Vec<_>>(),
            "hand_values": &o.hand_values[..o.seats],
            "change": if points { &o.points_delta[..o.seats] } else { &o.coin_delta[..o.seats] },
            "standings": standings,
            "eliminated": &o.eliminated[..o.seats],
        }));
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
        "scoring": if stage.session.is_some() { "coins" } else { "points" },
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
    pub standings: &'a [i64],
}

impl Observer for RoundObserver<'_> {
    fn event(&mut self, s: &RoundState, e: &Event) {
        let players = self.standings.len();
        match e {
            Event::Dealt => self.tracer.line(json!({
                "event": "deal",
                "round": self.round,
                "hands": (0..players).map(|p| cards(s.hand(p).as_slice())).collect::<Vec<_>>(),
                "pile": cards(s.pile().as_slice()),
                "stock": s.stock().len(),
                "standings": self.standings,
            })),
            Event::Took {
                seat,
                pick: Pick::Stock,
            } => {
                let drawn = s.hand(*seat).as_slice().last().map(|c| c.to_string());
                self.tracer.line(json!({
                    "event": "drew",
                    "round": self.round,
                    "turn": s.turn(),
                    "seat": seat,
                    "card": drawn,
                    "stock": s.stock().len(),
                }));
            }
            Event::Reshuffled => self.tracer.line(json!({
                "event": "reshuffle",
                "round": self.round,
                "turn": s.turn(),
                "stock": s.stock().len(),
                "pile": cards(s.pile().as_slice()),
            })),
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

fn cards(cards: &[Card]) -> Vec<String> {
    cards.iter().map(Card::to_string).collect()
}

fn set(set: CardSet) -> Vec<String> {
    set.iter().map(|c| c.to_string()).collect()
}

/// A choice as the trace writes it: its kind, its cards, and how `show` says it.
pub fn choice_json(choice: &Choice) -> Value {
    let text = choice.to_string();
    match choice {
        Choice::Call(call) => json!({"kind": "call", "call": call, "text": text}),
        Choice::Discard(d) => {
            json!({"kind": "discard", "cards": cards(d.as_slice()), "text": text})
        }
        Choice::Pick(Pick::Stock) => json!({"kind": "pick", "card": null, "text": text}),
        Choice::Pick(Pick::Pile(c)) => {
            json!({"kind": "pick", "card": c.to_string(), "text": text})
        }
    }
}

fn explanation_json(e: &Explanation) -> Value {
    json!({
        "score": e.score,
        "candidates": e.candidates.iter().map(|c| {
            let details: serde_json::Map<String, Value> =
                c.details.iter().map(|(k, v)| (k.clone(), finite(*v))).collect();
            json!({"choice": choice_json(&c.choice), "score": finite(c.score), "details": details})
        }).collect::<Vec<_>>(),
        "notes": e.notes,
    })
}

/// JSON has no NaN or infinity: they are written as null.
fn finite(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// What the deciding seat sees (the fields of its observation), nothing hidden.
fn view(obs: &Observation<'_>) -> Value {
    json!({
        "hand": cards(obs.hand.as_slice()),
        "hand_value": obs.hand_value,
        "starter": obs.starter,
        "active": obs.active,
        "hand_sizes": obs.hand_sizes,
        "standings": obs.standings,
        "pile": cards(obs.pile),
        "top_set": obs.top_set,
        "pickable": cards(obs.pickable),
        "discarded": cards(obs.discarded),
        "known": obs.known.iter().map(|k| set(*k)).collect::<Vec<_>>(),
        "stock": obs.stock_len,
        "call_threshold": obs.call_threshold,
        "restocked": obs.restocked.map(set),
    })
}
