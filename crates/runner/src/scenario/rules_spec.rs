//! The `rules:` section of a scenario: a preset plus overrides of any rule field, flat and
//! named for people. Resolved once into the engine's [`Variant`]; the reverse conversion
//! writes the fully resolved rules into the manifest.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use dhumbal_game::rules::{
    CallThreshold, CoinRules, Elimination, EmptyHand, FULL_RANKS, FULL_SUITS, FaceValues,
    FailedCallOthers, MAX_PLAYERS, NoCallEnd, OverCall, PickRule, PointRules, Preset, Scoring,
    SetPick, Starter, StockRule, TieBreak, Variant,
};

/// A preset plus overrides. Every field but `preset` is optional and replaces the preset's value.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RulesSpec {
    /// Starting point: `paper` (the paper's public code), `jhyap` (common Nepali play),
    /// `simplified-2p` (the tabular plan's) or `yaniv`. Default: `paper`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<PresetName>,
    /// Seats at the table, 2 to 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub players: Option<u8>,
    /// Cards dealt to each player, 1 to 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand_size: Option<u8>,
    /// Turn one card face up to start the discard pile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_discard: Option<bool>,
    /// Jokers in the deck, 0 to 2 (not wild: they count `joker_value`, two make a pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jokers: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joker_value: Option<u8>,
    /// `rank`: J, Q, K count 11, 12, 13; `ten`: they count 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub face_cards: Option<FaceCards>,
    /// Ranks per suit, 1 to 13: the lowest ones, ace first (`4`: A, 2, 3, 4). Default 13. A
    /// small deck must still deal every hand, the face-up card and a stock card; with
    /// `runs: true` it needs at least `min_run` ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u8>,
    /// Suits, 1 to 4, in the deck's order spades, hearts, diamonds, clubs (`2`: spades and
    /// hearts). Default 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suits: Option<u8>,
    /// Two or more cards of one rank may be discarded together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<bool>,
    /// Same-suit runs may be discarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<bool>,
    /// Shortest legal run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_run: Option<u8>,
    /// The ace may also sit above the king (Q-K-A); runs never wrap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ace_high: Option<bool>,
    /// Hand value at or below which a player may call Jhyap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
    /// Threshold by number of players still in, e.g. `{2: 5, 3: 10, 4: 15}`; replaces
    /// `threshold`. Counts not listed use the nearest smaller listed count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_by_players: Option<BTreeMap<u8, u32>>,
    /// `forbidden`: no call above the threshold; `penalised`: allowed, always a failed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_threshold_call: Option<OverThresholdCall>,
    /// With `over_threshold_call: penalised`: the penalty for a call above the threshold (coins
    /// paid to the winner, or points), in place of `failed_call_penalty`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_threshold_penalty: Option<u32>,
    /// `false`: the caller must be strictly lowest (the paper); `true`: the caller wins ties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller_wins_ties: Option<bool>,
    /// Among tied non-callers: `lowest_seat` (the paper) or `after_caller` (turn order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie_break: Option<TieBreakName>,
    /// `coins` (the paper: transfers between players) or `points` (cumulative, elimination).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoring: Option<ScoringName>,
    /// Coins: each player's starting coins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_coins: Option<i64>,
    /// Coins: per-hand cap on a payment; `null` for none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub cap: Option<Option<u32>>,
    /// Extra coins a failed caller pays, or penalty points a failed caller scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_call_penalty: Option<u32>,
    /// Points: a failed caller also scores its own hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_caller_adds_hand: Option<bool>,
    /// Points: what the others score on a failed call: `score_hand` or `zero`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_call_others: Option<FailedOthers>,
    /// Points: elimination limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elimination_limit: Option<u32>,
    /// Points: out `at_limit` (total >= limit) or `above_limit` (total > limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elimination: Option<EliminationName>,
    /// Points: a game stops after this many rounds even if several players are left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// What may be taken instead of a stock card: `own_last_discard` (the paper's code),
    /// `previous_top`, `previous_ends` or `previous_any` (a card of the previous player's set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<PickName>,
    /// When the stock runs out: `reshuffle` the pile under its top, or `end_round`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock_empty: Option<StockName>,
    /// Player-turns after which the round ends without a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_limit: Option<u32>,
    /// Settlement of a round that ends without a call: `first_minimum_calls` (the paper),
    /// `lowest_wins` or `void`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_call_end: Option<NoCallEndName>,
    /// A discard that empties a hand: `wins_as_call` (the paper) or `draws`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_hand: Option<EmptyHandName>,
    /// Who starts a round: `seat0`, `rotate`, `random`, `winner` or `loser` (of the last round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starter: Option<StarterName>,
    /// Draw the first round's starter at random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_first_starter: Option<bool>,
}

macro_rules! names {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }
    };
}

names!(PresetName { Paper = "paper", Jhyap = "jhyap", Simplified2p = "simplified-2p", Yaniv = "yaniv" });
names!(FaceCards { Rank = "rank", Ten = "ten" });
names!(OverThresholdCall { Forbidden = "forbidden", Penalised = "penalised" });
names!(TieBreakName { LowestSeat = "lowest_seat", AfterCaller = "after_caller" });
names!(ScoringName { Coins = "coins", Points = "points" });
names!(FailedOthers { ScoreHand = "score_hand", Zero = "zero" });
names!(EliminationName { AtLimit = "at_limit", AboveLimit = "above_limit" });
names!(PickName {
    OwnLastDiscard = "own_last_discard",
    PreviousTop = "previous_top",
    PreviousEnds = "previous_ends",
    PreviousAny = "previous_any",
});
names!(StockName { Reshuffle = "reshuffle", EndRound = "end_round" });
names!(NoCallEndName { FirstMinimumCalls = "first_minimum_calls", LowestWins = "lowest_wins", Void = "void" });
names!(EmptyHandName { WinsAsCall = "wins_as_call", Draws = "draws" });
names!(StarterName { Seat0 = "seat0", Rotate = "rotate", Random = "random", Winner = "winner", Loser = "loser" });

/// Point rules used when a coin preset is switched to `scoring: points` (the `jhyap` preset's).
fn default_points() -> PointRules {
    match Preset::Jhyap.variant().scoring {
        Scoring::Points(p) => p,
        Scoring::Coins(_) => unreachable!("jhyap scores points"),
    }
}

/// Coin rules used when a point preset is switched to `scoring: coins` (the `paper` preset's).
fn default_coins() -> CoinRules {
    match Preset::Paper.variant().scoring {
        Scoring::Coins(c) => c,
        Scoring::Points(_) => unreachable!("paper scores coins"),
    }
}

impl RulesSpec {
    /// Every field a `rules:` mapping may name (`preset` included), sorted: read from the
    /// scenario schema, so that fields a preset leaves unset are there too.
    pub fn field_names() -> Vec<String> {
        super::spec::valid_keys(&super::spec::json_schema(), &["rules"])
    }

    /// The variant these settings describe. Fields that belong to the other scoring mode are
    /// reported as problems (`field`, message).
    pub fn to_variant(&self) -> Result<Variant, Vec<(&'static str, String)>> {
        let mut problems = Vec::new();
        let preset = match self.preset.unwrap_or(PresetName::Paper) {
            PresetName::Paper => Preset::Paper,
            PresetName::Jhyap => Preset::Jhyap,
            PresetName::Simplified2p => Preset::Simplified2p,
            PresetName::Yaniv => Preset::Yaniv,
        };
        let mut v = preset.variant();
        self.set_deal(&mut v);
        self.set_call(&mut v, &mut problems);
        self.set_scoring(&mut v, &mut problems);
        self.set_play(&mut v);
        if problems.is_empty() {
            Ok(v)
        } else {
            Err(problems)
        }
    }

    /// The table, the deal and the deck, and what may be discarded.
    fn set_deal(&self, v: &mut Variant) {
        set(&mut v.players, self.players);
        set(&mut v.hand_size, self.hand_size);
        set(&mut v.initial_discard, self.initial_discard);
        set(&mut v.deck.jokers, self.jokers);
        set(&mut v.deck.joker_value, self.joker_value);
        if let Some(f) = self.face_cards {
            v.deck.face_values = match f {
                FaceCards::Rank => FaceValues::Rank,
                FaceCards::Ten => FaceValues::Ten,
            };
        }
        set(&mut v.deck.ranks, self.ranks);
        set(&mut v.deck.suits, self.suits);
        set(&mut v.discards.sets, self.sets);
        set(&mut v.discards.runs, self.runs);
        set(&mut v.discards.min_run, self.min_run);
        set(&mut v.discards.ace_high, self.ace_high);
    }

    /// The call: its threshold (fixed, or by the number of players), a call over it, ties.
    fn set_call(&self, v: &mut Variant, problems: &mut Vec<(&'static str, String)>) {
        if let Some(t) = self.threshold {
            v.call.threshold = CallThreshold::Fixed(t);
        }
        if let Some(table) = &self.threshold_by_players {
            if self.threshold.is_some() {
                problems.push((
                    "threshold_by_players",
                    "give either `threshold` or `threshold_by_players`, not both".into(),
                ));
            }
            match table.keys().next() {
                Some(&first) if first <= 2 => {
                    let mut by = [0u32; MAX_PLAYERS + 1];
                    let mut current = table[&first];
                    for (n, slot) in by.iter_mut().enumerate().skip(2) {
                        if let Some(&t) = table.get(&(n as u8)) {
                            current = t;
                        }
                        *slot = current;
                    }
                    v.call.threshold = CallThreshold::ByPlayers(by);
                }
                _ => problems.push((
                    "threshold_by_players",
                    "the table must start at 2 players (e.g. `{2: 5, 3: 10, 4: 15}`)".into(),
                )),
            }
        }
        if let Some(o) = self.over_threshold_call {
            v.call.over_threshold = match o {
                OverThresholdCall::Forbidden => OverCall::Forbidden,
                OverThresholdCall::Penalised => OverCall::Penalised,
            };
        }
        set(&mut v.call.caller_wins_ties, self.caller_wins_ties);
        set(
            &mut v.call.over_threshold_penalty,
            self.over_threshold_penalty,
        );
        if let Some(t) = self.tie_break {
            v.call.tie_break = match t {
                TieBreakName::LowestSeat => TieBreak::LowestSeat,
                TieBreakName::AfterCaller => TieBreak::AfterCaller,
            };
        }
    }

    /// The scoring mode (switched to the other's defaults when asked) and its fields; a field
    /// of the other mode is a problem.
    fn set_scoring(&self, v: &mut Variant, problems: &mut Vec<(&'static str, String)>) {
        match self.scoring {
            Some(ScoringName::Points) if matches!(v.scoring, Scoring::Coins(_)) => {
                v.scoring = Scoring::Points(default_points())
            }
            Some(ScoringName::Coins) if matches!(v.scoring, Scoring::Points(_)) => {
                v.scoring = Scoring::Coins(default_coins())
            }
            _ => {}
        }
        match &mut v.scoring {
            Scoring::Coins(c) => {
                set(&mut c.starting_coins, self.starting_coins);
                set(&mut c.cap, self.cap);
                set(&mut c.failed_call_penalty, self.failed_call_penalty);
                let point_fields = [
                    (
                        "failed_caller_adds_hand",
                        self.failed_caller_adds_hand.is_some(),
                    ),
                    ("failed_call_others", self.failed_call_others.is_some()),
                    ("elimination_limit", self.elimination_limit.is_some()),
                    ("elimination", self.elimination.is_some()),
                    ("max_rounds", self.max_rounds.is_some()),
                ];
                for (field, given) in point_fields {
                    if given {
                        problems.push((field, "applies to point scoring only; these rules score coins (set `scoring: points`)".into()));
                    }
                }
            }
            Scoring::Points(p) => {
                set(&mut p.failed_call_penalty, self.failed_call_penalty);
                set(&mut p.failed_caller_adds_hand, self.failed_caller_adds_hand);
                if let Some(o) = self.failed_call_others {
                    p.failed_call_others = match o {
                        FailedOthers::ScoreHand => FailedCallOthers::ScoreHand,
                        FailedOthers::Zero => FailedCallOthers::Zero,
                    };
                }
                set(&mut p.limit, self.elimination_limit);
                if let Some(e) = self.elimination {
                    p.elimination = match e {
                        EliminationName::AtLimit => Elimination::AtLimit,
                        EliminationName::AboveLimit => Elimination::AboveLimit,
                    };
                }
                set(&mut p.max_rounds, self.max_rounds);
                for (field, given) in [
                    ("starting_coins", self.starting_coins.is_some()),
                    ("cap", self.cap.is_some()),
                ] {
                    if given {
                        problems.push((field, "applies to coin scoring only; these rules score points (set `scoring: coins`)".into()));
                    }
                }
            }
        }
    }

    /// Play: the pick, an empty stock, the turn limit, the end without a call, an empty hand,
    /// and who starts.
    fn set_play(&self, v: &mut Variant) {
        if let Some(p) = self.pick {
            v.pick = match p {
                PickName::OwnLastDiscard => PickRule::OwnLastDiscard,
                PickName::PreviousTop => PickRule::PreviousDiscard(SetPick::Top),
                PickName::PreviousEnds => PickRule::PreviousDiscard(SetPick::Ends),
                PickName::PreviousAny => PickRule::PreviousDiscard(SetPick::Any),
            };
        }
        if let Some(s) = self.stock_empty {
            v.stock = match s {
                StockName::Reshuffle => StockRule::Reshuffle,
                StockName::EndRound => StockRule::EndRound,
            };
        }
        set(&mut v.turn_limit, self.turn_limit);
        if let Some(e) = self.no_call_end {
            v.no_call_end = match e {
                NoCallEndName::FirstMinimumCalls => NoCallEnd::FirstMinimumCalls,
                NoCallEndName::LowestWins => NoCallEnd::LowestWins,
                NoCallEndName::Void => NoCallEnd::Void,
            };
        }
        if let Some(e) = self.empty_hand {
            v.empty_hand = match e {
                EmptyHandName::WinsAsCall => EmptyHand::WinsAsCall,
                EmptyHandName::Draws => EmptyHand::Draws,
            };
        }
        if let Some(s) = self.starter {
            v.starter = match s {
                StarterName::Seat0 => Starter::Seat0,
                StarterName::Rotate => Starter::Rotate,
                StarterName::Random => Starter::Random,
                StarterName::Winner => Starter::Winner,
                StarterName::Loser => Starter::Loser,
            };
        }
        set(&mut v.random_first_starter, self.random_first_starter);
    }

    /// Every field of a variant, spelled out (for the manifest).
    pub fn from_variant(v: &Variant) -> RulesSpec {
        let (threshold, threshold_by_players) = match v.call.threshold {
            CallThreshold::Fixed(t) => (Some(t), None),
            CallThreshold::ByPlayers(by) => (
                None,
                Some((2..=MAX_PLAYERS).map(|n| (n as u8, by[n])).collect()),
            ),
        };
        let mut spec = RulesSpec {
            preset: None,
            players: Some(v.players),
            hand_size: Some(v.hand_size),
            initial_discard: Some(v.initial_discard),
            jokers: Some(v.deck.jokers),
            joker_value: Some(v.deck.joker_value),
            face_cards: Some(match v.deck.face_values {
                FaceValues::Rank => FaceCards::Rank,
                FaceValues::Ten => FaceCards::Ten,
            }),
            // The full deck's ranks and suits are left out, so that the manifest (and the
            // hashes taken of what it spells out) of every full-deck run is as before.
            ranks: (v.deck.ranks != FULL_RANKS).then_some(v.deck.ranks),
            suits: (v.deck.suits != FULL_SUITS).then_some(v.deck.suits),
            sets: Some(v.discards.sets),
            runs: Some(v.discards.runs),
            min_run: Some(v.discards.min_run),
            ace_high: Some(v.discards.ace_high),
            threshold,
            threshold_by_players,
            over_threshold_call: Some(match v.call.over_threshold {
                OverCall::Forbidden => OverThresholdCall::Forbidden,
                OverCall::Penalised => OverThresholdCall::Penalised,
            }),
            caller_wins_ties: Some(v.call.caller_wins_ties),
            over_threshold_penalty: Some(v.call.over_threshold_penalty),
            tie_break: Some(match v.call.tie_break {
                TieBreak::LowestSeat => TieBreakName::LowestSeat,
                TieBreak::AfterCaller => TieBreakName::AfterCaller,
            }),
            pick: Some(match v.pick {
                PickRule::OwnLastDiscard => PickName::OwnLastDiscard,
                PickRule::PreviousDiscard(SetPick::Top) => PickName::PreviousTop,
                PickRule::PreviousDiscard(SetPick::Ends) => PickName::PreviousEnds,
                PickRule::PreviousDiscard(SetPick::Any) => PickName::PreviousAny,
            }),
            stock_empty: Some(match v.stock {
                StockRule::Reshuffle => StockName::Reshuffle,
                StockRule::EndRound => StockName::EndRound,
            }),
            turn_limit: Some(v.turn_limit),
            no_call_end: Some(match v.no_call_end {
                NoCallEnd::FirstMinimumCalls => NoCallEndName::FirstMinimumCalls,
                NoCallEnd::LowestWins => NoCallEndName::LowestWins,
                NoCallEnd::Void => NoCallEndName::Void,
            }),
            empty_hand: Some(match v.empty_hand {
                EmptyHand::WinsAsCall => EmptyHandName::WinsAsCall,
                EmptyHand::Draws => EmptyHandName::Draws,
            }),
            starter: Some(match v.starter {
                Starter::Seat0 => StarterName::Seat0,
                Starter::Rotate => StarterName::Rotate,
                Starter::Random => StarterName::Random,
                Starter::Winner => StarterName::Winner,
                Starter::Loser => StarterName::Loser,
            }),
            random_first_starter: Some(v.random_first_starter),
            ..RulesSpec::default()
        };
        match v.scoring {
            Scoring::Coins(c) => {
                spec.scoring = Some(ScoringName::Coins);
                spec.starting_coins = Some(c.starting_coins);
                spec.cap = Some(c.cap);
                spec.failed_call_penalty = Some(c.failed_call_penalty);
            }
            Scoring::Points(p) => {
                spec.scoring = Some(ScoringName::Points);
                spec.failed_call_penalty = Some(p.failed_call_penalty);
                spec.failed_caller_adds_hand = Some(p.failed_caller_adds_hand);
                spec.failed_call_others = Some(match p.failed_call_others {
                    FailedCallOthers::ScoreHand => FailedOthers::ScoreHand,
                    FailedCallOthers::Zero => FailedOthers::Zero,
                });
                spec.elimination_limit = Some(p.limit);
                spec.elimination = Some(match p.elimination {
                    Elimination::AtLimit => EliminationName::AtLimit,
                    Elimination::AboveLimit => EliminationName::AboveLimit,
                });
                spec.max_rounds = Some(p.max_rounds);
            }
        }
        spec
    }
}

/// A field that may be given as `null`: present-and-null is `Some(None)`, absent is `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<u32>>, D::Error> {
    Option::<u32>::deserialize(d).map(Some)
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_round_trips_through_the_spec() {
        for p in Preset::ALL {
            let v = p.variant();
            assert_eq!(
                RulesSpec::from_variant(&v).to_variant().unwrap(),
                v,
                "{}",
                p.name()
            );
        }
    }

    #[test]
    fn a_small_deck_round_trips_and_the_full_one_is_not_spelled_out() {
        let spec = RulesSpec {
            ranks: Some(4),
            suits: Some(2),
            ..RulesSpec::default()
        };
        let v = spec.to_variant().unwrap();
        assert_eq!((v.deck.ranks, v.deck.suits), (4, 2));
        let back = RulesSpec::from_variant(&v);
        assert_eq!((back.ranks, back.suits), (Some(4), Some(2)));
        assert_eq!(back.to_variant().unwrap(), v);
        let full = RulesSpec::from_variant(&Preset::Paper.variant());
        assert_eq!((full.ranks, full.suits), (None, None));
        let json = serde_json::to_string(&full).unwrap();
        assert!(!json.contains("ranks") && !json.contains("suits"), "{json}");
    }

    #[test]
    fn fields_of_the_other_scoring_mode_are_reported() {
        let spec = RulesSpec {
            elimination_limit: Some(50),
            ..RulesSpec::default()
        };
        let err = spec.to_variant().unwrap_err();
        assert_eq!(err[0].0, "elimination_limit");
        let spec = RulesSpec {
            scoring: Some(ScoringName::Points),
            elimination_limit: Some(50),
            ..RulesSpec::default()
        };
        assert!(matches!(spec.to_variant().unwrap().scoring, Scoring::Points(p) if p.limit == 50));
    }

    #[test]
    fn threshold_by_players_fills_gaps_upwards() {
        let spec = RulesSpec {
            threshold_by_players: Some([(2, 5), (3, 10), (4, 15)].into()),
            ..RulesSpec::default()
        };
        let v = spec.to_variant().unwrap();
        let CallThreshold::ByPlayers(by) = v.call.threshold else {
            panic!()
        };
        assert_eq!(&by[2..], &[5, 10, 15, 15, 15, 15, 15]);
    }
}
