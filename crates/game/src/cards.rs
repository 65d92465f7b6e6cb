//! Cards, card sets and small ordered card lists.
//!
//! A card is one byte: `suit * 13 + rank` for the 52 standard cards (suits in the paper's order
//! ♠ ♥ ♦ ♣, ranks A 2 … 10 J Q K) and 52, 53 for the two jokers. A [`CardSet`] is a bit set over
//! those 54 ids (one `u64`), used for membership and public knowledge. A [`CardVec`] is an ordered,
//! fixed-capacity list: hands, the stock and the discard pile keep their order because the
//! reference code's tie-breaks depend on it, and because fixed arrays mean no allocation per turn.

use std::fmt;
use std::str::FromStr;

/// Number of card ids (52 standard cards and up to two jokers).
pub const CARD_IDS: usize = 54;
/// Largest hand the engine supports (a rule variant may deal fewer).
pub const MAX_HAND: usize = 10;

/// The four suits, in the order the paper's code builds its deck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    Spades = 0,
    Hearts = 1,
    Diamonds = 2,
    Clubs = 3,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    #[inline]
    pub fn symbol(self) -> char {
        ['♠', '♥', '♦', '♣'][self as usize]
    }
}

/// A playing card or a joker.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

/// The rank of a joker, one past the King, so that two jokers form a same-rank set.
pub const JOKER_RANK: u8 = 13;

/// Size of the tables indexed by card id: the next power of two above [`CARD_IDS`], so that an
/// id masked with `ID_TABLE - 1` (a no-op for every card, whose id is below `CARD_IDS`) needs
/// no bounds check. The entries past `CARD_IDS` are never read.
pub const ID_TABLE: usize = 64;

/// Rank and suit index of each card id, looked up rather than divided on the hot path.
const RANKS: [u8; ID_TABLE] = {
    let mut t = [JOKER_RANK; ID_TABLE];
    let mut i = 0;
    while i < 52 {
        t[i] = (i % 13) as u8;
        i += 1;
    }
    t
};
const SUITS: [u8; ID_TABLE] = {
    let mut t = [4u8; ID_TABLE];
    let mut i = 0;
    while i < 52 {
        t[i] = (i / 13) as u8;
        i += 1;
    }
    t
};

impl Card {
    /// A standard card; `rank` is 0 for the ace up to 12 for the king.
    #[inline]
    pub const fn new(suit: Suit, rank: u8) -> Card {
        assert!(rank < 13);
        Card(suit as u8 * 13 + rank)
    }

    /// Joker number 0 or 1.
    #[inline]
    pub const fn joker(n: u8) -> Card {
        assert!(n < 2);
        Card(52 + n)
    }

    #[inline]
    pub const fn from_id(id: u8) -> Card {
        assert!((id as usize) < CARD_IDS);
        Card(id)
    }

    #[inline]
    pub const fn id(self) -> u8 {
        self.0
    }

    /// The id as an index into a table of [`ID_TABLE`] entries: equal to the id (every id is
    /// below [`CARD_IDS`]), masked so that the compiler sees it in range and drops the bounds
    /// check of every lookup.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize & (ID_TABLE - 1)
    }

    #[inline]
    pub const fn is_joker(self) -> bool {
        self.0 >= 52
    }

    /// 0 (ace) to 12 (king); [`JOKER_RANK`] for jokers.
    #[inline]
    pub const fn rank(self) -> u8 {
        RANKS[self.index()]
    }

    /// The suit, or `None` for a joker.
    #[inline]
    pub fn suit(self) -> Option<Suit> {
        if self.is_joker() {
            None
        } else {
            Some(Suit::ALL[self.suit_index()])
        }
    }

    /// 0 to 3 in the order of [`Suit::ALL`]; 4 for a joker.
    #[inline]
    pub const fn suit_index(self) -> usize {
        SUITS[self.index()] as usize
    }

    fn rank_name(self) -> &'static str {
        [
            "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "Jk",
        ][self.rank() as usize]
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.suit() {
            Some(suit) => write!(f, "{}{}", self.rank_name(), suit.symbol()),
            None => write!(f, "Jk{}", self.0 - 52 + 1),
        }
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Error for a card that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a card (expected a rank A,2-10,J,Q,K then a suit S,H,D,C or ♠♥♦♣, or Jk1/Jk2)"
)]
pub struct ParseCardError(pub String);

impl FromStr for Card {
    type Err = ParseCardError;

    /// Parses `A♠`, `10h`, `QD`, `Jk1` (first joker) or `Jk2`.
    fn from_str(s: &str) -> Result<Card, ParseCardError> {
        let err = || ParseCardError(s.to_string());
        let t = s.trim();
        let upper = t.to_uppercase();
        if let Some(n) = upper.strip_prefix("JK") {
            return match n {
                "" | "1" => Ok(Card::joker(0)),
                "2" => Ok(Card::joker(1)),
                _ => Err(err()),
            };
        }
        let suit_char = upper.chars().last().ok_or_else(err)?;
        let suit = match suit_char {
            'S' | '♠' => Suit::Spades,
            'H' | '♥' => Suit::Hearts,
            'D' | '♦' => Suit::Diamonds,
            'C' | '♣' => Suit::Clubs,
            _ => return Err(err()),
        };
        let rank_str = &upper[..upper.len() - suit_char.len_utf8()];
        let rank = match rank_str {
            "A" | "1" => 0,
            "J" => 10,
            "Q" => 11,
            "K" => 12,
            n => match n.parse::<u8>() {
                Ok(v @ 2..=10) => v - 1,
                _ => return Err(err()),
            },
        };
        Ok(Card::new(suit, rank))
    }
}

/// A set of cards as a bit set over card ids.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CardSet(pub u64);

impl CardSet {
    pub const EMPTY: CardSet = CardSet(0);

    #[inline]
    pub const fn contains(self, card: Card) -> bool {
        self.0 & (1 << card.0) != 0
    }

    #[inline]
    pub fn insert(&mut self, card: Card) {
        self.0 |= 1 << card.0;
    }

    #[inline]
    pub fn remove(&mut self, card: Card) {
        self.0 &= !(1 << card.0);
    }

    #[inline]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub const fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    #[inline]
    pub const fn intersection(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    #[inline]
    pub const fn difference(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// Cards in id order.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = Card> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let id = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            Some(Card(id))
        })
    }
}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> CardSet {
        let mut set = CardSet::EMPTY;
        for card in iter {
            set.insert(card);
        }
        set
    }
}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// An ordered list of at most `N` cards, stored inline. Two lists are equal when they hold
/// the same cards in the same order: the slots past the end are whatever the last moves left
/// there, and neither equality nor the hash reads them.
#[derive(Clone, Copy)]
pub struct CardVec<const N: usize> {
    cards: [Card; N],
    len: u8,
}

impl<const N: usize> PartialEq for CardVec<N> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> Eq for CardVec<N> {}

impl<const N: usize> std::hash::Hash for CardVec<N> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

/// A hand, in the order its cards arrived.
pub type Hand = CardVec<MAX_HAND>;
/// A set of cards discarded together, in the order they go onto the pile.
pub type Discard = CardVec<MAX_HAND>;
/// The stock or the discard pile: bottom first, top last.
pub type Pile = CardVec<CARD_IDS>;

impl<const N: usize> Default for CardVec<N> {
    fn default() -> Self {
        CardVec {
            cards: [Card(0); N],
            len: 0,
        }
    }
}

impl<const N: usize> CardVec<N> {
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a list from a slice; `None` if it does not fit.
    #[inline]
    pub fn from_slice(cards: &[Card]) -> Option<Self> {
        if cards.len() > N {
            return None;
        }
        let mut v = Self::new();
        v.cards[..cards.len()].copy_from_slice(cards);
        v.len = cards.len() as u8;
        Some(v)
    }

    #[inline]
    pub fn as_slice(&self) -> &[Card] {
        &self.cards[..self.len as usize]
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Card] {
        &mut self.cards[..self.len as usize]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.len as usize == N
    }

    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends a card; panics if full (the engine sizes every list for the whole deck).
    #[inline]
    pub fn push(&mut self, card: Card) {
        assert!((self.len as usize) < N, "card list overflow");
        self.cards[self.len as usize] = card;
        self.len += 1;
    }

    /// Appends the cards of `cards` in order; panics if they do not fit. The same as pushing
    /// each, with the length kept in a register (a card's store could overwrite the length as
    /// far as the compiler knows, so each push reloads it). Checked card by card: a plain
    /// copy loop becomes a call to `memcpy`, slow for the one to three cards of a discard.
    #[inline]
    pub fn extend_from_slice(&mut self, cards: &[Card]) {
        let mut len = self.len as usize;
        for &card in cards {
            assert!(len < N, "card list overflow");
            self.cards[len] = card;
            len += 1;
        }
        self.len = len as u8;
    }

    /// Makes this list hold the cards of `from`, pushed one by one (the slots past the end
    /// keep what they held). Where `from` was just built card by card, a plain assignment
    /// copies its bytes in two overlapping wide loads that the processor cannot forward from
    /// the narrow stores still in flight: a stall of a dozen cycles, on every turn of a
    /// search's simulations. Pushes, not a loop of plain copies, which the compiler turns
    /// into a call to `memcpy` for the one to three cards of most discards.
    #[inline]
    pub fn copy_cards_from(&mut self, from: &CardVec<N>) {
        self.len = 0;
        for card in from.iter() {
            self.push(card);
        }
    }

    /// Appends the cards of `set` in id order; panics if they do not fit.
    #[inline]
    pub fn extend_from_set(&mut self, set: CardSet) {
        let start = self.len as usize;
        let end = start + set.len() as usize;
        assert!(end <= N, "card list overflow");
        for (slot, card) in self.cards[start..end].iter_mut().zip(set.iter()) {
            *slot = card;
        }
        self.len = end as u8;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Card> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.cards[self.len as usize])
    }

    #[inline]
    pub fn last(&self) -> Option<Card> {
        self.as_slice().last().copied()
    }

    #[inline]
    pub fn contains(&self, card: Card) -> bool {
        self.as_slice().contains(&card)
    }

    #[inline]
    pub fn position(&self, card: Card) -> Option<usize> {
        self.as_slice().iter().position(|&c| c == card)
    }

    /// Removes the card at `index`, keeping the order of the rest.
    pub fn remove_at(&mut self, index: usize) -> Card {
        let len = self.len as usize;
        assert!(index < len);
        let card = self.cards[index];
        // A plain loop: these lists are short, and `copy_within` costs a `memmove` call.
        for i in index..len - 1 {
            self.cards[i] = self.cards[i + 1];
        }
        self.len -= 1;
        card
    }

    /// Removes every card of `set`, keeping the order of the rest: one pass that writes each
    /// kept card into place (no search and shift per removed card; a turn's discard leaves
    /// the hand this way).
    #[inline]
    pub fn remove_set(&mut self, set: CardSet) {
        let len = self.len as usize;
        let mut kept = 0;
        for i in 0..len.min(N) {
            let card = self.cards[i];
            self.cards[kept] = card;
            kept += usize::from(!set.contains(card));
        }
        self.len = kept as u8;
    }

    /// Removes `card` if present, keeping the order of the rest.
    #[inline]
    pub fn remove(&mut self, card: Card) -> bool {
        match self.position(card) {
            Some(i) => {
                self.remove_at(i);
                true
            }
            None => false,
        }
    }

    /// Removes the last occurrence of `card` if present, keeping the order of the rest: the
    /// same as [`CardVec::remove`] for a list that holds each card once (a pile), the slots
    /// past the end included, but searched from the top, where a card taken back from the
    /// pile lies.
    #[inline]
    pub fn remove_last(&mut self, card: Card) -> bool {
        match self.as_slice().iter().rposition(|&c| c == card) {
            Some(i) => {
                self.remove_at(i);
                true
            }
            None => false,
        }
    }

    /// Moves the top `k` cards of `from` onto the end of this list, in the order `k` pops of
    /// `from` would give them (its top card first), leaving both lists exactly as those pops
    /// and pushes would (the slots past their ends included); panics if `from` holds fewer or
    /// they do not fit. One check for all of them, where pushing the pops checks each.
    #[inline]
    pub fn take_from_top<const M: usize>(&mut self, from: &mut CardVec<M>, k: usize) {
        let top = from.as_slice().len().checked_sub(k).expect("enough cards");
        let start = self.len as usize;
        let end = start + k;
        assert!(end <= N, "card list overflow");
        for (slot, &card) in self.cards[start..end]
            .iter_mut()
            .zip(from.as_slice()[top..].iter().rev())
        {
            *slot = card;
        }
        self.len = end as u8;
        from.len = top as u8;
    }

    /// Keeps only the first `len` cards.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len as usize {
            self.len = len as u8;
        }
    }

    #[inline]
    pub fn to_set(&self) -> CardSet {
        self.as_slice().iter().copied().collect()
    }

    #[inline]
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'_, Card>> {
        self.as_slice().iter().copied()
    }
}

impl<const N: usize> fmt::Debug for CardVec<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<const N: usize> fmt::Display for CardVec<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[")?;
        for (i, c) in self.as_slice().iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            write!(f, "{c}")?;
        }
        write!(f, "]")
    }
}

/// Parses a space-separated card list such as `"2C 5H 7S"` (a test and tooling helper).
#[inline]
pub fn parse_cards(s: &str) -> Result<Vec<Card>, ParseCardError> {
    s.split_whitespace().map(str::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_paper_deck_order() {
        assert_eq!(Card::new(Suit::Spades, 0).id(), 0);
        assert_eq!(Card::new(Suit::Hearts, 0).id(), 13);
        assert_eq!(Card::new(Suit::Clubs, 12).id(), 51);
        assert_eq!(Card::joker(1).id(), 53);
    }

    #[test]
    fn parse_and_display_round_trip() {
        for id in 0..CARD_IDS as u8 {
            let c = Card::from_id(id);
            assert_eq!(c.to_string().parse::<Card>().unwrap(), c);
        }
        assert_eq!("10h".parse::<Card>().unwrap(), Card::new(Suit::Hearts, 9));
        assert!("11H".parse::<Card>().is_err());
        assert!("".parse::<Card>().is_err());
        assert!("AX".parse::<Card>().is_err());
    }

    #[test]
    fn card_vec_keeps_order_on_removal() {
        let cards = parse_cards("2C 5H 7S 2D AH").unwrap();
        let mut hand = Hand::from_slice(&cards).unwrap();
        assert!(hand.remove("7S".parse().unwrap()));
        assert_eq!(hand.to_string(), "[2♣ 5♥ 2♦ A♥]");
        assert!(!hand.remove("7S".parse().unwrap()));
    }

    #[test]
    fn card_vec_bulk_moves_match_one_card_at_a_time() {
        let cards = parse_cards("2C 5H 7S 2D AH KS").unwrap();
        let hand = Hand::from_slice(&cards).unwrap();
        // `remove_last` as `remove` (each card once).
        let mut last = hand;
        let mut first = hand;
        for card in cards.iter().rev() {
            assert_eq!(last.remove_last(*card), first.remove(*card));
            assert_eq!(last, first);
        }
        // `remove_set` as `remove` of each card of the set, for every subset of the hand and
        // sets with cards the hand does not hold.
        let absent = parse_cards("3C JD").unwrap();
        for mask in 0u32..1 << (cards.len() + absent.len()) {
            let set: CardSet = cards
                .iter()
                .chain(&absent)
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, &c)| c)
                .collect();
            let mut bulk = hand;
            bulk.remove_set(set);
            let mut one = hand;
            for card in set.iter() {
                one.remove(card);
            }
            assert_eq!(bulk, one, "{set:?}");
            assert_eq!(bulk.len(), one.len());
        }
        // Equal lists are equal whatever lies past their ends.
        let mut shorter = hand;
        shorter.pop();
        assert_eq!(
            shorter,
            Hand::from_slice(&cards[..cards.len() - 1]).unwrap()
        );
        // `take_from_top` as that many pops.
        let mut from = Pile::from_slice(&cards).unwrap();
        let mut popped = Hand::from_slice(&cards[..1]).unwrap();
        let mut pile = from;
        for _ in 0..4 {
            popped.push(pile.pop().unwrap());
        }
        let mut taken = Hand::from_slice(&cards[..1]).unwrap();
        taken.take_from_top(&mut from, 4);
        assert_eq!((taken, from), (popped, pile));
    }
}
