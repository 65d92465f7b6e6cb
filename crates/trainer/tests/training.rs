//! Training on libtorch, in the trainer's package (the only one linking it): tiny DQN and PPO
//! runs improve against `random`, give the same checkpoint on 1 thread or 2 and after
//! resuming; `dhumbal-run` starts the trainer as a child for `train` and for a run whose
//! checkpoint is missing, with the same exit codes, Ctrl-C and refusals.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dhumbal::agents::neural::{Checkpoint, Policy};
use dhumbal::learn::{Ended, Event, TrainPlan};

/// `dhumbal-run`, built beside the trainer (`cargo test --workspace` builds both).
fn dhumbal_run() -> PathBuf {
    let trainer = PathBuf::from(env!("CARGO_BIN_EXE_dhumbal-train"));
    let run = trainer.with_file_name("dhumbal-run");
    assert!(
        run.is_file(),
        "{} is not built: run the trainer's tests with the workspace's (`cargo test --workspace`)",
        run.display()
    );
    run
}

/// `exe` run in `dir`: its exit code and everything it printed.
fn output(exe: &Path, dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = std::process::Command::new(exe)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

fn scenario(dir: &Path, body: &str) -> dhumbal::scenario::Scenario {
    let path = dir.join("train.yaml");
    std::fs::write(&path, body).unwrap();
    dhumbal::scenario::load(&path, &Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

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
        dhumbal_torch::train(plan, resume, &stop, &mut |e| {
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
    let r =
        dhumbal::learn::evaluate::evaluate(&plan.rules, policy, ("random", &random), 300, 99, 0)
            .unwrap();
    (r.win_rate, r.low, r.high)
}

/// Trains, then compares greedy play against `random` (300 fixed deals, both seats)
/// before and after: the win rate must rise by 15 points, intervals apart.
fn improves(algorithm: &str, episodes: u64, extra: &str) {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &yaml(algorithm, episodes, extra));
    let plan = s.trainings[0].neural().unwrap();
    let before = win_rate(plan, &dhumbal_torch::initial(plan).unwrap());
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

/// `imitate` learns to choose as its teacher does: taught by `aggressive` it beats `random`
/// as `aggressive` does, and against `aggressive` itself it wins about half the rounds (it
/// started at almost none), where a network that merely improved would not sit at even.
#[test]
fn an_imitation_of_a_heuristic_plays_like_it() {
    let dir = tempfile::tempdir().unwrap();
    let body = yaml(
        "imitate",
        1200,
        "    teacher: aggressive\n    hyper: {episodes_per_iteration: 32, minibatch: 128}\n    evaluate: {against: [aggressive]}\n",
    );
    let s = scenario(dir.path(), &body);
    let plan = s.trainings[0].neural().unwrap();
    assert_eq!(plan.teacher.as_ref().unwrap().0, "aggressive");
    let aggressive = &plan.evaluation.as_ref().unwrap().against[0];
    let against = |policy: &Arc<Policy>| {
        let r = dhumbal::learn::evaluate::evaluate(
            &plan.rules,
            policy,
            (&aggressive.0, &aggressive.1),
            300,
            99,
            0,
        )
        .unwrap();
        (r.win_rate, r.low, r.high)
    };
    let first = dhumbal_torch::initial(plan).unwrap();
    let before = (win_rate(plan, &first), against(&first));
    run(plan, 2, false, None);
    let c = Checkpoint::read(&plan.checkpoint).unwrap();
    assert_eq!(c.text("algorithm"), "imitate");
    assert_eq!(c.text("teacher"), "aggressive");
    let trained = Arc::new(Policy::from_checkpoint(&c).unwrap());
    let after = (win_rate(plan, &trained), against(&trained));
    assert!(
        after.0.0 > before.0.0 + 0.15 && after.0.1 > before.0.2,
        "against random: {before:?} before, {after:?} after"
    );
    assert!(
        after.1.1 < 0.5 && after.1.2 > 0.5 && after.1.0 > 0.4,
        "against aggressive: {before:?} before, {after:?} after"
    );
}

/// A search teacher is learned from its visit counts: every recorded step's targets are a
/// distribution over exactly its legal actions, spread where the search spread its visits,
/// and largest on the move the search played (it plays its most visited).
#[test]
fn a_search_teacher_is_recorded_by_its_visit_counts() {
    let dir = tempfile::tempdir().unwrap();
    let body = yaml(
        "imitate",
        10,
        "    teacher: {kind: ismcts, params: {iterations: 60}}\n",
    );
    let s = scenario(dir.path(), &body);
    let plan = s.trainings[0].neural().unwrap();
    let policy = dhumbal_torch::initial(plan).unwrap();
    let (mut steps, mut spread) = (0, 0);
    for episode in 0..10 {
        let played = dhumbal::learn::episode::play(
            plan,
            episode,
            &policy,
            dhumbal::learn::episode::Acting::Teacher,
            &[],
        )
        .unwrap();
        let t = &played.trajectory;
        assert_eq!(
            t.targets.len(),
            t.n_actions.iter().map(|&k| usize::from(k)).sum::<usize>()
        );
        let mut row = 0;
        for (i, &k) in t.n_actions.iter().enumerate() {
            let k = usize::from(k);
            let p = &t.targets[row..row + k];
            row += k;
            let sum: f32 = p.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "step {i}: {p:?}");
            let best = p.iter().cloned().fold(f32::MIN, f32::max);
            assert_eq!(p[usize::from(t.actions[i])], best, "step {i}: {p:?}");
            steps += 1;
            spread += usize::from(p.iter().filter(|&&x| x > 0.0).count() > 1);
        }
    }
    assert!(steps > 30, "{steps} steps");
    assert!(
        spread * 2 > steps,
        "{spread} of {steps} steps spread over several actions"
    );
}

/// A network's first weights come from libtorch's generator, which is one per process: trainings
/// started at once in one process (these tests; a program embedding the backend) must each
/// get their seed's weights, not draws interleaved with another's. Eight threads start
/// networks of two seeds over and over; every one must equal its seed's, made alone. (With
/// the seeding and the drawing not held together, this failed within a few dozen starts, and
/// `tiny_dqn_improves_against_random` failed now and then beside the other tests.)
#[test]
fn networks_started_at_once_in_one_process_get_their_seeds_weights() {
    let dir = tempfile::tempdir().unwrap();
    let plans: Vec<TrainPlan> = [4, 5]
        .iter()
        .map(|seed| {
            let body = yaml("dqn", 10, "").replace("seed: 4", &format!("seed: {seed}"));
            let sub = dir.path().join(format!("s{seed}"));
            std::fs::create_dir_all(&sub).unwrap();
            scenario(&sub, &body).trainings[0].neural().unwrap().clone()
        })
        .collect();
    let alone: Vec<_> = plans
        .iter()
        .map(|p| dhumbal_torch::initial(p).unwrap().net.clone())
        .collect();
    assert_ne!(alone[0], alone[1], "two seeds, two networks");
    std::thread::scope(|scope| {
        for t in 0..8 {
            let (plans, alone) = (&plans, &alone);
            scope.spawn(move || {
                for i in 0..40 {
                    let k = (t + i) % 2;
                    let net = dhumbal_torch::initial(&plans[k]).unwrap().net.clone();
                    assert!(
                        net == alone[k],
                        "thread {t}, start {i}: seed {} gave other weights",
                        k + 4
                    );
                }
            });
        }
    });
}

/// A fresh temporary folder holding the scenario `body` as `name`.
fn folder_with(name: &str, body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), body).unwrap();
    dir
}

fn tensors(path: &Path) -> std::collections::BTreeMap<String, (Vec<usize>, Vec<f32>)> {
    Checkpoint::read(path).unwrap().tensors
}

/// The command line as a researcher uses it: a tournament that seats a checkpoint its own
/// `train:` section writes trains it first, then plays; `train` refuses to overwrite the
/// checkpoint unasked; `report` draws a training's figures again.
#[test]
fn train_then_play_then_redraw_from_the_command_line() {
    let dir = folder_with(
        "study.yaml",
        "name: study\nseed: 8\nrules: {preset: paper, players: 2}\ndeals: 50\nseating: rotate\ntrain:\n  - id: tiny\n    algorithm: ppo\n    hidden: [16]\n    episodes: 256\n    opponents: [random, self]\n    evaluate: {every: 128, deals: 20, against: [random]}\n    checkpoint: nets/tiny.safetensors\nagents:\n  - {kind: ppo, params: {checkpoint: nets/tiny.safetensors}}\n  - kind: random\n",
    );
    let bin = dhumbal_run();
    let run = |args: &[&str]| output(&bin, dir.path(), args);
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

/// The `learn` method of `exploit:` (docs/exploitability.md): `dhumbal-run exploit` has the
/// trainer train a network against the frozen target at its table, then measures it on fresh
/// deals: against a target that never calls, a gain far outside the interval of zero.
#[test]
fn a_network_learns_to_exploit_a_target_that_never_calls() {
    let dir = folder_with(
        "x.yaml",
        "name: x\nseed: 11\nrules: {preset: paper, players: 2}\nexploit:\n  - id: never-calls\n    target: {kind: conservative, params: {strict_threshold: 0}}\n    deals: 100\n    methods:\n      learn: {episodes: 2000, hidden: [32]}\n",
    );
    let (code, text) = output(
        &dhumbal_run(),
        dir.path(),
        &["exploit", "x.yaml", "--out", "out", "--threads", "2"],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(
        dir.path()
            .join("models/exploit-never-calls.safetensors")
            .is_file(),
        "{text}"
    );
    assert!(
        dir.path()
            .join("out/train/exploit-never-calls/manifest.json")
            .is_file()
    );
    let result =
        dhumbal::report::exploit::Exploitability::read(&dir.path().join("out/exploit/never-calls"))
            .unwrap();
    let learn = &result.methods[0];
    assert_eq!(learn.method, "learn");
    assert!(learn.ci_low > 0.05, "{learn:?}");
    assert_eq!(learn.responder_agent["kind"], "ppo");
}

#[test]
fn same_checkpoint_with_one_thread_or_two_and_after_resuming() {
    for algorithm in ["ppo", "ddqn", "imitate"] {
        // The imitation's teacher is a search, whose own stream is the learner's.
        let extra = format!(
            "    hyper: {{episodes_per_iteration: 16, warmup: 64, batch_size: 32, minibatch: 64}}\n{}",
            if algorithm == "imitate" {
                "    teacher: {kind: ismcts, params: {iterations: 30}}\n"
            } else {
                ""
            }
        );
        let extra = extra.as_str();
        let one = tempfile::tempdir().unwrap();
        let s1 = scenario(one.path(), &yaml(algorithm, 256, extra));
        run(s1.trainings[0].neural().unwrap(), 1, false, None);
        let two = tempfile::tempdir().unwrap();
        let s2 = scenario(two.path(), &yaml(algorithm, 256, extra));
        run(s2.trainings[0].neural().unwrap(), 2, false, None);
        let a = std::fs::read(s1.trainings[0].output()).unwrap();
        let b = std::fs::read(s2.trainings[0].output()).unwrap();
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
            tensors(&plan.checkpoint) == tensors(s1.trainings[0].output()),
            "{algorithm}: resumed training differs"
        );
    }
}

/// `dhumbal-run train` runs the trainer as a child: Ctrl-C (sent, as a terminal does, to the
/// whole foreground process group) stops it with the checkpoint written and exit 130, the
/// message says how to finish, and `--resume` finishes to the checkpoint of a run never
/// interrupted. The trainer's own `--help` is the train command's.
#[test]
fn ctrl_c_reaches_the_trainer_through_dhumbal_run_and_resume_finishes() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let body = "name: c\nseed: 5\nrules: {preset: paper, players: 2}\ntrain:\n  - id: p\n    algorithm: ppo\n    hidden: [16]\n    episodes: 6000\n    opponents: [random]\n    evaluate: {every: 500, deals: 20, against: [random]}\n    checkpoint: p.safetensors\n";
    let dir = folder_with("c.yaml", body);
    let mut child = Command::new(dhumbal_run())
        .args(["train", "c.yaml", "--out", "out", "--threads", "2"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    // Interrupted once the first evaluation after training started is printed.
    for line in lines.by_ref() {
        let line = line.unwrap();
        // "  after     512 episodes: ..." (evaluations fall on iteration boundaries).
        let trained = line.trim_start().starts_with("after") && !line.contains(" 0 episodes");
        seen.push(line);
        if trained {
            break;
        }
    }
    let status = Command::new("kill")
        .args(["-INT", "--", &format!("-{group}")])
        .status()
        .unwrap();
    assert!(status.success());
    seen.extend(lines.map(|l| l.unwrap()));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = format!("{}\n{stderr}", seen.join("\n"));
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(stderr.contains("--resume"), "{text}");
    let c = Checkpoint::read(&dir.path().join("p.safetensors")).unwrap();
    let done = c.meta["progress"]["episodes"].as_u64().unwrap();
    assert!((500..6000).contains(&done), "{done} episodes saved: {text}");

    let finish = Command::new(dhumbal_run())
        .args([
            "train",
            "c.yaml",
            "--out",
            "out",
            "--threads",
            "2",
            "--resume",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&finish.stdout);
    assert_eq!(finish.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!("resuming after {done} episodes")),
        "{text}"
    );
    // The same networks as a training never interrupted.
    let whole = folder_with("c.yaml", body);
    let o = Command::new(env!("CARGO_BIN_EXE_dhumbal-train"))
        .args(["c.yaml", "--out", "out", "--threads", "1"])
        .current_dir(whole.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        tensors(&dir.path().join("p.safetensors")) == tensors(&whole.path().join("p.safetensors")),
        "resumed through dhumbal-run: other networks than one uninterrupted run"
    );
    let help = Command::new(env!("CARGO_BIN_EXE_dhumbal-train"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--resume") && help.contains("Hyperparameters") && help.contains("--seed"),
        "{help}"
    );
}

/// A checkpoint whose weights hold NaN is refused when a training would resume from it (exit 2,
/// the file and the tensor named), instead of training on from a broken network.
#[test]
fn resuming_from_a_checkpoint_with_non_finite_weights_is_refused() {
    let body = "name: r\nseed: 6\nrules: {preset: paper, players: 2}\ntrain:\n  - id: p\n    algorithm: ppo\n    hidden: [16]\n    episodes: 128\n    opponents: [random]\n    checkpoint: p.safetensors\n";
    let dir = folder_with("r.yaml", body);
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_dhumbal-train"));
    let trainer = |args: &[&str]| output(&exe, dir.path(), args);
    let (code, text) = trainer(&["r.yaml", "--out", "out", "--threads", "1"]);
    assert_eq!(code, Some(0), "{text}");
    let path = dir.path().join("p.safetensors");
    let mut c = Checkpoint::read(&path).unwrap();
    let name = c
        .tensors
        .keys()
        .find(|k| k.starts_with("policy"))
        .unwrap()
        .clone();
    c.tensors.get_mut(&name).unwrap().1[0] = f32::INFINITY;
    c.write(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let (code, text) = trainer(&["r.yaml", "--out", "out", "--resume"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("p.safetensors") && text.contains(&format!("tensor `{name}`")),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is left as it was"
    );
}

/// `init:` (a warm start) takes the networks of the checkpoint it names: stopped before its
/// first update, a warm-started training's checkpoint holds the same networks as the one it
/// started from (for both algorithms), a cold one does not; the same algorithm with other
/// widths, another algorithm, the entry's own checkpoint and a missing file are refused.
#[test]
fn a_warm_start_takes_the_networks_of_its_init() {
    let extra =
        "    hyper: {episodes_per_iteration: 16, warmup: 64, batch_size: 32, minibatch: 64}\n";
    for (algorithm, nets) in [("ppo", ["policy", "value"]), ("ddqn", ["q", "q_target"])] {
        let dir = tempfile::tempdir().unwrap();
        let first = scenario(dir.path(), &yaml(algorithm, 64, extra));
        run(first.trainings[0].neural().unwrap(), 2, false, None);
        let from = dir.path().join("model.safetensors");
        let warm_yaml = |init: &str, hidden: &str| {
            yaml(algorithm, 64, extra)
                .replace(
                    "checkpoint: model.safetensors",
                    "checkpoint: warm.safetensors",
                )
                .replace("hidden: [64, 32]", hidden)
                + format!("    init: {init}\n").as_str()
        };
        let stopped_at_once = |plan: &TrainPlan| {
            let stop = AtomicBool::new(true);
            dhumbal_torch::train(plan, false, &stop, &mut |_| {})
        };
        let warm = scenario(
            dir.path(),
            &warm_yaml("model.safetensors", "hidden: [64, 32]"),
        );
        let plan = warm.trainings[0].neural().unwrap();
        assert_eq!(plan.init.as_deref(), Some(from.as_path()));
        assert_eq!(
            stopped_at_once(plan).unwrap(),
            Ended::Stopped { episodes: 0 }
        );
        let (a, b) = (
            tensors(&from),
            tensors(&dir.path().join("warm.safetensors")),
        );
        let of = |t: &std::collections::BTreeMap<String, (Vec<usize>, Vec<f32>)>, net: &str| {
            t.iter()
                .filter(|(k, _)| k.split('.').next() == Some(net))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        for net in nets {
            assert!(!of(&a, net).is_empty(), "{algorithm}: no {net} in {a:?}");
            assert!(of(&a, net) == of(&b, net), "{algorithm}: {net} differs");
        }
        // Without it, the networks are the seed's.
        let cold = yaml(algorithm, 64, extra).replace(
            "checkpoint: model.safetensors",
            "checkpoint: cold.safetensors",
        );
        let cold = scenario(dir.path(), &cold);
        stopped_at_once(cold.trainings[0].neural().unwrap()).unwrap();
        let c = tensors(&dir.path().join("cold.safetensors"));
        assert!(of(&a, nets[0]) != of(&c, nets[0]), "{algorithm}");
        // Other widths: refused when training starts, naming the file.
        let wide = scenario(dir.path(), &warm_yaml("model.safetensors", "hidden: [32]"));
        let e = stopped_at_once(wide.trainings[0].neural().unwrap()).unwrap_err();
        assert!(e.to_string().contains("cannot start from"), "{e}");
        // A missing file, and the entry's own checkpoint: refused at `init`, nothing trained.
        for (init, says) in [
            ("nothing.safetensors", "cannot read"),
            ("warm.safetensors", "own checkpoint"),
        ] {
            let path = dir.path().join("train.yaml");
            std::fs::write(&path, warm_yaml(init, "hidden: [64, 32]")).unwrap();
            let e = dhumbal::scenario::load(&path, &Default::default())
                .err()
                .unwrap_or_else(|| panic!("{init} accepted"))
                .to_string();
            assert!(e.contains("init") && e.contains(says), "{e}");
        }
    }
    // Another algorithm's checkpoint.
    let dir = tempfile::tempdir().unwrap();
    let first = scenario(dir.path(), &yaml("ppo", 32, extra));
    run(first.trainings[0].neural().unwrap(), 2, false, None);
    let body = yaml("ddqn", 32, extra)
        .replace("checkpoint: model.safetensors", "checkpoint: q.safetensors")
        + "    init: model.safetensors\n";
    let other = scenario(dir.path(), &body);
    let stop = AtomicBool::new(true);
    let e = dhumbal_torch::train(
        other.trainings[0].neural().unwrap(),
        false,
        &stop,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("algorithm"), "{e}");
}
