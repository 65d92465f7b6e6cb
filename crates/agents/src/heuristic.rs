//! The paper's four rule-based agents: Aggressive, Conservative, Balanced, Opportunistic.
//!
//! One implementation with a [`Style`] (which call rule) and [`HeuristicParams`] (every constant
//! of the public code, settable). The defaults reproduce `RuleBasedAI` in the paper's
//! `rule_based_agent.py` exactly, including candidate order, first-maximum tie-breaks and the
//! order of floating-point operations (as `rule_based_agent.py` computes them).
//!
//! Where the paper's code hard-wires its own rules (threshold 10, the own-discard pick), these
//! agents read the variant instead: "10" is the call threshold in force, and with several cards
//! on offer the pick rule considers the lowest one.

use dhumbal_game::Rules;
use dhumbal_game::cards::{Card, Discard, JOKER_RANK};
use dhumbal_game::decision::{
    Agent, AgentError, Candidate, Choice, Explanation, Observation, Phase, Pick,
};
use dhumbal_game::discards::{
    Runs, for_each_maximal_run, for_each_multi_discard, for_each_repeated_rank, has_run_start,
    suit_ranks,
};
use dhumbal_game::rng::RandomSource;
use serde_json::Value;

use crate::family::{Entry, Family, Param, ParamType, Recipe, Resolve, describe_params};

/// Which call rule the agent follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Style {
    /// Always calls when allowed.
    Aggressive,
    /// Calls at or below `strict_threshold`.
    Conservative,
    /// Calls for sure at or below `sure_threshold`, with `call_probability` up to
    /// `strict_threshold`, and with `late_call_probability` above it.
    Balanced,
    /// Calls at or below `strict_threshold`; above it with a probability that depends on whether
    /// it is ahead of the table average and on how late in the round it is.
    Opportunistic,
}

impl Style {
    pub const ALL: [Style; 4] = [
        Style::Aggressive,
        Style::Conservative,
        Style::Balanced,
        Style::Opportunistic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Style::Aggressive => "aggressive",
            Style::Conservative => "conservative",
            Style::Balanced => "balanced",
            Style::Opportunistic => "opportunistic",
        }
    }
}

/// Every constant of the paper's rule-based agents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeuristicParams {
    /// Take an offered card worth at most this (adjusted by hand value below).
    pub pickup_threshold: i64,
    /// Hand value (after the discard) above which the pickup threshold rises.
    pub pickup_high_hand: u32,
    pub pickup_high_raise: i64,
    /// Hand value at or below which the pickup threshold falls.
    pub pickup_low_hand: u32,
    pub pickup_low_drop: i64,
    /// `p_h`: weight of the discarded value.
    pub high_preference: f64,
    /// `b_m`: bonus per card for multi-card discards.
    pub multi_card_bonus: f64,
    /// `b_s`: bonus for a run.
    pub sequence_bonus: f64,
    /// Bonus when the discard leaves a callable hand.
    pub call_bonus: f64,
    /// Weight of the relative improvement `(V - Vr) / V`.
    pub improvement_weight: f64,
    /// `r`: scales every score (never changes the choice, up to float rounding).
    pub risk_adjustment: f64,
    /// Expected value of the next card, used when choosing a discard near the threshold.
    pub expected_draw: u32,
    pub strict_threshold: u32,
    /// Balanced: always call at or below this.
    pub sure_threshold: u32,
    /// Balanced: call probability up to `strict_threshold`. (Opportunistic starts from it too,
    /// but sets it from the standings before every read, so it never reaches its play.)
    pub call_probability: f64,
    /// Balanced: call probability above `strict_threshold`.
    pub late_call_probability: f64,
    /// Opportunistic: base probability and risk factor when ahead of the table mean.
    pub ahead_call_probability: f64,
    pub ahead_risk: f64,
    /// Opportunistic: base probability and risk factor otherwise.
    pub behind_call_probability: f64,
    pub behind_risk: f64,
    /// Opportunistic: added per point below the threshold.
    pub per_point_probability: f64,
    /// Opportunistic: after this many player-turns, add `late_turn_bonus`.
    pub late_turn: u32,
    pub late_turn_bonus: f64,
}

impl HeuristicParams {
    /// The public code's values for a style (`RuleBasedAI` in `rule_based_agent.py`).
    pub fn paper(style: Style) -> HeuristicParams {
        let base = HeuristicParams {
            pickup_threshold: 4,
            pickup_high_hand: 15,
            pickup_high_raise: 2,
            pickup_low_hand: 12,
            pickup_low_drop: 1,
            high_preference: 0.8,
            multi_card_bonus: 2.0,
            sequence_bonus: 3.0,
            call_bonus: 50.0,
            improvement_weight: 10.0,
            risk_adjustment: 1.0,
            expected_draw: 5,
            strict_threshold: 7,
            sure_threshold: 5,
            call_probability: 0.6,
            late_call_probability: 0.4,
            ahead_call_probability: 0.8,
            ahead_risk: 1.2,
            behind_call_probability: 0.3,
            behind_risk: 0.8,
            per_point_probability: 0.05,
            late_turn: 20,
            late_turn_bonus: 0.15,
        };
        match style {
            Style::Aggressive => HeuristicParams {
                high_preference: 1.0,
                risk_adjustment: 1.2,
                strict_threshold: 10,
                call_probability: 0.8,
                ..base
            },
            Style::Conservative => HeuristicParams {
                pickup_threshold: 3,
                high_preference: 0.6,
                risk_adjustment: 0.8,
                strict_threshold: 7,
                call_probability: 0.3,
                ..base
            },
            Style::Balanced => HeuristicParams {
                strict_threshold: 8,
                call_probability: 0.7,
                ..base
            },
            Style::Opportunistic => HeuristicParams {
                strict_threshold: 7,
                call_probability: 0.5,
                ..base
            },
        }
    }
}

/// A rule-based agent.
#[derive(Clone, Debug)]
pub struct Heuristic {
    name: String,
    style: Style,
    params: HeuristicParams,
    /// Opportunistic changes these on each call decision, and they persist (as in the code).
    risk: f64,
    call_probability: f64,
    /// Whether, for a positive risk, a single's score grows with its value (see
    /// `choose_discard`); fixed by the parameters, so decided once.
    singles_monotone: bool,
    /// The last call decision's probability of calling, and the number it drew when it drew
    /// one: kept for [`Agent::explain`], which must not draw again.
    call_probability_used: f64,
    call_draw: Option<f64>,
}

impl Heuristic {
    pub fn new(name: impl Into<String>, style: Style, params: HeuristicParams) -> Heuristic {
        Heuristic {
            name: name.into(),
            style,
            params,
            risk: params.risk_adjustment,
            call_probability: params.call_probability,
            singles_monotone: params.high_preference >= 0.0
                && params.call_bonus >= 0.0
                && params.improvement_weight > 0.0,
            call_probability_used: 0.0,
            call_draw: None,
        }
    }

    /// The style with the paper's constants.
    pub fn paper(style: Style) -> Heuristic {
        Heuristic::new(style.name(), style, HeuristicParams::paper(style))
    }

    /// The agent `recipe` builds when it is one of these styles (as a concrete type, for a
    /// search to roll out with without dynamic dispatch); `None` for any other recipe. Read
    /// back from the recipe's description, and only where that description is exactly the
    /// one of the style and constants found.
    pub fn from_recipe(recipe: &dyn Recipe, id: &str) -> Option<Heuristic> {
        let style = Style::ALL
            .into_iter()
            .find(|s| s.name() == recipe.family())?;
        let described = recipe.describe();
        let given = described.get("params")?.as_object()?;
        let mut params = HeuristicParams::paper(style);
        for p in heuristic_param_infos(style) {
            let value = given.get(p.name)?.as_f64()?;
            set_heuristic_param(&mut params, p.name, value);
        }
        (HeuristicRecipe(style, params).describe() == described)
            .then(|| Heuristic::new(id, style, params))
    }

    pub fn style(&self) -> Style {
        self.style
    }

    /// Whether a decision can depend on what it kept from earlier ones: Opportunistic's risk
    /// and call probability are set by its last call decision and persist (as in the paper's
    /// code); the other styles keep nothing that a choice reads.
    pub fn carries_state(&self) -> bool {
        self.style == Style::Opportunistic
    }

    fn wants_call(&mut self, obs: &Observation<'_>, rng: &mut dyn RandomSource) -> bool {
        let (p, draws) = self.call_rule(obs);
        self.call_probability_used = p;
        self.call_draw = None;
        if !draws {
            return p >= 1.0;
        }
        let u = rng.random();
        self.call_draw = Some(u);
        u < p
    }

    /// The call rule: the probability that it calls now, and whether it draws a number to
    /// decide (where it does not, the probability is 0 or 1). Sets Opportunistic's risk and
    /// base probability from the standings, as its rule does. Where the rule draws, it draws
    /// whatever the probability (as the paper's code does), so that the stream moves alike.
    fn call_rule(&mut self, obs: &Observation<'_>) -> (f64, bool) {
        let value = obs.hand_value();
        let limit = obs.call_threshold;
        if value > limit {
            return (0.0, false);
        }
        let p = &self.params;
        let sure = |b: bool| (if b { 1.0 } else { 0.0 }, false);
        match self.style {
            Style::Aggressive => sure(true),
            Style::Conservative => sure(value <= p.strict_threshold),
            Style::Balanced => {
                if value <= p.sure_threshold {
                    sure(true)
                } else if value <= p.strict_threshold {
                    (p.call_probability, true)
                } else {
                    (p.late_call_probability, true)
                }
            }
            Style::Opportunistic => {
                if ahead(obs) {
                    self.risk = p.ahead_risk;
                    self.call_probability = p.ahead_call_probability;
                } else {
                    self.risk = p.behind_risk;
                    self.call_probability = p.behind_call_probability;
                }
                if value <= p.strict_threshold {
                    return sure(true);
                }
                let mut prob =
                    self.call_probability + f64::from(limit - value) * p.per_point_probability;
                if obs.turn > p.late_turn {
                    prob += p.late_turn_bonus;
                }
                (prob, true)
            }
        }
    }

    /// Equation (2) of the paper, term by term in the code's order of operations: the score of
    /// a discard of `n` cards worth `v` (a run or not) from a hand worth `value`, under call
    /// threshold `limit`.
    #[inline]
    fn eq2(&self, value: u32, limit: u32, v: u32, n: usize, run: bool) -> f64 {
        let p = &self.params;
        let remaining = value - v;
        let mut s = f64::from(v) * p.high_preference;
        if n > 1 {
            s += n as f64 * p.multi_card_bonus;
        }
        if run {
            s += p.sequence_bonus;
        }
        if remaining <= limit {
            s += p.call_bonus;
        }
        let improvement = if value == 0 {
            0.0
        } else {
            f64::from(value - remaining) / f64::from(value)
        };
        s += improvement.max(0.0) * p.improvement_weight;
        s * self.risk
    }

    /// The discard it plays ([`Agent::discard`], which never fails).
    pub(crate) fn choose_discard(&self, obs: &Observation<'_>) -> Discard {
        let mut discard = Discard::new();
        self.write_discard_of(obs, &mut discard);
        discard
    }

    /// [`Heuristic::choose_discard`] written into `into` ([`Agent::discard_into`], and a
    /// search's rollout before it glances).
    pub(crate) fn write_discard_of(&self, obs: &Observation<'_>, into: &mut Discard) {
        let (hand, value) = (obs.hand.as_slice(), obs.hand_value());
        self.write_discard(obs.rules, hand, value, obs.call_threshold, into);
    }

    /// [`Heuristic::choose_discard`] from what it reads of the observation (the hand, its
    /// value and the call threshold: what a search's rollouts hand it, see [`Glance`]),
    /// written into `into`: the engine's own discard (handed over by the rollouts and by
    /// [`Agent::discard_into`]), where the single played on most turns is written directly.
    ///
    /// [`Glance`]: dhumbal_game::Glance
    pub(crate) fn write_discard(
        &self,
        rules: &Rules,
        hand: &[Card],
        value: u32,
        limit: u32,
        into: &mut Discard,
    ) {
        if value <= limit {
            into.copy_cards_from(&self.near_threshold_discard(rules, hand, value, limit));
            return;
        }
        let risk = self.risk;
        let score = |v: u32, n: usize, run: bool| self.eq2(value, limit, v, n, run);
        // Singles first (hand order), then sets and maximal runs; the first maximum wins.
        let mut best_single = 0;
        let mut set = 0u64;
        let best = if self.singles_monotone && risk > 0.0 {
            // Then a single's score strictly increases with its value (the improvement term
            // alone moves by at least weight/V between values, far above rounding), so the
            // first maximum is the first card of highest value: score only that one, and only
            // if a multi-card discard is there to be compared with it.
            let mut top = 0;
            for (i, &c) in hand.iter().enumerate() {
                set |= 1 << c.id();
                let v = rules.value(c);
                if v > top {
                    top = v;
                    best_single = i;
                }
            }
            // `top` is the value of `hand[best_single]` (both stay at the first card when
            // every card is worth 0).
            self.best_multi_discard(rules, hand, set, value, limit, || score(top, 1, false))
        } else {
            let mut best_score = f64::NEG_INFINITY;
            for (i, &c) in hand.iter().enumerate() {
                set |= 1 << c.id();
                let s = score(rules.value(c), 1, false);
                if s > best_score {
                    best_score = s;
                    best_single = i;
                }
            }
            self.best_multi_discard(rules, hand, set, value, limit, || best_score)
        };
        match best {
            Some(cards) => into.copy_cards_from(&cards),
            None => {
                into.clear();
                into.push(hand[best_single]);
            }
        }
    }

    /// The multi-card discard that `choose_discard` plays, if one beats the best single's
    /// score (`single_score`, asked only if the hand holds a multi-card discard): the first of
    /// highest eq. 2 score among the candidates of [`for_each_multi_discard`] with
    /// [`Runs::Maximal`], in its order (sets: ranks by first appearance, sizes ascending, then
    /// lexicographic; then maximal runs, suits by first appearance). The same candidates, order
    /// and scores as that enumeration, scored from the hand's bit set `set` without building
    /// each discard (the rollouts of a search ask this on almost every turn); the tests below
    /// check that the two agree.
    #[inline]
    fn best_multi_discard(
        &self,
        rules: &Rules,
        hand: &[Card],
        set: u64,
        value: u32,
        limit: u32,
        single_score: impl FnOnce() -> f64,
    ) -> Option<Discard> {
        let d = rules.variant().discards;
        let [s0, s1, s2, s3] = suit_ranks(set);
        // Ranks held in two or more suits, and bit 13 when both jokers are held.
        let repeated = (s0 & (s1 | s2 | s3))
            | (s1 & (s2 | s3))
            | (s2 & s3)
            | (u16::from(set >> 52 == 3) << 13);
        let any_run = d.runs && (d.ace_high || has_run_start(set, u32::from(d.min_run)));
        let any_set = d.sets && repeated != 0;
        if !any_set && !any_run {
            return None;
        }
        self.best_multi_discard_of(
            rules,
            hand,
            set,
            repeated,
            (any_set, any_run),
            (value, limit),
            single_score(),
        )
    }

    /// The rest of [`Heuristic::best_multi_discard`], for a hand that holds a multi-card
    /// discard (`any`: a set, a run; `repeated`: the ranks held more than once): out of line,
    /// so that the common hand, which holds none, runs a short function with few registers
    /// to save. `single_score` is the best single's score, to be beaten.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn best_multi_discard_of(
        &self,
        rules: &Rules,
        hand: &[Card],
        set: u64,
        repeated: u16,
        (any_set, any_run): (bool, bool),
        (value, limit): (u32, u32),
        single_score: f64,
    ) -> Option<Discard> {
        let d = rules.variant().discards;
        let min = u32::from(d.min_run);
        let mut best_score = single_score;
        let mut best: Option<Discard> = None;
        if any_set {
            let mut score_sets = |rank| {
                self.best_set_of(
                    rules,
                    hand,
                    set,
                    rank,
                    value,
                    limit,
                    &mut best_score,
                    &mut best,
                )
            };
            if repeated & (repeated - 1) == 0 {
                // One rank only (most hands with a set): no order of ranks to find.
                score_sets(repeated.trailing_zeros() as u8);
            } else {
                // Ranks in order of first appearance in the hand.
                for_each_repeated_rank(hand, repeated, |rank| {
                    score_sets(rank);
                    true
                });
            }
        }
        if any_run {
            for_each_maximal_run(
                hand,
                suit_ranks(set),
                min,
                d.ace_high,
                |base, start, len| {
                    let card = |pos: u32| Card::from_id(base + (pos % 13) as u8);
                    let v = (start..start + len).map(|pos| rules.value(card(pos))).sum();
                    // One suit's cards: a run as eq. 2 counts runs from three cards.
                    let n = len as usize;
                    let s = self.eq2(value, limit, v, n, n >= 3);
                    if s > best_score {
                        best_score = s;
                        let mut cards = Discard::new();
                        for pos in start..start + len {
                            cards.push(card(pos));
                        }
                        best = Some(cards);
                    }
                    true
                },
            );
        }
        best
    }

    /// Every subset of two or more of the cards of `rank` (in hand order), as
    /// [`Heuristic::best_multi_discard`] scores them: `best` becomes the first that beats
    /// `best_score`, and every one before it. Cards of one rank are worth the same, so subsets
    /// of one size score the same and only the first of each size (in [`GROUP_SUBSETS`]
    /// order, sizes ascending: the first cards of the rank in hand order) can be the first to
    /// beat a score: those are the ones scored, from the count of the rank's cards in the
    /// hand's bit set `set`, and the hand is read only for the cards of one that wins.
    ///
    /// [`GROUP_SUBSETS`]: dhumbal_game::discards::GROUP_SUBSETS
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn best_set_of(
        &self,
        rules: &Rules,
        hand: &[Card],
        set: u64,
        rank: u8,
        value: u32,
        limit: u32,
        best_score: &mut f64,
        best: &mut Option<Discard>,
    ) {
        // The rank's cards in each suit (a joker's rank: the two jokers' bits).
        let (k, x) = if rank == JOKER_RANK {
            (
                (set >> 52 & 1) + (set >> 53 & 1),
                rules.value(Card::joker(0)),
            )
        } else {
            let r = u32::from(rank);
            let k = (0..4).map(|suit| set >> (13 * suit + r) & 1).sum::<u64>();
            (k, rules.value(Card::from_id(rank)))
        };
        // At most four, as the group of `GROUP_SUBSETS` holds.
        let k = k.min(4) as usize;
        let mut won = 0;
        for n in 2..=k {
            // Cards of one rank are of different suits (or jokers, of none): never a run,
            // whatever their number.
            let s = self.eq2(value, limit, x * n as u32, n, false);
            if s > *best_score {
                *best_score = s;
                won = n;
            }
        }
        if won > 0 {
            let mut cards = Discard::new();
            for &c in hand {
                if c.rank() == rank && cards.len() < won {
                    cards.push(c);
                }
            }
            *best = Some(cards);
        }
    }

    /// Near the threshold: shed a card (or a set) that keeps the hand callable after an
    /// average draw, else the lowest card. Out of line: a search's rollouts with a style that
    /// always calls there never ask it, and inlined its registers were saved on every discard.
    #[inline(never)]
    fn near_threshold_discard(
        &self,
        rules: &Rules,
        hand: &[Card],
        value: u32,
        limit: u32,
    ) -> Discard {
        let draw = self.params.expected_draw;
        let fits = |shed: u32| value - shed + draw <= limit;
        let mut best: Option<Card> = None;
        for &c in hand {
            if fits(rules.value(c)) && best.is_none_or(|b| rules.value(c) > rules.value(b)) {
                best = Some(c);
            }
        }
        if let Some(c) = best {
            return single(c);
        }
        // The first same-rank subset (in candidate order: ranks by first appearance, sizes
        // ascending) that fits; a pair is preferred to the trip it belongs to.
        let mut set = None;
        for_each_multi_discard(rules, hand, Runs::Maximal, |d| {
            let same_rank = d.len() >= 2 && d.iter().all(|c| c.rank() == d[0].rank());
            if same_rank && fits(rules.hand_value(d)) {
                set = Discard::from_slice(d);
                return false;
            }
            true
        });
        if let Some(d) = set {
            return d;
        }
        single(lowest(rules, hand).expect("a player on turn holds a card"))
    }

    /// The pickup threshold for a hand (after the discard) worth `h`.
    fn pickup_threshold(&self, h: u32) -> i64 {
        let p = &self.params;
        // The same as raising above the high hand, else dropping at or below the low one, as
        // arithmetic rather than branches on a hand value that a search's rollouts cannot
        // predict.
        let raise = h > p.pickup_high_hand;
        let drop = !raise && h <= p.pickup_low_hand;
        p.pickup_threshold + i64::from(raise) * p.pickup_high_raise
            - i64::from(drop) * p.pickup_low_drop
    }

    fn choose_pick(&self, obs: &Observation<'_>) -> Pick {
        self.pick_of(obs.rules, obs.pickable, obs.hand_value())
    }

    /// [`Heuristic::choose_pick`] from what it reads of the observation: the cards on offer
    /// and the hand's value after the discard.
    #[inline]
    pub(crate) fn pick_of(&self, rules: &Rules, pickable: &[Card], hand_value: u32) -> Pick {
        let Some(offer) = lowest(rules, pickable) else {
            return Pick::Stock;
        };
        let t = self.pickup_threshold(hand_value);
        if i64::from(rules.value(offer)) <= t {
            Pick::Pile(offer)
        } else {
            Pick::Stock
        }
    }
}

// Explanations (asked by a trace right after a decision, with the same observation): the
// scores the rules above give, recomputed from the observation by the same functions; no
// number is drawn (the call rule's draw is the one kept from the decision).
impl Heuristic {
    fn explain_call(&self, obs: &Observation<'_>) -> Explanation {
        let p = &self.params;
        let (value, limit) = (obs.hand_value(), obs.call_threshold);
        let prob = self.call_probability_used;
        let rule = if value > limit {
            format!("hand {value} is above the call threshold {limit}: never calls")
        } else {
            match self.style {
                Style::Aggressive => {
                    format!("hand {value} at most the threshold {limit}: always calls")
                }
                Style::Conservative if value <= p.strict_threshold => {
                    format!(
                        "hand {value} at most strict_threshold {}: calls",
                        p.strict_threshold
                    )
                }
                Style::Conservative => {
                    format!(
                        "hand {value} above strict_threshold {}: plays on",
                        p.strict_threshold
                    )
                }
                Style::Balanced if value <= p.sure_threshold => {
                    format!(
                        "hand {value} at most sure_threshold {}: calls",
                        p.sure_threshold
                    )
                }
                Style::Balanced if value <= p.strict_threshold => format!(
                    "hand {value} above sure_threshold {} and at most strict_threshold {}: calls with call_probability {}",
                    p.sure_threshold, p.strict_threshold, p.call_probability
                ),
                Style::Balanced => format!(
                    "hand {value} above strict_threshold {}: calls with late_call_probability {}",
                    p.strict_threshold, p.late_call_probability
                ),
                Style::Opportunistic if value <= p.strict_threshold => {
                    format!(
                        "hand {value} at most strict_threshold {}: calls",
                        p.strict_threshold
                    )
                }
                Style::Opportunistic => format!(
                    "hand {value} above strict_threshold {}: calls with probability {prob:.4} (base {} as {} the table mean, + {} per point under the threshold{})",
                    p.strict_threshold,
                    self.call_probability,
                    if ahead(obs) {
                        "ahead of"
                    } else {
                        "not ahead of"
                    },
                    p.per_point_probability,
                    if obs.turn > p.late_turn {
                        format!(
                            ", + late_turn_bonus {} after turn {}",
                            p.late_turn_bonus, p.late_turn
                        )
                    } else {
                        String::new()
                    }
                ),
            }
        };
        let mut notes = vec![format!("{} call rule: {rule}", self.style.name())];
        if let Some(u) = self.call_draw {
            notes.push(format!(
                "random: drew {u:.4} from its stream, {} {prob:.4}: {}",
                if u < prob { "below" } else { "not below" },
                if u < prob { "calls" } else { "plays on" }
            ));
        }
        let call = prob.clamp(0.0, 1.0);
        let mut candidates = vec![
            Candidate::new(Choice::Call(true), call),
            Candidate::new(Choice::Call(false), 1.0 - call),
        ];
        if call < 0.5 {
            candidates.swap(0, 1);
        }
        Explanation {
            score: "probability".into(),
            candidates,
            notes,
        }
    }

    fn explain_discard(&self, obs: &Observation<'_>) -> Explanation {
        let hand = obs.hand.as_slice();
        let (value, limit) = (obs.hand_value(), obs.call_threshold);
        let chosen = Choice::Discard(self.choose_discard(obs));
        let mut candidates = Vec::new();
        if value > limit {
            for &c in hand {
                let v = obs.value(c);
                candidates.push(
                    Candidate::new(
                        Choice::Discard(single(c)),
                        self.eq2(value, limit, v, 1, false),
                    )
                    .with("value", f64::from(v))
                    .with("remaining", f64::from(value - v)),
                );
            }
            for_each_multi_discard(obs.rules, hand, Runs::Maximal, |d| {
                let v = obs.rules.hand_value(d);
                let run = d.len() >= 3 && is_same_suit(d);
                if let Some(discard) = Discard::from_slice(d) {
                    candidates.push(
                        Candidate::new(
                            Choice::Discard(discard),
                            self.eq2(value, limit, v, d.len(), run),
                        )
                        .with("value", f64::from(v))
                        .with("remaining", f64::from(value - v)),
                    );
                }
                true
            });
            // Best first; a stable sort keeps the first maximum (the one played) first.
            candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
            return Explanation {
                score: "eq. 2 score".into(),
                candidates,
                notes: vec![format!(
                    "hand {value} above the call threshold {limit}: the discard of highest eq. 2 score (risk {}), the first of equals in hand order, singles before sets and maximal runs",
                    self.risk
                )],
            };
        }
        let draw = self.params.expected_draw;
        let fits = |shed: u32| value - shed + draw <= limit;
        let push = |d: &[Card], candidates: &mut Vec<Candidate>| {
            let shed = obs.rules.hand_value(d);
            if let Some(discard) = Discard::from_slice(d) {
                candidates.push(
                    Candidate::new(Choice::Discard(discard), f64::from(shed))
                        .with("after_draw", f64::from(value - shed + draw))
                        .with("fits", f64::from(u8::from(fits(shed)))),
                );
            }
        };
        for &c in hand {
            push(&[c], &mut candidates);
        }
        let mut sets = Vec::new();
        for_each_multi_discard(obs.rules, hand, Runs::Maximal, |d| {
            if d.len() >= 2 && d.iter().all(|c| c.rank() == d[0].rank()) {
                push(d, &mut sets);
            }
            true
        });
        let single_fits = hand.iter().any(|&c| fits(obs.value(c)));
        let set_fits = sets.iter().any(|c| fits(c.score as u32));
        let rule = if single_fits {
            "the highest single that keeps it callable after an average draw"
        } else if set_fits {
            "no single keeps it callable after an average draw: the first same-rank set that does"
        } else {
            "nothing keeps it callable after an average draw: the lowest card"
        };
        candidates.extend(sets);
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        if let Some(i) = candidates.iter().position(|c| c.choice == chosen) {
            let played = candidates.remove(i);
            candidates.insert(0, played);
        }
        Explanation {
            score: "value shed".into(),
            candidates,
            notes: vec![format!(
                "hand {value} at most the call threshold {limit}: {rule} (value - shed + expected_draw {draw} <= {limit})"
            )],
        }
    }

    fn explain_pick(&self, obs: &Observation<'_>) -> Explanation {
        let p = &self.params;
        let h = obs.hand_value();
        let t = self.pickup_threshold(h);
        let adjusted = if h > p.pickup_high_hand {
            format!(
                "pickup_threshold {} + {} (hand {h} above pickup_high_hand {})",
                p.pickup_threshold, p.pickup_high_raise, p.pickup_high_hand
            )
        } else if h <= p.pickup_low_hand {
            format!(
                "pickup_threshold {} - {} (hand {h} at most pickup_low_hand {})",
                p.pickup_threshold, p.pickup_low_drop, p.pickup_low_hand
            )
        } else {
            format!("pickup_threshold {}", p.pickup_threshold)
        };
        let mut candidates: Vec<Candidate> = obs
            .pickable
            .iter()
            .map(|&c| {
                let v = obs.value(c);
                Candidate::new(Choice::Pick(Pick::Pile(c)), (t - i64::from(v)) as f64)
                    .with("value", f64::from(v))
            })
            .collect();
        candidates.push(Candidate::new(Choice::Pick(Pick::Stock), 0.0));
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        let note = match self.choose_pick(obs) {
            Pick::Pile(c) => format!(
                "takes {c} from the pile: worth {}, at most the threshold {t} = {adjusted}",
                obs.value(c)
            ),
            Pick::Stock => match obs.pickable.iter().map(|&c| obs.value(c)).min() {
                Some(v) => format!(
                    "draws: the lowest card on offer is worth {v}, above the threshold {t} = {adjusted}"
                ),
                None => "draws: nothing on offer".to_string(),
            },
        };
        Explanation {
            score: "pickup margin (threshold - value; the stock 0)".into(),
            candidates,
            notes: vec![note],
        }
    }
}

/// Whether the observer stands above the mean of the seats still in the game (Opportunistic).
fn ahead(obs: &Observation<'_>) -> bool {
    let n = obs.players();
    let seats = (0..n).filter(|&s| obs.active[s]);
    let total: i64 = seats.clone().map(|s| obs.standing(s)).sum();
    let count = seats.count() as f64;
    let mean = total as f64 / count;
    obs.standing(obs.seat) as f64 > mean
}

/// The first card of lowest value among `cards`.
fn lowest(rules: &Rules, cards: &[Card]) -> Option<Card> {
    let value = |c: Card| rules.value(c);
    cards
        .iter()
        .copied()
        .reduce(|a, b| if value(b) < value(a) { b } else { a })
}

fn single(c: Card) -> Discard {
    let mut d = Discard::new();
    d.push(c);
    d
}

fn is_same_suit(cards: &[Card]) -> bool {
    let suit = cards[0].suit();
    suit.is_some() && cards.iter().all(|c| c.suit() == suit)
}

impl Agent for Heuristic {
    fn name(&self) -> &str {
        &self.name
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        Ok(self.wants_call(obs, rng))
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        Ok(self.choose_discard(obs))
    }

    fn discard_into(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
        into: &mut Discard,
    ) -> Result<(), AgentError> {
        self.write_discard_of(obs, into);
        Ok(())
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        Ok(self.choose_pick(obs))
    }

    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        Some(match obs.phase {
            Phase::Call => self.explain_call(obs),
            Phase::Discard => self.explain_discard(obs),
            Phase::Pick => self.explain_pick(obs),
        })
    }
}

// The family: each style is a kind (`aggressive`, ...) whose parameters are the constants it
// reads. Which style reads which constant follows the code above: every style picks
// (`choose_pick`) and discards (`choose_discard`, `near_threshold_discard`) alike, so those
// constants belong to all four; the call rule (`wants_call`) is where they differ. Aggressive's
// reads no constant; Conservative's `strict_threshold`; Balanced's `sure_threshold`,
// `strict_threshold`, `call_probability` and `late_call_probability`; Opportunistic's
// `strict_threshold` and its own seven (it sets its call probability and risk from the
// standings before it reads them, so `call_probability` never reaches its play).

const ALL: &[Style] = &Style::ALL;
const CONSERVATIVE_BALANCED_OPPORTUNISTIC: &[Style] =
    &[Style::Conservative, Style::Balanced, Style::Opportunistic];
const BALANCED: &[Style] = &[Style::Balanced];
const OPPORTUNISTIC: &[Style] = &[Style::Opportunistic];

macro_rules! heuristic_params {
    ($( $field:ident : $ty:ident, $styles:ident = $doc:literal ),+ $(,)?) => {
        /// The parameters `style` reads, with its defaults.
        fn heuristic_param_infos(style: Style) -> Vec<Param> {
            let d = HeuristicParams::paper(style);
            let mut out = Vec::new();
            $(if $styles.contains(&style) {
                out.push(Param::new(
                    stringify!($field),
                    ParamType::$ty,
                    number(ParamType::$ty, d.$field as f64),
                    $doc,
                ));
            })+
            out
        }

        fn heuristic_param(p: &HeuristicParams, name: &str) -> f64 {
            match name {
                $(stringify!($field) => p.$field as f64,)+
                _ => f64::NAN,
            }
        }

        fn set_heuristic_param(p: &mut HeuristicParams, name: &str, value: f64) -> bool {
            match name {
                $(stringify!($field) => { p.$field = value as _; true })+
                _ => false,
            }
        }
    };
}

heuristic_params! {
    pickup_threshold: Int, ALL = "take an offered card worth at most this (adjusted by the hand value)",
    pickup_high_hand: Count, ALL = "hand value above which the pickup threshold rises",
    pickup_high_raise: Int, ALL = "how much it rises",
    pickup_low_hand: Count, ALL = "hand value at or below which the pickup threshold falls",
    pickup_low_drop: Int, ALL = "how much it falls",
    high_preference: Float, ALL = "p_h: weight of the discarded value (paper eq. 2)",
    multi_card_bonus: Float, ALL = "b_m: bonus per card of a multi-card discard (no effect without sets and runs)",
    sequence_bonus: Float, ALL = "b_s: bonus for a run (no effect with `runs: false`)",
    call_bonus: Float, ALL = "bonus when the discard leaves a callable hand",
    improvement_weight: Float, ALL = "weight of the relative improvement (V - Vr) / V (paper eq. 3)",
    risk_adjustment: Float, ALL = "r: scales every score (no effect on choices, as in the paper's code)",
    expected_draw: Count, ALL = "expected value of the next card, for discards near the threshold",
    strict_threshold: Count, CONSERVATIVE_BALANCED_OPPORTUNISTIC = "Conservative/Opportunistic: call at or below; Balanced: upper edge of its middle band",
    sure_threshold: Count, BALANCED = "always call at or below",
    call_probability: Float, BALANCED = "call probability above sure_threshold up to strict_threshold",
    late_call_probability: Float, BALANCED = "call probability above strict_threshold",
    ahead_call_probability: Float, OPPORTUNISTIC = "base call probability when ahead of the table mean",
    ahead_risk: Float, OPPORTUNISTIC = "r when ahead (replaces risk_adjustment from the first call decision on)",
    behind_call_probability: Float, OPPORTUNISTIC = "base call probability otherwise",
    behind_risk: Float, OPPORTUNISTIC = "r otherwise",
    per_point_probability: Float, OPPORTUNISTIC = "added per point below the threshold",
    late_turn: Count, OPPORTUNISTIC = "after this many player-turns add late_turn_bonus",
    late_turn_bonus: Float, OPPORTUNISTIC = "added late in the round",
}

fn style_doc(style: Style) -> &'static str {
    match style {
        Style::Aggressive => {
            "the paper's Aggressive: always calls when allowed; high-value and multi-card discards"
        }
        Style::Conservative => "the paper's Conservative: calls at or below strict_threshold (7)",
        Style::Balanced => {
            "the paper's Balanced: calls surely at <= 5, with probability 0.7 up to 8 and 0.4 above"
        }
        Style::Opportunistic => {
            "the paper's Opportunistic: call probability set by standing against the table mean"
        }
    }
}

/// The constants that cannot change any decision under `rules`, with the reason: the bonuses
/// of multi-card discards when no such discard is legal. (Every other constant is read on
/// every turn, or on every call decision, whatever the rules.)
fn without_effect(rules: &Rules) -> Vec<(&'static str, String)> {
    let v = rules.variant();
    let d = v.discards;
    // A hand never grows: a turn discards at least one card and picks one.
    let hand = v.hand_size;
    let no_runs = if !d.runs {
        Some("runs are not legal discards (`runs: false`)".to_string())
    } else if hand < d.min_run {
        Some(format!(
            "no run fits a hand (`hand_size: {hand}` is below `min_run: {}`)",
            d.min_run
        ))
    } else {
        None
    };
    let no_sets = if !d.sets {
        Some("sets are not legal discards (`sets: false`)".to_string())
    } else if hand < 2 {
        Some("no set fits a hand of one card (`hand_size: 1`)".to_string())
    } else {
        None
    };
    let mut out = Vec::new();
    if let (Some(sets), Some(runs)) = (&no_sets, &no_runs) {
        out.push((
            "multi_card_bonus",
            format!("it scores multi-card discards, and {sets} and {runs}"),
        ));
    }
    if let Some(runs) = no_runs {
        out.push(("sequence_bonus", format!("it scores runs, and {runs}")));
    }
    out
}

/// A number as a scenario writes it: whole for integer parameters.
fn number(ty: ParamType, x: f64) -> Value {
    if ty == ParamType::Float {
        Value::from(x)
    } else {
        Value::from(x as i64)
    }
}

/// One of the paper's rule-based agents as a family (one per style).
pub struct HeuristicFamily(pub Style);

impl Family for HeuristicFamily {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn doc(&self) -> &'static str {
        style_doc(self.0)
    }

    fn params(&self) -> Vec<Param> {
        heuristic_param_infos(self.0)
    }

    fn resolve(
        &self,
        entry: &Entry<'_>,
        cx: &mut dyn Resolve,
    ) -> Option<std::sync::Arc<dyn Recipe>> {
        let mut params = HeuristicParams::paper(self.0);
        for p in self.params() {
            set_heuristic_param(&mut params, p.name, entry.f64(p.name));
        }
        let mut ok = true;
        if let Some(rules) = cx.rules() {
            for (name, why) in without_effect(rules) {
                if entry.given(name) {
                    cx.problem(
                        &format!("params.{name}"),
                        format!("has no effect under these rules: {why}"),
                    );
                    ok = false;
                }
            }
        }
        ok.then(|| std::sync::Arc::new(HeuristicRecipe(self.0, params)) as _)
    }
}

/// A style with its constants.
struct HeuristicRecipe(Style, HeuristicParams);

impl Recipe for HeuristicRecipe {
    fn family(&self) -> &'static str {
        self.0.name()
    }

    fn describe(&self) -> serde_json::Map<String, Value> {
        describe_params(self.0.name(), &heuristic_param_infos(self.0), |p| {
            number(p.ty, heuristic_param(&self.1, p.name))
        })
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        Box::new(Heuristic::new(id, self.0, self.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_game::Preset;
    use dhumbal_game::cards::MAX_HAND;
    use dhumbal_game::rng::{Purpose, chacha_stream};

    /// What `best_multi_discard` stands for: every multi-card discard as the enumerator lists
    /// it, scored by eq. 2, the first that beats the best single's score and every one before.
    fn enumerated(
        h: &Heuristic,
        rules: &Rules,
        hand: &[Card],
        value: u32,
        limit: u32,
        mut best_score: f64,
    ) -> Option<Discard> {
        let mut best = None;
        for_each_multi_discard(rules, hand, Runs::Maximal, |d| {
            let run = d.len() >= 3 && is_same_suit(d);
            let s = h.eq2(value, limit, rules.hand_value(d), d.len(), run);
            if s > best_score {
                best_score = s;
                best = Discard::from_slice(d);
            }
            true
        });
        best
    }

    /// The same discard (cards and their order) as the enumeration, over random hands of every
    /// size under every preset (jokers, ace-high runs, no runs), for every style with its own
    /// constants, with constants that make many scores equal, and with negative ones.
    #[test]
    fn best_multi_discard_is_the_enumerations_first_maximum() {
        let mut compared = 0u32;
        let mut multi = 0u32;
        for (i, preset) in Preset::ALL.into_iter().enumerate() {
            let rules = Rules::new(preset.variant()).unwrap();
            let mut rng = chacha_stream(17, Purpose::Deal, i as u64);
            let mut deck = rules.deck().to_vec();
            for style in Style::ALL {
                for constants in 0..3 {
                    let mut p = HeuristicParams::paper(style);
                    if constants == 1 {
                        p.multi_card_bonus = 0.0;
                        p.sequence_bonus = 0.0;
                        p.call_bonus = 0.0;
                    } else if constants == 2 {
                        p.high_preference = -0.5;
                        p.risk_adjustment = -1.0;
                    }
                    let h = Heuristic::new("test", style, p);
                    for _ in 0..1500 {
                        rng.shuffle(&mut deck);
                        let size = 1 + rng.below(MAX_HAND as u32) as usize;
                        let hand = &deck[..size];
                        let value = rules.hand_value(hand);
                        let limit = rng.below(value + 2);
                        let single = f64::from(rng.below(60)) / 3.0 - 5.0;
                        let expected = enumerated(&h, &rules, hand, value, limit, single);
                        let set = hand.iter().fold(0u64, |acc, c| acc | 1 << c.id());
                        let got = h.best_multi_discard(&rules, hand, set, value, limit, || single);
                        assert_eq!(
                            got.as_ref().map(|d| d.as_slice()),
                            expected.as_ref().map(|d| d.as_slice()),
                            "{preset:?} {style:?} constants {constants}: hand {hand:?}, value {value}, limit {limit}, single {single}"
                        );
                        compared += 1;
                        multi += u32::from(expected.is_some());
                    }
                }
            }
        }
        assert!(
            multi > compared / 10,
            "only {multi} of {compared} hands chose a multi-card discard"
        );
    }
}
