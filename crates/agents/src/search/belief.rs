//! Inference over the hidden hands: the worlds a search samples, weighted by how likely an
//! opponent model would have made the moves each opponent made this round.
//!
//! A uniform determinization ([`Determinizer`]) treats an opponent who kept passing on low
//! cards, or took the 7 of hearts from the pile, as if it held anything. Here each sampled
//! world is a *particle*: the current world drawn as before, then the round's history filled
//! in backwards (which card each opponent drew from the stock at each of its draws: uniformly
//! among the cards in its hand whose arrival is not public, which is the exact conditional
//! under a uniformly shuffled deck while no reshuffle happened), giving a complete deal. The
//! round is then replayed from that deal through the engine ([`Table::play_from`]) with every
//! seat's public action forced, and at each opponent decision the model is asked what it
//! would have done on the observation that opponent had in this world. A world's weight is
//! `softness ^ mismatches`: 1 where the model would have played every move seen, and never
//! zero (a model is an approximation; a deterministic model with softness 0 would kill every
//! world after one surprise). For a stochastic model the single answer asked is an unbiased
//! estimate of the move's probability.
//!
//! What it reads: the observation and the public events the agent witnessed
//! ([`Agent::witness`](dhumbal_game::Agent::witness)), its own stock draws among them. No
//! hidden card reaches the weights; the tests check that the worlds and weights are the same
//! whatever the hidden cards are.
//!
//! Limits, stated where they are used (`docs/agents.md`): after a reshuffle the history
//! cannot be filled in (which restocked cards each seat drew is not tracked), so the worlds
//! are weighted uniformly for the rest of the round, and the explanation says so; the model
//! is asked in the order of play (a turn's call before its discard, as at a table), so a
//! model that keeps state within a turn (Opportunistic's risk) reads what it set, but one
//! instance answers for every opponent and every imagined world; a model that searches is
//! refused (it would search at every replayed move).

use dhumbal_game::cards::{Card, CardSet, Discard, Hand, Pile};
use dhumbal_game::rng::{ChaChaSource, Purpose, RandomSource, chacha_stream};
use dhumbal_game::rules::MAX_PLAYERS;
use dhumbal_game::{AgentError, Event, Observation, Pick, Resume, RoundState, Seats, Table};

use super::{Determinizer, Rollout, SimStreams};

/// How a belief samples and weighs its worlds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BeliefParams {
    /// Worlds drawn and weighed per decision (before any extension for degeneracy).
    pub particles: u32,
    /// A world's weight is `softness` to the power of the moves the model would not have made.
    pub softness: f64,
    /// When the effective sample size falls under this fraction of the worlds drawn, as many
    /// worlds again are drawn, up to four times `particles`.
    pub min_ess: f64,
}

impl Default for BeliefParams {
    fn default() -> Self {
        BeliefParams {
            particles: 64,
            softness: 0.05,
            min_ess: 0.1,
        }
    }
}

/// One public event of the round, as the agent witnessed it.
#[derive(Clone, Copy, Debug)]
struct Logged {
    event: Event,
    /// The card of the agent's own stock draw.
    drawn: Option<Card>,
}

/// Counts over every decision, and the last decision's figures (for explanations and reports).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BeliefStats {
    /// Decisions weighed.
    pub decisions: u64,
    /// Worlds drawn and replayed over all decisions.
    pub worlds: u64,
    /// Decisions whose effective sample size fell under the threshold (more worlds drawn).
    pub extended: u64,
    /// Decisions weighed uniformly: after a reshuffle, or with no opponent move seen yet.
    pub uniform: u64,
    /// Worlds whose replay failed (a bug if ever non-zero; they get weight zero).
    pub failed: u64,
    /// The last decision: worlds drawn, effective sample size, opponent moves weighed.
    pub last_worlds: u32,
    pub last_ess: f64,
    pub last_moves: u32,
    pub last_uniform: bool,
    pub last_reshuffled: bool,
}

/// The particles of one decision and the round's history that weighs them.
pub struct Belief {
    params: BeliefParams,
    model: Rollout,
    model_name: String,
    log: Vec<Logged>,
    worlds: Vec<RoundState>,
    /// Running sums of the worlds' weights, for drawing one in proportion.
    cumulative: Vec<f64>,
    mismatches: Vec<u32>,
    draws: Vec<Card>,
    /// Per logged event: for a stock draw, the cards its seat had taken from the pile before.
    taken: Vec<CardSet>,
    stats: BeliefStats,
}

impl Belief {
    /// A belief whose opponents are assumed to play like `model` (which must not keep state
    /// between decisions: it is asked about many imagined worlds).
    pub fn new(params: BeliefParams, model: Rollout, model_name: impl Into<String>) -> Belief {
        Belief {
            params,
            model,
            model_name: model_name.into(),
            log: Vec::with_capacity(256),
            worlds: Vec::new(),
            cumulative: Vec::new(),
            mismatches: Vec::new(),
            draws: Vec::with_capacity(64),
            taken: Vec::with_capacity(256),
            stats: BeliefStats::default(),
        }
    }

    pub fn params(&self) -> &BeliefParams {
        &self.params
    }

    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    pub fn stats(&self) -> &BeliefStats {
        &self.stats
    }

    /// What the last decision's worlds were, in a sentence for its explanation.
    pub fn explanation(&self) -> String {
        let s = &self.stats;
        let p = &self.params;
        if s.last_uniform {
            return format!(
                "worlds weighted uniformly: {}",
                if s.last_reshuffled {
                    "the round's history cannot be filled in after a reshuffle"
                } else {
                    "no opponent move seen yet"
                }
            );
        }
        format!(
            "worlds weighted by how likely {} would have made the {} opponent moves seen \
             (softness {}): {} drawn, effective sample size {:.1} ({:.0}%){}",
            self.model_name,
            s.last_moves,
            p.softness,
            s.last_worlds,
            s.last_ess,
            100.0 * s.last_ess / f64::from(s.last_worlds.max(1)),
            if s.last_worlds > p.particles {
                format!(
                    "; more drawn as it fell under {:.0}% of {}",
                    100.0 * p.min_ess,
                    p.particles
                )
            } else {
                String::new()
            }
        )
    }

    /// A new round: its history starts empty.
    pub fn start_round(&mut self) {
        self.log.clear();
    }

    /// A public event of the round, `drawn` the agent's own stock draw.
    pub fn record(&mut self, event: &Event, drawn: Option<Card>) {
        if matches!(
            event,
            Event::Discarded { .. } | Event::Took { .. } | Event::Reshuffled
        ) {
            self.log.push(Logged {
                event: *event,
                drawn,
            });
        }
    }

    /// Draws and weighs the decision's worlds (`worlds` prepared for `obs`). Returns the
    /// effective sample size.
    pub fn weigh(
        &mut self,
        obs: &Observation<'_>,
        worlds: &mut Determinizer,
        rng: &mut ChaChaSource,
        table: &Table,
    ) -> f64 {
        let p = self.params;
        let base = p.particles.max(1) as usize;
        let me = obs.seat;
        let moves = self
            .log
            .iter()
            .filter(|l| event_seat(&l.event).is_some_and(|s| s != me))
            .count() as u32;
        let reshuffled = self
            .log
            .iter()
            .any(|l| matches!(l.event, Event::Reshuffled));
        let uniform = reshuffled || moves == 0;
        self.stats.decisions += 1;
        self.stats.uniform += u64::from(uniform);
        self.worlds.clear();
        self.mismatches.clear();
        let mut total = 0;
        let mut ess = 0.0;
        let mut extended = false;
        // The replays' own stream: the model's answers on imagined worlds.
        let mut replay_rng = chacha_stream(
            u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32()),
            Purpose::Search,
            2,
        );
        while total < 4 * base {
            for _ in 0..base {
                let mut world = RoundState::default();
                worlds.draw_into(obs, &mut *rng, &mut world);
                let m = if uniform {
                    0
                } else {
                    self.replay(obs, &world, rng, &mut replay_rng, table)
                        .unwrap_or_else(|| {
                            self.stats.failed += 1;
                            u32::MAX
                        })
                };
                self.worlds.push(world);
                self.mismatches.push(m);
            }
            total += base;
            ess = self.cumulate();
            if uniform || ess >= p.min_ess * total as f64 {
                break;
            }
            extended = true;
        }
        self.stats.extended += u64::from(extended);
        self.stats.worlds += total as u64;
        self.stats.last_worlds = total as u32;
        self.stats.last_ess = ess;
        self.stats.last_moves = moves;
        self.stats.last_uniform = uniform;
        self.stats.last_reshuffled = reshuffled;
        ess
    }

    /// Fills `cumulative` from `mismatches`; the effective sample size.
    fn cumulate(&mut self) -> f64 {
        let best = self.mismatches.iter().copied().min().unwrap_or(0);
        self.cumulative.clear();
        let (mut sum, mut squares) = (0.0, 0.0);
        for &m in &self.mismatches {
            let w = if m == u32::MAX {
                0.0
            } else {
                self.params.softness.powi((m - best) as i32)
            };
            sum += w;
            squares += w * w;
            self.cumulative.push(sum);
        }
        if sum == 0.0 {
            // Every replay failed: the worlds as drawn, uniformly.
            for (i, c) in self.cumulative.iter_mut().enumerate() {
                *c = (i + 1) as f64;
            }
            return self.cumulative.len() as f64;
        }
        sum * sum / squares
    }

    /// A world drawn in proportion to its weight, written into `into`, its stock shuffled
    /// (the order of the cards never seen is not inferred).
    pub fn draw_into(&self, rng: &mut ChaChaSource, into: &mut RoundState) {
        let total = *self.cumulative.last().expect("weighed before drawing");
        let x = rng.random() * total;
        let i = self
            .cumulative
            .partition_point(|&c| c <= x)
            .min(self.worlds.len() - 1);
        into.clone_from(&self.worlds[i]);
        let (stock, _) = into.hidden_mut();
        rng.shuffle(stock.as_mut_slice());
    }

    /// How many opponent moves the model would not have made in `world`'s history, or `None`
    /// if the history cannot be filled in or replayed.
    fn replay(
        &mut self,
        obs: &Observation<'_>,
        world: &RoundState,
        rng: &mut ChaChaSource,
        replay_rng: &mut ChaChaSource,
        table: &Table,
    ) -> Option<u32> {
        let mut start = self.imagine_deal(obs, world, rng)?;
        let mut replay = Replay {
            log: &self.log,
            next: 0,
            me: obs.seat,
            model: &mut self.model,
            rng: replay_rng,
            mismatches: 0,
            until: obs.turn.saturating_sub(1),
        };
        let mut streams = SimStreams(chacha_stream(0, Purpose::Search, 3));
        table
            .play_from(
                &mut start,
                obs.starter,
                obs.starter,
                Resume::Call,
                &mut replay,
                &mut streams,
            )
            .ok()?;
        // Every opponent's move replayed: its hand and the stock are the world's again.
        let mismatches = replay.mismatches;
        let same = (0..obs.players())
            .filter(|&s| s != obs.seat)
            .all(|s| start.hand(s).to_set() == world.hand(s).to_set())
            && start.stock().len() == world.stock().len();
        same.then_some(mismatches)
    }

    /// The deal `world` came from, its history filled in backwards: each seat's hand at the
    /// deal, and the stock as it was (`world`'s stock under every card drawn since, the first
    /// drawn on top).
    fn imagine_deal(
        &mut self,
        obs: &Observation<'_>,
        world: &RoundState,
        rng: &mut ChaChaSource,
    ) -> Option<RoundState> {
        let n = obs.players();
        let me = obs.seat;
        let mut hands = [CardSet::EMPTY; MAX_PLAYERS];
        for (seat, hand) in hands.iter_mut().enumerate().take(n) {
            *hand = world.hand(seat).to_set();
        }
        let mut pile: CardSet = obs.pile.iter().copied().collect();
        // The cards each seat had taken from the pile before each event (public origins), for
        // the stock draws: a card taken, put down and taken again is public all along.
        let mut taken = [CardSet::EMPTY; MAX_PLAYERS];
        self.taken.clear();
        for l in &self.log {
            match l.event {
                Event::Took {
                    seat,
                    pick: Pick::Pile(c),
                } => {
                    self.taken.push(CardSet::EMPTY);
                    taken[seat].insert(c);
                }
                Event::Took { seat, .. } => self.taken.push(taken[seat]),
                _ => self.taken.push(CardSet::EMPTY),
            }
        }
        self.draws.clear();
        for (l, &taken) in self.log.iter().zip(&self.taken).rev() {
            match l.event {
                Event::Discarded { seat, cards } => {
                    for c in cards.iter() {
                        hands[seat].insert(c);
                        pile.remove(c);
                    }
                }
                Event::Took {
                    seat,
                    pick: Pick::Pile(c),
                } => {
                    hands[seat].remove(c);
                    pile.insert(c);
                }
                Event::Took {
                    seat,
                    pick: Pick::Stock,
                } => {
                    let card = if seat == me {
                        l.drawn?
                    } else {
                        // Uniform among the cards whose arrival is not public: exchangeable
                        // under a uniformly shuffled deck.
                        let open = hands[seat].difference(taken);
                        if open.is_empty() {
                            return None;
                        }
                        open.iter().nth(rng.below(open.len()) as usize)?
                    };
                    if !hands[seat].contains(card) {
                        return None;
                    }
                    hands[seat].remove(card);
                    self.draws.push(card);
                }
                _ => return None,
            }
        }
        let size = u32::from(obs.rules.variant().hand_size);
        let mut dealt = [Hand::new(); MAX_PLAYERS];
        for seat in (0..n).filter(|&s| obs.active[s]) {
            if hands[seat].len() != size {
                return None;
            }
            dealt[seat].extend_from_set(hands[seat]);
            rng.shuffle(dealt[seat].as_mut_slice());
        }
        let face_up = if obs.rules.variant().initial_discard {
            if pile.len() != 1 {
                return None;
            }
            pile.iter().next()
        } else {
            None
        };
        let mut stock: Pile = *world.stock();
        stock.extend_from_slice(&self.draws);
        Some(RoundState::from_parts(dealt, stock, face_up))
    }
}

/// The seat an event is about (none for a reshuffle and the round's own events).
fn event_seat(event: &Event) -> Option<usize> {
    match *event {
        Event::Discarded { seat, .. } | Event::Took { seat, .. } | Event::Called { seat } => {
            Some(seat)
        }
        _ => None,
    }
}

/// Replays a round's witnessed history from an imagined deal: every seat's action forced, and
/// the model asked at each opponent decision what it would have done.
struct Replay<'a> {
    log: &'a [Logged],
    next: usize,
    me: usize,
    model: &'a mut Rollout,
    rng: &'a mut ChaChaSource,
    mismatches: u32,
    /// The last turn to replay (the turn before the decision's).
    until: u32,
}

impl Replay<'_> {
    fn out_of_step(&self, seat: usize) -> AgentError {
        AgentError(format!(
            "replay out of step at event {} for seat {seat}",
            self.next
        ))
    }

    /// What the logged event due now says `seat` did, read by `of` (the seat and what it
    /// did, where the event is of the kind asked), and the log moved past it; out of step
    /// where it is another kind or another seat's.
    #[inline]
    fn due<T>(
        &mut self,
        seat: usize,
        of: impl FnOnce(Event) -> Option<(usize, T)>,
    ) -> Result<T, AgentError> {
        match self.log.get(self.next).and_then(|l| of(l.event)) {
            Some((s, done)) if s == seat => {
                self.next += 1;
                Ok(done)
            }
            _ => Err(self.out_of_step(seat)),
        }
    }
}

impl Seats for Replay<'_> {
    fn name(&self, _seat: usize) -> &str {
        "replay"
    }

    fn call(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        // Nobody called (a call ends the round); the model's answer is weighed.
        if seat != self.me {
            let would = self.model.call(obs, &mut *self.rng)?;
            self.mismatches += u32::from(would);
        }
        Ok(false)
    }

    fn discard(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        // A draw the engine made without asking (nothing was pickable) is passed over.
        while let Some(Logged {
            event: Event::Took { .. },
            ..
        }) = self.log.get(self.next)
        {
            self.next += 1;
        }
        let cards = self.due(seat, |e| match e {
            Event::Discarded { seat, cards } => Some((seat, cards)),
            _ => None,
        })?;
        if seat != self.me {
            let would = self.model.discard(obs, &mut *self.rng)?;
            self.mismatches += u32::from(would.to_set() != cards.to_set());
        }
        Ok(cards)
    }

    fn pick(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        let pick = self.due(seat, |e| match e {
            Event::Took { seat, pick } => Some((seat, pick)),
            _ => None,
        })?;
        if seat != self.me {
            let would = self.model.pick(obs, &mut *self.rng)?;
            self.mismatches += u32::from(would != pick);
        }
        Ok(pick)
    }

    fn stop(&mut self, turn: u32) -> bool {
        turn >= self.until
    }
}

#[cfg(test)]
mod tests;
