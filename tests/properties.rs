//! Property tests over random rule variants, seeds and agents: every card is in exactly one
//! place at all times, coins are conserved, points only grow, hands never grow past the deal,
//! and an illegal action is refused with an error naming the agent, never applied.

use dhumbal::agents::search::determinize::{Determinizer, contradiction};
use dhumbal::agents::{Heuristic, RandomAgent, Rollout, SearchAgent, SearchParams, Style};
use dhumbal::game::rules::*;
use dhumbal::game::{
    Agent, AgentError, CardSet, Discard, Event, Observation, Observer, Pick, PlayError, RoundState,
    Rules, Table,
};
use dhumbal::rng::{ChaChaStreams, Purpose, chacha_stream, deal_id};
use proptest::prelude::*;

mod common;
use common::Probe;

fn variant_strategy() -> impl Strategy<Value = Variant> {
    let table = (
        2u8..=8,
        1u8..=7,
        any::<bool>(),
        0u8..=2,
        0u8..=5,
        any::<bool>(),
    );
    let discards = (any::<bool>(), any::<bool>(), 3u8..=4, any::<bool>());
    let call = (0u32..=20, any::<bool>(), any::<bool>(), any::<bool>());
    let scoring = (
        any::<bool>(),
        proptest::option::of(1u32..=60),
        0u32..=40,
        any::<bool>(),
        any::<bool>(),
        30u32..=150,
        any::<bool>(),
    );
    let flow = (
        0u8..=3,
        any::<bool>(),
        1u32..=150,
        0u8..=2,
        any::<bool>(),
        0u8..=4,
        any::<bool>(),
    );
    (table, discards, call, scoring, flow).prop_map(|(t, d, c, s, f)| Variant {
        players: t.0,
        // Keep the deal within the deck so that most cases are valid variants.
        hand_size: t.1.min(50 / t.0),
        initial_discard: t.2,
        deck: DeckRules {
            jokers: t.3,
            joker_value: t.4,
            face_values: if t.5 {
                FaceValues::Rank
            } else {
                FaceValues::Ten
            },
            ranks: FULL_RANKS,
            suits: FULL_SUITS,
        },
        discards: DiscardRules {
            sets: d.0,
            runs: d.1,
            min_run: d.2,
            ace_high: d.3,
        },
        call: CallRules {
            threshold: CallThreshold::Fixed(c.0),
            over_threshold: if c.1 {
                OverCall::Forbidden
            } else {
                OverCall::Penalised
            },
            caller_wins_ties: c.2,
            tie_break: if c.3 {
                TieBreak::LowestSeat
            } else {
                TieBreak::AfterCaller
            },
            over_threshold_penalty: s.2 / 2,
        },
        scoring: if s.0 {
            Scoring::Coins(CoinRules {
                starting_coins: 1000,
                cap: s.1,
                failed_call_penalty: s.2,
            })
        } else {
            Scoring::Points(PointRules {
                failed_call_penalty: s.2,
                failed_caller_adds_hand: s.3,
                failed_call_others: if s.4 {
                    FailedCallOthers::ScoreHand
                } else {
                    FailedCallOthers::Zero
                },
                limit: s.5,
                elimination: if s.6 {
                    Elimination::AtLimit
                } else {
                    Elimination::AboveLimit
                },
                max_rounds: 200,
            })
        },
        pick: match f.0 {
            0 => PickRule::OwnLastDiscard,
            1 => PickRule::PreviousDiscard(SetPick::Top),
            2 => PickRule::PreviousDiscard(SetPick::Ends),
            _ => PickRule::PreviousDiscard(SetPick::Any),
        },
        stock: if f.1 {
            StockRule::Reshuffle
        } else {
            StockRule::EndRound
        },
        turn_limit: f.2,
        no_call_end: [
            NoCallEnd::FirstMinimumCalls,
            NoCallEnd::LowestWins,
            NoCallEnd::Void,
        ][f.3 as usize],
        empty_hand: if f.4 {
            EmptyHand::WinsAsCall
        } else {
            EmptyHand::Draws
        },
        starter: [
            Starter::Seat0,
            Starter::Rotate,
            Starter::Random,
            Starter::Winner,
            Starter::Loser,
        ][f.5 as usize],
        random_first_starter: f.6,
    })
}

/// The variants of [`variant_strategy`] on a smaller deck (1-13 ranks of 1-4 suits), cut to
/// what the deck can deal: fewer players and cards where it must, no runs where the deck has
/// fewer ranks than a run.
fn small_deck_strategy() -> impl Strategy<Value = Variant> {
    (variant_strategy(), 1u8..=13, 1u8..=4).prop_map(|(mut v, ranks, suits)| {
        v.deck.ranks = ranks;
        v.deck.suits = suits;
        let spare = u32::from(v.initial_discard) + 1;
        let len = |v: &Variant| {
            u32::from(v.deck.ranks) * u32::from(v.deck.suits) + u32::from(v.deck.jokers)
        };
        // Two players with a card each, the face-up card and one to draw.
        while len(&v) < 2 + spare {
            v.deck.ranks += 1;
        }
        let deal = len(&v) - spare;
        v.players = v.players.min(deal.min(8) as u8);
        v.hand_size = v.hand_size.min((deal / u32::from(v.players)) as u8).max(1);
        if v.discards.min_run > v.deck.ranks {
            v.discards.runs = false;
        }
        v
    })
}

fn agent(kind: u8, seat: usize) -> Box<dyn Agent> {
    match kind % 7 {
        0 => Box::new(RandomAgent::new(format!("random{seat}"))),
        5 => Box::new(search(seat, false)),
        6 => Box::new(search(seat, true)),
        k => Box::new(Heuristic::paper(Style::ALL[k as usize - 1])),
    }
}

/// A small search agent (ISMCTS, or the paper's MCTS as an oracle): it must play only legal
/// moves under every variant too.
fn search(seat: usize, oracle_mcts: bool) -> SearchAgent {
    let mut p = if oracle_mcts {
        SearchParams::mcts()
    } else {
        SearchParams::ismcts()
    };
    p.iterations = 12;
    p.oracle = oracle_mcts;
    p.rollout_turns = 6;
    SearchAgent::new(format!("search{seat}"), p, Rollout::Random)
}

/// Checks card conservation and hand limits after every event.
struct Invariants {
    deck: CardSet,
    deck_len: usize,
    hand_size: usize,
    seats: usize,
    events: usize,
}

impl Observer for Invariants {
    fn event(&mut self, s: &RoundState, _event: &Event) {
        self.events += 1;
        let mut all = s.stock().to_set();
        let mut total = s.stock().len();
        for zone in [s.pile().to_set()]
            .into_iter()
            .chain((0..self.seats).map(|seat| s.hand(seat).to_set()))
        {
            assert!(all.intersection(zone).is_empty(), "a card is in two places");
            all = all.union(zone);
            total += zone.len() as usize;
        }
        let places = s.stock().len()
            + s.pile().len()
            + (0..self.seats)
                .map(|seat| s.hand(seat).len())
                .sum::<usize>();
        assert_eq!(places, self.deck_len, "a card was lost or duplicated");
        assert_eq!(all, self.deck, "the cards in play are not the deck");
        assert_eq!(total, self.deck_len);
        for seat in 0..self.seats {
            assert!(
                s.hand(seat).len() <= self.hand_size,
                "a hand grew past the deal"
            );
            assert!(
                s.known(seat).difference(s.hand(seat).to_set()).is_empty(),
                "known card not in hand"
            );
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(200))]

    /// Every sampled world respects hand sizes, known cards, the pile and the stock size of
    /// the observation it came from, under random variants (reshuffles, pickups, eliminations).
    #[test]
    fn determinizations_respect_what_was_observed(variant in variant_strategy(), seed in any::<u64>()) {
        determinizations_fit(variant, seed)?;
    }

    /// The same on small decks, whose cards are not the ids below the deck's length.
    #[test]
    fn determinizations_respect_what_was_observed_on_small_decks(variant in small_deck_strategy(), seed in any::<u64>()) {
        determinizations_fit(variant, seed)?;
    }

    #[test]
    fn rounds_keep_every_invariant(variant in variant_strategy(), seed in any::<u64>(), kinds in proptest::collection::vec(0u8..7, 8)) {
        rounds_keep_invariants(variant, seed, &kinds)?;
    }

    /// Every agent plays legally on small decks (down to a single rank or suit), and every
    /// invariant holds.
    #[test]
    fn small_deck_rounds_keep_every_invariant(variant in small_deck_strategy(), seed in any::<u64>(), kinds in proptest::collection::vec(0u8..7, 8)) {
        rounds_keep_invariants(variant, seed, &kinds)?;
    }

    #[test]
    fn illegal_actions_are_refused_and_never_applied(seed in any::<u64>(), mode in 0u8..4, chaos_seat in 0usize..4) {
        let rules = Rules::preset(Preset::Paper);
        let mut agents: Vec<Box<dyn Agent>> = (0..4).map(|s| agent(s as u8 + 1, s)).collect();
        agents[chaos_seat] = Box::new(Cheat { mode });
        let mut table = Table::new(rules);
        let mut streams = ChaChaStreams::new(seed, 0, &[0, 1, 2, 3]);
        let before = table.standings().to_vec();
        let err = match table.play_round(&mut agents, &mut streams, &mut ()) {
            Err(e) => e,
            // The round ended before the cheat's turn (a seat before it called at once):
            // nothing to refuse, as long as the cheat never decided.
            Ok(o) => {
                prop_assert_eq!(o.decisions[chaos_seat], 0, "the cheat decided unrefused");
                return Ok(());
            }
        };
        let msg = err.to_string();
        prop_assert!(msg.contains("'cheat'"), "{}", msg);
        prop_assert!(msg.contains(&format!("seat {chaos_seat}")), "{}", msg);
        match (mode, &err) {
            (0..=2, PlayError::IllegalDiscard { .. }) | (3, PlayError::IllegalPick { .. }) => {}
            _ => prop_assert!(false, "unexpected error {err:?}"),
        }
        prop_assert_eq!(table.standings(), &before[..]);
        prop_assert_eq!(table.rounds_played(), 0);
    }
}

/// Proposes an illegal action of one kind.
struct Cheat {
    mode: u8,
}

impl Agent for Cheat {
    fn name(&self) -> &str {
        "cheat"
    }

    common::decisions!(self, obs, rng =>
        call { Ok(false) }
        discard {
            let hand = obs.hand.as_slice();
            let mut d = Discard::new();
            match self.mode {
                // A card it does not hold.
                0 => d.push(obs.unseen().iter().next().unwrap()),
                // Nothing at all.
                1 => {}
                // Its whole hand: never a legal set or run in the paper's 5-card deal here, or
                // one card twice when that happens to be legal.
                2 => {
                    for &c in hand {
                        d.push(c);
                    }
                    if dhumbal::game::classify(obs.rules, hand, d.as_slice()).is_ok() {
                        d.clear();
                        d.push(hand[0]);
                        d.push(hand[0]);
                    }
                }
                // A legal single (the pick will cheat).
                _ => d.push(hand[0]),
            }
            Ok(d)
        }
        // The initial face-up card, which the paper's rule never offers.
        pick { Ok(Pick::Pile(obs.pile[0])) }
    );
}

#[test]
fn agent_errors_name_the_agent() {
    struct Broken;
    impl Agent for Broken {
        fn name(&self) -> &str {
            "broken"
        }
        common::decisions!(self, obs, rng =>
            call { Err(AgentError("script failed at line 3".into())) }
            discard { Err(AgentError("script failed at line 7".into())) }
            pick { Ok(Pick::Stock) }
        );
    }
    let mut agents: Vec<Box<dyn Agent>> = vec![Box::new(Broken), Box::new(RandomAgent::new("r"))];
    let mut table = Table::new(Rules::preset(Preset::Simplified2p));
    let mut streams = ChaChaStreams::new(1, 0, &[0, 1]);
    let mut msg = String::new();
    // Whoever starts, the broken agent fails on its first decision.
    for _ in 0..2 {
        match table.play_round(&mut agents, &mut streams, &mut ()) {
            Err(e) => {
                msg = e.to_string();
                break;
            }
            Ok(_) => continue,
        }
    }
    assert!(
        msg.starts_with("agent 'broken' (seat 0) failed: script failed at line"),
        "{msg}"
    );
}

/// Random agents that, at every decision, sample worlds from their observation and check that
/// each one is consistent with it, for a few rounds of `variant`.
fn determinizations_fit(variant: Variant, seed: u64) -> Result<(), TestCaseError> {
    let rules = Rules::new(variant).expect("the strategy builds valid variants");
    let n = rules.players();
    let mut table = Table::new(rules.clone());
    let mut probes: Vec<_> = (0..n)
        .map(|s| {
            let mut worlds = Determinizer::new();
            let mut rng = chacha_stream(seed, Purpose::Agent(99), s as u64);
            Probe::new(
                RandomAgent::new(format!("probe{s}")),
                move |obs: &Observation<'_>| {
                    for _ in 0..3 {
                        let w = worlds.sample(obs, &mut rng, false).expect("consistent");
                        assert_eq!(contradiction(obs, &w), None);
                    }
                },
            )
        })
        .collect();
    let slots: Vec<u32> = (0..n as u32).collect();
    for round in 0..6 {
        if table.game_over() {
            break;
        }
        let mut streams = ChaChaStreams::new(seed, deal_id(0, round), &slots);
        table
            .play_round(&mut probes, &mut streams, &mut ())
            .unwrap();
    }
    prop_assert!(probes.iter().map(|p| p.looked).sum::<u64>() > 0);
    Ok(())
}

/// Rounds of `variant` between the agents `kinds` name keep every invariant.
fn rounds_keep_invariants(variant: Variant, seed: u64, kinds: &[u8]) -> Result<(), TestCaseError> {
    let rules = Rules::new(variant).expect("the strategy builds valid variants");
    let n = rules.players();
    let mut table = Table::new(rules.clone());
    let mut agents: Vec<Box<dyn Agent>> = (0..n).map(|s| agent(kinds[s], s)).collect();
    let slots: Vec<u32> = (0..n as u32).collect();
    let mut obs = Invariants {
        deck: rules.deck().iter().copied().collect(),
        deck_len: rules.deck().len(),
        hand_size: variant.hand_size as usize,
        seats: n,
        events: 0,
    };
    let points = matches!(variant.scoring, Scoring::Points(_));
    for round in 0..20 {
        if table.game_over() {
            break;
        }
        let before = table.standings().to_vec();
        let mut streams = ChaChaStreams::new(seed, deal_id(0, round), &slots);
        let o = table
            .play_round(&mut agents, &mut streams, &mut obs)
            .unwrap();
        prop_assert!(o.turns <= variant.turn_limit);
        if points {
            prop_assert!(
                o.points_delta.iter().all(|&d| d >= 0),
                "points fell: {:?}",
                o.points_delta
            );
            prop_assert!(o.coin_delta.iter().all(|&d| d == 0));
            for (now, was) in table.standings().iter().zip(&before).take(n) {
                prop_assert!(now >= was);
            }
        } else {
            prop_assert_eq!(o.coin_delta.iter().sum::<i64>(), 0, "coins not conserved");
            prop_assert_eq!(
                table.standings().iter().sum::<i64>(),
                before.iter().sum::<i64>()
            );
        }
        for s in 0..n {
            prop_assert!(o.active[s] || o.hand_values[s] == 0);
        }
        if let Some(w) = o.winner {
            prop_assert!(o.active[w]);
        }
    }
    prop_assert!(obs.events > 0);
    Ok(())
}
