//! The two-player tabular learning plan (docs/tabular.md): a state abstraction of 1,600
//! states, three macro actions, and the agents that play them.
//!
//! - [`State`]: the cards the player holds (1-5), the cards its opponent holds (1-5), and its
//!   own hand value (1-64). Nothing else: the plan's players have no memory of earlier events.
//! - [`Macro`]: `GREEDY_DECREASE`, `DELAY_COLLECT` and `CALL`, mapped onto the engine's legal
//!   actions by [`macro_discard`] and [`macro_pick`] (every choice the plan leaves open is
//!   written down there and in docs/tabular.md).
//! - Kinds: `tabular` plays a learned policy table ([`PolicyTable`], a CSV file written by
//!   `dhumbal-run train`), `macro` plays one macro action at every turn (the baselines).
//!
//! A macro is chosen once per turn, at its first decision (the call, or the discard when a
//! call is not offered), and then played through the discard and the pick. The learners in
//! `dhumbal-learn` choose through the same [`MacroAgent`] with their own [`Chooser`], so a
//! policy is trained and played by the same code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::cards::{CardSet, Discard};
use dhumbal_game::discards::{Runs, for_each_multi_discard};
use dhumbal_game::rng::RandomSource;
use dhumbal_game::rules::{PickRule, SetPick};
use dhumbal_game::{
    Agent, AgentError, Candidate, Card, Choice, Explanation, Observation, Phase, Pick,
    RoundOutcome, Rules,
};

use crate::family::{Entry, Family, Param, ParamType, Recipe, Resolve, fitting};
use crate::learned::PendingAgent;
use crate::neural::checkpoint::{rules_fingerprint, rules_name};

/// Most cards a hand holds in the abstraction.
pub const MAX_CARDS: usize = 5;
/// Highest hand value in the abstraction (K K K K Q).
pub const MAX_VALUE: usize = 64;
/// Number of abstract states: 5 × 5 × 64.
pub const STATES: usize = MAX_CARDS * MAX_CARDS * MAX_VALUE;

/// One abstract state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    /// Cards in the player's hand, 1-5.
    pub own: u8,
    /// Cards in the opponent's hand, 1-5.
    pub opponent: u8,
    /// The player's hand value, 1-64.
    pub value: u8,
}

impl State {
    /// The state of an observation: the opponent is the next seat still in the round. Values
    /// are clamped into 1..=64 and hand sizes into 1..=5 (under rules the abstraction is meant
    /// for, 2 players and 5-card hands without jokers, nothing is ever clamped: a test checks).
    pub fn of(obs: &Observation<'_>) -> State {
        let n = obs.hand_sizes.len();
        let opponent = (1..n)
            .map(|k| (obs.seat + k) % n)
            .find(|&s| obs.active[s])
            .map_or(1, |s| obs.hand_sizes[s]);
        State {
            own: (obs.hand.len() as u8).clamp(1, MAX_CARDS as u8),
            opponent: opponent.clamp(1, MAX_CARDS as u8),
            value: (obs.hand_value as usize).clamp(1, MAX_VALUE) as u8,
        }
    }

    /// Index 0..1600: own cards slowest, hand value fastest.
    #[inline]
    pub fn index(self) -> usize {
        ((self.own as usize - 1) * MAX_CARDS + (self.opponent as usize - 1)) * MAX_VALUE
            + (self.value as usize - 1)
    }

    pub fn from_index(i: usize) -> State {
        assert!(i < STATES, "state index {i} out of range");
        State {
            own: (i / (MAX_CARDS * MAX_VALUE)) as u8 + 1,
            opponent: ((i / MAX_VALUE) % MAX_CARDS) as u8 + 1,
            value: (i % MAX_VALUE) as u8 + 1,
        }
    }
}

/// The three macro actions of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Macro {
    /// Discard the highest-scoring set; take the card on offer when it is worth less than a
    /// stock card is on average, else draw.
    GreedyDecrease,
    /// Keep the cards that make the best set with the card on offer, discard the
    /// highest-scoring set among the others, and take the card on offer.
    DelayCollect,
    /// Call, ending the round.
    Call,
}

impl Macro {
    pub const ALL: [Macro; 3] = [Macro::GreedyDecrease, Macro::DelayCollect, Macro::Call];
    pub const NAMES: &'static [&'static str] = &["greedy-decrease", "delay-collect", "call"];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        Macro::NAMES[self.index()]
    }

    pub fn from_name(name: &str) -> Option<Macro> {
        Macro::NAMES
            .iter()
            .position(|&n| n == name)
            .map(|i| Macro::ALL[i])
    }

    /// The best of `values` (one per macro, in [`Macro::ALL`] order), `Call` left out when a
    /// call is not offered. Ties go to the first in that order.
    pub fn best(values: &[f64; 3], may_call: bool) -> Macro {
        let n = if may_call { 3 } else { 2 };
        let mut best = 0;
        for i in 1..n {
            if values[i] > values[best] {
                best = i;
            }
        }
        Macro::ALL[best]
    }
}

/// Total value of some cards.
#[inline]
fn score(rules: &Rules, cards: &[Card]) -> u32 {
    cards.iter().map(|&c| rules.value(c)).sum()
}

/// The legal discard of highest score, ties to the one of more cards, then to the first in
/// the engine's enumeration order; `keep` (cards that should stay) rules out discards that
/// touch it unless they score more than `unless_above`.
fn best_discard(obs: &Observation<'_>, keep: CardSet, unless_above: u32) -> Option<Discard> {
    let mut best: Option<(u32, usize, Discard)> = None;
    obs.for_each_legal_discard(|d| {
        let s = score(obs.rules, d);
        let touches = d.iter().any(|c| keep.contains(*c));
        if touches && s <= unless_above {
            return true;
        }
        if best
            .as_ref()
            .is_none_or(|(bs, bl, _)| (s, d.len()) > (*bs, *bl))
        {
            best = Some((
                s,
                d.len(),
                Discard::from_slice(d).expect("a discard fits a hand"),
            ));
        }
        true
    });
    best.map(|(_, _, d)| d)
}

/// The best set (two or more cards, legal as a discard) that `offer` makes with cards of
/// `hand`: its score and the hand cards in it. `None` when the card combines with nothing.
fn best_set_with(rules: &Rules, hand: &[Card], offer: Card) -> Option<(u32, CardSet)> {
    let mut cards = [offer; 16];
    let n = hand.len().min(15);
    cards[..n].copy_from_slice(&hand[..n]);
    cards[n] = offer;
    let mut best: Option<(u32, CardSet)> = None;
    for_each_multi_discard(rules, &cards[..=n], Runs::All, |d| {
        if d.contains(&offer) {
            let s = score(rules, d);
            if best.is_none_or(|(bs, _)| s > bs) {
                let mut set: CardSet = d.iter().copied().collect();
                set.remove(offer);
                best = Some((s, set));
            }
        }
        true
    });
    best
}

/// The cards the player may take after discarding, as the discard phase can already see
/// them: the previous player's discard (the top `top_set` cards of the pile) under the
/// table's pick rule. Empty under the paper's own-last-discard rule.
fn on_offer(obs: &Observation<'_>, out: &mut [Card; 8]) -> usize {
    let top = obs.top_set.min(obs.pile.len());
    let set = &obs.pile[obs.pile.len() - top..];
    let mut n = 0;
    let mut push = |c: Card| {
        if n < out.len() && !out[..n].contains(&c) {
            out[n] = c;
            n += 1;
        }
    };
    match obs.rules.variant().pick {
        PickRule::OwnLastDiscard => {}
        PickRule::PreviousDiscard(SetPick::Top) => {
            if let Some(&c) = set.last() {
                push(c);
            }
        }
        PickRule::PreviousDiscard(SetPick::Ends) => {
            if let (Some(&a), Some(&b)) = (set.first(), set.last()) {
                push(a);
                push(b);
            }
        }
        PickRule::PreviousDiscard(SetPick::Any) => set.iter().for_each(|&c| push(c)),
    }
    n
}

/// The card on offer that makes the best set with `hand` (ties to the first offered).
fn best_offer(rules: &Rules, hand: &[Card], offered: &[Card]) -> Option<(Card, u32, CardSet)> {
    let mut best: Option<(Card, u32, CardSet)> = None;
    for &c in offered {
        if let Some((s, keep)) = best_set_with(rules, hand, c)
            && best.is_none_or(|(_, bs, _)| s > bs)
        {
            best = Some((c, s, keep));
        }
    }
    best
}

/// The discard a macro action makes.
///
/// - `GREEDY_DECREASE` (and `CALL`, whose discard is never asked for when the call is made):
///   the legal discard of highest score, ties to more cards, then to the engine's order.
/// - `DELAY_COLLECT`: among the cards on offer (the previous discard, as the pick rule lets
///   one take it), the one that makes the best set with the hand; the hand cards of that set
///   are kept, unless a set worth more than the set to be collected breaks it (the plan's
///   "only consider sets that have score higher than the set that can be obtained after
///   picking"), and the highest-scoring other set goes. With nothing on offer that combines
///   with the hand, or nothing left to discard, it is `GREEDY_DECREASE`.
pub fn macro_discard(obs: &Observation<'_>, m: Macro) -> Discard {
    let greedy = || best_discard(obs, CardSet::default(), 0).expect("a hand has a discard");
    match m {
        Macro::GreedyDecrease | Macro::Call => greedy(),
        Macro::DelayCollect => {
            let mut offered = [Card::from_id(0); 8];
            let n = on_offer(obs, &mut offered);
            match best_offer(obs.rules, obs.hand.as_slice(), &offered[..n]) {
                Some((_, s, keep)) => best_discard(obs, keep, s).unwrap_or_else(greedy),
                None => greedy(),
            }
        }
    }
}

/// The pick a macro action makes (after its discard).
///
/// - `GREEDY_DECREASE` ("pick up the card from the previous player with the lowest score"):
///   the lowest card on offer if it is worth less than the mean value of the cards the player
///   cannot see now (the deck less its hand and the cards on the pile's top sets; no memory
///   of earlier turns), else the stock.
/// - `DELAY_COLLECT`: the card on offer that makes the best set with the hand kept, so that
///   it can go down next turn; with none that does, as `GREEDY_DECREASE`.
pub fn macro_pick(obs: &Observation<'_>, m: Macro) -> Pick {
    if obs.pickable.is_empty() {
        return Pick::Stock;
    }
    if m == Macro::DelayCollect
        && let Some((c, _, _)) = best_offer(obs.rules, obs.hand.as_slice(), obs.pickable)
    {
        return Pick::Pile(c);
    }
    let lowest = *obs
        .pickable
        .iter()
        .min_by_key(|&&c| obs.value(c))
        .expect("not empty");
    let mut visible = obs.hand.to_set();
    obs.pickable
        .iter()
        .chain(obs.discarded)
        .for_each(|&c| visible.insert(c));
    let (mut sum, mut count) = (0u32, 0u32);
    for &c in obs.rules.deck() {
        if !visible.contains(c) {
            sum += obs.value(c);
            count += 1;
        }
    }
    if count > 0 && obs.value(lowest) * count < sum {
        Pick::Pile(lowest)
    } else {
        Pick::Stock
    }
}

/// What chooses the macro of a turn: a policy table, a fixed rule, or a learner.
pub trait Chooser: Send {
    /// The macro for a turn that starts in `state`; `may_call` is false when the rules do not
    /// offer a call now (then `Call` must not be chosen).
    fn choose(&mut self, state: State, may_call: bool, rng: &mut dyn RandomSource) -> Macro;

    /// A round ended (learners collect rewards here).
    fn round_end(&mut self, _seat: usize, _outcome: &RoundOutcome) {}

    /// The game ended.
    fn game_end(&mut self, _seat: usize, _standings: &[i64], _won: bool) {}

    /// The value of each macro in `state` (in [`Macro::ALL`] order), for explanations: `None`
    /// when the chooser has no values (a fixed rule).
    fn values(&self, _state: State) -> Option<[f64; 3]> {
        None
    }

    /// How it chooses, in words, for explanations.
    fn rule(&self) -> String {
        "chooses a macro per turn".into()
    }
}

/// An agent that plays a macro action per turn, chosen by `C`.
pub struct MacroAgent<C> {
    name: String,
    pub chooser: C,
    /// The macro chosen at this turn's call, for its discard.
    chosen: Option<Macro>,
    /// The macro of this turn, for its pick.
    playing: Macro,
    /// The state in which this turn's macro was chosen, and whether a call was offered then
    /// (for [`Agent::explain`]).
    chosen_in: State,
    call_offered: bool,
}

impl<C: Chooser> MacroAgent<C> {
    pub fn new(name: impl Into<String>, chooser: C) -> MacroAgent<C> {
        MacroAgent {
            name: name.into(),
            chooser,
            chosen: None,
            playing: Macro::GreedyDecrease,
            chosen_in: State {
                own: 1,
                opponent: 1,
                value: 1,
            },
            call_offered: false,
        }
    }

    /// The turn's macro, the state it was chosen in, its values there, and what each macro
    /// would do in this phase.
    fn explanation(&self, obs: &Observation<'_>) -> Explanation {
        let (m, state) = match obs.phase {
            Phase::Call => (self.chosen.unwrap_or(self.playing), State::of(obs)),
            _ => (self.playing, self.chosen_in),
        };
        let values = self.chooser.values(state);
        let offered: &[Macro] = match obs.phase {
            Phase::Call => &Macro::ALL,
            _ => &Macro::ALL[..2],
        };
        let mut candidates: Vec<Candidate> = offered
            .iter()
            .map(|&k| {
                let choice = match obs.phase {
                    Phase::Call => Choice::Call(k == Macro::Call),
                    Phase::Discard => Choice::Discard(macro_discard(obs, k)),
                    Phase::Pick => Choice::Pick(macro_pick(obs, k)),
                };
                let score = match values {
                    Some(v) => v[k.index()],
                    None => f64::from(u8::from(k == m)),
                };
                Candidate::new(choice, score).with("macro", k.index() as f64)
            })
            .collect();
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        let mut notes = vec![format!(
            "state: {} cards held, opponent {}, hand value {} (state {})",
            state.own,
            state.opponent,
            state.value,
            state.index()
        )];
        if let Some(v) = values {
            notes.push(format!(
                "values: {} {}, {} {}, {} {}{}",
                Macro::GreedyDecrease.name(),
                v[0],
                Macro::DelayCollect.name(),
                v[1],
                Macro::Call.name(),
                v[2],
                if self.call_offered {
                    ""
                } else {
                    " (a call was not offered)"
                }
            ));
        }
        let when = match obs.phase {
            Phase::Call => "chosen now",
            _ if self.call_offered => "chosen at this turn's call",
            _ => "chosen at this turn's discard",
        };
        notes.push(format!(
            "plays {} ({when}); {}; candidates are each macro's action now (detail macro: 0 {}, 1 {}, 2 {})",
            m.name(),
            self.chooser.rule(),
            Macro::NAMES[0],
            Macro::NAMES[1],
            Macro::NAMES[2]
        ));
        Explanation {
            score: if values.is_some() {
                "macro value"
            } else {
                "1 for the macro played"
            }
            .into(),
            candidates,
            notes,
        }
    }
}

impl<C: Chooser> Agent for MacroAgent<C> {
    fn name(&self) -> &str {
        &self.name
    }

    fn round_end(&mut self, seat: usize, outcome: &RoundOutcome) {
        self.chosen = None;
        self.chooser.round_end(seat, outcome);
    }

    fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
        self.chooser.game_end(seat, standings, won);
    }

    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        Some(self.explanation(obs))
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        let state = State::of(obs);
        let m = self.chooser.choose(state, true, rng);
        self.chosen = Some(m);
        (self.chosen_in, self.call_offered) = (state, true);
        Ok(m == Macro::Call)
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        let m = match self.chosen.take() {
            Some(m) => m,
            None => {
                let state = State::of(obs);
                (self.chosen_in, self.call_offered) = (state, false);
                self.chooser.choose(state, false, rng)
            }
        };
        self.playing = m;
        Ok(macro_discard(obs, m))
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        Ok(macro_pick(obs, self.playing))
    }
}

/// A learned policy: each state's value of each macro, and the macro it plays. Read from and
/// written to a CSV file with `#` lines of metadata first.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyTable {
    /// Per state (by [`State::index`]): the value of each macro, in [`Macro::ALL`] order.
    pub values: Vec<[f64; 3]>,
    /// Per state: the macro played when a call is offered (when it is not and this is
    /// `Call`, the better of the other two by `values`). Q-learning plays the best value
    /// ([`PolicyTable::play_greedy`]); value iteration keeps a macro until another is clearly
    /// better, so the two can differ in near-ties.
    pub actions: Vec<Macro>,
    /// Per state: how often it was met while learning (visits, or Monte-Carlo samples).
    pub visits: Vec<u64>,
    /// `key: value` lines: method, rules, scenario hash, ...
    pub meta: Vec<(String, String)>,
}

impl PolicyTable {
    pub const HEADER: &'static str = "own_cards,opponent_cards,hand_value,value_greedy_decrease,value_delay_collect,value_call,action,visits";

    pub fn new() -> PolicyTable {
        PolicyTable {
            values: vec![[0.0; 3]; STATES],
            actions: vec![Macro::GreedyDecrease; STATES],
            visits: vec![0; STATES],
            meta: Vec::new(),
        }
    }

    /// The macro played in state `i` (by [`State::index`]), `Call` left out when a call is
    /// not offered.
    #[inline]
    pub fn action(&self, i: usize, may_call: bool) -> Macro {
        match self.actions[i] {
            Macro::Call if !may_call => Macro::best(&self.values[i], false),
            a => a,
        }
    }

    /// Plays the best value in every state (ties: greedy-decrease, then delay-collect, then
    /// call).
    pub fn play_greedy(&mut self) {
        for (a, v) in self.actions.iter_mut().zip(&self.values) {
            *a = Macro::best(v, true);
        }
    }

    pub fn meta(&self, key: &str) -> &str {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }

    pub fn set_meta(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.meta.iter_mut().find(|(k, _)| k == key) {
            Some(m) => m.1 = value,
            None => self.meta.push((key.to_string(), value)),
        }
    }

    /// The table as CSV text (values in Rust's shortest round-trip form: reading gives back
    /// the same bits).
    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.meta {
            let _ = writeln!(s, "# {k}: {v}");
        }
        let _ = writeln!(s, "{}", PolicyTable::HEADER);
        for i in 0..STATES {
            let st = State::from_index(i);
            let v = &self.values[i];
            let _ = writeln!(
                s,
                "{},{},{},{:?},{:?},{:?},{},{}",
                st.own,
                st.opponent,
                st.value,
                v[0],
                v[1],
                v[2],
                self.actions[i].name(),
                self.visits[i]
            );
        }
        s
    }

    /// Writes the table whole (a temporary file renamed into place).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension(format!("csv.tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_csv())?;
        std::fs::rename(&tmp, path)
    }

    /// Reads a policy table; the error names the file, and the line where there is one.
    pub fn read(path: &Path) -> Result<PolicyTable, TableError> {
        let text = std::fs::read_to_string(path).map_err(|source| TableError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        PolicyTable::parse(&text).map_err(|error| TableError::Parse {
            path: path.to_path_buf(),
            error,
        })
    }

    pub fn parse(text: &str) -> Result<PolicyTable, ParseError> {
        let mut table = PolicyTable::new();
        let mut seen = vec![false; STATES];
        let mut header = false;
        for (n, line) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(m) = line.strip_prefix('#') {
                if let Some((k, v)) = m.split_once(':') {
                    table.set_meta(k.trim(), v.trim());
                }
                continue;
            }
            if !header {
                if line != PolicyTable::HEADER {
                    return Err(ParseError::Header { line: line_no });
                }
                header = true;
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 8 {
                return Err(ParseError::Fields {
                    line: line_no,
                    found: f.len(),
                });
            }
            let bad = |i: usize, expected: Expected| ParseError::Field {
                line: line_no,
                field: i + 1,
                expected,
                got: f[i].to_string(),
            };
            let int = |i: usize, lo: u64, hi: u64| -> Result<u64, ParseError> {
                f[i].parse::<u64>()
                    .ok()
                    .filter(|v| (lo..=hi).contains(v))
                    .ok_or_else(|| bad(i, Expected::Range(lo, hi)))
            };
            let state = State {
                own: int(0, 1, MAX_CARDS as u64)? as u8,
                opponent: int(1, 1, MAX_CARDS as u64)? as u8,
                value: int(2, 1, MAX_VALUE as u64)? as u8,
            };
            let i = state.index();
            if seen[i] {
                return Err(ParseError::Twice {
                    line: line_no,
                    state,
                });
            }
            seen[i] = true;
            for k in 0..3 {
                // A value is a number, or minus infinity (an action never tried). NaN or plus
                // infinity would make `Macro::best` choose by accident.
                table.values[i][k] = f[3 + k]
                    .parse::<f64>()
                    .ok()
                    .filter(|v| !v.is_nan() && *v != f64::INFINITY)
                    .ok_or_else(|| bad(3 + k, Expected::Value))?;
            }
            table.actions[i] = Macro::from_name(f[6]).ok_or_else(|| bad(6, Expected::Macro))?;
            table.visits[i] = int(7, 0, u64::MAX)?;
        }
        let missing = seen.iter().filter(|s| !**s).count();
        if missing > 0 {
            return Err(ParseError::Missing(missing));
        }
        Ok(table)
    }
}

/// Why a policy table cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Parse { path: PathBuf, error: ParseError },
}

/// What is wrong with a policy table's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("line {line}: expected the header `{}`", PolicyTable::HEADER)]
    Header { line: usize },
    #[error("line {line}: expected 8 fields, found {found}")]
    Fields { line: usize, found: usize },
    #[error("line {line}: field {field} must be {expected}, got `{got}`")]
    Field {
        line: usize,
        /// 1-based.
        field: usize,
        expected: Expected,
        got: String,
    },
    #[error("line {line}: state {state:?} given twice")]
    Twice { line: usize, state: State },
    #[error("{0} of the {STATES} states are missing (a policy lists every state)")]
    Missing(usize),
}

/// What a field of a policy table's line must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Expected {
    #[error("{0} to {1}")]
    Range(u64, u64),
    #[error("a number or -inf (an action never tried)")]
    Value,
    #[error("one of {}", Macro::NAMES.join(", "))]
    Macro,
}

impl Default for PolicyTable {
    fn default() -> Self {
        PolicyTable::new()
    }
}

/// Plays a policy table.
pub struct TableChooser(pub Arc<PolicyTable>);

impl Chooser for TableChooser {
    fn choose(&mut self, state: State, may_call: bool, _rng: &mut dyn RandomSource) -> Macro {
        self.0.action(state.index(), may_call)
    }

    fn values(&self, state: State) -> Option<[f64; 3]> {
        Some(self.0.values[state.index()])
    }

    fn rule(&self) -> String {
        let method = match self.0.meta("method") {
            "" => "a learned policy",
            m => m,
        };
        format!("the table's action for the state ({method})")
    }
}

/// Plays one macro at every turn, calling whenever its hand is worth `call_at` or less.
#[derive(Clone, Copy, Debug)]
pub struct FixedChooser {
    pub action: Macro,
    pub call_at: u32,
}

impl Chooser for FixedChooser {
    fn choose(&mut self, state: State, may_call: bool, _rng: &mut dyn RandomSource) -> Macro {
        if may_call && (self.action == Macro::Call || u32::from(state.value) <= self.call_at) {
            Macro::Call
        } else if self.action == Macro::Call {
            Macro::GreedyDecrease
        } else {
            self.action
        }
    }

    fn rule(&self) -> String {
        format!(
            "{} at every turn, calling when offered at a hand of {} or less",
            self.action.name(),
            self.call_at
        )
    }
}

/// Why the abstraction does not fit a table, if it does not: it is made for two players and
/// hands of at most five cards.
pub fn check_rules(rules: &Rules) -> Result<(), UnfitRules> {
    let v = rules.variant();
    if v.players != 2 || v.hand_size as usize > MAX_CARDS {
        return Err(UnfitRules {
            players: v.players,
            hand_size: v.hand_size,
        });
    }
    Ok(())
}

/// Rules the 1,600-state abstraction is not made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the 1,600-state abstraction is for two players and hands of at most {MAX_CARDS} cards; this table has {players} players and {hand_size}-card hands (use the `simplified-2p` preset)"
)]
pub struct UnfitRules {
    pub players: u8,
    pub hand_size: u8,
}

/// `tabular`: a policy table learned by `dhumbal-run train` (Q-learning or value iteration).
pub struct TabularFamily;

impl Family for TabularFamily {
    fn name(&self) -> &'static str {
        "tabular"
    }

    fn doc(&self) -> &'static str {
        "a two-player tabular policy over 1,600 states (Q-learning or value iteration, `dhumbal-run train`): plays the macro action of highest value"
    }

    fn params(&self) -> Vec<Param> {
        vec![Param::required(
            "policy",
            ParamType::Path,
            "the learned policy table (.csv), relative to the scenario file",
        )]
    }

    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
        let written = entry.text("policy");
        let path = cx.path(&written);
        if let Some(rules) = cx.rules()
            && let Err(e) = check_rules(rules)
        {
            cx.problem("kind", e.to_string());
            return None;
        }
        if !path.is_file() {
            if cx.planned(&path) {
                return Some(Arc::new(TabularRecipe {
                    written,
                    table: None,
                }));
            }
            cx.problem(
                "params.policy",
                format!(
                    "no policy at {}: learn one with `dhumbal-run train` (a `train:` section with `algorithm: q-learning` or `value-iteration` that writes this path), or fix the path",
                    path.display()
                ),
            );
            return None;
        }
        let table = match PolicyTable::read(&path) {
            Ok(t) => t,
            Err(e) => {
                cx.problem("params.policy", e.to_string());
                return None;
            }
        };
        let recipe = TabularRecipe {
            written,
            table: Some(Arc::new(table)),
        };
        fitting(cx, "params.policy", Arc::new(recipe))
    }
}

struct TabularRecipe {
    written: String,
    /// `None` while a planned policy is not learned yet.
    table: Option<Arc<PolicyTable>>,
}

impl TabularRecipe {
    fn check(&self, rules: &Rules) -> Result<(), String> {
        check_rules(rules).map_err(|e| e.to_string())?;
        let Some(t) = &self.table else {
            return Ok(());
        };
        if t.meta("rules") != rules_fingerprint(rules) {
            return Err(format!(
                "{} was learned under {}, and this table plays {}: learn one for these rules",
                self.written,
                match t.meta("rules_name") {
                    "" => "other rules",
                    n => n,
                },
                rules_name(rules)
            ));
        }
        Ok(())
    }
}

impl Recipe for TabularRecipe {
    fn family(&self) -> &'static str {
        "tabular"
    }

    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("kind".into(), Value::from("tabular"));
        let mut p = Map::new();
        p.insert("policy".into(), Value::from(self.written.clone()));
        m.insert("params".into(), Value::Object(p));
        m
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        match &self.table {
            Some(t) => Box::new(MacroAgent::new(id, TableChooser(t.clone()))),
            None => Box::new(PendingAgent {
                name: id.to_string(),
                message: format!(
                    "policy {} is not learned yet (run the scenario, which learns it first, or `dhumbal-run train`)",
                    self.written
                ),
            }),
        }
    }

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        self.check(rules).map(|()| None)
    }
}

/// `macro`: one of the plan's macro actions at every turn (the baselines of the plan).
pub struct MacroFamily;

impl Family for MacroFamily {
    fn name(&self) -> &'static str {
        "macro"
    }

    fn doc(&self) -> &'static str {
        "one of the tabular plan's three macro actions at every turn (greedy-decrease, delay-collect or call), calling at or below `call_at`"
    }

    fn params(&self) -> Vec<Param> {
        vec![
            Param::required(
                "action",
                ParamType::Choice(Macro::NAMES),
                "the macro played at every turn: greedy-decrease, delay-collect, or call (call at the first turn)",
            ),
            Param::new(
                "call_at",
                ParamType::Count,
                5,
                "call whenever the hand is worth this much or less (5: the simplified-2p threshold; 0: never call)",
            ),
        ]
    }

    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
        if let Some(rules) = cx.rules()
            && let Err(e) = check_rules(rules)
        {
            cx.problem("kind", e.to_string());
            return None;
        }
        let action = Macro::from_name(&entry.text("action"))?;
        Some(Arc::new(MacroRecipe(FixedChooser {
            action,
            call_at: entry.u32("call_at"),
        })))
    }
}

struct MacroRecipe(FixedChooser);

impl Recipe for MacroRecipe {
    fn family(&self) -> &'static str {
        "macro"
    }

    fn kind(&self) -> String {
        format!("macro:{}", self.0.action.name())
    }

    fn default_id(&self) -> String {
        self.0.action.name().to_string()
    }

    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("kind".into(), Value::from("macro"));
        let mut p = Map::new();
        p.insert("action".into(), Value::from(self.0.action.name()));
        p.insert("call_at".into(), Value::from(self.0.call_at));
        m.insert("params".into(), Value::Object(p));
        m
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        Box::new(MacroAgent::new(id, self.0))
    }

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        check_rules(rules).map_err(|e| e.to_string()).map(|()| None)
    }
}
