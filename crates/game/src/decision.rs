//! What an agent sees and what it answers.
//!
//! An agent decides three things on its turn: whether to call Jhyap, what to discard, and what
//! to take (the stock or a card from the pile). It decides from an [`Observation`]: its own
//! hand and public facts only. Hidden cards (other hands, the stock's order) are not reachable
//! from an observation.

use std::fmt;

use super::cards::{Card, CardSet, Discard, Hand};
use super::discards::{DiscardError, Runs, for_each_discard};
use super::round::{Event, RoundOutcome};
use super::rules::{Rules, Scoring};
use crate::rng::RandomSource;

/// Which decision is being asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Call,
    Discard,
    Pick,
}

/// One player's view of the game at a decision.
#[derive(Clone, Copy)]
pub struct Observation<'a> {
    pub rules: &'a Rules,
    pub phase: Phase,
    /// The observing player's seat.
    pub seat: usize,
    /// Its hand, in arrival order (after the discard in the pick phase).
    pub hand: &'a Hand,
    /// The value of `hand` (computed once by the engine).
    pub hand_value: u32,
    /// 1-based count of player-turns in this round, the current one included.
    pub turn: u32,
    /// Index of this round within the game or session.
    pub round: u32,
    pub starter: usize,
    /// Which seats are still in the game.
    pub active: &'a [bool],
    /// Cards held by each seat.
    pub hand_sizes: &'a [u8],
    /// Coins (coin scoring) or cumulative points (point scoring) of each seat before this round.
    pub standings: &'a [i64],
    /// The discard pile, bottom first, top last.
    pub pile: &'a [Card],
    /// Cards the observer may take from the pile now (pick phase only).
    pub pickable: &'a [Card],
    /// The cards it has just discarded (pick phase only), in the order they went down.
    pub discarded: &'a [Card],
    /// Cards publicly known to be in each seat's hand (it took them from the pile).
    pub known: &'a [CardSet],
    /// Every card that has been face up on the pile this round.
    pub seen: CardSet,
    /// Cards left in the stock.
    pub stock_len: usize,
    /// The call threshold now.
    pub call_threshold: u32,
    /// How many cards at the top of the pile form the previous player's discard (before this
    /// turn's discard goes down): public, and what the next pick may be taken from.
    pub top_set: usize,
    /// The cards the last reshuffle put into the stock, `None` before any reshuffle this round.
    /// Public (everyone saw the pile turned over), and it matters: after a reshuffle the stock
    /// holds only these cards, so every never-seen card is in somebody's hand.
    pub restocked: Option<CardSet>,
    /// Hidden information, filled by the engine only for a seat whose agent declares itself
    /// an `oracle` (the full-information upper bound). Empty for everyone else.
    pub oracle: Oracle<'a>,
}

/// Every seat's hand, handed to the observation so that an oracle search can see through the
/// hidden information. Only the engine builds a non-empty one, and only for a seat whose
/// agent says [`Agent::oracle`]: any other agent (scripts, user agents) reads an empty slice.
#[derive(Clone, Copy, Default)]
pub struct Oracle<'a> {
    hands: &'a [Hand],
}

impl<'a> Oracle<'a> {
    /// No hidden information.
    #[inline]
    pub fn none() -> Oracle<'static> {
        Oracle { hands: &[] }
    }

    /// A view of `hands`. Building one gives nothing away: an agent only ever reads the one
    /// in the observation the engine hands it (tests build their own to probe samplers).
    #[inline]
    pub fn new(hands: &'a [Hand]) -> Oracle<'a> {
        Oracle { hands }
    }

    /// The true hands of every seat, or an empty slice (not an oracle seat).
    #[inline]
    pub fn hands(&self) -> &'a [Hand] {
        self.hands
    }
}

impl Observation<'_> {
    #[inline]
    pub fn hand_value(&self) -> u32 {
        self.hand_value
    }

    #[inline]
    pub fn value(&self, card: Card) -> u32 {
        self.rules.value(card)
    }

    #[inline]
    pub fn players(&self) -> usize {
        self.active.len()
    }

    /// Whether a call now would be within the threshold.
    #[inline]
    pub fn may_call_safely(&self) -> bool {
        self.hand_value() <= self.call_threshold
    }

    #[inline]
    pub fn is_points(&self) -> bool {
        matches!(self.rules.variant().scoring, Scoring::Points(_))
    }

    /// How well a seat is doing, higher is better: coins, or minus points.
    #[inline]
    pub fn standing(&self, seat: usize) -> i64 {
        if self.is_points() {
            -self.standings[seat]
        } else {
            self.standings[seat]
        }
    }

    /// Calls `f` with every legal discard (see [`for_each_discard`] for the order).
    #[inline]
    pub fn for_each_legal_discard(&self, f: impl FnMut(&[Card]) -> bool) {
        for_each_discard(self.rules, self.hand.as_slice(), Runs::All, f);
    }

    /// Cards not in the observer's hand and never face up this round: they can only be in the
    /// stock or in other hands. (A reshuffled stock also holds seen cards.)
    #[inline]
    pub fn unseen(&self) -> CardSet {
        self.rules
            .deck_set()
            .difference(self.seen)
            .difference(self.hand.to_set())
    }
}

/// Where the card that ends a turn comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Stock,
    Pile(Card),
}

impl fmt::Display for Pick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pick::Stock => write!(f, "draw from the stock"),
            Pick::Pile(c) => write!(f, "take {c} from the pile"),
        }
    }
}

/// One decision's answer, whichever the phase: what a trace records and an explanation
/// scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Call Jhyap (`true`) or play on.
    Call(bool),
    Discard(Discard),
    Pick(Pick),
}

impl Choice {
    /// The answer to a call decision; the choice itself when it answers another phase, for
    /// the caller to say how that came about (the terminal's `Human` and the neural agents'
    /// `Answer`, whose answers are choices).
    pub fn into_call(self) -> Result<bool, Choice> {
        match self {
            Choice::Call(c) => Ok(c),
            other => Err(other),
        }
    }

    /// The answer to a discard decision, as [`Choice::into_call`].
    pub fn into_discard(self) -> Result<Discard, Choice> {
        match self {
            Choice::Discard(d) => Ok(d),
            other => Err(other),
        }
    }

    /// The answer to a pick decision, as [`Choice::into_call`].
    pub fn into_pick(self) -> Result<Pick, Choice> {
        match self {
            Choice::Pick(p) => Ok(p),
            other => Err(other),
        }
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choice::Call(true) => write!(f, "call"),
            Choice::Call(false) => write!(f, "play on"),
            Choice::Discard(d) => {
                f.write_str("discard")?;
                d.iter().try_for_each(|c| write!(f, " {c}"))
            }
            Choice::Pick(Pick::Stock) => write!(f, "draw"),
            Choice::Pick(Pick::Pile(c)) => write!(f, "take {c}"),
        }
    }
}

/// Why an agent chose what it chose: the candidates it weighed with their scores, and notes
/// (the rule that decided, whether it explored, what a script printed). Asked only by a trace,
/// through [`Agent::explain`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Explanation {
    /// What a candidate's `score` measures ("value shed", "visits", "Q-value", "probability").
    pub score: String,
    /// The candidates, in the order the agent ranks them (best first) where it ranks them.
    pub candidates: Vec<Candidate>,
    /// Anything else worth showing, one line each.
    pub notes: Vec<String>,
}

impl Explanation {
    /// The `score` of a search's explanation: each candidate's visits at the root. Imitation
    /// learns a searching teacher's choices from them (dhumbal-learn's `teacher_targets`).
    pub const VISITS: &'static str = "visits";
}

/// One candidate of an [`Explanation`].
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub choice: Choice,
    pub score: f64,
    /// Other numbers about it, named (a search's mean reward beside its visits).
    pub details: Vec<(String, f64)>,
}

impl Candidate {
    pub fn new(choice: Choice, score: f64) -> Candidate {
        Candidate {
            choice,
            score,
            details: Vec::new(),
        }
    }

    pub fn with(mut self, name: &str, value: f64) -> Candidate {
        self.details.push((name.to_string(), value));
        self
    }
}

/// An agent's own failure (a script error, a model that could not run).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

/// A player. One value per seat; it may keep state across decisions and rounds.
///
/// `rng` is this agent's own stream (or, when reproducing the paper, the single shared one):
/// use it for every random choice so that runs are reproducible.
pub trait Agent: Send {
    /// A name for messages and records.
    fn name(&self) -> &str;

    /// Whether this agent is a full-information oracle: the engine then lets it read every
    /// hand through [`Observation::oracle`]. Only built-in agents configured so say yes.
    fn oracle(&self) -> bool {
        false
    }

    // Lifecycle: every hook has a default that does nothing, so a stateless agent implements
    // none. The engine calls the round hooks (`Table::play_round`, never a search's
    // simulations); whoever plays a session or game calls the game hooks (the runner does).

    /// A session (coin scoring) or game (point scoring) begins, this agent at `seat`.
    fn game_start(&mut self, _seat: usize, _rules: &Rules) {}

    /// A round is about to be dealt, this agent at `seat`; `standings` are the table's
    /// coins or points before it.
    fn round_start(&mut self, _seat: usize, _standings: &[i64]) {}

    /// The round is settled. This agent's reward is `outcome.coin_delta[seat]` (coins) or
    /// `-outcome.points_delta[seat]` (points); not called when the round was abandoned on an
    /// error.
    fn round_end(&mut self, _seat: usize, _outcome: &RoundOutcome) {}

    /// The session or game is over: final `standings`, and whether this seat is its winner
    /// (`Table::leader`: most coins, or the last one standing; a tie goes to the lowest seat).
    /// Not called when the session or game was abandoned on an error.
    fn game_end(&mut self, _seat: usize, _standings: &[i64], _won: bool) {}

    /// Whether this agent wants to hear of every public event of its rounds through
    /// [`Agent::witness`]: an agent that infers the hidden hands from what the others did.
    /// Asked once per round; the default, `false`, costs a table nothing per turn.
    fn witnesses(&self) -> bool {
        false
    }

    /// A public event of the round this agent plays at `seat`, right after it happened: every
    /// seat's discards and picks (its own included) and reshuffles. `drawn` is the card this
    /// seat itself just drew from the stock, and `None` for every other event: a hidden card
    /// never reaches another seat. Only called when [`Agent::witnesses`] said so at the start
    /// of the round, and only by the engine's rounds at a table (never a search's
    /// simulations).
    fn witness(&mut self, _seat: usize, _event: &Event, _drawn: Option<Card>) {}

    /// Why the decision just made was made, asked right after it with the same observation
    /// by a trace, or by imitation's recorder when the agent is a teacher (dhumbal-learn's
    /// `Pupil`), and never otherwise (so explaining may cost what deciding does not). It
    /// must not draw randomness or change what the agent does next: a traced run's records
    /// equal an untraced run's. The default explains nothing.
    fn explain(&mut self, _obs: &Observation<'_>) -> Option<Explanation> {
        None
    }

    /// Only asked when a call is allowed: at the start of the turn, hand at or below the
    /// threshold (or any hand when the variant allows penalised over-threshold calls).
    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError>;

    /// The cards to discard, in the order they go onto the pile.
    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError>;

    /// [`Agent::discard`] written into `into`, which the engine asks instead (through
    /// [`Seats::discard_into`](crate::round::Seats::discard_into)). The default asks
    /// `discard` and copies its answer; an agent that builds its discard card by card may
    /// write it there directly, which spares reloading the cards' bytes as one wide word
    /// right after storing them one by one (a store-forwarding stall on every turn: 5% of
    /// the engine's time with the paper's heuristics). It must write what `discard` returns.
    #[inline]
    fn discard_into(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
        into: &mut Discard,
    ) -> Result<(), AgentError> {
        *into = self.discard(obs, rng)?;
        Ok(())
    }

    /// Take a card from `obs.pickable` or draw from the stock. Only asked when something is
    /// pickable; otherwise the player draws.
    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError>;
}

/// Inside `impl Agent for Wrapper`, implements [`Agent::oracle`], [`Agent::explain`] and every
/// lifecycle hook by
/// handing them to the wrapped agent in field `$inner`: a wrapper must pass them all on, or an
/// oracle seated through it would never see the hands and a learner behind it would never
/// hear of a reward.
#[macro_export]
macro_rules! pass_on_to {
    ($inner:ident) => {
        fn oracle(&self) -> bool {
            self.$inner.oracle()
        }

        fn game_start(&mut self, seat: usize, rules: &$crate::Rules) {
            self.$inner.game_start(seat, rules)
        }

        fn round_start(&mut self, seat: usize, standings: &[i64]) {
            self.$inner.round_start(seat, standings)
        }

        fn round_end(&mut self, seat: usize, outcome: &$crate::RoundOutcome) {
            self.$inner.round_end(seat, outcome)
        }

        fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
            self.$inner.game_end(seat, standings, won)
        }

        fn explain(
            &mut self,
            obs: &$crate::Observation<'_>,
        ) -> Option<$crate::decision::Explanation> {
            self.$inner.explain(obs)
        }

        fn witnesses(&self) -> bool {
            self.$inner.witnesses()
        }

        fn witness(
            &mut self,
            seat: usize,
            event: &$crate::round::Event,
            drawn: Option<$crate::cards::Card>,
        ) {
            self.$inner.witness(seat, event, drawn)
        }
    };
}

/// Inside `impl Agent for X`, implements [`Agent::call`], [`Agent::discard`] and [`Agent::pick`]
/// for an agent that answers every decision with a [`Choice`] through its own method
/// `$decide(&mut self, &Observation) -> Result<Choice, AgentError>` (a person at a terminal or
/// a page, a solved policy): the answer of the phase asked, or, for an answer of another
/// phase, the error `$mismatch(choice, phase asked)`.
#[macro_export]
macro_rules! answer_by {
    ($decide:ident, $mismatch:expr) => {
        fn call(
            &mut self,
            obs: &$crate::Observation<'_>,
            _rng: &mut dyn $crate::rng::RandomSource,
        ) -> ::std::result::Result<bool, $crate::AgentError> {
            self.$decide(obs)?
                .into_call()
                .map_err(|other| $mismatch(other, $crate::Phase::Call))
        }

        fn discard(
            &mut self,
            obs: &$crate::Observation<'_>,
            _rng: &mut dyn $crate::rng::RandomSource,
        ) -> ::std::result::Result<$crate::Discard, $crate::AgentError> {
            self.$decide(obs)?
                .into_discard()
                .map_err(|other| $mismatch(other, $crate::Phase::Discard))
        }

        fn pick(
            &mut self,
            obs: &$crate::Observation<'_>,
            _rng: &mut dyn $crate::rng::RandomSource,
        ) -> ::std::result::Result<$crate::Pick, $crate::AgentError> {
            self.$decide(obs)?
                .into_pick()
                .map_err(|other| $mismatch(other, $crate::Phase::Pick))
        }
    };
}

/// Implements [`Agent`] for a pointer type by handing every call to the agent it points to.
macro_rules! delegate_agent {
    ($(#[$doc:meta])* $ptr:ty) => {
        $(#[$doc])*
        impl<T: Agent + ?Sized> Agent for $ptr {
            fn name(&self) -> &str {
                (**self).name()
            }

            fn oracle(&self) -> bool {
                (**self).oracle()
            }

            fn game_start(&mut self, seat: usize, rules: &Rules) {
                (**self).game_start(seat, rules)
            }

            fn round_start(&mut self, seat: usize, standings: &[i64]) {
                (**self).round_start(seat, standings)
            }

            fn round_end(&mut self, seat: usize, outcome: &RoundOutcome) {
                (**self).round_end(seat, outcome)
            }

            fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
                (**self).game_end(seat, standings, won)
            }

            fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
                (**self).explain(obs)
            }

            fn witnesses(&self) -> bool {
                (**self).witnesses()
            }

            fn witness(&mut self, seat: usize, event: &Event, drawn: Option<Card>) {
                (**self).witness(seat, event, drawn)
            }

            fn call(
                &mut self,
                obs: &Observation<'_>,
                rng: &mut dyn RandomSource,
            ) -> Result<bool, AgentError> {
                (**self).call(obs, rng)
            }

            fn discard(
                &mut self,
                obs: &Observation<'_>,
                rng: &mut dyn RandomSource,
            ) -> Result<Discard, AgentError> {
                (**self).discard(obs, rng)
            }

            fn discard_into(
                &mut self,
                obs: &Observation<'_>,
                rng: &mut dyn RandomSource,
                into: &mut Discard,
            ) -> Result<(), AgentError> {
                (**self).discard_into(obs, rng, into)
            }

            fn pick(
                &mut self,
                obs: &Observation<'_>,
                rng: &mut dyn RandomSource,
            ) -> Result<Pick, AgentError> {
                (**self).pick(obs, rng)
            }
        }
    };
}

delegate_agent!(
    /// A boxed agent is an agent, so tables can hold `Box<dyn Agent>` or any wrapper.
    Box<T>
);
delegate_agent!(
    /// A borrowed agent is an agent (a benchmark keeps its own and lends it to the table).
    &mut T
);

/// An action the engine refused; it was not applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    #[error(
        "agent '{agent}' (seat {seat}) tried to discard {cards}: {reason}; the discard was refused"
    )]
    IllegalDiscard {
        agent: String,
        seat: usize,
        cards: String,
        reason: DiscardError,
    },
    #[error(
        "agent '{agent}' (seat {seat}) tried to {pick}, which is not on offer (pickable: {offered}); refused"
    )]
    IllegalPick {
        agent: String,
        seat: usize,
        pick: Pick,
        offered: String,
    },
    #[error("agent '{agent}' (seat {seat}) failed: {error}")]
    Agent {
        agent: String,
        seat: usize,
        error: AgentError,
    },
}
