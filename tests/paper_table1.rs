//! The paper's Table I, reproduced to every printed digit, and the golden trace of the
//! paper's public code run as published: the `paper` preset, Aggressive, Conservative,
//! Balanced, Opportunistic in seats 0-3, CPython's generator seeded with 42, 1024 rounds.

use dhumbal::agents::{Heuristic, Style};
use dhumbal::game::{
    Agent, Event, Observation, Observer, Oracle, Phase, Preset, RoundOutcome, RoundState, Rules,
    Table,
};
use dhumbal::rng::{PyRandom, PythonStreams};

#[derive(Default)]
struct Trace {
    first_deal: Option<Vec<String>>,
    discard_sizes: [u32; 5],
}

impl Observer for Trace {
    fn event(&mut self, state: &RoundState, event: &Event) {
        match event {
            Event::Dealt if self.first_deal.is_none() => {
                let mut lines: Vec<String> = (0..4).map(|s| state.hand(s).to_string()).collect();
                lines.push(format!("discard {}", state.pile()));
                lines.push(format!("next {}", state.stock().last().unwrap()));
                self.first_deal = Some(lines);
            }
            Event::Discarded { cards, .. } => self.discard_sizes[cards.len()] += 1,
            _ => {}
        }
    }
}

struct Run {
    rounds: Vec<RoundOutcome>,
    coins_after_100: Vec<i64>,
    trace: Trace,
    agents: Vec<Box<dyn Agent>>,
    rules: Rules,
}

fn run_table1() -> Run {
    let rules = Rules::preset(Preset::Paper);
    let mut table = Table::new(rules.clone());
    let mut agents: Vec<Box<dyn Agent>> = Style::ALL
        .iter()
        .map(|&s| Box::new(Heuristic::paper(s)) as Box<dyn Agent>)
        .collect();
    let mut streams = PythonStreams(PyRandom::new(42));
    let mut trace = Trace::default();
    let mut rounds = Vec::new();
    let mut coins_after_100 = Vec::new();
    for r in 0..1024 {
        rounds.push(
            table
                .play_round(&mut agents, &mut streams, &mut trace)
                .unwrap(),
        );
        if r == 99 {
            coins_after_100 = table.standings().to_vec();
        }
    }
    Run {
        rounds,
        coins_after_100,
        trace,
        agents,
        rules,
    }
}

#[test]
fn golden_trace() {
    let run = run_table1();
    assert_eq!(
        run.trace.first_deal.unwrap(),
        [
            "[2♣ 5♥ 7♠ 2♦ A♥]",
            "[8♠ 3♥ 9♦ 3♠ 7♣]",
            "[2♠ 2♥ 6♠ J♣ 7♦]",
            "[9♣ 9♠ Q♦ 3♣ K♣]",
            "discard [K♠]",
            "next 10♥"
        ]
    );
    let expect = [
        (1, 0, 0, [9, 21, 12, 13], 21, [46, -21, -12, -13]),
        (2, 3, 1, [18, 7, 19, 10], 24, [0, 54, 0, -54]),
        (5, 0, 3, [10, 26, 21, 4], 13, [-61, 0, 0, 61]),
        (11, 3, 0, [9, 17, 14, 9], 36, [49, 0, 0, -49]),
        (12, 0, 1, [8, 8, 29, 28], 13, [-73, 73, 0, 0]),
    ];
    for (round, caller, winner, hv, turns, coins) in expect {
        let o = &run.rounds[round - 1];
        assert_eq!(o.caller, Some(caller), "round {round}");
        assert_eq!(o.winner, Some(winner), "round {round}");
        assert_eq!(o.hand_values[..4], hv, "round {round}");
        assert_eq!(o.turns, turns, "round {round}");
        assert_eq!(o.coin_delta[..4], coins, "round {round}");
    }
    assert_eq!(run.coins_after_100, [10715, 9535, 10085, 9665]);
}

#[test]
fn round_statistics_match_the_reference_rerun() {
    let run = run_table1();
    let rounds = &run.rounds;
    let turns: u32 = rounds.iter().map(|o| o.turns).sum();
    assert_eq!(format!("{:.2}", turns as f64 / 1024.0), "23.05");
    let calls = rounds
        .iter()
        .filter(|o| o.end == dhumbal::game::EndReason::Call)
        .count();
    let empty = rounds
        .iter()
        .filter(|o| o.end == dhumbal::game::EndReason::EmptyHand)
        .count();
    assert_eq!((calls, empty), (1007, 17));
    assert_eq!(rounds.iter().filter(|o| o.call_success).count(), 803);
    let reshuffles: u32 = rounds.iter().map(|o| u32::from(o.reshuffles)).sum();
    assert_eq!(reshuffles, 68);
    assert_eq!(run.trace.discard_sizes[1..], [17_829, 4_365, 386, 12]);
    let picks: u32 = rounds
        .iter()
        .flat_map(|o| o.pile_picks[..4].iter())
        .map(|&p| u32::from(p))
        .sum();
    assert_eq!(picks, 1_745);
    let winning: u32 = rounds
        .iter()
        .map(|o| o.hand_values[o.winner.unwrap()])
        .sum();
    assert_eq!(format!("{:.2}", winning as f64 / 1024.0), "7.59");
}

/// Population standard deviation, as `np.std`.
fn pop_sd(x: &[f64]) -> f64 {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    sxy / (sxx * syy).sqrt()
}

#[test]
fn table_one_to_every_printed_digit() {
    let mut run = run_table1();
    let n = run.rounds.len() as f64;
    let mut rows = Vec::new();
    for seat in 0..4 {
        let wins: Vec<f64> = run
            .rounds
            .iter()
            .map(|o| f64::from(o.winner == Some(seat)))
            .collect();
        let win = wins.iter().sum::<f64>() / n * 100.0;
        let ci = 1.96 * pop_sd(&wins) / n.sqrt() * 100.0;
        let econ = run
            .rounds
            .iter()
            .map(|o| o.coin_delta[seat] as f64)
            .sum::<f64>()
            / n;
        let mine: Vec<&RoundOutcome> = run
            .rounds
            .iter()
            .filter(|o| o.caller == Some(seat))
            .collect();
        let success =
            mine.iter().filter(|o| o.call_success).count() as f64 / mine.len() as f64 * 100.0;
        let values: Vec<f64> = mine
            .iter()
            .map(|o| f64::from(o.hand_values[seat]))
            .collect();
        let flags: Vec<f64> = mine.iter().map(|o| f64::from(o.call_success)).collect();
        let risk = pearson(&values, &flags);
        // The paper's "cards discarded": the size of the discard the agent would choose from
        // its final hand (a hypothetical next discard), averaged over rounds.
        let mut cards = 0.0;
        for o in &run.rounds {
            let hand = &o.final_hands[seat];
            if hand.is_empty() {
                continue;
            }
            let obs = Observation {
                rules: &run.rules,
                phase: Phase::Discard,
                seat,
                hand,
                hand_value: run.rules.hand_value(hand.as_slice()),
                turn: o.turns,
                round: o.round,
                starter: o.starter,
                active: &[true; 4],
                hand_sizes: &[5; 4],
                standings: &[0; 4],
                pile: &[],
                pickable: &[],
                discarded: &[],
                known: &[Default::default(); 4],
                seen: Default::default(),
                stock_len: 0,
                call_threshold: 10,
                top_set: 0,
                restocked: None,
                oracle: Oracle::none(),
            };
            let d = run.agents[seat]
                .discard(&obs, &mut PyRandom::new(0))
                .unwrap();
            cards += d.len() as f64;
        }
        rows.push(format!(
            "{:.2} ±{:.2} {:.2} {:.2} {:.3} {:.3}",
            win,
            ci,
            econ,
            success,
            cards / n,
            risk
        ));
    }
    // Table I: win %, CI, economic performance, Jhyap success %; then metrics.csv's cards and risk.
    assert_eq!(
        rows,
        [
            "35.06 ±2.92 6.16 76.17 1.102 -0.184",
            "19.43 ±2.42 -2.23 93.65 1.106 -0.180",
            "25.10 ±2.66 0.07 80.59 1.107 -0.277",
            "20.41 ±2.47 -4.00 72.10 1.128 -0.344",
        ]
    );
}
