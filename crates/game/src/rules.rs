//! Rule variants as data.
//!
//! A [`Variant`] is plain, editable data: start from a [`Preset`] and override any field. It is
//! turned into a [`Rules`] value once, by [`Rules::new`], which checks every field and derives the
//! lookup tables the engine uses on its hot path (card values, the deck). Nothing about a
//! variant is hard-coded anywhere else in the engine.

use std::fmt;

use super::cards::{CARD_IDS, Card, CardSet, ID_TABLE, MAX_HAND, Suit};

/// Most seats at one table.
pub const MAX_PLAYERS: usize = 8;
/// Largest turn limit (per-round counters are 16-bit; real rounds last a few dozen turns).
pub const MAX_TURN_LIMIT: u32 = 10_000;

/// How the face cards are valued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaceValues {
    /// J, Q, K count 11, 12, 13 (the paper, Nepali practice).
    Rank,
    /// J, Q, K count 10 (Yaniv).
    Ten,
}

/// The deck: the lowest `ranks` ranks of the first `suits` suits (52 cards by default) plus
/// optional jokers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DeckRules {
    /// Number of jokers, 0 to 2. Jokers are not wild: they count `joker_value` and two jokers
    /// form a same-rank set.
    pub jokers: u8,
    pub joker_value: u8,
    pub face_values: FaceValues,
    /// Ranks per suit, 1 to 13: the lowest ones, ace first (4: A, 2, 3, 4). Cards keep their
    /// ids (`suit * 13 + rank`), so a smaller deck is a subset of the full one.
    pub ranks: u8,
    /// Suits, 1 to 4, in the deck's order ♠ ♥ ♦ ♣ (2: spades and hearts).
    pub suits: u8,
}

/// The full deck's ranks and suits.
pub const FULL_RANKS: u8 = 13;
pub const FULL_SUITS: u8 = 4;

/// Written as the derived `Debug` was before `ranks` and `suits` existed, those two fields
/// shown only when they are not the full deck's: a network's checkpoint records the rules it
/// was trained under as a hash of this text (`rules_fingerprint`), so that every checkpoint
/// trained on a full deck keeps its fingerprint.
impl fmt::Debug for DeckRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("DeckRules");
        s.field("jokers", &self.jokers)
            .field("joker_value", &self.joker_value)
            .field("face_values", &self.face_values);
        if self.ranks != FULL_RANKS {
            s.field("ranks", &self.ranks);
        }
        if self.suits != FULL_SUITS {
            s.field("suits", &self.suits);
        }
        s.finish()
    }
}

/// Which discards are legal (a single card always is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscardRules {
    /// Two or more cards of one rank (pairs, trips, quads; every subset).
    pub sets: bool,
    /// Same-suit runs of consecutive ranks.
    pub runs: bool,
    /// Shortest legal run (3 in every known variant).
    pub min_run: u8,
    /// Whether the ace may also sit above the king (Q-K-A). It never wraps (K-A-2).
    pub ace_high: bool,
}

/// The hand value at or below which a player may call Jhyap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallThreshold {
    Fixed(u32),
    /// Indexed by the number of players still in the game (index 0 and 1 unused).
    ByPlayers([u32; MAX_PLAYERS + 1]),
}

/// Whether a player may call with a hand above the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverCall {
    /// The call is simply not offered (the paper).
    Forbidden,
    /// Allowed, and always settled as a failed call (the simplified two-player variant).
    Penalised,
}

/// Among several non-callers holding the lowest hand, who wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    /// The lowest seat index (the paper's code).
    LowestSeat,
    /// The first in turn order after the caller.
    AfterCaller,
}

/// Calling Jhyap and the showdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallRules {
    pub threshold: CallThreshold,
    pub over_threshold: OverCall,
    /// `false`: the caller must be strictly lowest (the paper); `true`: the caller wins ties.
    pub caller_wins_ties: bool,
    pub tie_break: TieBreak,
    /// With [`OverCall::Penalised`]: the penalty (coins to the winner, or points) for a call
    /// above the threshold, in place of the failed-call penalty.
    pub over_threshold_penalty: u32,
}

/// Coin settlement (the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoinRules {
    pub starting_coins: i64,
    /// Per-hand cap on a payment (`None`: uncapped). The paper's 100 never binds.
    pub cap: Option<u32>,
    /// Extra coins a failed caller pays the winner on top of the table's hands.
    pub failed_call_penalty: u32,
}

/// What the other players score when a call fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailedCallOthers {
    /// Everyone but the caller and the winner scores their hand.
    ScoreHand,
    /// Only the caller scores.
    Zero,
}

/// Comparison used for elimination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elimination {
    /// Out when the total reaches the limit (`>=`).
    AtLimit,
    /// Out when the total passes the limit (`>`).
    AboveLimit,
}

/// Cumulative points: lowest is best, players are eliminated at a limit and the game goes on
/// over rounds until one is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointRules {
    pub failed_call_penalty: u32,
    /// Whether a failed caller also scores their own hand on top of the penalty.
    pub failed_caller_adds_hand: bool,
    pub failed_call_others: FailedCallOthers,
    pub limit: u32,
    pub elimination: Elimination,
    /// Safety stop for games that could otherwise go on for ever (zero-valued jokers).
    pub max_rounds: u32,
}

/// How a round is settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scoring {
    Coins(CoinRules),
    Points(PointRules),
}

/// Which end of a multi-card set may be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetPick {
    /// Only the top card (the last one put down).
    Top,
    /// The first or the last card of the set.
    Ends,
    /// Any card of the set.
    Any,
}

/// What a player may take instead of drawing from the stock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickRule {
    /// The last card of the player's own discard (the paper's code): the initial face-up card
    /// and other players' discards can never be taken.
    OwnLastDiscard,
    /// A card of the set the previous player discarded (real play); the first player of a round
    /// may take the initial face-up card.
    PreviousDiscard(SetPick),
}

/// What happens when the stock runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StockRule {
    /// Shuffle the pile, except its top (card or set), into a new stock; if there is nothing to
    /// shuffle the round ends as exhausted.
    Reshuffle,
    /// The round ends as exhausted.
    EndRound,
}

/// How a round settles when it ends without a call (turn limit, exhausted stock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoCallEnd {
    /// The lowest-index holder of the minimum is treated as the caller (the paper's code), and
    /// pays as a failed caller if anyone ties.
    FirstMinimumCalls,
    /// The lowest hand wins (ties by `tie_break` from seat 0) and everyone pays the winner, or
    /// in points everyone but the winner scores their hand.
    LowestWins,
    /// Nobody wins: no coins move; in points everyone scores their hand.
    Void,
}

/// What happens when a discard empties a hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyHand {
    /// The round ends at once, settled as a call by that player with a hand of 0 (the paper).
    WinsAsCall,
    /// Nothing special: the player draws as usual.
    Draws,
}

/// Who starts each round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Starter {
    /// Seat 0, every round (the paper).
    Seat0,
    /// The seat after the previous round's starter.
    Rotate,
    /// A random seat, drawn from the deal's stream.
    Random,
    /// The previous round's winner.
    Winner,
    /// The previous round's biggest loser.
    Loser,
}

/// A complete rule variant, as editable data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub players: u8,
    pub hand_size: u8,
    /// Turn one card face up to start the discard pile.
    pub initial_discard: bool,
    pub deck: DeckRules,
    pub discards: DiscardRules,
    pub call: CallRules,
    pub scoring: Scoring,
    pub pick: PickRule,
    pub stock: StockRule,
    /// Player-turns after which the round ends with `no_call_end`. Always set, so that no
    /// round can run for ever (agents that never call, picks that never touch the stock); a
    /// large value such as 1000 means "no limit" in practice.
    pub turn_limit: u32,
    pub no_call_end: NoCallEnd,
    pub empty_hand: EmptyHand,
    pub starter: Starter,
    /// Whether the first round's starter is drawn at random (then `starter` applies).
    pub random_first_starter: bool,
}

/// A named starting point for a variant; every preset documents its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Exactly the paper's public code (`rule_based_agent.py` and the game loop it runs
    /// under): 4 players, threshold 10, coins, caller pays
    /// the table on a failed call, own-discard pick, seat 0 always starts, 100-turn limit.
    Paper,
    /// Common Nepali play (Wikipedia "Jhyap", prashantacharya/dhumbal): threshold 5, failed call
    /// +25 and hand, out at 100, pick from the previous player's discard.
    Jhyap,
    /// The two-player points variant of `seeds/001` (artemkv/rl_dhumbal): call at 5 or take
    /// hand + 30, eliminated past 80, random first starter.
    Simplified2p,
    /// Yaniv (pagat.com, gamerules.com): threshold 7, face cards 10, two jokers worth 0, failed
    /// call +30, out at 200.
    Yaniv,
}

impl Preset {
    pub const ALL: [Preset; 4] = [
        Preset::Paper,
        Preset::Jhyap,
        Preset::Simplified2p,
        Preset::Yaniv,
    ];

    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Preset::Paper => "paper",
            Preset::Jhyap => "jhyap",
            Preset::Simplified2p => "simplified-2p",
            Preset::Yaniv => "yaniv",
        }
    }

    #[inline]
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn variant(self) -> Variant {
        let paper = Variant {
            players: 4,
            hand_size: 5,
            initial_discard: true,
            deck: DeckRules {
                jokers: 0,
                joker_value: 0,
                face_values: FaceValues::Rank,
                ranks: FULL_RANKS,
                suits: FULL_SUITS,
            },
            discards: DiscardRules {
                sets: true,
                runs: true,
                min_run: 3,
                ace_high: false,
            },
            call: CallRules {
                threshold: CallThreshold::Fixed(10),
                over_threshold: OverCall::Forbidden,
                caller_wins_ties: false,
                tie_break: TieBreak::LowestSeat,
                over_threshold_penalty: 0,
            },
            scoring: Scoring::Coins(CoinRules {
                starting_coins: 10_000,
                cap: Some(100),
                failed_call_penalty: 0,
            }),
            pick: PickRule::OwnLastDiscard,
            stock: StockRule::Reshuffle,
            turn_limit: 100,
            no_call_end: NoCallEnd::FirstMinimumCalls,
            empty_hand: EmptyHand::WinsAsCall,
            starter: Starter::Seat0,
            random_first_starter: false,
        };
        let real_play = Variant {
            pick: PickRule::PreviousDiscard(SetPick::Ends),
            call: CallRules {
                threshold: CallThreshold::Fixed(5),
                over_threshold: OverCall::Forbidden,
                caller_wins_ties: false,
                tie_break: TieBreak::AfterCaller,
                over_threshold_penalty: 0,
            },
            empty_hand: EmptyHand::Draws,
            no_call_end: NoCallEnd::Void,
            starter: Starter::Winner,
            random_first_starter: true,
            turn_limit: 200,
            ..paper
        };
        match self {
            Preset::Paper => paper,
            Preset::Jhyap => Variant {
                call: CallRules {
                    over_threshold_penalty: 25,
                    ..real_play.call
                },
                scoring: Scoring::Points(PointRules {
                    failed_call_penalty: 25,
                    failed_caller_adds_hand: true,
                    failed_call_others: FailedCallOthers::ScoreHand,
                    limit: 100,
                    elimination: Elimination::AtLimit,
                    max_rounds: 1000,
                }),
                ..real_play
            },
            Preset::Simplified2p => Variant {
                players: 2,
                pick: PickRule::PreviousDiscard(SetPick::Top),
                // A call above 5 is allowed and costs hand + 30; a legal call that is not lowest
                // just scores the caller's hand.
                call: CallRules {
                    over_threshold: OverCall::Penalised,
                    over_threshold_penalty: 30,
                    ..real_play.call
                },
                scoring: Scoring::Points(PointRules {
                    failed_call_penalty: 0,
                    failed_caller_adds_hand: true,
                    failed_call_others: FailedCallOthers::Zero,
                    limit: 80,
                    elimination: Elimination::AboveLimit,
                    max_rounds: 1000,
                }),
                ..real_play
            },
            Preset::Yaniv => Variant {
                deck: DeckRules {
                    jokers: 2,
                    joker_value: 0,
                    face_values: FaceValues::Ten,
                    ranks: FULL_RANKS,
                    suits: FULL_SUITS,
                },
                call: CallRules {
                    threshold: CallThreshold::Fixed(7),
                    over_threshold_penalty: 30,
                    ..real_play.call
                },
                scoring: Scoring::Points(PointRules {
                    failed_call_penalty: 30,
                    failed_caller_adds_hand: true,
                    failed_call_others: FailedCallOthers::ScoreHand,
                    limit: 200,
                    elimination: Elimination::AboveLimit,
                    max_rounds: 1000,
                }),
                ..real_play
            },
        }
    }
}

/// One problem with a variant, naming the field and what would be valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every problem found in a variant (validation collects them all).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid rules: {}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
pub struct RulesError(pub Vec<RuleError>);

/// A checked variant plus derived tables. Build with [`Rules::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    variant: Variant,
    /// The value of each card id ([`ID_TABLE`] entries, for [`Card::index`]; 0 past the deck's
    /// ids, never read).
    values: [u8; ID_TABLE],
    deck: [Card; CARD_IDS],
    deck_len: u8,
    /// The same cards as a set.
    deck_set: CardSet,
}

impl Rules {
    /// Checks a variant and derives its tables; reports every problem at once.
    pub fn new(variant: Variant) -> Result<Rules, RulesError> {
        let mut errors = Vec::new();
        let mut err =
            |field: &'static str, message: String| errors.push(RuleError { field, message });
        let v = &variant;
        if !(2..=MAX_PLAYERS as u8).contains(&v.players) {
            err(
                "players",
                format!(
                    "{} players is not supported; use 2 to {MAX_PLAYERS}",
                    v.players
                ),
            );
        }
        if !(1..=MAX_HAND as u8).contains(&v.hand_size) {
            err(
                "hand_size",
                format!(
                    "a hand of {} cards is not supported; use 1 to {MAX_HAND}",
                    v.hand_size
                ),
            );
        }
        if v.deck.jokers > 2 {
            err(
                "deck.jokers",
                format!("{} jokers; a deck has 0, 1 or 2", v.deck.jokers),
            );
        }
        if v.deck.joker_value > 13 {
            err(
                "deck.joker_value",
                format!("{} is above the king; use 0 to 13", v.deck.joker_value),
            );
        }
        if !(1..=FULL_RANKS).contains(&v.deck.ranks) {
            err(
                "deck.ranks",
                format!(
                    "{} ranks per suit; use 1 to {FULL_RANKS} (the lowest ranks, ace first)",
                    v.deck.ranks
                ),
            );
        }
        if !(1..=FULL_SUITS).contains(&v.deck.suits) {
            err(
                "deck.suits",
                format!(
                    "{} suits; use 1 to {FULL_SUITS} (in the order spades, hearts, diamonds, clubs)",
                    v.deck.suits
                ),
            );
        }
        let deck_len = u32::from(v.deck.ranks.min(FULL_RANKS))
            * u32::from(v.deck.suits.min(FULL_SUITS))
            + u32::from(v.deck.jokers.min(2));
        let needed =
            u32::from(v.players) * u32::from(v.hand_size) + u32::from(v.initial_discard) + 1;
        // A deck of ranks or suits out of range has no size worth reporting against.
        let deck_ok =
            (1..=FULL_RANKS).contains(&v.deck.ranks) && (1..=FULL_SUITS).contains(&v.deck.suits);
        if deck_ok && v.players >= 2 && v.hand_size >= 1 && needed > deck_len {
            err(
                "players",
                format!(
                    "{} players x {} cards{} leave no stock in a {deck_len}-card deck; \
                     deal fewer cards{}",
                    v.players,
                    v.hand_size,
                    if v.initial_discard {
                        " + 1 face-up card"
                    } else {
                        ""
                    },
                    if deck_len < 52 {
                        ", seat fewer players or use more ranks or suits"
                    } else {
                        " or seat fewer players"
                    }
                ),
            );
        }
        if v.discards.runs && !(3..=MAX_HAND as u8).contains(&v.discards.min_run) {
            err(
                "discards.min_run",
                format!(
                    "{} is not a usable run length; use 3 to {MAX_HAND}",
                    v.discards.min_run
                ),
            );
        } else if v.discards.runs
            && (1..=FULL_RANKS).contains(&v.deck.ranks)
            && v.discards.min_run > v.deck.ranks
        {
            err(
                "discards.min_run",
                format!(
                    "runs of {} cards cannot be made from a deck of {} ranks; \
                     set `runs: false` or use at least {} ranks",
                    v.discards.min_run, v.deck.ranks, v.discards.min_run
                ),
            );
        }
        match v.call.threshold {
            CallThreshold::Fixed(t) if t > 200 => err(
                "call.threshold",
                format!("{t} is above any possible hand value"),
            ),
            CallThreshold::ByPlayers(table) => {
                for (n, &t) in table.iter().enumerate().take(MAX_PLAYERS + 1).skip(2) {
                    if t > 200 {
                        err(
                            "call.threshold",
                            format!("{t} for {n} players is above any possible hand value"),
                        );
                    }
                }
            }
            _ => {}
        }
        if let Scoring::Points(p) = v.scoring {
            if p.limit == 0 {
                err(
                    "scoring.limit",
                    "an elimination limit of 0 ends the game before it starts".into(),
                );
            }
            if p.max_rounds == 0 {
                err(
                    "scoring.max_rounds",
                    "a game needs at least one round".into(),
                );
            }
        }
        if let Scoring::Coins(c) = v.scoring
            && c.cap == Some(0)
        {
            err(
                "scoring.cap",
                "a cap of 0 would make every payment 0; omit it for no cap".into(),
            );
        }
        if v.turn_limit > MAX_TURN_LIMIT {
            err(
                "turn_limit",
                format!(
                    "{} is above the largest supported limit, {MAX_TURN_LIMIT}",
                    v.turn_limit
                ),
            );
        }
        if v.turn_limit == 0 {
            err("turn_limit", "a round needs at least one turn; use a large number such as 1000 for no practical limit".into());
        }
        if !errors.is_empty() {
            return Err(RulesError(errors));
        }

        let mut values = [0u8; ID_TABLE];
        for (id, value) in values.iter_mut().enumerate().take(CARD_IDS) {
            let card = Card::from_id(id as u8);
            *value = if card.is_joker() {
                v.deck.joker_value
            } else {
                let face = card.rank() + 1;
                match v.deck.face_values {
                    FaceValues::Rank => face,
                    FaceValues::Ten => face.min(10),
                }
            };
        }
        // Suit-major, each suit's ranks from the ace up, then the jokers: the full deck is
        // the ids in order, a smaller one the same cards with the missing ones left out.
        let mut deck = [Card::from_id(0); CARD_IDS];
        let suits = Suit::ALL.into_iter().take(usize::from(v.deck.suits));
        let cards = suits
            .flat_map(|suit| (0..v.deck.ranks).map(move |rank| Card::new(suit, rank)))
            .chain((0..v.deck.jokers).map(Card::joker));
        let mut deck_set = CardSet::EMPTY;
        for (slot, card) in deck.iter_mut().zip(cards) {
            *slot = card;
            deck_set.insert(card);
        }
        debug_assert_eq!(deck_set.len(), deck_len);
        Ok(Rules {
            variant,
            values,
            deck,
            deck_len: deck_len as u8,
            deck_set,
        })
    }

    /// A preset as it stands.
    #[inline]
    pub fn preset(preset: Preset) -> Rules {
        Rules::new(preset.variant()).expect("every preset is valid")
    }

    #[inline]
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    #[inline]
    pub fn players(&self) -> usize {
        self.variant.players as usize
    }

    /// The value of one card under these rules.
    #[inline]
    pub fn value(&self, card: Card) -> u32 {
        u32::from(self.values[card.index()])
    }

    /// The total value of some cards.
    #[inline]
    pub fn hand_value(&self, cards: &[Card]) -> u32 {
        cards.iter().map(|&c| self.value(c)).sum()
    }

    /// The unshuffled deck, suit-major (♠A … ♠K, ♥A …, ♣K) then jokers, as the paper builds it.
    /// A smaller deck (`ranks`, `suits`) is the same order with the missing cards left out, so
    /// its cards are not the ids below its length: use [`Rules::deck_set`] for membership.
    #[inline]
    pub fn deck(&self) -> &[Card] {
        &self.deck[..self.deck_len as usize]
    }

    /// The deck's cards as a set.
    #[inline]
    pub fn deck_set(&self) -> CardSet {
        self.deck_set
    }

    /// The call threshold with `active` players still in the game.
    #[inline]
    pub fn call_threshold(&self, active: usize) -> u32 {
        match self.variant.call.threshold {
            CallThreshold::Fixed(t) => t,
            CallThreshold::ByPlayers(table) => table[active.min(MAX_PLAYERS)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_round_trips_by_name() {
        for p in Preset::ALL {
            Rules::new(p.variant()).unwrap();
            assert_eq!(Preset::from_name(p.name()), Some(p));
        }
    }

    #[test]
    fn card_values() {
        let paper = Rules::preset(Preset::Paper);
        let yaniv = Rules::preset(Preset::Yaniv);
        let k: Card = "KS".parse().unwrap();
        assert_eq!(paper.value(k), 13);
        assert_eq!(yaniv.value(k), 10);
        assert_eq!(yaniv.value(Card::joker(0)), 0);
        assert_eq!(paper.deck().len(), 52);
        assert_eq!(yaniv.deck().len(), 54);
    }

    #[test]
    fn undealable_tables_are_rejected_with_a_reason() {
        let v = Variant {
            players: 8,
            hand_size: 7,
            ..Preset::Paper.variant()
        };
        let err = Rules::new(v).unwrap_err();
        assert_eq!(err.0.len(), 1);
        assert_eq!(err.0[0].field, "players");
        assert!(
            err.0[0].message.contains("no stock"),
            "{}",
            err.0[0].message
        );
        // 8 x 6 + 1 + 1 = 50 fits.
        Rules::new(Variant {
            players: 8,
            hand_size: 6,
            ..Preset::Paper.variant()
        })
        .unwrap();
    }

    #[test]
    fn a_small_deck_is_the_full_decks_lowest_ranks_of_its_first_suits() {
        let mut v = Preset::Paper.variant();
        v.players = 2;
        v.hand_size = 2;
        v.deck.ranks = 4;
        v.deck.suits = 2;
        v.discards.runs = false;
        let rules = Rules::new(v).unwrap();
        let names: Vec<String> = rules.deck().iter().map(|c| c.to_string()).collect();
        assert_eq!(names, ["A♠", "2♠", "3♠", "4♠", "A♥", "2♥", "3♥", "4♥"]);
        assert_eq!(rules.deck_set(), rules.deck().iter().copied().collect());
        assert_eq!(rules.deck_set().len(), 8);
        // Jokers come last and keep their ids.
        v.deck.jokers = 2;
        let rules = Rules::new(v).unwrap();
        assert_eq!(rules.deck().len(), 10);
        assert_eq!(rules.deck()[8], Card::joker(0));
        // The full deck is every id below its length.
        let yaniv = Rules::preset(Preset::Yaniv);
        assert_eq!(yaniv.deck_set(), CardSet((1 << 54) - 1));
    }

    #[test]
    fn the_full_deck_prints_as_before_ranks_and_suits() {
        // A checkpoint's rules fingerprint hashes this text.
        let deck = Preset::Paper.variant().deck;
        assert_eq!(
            format!("{deck:?}"),
            "DeckRules { jokers: 0, joker_value: 0, face_values: Rank }"
        );
        let small = DeckRules {
            ranks: 4,
            suits: 2,
            ..deck
        };
        assert_eq!(
            format!("{small:?}"),
            "DeckRules { jokers: 0, joker_value: 0, face_values: Rank, ranks: 4, suits: 2 }"
        );
    }

    #[test]
    fn small_decks_are_checked_with_reasons() {
        let small = |ranks: u8, suits: u8, hand_size: u8, runs: bool| {
            let mut v = Preset::Paper.variant();
            v.players = 2;
            v.hand_size = hand_size;
            v.deck.ranks = ranks;
            v.deck.suits = suits;
            v.discards.runs = runs;
            Rules::new(v)
        };
        let problems = |r: Result<Rules, RulesError>| -> Vec<String> {
            r.unwrap_err().0.iter().map(|e| e.to_string()).collect()
        };
        assert_eq!(
            problems(small(0, 5, 2, false)),
            [
                "deck.ranks: 0 ranks per suit; use 1 to 13 (the lowest ranks, ace first)",
                "deck.suits: 5 suits; use 1 to 4 (in the order spades, hearts, diamonds, clubs)"
            ]
        );
        // 2 x 3 + 1 face-up + 1 to draw = 8 cards: 2 suits of 4 ranks deal, of 3 do not.
        small(4, 2, 3, false).unwrap();
        let p = problems(small(3, 2, 3, false));
        assert_eq!(p.len(), 1);
        assert!(
            p[0].starts_with(
                "players: 2 players x 3 cards + 1 face-up card leave no stock in a 6-card deck"
            ),
            "{p:?}"
        );
        assert!(p[0].contains("more ranks or suits"), "{p:?}");
        // Runs of 3 need 3 ranks.
        small(3, 4, 2, true).unwrap();
        assert_eq!(
            problems(small(2, 4, 2, true)),
            [
                "discards.min_run: runs of 3 cards cannot be made from a deck of 2 ranks; \
              set `runs: false` or use at least 3 ranks"
            ]
        );
        small(2, 4, 2, false).unwrap();
        small(1, 1, 1, false).unwrap_err();
        // One card per player, one face up and one to draw: a 4-card deck of one rank.
        small(1, 4, 1, false).unwrap();
    }

    #[test]
    fn validation_collects_every_problem() {
        let v = Variant {
            players: 1,
            hand_size: 0,
            turn_limit: 0,
            ..Preset::Paper.variant()
        };
        let err = Rules::new(v).unwrap_err();
        let fields: Vec<_> = err.0.iter().map(|e| e.field).collect();
        assert_eq!(fields, ["players", "hand_size", "turn_limit"]);
    }
}
