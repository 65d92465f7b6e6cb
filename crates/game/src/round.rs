//! The engine: a [`Table`] (what carries over between rounds) plays one round at a time.
//!
//! A round is: shuffle, deal, turn up one card, then player-turns until someone calls, empties
//! their hand, the turn limit passes or the stock is exhausted; then the showdown and the
//! settlement. Every state lives in fixed-size arrays, so a round allocates nothing, and every
//! action an agent proposes is checked before it is applied.

use super::cards::{Card, CardSet, CardVec, Discard, Hand, MAX_HAND, Pile};
use super::decision::{Agent, AgentError, Observation, Oracle, Phase, Pick, PlayError};
use super::discards::{DiscardKind, classify, sort_run};
use super::rules::{
    CallRules, Elimination, EmptyHand, FailedCallOthers, MAX_PLAYERS, NoCallEnd, OverCall,
    PickRule, Rules, Scoring, SetPick, Starter, StockRule, TieBreak,
};
use crate::rng::{RandomSource, Streams};

/// Why a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// A player called Jhyap.
    Call,
    /// A discard emptied a hand (settled as that player's call).
    EmptyHand,
    /// The turn limit was reached.
    TurnLimit,
    /// The stock ran out and could not be rebuilt.
    StockExhausted,
    /// A simulation was cut short (a search's rollout cap); settled as if the lowest hand won
    /// a showdown nobody called. Never happens in a tournament round.
    Horizon,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Call => "call",
            EndReason::EmptyHand => "empty_hand",
            EndReason::TurnLimit => "turn_limit",
            EndReason::StockExhausted => "stock_exhausted",
            EndReason::Horizon => "horizon",
        }
    }

    /// The reason [`EndReason::as_str`] names `name`.
    pub fn from_name(name: &str) -> Option<EndReason> {
        match name {
            "call" => Some(EndReason::Call),
            "empty_hand" => Some(EndReason::EmptyHand),
            "turn_limit" => Some(EndReason::TurnLimit),
            "stock_exhausted" => Some(EndReason::StockExhausted),
            "horizon" => Some(EndReason::Horizon),
            _ => None,
        }
    }
}

/// Everything a round produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundOutcome {
    /// Round index within the game or session.
    pub round: u32,
    /// Seats at the table (active or not).
    pub seats: usize,
    /// Seats that played this round.
    pub active: [bool; MAX_PLAYERS],
    pub starter: usize,
    pub end: EndReason,
    /// Who called: the player who called or emptied their hand, or, with
    /// [`NoCallEnd::FirstMinimumCalls`], the seat treated as the caller.
    pub caller: Option<usize>,
    /// Whether the caller won.
    pub call_success: bool,
    pub winner: Option<usize>,
    pub hand_values: [u32; MAX_PLAYERS],
    /// Coin change per seat (coin scoring; zero-sum).
    pub coin_delta: [i64; MAX_PLAYERS],
    /// Points added per seat (point scoring; never negative).
    pub points_delta: [i64; MAX_PLAYERS],
    /// Player-turns played, the last one included.
    pub turns: u32,
    pub cards_discarded: [u16; MAX_PLAYERS],
    pub pile_picks: [u16; MAX_PLAYERS],
    /// Decisions asked of each seat's agent.
    pub decisions: [u16; MAX_PLAYERS],
    pub reshuffles: u16,
    pub final_hands: [Hand; MAX_PLAYERS],
    /// Seats eliminated by this round (point scoring).
    pub eliminated: [bool; MAX_PLAYERS],
}

/// Something that happened, for observers (traces, invariant checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Dealt,
    Called { seat: usize },
    Discarded { seat: usize, cards: Discard },
    Took { seat: usize, pick: Pick },
    Reshuffled,
    Ended,
}

/// Watches a round; called after each event with the state as it then is.
pub trait Observer {
    fn event(&mut self, _state: &RoundState, _event: &Event) {}
}

impl Observer for () {}

/// Two observers of one round, each told every event in turn (a trace and a person's log).
impl<A: Observer, B: Observer> Observer for (A, B) {
    fn event(&mut self, state: &RoundState, event: &Event) {
        self.0.event(state, event);
        self.1.event(state, event);
    }
}

/// Who plays a round's seats: a slice of agents, one per seat, or one object that answers for
/// every seat (a search agent's simulations, where the tree decides for all players).
pub trait Seats {
    fn name(&self, seat: usize) -> &str;
    fn call(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError>;
    fn discard(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError>;
    /// [`Seats::discard`] written into `into`, which the engine asks instead: a seat that can
    /// write its discard in place spares the engine the copy out of the returned `Result`,
    /// whose bytes were stored and reloaded in different widths (a store-forwarding stall on
    /// every simulated turn of a search).
    #[inline]
    fn discard_into(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
        into: &mut Discard,
    ) -> Result<(), AgentError> {
        *into = self.discard(seat, obs, rng)?;
        Ok(())
    }
    fn pick(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError>;
    /// Asked before every player-turn: `true` ends the round there as
    /// [`EndReason::Horizon`]. Agents at a table never stop a round.
    #[inline]
    fn stop(&mut self, _turn: u32) -> bool {
        false
    }
    /// Whether the discards of `seat` come from the legal-move enumerator itself (a search's
    /// tree and its uniformly random rollouts), in its order (runs ascending), so that checking
    /// them again can be skipped. Checked anyway in debug builds.
    #[inline]
    fn enumerated(&self, _seat: usize) -> bool {
        false
    }
    /// Whether `seat` may read the true hands through [`Observation::oracle`].
    #[inline]
    fn oracle(&self, _seat: usize) -> bool {
        false
    }
    /// Whether any seat hears of the round's public events through [`Seats::witness`]. Asked
    /// once per round, at its first turn (or the turn a simulation enters).
    #[inline]
    fn witnessing(&self) -> bool {
        false
    }
    /// A public event (a discard, a pick, a reshuffle) with the state right after it, for the
    /// seats that witness; asked only when [`Seats::witnessing`] said so, and never in the
    /// turns of seats that [glance](Seats::glances).
    #[inline]
    fn witness(&mut self, _state: &RoundState, _event: &Event) {}
    /// Whether, from the turn about to start to the end of the round, every seat discards and
    /// picks from a [`Glance`] alone (a search's rollouts): then the engine asks
    /// [`Seats::glance_discard`] and [`Seats::glance_pick`] instead of building an
    /// [`Observation`] for each (calls are still asked with one). Asked at the start of every
    /// turn until it says `true`, and never again that round.
    #[inline]
    fn glances(&self) -> bool {
        false
    }
    /// [`Seats::discard_into`] from a glance; asked only of seats that [glance](Seats::glances).
    #[inline]
    fn glance_discard(
        &mut self,
        _glance: &Glance<'_>,
        _into: &mut Discard,
    ) -> Result<(), AgentError> {
        Err(AgentError(
            "asked to discard from a glance, which it does not read".into(),
        ))
    }
    /// [`Seats::pick`] from a glance; asked only of seats that [glance](Seats::glances).
    #[inline]
    fn glance_pick(&mut self, _glance: &Glance<'_>) -> Result<Pick, AgentError> {
        Err(AgentError(
            "asked to pick from a glance, which it does not read".into(),
        ))
    }
}

/// What a seat's discard and pick read of an [`Observation`] when its seats
/// [glance](Seats::glances): its own hand and the rules, no public record of the round.
#[derive(Clone, Copy)]
pub struct Glance<'a> {
    pub rules: &'a Rules,
    pub seat: usize,
    /// The seat's hand in arrival order (after the discard, to pick).
    pub hand: &'a Hand,
    /// The value of `hand`.
    pub hand_value: u32,
    /// The call threshold now.
    pub call_threshold: u32,
    /// The cards it may take from the pile (to pick; empty to discard).
    pub pickable: &'a [Card],
}

impl<A: Agent> Seats for [A] {
    #[inline]
    fn name(&self, seat: usize) -> &str {
        self[seat].name()
    }
    #[inline]
    fn call(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        self[seat].call(obs, rng)
    }
    #[inline]
    fn discard(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        self[seat].discard(obs, rng)
    }
    #[inline]
    fn discard_into(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
        into: &mut Discard,
    ) -> Result<(), AgentError> {
        self[seat].discard_into(obs, rng, into)
    }
    #[inline]
    fn pick(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        self[seat].pick(obs, rng)
    }
    #[inline]
    fn oracle(&self, seat: usize) -> bool {
        self[seat].oracle()
    }
    fn witnessing(&self) -> bool {
        self.iter().any(|a| a.witnesses())
    }
    /// Each witnessing agent hears the event; the one whose own stock draw it is, the card.
    fn witness(&mut self, state: &RoundState, event: &Event) {
        for (seat, agent) in self.iter_mut().enumerate() {
            if !agent.witnesses() {
                continue;
            }
            let drawn = match *event {
                Event::Took {
                    seat: s,
                    pick: Pick::Stock,
                } if s == seat => state.hands[seat].last(),
                _ => None,
            };
            agent.witness(seat, event, drawn);
        }
    }
}

/// Where a simulated round picks up: the decision the seat to move faces.
#[derive(Clone, Copy, Debug)]
pub enum Resume<'a> {
    /// The start of its turn (the turn already counted in the state).
    Call,
    /// It declined to call (or could not) and now discards.
    Discard,
    /// It has discarded `discarded` (already on the pile) and may take one of `pickable`.
    Pick {
        discarded: &'a [Card],
        pickable: &'a [Card],
    },
}

/// The state of a round in play. Observers and tests read it; only the engine changes it.
/// The default is an empty table (no cards anywhere): storage for a round to be written into.
#[derive(Clone, Debug, Default)]
pub struct RoundState {
    pub(crate) stock: Pile,
    pub(crate) pile: Pile,
    pub(crate) hands: [Hand; MAX_PLAYERS],
    pub(crate) hand_sizes: [u8; MAX_PLAYERS],
    pub(crate) known: [CardSet; MAX_PLAYERS],
    pub(crate) seen: CardSet,
    /// How many cards at the top of the pile form the last discarded set.
    pub(crate) top_set: usize,
    pub(crate) turn: u32,
    /// The cards the last reshuffle put into the stock (public); `None` before any.
    pub(crate) restocked: Option<CardSet>,
}

impl RoundState {
    /// A world as an observer can imagine it: the public facts of `obs` (pile, hand sizes,
    /// cards known to be in hands, cards seen, the turn, what a reshuffle restocked) with the
    /// hidden parts given: the stock in order and every hand. How a search samples the worlds
    /// it simulates; whether they fit the observation is the sampler's to check.
    pub fn imagined(obs: &Observation<'_>, stock: Pile, hands: [Hand; MAX_PLAYERS]) -> RoundState {
        let n = obs.players();
        let mut hand_sizes = [0u8; MAX_PLAYERS];
        hand_sizes[..n].copy_from_slice(&obs.hand_sizes[..n]);
        let mut known = [CardSet::EMPTY; MAX_PLAYERS];
        known[..n].copy_from_slice(&obs.known[..n]);
        RoundState {
            stock,
            pile: Pile::from_slice(obs.pile).expect("a pile fits the deck"),
            hands,
            hand_sizes,
            known,
            seen: obs.seen,
            top_set: obs.top_set,
            turn: obs.turn,
            restocked: obs.restocked,
        }
    }

    /// A round just dealt, at the start of its first turn (counted, as [`Table::play_from`]
    /// with [`Resume::Call`] expects): every hand as given (seats past the table's hold
    /// none), the stock in order (its last card is drawn first) and, with the rules' face-up
    /// card, `face_up` alone on the pile. How a search that infers the hidden hands replays a
    /// round from a deal it imagined; whether the cards make a deck is the caller's to check.
    pub fn from_parts(
        hands: [Hand; MAX_PLAYERS],
        stock: Pile,
        face_up: Option<Card>,
    ) -> RoundState {
        let mut hand_sizes = [0u8; MAX_PLAYERS];
        for (size, hand) in hand_sizes.iter_mut().zip(&hands) {
            *size = hand.len() as u8;
        }
        let mut state = RoundState {
            stock,
            hands,
            hand_sizes,
            turn: 1,
            ..RoundState::default()
        };
        if let Some(card) = face_up {
            state.pile.push(card);
            state.seen.insert(card);
            state.top_set = 1;
        }
        state
    }

    /// The round the engine deals at `table` when its shuffle leaves the deck in `order`
    /// (the stock bottom first: the hands are dealt from its end, one card to each seat in play
    /// in turn, then the face-up card), at the start of the first turn, counted as
    /// [`Resume::Call`] expects: `table.play_from(&mut state, starter, starter, Resume::Call,
    /// ..)` then plays the round that [`Table::play_round`] plays after that shuffle with
    /// `starter` to start. How an exact solver enumerates the deals. `None` unless `order` is
    /// an arrangement of the deck.
    pub fn dealt(table: &Table, order: &[Card]) -> Option<RoundState> {
        let deck = table.rules.deck();
        let cards: CardSet = order.iter().copied().collect();
        if order.len() != deck.len() || cards != table.rules.deck_set() {
            return None;
        }
        let mut state = RoundState {
            stock: Pile::from_slice(order)?,
            ..RoundState::default()
        };
        RoundPlay::deal_cards(table, &mut state);
        state.turn = 1;
        Some(state)
    }

    /// The stock and every hand, to be dealt into: how a sampler fills in the hidden parts of
    /// a world from [`RoundState::imagined`] in place. Whether they fit the observation is the
    /// sampler's to check, as for `imagined`.
    pub fn hidden_mut(&mut self) -> (&mut Pile, &mut [Hand; MAX_PLAYERS]) {
        (&mut self.stock, &mut self.hands)
    }

    pub fn stock(&self) -> &Pile {
        &self.stock
    }
    pub fn pile(&self) -> &Pile {
        &self.pile
    }
    pub fn hand(&self, seat: usize) -> &Hand {
        &self.hands[seat]
    }
    pub fn known(&self, seat: usize) -> CardSet {
        self.known[seat]
    }
    pub fn turn(&self) -> u32 {
        self.turn
    }
}

/// What carries over from round to round: standings, who is still in, who starts next.
#[derive(Clone, Debug)]
pub struct Table {
    rules: Rules,
    standings: [i64; MAX_PLAYERS],
    active: [bool; MAX_PLAYERS],
    round: u32,
    last_starter: Option<usize>,
    last_winner: Option<usize>,
    last_loser: Option<usize>,
    /// Seats that played the last round (for the winner of a game everyone left lost at once).
    last_active: [bool; MAX_PLAYERS],
}

impl Table {
    pub fn new(rules: Rules) -> Table {
        let n = rules.players();
        let start = match rules.variant().scoring {
            Scoring::Coins(c) => c.starting_coins,
            Scoring::Points(_) => 0,
        };
        let mut standings = [0; MAX_PLAYERS];
        let mut active = [false; MAX_PLAYERS];
        for seat in 0..n {
            standings[seat] = start;
            active[seat] = true;
        }
        Table {
            rules,
            standings,
            active,
            round: 0,
            last_starter: None,
            last_winner: None,
            last_loser: None,
            last_active: active,
        }
    }

    /// A table as an observer sees it mid-session (for simulations): standings, who is in,
    /// the round's index. What decides later starters is not needed to finish a round.
    pub fn from_parts(rules: Rules, standings: &[i64], active: &[bool], round: u32) -> Table {
        let mut table = Table::new(rules);
        let n = table.rules.players();
        table.standings[..n].copy_from_slice(&standings[..n]);
        table.active[..n].copy_from_slice(&active[..n]);
        table.last_active = table.active;
        table.round = round;
        table
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Coins or cumulative points per seat.
    pub fn standings(&self) -> &[i64] {
        &self.standings[..self.rules.players()]
    }

    pub fn active(&self) -> &[bool] {
        &self.active[..self.rules.players()]
    }

    pub fn rounds_played(&self) -> u32 {
        self.round
    }

    /// Point games end when one player (or none) is left, or at the round cap. Coin sessions
    /// never end by themselves: the caller decides how many rounds to play.
    pub fn game_over(&self) -> bool {
        match self.rules.variant().scoring {
            Scoring::Coins(_) => false,
            Scoring::Points(p) => {
                self.active().iter().filter(|&&a| a).count() <= 1 || self.round >= p.max_rounds
            }
        }
    }

    /// The best seat so far: most coins, or, in point games, the last one standing (else the
    /// fewest points among those who lasted longest). Ties go to the lowest seat.
    pub fn leader(&self) -> usize {
        let n = self.rules.players();
        let survivors: Vec<usize> = (0..n).filter(|&s| self.active[s]).collect();
        let pool: Vec<usize> = if survivors.is_empty() {
            // Everyone left went out in the same round: the best of those who played it.
            (0..n).filter(|&s| self.last_active[s]).collect()
        } else {
            survivors
        };
        let key = |s: usize| match self.rules.variant().scoring {
            Scoring::Coins(_) => -self.standings[s],
            Scoring::Points(_) => self.standings[s],
        };
        *pool
            .iter()
            .min_by_key(|&&s| (key(s), s))
            .expect("a table has seats")
    }

    /// Tells every seat's agent that a session or game begins at this table
    /// ([`Agent::game_start`]). Whoever plays sessions calls it before the first round.
    pub fn start_game<A: Agent>(&self, agents: &mut [A]) {
        for (seat, agent) in agents.iter_mut().enumerate() {
            agent.game_start(seat, &self.rules);
        }
    }

    /// Tells every seat's agent that the session or game is over ([`Agent::game_end`]): the
    /// final standings, and whether it is the [`Table::leader`].
    pub fn end_game<A: Agent>(&self, agents: &mut [A]) {
        let leader = self.leader();
        for (seat, agent) in agents.iter_mut().enumerate() {
            agent.game_end(seat, self.standings(), seat == leader);
        }
    }

    /// Plays one round. `agents[seat]` plays seat `seat`.
    ///
    /// On an illegal action the round is abandoned with an error and nothing is applied to the
    /// table: standings stay as they were.
    pub fn play_round<A: Agent>(
        &mut self,
        agents: &mut [A],
        streams: &mut dyn Streams,
        observer: &mut impl Observer,
    ) -> Result<RoundOutcome, PlayError> {
        assert_eq!(agents.len(), self.rules.players(), "one agent per seat");
        let n = self.rules.players();
        for seat in (0..n).filter(|&s| self.active[s]) {
            agents[seat].round_start(seat, &self.standings[..n]);
        }
        // The result handed on as it came, not unwrapped and wrapped again: an outcome is some
        // 700 bytes, and each move of it was a copy (2-3% of a run's samples in `memmove`).
        let played = self.play_round_with(agents, streams, observer);
        if let Ok(outcome) = &played {
            for seat in (0..n).filter(|&s| outcome.active[s]) {
                agents[seat].round_end(seat, outcome);
            }
        }
        played
    }

    /// Plays one round with `seats` deciding for every seat, as [`Table::play_round`] does but
    /// without the agents' `round_start` and `round_end` notices, which are the caller's: how a
    /// driver that is not a set of [`Agent`]s (a Python environment waiting for its player's
    /// action) plays the engine's own rounds.
    pub fn play_round_with<S: Seats + ?Sized>(
        &mut self,
        seats: &mut S,
        streams: &mut dyn Streams,
        observer: &mut impl Observer,
    ) -> Result<RoundOutcome, PlayError> {
        let mut state = RoundState::default();
        let starter = RoundPlay::deal(self, streams, &mut state);
        let played = RoundPlay::start(self, &mut state, starter).run(seats, streams, observer);
        if let Ok(outcome) = &played {
            self.apply(outcome);
        }
        played
    }

    /// Plays the rest of a round from `state`, with `seat` to move at `at`, and returns how it
    /// ended without applying it to the table. This is how a search agent simulates a
    /// determinized world with the engine's own rules. The round is played in `state` itself
    /// (left as the round ended), so that a search reuses one state for all its simulations
    /// instead of moving a world of some 300 bytes into each.
    #[allow(clippy::too_many_arguments)]
    pub fn play_from<S: Seats + ?Sized>(
        &self,
        state: &mut RoundState,
        starter: usize,
        seat: usize,
        at: Resume<'_>,
        seats: &mut S,
        streams: &mut dyn Streams,
    ) -> Result<RoundOutcome, PlayError> {
        let mut play = RoundPlay::start(self, state, starter);
        let stop = play.turns(seat, Some(at), seats, streams, &mut ())?;
        Ok(play.settle(stop))
    }

    fn apply(&mut self, o: &RoundOutcome) {
        let n = self.rules.players();
        for seat in 0..n {
            self.standings[seat] += o.coin_delta[seat] + o.points_delta[seat];
            if o.eliminated[seat] {
                self.active[seat] = false;
            }
        }
        self.round += 1;
        self.last_active = o.active;
        self.last_starter = Some(o.starter);
        self.last_winner = o.winner;
        // The biggest loser: most coins paid, or most points taken; lowest seat on ties.
        let loss = |s: usize| o.points_delta[s] - o.coin_delta[s];
        self.last_loser = (0..n)
            .filter(|&s| o.active[s])
            .max_by_key(|&s| (loss(s), std::cmp::Reverse(s)));
    }

    #[inline]
    fn next_active(&self, seat: usize) -> usize {
        let n = self.rules.players();
        let mut s = seat;
        loop {
            // Not `% n`: an integer division per turn shows in profiles.
            s = if s + 1 == n { 0 } else { s + 1 };
            if self.active[s] {
                return s;
            }
        }
    }
}

/// One round in progress, played in a state its caller holds.
struct RoundPlay<'t, 's> {
    table: &'t Table,
    state: &'s mut RoundState,
    n: usize,
    /// The table's seats in play and standings, cut to the `n` seats once (every observation
    /// shows them).
    active: &'t [bool],
    standings: &'t [i64],
    threshold: u32,
    starter: usize,
    cards_discarded: [u16; MAX_PLAYERS],
    pile_picks: [u16; MAX_PLAYERS],
    decisions: [u16; MAX_PLAYERS],
    reshuffles: u16,
    /// Each seat's hand value, kept up to date as cards move (summing the hand every turn
    /// showed in profiles).
    values: [u32; MAX_PLAYERS],
}

/// How the turn loop stopped.
enum Stop {
    Call(usize),
    EmptyHand(usize),
    TurnLimit,
    StockExhausted,
    Horizon,
}

impl<'t, 's> RoundPlay<'t, 's> {
    /// A new round's deal at `table`: the shuffled deck dealt, the first card turned up, and
    /// the seat that starts.
    /// Written into `state` (a fresh one), not returned: a state is some 600 bytes, and
    /// returning it was a copy per round.
    fn deal(table: &Table, streams: &mut dyn Streams, state: &mut RoundState) -> usize {
        let rules = &table.rules;
        let v = rules.variant();
        let n = rules.players();
        state.stock = Pile::from_slice(rules.deck()).expect("deck fits");
        let rng = streams.deal();
        rng.shuffle(state.stock.as_mut_slice());
        let active_seats = || (0..n).filter(|&s| table.active[s]);
        let n_active = active_seats().count();
        let first_round = table.round == 0;
        let starter = if v.starter == Starter::Random || (first_round && v.random_first_starter) {
            active_seats()
                .nth(rng.below(n_active as u32) as usize)
                .expect("an active seat")
        } else {
            // With no usable winner or loser (a void round, a player just eliminated), the turn
            // passes on from the previous starter rather than falling back to seat 0.
            let fallback = match (v.starter, table.last_starter) {
                (Starter::Winner | Starter::Loser, Some(prev)) => table.next_active(prev),
                _ => active_seats().next().expect("an active seat"),
            };
            let pick = match v.starter {
                Starter::Seat0 | Starter::Random => None,
                Starter::Rotate => table.last_starter.map(|s| table.next_active(s)),
                Starter::Winner => table.last_winner,
                Starter::Loser => table.last_loser,
            };
            pick.filter(|&s| table.active[s]).unwrap_or(fallback)
        };
        Self::deal_cards(table, state);
        starter
    }

    /// Deals the hands from the end of the shuffled stock in `state` (one card to each seat in
    /// play in turn, `hand_size` times), then turns up the first card.
    #[inline]
    fn deal_cards(table: &Table, state: &mut RoundState) {
        let v = table.rules.variant();
        let n = table.rules.players();
        for _ in 0..v.hand_size {
            for seat in (0..n).filter(|&s| table.active[s]) {
                let card = state.stock.pop().expect("validated: the deck deals");
                state.hands[seat].push(card);
            }
        }
        for seat in 0..n {
            state.hand_sizes[seat] = state.hands[seat].len() as u8;
        }
        if v.initial_discard {
            let card = state.stock.pop().expect("validated: the deck deals");
            state.pile.push(card);
            state.seen.insert(card);
            state.top_set = 1;
        }
    }

    /// A round to be played from `state` (dealt, or a search agent's world): counters at zero,
    /// each hand's value summed once (the turns keep it up to date).
    #[inline]
    fn start(table: &'t Table, state: &'s mut RoundState, starter: usize) -> RoundPlay<'t, 's> {
        let rules = &table.rules;
        let n = rules.players();
        let n_active = table.active().iter().filter(|&&a| a).count();
        let mut values = [0; MAX_PLAYERS];
        for (value, hand) in values.iter_mut().zip(&state.hands[..n]) {
            *value = rules.hand_value(hand.as_slice());
        }
        RoundPlay {
            table,
            state,
            n,
            active: &table.active[..n],
            standings: &table.standings[..n],
            threshold: rules.call_threshold(n_active),
            starter,
            cards_discarded: [0; MAX_PLAYERS],
            pile_picks: [0; MAX_PLAYERS],
            decisions: [0; MAX_PLAYERS],
            reshuffles: 0,
            values,
        }
    }

    #[inline]
    fn observation<'a>(
        &'a self,
        phase: Phase,
        seat: usize,
        pickable: &'a [super::cards::Card],
        discarded: &'a [super::cards::Card],
        hand_value: u32,
        oracle: Oracle<'a>,
    ) -> Observation<'a> {
        let t = self.table;
        Observation {
            rules: &t.rules,
            phase,
            seat,
            hand: &self.state.hands[seat],
            hand_value,
            turn: self.state.turn,
            round: t.round,
            starter: self.starter,
            active: self.active,
            hand_sizes: &self.state.hand_sizes[..self.n],
            standings: self.standings,
            pile: self.state.pile.as_slice(),
            pickable,
            discarded,
            known: &self.state.known[..self.n],
            seen: self.state.seen,
            stock_len: self.state.stock.len(),
            call_threshold: self.threshold,
            top_set: self.state.top_set,
            restocked: self.state.restocked,
            oracle,
        }
    }

    fn run<S: Seats + ?Sized>(
        mut self,
        agents: &mut S,
        streams: &mut dyn Streams,
        observer: &mut impl Observer,
    ) -> Result<RoundOutcome, PlayError> {
        observer.event(self.state, &Event::Dealt);
        let stop = self.turns(self.starter, None, agents, streams, observer)?;
        observer.event(self.state, &Event::Ended);
        Ok(self.settle(stop))
    }

    /// Player-turns from `seat`; a simulation enters the first one, already counted, at
    /// `resume`. From the start of a turn at which `seats` [glance](Seats::glances) on, the
    /// rest of the round is [`RoundPlay::glancing_turns`].
    fn turns<S: Seats + ?Sized>(
        &mut self,
        mut seat: usize,
        resume: Option<Resume<'_>>,
        seats: &mut S,
        streams: &mut dyn Streams,
        observer: &mut impl Observer,
    ) -> Result<Stop, PlayError> {
        let table = self.table;
        let rules = &table.rules;
        let mut entry = resume;
        // Asked once per round, not per turn (a virtual call for boxed agents).
        let mut oracle_seat = [false; MAX_PLAYERS];
        for (seat, flag) in oracle_seat.iter_mut().enumerate().take(self.n) {
            *flag = seats.oracle(seat);
        }
        let witnessing = seats.witnessing();
        loop {
            let entry_now = entry.take();
            if entry_now.is_none() {
                if seats.glances() {
                    return self.glancing_turns(seat, &oracle_seat, seats, streams, observer);
                }
                if let Some(stop) = self.begin_turn(seats) {
                    return Ok(stop);
                }
            }
            let oracle = oracle_view(oracle_seat[seat], &self.state.hands[..self.n]);
            let value = self.values[seat];
            debug_assert_eq!(value, rules.hand_value(self.state.hands[seat].as_slice()));
            let rng = streams.agent(seat);
            let mut pickable: CardVec<MAX_HAND> = CardVec::new();
            let discard = match entry_now {
                Some(Resume::Pick {
                    discarded,
                    pickable: offered,
                }) => {
                    for &c in offered {
                        pickable.push(c);
                    }
                    Discard::from_slice(discarded).expect("a discard fits a hand")
                }
                _ => {
                    // 1. Call, offered only when allowed. One observation serves the call
                    // and the discard: nothing changes between them.
                    let may_call =
                        !matches!(entry_now, Some(Resume::Discard)) && self.may_call(value);
                    self.decisions[seat] += 1 + u16::from(may_call);
                    let mut obs = self.observation(Phase::Call, seat, &[], &[], value, oracle);
                    if may_call {
                        let call = seats
                            .call(seat, &obs, &mut *rng)
                            .map_err(|error| agent_error(seats.name(seat), seat, error))?;
                        if call {
                            return Ok(self.called(seat, observer));
                        }
                    }

                    // 2. Discard.
                    obs.phase = Phase::Discard;
                    let mut discard = Discard::new();
                    seats
                        .discard_into(seat, &obs, &mut *rng, &mut discard)
                        .map_err(|error| agent_error(seats.name(seat), seat, error))?;
                    self.check_discard(seats, seat, &mut discard)?;
                    if let Some(stop) = self.put_down(seat, &discard, &mut pickable, observer) {
                        return Ok(stop);
                    }
                    if witnessing {
                        let event = Event::Discarded {
                            seat,
                            cards: discard,
                        };
                        seats.witness(self.state, &event);
                    }
                    discard
                }
            };

            // 3. Pick or draw.
            let pick = if pickable.is_empty() {
                Pick::Stock
            } else {
                self.decisions[seat] += 1;
                let obs = self.observation(
                    Phase::Pick,
                    seat,
                    pickable.as_slice(),
                    discard.as_slice(),
                    // The hand's value after the discard.
                    self.values[seat],
                    oracle_view(oracle_seat[seat], &self.state.hands[..self.n]),
                );
                seats
                    .pick(seat, &obs, rng)
                    .map_err(|error| agent_error(seats.name(seat), seat, error))?
            };
            let reshuffles = self.reshuffles;
            if let Some(stop) = self.take(
                seats,
                seat,
                pick,
                &pickable,
                discard.len(),
                streams,
                observer,
            )? {
                return Ok(stop);
            }
            if witnessing {
                if self.reshuffles != reshuffles {
                    seats.witness(self.state, &Event::Reshuffled);
                }
                seats.witness(self.state, &Event::Took { seat, pick });
            }
            seat = self.table.next_active(seat);
        }
    }

    /// The turns of [`RoundPlay::turns`] from the start of `seat`'s turn to the end of the
    /// round, for seats that [glance](Seats::glances): the same rules, counts and events
    /// through the same helpers, but the discard and the pick are asked with a [`Glance`]
    /// instead of an [`Observation`]: a search's rollouts play most turns of its simulations,
    /// and read nothing of the two observations of some 200 bytes that the general loop builds
    /// per turn but the hand. A call is still asked with the full observation, built only
    /// when one is offered.
    fn glancing_turns<S: Seats + ?Sized>(
        &mut self,
        mut seat: usize,
        oracle_seat: &[bool; MAX_PLAYERS],
        seats: &mut S,
        streams: &mut dyn Streams,
        observer: &mut impl Observer,
    ) -> Result<Stop, PlayError> {
        let rules = &self.table.rules;
        loop {
            if let Some(stop) = self.begin_turn(seats) {
                return Ok(stop);
            }
            let value = self.values[seat];
            debug_assert_eq!(value, rules.hand_value(self.state.hands[seat].as_slice()));
            let may_call = self.may_call(value);
            self.decisions[seat] += 1 + u16::from(may_call);
            if may_call {
                let oracle = oracle_view(oracle_seat[seat], &self.state.hands[..self.n]);
                let obs = self.observation(Phase::Call, seat, &[], &[], value, oracle);
                let call = seats
                    .call(seat, &obs, streams.agent(seat))
                    .map_err(|error| agent_error(seats.name(seat), seat, error))?;
                if call {
                    return Ok(self.called(seat, observer));
                }
            }
            let mut discard = Discard::new();
            let glance = Glance {
                rules,
                seat,
                hand: &self.state.hands[seat],
                hand_value: value,
                call_threshold: self.threshold,
                pickable: &[],
            };
            seats
                .glance_discard(&glance, &mut discard)
                .map_err(|error| agent_error(seats.name(seat), seat, error))?;
            self.check_discard(seats, seat, &mut discard)?;
            let mut pickable: CardVec<MAX_HAND> = CardVec::new();
            if let Some(stop) = self.put_down(seat, &discard, &mut pickable, observer) {
                return Ok(stop);
            }
            let pick = if pickable.is_empty() {
                Pick::Stock
            } else {
                self.decisions[seat] += 1;
                let glance = Glance {
                    rules,
                    seat,
                    hand: &self.state.hands[seat],
                    // The hand's value after the discard.
                    hand_value: self.values[seat],
                    call_threshold: self.threshold,
                    pickable: pickable.as_slice(),
                };
                seats
                    .glance_pick(&glance)
                    .map_err(|error| agent_error(seats.name(seat), seat, error))?
            };
            if let Some(stop) = self.take(
                seats,
                seat,
                pick,
                &pickable,
                discard.len(),
                streams,
                observer,
            )? {
                return Ok(stop);
            }
            seat = self.table.next_active(seat);
        }
    }

    /// Starts the next turn: `Some` if the round ends first (the turn limit, or the seats'
    /// horizon).
    #[inline(always)]
    fn begin_turn<S: Seats + ?Sized>(&mut self, seats: &mut S) -> Option<Stop> {
        if self.state.turn >= self.table.rules.variant().turn_limit {
            return Some(Stop::TurnLimit);
        }
        if seats.stop(self.state.turn) {
            return Some(Stop::Horizon);
        }
        self.state.turn += 1;
        None
    }

    /// `seat` called: the round stops there (its discard, counted with the call, not asked).
    #[inline(always)]
    fn called(&mut self, seat: usize, observer: &mut impl Observer) -> Stop {
        observer.event(self.state, &Event::Called { seat });
        self.decisions[seat] -= 1;
        Stop::Call(seat)
    }

    /// Whether a hand worth `value` may call: within the threshold, or above it where an
    /// over-threshold call is allowed (and penalised).
    #[inline]
    fn may_call(&self, value: u32) -> bool {
        value <= self.threshold
            || self.table.rules.variant().call.over_threshold == OverCall::Penalised
    }

    /// Checks the discard `seat` proposed, unless its seats enumerate their discards, and
    /// puts a run in rank order, so that its ends are its first and last cards.
    #[inline(always)]
    fn check_discard<S: Seats + ?Sized>(
        &self,
        seats: &S,
        seat: usize,
        discard: &mut Discard,
    ) -> Result<(), PlayError> {
        let rules = &self.table.rules;
        if seats.enumerated(seat) {
            debug_assert!(
                classify(rules, self.state.hands[seat].as_slice(), discard.as_slice()).is_ok(),
                "an enumerated discard is legal"
            );
            return Ok(());
        }
        match classify(rules, self.state.hands[seat].as_slice(), discard.as_slice()) {
            Err(reason) => Err(PlayError::IllegalDiscard {
                agent: seats.name(seat).to_string(),
                seat,
                cards: discard.to_string(),
                reason,
            }),
            Ok(DiscardKind::Run) => {
                sort_run(rules, discard.as_mut_slice());
                Ok(())
            }
            Ok(_) => Ok(()),
        }
    }

    /// Moves `seat`'s checked discard from its hand onto the pile and lists in `pickable`
    /// what the pick rule offers; `Some` when the emptied hand ends the round.
    #[inline(always)]
    fn put_down(
        &mut self,
        seat: usize,
        discard: &Discard,
        pickable: &mut CardVec<MAX_HAND>,
        observer: &mut impl Observer,
    ) -> Option<Stop> {
        let rules = &self.table.rules;
        let v = rules.variant();
        // The discard's cards are in the hand (checked), each once: their set and value in
        // one pass.
        let mut cards = CardSet::EMPTY;
        let mut shed = 0;
        for card in discard.iter() {
            cards.insert(card);
            shed += rules.value(card);
        }
        self.state.hands[seat].remove_set(cards);
        self.state.known[seat] = self.state.known[seat].difference(cards);
        self.state.seen = self.state.seen.union(cards);
        self.state.hand_sizes[seat] = self.state.hands[seat].len() as u8;
        self.values[seat] -= shed;
        self.cards_discarded[seat] += discard.len() as u16;
        // The discard goes onto the pile at once. With the paper's rule its last card is what
        // may be taken back; in real play, a card of the set beneath it (the previous
        // player's discard).
        let below = self.state.pile.len();
        self.state.pile.extend_from_slice(discard.as_slice());
        match v.pick {
            PickRule::OwnLastDiscard => {
                pickable.push(discard.last().expect("a discard is not empty"))
            }
            PickRule::PreviousDiscard(which) => {
                let set = &self.state.pile.as_slice()[below - self.state.top_set..below];
                match (which, set) {
                    (_, []) => {}
                    (SetPick::Top, [.., last]) => pickable.push(*last),
                    (SetPick::Ends, [only]) => pickable.push(*only),
                    (SetPick::Ends, [first, .., last]) => {
                        pickable.push(*first);
                        pickable.push(*last);
                    }
                    (SetPick::Any, cards) => {
                        for &c in cards {
                            pickable.push(c);
                        }
                    }
                }
            }
        }
        observer.event(
            self.state,
            &Event::Discarded {
                seat,
                cards: *discard,
            },
        );
        if self.state.hands[seat].is_empty() && v.empty_hand == EmptyHand::WinsAsCall {
            return Some(Stop::EmptyHand(seat));
        }
        None
    }

    /// Applies `seat`'s pick, checked against `pickable`, after a discard of `discarded`
    /// cards; `Some` when the stock ran out for good.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn take<S: Seats + ?Sized>(
        &mut self,
        seats: &S,
        seat: usize,
        pick: Pick,
        pickable: &CardVec<MAX_HAND>,
        discarded: usize,
        streams: &mut dyn Streams,
        observer: &mut impl Observer,
    ) -> Result<Option<Stop>, PlayError> {
        let rules = &self.table.rules;
        match pick {
            Pick::Pile(card) => {
                if !pickable.contains(card) {
                    return Err(PlayError::IllegalPick {
                        agent: seats.name(seat).to_string(),
                        seat,
                        pick,
                        offered: pickable.to_string(),
                    });
                }
                // Each card is on the pile once, and one taken back lies near the top.
                self.state.pile.remove_last(card);
                self.state.hands[seat].push(card);
                self.values[seat] += rules.value(card);
                self.state.known[seat].insert(card);
                self.pile_picks[seat] += 1;
            }
            Pick::Stock => {
                if self.state.stock.is_empty() {
                    if !self.reshuffle(streams, discarded) {
                        return Ok(Some(Stop::StockExhausted));
                    }
                    observer.event(self.state, &Event::Reshuffled);
                }
                let card = self.state.stock.pop().expect("the stock was refilled");
                self.state.hands[seat].push(card);
                self.values[seat] += rules.value(card);
            }
        }
        self.state.hand_sizes[seat] = self.state.hands[seat].len() as u8;
        self.state.top_set = discarded;
        observer.event(self.state, &Event::Took { seat, pick });
        Ok(None)
    }

    /// Rebuilds the stock from the pile under the cards still in play, `discarded` being the
    /// size of the set just put down; `false` if there is nothing to use.
    fn reshuffle(&mut self, streams: &mut dyn Streams, discarded: usize) -> bool {
        if self.table.rules.variant().stock == StockRule::EndRound {
            return false;
        }
        // The paper keeps only the top card; real play keeps the set just put down (the one
        // the next player may take from).
        let keep = match self.table.rules.variant().pick {
            PickRule::OwnLastDiscard => 1,
            PickRule::PreviousDiscard(_) => discarded,
        };
        let len = self.state.pile.len();
        if len <= keep {
            return false;
        }
        let rest = len - keep;
        let pile = self.state.pile;
        self.state.stock = Pile::from_slice(&pile.as_slice()[..rest]).expect("fits");
        self.state.restocked = Some(self.state.stock.to_set());
        streams.deal().shuffle(self.state.stock.as_mut_slice());
        self.state.pile = Pile::from_slice(&pile.as_slice()[rest..]).expect("fits");
        self.reshuffles += 1;
        true
    }

    /// The round's outcome. Inlinable, so that the loop playing the round builds the outcome
    /// in place (a search settles every simulation: about 1% of its time, docs/performance.md).
    #[inline]
    fn settle(&self, stop: Stop) -> RoundOutcome {
        let t = self.table;
        let rules = &t.rules;
        let v = rules.variant();
        let n = self.n;
        let mut hv = [0u32; MAX_PLAYERS];
        for seat in (0..n).filter(|&s| t.active[s]) {
            hv[seat] = self.values[seat];
            debug_assert_eq!(
                hv[seat],
                rules.hand_value(self.state.hands[seat].as_slice())
            );
        }
        let (end, caller) = match stop {
            Stop::Call(s) => (EndReason::Call, Some(s)),
            Stop::EmptyHand(s) => (EndReason::EmptyHand, Some(s)),
            Stop::TurnLimit => (EndReason::TurnLimit, None),
            Stop::StockExhausted => (EndReason::StockExhausted, None),
            Stop::Horizon => (EndReason::Horizon, None),
        };
        let mut o = RoundOutcome {
            round: t.round,
            seats: n,
            active: t.active,
            starter: self.starter,
            end,
            caller: None,
            call_success: false,
            winner: None,
            hand_values: hv,
            coin_delta: [0; MAX_PLAYERS],
            points_delta: [0; MAX_PLAYERS],
            turns: self.state.turn,
            cards_discarded: self.cards_discarded,
            pile_picks: self.pile_picks,
            decisions: self.decisions,
            reshuffles: self.reshuffles,
            final_hands: self.state.hands,
            eliminated: [false; MAX_PLAYERS],
        };
        let active = |s: usize| t.active[s];
        match caller {
            Some(c) => {
                let over = end == EndReason::Call && hv[c] > self.threshold;
                self.showdown(&mut o, c, over);
            }
            // A simulation's horizon is scored as if the lowest hand won.
            None => match if end == EndReason::Horizon {
                NoCallEnd::LowestWins
            } else {
                v.no_call_end
            } {
                NoCallEnd::FirstMinimumCalls => {
                    let c = (0..n)
                        .filter(|&s| active(s))
                        .min_by_key(|&s| (hv[s], s))
                        .expect("seats");
                    self.showdown(&mut o, c, false);
                }
                NoCallEnd::LowestWins => {
                    let w = self.best_non_caller(&hv, None, &v.call);
                    o.winner = Some(w);
                    match v.scoring {
                        Scoring::Coins(c) => {
                            for s in (0..n).filter(|&s| active(s) && s != w) {
                                let pay = capped(hv[s], c.cap);
                                o.coin_delta[s] -= pay;
                                o.coin_delta[w] += pay;
                            }
                        }
                        Scoring::Points(_) => {
                            for s in (0..n).filter(|&s| active(s) && s != w) {
                                o.points_delta[s] += i64::from(hv[s]);
                            }
                        }
                    }
                }
                NoCallEnd::Void => {
                    if let Scoring::Points(_) = v.scoring {
                        for s in (0..n).filter(|&s| active(s)) {
                            o.points_delta[s] += i64::from(hv[s]);
                        }
                    }
                }
            },
        }
        if let Scoring::Points(p) = v.scoring {
            for s in (0..n).filter(|&s| active(s)) {
                let total = t.standings[s] + o.points_delta[s];
                let limit = i64::from(p.limit);
                o.eliminated[s] = match p.elimination {
                    Elimination::AtLimit => total >= limit,
                    Elimination::AboveLimit => total > limit,
                };
            }
        }
        o
    }

    /// Resolves a call by `c` and settles it. `over`: a penalised over-threshold call, which
    /// fails whatever the hands.
    fn showdown(&self, o: &mut RoundOutcome, c: usize, over: bool) {
        let t = self.table;
        let v = t.rules.variant();
        let hv = o.hand_values;
        let n = self.n;
        let active = |s: usize| t.active[s];
        let others_min = (0..n)
            .filter(|&s| active(s) && s != c)
            .map(|s| hv[s])
            .min()
            .unwrap_or(u32::MAX);
        // Emptying the hand wins even against another hand of 0 (zero-valued jokers).
        let wins = if v.call.caller_wins_ties || o.end == EndReason::EmptyHand {
            hv[c] <= others_min
        } else {
            hv[c] < others_min
        };
        let success = wins && !over;
        let winner = if success {
            c
        } else {
            self.best_non_caller(&hv, Some(c), &v.call)
        };
        o.caller = Some(c);
        o.call_success = success;
        o.winner = Some(winner);
        match v.scoring {
            Scoring::Coins(coins) => {
                if success {
                    for s in (0..n).filter(|&s| active(s) && s != c) {
                        let pay = capped(hv[s], coins.cap);
                        o.coin_delta[s] -= pay;
                        o.coin_delta[c] += pay;
                    }
                } else {
                    let table: i64 = (0..n)
                        .filter(|&s| active(s))
                        .map(|s| capped(hv[s], coins.cap))
                        .sum();
                    let penalty = if over {
                        v.call.over_threshold_penalty
                    } else {
                        coins.failed_call_penalty
                    };
                    let pay = table + i64::from(penalty);
                    o.coin_delta[c] -= pay;
                    o.coin_delta[winner] += pay;
                }
            }
            Scoring::Points(p) => {
                if success {
                    for s in (0..n).filter(|&s| active(s) && s != c) {
                        o.points_delta[s] += i64::from(hv[s]);
                    }
                } else {
                    let own = if p.failed_caller_adds_hand {
                        i64::from(hv[c])
                    } else {
                        0
                    };
                    let penalty = if over {
                        v.call.over_threshold_penalty
                    } else {
                        p.failed_call_penalty
                    };
                    o.points_delta[c] += i64::from(penalty) + own;
                    if p.failed_call_others == FailedCallOthers::ScoreHand {
                        for s in (0..n).filter(|&s| active(s) && s != c && s != winner) {
                            o.points_delta[s] += i64::from(hv[s]);
                        }
                    }
                }
            }
        }
    }

    /// The lowest hand among active seats other than `caller`, ties broken by the rules.
    #[inline]
    fn best_non_caller(
        &self,
        hv: &[u32; MAX_PLAYERS],
        caller: Option<usize>,
        call: &CallRules,
    ) -> usize {
        let t = self.table;
        let n = self.n;
        let from = match call.tie_break {
            TieBreak::LowestSeat => 0,
            TieBreak::AfterCaller => caller.map_or(0, |c| (c + 1) % n),
        };
        // Seats from `from` round to `from - 1`, in two ranges (no division per seat).
        (from..n)
            .chain(0..from)
            .filter(|&s| t.active[s] && Some(s) != caller)
            .min_by_key(|&s| hv[s])
            .expect("at least two active seats")
    }
}

/// What an observation shows of the hidden hands: all of them to an oracle, nothing otherwise.
#[inline]
fn oracle_view(oracle: bool, hands: &[Hand]) -> Oracle<'_> {
    if oracle {
        Oracle::new(hands)
    } else {
        Oracle::none()
    }
}

fn capped(value: u32, cap: Option<u32>) -> i64 {
    i64::from(cap.map_or(value, |c| value.min(c)))
}

fn agent_error(agent: &str, seat: usize, error: super::decision::AgentError) -> PlayError {
    PlayError::Agent {
        agent: agent.to_string(),
        seat,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discards::{Runs, for_each_discard};
    use crate::rng::{ChaChaSource, ChaChaStreams, Purpose, chacha_stream};
    use crate::rules::Preset;

    /// Seats that play every seat at random from its own hand (a uniformly random legal
    /// discard, the stock or a card on offer, a coin for a call), from their own stream, and
    /// [glance](Seats::glances) from turn `glance_from` on when `glancing`: the same
    /// decisions either way, so a round must end the same through either path. (`turn` is the
    /// last turn `stop` was asked about: the engine asks `glances` before it.)
    struct Plain {
        rng: ChaChaSource,
        glancing: bool,
        glance_from: u32,
        turn: u32,
        /// End the round as a horizon after this turn (0: never).
        horizon: u32,
    }

    impl Plain {
        fn discard(&mut self, rules: &Rules, hand: &Hand) -> Discard {
            let mut legal = Vec::new();
            for_each_discard(rules, hand.as_slice(), Runs::All, |d| {
                legal.push(Discard::from_slice(d).expect("fits"));
                true
            });
            legal[self.rng.below(legal.len() as u32) as usize]
        }

        fn pick(&mut self, pickable: &[Card]) -> Pick {
            let i = self.rng.below(pickable.len() as u32 + 1) as usize;
            pickable.get(i).map_or(Pick::Stock, |&c| Pick::Pile(c))
        }
    }

    impl Seats for Plain {
        fn name(&self, _seat: usize) -> &str {
            "plain"
        }
        fn call(
            &mut self,
            _seat: usize,
            obs: &Observation<'_>,
            _rng: &mut dyn RandomSource,
        ) -> Result<bool, AgentError> {
            // A rare call, so that rounds also run to the stock and the turn limit.
            Ok(obs.hand_value == 0 || self.rng.below(8) == 0)
        }
        fn discard(
            &mut self,
            _seat: usize,
            obs: &Observation<'_>,
            _rng: &mut dyn RandomSource,
        ) -> Result<Discard, AgentError> {
            Ok(self.discard(obs.rules, obs.hand))
        }
        fn pick(
            &mut self,
            _seat: usize,
            obs: &Observation<'_>,
            _rng: &mut dyn RandomSource,
        ) -> Result<Pick, AgentError> {
            Ok(self.pick(obs.pickable))
        }
        fn stop(&mut self, turn: u32) -> bool {
            self.turn = turn;
            self.horizon > 0 && turn >= self.horizon
        }
        fn glances(&self) -> bool {
            self.glancing && self.turn >= self.glance_from
        }
        fn glance_discard(
            &mut self,
            glance: &Glance<'_>,
            into: &mut Discard,
        ) -> Result<(), AgentError> {
            *into = self.discard(glance.rules, glance.hand);
            Ok(())
        }
        fn glance_pick(&mut self, glance: &Glance<'_>) -> Result<Pick, AgentError> {
            Ok(self.pick(glance.pickable))
        }
    }

    /// Every event, with the state's public counts as they were.
    #[derive(Default)]
    struct Record(Vec<(Event, u32, Vec<u8>, u64, usize)>);

    impl Observer for Record {
        fn event(&mut self, state: &RoundState, event: &Event) {
            self.0.push((
                *event,
                state.turn,
                state.hand_sizes.to_vec(),
                state.seen.0,
                state.top_set,
            ));
        }
    }

    /// A state dealt from a given order, played with `play_from`, is the round the engine
    /// deals and plays after a shuffle that leaves the deck in that order: on the paper's
    /// table and on a small deck.
    #[test]
    fn a_round_dealt_from_an_order_plays_as_the_engines_own() {
        let mut small = Preset::Simplified2p.variant();
        small.deck.ranks = 4;
        small.deck.suits = 2;
        small.discards.runs = false;
        small.hand_size = 2;
        small.stock = StockRule::EndRound;
        for variant in [Preset::Paper.variant(), small] {
            let rules = Rules::new(variant).expect("a valid variant");
            let slots: Vec<u32> = (0..rules.players() as u32).collect();
            for deal in 0..50u64 {
                let seats = || Plain {
                    rng: chacha_stream(deal, Purpose::Learn, 1),
                    glancing: false,
                    glance_from: 0,
                    turn: 0,
                    horizon: 0,
                };
                let mut table = Table::new(rules.clone());
                let mut streams = ChaChaStreams::new(3, deal, &slots);
                let played = table
                    .play_round_with(&mut seats(), &mut streams, &mut ())
                    .expect("legal play");
                // The same shuffle and starter, from the same stream, left where the deal
                // leaves it (a reshuffle draws from it later).
                let mut streams = ChaChaStreams::new(3, deal, &slots);
                let mut order = rules.deck().to_vec();
                streams.deal().shuffle(&mut order);
                let starter = if rules.variant().random_first_starter {
                    streams.deal().below(rules.players() as u32) as usize
                } else {
                    0
                };
                assert_eq!(starter, played.starter);
                let table = Table::new(rules.clone());
                let mut state = RoundState::dealt(&table, &order).expect("an arrangement");
                let replayed = table
                    .play_from(
                        &mut state,
                        starter,
                        starter,
                        Resume::Call,
                        &mut seats(),
                        &mut streams,
                    )
                    .expect("legal play");
                assert_eq!(played, replayed, "deal {deal}");
            }
            let table = Table::new(rules.clone());
            let mut short = rules.deck().to_vec();
            short.pop();
            assert!(RoundState::dealt(&table, &short).is_none());
        }
    }

    #[test]
    fn an_end_reason_reads_back_from_its_name() {
        use EndReason::*;
        for end in [Call, EmptyHand, TurnLimit, StockExhausted, Horizon] {
            assert_eq!(EndReason::from_name(end.as_str()), Some(end));
        }
        assert_eq!(EndReason::from_name("called"), None);
    }

    /// The engine's two paths play the same rounds: every preset, many deals, sessions of
    /// several rounds (starters and standings move), switching to glances at random turns
    /// (the start included), some rounds cut at a horizon. Outcomes, every event and the
    /// state each saw, and the final state must agree.
    #[test]
    fn glancing_turns_play_as_the_general_loop() {
        let mut ends = std::collections::HashMap::new();
        // Every preset, and the paper's with a stock that is not rebuilt (a round can end with
        // it empty).
        let mut variants: Vec<_> = Preset::ALL
            .iter()
            .map(|p| (p.name(), p.variant()))
            .collect();
        let mut no_restock = Preset::Paper.variant();
        no_restock.stock = StockRule::EndRound;
        variants.push(("paper, no restock", no_restock));
        for (preset, variant) in variants {
            let rules = Rules::new(variant).expect("a valid variant");
            for game in 0..60u64 {
                let mut tables = [Table::new(rules.clone()), Table::new(rules.clone())];
                for round in 0..5u64 {
                    if tables[0].game_over() {
                        break;
                    }
                    let deal = game * 8 + round;
                    let mut setup = chacha_stream(deal, Purpose::Learn, 7);
                    let glance_from = setup.below(12);
                    let horizon = if setup.below(4) == 0 {
                        1 + setup.below(40)
                    } else {
                        0
                    };
                    let mut results = Vec::new();
                    for (glancing, table) in [false, true].into_iter().zip(tables.iter_mut()) {
                        let mut seats = Plain {
                            rng: chacha_stream(deal, Purpose::Learn, 1),
                            glancing,
                            glance_from,
                            turn: 0,
                            horizon,
                        };
                        let mut streams = ChaChaStreams::new(3, deal, &[0, 1, 2, 3]);
                        let mut record = Record::default();
                        let mut state = RoundState::default();
                        let starter = RoundPlay::deal(table, &mut streams, &mut state);
                        let outcome = RoundPlay::start(table, &mut state, starter)
                            .run(&mut seats, &mut streams, &mut record)
                            .expect("legal play");
                        table.apply(&outcome);
                        results.push((outcome, record.0, state));
                    }
                    let (a, b) = (&results[0], &results[1]);
                    assert_eq!(a.0, b.0, "{preset} deal {deal}: outcomes");
                    assert_eq!(a.1, b.1, "{preset} deal {deal}: events");
                    let (s, t) = (&a.2, &b.2);
                    assert_eq!(s.stock, t.stock);
                    assert_eq!(s.pile, t.pile);
                    assert_eq!(s.hands, t.hands);
                    assert_eq!(s.hand_sizes, t.hand_sizes);
                    assert_eq!(s.known, t.known);
                    assert_eq!(s.seen, t.seen);
                    assert_eq!(s.top_set, t.top_set);
                    assert_eq!(s.turn, t.turn);
                    assert_eq!(s.restocked, t.restocked);
                    *ends.entry(a.0.end).or_insert(0) += 1;
                }
                assert_eq!(tables[0].standings(), tables[1].standings());
            }
        }
        // Every way a round ends was played both ways.
        for end in [
            EndReason::Call,
            EndReason::EmptyHand,
            EndReason::TurnLimit,
            EndReason::StockExhausted,
            EndReason::Horizon,
        ] {
            assert!(
                ends.get(&end).is_some_and(|&n| n > 0),
                "no round ended by {end:?}: {ends:?}"
            );
        }
    }
}
