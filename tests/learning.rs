//! Learning agents: encodings read only what an observation may show, masking never lets a
//! network choose an illegal action, and (with the `torch` feature) tiny DQN and PPO runs
//! improve against `random`, resume exactly, and do not depend on the thread count.

use std::path::Path;
use std::sync::Arc;

use dhumbal::agents::neural::net::Layer;
use dhumbal::agents::neural::{Algorithm, Choice, Encoded, Encoding, Mlp, Policy, PolicyAgent};
use dhumbal::game::rng::ChaChaStreams;
use dhumbal::game::rng::{Purpose, RandomSource, chacha_stream};
use dhumbal::game::{
    Agent, AgentError, Discard, Hand, Observation, Oracle, Pick, Preset, Rules, Table,
};

/// A network of the encoding's shape with weights drawn from `seed`.
fn random_policy(encoding: Encoding, seed: u64) -> Arc<Policy> {
    let mut rng = chacha_stream(seed, Purpose::Learn, 0);
    let sizes = [encoding.input_dim(), 32, 16, encoding.outputs()];
    let layers = sizes
        .windows(2)
        .map(|w| {
            let draw = |n: usize, rng: &mut dyn RandomSource| {
                (0..n)
                    .map(|_| (rng.random() as f32 - 0.5) * 0.5)
                    .collect::<Vec<f32>>()
            };
            let weight = draw(w[0] * w[1], &mut rng);
            let bias = draw(w[1], &mut rng);
            Layer::from_torch(&weight, &bias, w[0], w[1])
        })
        .collect();
    Arc::new(Policy {
        algorithm: Algorithm::Ppo,
        encoding,
        net: Mlp { layers },
    })
}

/// Encodes every decision twice, the second time with made-up hidden hands in the
/// observation's oracle slot, and counts decisions whose encodings differ.
struct Probe {
    inner: PolicyAgent,
    decisions: u32,
    differ: u32,
    rng_hands: u64,
}

impl Probe {
    fn check(&mut self, obs: &Observation<'_>) {
        let mut fake: Vec<Hand> = Vec::new();
        let mut r = chacha_stream(self.rng_hands, Purpose::Learn, u64::from(self.decisions));
        for _ in 0..obs.players() {
            let mut h = Hand::new();
            for _ in 0..5 {
                h.push(dhumbal::game::Card::from_id(r.below(52) as u8));
            }
            fake.push(h);
        }
        for enc in [Encoding::Paper, Encoding::Cards] {
            let (mut a, mut b) = (Encoded::default(), Encoded::default());
            enc.encode(obs, &mut a);
            let mut other = *obs;
            other.oracle = Oracle::new(&fake);
            enc.encode(&other, &mut b);
            if a.state != b.state || a.features != b.features || a.actions != b.actions {
                self.differ += 1;
            }
        }
        self.decisions += 1;
    }
}

impl Agent for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        self.check(obs);
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
        self.check(obs);
        self.inner.pick(obs, rng)
    }
}

#[test]
fn encodings_read_nothing_hidden() {
    let rules = Rules::preset(Preset::Jhyap);
    let policy = random_policy(Encoding::Cards, 1);
    let mut probe = Probe {
        inner: PolicyAgent::new("p", policy.clone(), Choice::Sample),
        decisions: 0,
        differ: 0,
        rng_hands: 9,
    };
    for deal in 0..200u64 {
        let mut table = Table::new(rules.clone());
        let mut seats: Vec<Box<dyn Agent + '_>> = Vec::new();
        seats.push(Box::new(&mut probe));
        for s in 1..rules.players() {
            seats.push(Box::new(PolicyAgent::new(
                format!("o{s}"),
                policy.clone(),
                Choice::Sample,
            )));
        }
        let mut streams = ChaChaStreams::new(3, deal, &[0, 1, 2, 3, 4, 5, 6, 7]);
        table
            .play_round(&mut seats, &mut streams, &mut ())
            .expect("a legal round");
    }
    assert!(probe.decisions > 1000, "{} decisions", probe.decisions);
    assert_eq!(probe.differ, 0, "encodings changed with the hidden hands");
}

#[test]
fn masked_networks_only_ever_choose_legal_actions() {
    // Random networks of both encodings, greedy and sampling, at 2 and 4 players of every
    // preset: any illegal choice would be refused by the engine as a PlayError.
    let mut rounds = 0;
    for preset in Preset::ALL {
        for players in [2u8, 4] {
            let mut v = preset.variant();
            v.players = players;
            let Ok(rules) = Rules::new(v) else { continue };
            for (k, encoding) in [Encoding::Paper, Encoding::Cards].into_iter().enumerate() {
                for choice in [Choice::Greedy, Choice::Sample] {
                    let policy = random_policy(encoding, 10 + k as u64);
                    for deal in 0..60u64 {
                        let mut seats: Vec<Box<dyn Agent>> = (0..rules.players())
                            .map(|s| {
                                Box::new(PolicyAgent::new(format!("n{s}"), policy.clone(), choice))
                                    as Box<dyn Agent>
                            })
                            .collect();
                        let mut table = Table::new(rules.clone());
                        let mut streams = ChaChaStreams::new(5, deal, &[0, 1, 2, 3, 4, 5, 6, 7]);
                        table
                            .play_round(&mut seats, &mut streams, &mut ())
                            .unwrap_or_else(|e| {
                                panic!("{} {players}p {encoding:?}: {e}", preset.name())
                            });
                        rounds += 1;
                    }
                }
            }
        }
    }
    assert!(rounds >= 1000);
}

#[test]
fn paper_encoding_is_117_features_and_128_actions() {
    assert_eq!(Encoding::Paper.state_dim(), 117);
    assert_eq!(Encoding::Paper.outputs(), 128);
    let rules = Rules::preset(Preset::Paper);
    // Every decision: hand bits equal the hand, one phase bit, at most 128 actions.
    struct Check(u32);
    impl Agent for Check {
        fn name(&self) -> &str {
            "check"
        }
        fn call(
            &mut self,
            o: &Observation<'_>,
            _: &mut dyn RandomSource,
        ) -> Result<bool, AgentError> {
            self.look(o);
            Ok(false)
        }
        fn discard(
            &mut self,
            o: &Observation<'_>,
            _: &mut dyn RandomSource,
        ) -> Result<Discard, AgentError> {
            self.look(o);
            Ok(Discard::from_slice(&o.hand.as_slice()[..1]).unwrap())
        }
        fn pick(
            &mut self,
            o: &Observation<'_>,
            _: &mut dyn RandomSource,
        ) -> Result<Pick, AgentError> {
            self.look(o);
            Ok(Pick::Stock)
        }
    }
    impl Check {
        fn look(&mut self, o: &Observation<'_>) {
            let mut e = Encoded::default();
            Encoding::Paper.encode(o, &mut e);
            let hand: Vec<usize> = (0..52).filter(|&i| e.state[i] == 1.0).collect();
            let mut want: Vec<usize> = o.hand.iter().map(|c| usize::from(c.id())).collect();
            want.sort_unstable();
            assert_eq!(hand, want);
            assert_eq!(e.state[113..116].iter().sum::<f32>(), 1.0);
            assert!((e.state[106] - o.hand_value as f32 / 65.0).abs() < 1e-6);
            assert!(e.actions.len() <= 128 && !e.actions.is_empty());
            self.0 += 1;
        }
    }
    let mut seats: Vec<Check> = (0..rules.players()).map(|_| Check(0)).collect();
    let mut table = Table::new(rules.clone());
    let mut streams = ChaChaStreams::new(1, 0, &[0, 1, 2, 3]);
    table.play_round(&mut seats, &mut streams, &mut ()).unwrap();
    assert!(seats.iter().map(|c| c.0).sum::<u32>() > 4);
}

/// The learner is rewarded for what the entry asks: the round's score (coins here) scaled by
/// `reward_scale`, or 1 for a won round and 0 otherwise; the records keep the score either way.
#[test]
fn rewards_follow_the_training_entry() {
    use dhumbal::learn::episode::{Acting, play};
    let dir = tempfile::tempdir().unwrap();
    for (reward, scale) in [("score", 100.0), ("score", 7.0), ("win", 100.0)] {
        let s = scenario(
            dir.path(),
            &format!(
                "name: t\nseed: 4\nrules: {{preset: paper, players: 3}}\ntrain:\n  - id: a\n    algorithm: dqn\n    reward: {reward}\n    hyper: {{reward_scale: {scale}}}\n    episodes: 10\n    opponents: [random, aggressive]\n    checkpoint: model.safetensors\n"
            ),
        );
        let plan = s.trainings[0].neural().unwrap();
        let policy = random_policy(Encoding::Cards, 5);
        let (mut wins, mut losses) = (0, 0);
        for episode in 0..200 {
            let p = play(plan, episode, &policy, Acting::Epsilon(0.2), &[]).unwrap();
            let want = if reward == "win" {
                f32::from(u8::from(p.record.win))
            } else {
                (p.record.reward / scale) as f32
            };
            assert_eq!(p.trajectory.reward, want, "{reward}: episode {episode}");
            if p.record.win { wins += 1 } else { losses += 1 }
        }
        assert!(
            wins > 0 && losses > 0,
            "{reward}: {wins} wins, {losses} losses"
        );
    }
    // A name that is not a reward is refused with the valid ones.
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "name: t\nrules: {preset: paper}\ntrain:\n  - id: a\n    algorithm: ppo\n    reward: wins\n    episodes: 10\n    checkpoint: m.safetensors\n",
    )
    .unwrap();
    let err = dhumbal::scenario::load(&path, &Default::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("train.0.reward") && err.contains("score, win"),
        "{err}"
    );
}

fn scenario(dir: &Path, body: &str) -> dhumbal::scenario::Scenario {
    let path = dir.join("train.yaml");
    std::fs::write(&path, body).unwrap();
    dhumbal::scenario::load(&path, &Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(feature = "torch")]
mod torch {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use dhumbal::agents::neural::Checkpoint;
    use dhumbal::learn::{Ended, Event, TrainPlan};

    fn yaml(algorithm: &str, episodes: u64, extra: &str) -> String {
        format!(
            "name: t\nseed: 4\nrules: {{preset: paper, players: 2}}\ntrain:\n  - id: a\n    algorithm: {algorithm}\n    episodes: {episodes}\n    opponents: [random]\n    hidden: [64, 32]\n    checkpoint: model.safetensors\n{extra}"
        )
    }

    fn run(plan: &TrainPlan, threads: usize, resume: bool, stop_after: Option<u64>) -> Ended {
        let stop = AtomicBool::new(false);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            dhumbal::learn::train(plan, resume, &stop, &mut |e| {
                if let (Event::Episodes(r), Some(n)) = (&e, stop_after)
                    && r.last().is_some_and(|r| r.episode + 1 >= n)
                {
                    stop.store(true, Ordering::Relaxed);
                }
            })
        })
        .unwrap()
    }

    fn win_rate(plan: &TrainPlan, policy: &Arc<Policy>) -> (f64, f64, f64) {
        let random = dhumbal::agents::random::RandomFamily::recipe();
        let r = dhumbal::learn::evaluate::evaluate(
            &plan.rules,
            policy,
            ("random", &random),
            300,
            99,
            0,
        )
        .unwrap();
        (r.win_rate, r.low, r.high)
    }

    /// Trains, then compares greedy play against `random` (300 fixed deals, both seats)
    /// before and after: the win rate must rise by 15 points, intervals apart.
    fn improves(algorithm: &str, episodes: u64, extra: &str) {
        let dir = tempfile::tempdir().unwrap();
        let s = scenario(dir.path(), &yaml(algorithm, episodes, extra));
        let plan = s.trainings[0].neural().unwrap();
        let before = win_rate(plan, &dhumbal::learn::initial_policy(plan).unwrap());
        run(plan, 2, false, None);
        let c = Checkpoint::read(&plan.checkpoint).unwrap();
        let after = win_rate(plan, &Arc::new(Policy::from_checkpoint(&c).unwrap()));
        assert!(
            after.0 > before.0 + 0.15 && after.1 > before.2,
            "{algorithm}: win rate against random {before:?} before training, {after:?} after"
        );
    }

    #[test]
    fn tiny_ppo_improves_against_random() {
        improves(
            "ppo",
            1500,
            "    hyper: {episodes_per_iteration: 32, minibatch: 128}\n",
        );
    }

    #[test]
    fn tiny_dqn_improves_against_random() {
        improves(
            "dqn",
            2500,
            "    hyper: {lr: 0.001, warmup: 500, epsilon_decay: 0.998, updates_per_episode: 2, target_every: 100}\n",
        );
    }

    fn tensors(path: &Path) -> std::collections::BTreeMap<String, (Vec<usize>, Vec<f32>)> {
        Checkpoint::read(path).unwrap().tensors
    }

    /// The command line as a researcher uses it: a tournament that seats a checkpoint its own
    /// `train:` section writes trains it first, then plays; `train` refuses to overwrite the
    /// checkpoint unasked; `report` draws a training's figures again.
    #[test]
    fn train_then_play_then_redraw_from_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("study.yaml");
        std::fs::write(
            &file,
            "name: study\nseed: 8\nrules: {preset: paper, players: 2}\ndeals: 50\nseating: rotate\ntrain:\n  - id: tiny\n    algorithm: ppo\n    hidden: [16]\n    episodes: 256\n    opponents: [random, self]\n    evaluate: {every: 128, deals: 20, against: [random]}\n    checkpoint: nets/tiny.safetensors\nagents:\n  - {kind: ppo, params: {checkpoint: nets/tiny.safetensors}}\n  - kind: random\n",
        )
        .unwrap();
        let bin = env!("CARGO_BIN_EXE_dhumbal-run");
        let run = |args: &[&str]| {
            let o = std::process::Command::new(bin)
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            (o.status.code(), text)
        };
        let (code, text) = run(&["study.yaml", "--out", "out", "--threads", "2"]);
        assert_eq!(code, Some(0), "{text}");
        assert!(dir.path().join("nets/tiny.safetensors").is_file(), "{text}");
        let train = dir.path().join("out/train/tiny");
        for f in ["episodes.parquet", "evaluations.parquet", "manifest.json"] {
            assert!(train.join(f).is_file(), "{f} missing: {text}");
        }
        let figures = |d: &Path| std::fs::read_dir(d).map_or(0, |d| d.count());
        assert_eq!(
            figures(&train.join("figures")),
            12,
            "four figures in three formats"
        );
        assert!(
            dir.path().join("out/rounds").is_dir(),
            "the tournament played: {text}"
        );
        // The checkpoint exists now: training again is refused unless asked.
        let (code, text) = run(&["train", "study.yaml", "--out", "out"]);
        assert_eq!(code, Some(2), "{text}");
        assert!(
            text.contains("--resume") && text.contains("--force"),
            "{text}"
        );
        // Figures drawn again: refused over the existing ones, written elsewhere on request.
        let (code, text) = run(&["report", "out/train/tiny"]);
        assert_eq!(code, Some(2), "{text}");
        let (code, text) = run(&["report", "out/train/tiny", "--out", "again", "--titles"]);
        assert_eq!(code, Some(0), "{text}");
        assert_eq!(figures(&dir.path().join("again")), 12, "{text}");
    }

    #[test]
    fn same_checkpoint_with_one_thread_or_two_and_after_resuming() {
        for algorithm in ["ppo", "ddqn"] {
            let extra = "    hyper: {episodes_per_iteration: 16, warmup: 64, batch_size: 32, minibatch: 64}\n";
            let one = tempfile::tempdir().unwrap();
            let s1 = scenario(one.path(), &yaml(algorithm, 256, extra));
            run(s1.trainings[0].neural().unwrap(), 1, false, None);
            let two = tempfile::tempdir().unwrap();
            let s2 = scenario(two.path(), &yaml(algorithm, 256, extra));
            run(s2.trainings[0].neural().unwrap(), 2, false, None);
            let a = std::fs::read(&s1.trainings[0].output()).unwrap();
            let b = std::fs::read(&s2.trainings[0].output()).unwrap();
            assert!(
                a == b,
                "{algorithm}: checkpoints differ between 1 and 2 threads"
            );
            // Stopped after 96 episodes, then resumed: the same networks and optimizer.
            let three = tempfile::tempdir().unwrap();
            let s3 = scenario(three.path(), &yaml(algorithm, 256, extra));
            let plan = s3.trainings[0].neural().unwrap();
            assert_eq!(
                run(plan, 2, false, Some(96)),
                Ended::Stopped { episodes: 96 }
            );
            assert!(matches!(
                run(plan, 2, true, None),
                Ended::Finished { episodes: 256, .. }
            ));
            assert!(
                tensors(&plan.checkpoint) == tensors(&s1.trainings[0].output()),
                "{algorithm}: resumed training differs"
            );
        }
    }
}

/// Trained agents play like every other agent: the shipped checkpoints (greedy, and sampling
/// from their own streams) give the same records on 1 thread and on 3.
#[test]
fn trained_agents_records_do_not_depend_on_the_thread_count() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = |name: &str| {
        root.join("scenarios/learning/checkpoints/paper")
            .join(name)
            .display()
            .to_string()
    };
    let file = dir.path().join("play.yaml");
    std::fs::write(
        &file,
        format!(
            "name: play\nseed: 3\ndeals: 600\nseating: rotate\nrules: {{preset: paper, players: 4}}\nagents:\n  - {{id: ppo-greedy, kind: ppo, params: {{checkpoint: {ppo}}}}}\n  - {{id: ppo-sampled, kind: ppo, params: {{checkpoint: {ppo}, greedy: false}}}}\n  - {{id: dqn, kind: dqn, params: {{checkpoint: {dqn}}}}}\n  - kind: aggressive\noutput: {{chunk_rounds: 100}}\n",
            ppo = checkpoint("ppo-cards-2p.safetensors"),
            dqn = checkpoint("dqn-paper-2p.safetensors"),
        ),
    )
    .unwrap();
    let records = |threads: &str| {
        let out = dir.path().join(format!("out{threads}"));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_dhumbal-run"))
            .arg(&file)
            .args(["--out", out.to_str().unwrap(), "--threads", threads])
            .args(["--csv", "--no-report"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Every field but the decision time (a measurement).
        std::fs::read_to_string(out.join("rounds.csv"))
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                let n = f.len();
                [&f[..n - 3], &f[n - 2..]].concat().join(",")
            })
            .collect::<Vec<_>>()
    };
    let one = records("1");
    assert_eq!(one.len(), 1 + 600 * 4 * 4);
    assert!(
        one == records("3"),
        "records differ between 1 and 3 threads"
    );
}
