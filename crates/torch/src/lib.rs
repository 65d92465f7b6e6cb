//! Training learning agents on tch (libtorch): the training loop, iterations of episodes
//! played in parallel with frozen networks, then updates; evaluation, snapshots for
//! self-play, checkpoints and resuming; DQN and Double DQN (`dqn.rs`), PPO (`ppo.rs`).
//!
//! The one crate of the workspace that links libtorch, and only the trainer executable
//! (`dhumbal-train`, crates/trainer) depends on it: `dhumbal-run` and the Python package
//! start without loading libtorch and its CUDA libraries, and run the trainer as a child
//! process when a scenario needs a network trained (ARCHITECTURE.md). Everything a trained
//! agent needs to play (encodings, the forward pass, checkpoints) is plain Rust in
//! `dhumbal_agents::neural`; plans, episodes and evaluation are in `dhumbal_learn`, which
//! calls this crate through the backend the trainer installs ([`BACKEND`]).

mod dqn;
mod imitate;
mod net;
mod ppo;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde_json::{Map, Value, json};
use tch::Device;

use dhumbal_agents::neural::checkpoint::{FORMAT, rules_fingerprint, rules_name};
use dhumbal_agents::neural::{Algorithm, Checkpoint, Mlp, Policy};
use dhumbal_game::PlayError;

use dhumbal_learn::episode::{self, Acting, Played};
use dhumbal_learn::evaluate::evaluate;
use dhumbal_learn::{DeviceChoice, Ended, Event, Opponent, TrainError, TrainPlan};

/// Tensors by name, as checkpoints hold them.
pub(crate) type Tensors = BTreeMap<String, (Vec<usize>, Vec<f32>)>;

/// What an algorithm does between iterations.
pub(crate) trait Algo {
    /// The acting network for the next iteration's episodes, and the value network (PPO).
    fn acting(&self) -> (Arc<Policy>, Option<Arc<Mlp>>);
    /// How the learner acts in episodes played after `episodes` episodes.
    fn exploration(&self, episodes: u64) -> f64;
    /// Whether the plan's teacher plays the learner's seat (imitation) instead of the
    /// network.
    fn teacher(&self) -> bool {
        false
    }
    /// Learns from an iteration's episodes; `update_seed` keys its random draws. Returns the
    /// mean loss and the mean entropy (NaN where it has none).
    fn update(&mut self, played: &[Played], episodes_after: u64, update_seed: u64) -> (f64, f64);
    /// Networks, optimizer and counters for the checkpoint; what only resuming needs (a
    /// replay buffer) goes to `sidecar`.
    fn save(&self, tensors: &mut Tensors, sidecar: &mut Tensors, progress: &mut Map<String, Value>);
    fn load(
        &mut self,
        tensors: &Tensors,
        sidecar: &Tensors,
        progress: &Map<String, Value>,
    ) -> Result<(), net::LoadError>;
    /// Takes the networks' weights of a checkpoint (a warm start): not its optimizer's state,
    /// counters or replay buffer.
    fn warm(&mut self, tensors: &Tensors) -> Result<(), net::LoadError>;
}

fn device(choice: DeviceChoice) -> Result<Device, TrainError> {
    match choice {
        DeviceChoice::Cpu => Ok(Device::Cpu),
        DeviceChoice::Auto => Ok(Device::cuda_if_available()),
        DeviceChoice::Cuda if tch::Cuda::is_available() => Ok(Device::Cuda(0)),
        DeviceChoice::Cuda => Err(TrainError::Device(
            "`device: cuda` asked for, and libtorch sees no CUDA device here: use `device: auto` (CUDA when present, CPU otherwise) or `cpu`".into(),
        )),
    }
}

pub(crate) fn device_name(d: Device) -> String {
    match d {
        Device::Cpu => "cpu".into(),
        Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}"),
    }
}

/// The file beside a checkpoint with what only resuming needs.
pub fn sidecar_path(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".train");
    checkpoint.with_file_name(name)
}

/// Network widths, input first.
pub(crate) fn sizes(input: usize, hidden: &[usize], output: usize) -> Vec<usize> {
    let mut s = vec![input];
    s.extend_from_slice(hidden);
    s.push(output);
    s
}

/// One intra-op and one inter-op thread: the parallelism is in the episodes (rayon), and
/// torch's own threads on top of it made training 45x slower on 2 cores. libtorch accepts the
/// inter-op setting once per process.
fn one_thread() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tch::set_num_threads(1);
        tch::set_num_interop_threads(1);
    });
    tch::set_num_threads(1);
}

/// A training's networks, as they start. Their first weights are the one thing a training
/// draws from libtorch's generator, which is one per process: it is seeded and the weights
/// drawn under one lock, so that trainings started at once in one process (tests; a program
/// embedding the backend) each get their seed's weights instead of draws interleaved with
/// another's (episodes and minibatches draw from the plan's own streams).
fn networks(plan: &TrainPlan, device: Device) -> Box<dyn Algo> {
    static GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
    tch::manual_seed(plan.seed as i64);
    match plan.algorithm {
        Algorithm::Dqn | Algorithm::Ddqn => Box::new(dqn::Dqn::new(plan, device)),
        Algorithm::Ppo => Box::new(ppo::Ppo::new(plan, device)),
        Algorithm::Imitate => Box::new(imitate::Imitate::new(plan, device)),
    }
}

/// What `dhumbal-train` installs with `dhumbal_learn::install` before it parses its
/// arguments: training and the initial networks on libtorch.
pub const BACKEND: dhumbal_learn::Backend = dhumbal_learn::Backend { train, initial };

/// The networks a training of `plan` starts from (before any update), as played.
pub fn initial(plan: &TrainPlan) -> Result<Arc<Policy>, TrainError> {
    one_thread();
    let device = device(plan.device)?;
    Ok(networks(plan, device).acting().0)
}

pub fn train(
    plan: &TrainPlan,
    resume: bool,
    stop: &AtomicBool,
    event: &mut dyn FnMut(Event<'_>),
) -> Result<Ended, TrainError> {
    one_thread();
    let device = device(plan.device)?;
    let mut algo = networks(plan, device);
    let mut done = 0u64;
    let mut pool: Vec<Arc<Policy>> = Vec::new();
    if resume && plan.checkpoint.is_file() {
        let (episodes, restored) = restore(plan, algo.as_mut())?;
        done = episodes;
        pool = restored;
        event(Event::Resumed(done));
    } else if let Some(init) = &plan.init {
        warm(plan, init, algo.as_mut())?;
    }
    if pool.is_empty() {
        pool.push(algo.acting().0);
    }
    let self_play = plan
        .opponents
        .iter()
        .any(|o| matches!(o, Opponent::SelfPlay));
    let iteration = plan.hyper.episodes_per_iteration.max(1);
    if done == 0 {
        // Where training starts from: the baseline every later evaluation is read against.
        measure(plan, algo.as_ref(), 0, event)?;
    }
    let save_every = plan
        .evaluation
        .as_ref()
        .map_or((plan.episodes / 10).max(iteration), |e| e.every.max(1));
    while done < plan.episodes {
        if stop.load(Ordering::Relaxed) {
            save(plan, algo.as_ref(), done, &pool)?;
            event(Event::Checkpoint(done));
            return Ok(Ended::Stopped { episodes: done });
        }
        let n = iteration.min(plan.episodes - done);
        let (policy, value) = algo.acting();
        let exploration = algo.exploration(done);
        let acting = match &value {
            _ if algo.teacher() => Acting::Teacher,
            Some(v) => Acting::Sample(v),
            None => Acting::Epsilon(exploration),
        };
        let mut played: Vec<Played> = (done..done + n)
            .into_par_iter()
            .map(|e| episode::play(plan, e, &policy, acting, &pool))
            .collect::<Result<_, PlayError>>()
            .map_err(TrainError::Play)?;
        let (loss, entropy) = algo.update(&played, done + n, done);
        for p in &mut played {
            p.record.loss = loss;
            p.record.entropy = entropy;
        }
        let records: Vec<_> = played.into_iter().map(|p| p.record).collect();
        let before = done;
        done += n;
        event(Event::Episodes(&records));
        let crossed = |every: u64| every > 0 && done / every > before / every;
        if self_play && crossed(plan.hyper.snapshot_every) {
            pool.push(algo.acting().0);
            if pool.len() > plan.hyper.pool_size as usize {
                pool.remove(0);
            }
        }
        if plan.evaluation.as_ref().is_some_and(|e| crossed(e.every)) || done == plan.episodes {
            measure(plan, algo.as_ref(), done, event)?;
        }
        if crossed(save_every) || done == plan.episodes {
            save(plan, algo.as_ref(), done, &pool)?;
            event(Event::Checkpoint(done));
        }
    }
    Ok(Ended::Finished {
        episodes: done,
        device: device_name(device),
    })
}

/// Evaluates the acting network against each of the plan's evaluation opponents.
fn measure(
    plan: &TrainPlan,
    algo: &dyn Algo,
    done: u64,
    event: &mut dyn FnMut(Event<'_>),
) -> Result<(), TrainError> {
    let Some(eval) = &plan.evaluation else {
        return Ok(());
    };
    let policy = algo.acting().0;
    for (id, recipe) in &eval.against {
        let r = evaluate(
            &plan.rules,
            &policy,
            (id, recipe),
            eval.deals,
            eval.seed,
            done,
        )
        .map_err(TrainError::Play)?;
        event(Event::Evaluation(&r));
    }
    Ok(())
}

/// Writes the checkpoint (and the sidecar, when the algorithm has one).
fn save(
    plan: &TrainPlan,
    algo: &dyn Algo,
    episodes: u64,
    pool: &[Arc<Policy>],
) -> Result<(), TrainError> {
    let mut tensors = Tensors::new();
    let mut sidecar = Tensors::new();
    let mut progress = Map::new();
    algo.save(&mut tensors, &mut sidecar, &mut progress);
    progress.insert("episodes".into(), json!(episodes));
    progress.insert("pool".into(), json!(pool.len()));
    for (i, p) in pool.iter().enumerate() {
        for (j, l) in p.net.layers.iter().enumerate() {
            let weight = (vec![l.outputs, l.inputs], l.torch_weight());
            tensors.insert(format!("pool{i}.{j}.weight"), weight);
            tensors.insert(format!("pool{i}.{j}.bias"), (vec![l.outputs], l.b.clone()));
        }
    }
    let mut meta = Map::new();
    meta.insert("format".into(), json!(FORMAT));
    meta.insert("program".into(), json!(plan.program));
    meta.insert("algorithm".into(), json!(plan.algorithm.name()));
    meta.insert("encoding".into(), json!(plan.encoding.name()));
    meta.insert("hidden".into(), json!(plan.hidden));
    meta.insert("rules".into(), json!(rules_fingerprint(&plan.rules)));
    meta.insert("rules_name".into(), json!(rules_name(&plan.rules)));
    meta.insert(
        "rules_variant".into(),
        json!(format!("{:?}", plan.rules.variant())),
    );
    meta.insert("players".into(), json!(plan.rules.players()));
    meta.insert("scenario".into(), json!(plan.scenario_hash));
    meta.insert("train".into(), json!(plan.id));
    meta.insert("seed".into(), json!(plan.seed));
    meta.insert(
        "opponents".into(),
        json!(plan.opponents.iter().map(|o| o.name()).collect::<Vec<_>>()),
    );
    if let Some((teacher, _)) = &plan.teacher {
        meta.insert("teacher".into(), json!(teacher));
    }
    meta.insert("hyper".into(), Value::Object(plan.hyper.to_json()));
    meta.insert("progress".into(), Value::Object(progress));
    let write = |path: &Path, tensors: Tensors, meta: Map<String, Value>| {
        Checkpoint { meta, tensors }
            .write(path)
            .map_err(|e| TrainError::Checkpoint(format!("cannot write {}: {e}", path.display())))
    };
    let side = sidecar_path(&plan.checkpoint);
    if sidecar.is_empty() {
        let _ = std::fs::remove_file(&side);
    } else {
        // The sidecar first: a kill between the two leaves a checkpoint whose sidecar is newer,
        // which `restore` detects by the episode count and refuses.
        let mut m = Map::new();
        m.insert("format".into(), json!(FORMAT));
        m.insert("episodes".into(), json!(episodes));
        write(&side, sidecar, m)?;
    }
    write(&plan.checkpoint, tensors, meta)
}

/// A checkpoint that cannot be resumed from, as training reports it.
fn checkpoint_error(e: impl std::fmt::Display) -> TrainError {
    TrainError::Checkpoint(e.to_string())
}

/// Starts the networks from the weights of the checkpoint `path` (`init:`), refused where it
/// is another algorithm's or encoding's, or its networks have other widths.
fn warm(plan: &TrainPlan, path: &std::path::Path, algo: &mut dyn Algo) -> Result<(), TrainError> {
    let c = Checkpoint::read(path).map_err(checkpoint_error)?;
    for (what, there, here) in [
        ("algorithm", c.text("algorithm"), plan.algorithm.name()),
        ("encoding", c.text("encoding"), plan.encoding.name()),
    ] {
        if there != here {
            return Err(TrainError::Checkpoint(format!(
                "cannot start from {}: it was trained with {what} {there}, this training has {here}",
                path.display()
            )));
        }
    }
    algo.warm(&c.tensors)
        .map_err(|e| TrainError::Checkpoint(format!("cannot start from {}: {e}", path.display())))
}

/// Reads a checkpoint to resume from: checks it belongs to this plan, loads the algorithm's
/// state, and returns the episodes done and the self-play pool.
fn restore(plan: &TrainPlan, algo: &mut dyn Algo) -> Result<(u64, Vec<Arc<Policy>>), TrainError> {
    let path = &plan.checkpoint;
    let c = Checkpoint::read(path).map_err(checkpoint_error)?;
    let refuse = |what: &str, there: &str, here: &str| {
        TrainError::Checkpoint(format!(
            "cannot resume from {}: it was trained with {what} {there}, this training has {here}; use --force to train afresh (it replaces the checkpoint)",
            path.display()
        ))
    };
    if c.text("algorithm") != plan.algorithm.name() {
        return Err(refuse(
            "algorithm",
            c.text("algorithm"),
            plan.algorithm.name(),
        ));
    }
    if c.text("encoding") != plan.encoding.name() {
        return Err(refuse("encoding", c.text("encoding"), plan.encoding.name()));
    }
    if c.text("rules") != rules_fingerprint(&plan.rules) {
        return Err(refuse(
            "rules",
            c.text("rules_name"),
            &rules_name(&plan.rules),
        ));
    }
    if c.text("scenario") != plan.scenario_hash {
        return Err(refuse(
            "scenario hash",
            c.text("scenario"),
            &plan.scenario_hash,
        ));
    }
    let progress = c
        .meta
        .get("progress")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let episodes = progress
        .get("episodes")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let side = sidecar_path(path);
    let sidecar = if side.is_file() {
        let s = Checkpoint::read(&side).map_err(checkpoint_error)?;
        if s.meta.get("episodes").and_then(Value::as_u64) != Some(episodes) {
            return Err(TrainError::Checkpoint(format!(
                "cannot resume: {} does not belong to {} (another episode count); use --force to train afresh",
                side.display(),
                path.display()
            )));
        }
        s.tensors
    } else {
        Tensors::new()
    };
    algo.load(&c.tensors, &sidecar, &progress)
        .map_err(checkpoint_error)?;
    let n = progress.get("pool").and_then(Value::as_u64).unwrap_or(0);
    let mut pool = Vec::new();
    for i in 0..n {
        let net = c.mlp(&format!("pool{i}")).map_err(checkpoint_error)?;
        pool.push(Arc::new(Policy {
            algorithm: plan.algorithm,
            encoding: plan.encoding,
            net,
        }));
    }
    Ok((episodes, pool))
}
