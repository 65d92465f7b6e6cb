use dhumbal::agents::{Heuristic, Style};
use dhumbal::game::{Agent, Event, Observer, Preset, RoundState, Rules, Table};
use dhumbal::rng::{PyRandom, PythonStreams};

struct DealPrinter(bool);
impl Observer for DealPrinter {
    fn event(&mut self, s: &RoundState, e: &Event) {
        if self.0 && matches!(e, Event::Dealt) {
            for seat in 0..4 {
                println!("P{seat} {}", s.hand(seat));
            }
            println!("pile {} stock top {:?}", s.pile(), s.stock().last());
        }
    }
}

fn main() {
    let rules = Rules::preset(Preset::Paper);
    let mut table = Table::new(rules);
    let mut agents: Vec<Box<dyn Agent>> = Style::ALL
        .iter()
        .map(|&s| Box::new(Heuristic::paper(s)) as Box<dyn Agent>)
        .collect();
    let mut streams = PythonStreams(PyRandom::new(42));
    let mut wins = [0; 4];
    let mut calls = [0; 4];
    let mut succ = [0; 4];
    let mut delta = [0i64; 4];
    for r in 0..1024 {
        let o = table
            .play_round(&mut agents, &mut streams, &mut DealPrinter(r == 0))
            .unwrap();
        if [0, 1, 4, 10, 11].contains(&r) {
            println!(
                "round {} caller {:?} winner {:?} hv {:?} turns {} coins {:?}",
                r + 1,
                o.caller,
                o.winner,
                &o.hand_values[..4],
                o.turns,
                &o.coin_delta[..4]
            );
        }
        wins[o.winner.unwrap()] += 1;
        if let Some(c) = o.caller {
            calls[c] += 1;
            if o.call_success {
                succ[c] += 1;
            }
        }
        for s in 0..4 {
            delta[s] += o.coin_delta[s];
        }
        if r == 99 {
            println!("coins after 100: {:?}", table.standings());
        }
    }
    for s in 0..4 {
        println!(
            "seat {s}: win {:.3}% econ {:.3} jhyap {:.2}%",
            wins[s] as f64 / 10.24,
            delta[s] as f64 / 1024.0,
            succ[s] as f64 * 100.0 / calls[s] as f64
        );
    }
}
