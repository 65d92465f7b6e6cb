//! The belief reads only what its seat observed, replays every history it fills in, and
//! puts more weight on the true hidden cards than a uniform sampler does.

use dhumbal_game::cards::Hand;
use dhumbal_game::decision::Oracle;
use dhumbal_game::rng::{ChaChaStreams, Purpose, RandomSource, chacha_stream};
use dhumbal_game::{Agent, AgentError, Discard, Observation, Pick, Preset, Rules, Table};

use super::*;
use crate::heuristic::Style;
use crate::{Heuristic, RandomAgent};

/// Plays as `inner` and, at each discard, weighs worlds with a belief whose model is the
/// opponents' own policy; tallies how many hidden cards the weighted worlds get right against
/// uniform worlds. Declares itself an oracle to score against the truth (the belief is handed
/// an observation without the hands).
struct Spy {
    inner: Heuristic,
    belief: Belief,
    worlds: Determinizer,
    rng: ChaChaSource,
    /// Over decisions with an opponent move seen: (weighted overlap, uniform overlap, count).
    weighted: f64,
    uniform: f64,
    decisions: u32,
}

impl Spy {
    fn check(&mut self, obs: &Observation<'_>) {
        let truth: Vec<Hand> = obs.oracle.hands().to_vec();
        let blind = Observation {
            oracle: Oracle::default(),
            ..*obs
        };
        let table = Table::from_parts(obs.rules.clone(), obs.standings, obs.active, obs.round);
        self.worlds.prepare(&blind, false).unwrap();
        // The same worlds and weights whatever the hidden cards are: the oracle's hands (here
        // even shown) change nothing.
        let mut a = self.rng.clone();
        let mut b = self.rng.clone();
        let ess = self.belief.weigh(&blind, &mut self.worlds, &mut a, &table);
        let weights = self.belief.cumulative.clone();
        let first = format!("{:?}", self.belief.worlds);
        let mut rotated = truth.clone();
        rotated.rotate_left(1);
        let shown = Observation {
            oracle: Oracle::new(&rotated),
            ..*obs
        };
        let ess_b = self.belief.weigh(&shown, &mut self.worlds, &mut b, &table);
        assert_eq!(
            ess.to_bits(),
            ess_b.to_bits(),
            "the weights read hidden cards"
        );
        assert_eq!(
            weights, self.belief.cumulative,
            "the weights read hidden cards"
        );
        assert_eq!(
            first,
            format!("{:?}", self.belief.worlds),
            "worlds read hidden cards"
        );
        self.rng = a;
        if self.belief.stats.last_uniform {
            return;
        }
        let total = *self.belief.cumulative.last().unwrap();
        let mut previous = 0.0;
        let (mut weighted, mut uniform) = (0.0, 0.0);
        let k = self.belief.worlds.len() as f64;
        for (world, &c) in self.belief.worlds.iter().zip(&self.belief.cumulative) {
            let w = (c - previous) / total;
            previous = c;
            let right: u32 = (0..obs.players())
                .filter(|&s| s != obs.seat)
                .map(|s| {
                    let hidden = truth[s].to_set().difference(obs.known[s]);
                    world.hand(s).to_set().intersection(hidden).len()
                })
                .sum();
            weighted += w * f64::from(right);
            uniform += f64::from(right) / k;
        }
        self.weighted += weighted;
        self.uniform += uniform;
        self.decisions += 1;
    }
}

impl Agent for Spy {
    fn name(&self) -> &str {
        "spy"
    }
    fn oracle(&self) -> bool {
        true
    }
    fn round_start(&mut self, _seat: usize, _standings: &[i64]) {
        self.belief.start_round();
    }
    fn witnesses(&self) -> bool {
        true
    }
    fn witness(&mut self, _seat: usize, event: &Event, drawn: Option<Card>) {
        self.belief.record(event, drawn);
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
        self.inner.pick(obs, rng)
    }
}

fn spy(style: Style, model: Rollout) -> Spy {
    Spy {
        inner: Heuristic::paper(style),
        belief: Belief::new(BeliefParams::default(), model, "model"),
        worlds: Determinizer::new(),
        rng: chacha_stream(17, Purpose::Agent(0), 1),
        weighted: 0.0,
        uniform: 0.0,
        decisions: 0,
    }
}

/// Plays `deals` rounds of `preset` heads-up or at four, the spy at seat 0 and `style` in the
/// other seats; the spy's belief models them as `model`.
fn play(preset: Preset, players: u8, deals: u64, style: Style, model: Rollout) -> Spy {
    let mut variant = preset.variant();
    variant.players = players;
    let rules = Rules::new(variant).unwrap();
    let mut spy = spy(Style::Balanced, model);
    let mut others: Vec<Heuristic> = (1..players).map(|_| Heuristic::paper(style)).collect();
    for deal in 0..deals {
        let mut table = Table::new(rules.clone());
        let slots: Vec<u32> = (0..u32::from(players)).collect();
        let mut streams = ChaChaStreams::new(3, deal, &slots);
        let mut seats: Vec<&mut dyn Agent> = vec![&mut spy];
        for o in others.iter_mut() {
            seats.push(o);
        }
        table.play_round(&mut seats, &mut streams, &mut ()).unwrap();
    }
    spy
}

/// Against opponents who play like the model, the weighted worlds get more hidden cards right
/// than uniform ones, and every history filled in replays (no failed world).
#[test]
fn the_model_s_likelihood_finds_the_hidden_cards() {
    for (preset, players) in [(Preset::Jhyap, 2), (Preset::Paper, 4)] {
        let aggressive = Heuristic::paper(Style::Aggressive);
        let spy = play(
            preset,
            players,
            60,
            Style::Aggressive,
            Rollout::Heuristic(aggressive),
        );
        let s = spy.belief.stats();
        assert_eq!(s.failed, 0, "{preset:?}: histories that did not replay");
        assert!(
            spy.decisions > 100,
            "{preset:?}: {} decisions",
            spy.decisions
        );
        let gain = (spy.weighted - spy.uniform) / f64::from(spy.decisions);
        assert!(
            gain > 0.1 && spy.weighted > 1.1 * spy.uniform,
            "{preset:?} x{players}: {:.3} more hidden cards right per decision ({:.2} vs {:.2})",
            gain,
            spy.weighted / f64::from(spy.decisions),
            spy.uniform / f64::from(spy.decisions)
        );
    }
}

/// A model that is not how the opponents play says less: random opponents modelled as
/// Aggressive are not found as well as Aggressive opponents are (the test can fail).
#[test]
fn a_wrong_model_finds_less() {
    let model = || Rollout::Heuristic(Heuristic::paper(Style::Aggressive));
    let right = play(Preset::Jhyap, 2, 60, Style::Aggressive, model());
    let mut variant = Preset::Jhyap.variant();
    variant.players = 2;
    let rules = Rules::new(variant).unwrap();
    let mut spy = spy(Style::Balanced, model());
    let mut random = RandomAgent::new("random");
    for deal in 0..60 {
        let mut table = Table::new(rules.clone());
        let mut streams = ChaChaStreams::new(3, deal, &[0, 1]);
        let mut seats: Vec<&mut dyn Agent> = vec![&mut spy, &mut random];
        table.play_round(&mut seats, &mut streams, &mut ()).unwrap();
    }
    assert_eq!(spy.belief.stats().failed, 0);
    let per = |s: &Spy| (s.weighted - s.uniform) / f64::from(s.decisions);
    assert!(
        per(&spy) < per(&right) / 2.0,
        "wrong model {:.3}, right model {:.3}",
        per(&spy),
        per(&right)
    );
}

/// Records what the engine tells a witness, and checks it against the hand it then holds.
struct Witness {
    inner: RandomAgent,
    own_draws: u32,
    others: u32,
    reshuffles: u32,
    last_drawn: Option<Card>,
}

impl Agent for Witness {
    fn name(&self) -> &str {
        "witness"
    }
    fn round_start(&mut self, _seat: usize, _standings: &[i64]) {
        self.last_drawn = None;
    }
    fn witnesses(&self) -> bool {
        true
    }
    fn witness(&mut self, seat: usize, event: &Event, drawn: Option<Card>) {
        match *event {
            Event::Took {
                seat: s,
                pick: Pick::Stock,
            } if s == seat => {
                assert!(drawn.is_some(), "its own draw comes with the card");
                self.own_draws += 1;
                self.last_drawn = drawn;
            }
            Event::Reshuffled => {
                assert_eq!(drawn, None, "a reshuffle shows no card");
                self.reshuffles += 1;
            }
            _ => {
                assert_eq!(drawn, None, "a card reached a seat that did not draw it");
                self.others += 1;
            }
        }
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
        if let Some(card) = self.last_drawn.take() {
            assert!(obs.hand.contains(card), "the card it was told it drew");
        }
        self.inner.discard(obs, rng)
    }
    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        self.inner.pick(obs, rng)
    }
}

/// Each seat hears every discard and pick; only the drawer learns the card it drew.
#[test]
fn a_witness_hears_every_move_and_only_its_own_draws() {
    let rules = Rules::new(Preset::Paper.variant()).unwrap();
    let mut seats: Vec<Witness> = (0..4)
        .map(|_| Witness {
            inner: RandomAgent::new("random"),
            own_draws: 0,
            others: 0,
            reshuffles: 0,
            last_drawn: None,
        })
        .collect();
    let mut turns = 0;
    for deal in 0..20 {
        // `play_round` gives no round notices: a draw heard last round is forgotten here.
        seats.iter_mut().for_each(|w| w.last_drawn = None);
        let mut table = Table::new(rules.clone());
        let mut streams = ChaChaStreams::new(9, deal, &[0, 1, 2, 3]);
        turns += table
            .play_round(&mut seats, &mut streams, &mut ())
            .unwrap()
            .turns;
    }
    let heard: u32 = seats.iter().map(|w| w.own_draws + w.others).sum();
    assert!(seats.iter().all(|w| w.own_draws > 0));
    // Two events a turn (a discard and a pick) for each of the four seats, less the last
    // turn of a round (a call, or a discard that ends it); a reshuffle is heard by all.
    assert!(
        heard >= 4 * 2 * (turns - 20) && heard <= 4 * 2 * turns,
        "{heard} for {turns}"
    );
    let reshuffles = seats[0].reshuffles;
    assert!(seats.iter().all(|w| w.reshuffles == reshuffles));
}
