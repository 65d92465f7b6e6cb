//! Observation encodings: what a network sees of a decision, and the list of legal actions it
//! chooses among. Both are functions of the [`Observation`] alone (hidden hands are not in it;
//! `tests/learning.rs` swaps them and checks that nothing changes), and the same function
//! encodes in training and in play.
//!
//! Two encodings (docs/learning.md lists every field):
//! - `paper`: the paper's 117 features (section III-B, laid out as its `compete.py` did) and a
//!   fixed head of 128 outputs; output `i` scores the `i`-th legal action in the order below,
//!   and outputs past the legal actions are masked out (the paper mapped them back with
//!   `idx % len`, so several outputs meant one action).
//! - `cards` (the default): a richer state (public history: cards seen, cards opponents are
//!   known to hold, every opponent's hand size) and one feature row per legal action (the
//!   cards it moves and what it leaves), scored by one network per (state, action) pair as
//!   DouZero does. Nothing is discretised: every legal action can be chosen.
//!
//! The legal actions, in order: call phase `[no call, call]`; discard phase every legal
//! discard in the engine's order ([`dhumbal_game::discards::for_each_discard`]: singles, then
//! sets and runs); pick phase `[draw from the stock, each card on offer in pickable order]`.

use dhumbal_game::cards::{CARD_IDS, Card, CardSet, Discard, MAX_HAND};
use dhumbal_game::{AgentError, Observation, Phase, Pick};

/// One legal action: the game's [`Choice`](dhumbal_game::Choice), a decision's answer whichever
/// the phase.
pub use dhumbal_game::Choice as Action;

/// A legal action as the answer to the decision asked (the policy agents, the learner's
/// episodes and the Python tables answer with the action a network or a player chose).
pub trait Answer {
    /// The answer to a call decision.
    fn call(self) -> Result<bool, AgentError>;
    /// The answer to a discard decision.
    fn discard(self) -> Result<Discard, AgentError>;
    /// The answer to a pick decision.
    fn pick(self) -> Result<Pick, AgentError>;
}

// The encoding lists only the phase's own actions, so a mismatch never happens; it is an
// agent error rather than a panic all the same.
fn mismatch(action: Action, asked: &str) -> AgentError {
    AgentError(format!(
        "the encoding offered {action:?} when asked to {asked}"
    ))
}

impl Answer for Action {
    fn call(self) -> Result<bool, AgentError> {
        self.into_call().map_err(|other| mismatch(other, "call"))
    }

    fn discard(self) -> Result<Discard, AgentError> {
        self.into_discard()
            .map_err(|other| mismatch(other, "discard"))
    }

    fn pick(self) -> Result<Pick, AgentError> {
        self.into_pick().map_err(|other| mismatch(other, "pick"))
    }
}

/// Which encoding a network reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    Paper,
    Cards,
}

/// The paper's state width and action head.
pub const PAPER_STATE: usize = 117;
pub const PAPER_ACTIONS: usize = 128;
/// The `cards` encoding's widths.
pub const CARDS_STATE: usize = 250;
pub const CARDS_ACTION: usize = 64;
/// Opponents the `cards` state describes one by one (seats after the observer, in turn order).
const OPPONENTS: usize = 7;

impl Encoding {
    pub const NAMES: &'static [&'static str] = &["cards", "paper"];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Paper => "paper",
            Encoding::Cards => "cards",
        }
    }

    pub fn from_name(name: &str) -> Option<Encoding> {
        match name {
            "paper" => Some(Encoding::Paper),
            "cards" => Some(Encoding::Cards),
            _ => None,
        }
    }

    /// Width of the state vector.
    pub fn state_dim(self) -> usize {
        match self {
            Encoding::Paper => PAPER_STATE,
            Encoding::Cards => CARDS_STATE,
        }
    }

    /// Width of one action's feature row (0: actions are output positions instead).
    pub fn action_dim(self) -> usize {
        match self {
            Encoding::Paper => 0,
            Encoding::Cards => CARDS_ACTION,
        }
    }

    /// Input width of the scoring network.
    pub fn input_dim(self) -> usize {
        self.state_dim() + self.action_dim()
    }

    /// Outputs of the scoring network: one per action position (`paper`), or one score.
    pub fn outputs(self) -> usize {
        match self {
            Encoding::Paper => PAPER_ACTIONS,
            Encoding::Cards => 1,
        }
    }

    /// Most legal actions a decision can offer the network: `paper` can only tell 128 apart.
    pub fn max_actions(self) -> usize {
        match self {
            Encoding::Paper => PAPER_ACTIONS,
            Encoding::Cards => usize::MAX,
        }
    }

    /// Encodes a decision into `out` (buffers reused: no allocation once they have grown).
    pub fn encode(self, obs: &Observation<'_>, out: &mut Encoded) {
        out.clear(self);
        self.legal_actions(obs, &mut out.actions);
        self.encode_state(obs, &mut out.state);
        out.features
            .resize(out.actions.len() * self.action_dim(), 0.0);
        self.encode_actions(obs, &out.actions, &mut out.features);
    }

    /// The decision's legal actions as this encoding offers them ([`legal_actions`], at most
    /// [`Encoding::max_actions`]): the first part of [`Encoding::encode`].
    pub fn legal_actions(self, obs: &Observation<'_>, out: &mut Vec<Action>) {
        legal_actions(obs, out);
        out.truncate(self.max_actions());
    }

    /// The state vector into `x` ([`Encoding::state_dim`] values, zero on entry): the second
    /// part of [`Encoding::encode`], for callers that encode into buffers of their own.
    pub fn encode_state(self, obs: &Observation<'_>, x: &mut [f32]) {
        match self {
            Encoding::Paper => paper_state(obs, x),
            Encoding::Cards => cards_state(obs, x),
        }
    }

    /// Each action's feature row (`cards`; nothing for `paper`) into `f`, row by row
    /// (`actions.len() * action_dim` values, zero on entry): the last part of
    /// [`Encoding::encode`].
    pub fn encode_actions(self, obs: &Observation<'_>, actions: &[Action], f: &mut [f32]) {
        if self == Encoding::Cards {
            let dim = CARDS_ACTION;
            for (action, row) in actions.iter().zip(f.chunks_exact_mut(dim)) {
                cards_action(obs, action, row);
            }
        }
    }
}

/// One encoded decision: the state, the legal actions, and (for `cards`) each action's row.
#[derive(Clone, Debug, Default)]
pub struct Encoded {
    pub encoding: Option<Encoding>,
    pub state: Vec<f32>,
    pub actions: Vec<Action>,
    /// `actions.len() * action_dim` features, row by row (empty for `paper`).
    pub features: Vec<f32>,
}

impl Encoded {
    fn clear(&mut self, encoding: Encoding) {
        self.encoding = Some(encoding);
        self.state.clear();
        self.state.resize(encoding.state_dim(), 0.0);
        self.actions.clear();
        self.features.clear();
    }

    /// Action `i`'s feature row (`cards`).
    pub fn action_features(&self, i: usize) -> &[f32] {
        let dim = self.features.len() / self.actions.len().max(1);
        &self.features[i * dim..(i + 1) * dim]
    }
}

/// Every legal action of the decision, in the documented order.
pub fn legal_actions(obs: &Observation<'_>, out: &mut Vec<Action>) {
    out.clear();
    match obs.phase {
        Phase::Call => {
            out.push(Action::Call(false));
            out.push(Action::Call(true));
        }
        Phase::Discard => obs.for_each_legal_discard(|cards| {
            out.push(Action::Discard(
                Discard::from_slice(cards).expect("a discard fits a hand"),
            ));
            true
        }),
        Phase::Pick => {
            out.push(Action::Pick(Pick::Stock));
            out.extend(obs.pickable.iter().map(|&c| Action::Pick(Pick::Pile(c))));
        }
    }
}

/// The cards on offer: what may be taken now (pick phase), or the top set of the pile that
/// the previous player put down (call and discard phases).
fn on_offer<'a>(obs: &Observation<'a>) -> &'a [Card] {
    match obs.phase {
        Phase::Pick => obs.pickable,
        _ => &obs.pile[obs.pile.len().saturating_sub(obs.top_set)..],
    }
}

fn phase_index(phase: Phase) -> usize {
    match phase {
        Phase::Call => 0,
        Phase::Discard => 1,
        Phase::Pick => 2,
    }
}

/// The paper's 117 features (docs/learning.md has the table).
fn paper_state(obs: &Observation<'_>, x: &mut [f32]) {
    for c in obs.hand.iter().filter(|c| !c.is_joker()) {
        x[usize::from(c.id())] = 1.0;
    }
    for c in on_offer(obs).iter().filter(|c| !c.is_joker()) {
        x[52 + usize::from(c.id())] = 1.0;
    }
    if obs.seat < 2 {
        x[104 + obs.seat] = 1.0;
    }
    let opponents = || (0..obs.players()).filter(|&s| s != obs.seat && obs.active[s]);
    let n = opponents().count().max(1) as f32;
    x[106] = obs.hand_value as f32 / 65.0;
    x[107] = obs.turn as f32 / 100.0;
    x[108] = opponents()
        .map(|s| f32::from(obs.hand_sizes[s]))
        .sum::<f32>()
        / n
        / 5.0;
    x[109] = obs.standing(obs.seat) as f32 / 1e4;
    x[110] = opponents().map(|s| obs.standing(s) as f32).sum::<f32>() / n / 1e4;
    x[111] = obs.pile.len() as f32 / 52.0;
    x[112] = obs.round as f32 / 1024.0;
    x[113 + phase_index(obs.phase)] = 1.0;
    // x[116]: the paper's padding bit, always 0.
}

fn set_bits(x: &mut [f32], cards: impl IntoIterator<Item = Card>) {
    for c in cards {
        x[usize::from(c.id())] = 1.0;
    }
}

/// The `cards` state (docs/learning.md has the table).
fn cards_state(obs: &Observation<'_>, x: &mut [f32]) {
    let deck = CARD_IDS;
    set_bits(&mut x[..deck], obs.hand.iter());
    set_bits(&mut x[deck..2 * deck], on_offer(obs).iter().copied());
    set_bits(&mut x[2 * deck..3 * deck], obs.seen.iter());
    let mut known = CardSet::EMPTY;
    for (s, k) in obs.known.iter().enumerate() {
        if s != obs.seat {
            known = known.union(*k);
        }
    }
    set_bits(&mut x[3 * deck..4 * deck], known.iter());
    let base = 4 * deck; // 216
    x[base + phase_index(obs.phase)] = 1.0;
    x[base + 3] = obs.hand_value as f32 / 50.0;
    x[base + 4] = obs.call_threshold as f32 / 50.0;
    x[base + 5] = f32::from(u8::from(obs.hand_value <= obs.call_threshold));
    x[base + 6] = obs.hand.len() as f32 / MAX_HAND as f32;
    x[base + 7] = (obs.turn as f32 / 50.0).min(2.0);
    x[base + 8] = obs.stock_len as f32 / CARD_IDS as f32;
    x[base + 9] = obs.players() as f32 / 8.0;
    let players = obs.players();
    let opp = base + 10; // 226
    for k in 0..OPPONENTS.min(players - 1) {
        let s = (obs.seat + 1 + k) % players;
        let f = &mut x[opp + 3 * k..opp + 3 * k + 3];
        f[0] = f32::from(u8::from(obs.active[s]));
        f[1] = f32::from(obs.hand_sizes[s]) / MAX_HAND as f32;
        f[2] = obs.known[s].iter().map(|c| obs.value(c)).sum::<u32>() as f32 / 50.0;
    }
    let tail = opp + 3 * OPPONENTS; // 247
    let scale = |v: i64| (v as f32 / 100.0).clamp(-3.0, 3.0);
    x[tail] = scale(obs.standing(obs.seat));
    let others = || (0..players).filter(|&s| s != obs.seat && obs.active[s]);
    let count = others().count().max(1) as i64;
    x[tail + 1] = scale(others().map(|s| obs.standing(s)).sum::<i64>() / count);
    x[tail + 2] = f32::from(u8::from(obs.restocked.is_some()));
    debug_assert_eq!(tail + 3, CARDS_STATE);
}

/// One action's row of the `cards` encoding.
fn cards_action(obs: &Observation<'_>, action: &Action, f: &mut [f32]) {
    let deck = CARD_IDS;
    let hand_len = obs.hand.len() as f32;
    let value = obs.hand_value as f32;
    match *action {
        Action::Call(call) => {
            f[deck + usize::from(call)] = 1.0;
            f[deck + 6] = value / 50.0;
            f[deck + 7] = hand_len / MAX_HAND as f32;
        }
        Action::Discard(cards) => {
            set_bits(&mut f[..deck], cards.iter());
            let gone: u32 = cards.iter().map(|c| obs.value(c)).sum();
            f[deck + 2] = 1.0;
            f[deck + 5] = gone as f32 / 30.0;
            f[deck + 6] = (value - gone as f32) / 50.0;
            f[deck + 7] = (hand_len - cards.len() as f32) / MAX_HAND as f32;
            f[deck + 8] = cards.len() as f32 / 5.0;
            let run =
                cards.len() >= 2 && cards.iter().any(|c| c.rank() != cards.as_slice()[0].rank());
            f[deck + 9] = f32::from(u8::from(run));
        }
        Action::Pick(Pick::Stock) => {
            f[deck + 3] = 1.0;
            f[deck + 6] = value / 50.0;
            f[deck + 7] = (hand_len + 1.0) / MAX_HAND as f32;
        }
        Action::Pick(Pick::Pile(card)) => {
            f[usize::from(card.id())] = 1.0;
            f[deck + 4] = 1.0;
            f[deck + 5] = obs.value(card) as f32 / 30.0;
            f[deck + 6] = (value + obs.value(card) as f32) / 50.0;
            f[deck + 7] = (hand_len + 1.0) / MAX_HAND as f32;
            // Cards of the hand that share its rank: a set in the making.
            let same = obs
                .hand
                .iter()
                .filter(|c| c.rank() == card.rank() && !c.is_joker())
                .count();
            f[deck + 8] = same as f32 / 5.0;
        }
    }
}
