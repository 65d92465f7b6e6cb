//! Golden tests: seed to deal for the ChaCha streams, so that a dependency upgrade cannot
//! silently change results. If one of these fails after an upgrade, results are no longer
//! comparable with earlier runs: pin the old version, do not update the expectations.

use dhumbal::agents::{Heuristic, Style};
use dhumbal::game::{Agent, Event, Observer, Preset, RoundState, Rules, Table};
use dhumbal::rng::{
    ChaChaStreams, Purpose, PyRandom, PythonStreams, RandomSource, Streams, chacha_stream, deal_id,
};

#[derive(Default)]
struct FirstDeal(Vec<String>);

impl Observer for FirstDeal {
    fn event(&mut self, s: &RoundState, e: &Event) {
        if matches!(e, Event::Dealt) && self.0.is_empty() {
            self.0 = (0..4).map(|seat| s.hand(seat).to_string()).collect();
            self.0.push(format!("discard {}", s.pile()));
        }
    }
}

fn deal(seed: u64, deal: u64, agents: &mut [Box<dyn Agent>]) -> Vec<String> {
    let mut table = Table::new(Rules::preset(Preset::Paper));
    let mut streams = ChaChaStreams::new(seed, deal, &[0, 1, 2, 3]);
    let mut first = FirstDeal::default();
    table.play_round(agents, &mut streams, &mut first).unwrap();
    first.0
}

fn heuristics() -> Vec<Box<dyn Agent>> {
    Style::ALL
        .iter()
        .map(|&s| Box::new(Heuristic::paper(s)) as Box<dyn Agent>)
        .collect()
}

#[test]
fn raw_words_of_the_streams() {
    let words = |mut s: dhumbal::rng::ChaChaSource| [s.next_u32(), s.next_u32(), s.next_u32()];
    assert_eq!(
        words(chacha_stream(42, Purpose::Deal, 0)),
        GOLDEN_DEAL_WORDS
    );
    assert_eq!(
        words(chacha_stream(42, Purpose::Deal, deal_id(3, 7))),
        GOLDEN_DEAL_3_7_WORDS
    );
    assert_eq!(
        words(chacha_stream(42, Purpose::Agent(2), 0)),
        GOLDEN_AGENT_WORDS
    );
}

#[test]
fn seed_to_deal() {
    assert_eq!(deal(42, deal_id(0, 0), &mut heuristics()), GOLDEN_DEAL_42_0);
    assert_eq!(
        deal(42, deal_id(5, 17), &mut heuristics()),
        GOLDEN_DEAL_42_5_17
    );
    assert_eq!(deal(7, deal_id(0, 0), &mut heuristics()), GOLDEN_DEAL_7_0);
}

/// Every event of a round, with the hands and the stock as they were after it.
#[derive(Default)]
struct Log(Vec<String>);

impl Observer for Log {
    fn event(&mut self, s: &RoundState, e: &Event) {
        let hands: Vec<String> = (0..4).map(|seat| s.hand(seat).to_string()).collect();
        self.0.push(format!(
            "{e:?} {} {} {}",
            hands.join(" "),
            s.pile(),
            s.stock()
        ));
    }
}

/// A paper heuristic that never calls and always draws from the stock, decides with a private generator of its own and draws
/// `extra` words from the stream the engine hands it, ignoring them: the same play whatever
/// `extra` is, a different use of the agent's stream.
struct Noisy {
    inner: Heuristic,
    own: PyRandom,
    extra: u32,
}

impl Agent for Noisy {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn call(
        &mut self,
        obs: &dhumbal::game::Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, dhumbal::game::AgentError> {
        // Never calls, so that rounds run long enough to reshuffle the pile.
        (0..self.extra).for_each(|_| _ = rng.next_u32());
        self.inner.call(obs, &mut self.own).map(|_| false)
    }
    fn discard(
        &mut self,
        obs: &dhumbal::game::Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<dhumbal::game::Discard, dhumbal::game::AgentError> {
        (0..self.extra).for_each(|_| _ = rng.next_u32());
        self.inner.discard(obs, &mut self.own)
    }
    fn pick(
        &mut self,
        obs: &dhumbal::game::Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<dhumbal::game::Pick, dhumbal::game::AgentError> {
        // Always draws, so that the stock runs out.
        (0..self.extra).for_each(|_| _ = rng.next_u32());
        self.inner
            .pick(obs, &mut self.own)
            .map(|_| dhumbal::game::Pick::Stock)
    }
}

/// Every event of deal `deal`, played by the paper's four heuristics drawing `extra` words
/// before each decision, the streams made by `streams`.
fn whole_round(deal: u64, extra: u32, streams: &mut dyn Streams) -> (Vec<String>, u16) {
    let mut agents: Vec<Noisy> = Style::ALL
        .iter()
        .enumerate()
        .map(|(seat, &s)| Noisy {
            inner: Heuristic::paper(s),
            own: PyRandom::new(deal * 4 + seat as u64),
            extra,
        })
        .collect();
    // Common play: an empty hand draws rather than ends the round, and 200 turns.
    let mut table = Table::new(Rules::preset(Preset::Jhyap));
    let mut log = Log::default();
    let outcome = table.play_round(&mut agents, streams, &mut log).unwrap();
    assert!(!log.0.is_empty(), "deal {deal}: no events");
    (log.0, outcome.reshuffles)
}

#[test]
fn agent_randomness_never_moves_the_deal() {
    // Agents that use their streams differently, playing the same cards: every event of the
    // round (reshuffles included, which draw from the deal stream after agents have drawn
    // from theirs) must be the same.
    let mut reshuffles = 0;
    for d in 0..200 {
        let (quiet, shuffled) = whole_round(d, 0, &mut ChaChaStreams::new(9, d, &[0, 1, 2, 3]));
        let (noisy, _) = whole_round(d, 3, &mut ChaChaStreams::new(9, d, &[0, 1, 2, 3]));
        if let Some(i) = (0..quiet.len()).find(|&i| quiet.get(i) != noisy.get(i)) {
            panic!(
                "deal {d}: an agent's draws moved the deal at event {i}:\n  {}\n  {:?}",
                quiet[i],
                noisy.get(i)
            );
        }
        assert_eq!(quiet.len(), noisy.len(), "deal {d}");
        let told = quiet.iter().filter(|e| e.starts_with("Reshuffled")).count();
        assert_eq!(
            told,
            usize::from(shuffled),
            "deal {d}: observers not told of each reshuffle"
        );
        reshuffles += shuffled;
    }
    assert!(
        reshuffles > 0,
        "no deal reshuffled: the check above saw only the first deal"
    );
    // The same comparison is sensitive: with the paper's one shared stream, the agents' draws
    // do move the reshuffles.
    let moved = (0..200).filter(|&d| {
        let (quiet, _) = whole_round(d, 0, &mut PythonStreams(PyRandom::new(d)));
        let (noisy, _) = whole_round(d, 3, &mut PythonStreams(PyRandom::new(d)));
        quiet != noisy
    });
    assert!(
        moved.count() > 0,
        "a shared stream changed nothing: the comparison cannot fail"
    );
}

/// ChaCha8 as D. J. Bernstein defines it (64-bit block counter in words 12-13, 64-bit nonce
/// in words 14-15), written from the specification: the reference for `chacha_stream`.
fn chacha8_block(key: &[u32; 8], counter: u64, nonce: u64) -> [u32; 16] {
    let mut x = [0u32; 16];
    x[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    x[4..12].copy_from_slice(key);
    x[12] = counter as u32;
    x[13] = (counter >> 32) as u32;
    x[14] = nonce as u32;
    x[15] = (nonce >> 32) as u32;
    let input = x;
    let qr = |x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize| {
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(7);
    };
    for _ in 0..4 {
        qr(&mut x, 0, 4, 8, 12);
        qr(&mut x, 1, 5, 9, 13);
        qr(&mut x, 2, 6, 10, 14);
        qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15);
        qr(&mut x, 1, 6, 11, 12);
        qr(&mut x, 2, 7, 8, 13);
        qr(&mut x, 3, 4, 9, 14);
    }
    std::array::from_fn(|i| x[i].wrapping_add(input[i]))
}

/// SplitMix64 (Steele, Lea and Flood), as `chacha_stream` keys its generators.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn chacha8_reference_vector() {
    // The published ChaCha8 keystream for an all-zero 256-bit key and IV (test vector TC1 of
    // draft-strombergson-chacha-test-vectors), first block, as little-endian words.
    let tc1 = "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e\
               984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42";
    let bytes: Vec<u8> = (0..64)
        .map(|i| u8::from_str_radix(&tc1[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(chacha8_block(&[0; 8], 0, 0).to_vec(), words);
}

#[test]
fn chacha_stream_is_chacha8_keyed_by_splitmix64() {
    // The frozen derivation, recomputed from the two specifications above: key = four
    // SplitMix64 words of `seed ^ domain`, stream (nonce) = deal id, blocks in order.
    let cases = [
        (42u64, Purpose::Deal, 0x6465_616C_0000_0000u64, 0u64),
        (42, Purpose::Deal, 0x6465_616C_0000_0000, deal_id(3, 7)),
        (42, Purpose::Agent(2), 0x6167_6E74_0000_0002, 0),
        (
            7,
            Purpose::Agent(0),
            0x6167_6E74_0000_0000,
            deal_id(1 << 40, 5),
        ),
    ];
    for (seed, purpose, domain, deal) in cases {
        let mut state = seed ^ domain;
        let key: [u32; 8] = {
            let k: Vec<u32> = (0..4)
                .flat_map(|_| {
                    let w = splitmix64(&mut state);
                    [w as u32, (w >> 32) as u32]
                })
                .collect();
            k.try_into().unwrap()
        };
        let want: Vec<u32> = (0..3)
            .flat_map(|block| chacha8_block(&key, block, deal))
            .collect();
        let mut stream = chacha_stream(seed, purpose, deal);
        let got: Vec<u32> = (0..want.len()).map(|_| stream.next_u32()).collect();
        assert_eq!(got, want, "{purpose:?} seed {seed} deal {deal}");
    }
}

const GOLDEN_DEAL_WORDS: [u32; 3] = [2586744493, 4052177298, 358284509];
const GOLDEN_DEAL_3_7_WORDS: [u32; 3] = [2520826948, 4112535605, 3246150524];
const GOLDEN_AGENT_WORDS: [u32; 3] = [2596683438, 1212386626, 1166613994];
const GOLDEN_DEAL_42_0: [&str; 5] = [
    "[6♦ 2♥ 4♥ 6♠ J♥]",
    "[10♣ 4♠ 8♥ 7♦ 8♠]",
    "[5♠ 3♠ 4♦ 5♥ K♠]",
    "[7♣ 7♥ 3♥ 2♠ 3♣]",
    "discard [10♥]",
];
const GOLDEN_DEAL_42_5_17: [&str; 5] = [
    "[8♥ 3♦ K♣ A♠ 9♥]",
    "[K♦ J♦ K♥ 4♠ A♣]",
    "[7♦ 6♣ 6♥ 7♥ K♠]",
    "[5♥ 4♦ 2♦ 10♥ 4♥]",
    "discard [5♦]",
];
const GOLDEN_DEAL_7_0: [&str; 5] = [
    "[7♠ K♦ 6♥ 9♠ 7♣]",
    "[10♦ K♠ 2♠ 10♥ 3♦]",
    "[A♥ 5♥ J♦ 5♣ Q♣]",
    "[J♣ 7♦ K♥ 2♣ 10♣]",
    "discard [4♦]",
];
