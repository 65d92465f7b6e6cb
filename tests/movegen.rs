//! Counting tests for legal discards (the "perft" of depth one): counts for chosen hands worked
//! out by hand, and the enumerator checked against brute force over every subset of a hand.

use dhumbal::game::cards::parse_cards;
use dhumbal::game::rules::Variant;
use dhumbal::game::{
    Card, CardSet, Discard, Preset, Rules, Runs, classify, count_discards, count_multi_discards,
    for_each_discard,
};
use proptest::prelude::*;

mod common;

fn count(rules: &Rules, hand: &str) -> usize {
    count_discards(rules, &parse_cards(hand).unwrap())
}

fn variant(f: impl FnOnce(&mut Variant)) -> Rules {
    let mut v = Preset::Paper.variant();
    f(&mut v);
    Rules::new(v).unwrap()
}

#[test]
fn counts_worked_out_by_hand() {
    let paper = Rules::preset(Preset::Paper);
    // 5 singles; runs of a 5-run: three of length 3, two of 4, one of 5.
    assert_eq!(count(&paper, "AS 2S 3S 4S 5S"), 5 + 6);
    // 5 singles; quads: C(4,2) + C(4,3) + C(4,4) = 11.
    assert_eq!(count(&paper, "7S 7H 7D 7C KS"), 5 + 11);
    // 5 singles; three fives: 3 pairs + 1 trip; run 5-6-7 of spades.
    assert_eq!(count(&paper, "5H 5S 6S 7S 5D"), 5 + 4 + 1);
    // Ace low only: A-2-3 is a run, Q-K-A is not.
    assert_eq!(count(&paper, "AS 2S 3S QS KS"), 5 + 1);
    let ace_high = variant(|v| v.discards.ace_high = true);
    assert_eq!(count(&ace_high, "AS 2S 3S QS KS"), 5 + 2);
    // No wrap, even with ace high: K-A-2 is not a run, so only the singles.
    assert_eq!(count(&ace_high, "KS AS 2S"), 3);
    // Mixed suits never run; two of a rank in different suits is a pair.
    assert_eq!(count(&paper, "3S 4H 5S"), 3);
    assert_eq!(count(&paper, "9C 9D"), 2 + 1);
    // A 10-card straight flush: 10 singles + sum over lengths 3..=10 of (11 - len) = 36 runs.
    assert_eq!(count(&paper, "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S"), 10 + 36);
    // Two jokers are a pair (not wild), next to a pair of threes.
    let yaniv = Rules::preset(Preset::Yaniv);
    assert_eq!(count(&yaniv, "Jk1 Jk2 3H 3S"), 4 + 2);
    // Sets or runs switched off.
    let no_sets = variant(|v| v.discards.sets = false);
    assert_eq!(count(&no_sets, "5H 5S 6S 7S 5D"), 5 + 1);
    let no_runs = variant(|v| v.discards.runs = false);
    assert_eq!(count(&no_runs, "5H 5S 6S 7S 5D"), 5 + 4);
    // Runs of at least four.
    let min4 = variant(|v| v.discards.min_run = 4);
    assert_eq!(count(&min4, "AS 2S 3S 4S 5S"), 5 + 3);
}

#[test]
fn the_maximal_runs_the_paper_agents_see() {
    let paper = Rules::preset(Preset::Paper);
    let hand = parse_cards("AS 2S 3S 4S 5S 9H 10H JH").unwrap();
    let mut runs = Vec::new();
    for_each_discard(&paper, &hand, Runs::Maximal, |d| {
        if d.len() >= 3 {
            runs.push(Discard::from_slice(d).unwrap().to_string());
        }
        true
    });
    assert_eq!(runs, ["[A♠ 2♠ 3♠ 4♠ 5♠]", "[9♥ 10♥ J♥]"]);
}

fn rules_strategy() -> impl Strategy<Value = Rules> {
    (
        any::<bool>(),
        any::<bool>(),
        3u8..=5,
        any::<bool>(),
        0u8..=2,
    )
        .prop_map(|(sets, runs, min_run, ace_high, jokers)| {
            variant(|v| {
                v.discards.sets = sets;
                v.discards.runs = runs;
                v.discards.min_run = min_run;
                v.discards.ace_high = ace_high;
                v.deck.jokers = jokers;
            })
        })
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    /// Every subset of the hand that `classify` accepts is enumerated exactly once, and nothing
    /// else is.
    #[test]
    fn enumeration_equals_brute_force(rules in rules_strategy(), ids in proptest::sample::subsequence((0u8..54).collect::<Vec<_>>(), 1..=10), order in any::<u64>()) {
        let deck_len = rules.deck().len() as u8;
        let mut hand: Vec<Card> = ids.into_iter().filter(|&i| i < deck_len).map(Card::from_id).collect();
        prop_assume!(!hand.is_empty());
        // Scramble the hand order deterministically.
        let k = hand.len();
        hand.rotate_left((order as usize) % k);
        let mut brute = 0;
        for mask in 1u32..(1 << k) {
            let subset: Vec<Card> = (0..k).filter(|i| mask & (1 << i) != 0).map(|i| hand[i]).collect();
            if classify(&rules, &hand, &subset).is_ok() {
                brute += 1;
            }
        }
        let mut seen = std::collections::HashSet::new();
        for_each_discard(&rules, &hand, Runs::All, |d| {
            assert!(classify(&rules, &hand, d).is_ok(), "{d:?} listed but illegal");
            let set: CardSet = d.iter().copied().collect();
            assert!(seen.insert(set.0), "{d:?} listed twice");
            true
        });
        prop_assert_eq!(seen.len(), brute);
        // The closed-form count of multi-card discards agrees with both.
        prop_assert_eq!(count_multi_discards(&rules, &hand) as usize + hand.len(), brute);
    }
}
