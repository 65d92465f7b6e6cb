//! Learning agents: encodings read only what an observation may show, masking never lets a
//! network choose an illegal action, training entries resolve as written. Training itself
//! (tiny DQN and PPO runs that improve, resume exactly, and do not depend on the thread
//! count) is tested beside the trainer, in crates/trainer/tests/training.rs.

use std::path::Path;
use std::sync::Arc;

mod common;
use common::{Probe, arg, bin, has, has_all, ok, play_into, text, tmp};

use dhumbal::agents::neural::net::Layer;
use dhumbal::agents::neural::{Algorithm, Choice, Encoded, Encoding, Mlp, Policy, PolicyAgent};
use dhumbal::game::rng::ChaChaStreams;
use dhumbal::game::rng::{Purpose, RandomSource, chacha_stream};
use dhumbal::game::{Agent, Discard, Hand, Observation, Oracle, Pick, Preset, Rules, Table};

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

/// Whether an encoding of `obs` changes when made-up hidden hands (drawn from stream
/// `stream`) fill the observation's oracle slot.
fn reads_hidden(obs: &Observation<'_>, stream: u64) -> bool {
    let mut fake: Vec<Hand> = Vec::new();
    let mut r = chacha_stream(9, Purpose::Learn, stream);
    for _ in 0..obs.players() {
        let mut h = Hand::new();
        for _ in 0..5 {
            h.push(dhumbal::game::Card::from_id(r.below(52) as u8));
        }
        fake.push(h);
    }
    [Encoding::Paper, Encoding::Cards].into_iter().any(|enc| {
        let (mut a, mut b) = (Encoded::default(), Encoded::default());
        enc.encode(obs, &mut a);
        let mut other = *obs;
        other.oracle = Oracle::new(&fake);
        enc.encode(&other, &mut b);
        a.state != b.state || a.features != b.features || a.actions != b.actions
    })
}

#[test]
fn encodings_read_nothing_hidden() {
    let rules = Rules::preset(Preset::Jhyap);
    let policy = random_policy(Encoding::Cards, 1);
    // Every decision encoded twice, the second time with made-up hidden hands.
    let mut decision = 0;
    let mut probe = Probe::new(
        PolicyAgent::new("p", policy.clone(), Choice::Sample),
        |obs: &Observation<'_>| {
            let hidden = reads_hidden(obs, decision);
            assert!(!hidden, "encodings changed with the hidden hands");
            decision += 1;
        },
    );
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
    assert!(probe.looked > 1000, "{} decisions", probe.looked);
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
        common::decisions!(self, o, rng =>
            call { self.look(o); Ok(false) }
            discard { self.look(o); Ok(Discard::from_slice(&o.hand.as_slice()[..1]).unwrap()) }
            pick { self.look(o); Ok(Pick::Stock) }
        );
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
    let dir = tmp();
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
    has_all(&err, &["train.0.reward", "score, win"]);
}

fn scenario(dir: &Path, body: &str) -> dhumbal::scenario::Scenario {
    let path = dir.join("train.yaml");
    std::fs::write(&path, body).unwrap();
    dhumbal::scenario::load(&path, &Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Trained agents play like every other agent: the shipped checkpoints (greedy, and sampling
/// from their own streams) give the same records on 1 thread and on 3.
#[test]
fn trained_agents_records_do_not_depend_on_the_thread_count() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tmp();
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
        play_into(&file, &out, &["--threads", threads, "--csv", "--no-report"]);
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

/// `dhumbal-run` in `dir`: exit code and everything it printed.
fn dhumbal_run(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    dhumbal_run_with(dir, args, None)
}

/// `dhumbal-run` in `dir` with `$DHUMBAL_TRAIN` set to `trainer`, when given.
fn dhumbal_run_with(dir: &Path, args: &[&str], trainer: Option<&Path>) -> (Option<i32>, String) {
    let mut command = bin();
    command.args(args).current_dir(dir);
    if let Some(t) = trainer {
        command.env("DHUMBAL_TRAIN", t);
    }
    let o = command.output().unwrap();
    (o.status.code(), text(&o))
}

/// A checkpoint whose weights hold a NaN (a diverged training, a damaged file) is refused
/// where it is seated, with the file and the tensor named: before, it played without a word,
/// every score NaN.
#[test]
fn a_checkpoint_with_non_finite_weights_is_refused_where_it_is_seated() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tmp();
    let source = root.join("scenarios/learning/checkpoints/paper/ppo-cards-2p.safetensors");
    let mut c = dhumbal::agents::neural::Checkpoint::read(&source).unwrap();
    let name = c.tensors.keys().next().unwrap().clone();
    c.tensors.get_mut(&name).unwrap().1[3] = f32::NAN;
    c.write(&dir.path().join("broken.safetensors")).unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "name: s\nrules: {preset: paper, players: 2}\ndeals: 10\nagents:\n  - {kind: ppo, params: {checkpoint: broken.safetensors}}\n  - kind: random\n",
    )
    .unwrap();
    for args in [&["validate", "s.yaml"][..], &["s.yaml", "--out", "out"][..]] {
        let (code, text) = dhumbal_run(dir.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(
            text.contains("s.yaml:5")
                && text.contains("broken.safetensors")
                && text.contains(&format!("tensor `{name}`"))
                && text.contains("1 non-finite value"),
            "{args:?}: {text}"
        );
    }
    assert!(!dir.path().join("out").exists(), "nothing was played");
    // The same file read by a library caller (the Python package's `dhumbal.Policy`).
    let err = dhumbal::agents::neural::Checkpoint::read(&dir.path().join("broken.safetensors"))
        .err()
        .unwrap()
        .to_string();
    has(&err, "NaN at index 3");
}

/// A training whose output path cannot be written (a folder there, or a folder that cannot be
/// created) is refused before its first episode, not after the last one.
#[test]
fn a_training_whose_output_cannot_be_written_is_refused_before_it_starts() {
    let dir = tmp();
    let yaml = |output: &str| {
        format!(
            "name: t\nseed: 3\nrules: {{preset: simplified-2p}}\ntrain:\n  - id: q\n    algorithm: q-learning\n    episodes: 200000\n    opponents: [random]\n    checkpoint: {output}\n"
        )
    };
    std::fs::create_dir_all(dir.path().join("policies/q.csv")).unwrap();
    std::fs::write(dir.path().join("folder.yaml"), yaml("policies/q.csv")).unwrap();
    let (code, text) = dhumbal_run(dir.path(), &["train", "folder.yaml", "--out", "out"]);
    assert_eq!(code, Some(2), "{text}");
    has_all(&text, &["training `q`", "policies/q.csv", "it is a folder"]);
    assert!(
        !text.contains("episodes in") && !dir.path().join("out/train/q").exists(),
        "nothing trained: {text}"
    );
    // A file where the output's folder should be.
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    std::fs::write(dir.path().join("blocked.yaml"), yaml("blocker/q.csv")).unwrap();
    let (code, text) = dhumbal_run(dir.path(), &["train", "blocked.yaml", "--out", "out"]);
    assert_eq!(code, Some(2), "{text}");
    has_all(&text, &["cannot create the folder", "blocker"]);
}

/// Without the trainer, a network cannot be trained: `train`, `validate` and a run that would
/// have to train first say so (exit 2, how to build it), and nothing is written.
#[test]
fn without_the_trainer_training_a_network_is_refused_with_how_to_build_it() {
    let dir = tmp();
    std::fs::write(
        dir.path().join("t.yaml"),
        "name: t\nseed: 2\nrules: {preset: paper, players: 2}\ndeals: 10\ntrain:\n  - id: p\n    algorithm: ppo\n    episodes: 64\n    opponents: [random]\n    checkpoint: nets/p.safetensors\nagents:\n  - {kind: ppo, params: {checkpoint: nets/p.safetensors}}\n  - kind: random\n",
    )
    .unwrap();
    // The trainer nowhere: $DHUMBAL_TRAIN names a file that does not exist.
    let nowhere = dir.path().join("no-trainer-here");
    let run = |args: &[&str]| dhumbal_run_with(dir.path(), args, Some(&nowhere));
    for args in [
        &["train", "t.yaml", "--out", "out"][..],
        &["t.yaml", "--out", "out"][..],
        &["validate", "t.yaml"][..],
    ] {
        let (code, text) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(
            text.contains("dhumbal-train") && text.contains("scripts/run.sh"),
            "{args:?}: {text}"
        );
    }
    assert!(!dir.path().join("nets").exists() && !dir.path().join("out").exists());
}

/// A checkpoint is refused where it is seated under another kind, another encoding or other
/// rules than it was trained with, each with the reason and the way out (before, no test
/// seated one wrongly).
#[test]
fn a_checkpoint_is_refused_under_another_kind_encoding_or_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ppo = root.join("scenarios/learning/checkpoints/paper/ppo-cards-2p.safetensors");
    let ppo = ppo.display();
    let dir = tmp();
    let refused = |rules: &str, seat: &str| {
        let file = common::scenario(
            dir.path(),
            "seat.yaml",
            &format!(
                "name: seat\nseed: 1\ndeals: 2\nrules: {rules}\nagents:\n  - {seat}\n  - kind: random\n"
            ),
        );
        common::refused(&["validate", arg(&file)])
    };
    let paper = "{preset: paper, players: 2}";
    // The right kind, encoding and rules are accepted: the refusals below are about them.
    let file = common::scenario(
        dir.path(),
        "ok.yaml",
        &format!(
            "name: ok\nseed: 1\ndeals: 2\nrules: {paper}\nagents:\n  - {{kind: ppo, params: {{checkpoint: {ppo}, encoding: cards}}}}\n  - kind: random\n"
        ),
    );
    ok(&["validate", arg(&file)]);

    let t = refused(
        paper,
        &format!("{{kind: dqn, params: {{checkpoint: {ppo}}}}}"),
    );
    has_all(
        &t,
        &["was trained by `ppo`, not `dqn`", "seat it as `kind: ppo`"],
    );
    let t = refused(
        paper,
        &format!("{{kind: ppo, params: {{checkpoint: {ppo}, encoding: paper}}}}"),
    );
    has_all(
        &t,
        &[
            "was trained with the `cards` encoding, not `paper`",
            "params.encoding",
        ],
    );
    let t = refused(
        "{preset: jhyap, players: 2}",
        &format!("{{kind: ppo, params: {{checkpoint: {ppo}}}}}"),
    );
    has_all(
        &t,
        &[
            "was trained under",
            "a network learns the rules it was trained under",
        ],
    );
}

/// `imitate` needs a teacher, with the `cards` encoding; no other algorithm takes one; a
/// teacher that is not an agent entry is refused at its field. Each with file, line and field,
/// exit code 2. A good entry resolves, with its teacher in the plan and in the hash.
#[test]
fn a_teacher_is_checked_where_it_is_written() {
    let dir = tmp();
    let entry = |extra: &str| {
        format!(
            "name: t\nseed: 1\nrules: {{preset: jhyap, players: 2}}\ntrain:\n  - id: d\n    episodes: 10\n    opponents: [aggressive]\n    checkpoint: d.safetensors\n{extra}"
        )
    };
    let refused = |extra: &str| {
        let file = common::scenario(dir.path(), "t.yaml", &entry(extra));
        common::refused(&["validate", arg(&file)])
    };
    let t = refused("    algorithm: imitate\n");
    has_all(&t, &["t.yaml:", "`train.0.teacher`", "missing", "imitate"]);
    let t = refused("    algorithm: ppo\n    teacher: aggressive\n");
    has_all(
        &t,
        &[
            "`train.0.teacher`",
            "only `algorithm: imitate` learns from a teacher",
        ],
    );
    let t = refused("    algorithm: imitate\n    encoding: paper\n    teacher: aggressive\n");
    has_all(&t, &["`train.0.encoding`", "use `encoding: cards`"]);
    let t =
        refused("    algorithm: imitate\n    teacher: {kind: ismcts, params: {iterations: -3}}\n");
    has(&t, "train.0.teacher");
    let t = refused("    algorithm: q-learning\n    teacher: aggressive\n");
    has_all(&t, &["`train.0.teacher`", "is for networks"]);

    let file = common::scenario(
        dir.path(),
        "ok.yaml",
        &entry("    algorithm: imitate\n    teacher: {kind: ismcts, params: {iterations: 50}}\n"),
    );
    ok(&["validate", arg(&file)]);
    let s = dhumbal::scenario::load(&file, &Default::default()).unwrap();
    let plan = s.trainings[0].neural().unwrap();
    assert_eq!(plan.algorithm, Algorithm::Imitate);
    assert_eq!(plan.teacher.as_ref().unwrap().0, "ismcts");
    let other = common::scenario(
        dir.path(),
        "other.yaml",
        &entry("    algorithm: imitate\n    teacher: {kind: ismcts, params: {iterations: 60}}\n"),
    );
    let o = dhumbal::scenario::load(&other, &Default::default()).unwrap();
    assert_ne!(
        o.trainings[0].neural().unwrap().scenario_hash,
        plan.scenario_hash
    );
}
