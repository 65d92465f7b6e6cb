//! DQN and Double DQN: a replay buffer of the learner's decisions, an online and a target
//! network, ε-greedy exploration. A transition's next state is the learner's next decision in
//! the same round; the last decision of a round is terminal (its target is the reward alone,
//! which the paper's code never did: its `step()` always returned `done=False`).

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tch::{Device, Reduction, Tensor, nn};

use dhumbal_agents::neural::{Algorithm, Encoding, Mlp, Policy};
use dhumbal_game::rng::{Purpose, RandomSource, chacha_stream};

use crate::net::{
    Adam, LoadError, Net, StepRef, batch, load_training, named, save_training, scores,
};
use crate::{Algo, Tensors, sizes};
use dhumbal_learn::episode::Played;
use dhumbal_learn::{Hyper, TrainPlan};

/// One stored decision. Slots are reused in a ring: their vectors keep their capacity.
#[derive(Clone, Default)]
struct Slot {
    state: Vec<f32>,
    features: Vec<f32>,
    k: u16,
    action: u16,
    reward: f32,
    done: bool,
}

/// The replay buffer. Episodes go in whole and in order, so the successor of a non-terminal
/// slot is always the next slot (mod capacity), alive as long as the slot itself.
struct Replay {
    slots: Vec<Slot>,
    capacity: usize,
    next: usize,
}

impl Replay {
    fn push(
        &mut self,
        state: &[f32],
        features: &[f32],
        k: u16,
        action: u16,
        reward: f32,
        done: bool,
    ) {
        if self.slots.len() < self.capacity {
            self.slots.push(Slot::default());
        }
        let s = &mut self.slots[self.next];
        s.state.clear();
        s.state.extend_from_slice(state);
        s.features.clear();
        s.features.extend_from_slice(features);
        s.k = k;
        s.action = action;
        s.reward = reward;
        s.done = done;
        self.next = (self.next + 1) % self.capacity;
    }

    fn step(&self, i: usize) -> StepRef<'_> {
        let s = &self.slots[i];
        StepRef {
            state: &s.state,
            features: &s.features,
            k: usize::from(s.k),
        }
    }
}

pub struct Dqn {
    double: bool,
    encoding: Encoding,
    hyper: Hyper,
    seed: u64,
    device: Device,
    // The networks live in their var stores.
    _vs: nn::VarStore,
    _target_vs: nn::VarStore,
    online: Net,
    target: Net,
    adam: Adam,
    replay: Replay,
    updates: u64,
    /// Gradient steps owed (fractional `updates_per_episode`).
    owed: f64,
    acting: Arc<Policy>,
}

impl Dqn {
    pub fn new(plan: &TrainPlan, device: Device) -> Dqn {
        let enc = plan.encoding;
        let shape = sizes(enc.input_dim(), &plan.hidden, enc.outputs());
        // Initialised on the CPU, then moved: the same starting network on every device.
        let mut vs = nn::VarStore::new(Device::Cpu);
        let online = Net::new(&vs.root(), "q", &shape);
        vs.set_device(device);
        let mut target_vs = nn::VarStore::new(Device::Cpu);
        let mut target = Net::new(&target_vs.root(), "q", &shape);
        target_vs.set_device(device);
        target.copy_from(&online);
        let adam = Adam::new(plan.hyper.lr, named(&[("q", &online)]));
        let acting = Arc::new(Policy {
            algorithm: plan.algorithm,
            encoding: enc,
            net: online.export(),
        });
        Dqn {
            double: plan.algorithm == Algorithm::Ddqn,
            encoding: enc,
            hyper: plan.hyper.clone(),
            seed: plan.seed,
            device,
            _vs: vs,
            _target_vs: target_vs,
            online,
            target,
            adam,
            replay: Replay {
                slots: Vec::new(),
                capacity: plan.hyper.replay as usize,
                next: 0,
            },
            updates: 0,
            owed: 0.0,
            acting,
        }
    }

    /// The acting network: the online one as it is now.
    fn refresh(&mut self) {
        self.acting = Arc::new(Policy {
            algorithm: self.acting.algorithm,
            encoding: self.encoding,
            net: self.online.export(),
        });
    }

    /// One gradient step on a minibatch drawn from the replay buffer.
    fn learn(&mut self) -> f64 {
        let mut rng = chacha_stream(self.seed, Purpose::Learn, self.updates);
        let n = self.replay.slots.len();
        let picks: Vec<usize> = (0..self.hyper.batch_size)
            .map(|_| rng.below(n as u32) as usize)
            .collect();
        let steps: Vec<StepRef<'_>> = picks.iter().map(|&i| self.replay.step(i)).collect();
        let b = batch(self.encoding, &steps, self.device);
        let actions: Vec<i64> = picks
            .iter()
            .map(|&i| i64::from(self.replay.slots[i].action))
            .collect();
        let rewards: Vec<f32> = picks.iter().map(|&i| self.replay.slots[i].reward).collect();
        // Successors of the non-terminal picks.
        let live: Vec<usize> = (0..picks.len())
            .filter(|&j| !self.replay.slots[picks[j]].done)
            .collect();
        let mut bootstrap = vec![0f32; picks.len()];
        if !live.is_empty() {
            let next: Vec<StepRef<'_>> = live
                .iter()
                .map(|&j| self.replay.step((picks[j] + 1) % self.replay.capacity))
                .collect();
            let nb = batch(self.encoding, &next, self.device);
            let values = tch::no_grad(|| {
                let target = scores(&self.target, &nb);
                if self.double {
                    let best = scores(&self.online, &nb).argmax(1, true);
                    target.gather(1, &best, false).squeeze_dim(1)
                } else {
                    target.max_dim(1, false).0
                }
            });
            let values = crate::net::to_vec(&values);
            for (j, v) in live.iter().zip(values) {
                bootstrap[*j] = v;
            }
        }
        let gamma = self.hyper.gamma as f32;
        let targets: Vec<f32> = rewards
            .iter()
            .zip(&bootstrap)
            .map(|(r, v)| r + gamma * v)
            .collect();
        let targets = Tensor::from_slice(&targets).to_device(self.device);
        let index = Tensor::from_slice(&actions)
            .to_device(self.device)
            .unsqueeze(1);
        let q = scores(&self.online, &b)
            .gather(1, &index, false)
            .squeeze_dim(1);
        let loss = if self.hyper.huber == 1 {
            q.smooth_l1_loss(&targets, Reduction::Mean, 1.0)
        } else {
            q.mse_loss(&targets, Reduction::Mean)
        };
        self.adam.zero_grad();
        loss.backward();
        self.adam.step(self.hyper.max_grad_norm);
        self.updates += 1;
        if self.updates.is_multiple_of(self.hyper.target_every) {
            self.target.copy_from(&self.online);
        }
        loss.double_value(&[])
    }
}

impl Algo for Dqn {
    fn acting(&self) -> (Arc<Policy>, Option<Arc<Mlp>>) {
        (self.acting.clone(), None)
    }

    fn exploration(&self, episodes: u64) -> f64 {
        self.hyper.epsilon(episodes)
    }

    fn update(&mut self, played: &[Played], _episodes_after: u64, _update_seed: u64) -> (f64, f64) {
        let a = self.encoding.action_dim();
        for p in played {
            let t = &p.trajectory;
            let s = self.encoding.state_dim();
            let mut row = 0;
            for i in 0..t.steps() {
                let k = usize::from(t.n_actions[i]);
                let features = if a == 0 {
                    &[][..]
                } else {
                    &t.features[row * a..(row + k) * a]
                };
                row += k;
                let last = i + 1 == t.steps();
                self.replay.push(
                    &t.states[i * s..(i + 1) * s],
                    features,
                    t.n_actions[i],
                    t.actions[i],
                    if last { t.reward } else { 0.0 },
                    last,
                );
            }
        }
        self.owed += self.hyper.updates_per_episode * played.len() as f64;
        let mut losses = Vec::new();
        if self.replay.slots.len() as u64 >= self.hyper.warmup.max(self.hyper.batch_size) {
            while self.owed >= 1.0 {
                self.owed -= 1.0;
                losses.push(self.learn());
            }
        }
        if !losses.is_empty() {
            self.refresh();
        }
        let loss = if losses.is_empty() {
            f64::NAN
        } else {
            losses.iter().sum::<f64>() / losses.len() as f64
        };
        (loss, f64::NAN)
    }

    fn save(
        &self,
        tensors: &mut Tensors,
        sidecar: &mut Tensors,
        progress: &mut Map<String, Value>,
    ) {
        let nets = [("q", &self.online), ("q_target", &self.target)];
        save_training(&nets, &self.adam, self.updates, tensors, progress);
        progress.insert("owed".into(), json!(self.owed));
        // The replay buffer, flat, in slot order.
        let r = &self.replay;
        let n = r.slots.len();
        let mut states = Vec::new();
        let mut features = Vec::new();
        let mut meta = Vec::with_capacity(n * 4);
        for s in &r.slots {
            states.extend_from_slice(&s.state);
            features.extend_from_slice(&s.features);
            meta.extend_from_slice(&[
                f32::from(s.k),
                f32::from(s.action),
                s.reward,
                f32::from(u8::from(s.done)),
            ]);
        }
        let a = self.encoding.action_dim().max(1);
        sidecar.insert(
            "replay.states".into(),
            (vec![n, self.encoding.state_dim()], states),
        );
        let rows = features.len() / a;
        sidecar.insert("replay.features".into(), (vec![rows, a], features));
        sidecar.insert("replay.meta".into(), (vec![n, 4], meta));
        progress.insert("replay_next".into(), json!(r.next));
        progress.insert("replay_len".into(), json!(n));
    }

    fn warm(&mut self, tensors: &Tensors) -> Result<(), LoadError> {
        self.online.load("q", tensors)?;
        self.target.load("q_target", tensors)?;
        self.refresh();
        Ok(())
    }

    fn load(
        &mut self,
        tensors: &Tensors,
        sidecar: &Tensors,
        progress: &Map<String, Value>,
    ) -> Result<(), LoadError> {
        let mut nets = [("q", &mut self.online), ("q_target", &mut self.target)];
        self.updates = load_training(&mut nets, &mut self.adam, tensors, progress)?;
        let get = |k: &str| progress.get(k).and_then(Value::as_u64).unwrap_or(0);
        self.owed = progress.get("owed").and_then(Value::as_f64).unwrap_or(0.0);
        let n = get("replay_len") as usize;
        if n > 0 {
            let replay = |name: &str| sidecar.get(name).ok_or(LoadError::NoReplay);
            let (_, states) = replay("replay.states")?;
            let (_, features) = replay("replay.features")?;
            let (_, meta) = replay("replay.meta")?;
            let s = self.encoding.state_dim();
            let a = self.encoding.action_dim();
            let mut row = 0;
            self.replay.slots.clear();
            self.replay.next = 0;
            for i in 0..n {
                let m = &meta[i * 4..i * 4 + 4];
                let k = m[0] as usize;
                let f = if a == 0 {
                    &[][..]
                } else {
                    &features[row * a..(row + k) * a]
                };
                row += k;
                self.replay.push(
                    &states[i * s..(i + 1) * s],
                    f,
                    m[0] as u16,
                    m[1] as u16,
                    m[2],
                    m[3] != 0.0,
                );
            }
            self.replay.next = get("replay_next") as usize % self.replay.capacity;
        }
        self.refresh();
        Ok(())
    }
}
