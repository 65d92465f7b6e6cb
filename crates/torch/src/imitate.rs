//! Imitation: a policy network (scores of the legal actions, a softmax over them, as PPO's)
//! trained to choose as the plan's teacher does. The teacher plays the learner's seat in every
//! episode (`dhumbal_learn::episode`'s `Pupil`), and each of its real choices is a step whose
//! target is the teacher's probability of every legal action: a search's visit counts,
//! normalised, or all on the move another agent played. The loss is the cross-entropy of the
//! network's softmax against those targets, in `epochs` passes of shuffled minibatches over
//! each iteration's steps.

use std::sync::Arc;

use serde_json::{Map, Value};
use tch::{Device, Kind, Tensor, nn};

use dhumbal_agents::neural::{Encoding, Mlp, Policy};
use dhumbal_game::rng::{Purpose, chacha_stream};

use crate::net::{
    Adam, LoadError, Net, StepRef, batch, load_training, named, save_training, scores,
};
use crate::ppo::ShuffleIndices;
use crate::{Algo, Tensors, sizes};
use dhumbal_learn::episode::Played;
use dhumbal_learn::{Hyper, TrainPlan};

pub struct Imitate {
    encoding: Encoding,
    hyper: Hyper,
    seed: u64,
    device: Device,
    _vs: nn::VarStore,
    policy: Net,
    adam: Adam,
    updates: u64,
    acting: Arc<Policy>,
}

impl Imitate {
    pub fn new(plan: &TrainPlan, device: Device) -> Imitate {
        let enc = plan.encoding;
        // Initialised on the CPU, then moved: the same starting network on every device.
        let mut vs = nn::VarStore::new(Device::Cpu);
        let policy = Net::new(
            &vs.root(),
            "policy",
            &sizes(enc.input_dim(), &plan.hidden, enc.outputs()),
        );
        vs.set_device(device);
        let adam = Adam::new(plan.hyper.lr, named(&[("policy", &policy)]));
        let acting = Arc::new(Policy {
            algorithm: plan.algorithm,
            encoding: enc,
            net: policy.export(),
        });
        Imitate {
            encoding: enc,
            hyper: plan.hyper.clone(),
            seed: plan.seed,
            device,
            _vs: vs,
            policy,
            adam,
            updates: 0,
            acting,
        }
    }

    fn refresh(&mut self) {
        self.acting = Arc::new(Policy {
            algorithm: self.acting.algorithm,
            encoding: self.encoding,
            net: self.policy.export(),
        });
    }
}

impl Algo for Imitate {
    fn acting(&self) -> (Arc<Policy>, Option<Arc<Mlp>>) {
        (self.acting.clone(), None)
    }

    fn exploration(&self, _episodes: u64) -> f64 {
        f64::NAN
    }

    fn teacher(&self) -> bool {
        true
    }

    fn update(&mut self, played: &[Played], _episodes_after: u64, update_seed: u64) -> (f64, f64) {
        let h = &self.hyper;
        // Every step of the iteration, with its targets (one per action row).
        let mut steps: Vec<StepRef<'_>> = Vec::new();
        let mut targets: Vec<&[f32]> = Vec::new();
        for p in played {
            let t = &p.trajectory;
            for (row, step) in StepRef::of_trajectory(self.encoding, t) {
                targets.push(&t.targets[row..row + step.k]);
                steps.push(step);
            }
        }
        let total = steps.len();
        if total == 0 {
            return (f64::NAN, f64::NAN);
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
                let k = b.legal.size()[1] as usize;
                let mut dense = vec![0f32; chunk.len() * k];
                for (r, &i) in chunk.iter().enumerate() {
                    dense[r * k..r * k + targets[i].len()].copy_from_slice(targets[i]);
                }
                let target = Tensor::from_slice(&dense)
                    .view([chunk.len() as i64, k as i64])
                    .to_device(self.device);
                let logp_all = scores(&self.policy, &b).log_softmax(1, Kind::Float);
                // Illegal positions have target 0 and log-probability about -1e9: masked out
                // so that 0 x -1e9 adds nothing.
                let logp_legal = logp_all.masked_fill(&b.legal.logical_not(), 0.0);
                let loss = -(&target * &logp_legal)
                    .sum_dim_intlist(1, false, Kind::Float)
                    .mean(Kind::Float);
                let probs = logp_all.exp();
                let entropy = -(&probs * &logp_legal)
                    .sum_dim_intlist(1, false, Kind::Float)
                    .mean(Kind::Float);
                self.adam.zero_grad();
                loss.backward();
                self.adam.step(h.max_grad_norm);
                self.updates += 1;
                losses.push(loss.double_value(&[]));
                entropies.push(entropy.double_value(&[]));
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
        save_training(
            &[("policy", &self.policy)],
            &self.adam,
            self.updates,
            tensors,
            progress,
        );
    }

    fn load(
        &mut self,
        tensors: &Tensors,
        _sidecar: &Tensors,
        progress: &Map<String, Value>,
    ) -> Result<(), LoadError> {
        let mut nets = [("policy", &mut self.policy)];
        self.updates = load_training(&mut nets, &mut self.adam, tensors, progress)?;
        self.refresh();
        Ok(())
    }

    fn warm(&mut self, tensors: &Tensors) -> Result<(), LoadError> {
        self.policy.load("policy", tensors)?;
        self.refresh();
        Ok(())
    }
}
