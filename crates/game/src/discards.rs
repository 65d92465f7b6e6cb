//! Legal discards: validation and enumeration.
//!
//! A discard is one card, two or more cards of one rank, or a same-suit run of consecutive
//! ranks (ace low, optionally also high, never wrapping). Enumeration is allocation-free: it
//! calls a closure with each candidate, in a documented order that the paper's agents rely on
//! for their first-maximum tie-breaks.

use super::cards::{Card, MAX_HAND};
use super::rules::Rules;

/// The shape of a legal discard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscardKind {
    Single,
    /// Two or more cards of one rank.
    Set,
    /// A same-suit run.
    Run,
}

/// Why a discard is not legal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiscardError {
    #[error("a discard needs at least one card")]
    Empty,
    #[error("{0} is not in the hand")]
    NotInHand(Card),
    #[error("{0} appears twice")]
    Duplicate(Card),
    #[error("sets of a rank are not allowed in this variant")]
    SetsDisabled,
    #[error("runs are not allowed in this variant")]
    RunsDisabled,
    #[error("the cards are neither one rank nor a same-suit run of at least {0}")]
    NotASetOrRun(u8),
}

/// Which runs [`for_each_discard`] lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// Only maximal runs (the paper's heuristic agents).
    Maximal,
    /// Every contiguous run of legal length (all legal discards).
    All,
}

/// Checks that `discard` may be played from `hand`, and says what shape it is.
///
/// A single card held, the most common discard, is answered inline (the call alone showed in
/// profiles); everything else by [`classify_cards`].
#[inline]
pub fn classify(
    rules: &Rules,
    hand: &[Card],
    discard: &[Card],
) -> Result<DiscardKind, DiscardError> {
    if let [c] = discard
        && hand.contains(c)
    {
        return Ok(DiscardKind::Single);
    }
    classify_cards(rules, hand, discard)
}

#[inline(never)]
fn classify_cards(
    rules: &Rules,
    hand: &[Card],
    discard: &[Card],
) -> Result<DiscardKind, DiscardError> {
    match discard {
        [] => return Err(DiscardError::Empty),
        [c] if hand.contains(c) => return Ok(DiscardKind::Single),
        _ => {}
    }
    let mut seen = 0u64;
    for &c in discard {
        if !hand.contains(&c) {
            return Err(DiscardError::NotInHand(c));
        }
        if seen & (1 << c.id()) != 0 {
            return Err(DiscardError::Duplicate(c));
        }
        seen |= 1 << c.id();
    }
    if discard.len() == 1 {
        return Ok(DiscardKind::Single);
    }
    let d = rules.variant().discards;
    let rank = discard[0].rank();
    if discard.iter().all(|c| c.rank() == rank) {
        return if d.sets {
            Ok(DiscardKind::Set)
        } else {
            Err(DiscardError::SetsDisabled)
        };
    }
    if is_run(rules, discard) {
        return if d.runs {
            Ok(DiscardKind::Run)
        } else {
            Err(DiscardError::RunsDisabled)
        };
    }
    Err(DiscardError::NotASetOrRun(d.min_run))
}

/// Puts a run in rank order (an ace played high last), whatever order it was given in, so that
/// its first and last cards are its ends.
pub fn sort_run(rules: &Rules, cards: &mut [Card]) {
    let ace_high = rules.variant().discards.ace_high && cards.iter().any(|c| c.rank() == 12);
    cards.sort_by_key(|c| {
        if ace_high && c.rank() == 0 {
            13
        } else {
            c.rank()
        }
    });
}

/// Whether the cards (in any order) form a same-suit run of legal length.
fn is_run(rules: &Rules, cards: &[Card]) -> bool {
    let d = rules.variant().discards;
    if cards.len() < d.min_run as usize {
        return false;
    }
    let Some(suit) = cards[0].suit() else {
        return false;
    };
    if cards.iter().any(|c| c.suit() != Some(suit)) {
        return false;
    }
    let mask = rank_mask(cards.iter().copied(), d.ace_high);
    let n = cards.len() as u32;
    // Ace low: positions 0..=12. Ace high: the ace may instead sit at position 13.
    let low = mask & 0x1FFF;
    if is_contiguous(low) && low.count_ones() == n {
        return true;
    }
    if d.ace_high && low & 1 != 0 {
        let high = (low & !1) | (1 << 13);
        return is_contiguous(high) && high.count_ones() == n;
    }
    false
}

/// Bit `r` set for each rank `r` present (bit 13 for an ace when ace-high is allowed).
fn rank_mask(cards: impl Iterator<Item = Card>, ace_high: bool) -> u16 {
    let mut mask = 0u16;
    for c in cards {
        mask |= 1 << c.rank();
        if ace_high && c.rank() == 0 {
            mask |= 1 << 13;
        }
    }
    mask
}

fn is_contiguous(mask: u16) -> bool {
    mask != 0 && {
        let shifted = mask >> mask.trailing_zeros();
        shifted & (shifted + 1) == 0
    }
}

/// Calls `f` with every legal discard from `hand`, in this order:
/// 1. every single card, in hand order;
/// 2. every subset of two or more cards of one rank: ranks in order of first appearance in the
///    hand, sizes ascending, and within a size the subsets in lexicographic order of hand
///    position (as Python's `itertools.combinations`); cards keep hand order;
/// 3. runs: suits in order of first appearance, then by lowest rank and (with [`Runs::All`])
///    ascending length; cards in ascending rank order (an ace-high ace last).
///
/// Stops early when `f` returns `false`.
#[inline]
pub fn for_each_discard(
    rules: &Rules,
    hand: &[Card],
    runs: Runs,
    mut f: impl FnMut(&[Card]) -> bool,
) {
    for c in hand {
        if !f(std::slice::from_ref(c)) {
            return;
        }
    }
    for_each_multi_discard(rules, hand, runs, f);
}

/// Calls `f` with every legal discard of two or more cards, in the order of
/// [`for_each_discard`] (which lists the singles first, then these). Stops early when `f`
/// returns `false`.
#[inline]
pub fn for_each_multi_discard(
    rules: &Rules,
    hand: &[Card],
    runs: Runs,
    mut f: impl FnMut(&[Card]) -> bool,
) {
    let d = rules.variant().discards;
    // The hand as a bit set: card ids are suit-major, so each suit's ranks are a 13-bit field.
    let set = hand.iter().fold(0u64, |acc, c| acc | 1 << c.id());
    let suit_ranks = suit_ranks(set);
    let [s0, s1, s2, s3] = suit_ranks;
    // Ranks held in two or more suits, and bit 13 when both jokers are held.
    let repeated =
        (s0 & (s1 | s2 | s3)) | (s1 & (s2 | s3)) | (s2 & s3) | (u16::from(set >> 52 == 3) << 13);
    let min_run = u32::from(d.min_run);
    let any_run = d.runs && (d.ace_high || has_run_start(set, min_run));
    let mut buf = [Card::from_id(0); MAX_HAND];
    if d.sets
        && repeated != 0
        && !for_each_repeated_rank(hand, repeated, |rank| {
            let mut group = [Card::from_id(0); 4];
            let mut k = 0;
            for &x in hand {
                if x.rank() == rank && k < group.len() {
                    group[k] = x;
                    k += 1;
                }
            }
            for &mask in GROUP_SUBSETS[k] {
                let mut n = 0;
                for (i, &card) in group.iter().enumerate().take(k) {
                    if mask & (1 << i) != 0 {
                        buf[n] = card;
                        n += 1;
                    }
                }
                if !f(&buf[..n]) {
                    return false;
                }
            }
            true
        })
    {
        return;
    }
    if d.runs && any_run {
        let min = min_run;
        for_each_maximal_run(hand, suit_ranks, min, d.ace_high, |base, start, len| {
            let end = start + len - 1;
            let (lo_last, hi_first) = match runs {
                Runs::Maximal => (start, end),
                Runs::All => (end + 1 - min, 0),
            };
            for lo in start..=lo_last {
                for hi in hi_first.max(lo + min - 1)..=end {
                    let n = (hi - lo + 1) as usize;
                    for (slot, pos) in buf.iter_mut().zip(lo..=hi) {
                        *slot = Card::from_id(base + (pos % 13) as u8);
                    }
                    if !f(&buf[..n]) {
                        return false;
                    }
                }
            }
            true
        });
    }
}

/// Every rank of `repeated` (a rank bit set: bit 13 the jokers) held in `hand`, each once, in
/// the order of its first card in the hand: `f(rank)` returns `false` to stop; so does this,
/// when stopped. The one walk over the ranks of sets that the legal discards and the
/// heuristics' scoring share.
#[inline]
pub fn for_each_repeated_rank(hand: &[Card], repeated: u16, mut f: impl FnMut(u8) -> bool) -> bool {
    let mut ranks_done = 0u16;
    for &c in hand {
        let rank = c.rank();
        if repeated & (1 << rank) == 0 || ranks_done & (1 << rank) != 0 {
            continue;
        }
        ranks_done |= 1 << rank;
        if !f(rank) {
            return false;
        }
    }
    true
}

/// Each suit's ranks in a hand's bit set `set` (card ids are suit-major: each suit's ranks are
/// a 13-bit field), as 13-bit masks in suit order.
#[inline]
pub fn suit_ranks(set: u64) -> [u16; 4] {
    [0, 1, 2, 3].map(|s| ((set >> (13 * s)) & 0x1FFF) as u16)
}

/// Every maximal same-suit run of at least `min` cards in `hand` (`suit_ranks`: its
/// [`suit_ranks`]), the suits in the order they first appear in the hand, each run low to high:
/// `f(base, start, len)` with `base` the id of the suit's ace and rank positions
/// `start..start + len`, 0 to 12 and 13 for an ace played high (`ace_high`; the card at
/// position `pos` is `base + pos % 13`). `f` returns `false` to stop; so does this, when
/// stopped. The one walk over runs that the legal discards and the heuristics' scoring share.
#[inline]
pub fn for_each_maximal_run(
    hand: &[Card],
    suit_ranks: [u16; 4],
    min: u32,
    ace_high: bool,
    mut f: impl FnMut(u8, u32, u32) -> bool,
) -> bool {
    let mut suits_done = 0u8;
    for &c in hand {
        if c.is_joker() {
            continue;
        }
        let suit = c.suit_index();
        if suits_done & (1 << suit) != 0 {
            continue;
        }
        suits_done |= 1 << suit;
        let mut mask = suit_ranks[suit];
        if ones(mask) < min {
            continue;
        }
        // Rank positions 0..=12, and 13 for an ace played high.
        if ace_high && mask & 1 != 0 {
            mask |= 1 << 13;
        }
        let base = suit as u8 * 13;
        while mask != 0 {
            // The next maximal run: positions start..start + len.
            let start = mask.trailing_zeros();
            let len = (!(mask >> start)).trailing_zeros();
            mask &= !((((1u32 << len) - 1) << start) as u16);
            if len >= min && !f(base, start, len) {
                return false;
            }
        }
    }
    true
}

/// The subsets of size two or more of a same-rank group of `n` cards (at most 4), as bit masks
/// over the group's positions: sizes ascending, then lexicographic (`itertools.combinations`).
pub const GROUP_SUBSETS: [&[u8]; 5] = [
    &[],
    &[],
    &[0b11],
    &[0b011, 0b101, 0b110, 0b111],
    &[
        0b0011, 0b0101, 0b1001, 0b0110, 0b1010, 0b1100, 0b0111, 0b1011, 0b1101, 0b1110, 0b1111,
    ],
];

/// Whether some suit holds `min` consecutive ranks (ace low only), tested on every suit at
/// once with shifts (no bit counting, which is a software routine on baseline x86-64).
#[inline]
pub fn has_run_start(set: u64, min: u32) -> bool {
    let cards = set & ((1 << 52) - 1);
    let starts = if min == 3 {
        // Every preset's minimum, without the loop.
        cards & cards >> 1 & cards >> 2
    } else {
        let mut starts = cards;
        for _ in 1..min.max(1) {
            starts &= starts >> 1;
        }
        starts
    };
    // A run of `min` starts at a rank no higher than 13 - min of its suit.
    let per_suit = (1u64 << (14 - min.clamp(1, 13))) - 1;
    starts & (per_suit * (1 | 1 << 13 | 1 << 26 | 1 << 39)) != 0
}

/// The number of bits set in each byte value.
const ONES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).count_ones() as u8;
        i += 1;
    }
    t
};

/// The number of bits set in `x`, by two table lookups: `u16::count_ones` is a software routine
/// (a dozen shifts, masks and adds) on the baseline x86-64 target, and the discard counts of a
/// random rollout take several per turn. The same result on every target.
#[inline]
fn ones(x: u16) -> u32 {
    u32::from(ONES[usize::from(x as u8)] + ONES[usize::from(x >> 8)])
}

/// The number of legal discards of two or more cards, with [`Runs::All`], computed from the
/// hand's bit set without enumerating them (a random rollout asks it every turn). Equal to the
/// number [`for_each_multi_discard`] lists; `tests/movegen.rs` checks that over random hands.
pub fn count_multi_discards(rules: &Rules, hand: &[Card]) -> u32 {
    let d = rules.variant().discards;
    let set = hand.iter().fold(0u64, |acc, c| acc | 1 << c.id());
    let suit_ranks = suit_ranks(set);
    let mut n = 0u32;
    if d.sets {
        // Same-rank groups: every subset of two or more cards (1 of a pair, 4 of three cards,
        // 11 of four), counted over the ranks held in 2, 3 or 4 suits; plus the pair of jokers.
        // The suits are added as bits, two by two: `ab` and `ce` hold the ranks held in both
        // suits of a pair, `a_b` and `c_e` those held in one of them; from these follow the
        // ranks held at least twice, three times and four times. (Most hands hold no pair: no
        // bit counting then.)
        let [a, b, c, e] = suit_ranks;
        let (ab, ce) = (a & b, c & e);
        let (a_b, c_e) = (a ^ b, c ^ e);
        let two = ab | ce | (a_b & c_e);
        if two != 0 {
            let three = (ab & (ce | c_e)) | (ce & a_b);
            let four = ab & ce;
            // A rank held four times is in all three masks (1 + 3 + 7 = 11 subsets), three
            // times in two of them (1 + 3 = 4), twice in `two` only (1).
            n += ones(two) + 3 * ones(three) + 7 * ones(four);
        }
        n += u32::from(set >> 52 == 3);
    }
    if d.runs {
        let min = u32::from(d.min_run).max(1);
        // Most hands hold no run at all: test every suit at once. A run of `min` starts at a
        // rank no higher than 13 - min, with the next min - 1 ranks of its suit held too.
        if !d.ace_high && !has_run_start(set, min) {
            return n;
        }
        n += count_runs(suit_ranks, min, d.ace_high);
    }
    n
}

/// The runs of [`count_multi_discards`], for a hand that may hold one (`suit_ranks`: each
/// suit's ranks as a 13-bit mask). Out of line: few hands get here, and the loops' registers
/// would otherwise be saved and restored on every call.
#[inline(never)]
fn count_runs(suit_ranks: [u16; 4], min: u32, ace_high: bool) -> u32 {
    let mut n = 0;
    for mut mask in suit_ranks {
        if ace_high && mask & 1 != 0 {
            mask |= 1 << 13;
        }
        // Positions that start `min` consecutive ranks: none, for most suits of most hands.
        let mut starts = mask;
        for _ in 1..min {
            starts &= starts >> 1;
        }
        if starts == 0 {
            continue;
        }
        while mask != 0 {
            let start = mask.trailing_zeros();
            let len = (!(mask >> start)).trailing_zeros();
            mask &= !((((1u32 << len) - 1) << start) as u16);
            if len >= min {
                let extra = len - min + 1;
                n += extra * (extra + 1) / 2;
            }
        }
    }
    n
}

/// The number of legal discards from `hand` (the "perft" of depth one).
pub fn count_discards(rules: &Rules, hand: &[Card]) -> usize {
    let mut n = 0;
    for_each_discard(rules, hand, Runs::All, |_| {
        n += 1;
        true
    });
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::parse_cards;
    use crate::rules::{Preset, Variant};

    fn paper() -> Rules {
        Rules::preset(Preset::Paper)
    }

    fn ace_high() -> Rules {
        let mut v: Variant = Preset::Paper.variant();
        v.discards.ace_high = true;
        Rules::new(v).unwrap()
    }

    #[test]
    fn classify_shapes() {
        let r = paper();
        let hand = parse_cards("3S 4S 5S 5H 5D QS KS AS").unwrap();
        let c = |s: &str| classify(&r, &hand, &parse_cards(s).unwrap());
        assert_eq!(c("5H"), Ok(DiscardKind::Single));
        assert_eq!(c("5H 5S 5D"), Ok(DiscardKind::Set));
        assert_eq!(c("5S 3S 4S"), Ok(DiscardKind::Run));
        assert_eq!(c("QS KS AS"), Err(DiscardError::NotASetOrRun(3)));
        assert_eq!(c("3S 4S"), Err(DiscardError::NotASetOrRun(3)));
        assert_eq!(c("3S 5S"), Err(DiscardError::NotASetOrRun(3)));
        assert_eq!(
            c("5H 5H"),
            Err(DiscardError::Duplicate("5H".parse().unwrap()))
        );
        assert_eq!(c("2C"), Err(DiscardError::NotInHand("2C".parse().unwrap())));
        assert_eq!(c(""), Err(DiscardError::Empty));
        let rh = ace_high();
        assert_eq!(
            classify(&rh, &hand, &parse_cards("QS KS AS").unwrap()),
            Ok(DiscardKind::Run)
        );
        // No wrapping, even with ace high.
        let wrap = parse_cards("KS AS 2S").unwrap();
        assert_eq!(
            classify(&rh, &wrap, &wrap),
            Err(DiscardError::NotASetOrRun(3))
        );
    }

    #[test]
    fn enumeration_order_matches_the_documented_order() {
        let r = paper();
        let hand = parse_cards("7H 3S 7S 5S 4S 7D 6S").unwrap();
        let list = |runs| {
            let mut seen = Vec::new();
            for_each_discard(&r, &hand, runs, |d| {
                seen.push(crate::cards::Discard::from_slice(d).unwrap().to_string());
                true
            });
            seen
        };
        let singles = ["[7♥]", "[3♠]", "[7♠]", "[5♠]", "[4♠]", "[7♦]", "[6♠]"];
        let sets = ["[7♥ 7♠]", "[7♥ 7♦]", "[7♠ 7♦]", "[7♥ 7♠ 7♦]"];
        let all_runs = [
            "[3♠ 4♠ 5♠]",
            "[3♠ 4♠ 5♠ 6♠]",
            "[3♠ 4♠ 5♠ 6♠ 7♠]",
            "[4♠ 5♠ 6♠]",
            "[4♠ 5♠ 6♠ 7♠]",
            "[5♠ 6♠ 7♠]",
        ];
        let expected_all: Vec<_> = singles
            .iter()
            .chain(&sets)
            .chain(&all_runs)
            .map(|s| s.to_string())
            .collect();
        assert_eq!(list(Runs::All), expected_all);
        let expected_max: Vec<_> = singles
            .iter()
            .chain(&sets)
            .chain(&["[3♠ 4♠ 5♠ 6♠ 7♠]"])
            .map(|s| s.to_string())
            .collect();
        assert_eq!(list(Runs::Maximal), expected_max);
    }
}
