//! Determinization: one complete world consistent with what a player has observed.
//!
//! Cards are in exactly one place: the observer's hand, the pile (public), another seat's
//! hand, or the stock. Of another seat's hand the observer knows the size and the cards it took
//! from the pile and still holds (`known`). Before any reshuffle, every other card not in its
//! own hand or on the pile is equally likely to be in any of the remaining unknown slots (the
//! other hands' unknown cards and the stock, in order): they all came from one uniformly
//! shuffled stock. After a reshuffle the stock holds only cards the reshuffle put there
//! (`Observation::restocked`, public), so every other unaccounted card must be in a hand; the
//! hands' remaining unknown slots and the stock share the restocked cards uniformly. (How many
//! restocked cards each opponent drew is not tracked: a uniform split is an approximation.)
//! The sampler reads only the [`Observation`], which holds no hidden card, so it cannot leak
//! one; the tests below check that exactly (the same sample whatever the hidden cards are) and
//! statistically.
//!
//! An oracle (full information) keeps every true hand and shuffles only the stock: the order
//! of future draws stays unknown even to it.

use dhumbal_game::cards::{CardSet, Hand, Pile};
use dhumbal_game::rng::RandomSource;
use dhumbal_game::rules::MAX_PLAYERS;
use dhumbal_game::{Observation, RoundState};

/// Reusable buffers for sampling worlds (no allocation per sample).
#[derive(Clone, Debug, Default)]
pub struct Determinizer {
    hidden: Pile,
    /// What [`Determinizer::prepare`] worked out of the observation, the same for every world
    /// sampled from it.
    prepared: Prepared,
}

/// The part of a sample that depends on the observation only.
#[derive(Clone, Debug, Default)]
struct Prepared {
    oracle: bool,
    /// The unaccounted cards that may be anywhere, in id order (shuffled for each world).
    pool: Pile,
    /// After a reshuffle, the unaccounted cards that must be in hands, in id order.
    sure: Pile,
    /// Every hand before the hidden slots are dealt: the observer's own and the cards known to
    /// be in the others' (an oracle's: every true hand).
    hands: [Hand; MAX_PLAYERS],
    /// Hidden slots in the other hands.
    unknown: usize,
    /// The world before its hidden parts are dealt: the public facts of the observation, every
    /// hand as in `hands`, and the stock holding `pool` in id order. Each world starts as a
    /// copy of it.
    world: RoundState,
}

/// Why no world could be sampled. Only a bug in the engine or in an agent wrapper could cause
/// either.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    /// The cards the observation accounts for are not the deck.
    #[error(
        "observation inconsistent: {pool} unaccounted cards for {stock} in the stock and {unknown} unknown in hands"
    )]
    Inconsistent {
        pool: usize,
        stock: usize,
        unknown: usize,
    },
    /// An oracle was asked for, but the observation carries no hands (a wrapper that does not
    /// pass `Agent::oracle` on).
    #[error("an oracle search was not shown the hands")]
    NoHands,
}

impl Determinizer {
    pub fn new() -> Determinizer {
        Determinizer::default()
    }

    /// A world consistent with `obs` (see the module documentation; [`contradiction`] of it is
    /// `None`). With `oracle`, the true hands and a shuffled stock; an error if the observation
    /// does not carry the hands. The same as [`Determinizer::prepare`] and then
    /// [`Determinizer::draw`].
    pub fn sample<R: RandomSource + ?Sized>(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut R,
        oracle: bool,
    ) -> Result<RoundState, SampleError> {
        self.prepare(obs, oracle)?;
        Ok(self.draw(obs, rng))
    }

    /// Works out what every world sampled from `obs` shares (a search samples many from one
    /// observation): which cards are unaccounted for, the cards known to be in each hand, how
    /// many slots are hidden. Checks that they add up, so that [`Determinizer::draw`] cannot
    /// fail; an error if they do not, or if an oracle is not shown the hands.
    pub fn prepare(&mut self, obs: &Observation<'_>, oracle: bool) -> Result<(), SampleError> {
        let n = obs.players();
        let me = obs.seat;
        let p = &mut self.prepared;
        p.oracle = oracle;
        p.hands = [Hand::new(); MAX_PLAYERS];
        let true_hands = obs.oracle.hands();
        if oracle && true_hands.len() != n {
            // An oracle that is not shown the hands would silently search sampled worlds.
            return Err(SampleError::NoHands);
        }

        let mut placed: CardSet = obs.pile.iter().copied().collect();
        if oracle {
            for (seat, hand) in true_hands.iter().enumerate() {
                p.hands[seat] = *hand;
                placed = placed.union(hand.to_set());
            }
        } else {
            p.hands[me] = *obs.hand;
            placed = placed.union(obs.hand.to_set());
            for seat in (0..n).filter(|&s| s != me && obs.active[s]) {
                placed = placed.union(obs.known[seat]);
            }
        }
        // The deck's cards (a small deck's are not the ids below its length).
        let deck = obs.rules.deck_set();
        let free = deck.difference(placed);
        p.unknown = 0;
        if !oracle {
            for seat in (0..n).filter(|&s| s != me && obs.active[s]) {
                for card in obs.known[seat].iter() {
                    p.hands[seat].push(card);
                }
                p.unknown += usize::from(obs.hand_sizes[seat]).saturating_sub(p.hands[seat].len());
            }
        }
        // After a reshuffle the stock holds only cards it put there: every other unaccounted
        // card is in a hidden slot of some hand. Those go to the hands for sure; the hidden
        // slots left and the stock share the rest. Before any reshuffle every unaccounted card
        // may be anywhere.
        let sure = match obs.restocked {
            Some(restocked) if !oracle => free.difference(restocked),
            _ => CardSet::EMPTY,
        };
        p.pool.clear();
        p.pool.extend_from_set(free.difference(sure));
        p.sure.clear();
        p.sure.extend_from_set(sure);
        let (pool, sure, unknown) = (p.pool.len(), p.sure.len(), p.unknown);
        let inconsistent = |pool: usize| SampleError::Inconsistent {
            pool: pool + unknown,
            stock: obs.stock_len,
            unknown,
        };
        if sure > unknown || pool + sure < unknown {
            return Err(inconsistent(pool));
        }
        // The stock is what the hidden slots leave of the pool.
        let stock = if sure == 0 {
            pool - unknown
        } else {
            pool - (unknown - sure)
        };
        if stock != obs.stock_len {
            return Err(inconsistent(stock));
        }
        p.world = RoundState::imagined(obs, p.pool, p.hands);
        Ok(())
    }

    /// A world consistent with the observation last [`Determinizer::prepare`]d (`obs`): the
    /// pool shuffled (and after a reshuffle the hidden slots' cards shuffled apart), the hidden
    /// slots dealt from it, the rest the stock.
    pub fn draw<R: RandomSource + ?Sized>(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut R,
    ) -> RoundState {
        let mut world = RoundState::default();
        self.draw_into(obs, rng, &mut world);
        world
    }

    /// [`Determinizer::draw`] written into `world` (whatever it held), drawing the same numbers
    /// in the same order: a search's simulations reuse one state instead of building and moving
    /// a new one each.
    pub fn draw_into<R: RandomSource + ?Sized>(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut R,
        world: &mut RoundState,
    ) {
        let n = obs.players();
        let me = obs.seat;
        let p = &self.prepared;
        world.clone_from(&p.world);
        // The prepared pool is the stock: shuffled there, the hidden slots dealt off its top.
        let (stock, hands) = world.hidden_mut();
        rng.shuffle(stock.as_mut_slice());
        if !p.sure.is_empty() {
            self.hidden = p.sure;
            for _ in 0..p.unknown - p.sure.len() {
                let card = stock.pop().expect("counted");
                self.hidden.push(card);
            }
            rng.shuffle(self.hidden.as_mut_slice());
        }
        let source = if p.sure.is_empty() {
            stock
        } else {
            &mut self.hidden
        };
        if !p.oracle {
            for seat in (0..n).filter(|&s| s != me && obs.active[s]) {
                // As many pops as the hand has hidden slots, in one move.
                let hidden = usize::from(obs.hand_sizes[seat]).saturating_sub(hands[seat].len());
                hands[seat].take_from_top(source, hidden);
            }
        }
        debug_assert_eq!(world.stock().len(), obs.stock_len, "prepared");
    }
}

/// What in `world` contradicts `obs`, if anything: every card in exactly one place, every hand
/// of its observed size holding the cards known to be in it, the observer's hand, the pile and
/// the stock's size as observed, and after a reshuffle a stock of restocked cards only. A
/// sampled world must pass; the tests check every sample with it.
pub fn contradiction(obs: &Observation<'_>, world: &RoundState) -> Option<String> {
    let n = obs.players();
    let mut all = world.stock().to_set();
    if !all.intersection(world.pile().to_set()).is_empty() {
        return Some("a card is both in the stock and on the pile".into());
    }
    all = all.union(world.pile().to_set());
    let mut count = world.stock().len() + world.pile().len();
    for seat in 0..n {
        let hand = world.hand(seat).to_set();
        if world.hand(seat).len() != usize::from(obs.hand_sizes[seat]) {
            return Some(format!(
                "seat {seat} holds {} cards, observed {}",
                world.hand(seat).len(),
                obs.hand_sizes[seat]
            ));
        }
        if !obs.known[seat].difference(hand).is_empty() {
            return Some(format!(
                "a card known to be in seat {seat}'s hand is not there"
            ));
        }
        if !all.intersection(hand).is_empty() {
            return Some(format!("a card of seat {seat} is in two places"));
        }
        all = all.union(hand);
        count += world.hand(seat).len();
    }
    let deck: CardSet = obs.rules.deck().iter().copied().collect();
    if all != deck || count != obs.rules.deck().len() {
        return Some("the cards in the world are not the deck".into());
    }
    if world.hand(obs.seat) != obs.hand {
        return Some("the observer's own hand differs".into());
    }
    if world.pile().as_slice() != obs.pile {
        return Some("the pile differs".into());
    }
    if world.stock().len() != obs.stock_len {
        return Some(format!(
            "{} cards in the stock, observed {}",
            world.stock().len(),
            obs.stock_len
        ));
    }
    if let Some(restocked) = obs.restocked
        && !world.stock().to_set().difference(restocked).is_empty()
    {
        return Some("after a reshuffle the stock holds a card it never received".into());
    }
    None
}

#[cfg(test)]
mod tests {
    //! The sampler against the true worlds it is asked about. A probe agent plays real rounds
    //! (as a paper heuristic) and, at each of its discard decisions, samples worlds from its
    //! observation and compares them with the true hands it can see as an oracle.

    use super::*;
    use crate::{Heuristic, Style};
    use dhumbal_game::cards::Discard;
    use dhumbal_game::rng::{ChaChaStreams, Purpose, chacha_stream};
    use dhumbal_game::{Agent, AgentError, Oracle, Pick, Preset, Rules, Table};

    /// Statistics over every sampled world.
    #[derive(Default)]
    struct Tally {
        worlds: u64,
        /// Unknown cards of opponents that the sample placed in the right hand.
        overlap: f64,
        /// What a sampler blind to the hidden hands would give on average, and its variance.
        expected: f64,
        variance: f64,
    }

    struct Probe {
        inner: Heuristic,
        worlds: Determinizer,
        rng: dhumbal_game::rng::ChaChaSource,
        samples: u32,
        leaky: bool,
        tally: Tally,
    }

    impl Probe {
        fn check(&mut self, obs: &Observation<'_>) {
            let n = obs.players();
            let truth = obs.oracle.hands();
            assert_eq!(truth.len(), n, "the probe sees the true hands");
            // Exactly: the same stream gives the same world whatever the hidden cards are. Here
            // the other seats' hands are swapped around (and the stock is not even there).
            if !self.leaky {
                let mut other: Vec<Hand> = truth.to_vec();
                other.rotate_left(1);
                let swapped = Observation {
                    oracle: Oracle::new(&other),
                    ..*obs
                };
                let mut a = self.rng.clone();
                let mut b = self.rng.clone();
                let wa = self.worlds.sample(obs, &mut a, false).unwrap();
                let wb = self.worlds.sample(&swapped, &mut b, false).unwrap();
                assert_eq!(
                    format!("{wa:?}"),
                    format!("{wb:?}"),
                    "a sample depends on hidden cards"
                );
            }
            for _ in 0..self.samples {
                let w = self.worlds.sample(obs, &mut self.rng, self.leaky).unwrap();
                assert_eq!(contradiction(obs, &w), None);
                // How many of each opponent's hidden cards the sample got right, against the
                // hypergeometric law of a sampler that never looked (exact before a reshuffle).
                if obs.restocked.is_some() {
                    self.tally.worlds += 1;
                    continue;
                }
                let placed_known: u32 = (0..n)
                    .filter(|&s| s != obs.seat)
                    .map(|s| obs.known[s].len())
                    .sum();
                let pool = (obs.stock_len as u32
                    + (0..n)
                        .filter(|&s| s != obs.seat)
                        .map(|s| u32::from(obs.hand_sizes[s]))
                        .sum::<u32>()
                    - placed_known) as f64;
                for s in (0..n).filter(|&s| s != obs.seat && obs.active[s]) {
                    let hidden = truth[s].to_set().difference(obs.known[s]);
                    let sampled = w.hand(s).to_set().difference(obs.known[s]);
                    let k = f64::from(hidden.len());
                    if k == 0.0 || pool <= 1.0 {
                        continue;
                    }
                    self.tally.overlap += f64::from(hidden.intersection(sampled).len());
                    // Draw k of `pool` cards, k of which are "right".
                    let p = k / pool;
                    self.tally.expected += k * p;
                    self.tally.variance += k * p * (1.0 - p) * (pool - k) / (pool - 1.0);
                }
                self.tally.worlds += 1;
            }
        }
    }

    impl Agent for Probe {
        fn name(&self) -> &str {
            "probe"
        }
        fn oracle(&self) -> bool {
            true
        }
        fn call(
            &mut self,
            obs: &Observation<'_>,
            rng: &mut dyn RandomSource,
        ) -> Result<bool, AgentError> {
            self.inner.call(obs, rng)
        }
        fn discard(
            &mut self,
            obs: &Observation<'_>,
            rng: &mut dyn RandomSource,
        ) -> Result<Discard, AgentError> {
            self.check(obs);
            self.inner.discard(obs, rng)
        }
        fn pick(
            &mut self,
            obs: &Observation<'_>,
            rng: &mut dyn RandomSource,
        ) -> Result<Pick, AgentError> {
            self.check(obs);
            self.inner.pick(obs, rng)
        }
    }

    /// Plays `deals` rounds of `preset` with a probe in every seat; returns the z-score of the
    /// overlap between sampled and true hidden cards.
    fn z_score(preset: Preset, deals: u64, leaky: bool) -> (f64, Tally) {
        let rules = Rules::new(preset.variant()).unwrap();
        let n = rules.players();
        let mut probes: Vec<Probe> = (0..n)
            .map(|seat| Probe {
                inner: Heuristic::paper(Style::ALL[seat % 4]),
                worlds: Determinizer::new(),
                rng: chacha_stream(99, Purpose::Agent(seat as u32), 7),
                samples: 4,
                leaky,
                tally: Tally::default(),
            })
            .collect();
        let mut table = Table::new(rules);
        for deal in 0..deals {
            let slots: Vec<u32> = (0..n as u32).collect();
            let mut streams = ChaChaStreams::new(5, deal, &slots);
            table
                .play_round(&mut probes, &mut streams, &mut ())
                .unwrap();
            if table.game_over() {
                table = Table::new(rules_of(preset));
            }
        }
        let mut t = Tally::default();
        for p in &probes {
            t.worlds += p.tally.worlds;
            t.overlap += p.tally.overlap;
            t.expected += p.tally.expected;
            t.variance += p.tally.variance;
        }
        ((t.overlap - t.expected) / t.variance.sqrt(), t)
    }

    fn rules_of(preset: Preset) -> Rules {
        Rules::new(preset.variant()).unwrap()
    }

    /// Sampled hidden cards are independent of the true hidden cards given the observation:
    /// the overlap matches the hypergeometric law of a sampler that never looked (|z| < 4 over
    /// tens of thousands of worlds), under the paper's rules and under real-play pick rules
    /// (where known cards matter). A sampler that looks (the oracle) fails the same test by far,
    /// so the test can fail.
    #[test]
    fn determinizations_do_not_leak_hidden_cards() {
        for preset in [Preset::Paper, Preset::Jhyap, Preset::Yaniv] {
            let (z, t) = z_score(preset, 150, false);
            assert!(t.worlds > 5_000, "{preset:?}: only {} worlds", t.worlds);
            assert!(
                z.abs() < 4.0,
                "{preset:?}: z = {z:.2} ({} right, {:.1} expected)",
                t.overlap,
                t.expected
            );
        }
        let (z, _) = z_score(Preset::Paper, 20, true);
        assert!(z > 50.0, "the leaky control should be caught: z = {z:.2}");
    }
}
