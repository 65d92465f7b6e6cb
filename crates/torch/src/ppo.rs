//! PPO: a policy network scoring the legal actions (softmax over them) and a value network on
//! the state; GAE over each round (the reward comes at its end), advantages normalised per
//! iteration, several epochs of shuffled minibatches, the clipped probability ratio, an entropy
//! bonus and a value loss.

use std::sync::Arc;

use serde_json::{Map, Value};
use tch::{Device, Kind, Tensor, nn};

use dhumbal_agents::neural::{Encoding, Mlp, Policy};
use dhumbal_game::rng::{Purpose, RandomSource, chacha_stream};

use crate::net::{
    Adam, LoadError, Net, StepRef, batch, load_training, named, save_training, scores,
};
use crate::{Algo, Tensors, sizes};
use dhumbal_learn::episode::Played;
use dhumbal_learn::{Hyper, TrainPlan};

pub struct Ppo {
    encoding: Encoding,
    hyper: Hyper,
    seed: u64,
    device: Device,
    _vs: nn::VarStore,
    policy: Net,
    value: Net,
    adam: Adam,
    updates: u64,
    acting: (Arc<Policy>, Arc<Mlp>),
    algorithm: dhumbal_agents::neural::Algorithm,
}

impl Ppo {
    pub fn new(plan: &TrainPlan, device: Device) -> Ppo {
        let enc = plan.encoding;
        // Initialised on the CPU, then moved: the same starting networks on every device.
        let mut vs = nn::VarStore::new(Device::Cpu);
        let policy = Net::new(
            &vs.root(),
            "policy",
            &sizes(enc.input_dim(), &plan.hidden, enc.outputs()),
        );
        let value = Net::new(
            &vs.root(),
            "value",
            &sizes(enc.state_dim(), &plan.hidden, 1),
        );
        vs.set_device(device);
        let adam = Adam::new(
            plan.hyper.lr,
            named(&[("policy", &policy), ("value", &value)]),
        );
        let acting = (
            Arc::new(Policy {
                algorithm: plan.algorithm,
                encoding: enc,
                net: policy.export(),
            }),
            Arc::new(value.export()),
        );
        Ppo {
            encoding: enc,
            hyper: plan.hyper.clone(),
            seed: plan.seed,
            device,
            _vs: vs,
            policy,
            value,
            adam,
            updates: 0,
            acting,
            algorithm: plan.algorithm,
        }
    }

    fn refresh(&mut self) {
        self.acting = (
            Arc::new(Policy {
                algorithm: self.algorithm,
                encoding: self.encoding,
                net: self.policy.export(),
            }),
            Arc::new(self.value.export()),
        );
    }
}

impl Algo for Ppo {
    fn acting(&self) -> (Arc<Policy>, Option<Arc<Mlp>>) {
        (self.acting.0.clone(), Some(self.acting.1.clone()))
    }

    fn exploration(&self, _episodes: u64) -> f64 {
        f64::NAN
    }

    fn update(&mut self, played: &[Played], _episodes_after: u64, update_seed: u64) -> (f64, f64) {
        let h = &self.hyper;
        // Every step of the iteration, with its advantage and return.
        let mut steps: Vec<StepRef<'_>> = Vec::new();
        let mut actions = Vec::new();
        let mut old_logp = Vec::new();
        let mut advantages = Vec::new();
        let mut returns = Vec::new();
        for p in played {
            let t = &p.trajectory;
            let n = t.steps();
            for (i, (_, step)) in StepRef::of_trajectory(self.encoding, t).enumerate() {
                steps.push(step);
                actions.push(i64::from(t.actions[i]));
                old_logp.push(t.logp[i]);
            }
            let mut adv = vec![0f32; n];
            let mut next_adv = 0f32;
            for i in (0..n).rev() {
                let last = i + 1 == n;
                let r = if last { t.reward } else { 0.0 };
                let next_v = if last { 0.0 } else { t.values[i + 1] };
                let delta = r + h.gamma as f32 * next_v - t.values[i];
                next_adv =
                    delta + (h.gamma * h.gae_lambda) as f32 * if last { 0.0 } else { next_adv };
                adv[i] = next_adv;
            }
            returns.extend(adv.iter().zip(&t.values).take(n).map(|(a, v)| a + v));
            advantages.extend(adv);
        }
        let total = steps.len();
        if total == 0 {
            return (f64::NAN, f64::NAN);
        }
        if h.normalize_advantages == 1 && total > 1 {
            let mean = advantages.iter().sum::<f32>() / total as f32;
            let var =
                advantages.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / (total - 1) as f32;
            let sd = var.sqrt() + 1e-8;
            for x in &mut advantages {
                *x = (*x - mean) / sd;
            }
        }
        let mut rng = chacha_stream(self.seed, Purpose::Learn, update_seed);
        let mut order: Vec<usize> = (0..total).collect();
        let mb = (h.minibatch as usize).max(1);
        let mut losses = Vec::new();
        let mut entropies = Vec::new();
        for _ in 0..h.epochs {
            rng.shuffle_indices(&mut order);
            for chunk in order.chunks(mb) {
                let sub: Vec<StepRef<'_>> = chunk.iter().map(|&i| steps[i]).collect();
                let b = batch(self.encoding, &sub, self.device);
                let pick = |v: &[f32]| {
                    Tensor::from_slice(&chunk.iter().map(|&i| v[i]).collect::<Vec<f32>>())
                        .to_device(self.device)
                };
                let act =
                    Tensor::from_slice(&chunk.iter().map(|&i| actions[i]).collect::<Vec<i64>>())
                        .to_device(self.device)
                        .unsqueeze(1);
                let old = pick(&old_logp);
                let adv = pick(&advantages);
                let ret = pick(&returns);
                let logits = scores(&self.policy, &b);
                let logp_all = logits.log_softmax(1, Kind::Float);
                let logp = logp_all.gather(1, &act, false).squeeze_dim(1);
                let ratio = (&logp - &old).exp();
                let clipped = ratio.clamp(1.0 - h.clip, 1.0 + h.clip);
                let surrogate = (&ratio * &adv).minimum(&(&clipped * &adv));
                let probs = logp_all.exp();
                let entropy = -(&probs * &logp_all).sum_dim_intlist(1, false, Kind::Float);
                let v = self.value.forward(&b.states).squeeze_dim(1);
                let value_loss = (&v - &ret).pow_tensor_scalar(2).mean(Kind::Float);
                let entropy_mean = entropy.mean(Kind::Float);
                let loss = -surrogate.mean(Kind::Float) + value_loss * h.value_coef
                    - &entropy_mean * h.entropy_coef;
                self.adam.zero_grad();
                loss.backward();
                self.adam.step(h.max_grad_norm);
                self.updates += 1;
                losses.push(loss.double_value(&[]));
                entropies.push(entropy_mean.double_value(&[]));
            }
        }
        self.refresh();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        (mean(&losses), mean(&entropies))
    }

    fn save(
        &self,
        tensors: &mut Tensors,
        _sidecar: &mut Tensors,
        progress: &mut Map<String, Value>,
    ) {
        let nets = [("policy", &self.policy), ("value", &self.value)];
        save_training(&nets, &self.adam, self.updates, tensors, progress);
    }

    fn load(
        &mut self,
        tensors: &Tensors,
        _sidecar: &Tensors,
        progress: &Map<String, Value>,
    ) -> Result<(), LoadError> {
        let mut nets = [("policy", &mut self.policy), ("value", &mut self.value)];
        self.updates = load_training(&mut nets, &mut self.adam, tensors, progress)?;
        self.refresh();
        Ok(())
    }

    fn warm(&mut self, tensors: &Tensors) -> Result<(), LoadError> {
        self.policy.load("policy", tensors)?;
        self.value.load("value", tensors)?;
        self.refresh();
        Ok(())
    }
}

/// Fisher-Yates over indices with a [`RandomSource`] (PPO's and imitation's passes).
pub(crate) trait ShuffleIndices {
    fn shuffle_indices(&mut self, v: &mut [usize]);
}

impl<R: RandomSource> ShuffleIndices for R {
    fn shuffle_indices(&mut self, v: &mut [usize]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            v.swap(i, j);
        }
    }
}
