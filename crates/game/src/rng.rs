//! Random streams.
//!
//! Everything random in a round (the shuffle, a random starter, reshuffles, and every agent's
//! choices) draws 32-bit words from a [`RandomSource`]. The sampling routines on top of those
//! words are ours, written once and frozen, so a dependency upgrade cannot change results:
//! they are CPython's (`random()`, `getrandbits`, `_randbelow`, `shuffle`), which also makes
//! the Python-compatible generator bit-exact with the paper's run.
//!
//! Two generator families:
//! - [`ChaChaStreams`] (the default): every deal has its own ChaCha8 stream derived from
//!   (scenario seed, deal id), and every agent its own stream derived from (scenario seed,
//!   agent slot, deal id). Agent randomness never moves the deal stream, and a deal's result
//!   does not depend on which thread plays it or in what order.
//! - [`PythonStreams`]: one MT19937 stream seeded as CPython's `random.seed(n)`, shared by the
//!   deck and the agents in the order the paper's code consumes it. Only for reproduction.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use crate::cards::Card;
use crate::rules::MAX_PLAYERS;

/// A source of 32-bit words with CPython's sampling routines on top.
pub trait RandomSource {
    fn next_u32(&mut self) -> u32;

    /// A float in [0, 1) with 53 random bits (CPython's `random()`).
    fn random(&mut self) -> f64 {
        let a = u64::from(self.next_u32() >> 5);
        let b = u64::from(self.next_u32() >> 6);
        (a as f64 * 67_108_864.0 + b as f64) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `k` random bits, 1 ≤ k ≤ 32 (CPython's `getrandbits` for small `k`).
    fn getrandbits(&mut self, k: u32) -> u32 {
        debug_assert!((1..=32).contains(&k));
        self.next_u32() >> (32 - k)
    }

    /// Uniform in `0..n`, n ≥ 1, by rejection (CPython's `_randbelow`).
    fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        let k = 32 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// Shuffles cards in place exactly as CPython's `random.shuffle`. (A trait method, so that
    /// one dynamic call covers the whole shuffle.)
    fn shuffle(&mut self, cards: &mut [Card]) {
        for i in (1..cards.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            cards.swap(i, j);
        }
    }

    /// A fair coin (CPython's `random.choice([True, False])`: `True` on 0).
    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }
}

/// CPython's `random.Random`: MT19937 seeded with `init_by_array` of the seed's 32-bit words.
#[derive(Clone)]
pub struct PyRandom(rand_mt::Mt);

impl PyRandom {
    /// As `random.seed(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> PyRandom {
        let lo = seed as u32;
        let hi = (seed >> 32) as u32;
        let key: &[u32] = if hi == 0 { &[lo] } else { &[lo, hi] };
        PyRandom(rand_mt::Mt::new_with_key(key.iter().copied()))
    }
}

impl RandomSource for PyRandom {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
}

/// A ChaCha8 stream.
#[derive(Clone)]
pub struct ChaChaSource(ChaCha8Rng);

impl RandomSource for ChaChaSource {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }

    /// Uniform in `0..n` by Lemire's multiply-and-reject method ("Fast random integer
    /// generation in an interval", 2019): one word per draw almost always, where CPython's
    /// bit-mask rejection needs 1.4 on average for small `n`. ChaCha streams are ours, so they
    /// need not follow CPython; the golden tests freeze this choice.
    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        let mut m = u64::from(self.next_u32()) * u64::from(n);
        if (m as u32) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(n);
            }
        }
        (m >> 32) as u32
    }
}

/// What a stream is for; part of the key derivation so that streams never overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    Deal,
    /// An agent, by its slot in the scenario (not its seat, so that it keeps its stream when
    /// seats rotate).
    Agent(u32),
    /// Random seating of a session or game.
    Seating,
    /// A search agent's simulations for one decision, keyed by words drawn from the agent's
    /// own stream (so the search stays a function of that stream).
    Search,
    /// A training run's own draws (minibatches, replay samples), keyed by update number.
    Learn,
}

/// The ChaCha8 stream for (seed, purpose, deal id).
///
/// Key: four SplitMix64 words from `seed ^ domain`, where the domain separates the deal stream
/// from each agent slot. Stream number: the deal id. Frozen: the golden tests pin its output.
pub fn chacha_stream(seed: u64, purpose: Purpose, deal: u64) -> ChaChaSource {
    let domain = match purpose {
        Purpose::Deal => 0x6465_616C_0000_0000u64, // "deal"
        Purpose::Agent(slot) => 0x6167_6E74_0000_0000u64 | u64::from(slot), // "agnt"
        Purpose::Seating => 0x7365_6174_0000_0000u64, // "seat"
        Purpose::Search => 0x7372_6368_0000_0000u64, // "srch"
        Purpose::Learn => 0x6c65_726e_0000_0000u64, // "lern"
    };
    let mut state = seed ^ domain;
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        chunk.copy_from_slice(&crate::hash::splitmix64(&mut state).to_le_bytes());
    }
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(deal);
    ChaChaSource(rng)
}

/// The deal id of round `round` of game (or session) `game`: rounds of one game get distinct
/// streams, so every deal can be replayed on its own.
pub fn deal_id(game: u64, round: u32) -> u64 {
    assert!(game < 1 << 44 && round < 1 << 20, "deal index out of range");
    game << 20 | u64::from(round)
}

/// Where the engine gets its randomness during one round.
pub trait Streams {
    /// The deal's stream: shuffle, random starter, reshuffles.
    fn deal(&mut self) -> &mut dyn RandomSource;
    /// The stream of the agent in `seat`.
    fn agent(&mut self, seat: usize) -> &mut dyn RandomSource;
}

/// An agent's ChaCha8 stream, keyed on first use: most agents never draw, and keying a
/// stream costs more than a round's worth of decisions.
struct LazyStream {
    seed: u64,
    purpose: Purpose,
    deal: u64,
    rng: Option<ChaChaSource>,
    /// `rng` is keyed but still at an earlier deal's stream (moved on first use).
    stale: bool,
}

impl RandomSource for LazyStream {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        let (seed, purpose, deal) = (self.seed, self.purpose, self.deal);
        let rng = self
            .rng
            .get_or_insert_with(|| chacha_stream(seed, purpose, deal));
        if self.stale {
            restart(rng, deal);
            self.stale = false;
        }
        rng.next_u32()
    }
}

/// One deal stream and one stream per agent, all ChaCha8.
pub struct ChaChaStreams {
    deal: ChaChaSource,
    agents: [LazyStream; MAX_PLAYERS],
}

impl ChaChaStreams {
    /// Streams for one deal; `slots[seat]` is the scenario slot of the agent in that seat.
    pub fn new(seed: u64, deal_id: u64, slots: &[u32]) -> ChaChaStreams {
        ChaChaStreams {
            deal: chacha_stream(seed, Purpose::Deal, deal_id),
            agents: std::array::from_fn(|seat| LazyStream {
                seed,
                purpose: Purpose::Agent(slots.get(seat).copied().unwrap_or(seat as u32)),
                deal: deal_id,
                rng: None,
                stale: false,
            }),
        }
    }

    /// Moves to deal `deal_id` of the same seed and seats: the same streams as
    /// `ChaChaStreams::new(seed, deal_id, slots)`, without keying the generators again
    /// (a deal's stream differs from another's only in its ChaCha stream number).
    pub fn set_deal(&mut self, deal_id: u64) {
        restart(&mut self.deal, deal_id);
        for agent in &mut self.agents {
            agent.deal = deal_id;
            agent.stale = agent.rng.is_some();
        }
    }
}

/// Rewinds a stream to the start of stream number `stream` (nothing is generated until the
/// next draw).
fn restart(rng: &mut ChaChaSource, stream: u64) {
    rng.0.set_word_pos(0);
    rng.0.set_stream(stream);
}

impl Streams for ChaChaStreams {
    fn deal(&mut self) -> &mut dyn RandomSource {
        &mut self.deal
    }

    fn agent(&mut self, seat: usize) -> &mut dyn RandomSource {
        &mut self.agents[seat]
    }
}

/// One CPython stream shared by everything, as in the paper's code.
pub struct PythonStreams(pub PyRandom);

impl Streams for PythonStreams {
    fn deal(&mut self) -> &mut dyn RandomSource {
        &mut self.0
    }

    fn agent(&mut self, _seat: usize) -> &mut dyn RandomSource {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_seed_42_matches_cpython() {
        let mut r = PyRandom::new(42);
        assert_eq!(r.random(), 0.6394267984578837);
        let mut r = PyRandom::new(42);
        assert_eq!(
            [r.next_u32(), r.next_u32(), r.next_u32()],
            [2746317213, 478163327, 107420369]
        );
    }

    /// CPython's `random.seed(7); [random.randrange(n) for n in range(1, 100)]`: its
    /// `_randbelow` draws `n.bit_length()` bits and rejects values >= n, so a draw can take
    /// several words; a modulo (or multiply-shift) sampler gives other values from the
    /// first rejection on.
    #[test]
    fn below_is_in_range_and_uses_rejection() {
        let mut r = PyRandom::new(7);
        let drawn: Vec<u32> = (1..100).map(|n| r.below(n)).collect();
        assert!(drawn.iter().zip(1..100).all(|(&d, n)| d < n));
        assert_eq!(
            drawn,
            [
                0, 0, 1, 0, 0, 4, 0, 5, 0, 8, 3, 0, 1, 6, 6, 2, 7, 2, 17, 13, 1, 18, 3, 7, 20, 20,
                18, 1, 18, 18, 12, 3, 14, 2, 8, 18, 26, 9, 34, 7, 36, 19, 35, 43, 11, 6, 37, 36,
                40, 12, 23, 6, 35, 45, 4, 36, 3, 39, 13, 31, 43, 34, 27, 40, 59, 58, 46, 38, 31,
                23, 31, 10, 38, 67, 63, 43, 57, 36, 77, 9, 15, 65, 53, 21, 43, 19, 62, 53, 5, 85,
                9, 71, 73, 40, 43, 88, 44, 76, 63
            ]
        );
    }

    #[test]
    fn streams_are_independent_of_creation_order() {
        let mut a = ChaChaStreams::new(5, 9, &[0, 1]);
        let mut b = ChaChaStreams::new(5, 9, &[0, 1]);
        let x = a.agent(1).next_u32();
        let _ = b.agent(0).next_u32();
        let _ = b.deal().next_u32();
        assert_eq!(b.agent(1).next_u32(), x);
        assert_ne!(
            chacha_stream(5, Purpose::Deal, 9).next_u32(),
            chacha_stream(5, Purpose::Deal, 10).next_u32()
        );
    }

    /// Moving a used set of streams to another deal gives exactly a fresh set's words.
    #[test]
    fn set_deal_equals_fresh_streams() {
        let slots = [3, 0, 2];
        let mut reused = ChaChaStreams::new(11, 0, &slots);
        for deal in [0, 1, 7, 1 << 20, 3] {
            reused.set_deal(deal);
            let mut fresh = ChaChaStreams::new(11, deal, &slots);
            // Uneven draws leave the reused streams mid-block before the next deal.
            for k in 0..(70 + deal as usize % 5) {
                assert_eq!(
                    reused.deal().next_u32(),
                    fresh.deal().next_u32(),
                    "deal {deal}"
                );
                if k % 3 == 0 {
                    let seat = k % slots.len();
                    assert_eq!(reused.agent(seat).next_u32(), fresh.agent(seat).next_u32());
                }
            }
        }
    }
}
