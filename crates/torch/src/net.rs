//! Networks on tch, their batches, and the optimizer (Adam written out, so that its moments
//! can be saved in a checkpoint and a resumed training continues exactly).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use tch::{Device, Kind, Tensor, nn};

use dhumbal_agents::neural::net::Layer;
use dhumbal_agents::neural::{Encoding, Mlp};

use crate::Tensors;

/// A multilayer perceptron on tch, named `<name>.<layer>.weight|bias` like the checkpoint.
pub struct Net {
    pub layers: Vec<nn::Linear>,
    pub sizes: Vec<usize>,
}

impl Net {
    pub fn new(vs: &nn::Path<'_>, name: &str, sizes: &[usize]) -> Net {
        let p = vs / name;
        let layers = sizes
            .windows(2)
            .enumerate()
            .map(|(i, w)| nn::linear(&p / i, w[0] as i64, w[1] as i64, Default::default()))
            .collect();
        Net {
            layers,
            sizes: sizes.to_vec(),
        }
    }

    pub fn forward(&self, x: &Tensor) -> Tensor {
        let mut h = x.shallow_clone();
        for (i, l) in self.layers.iter().enumerate() {
            h = h.apply(l);
            if i + 1 < self.layers.len() {
                h = h.relu();
            }
        }
        h
    }

    /// The weights for plain-Rust play.
    pub fn export(&self) -> Mlp {
        let layers = self
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let w = to_vec(&l.ws);
                let b = to_vec(l.bs.as_ref().expect("layers have biases"));
                Layer::from_torch(&w, &b, self.sizes[i], self.sizes[i + 1])
            })
            .collect();
        Mlp { layers }
    }

    /// Every parameter as (checkpoint name, shape, values).
    pub fn tensors(&self, name: &str) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let mut out = Vec::new();
        for (i, l) in self.layers.iter().enumerate() {
            let bias = l.bs.as_ref().expect("layers have biases");
            out.push((format!("{name}.{i}.weight"), shape(&l.ws), to_vec(&l.ws)));
            out.push((format!("{name}.{i}.bias"), shape(bias), to_vec(bias)));
        }
        out
    }

    /// Loads values saved by [`Net::tensors`] under `name`.
    pub fn load(
        &mut self,
        name: &str,
        tensors: &BTreeMap<String, (Vec<usize>, Vec<f32>)>,
    ) -> Result<(), LoadError> {
        tch::no_grad(|| {
            for (i, l) in self.layers.iter_mut().enumerate() {
                for (suffix, t) in [
                    ("weight", &mut l.ws),
                    ("bias", l.bs.as_mut().expect("bias")),
                ] {
                    let key = format!("{name}.{i}.{suffix}");
                    let Some((s, v)) = tensors.get(&key) else {
                        return Err(LoadError::Missing(key));
                    };
                    if *s != shape(t) {
                        return Err(LoadError::Shape {
                            key,
                            found: s.clone(),
                            need: shape(t),
                        });
                    }
                    let src = Tensor::from_slice(v)
                        .view(t.size().as_slice())
                        .to_device(t.device());
                    t.copy_(&src);
                }
            }
            Ok(())
        })
    }

    /// Copies another network of the same shape (a DQN target).
    pub fn copy_from(&mut self, other: &Net) {
        tch::no_grad(|| {
            for (a, b) in self.layers.iter_mut().zip(&other.layers) {
                a.ws.copy_(&b.ws);
                a.bs.as_mut()
                    .expect("bias")
                    .copy_(b.bs.as_ref().expect("bias"));
            }
        });
    }
}

pub fn to_vec(t: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.to_device(Device::Cpu).to_kind(Kind::Float).flatten(0, -1))
        .expect("a float tensor")
}

pub fn shape(t: &Tensor) -> Vec<usize> {
    t.size().iter().map(|&d| d as usize).collect()
}

/// One recorded decision, borrowed from a trajectory or the replay buffer.
#[derive(Clone, Copy)]
pub struct StepRef<'a> {
    pub state: &'a [f32],
    /// `k` rows of the encoding's action features (`cards`), or empty (`paper`).
    pub features: &'a [f32],
    pub k: usize,
}

impl<'a> StepRef<'a> {
    /// The steps of a trajectory in order, each with the index of its first action row (its
    /// rows are `row..row + k` of anything kept per row, as imitation's targets are).
    pub fn of_trajectory(
        encoding: Encoding,
        t: &'a dhumbal_learn::episode::Trajectory,
    ) -> impl Iterator<Item = (usize, StepRef<'a>)> + 'a {
        let (s, a) = (encoding.state_dim(), encoding.action_dim());
        let mut row = 0;
        (0..t.steps()).map(move |i| {
            let k = usize::from(t.n_actions[i]);
            let step = StepRef {
                state: &t.states[i * s..(i + 1) * s],
                features: if a == 0 {
                    &[]
                } else {
                    &t.features[row * a..(row + k) * a]
                },
                k,
            };
            let first = row;
            row += k;
            (first, step)
        })
    }
}

/// Decisions as tensors: states `[B, S]`, action rows `[B, K, A]` (`cards`), and which of the
/// `K` positions are legal actions.
pub struct Batch {
    pub states: Tensor,
    pub features: Option<Tensor>,
    pub legal: Tensor,
}

pub fn batch(encoding: Encoding, steps: &[StepRef<'_>], device: Device) -> Batch {
    let b = steps.len();
    let s = encoding.state_dim();
    let mut states = Vec::with_capacity(b * s);
    for st in steps {
        states.extend_from_slice(st.state);
    }
    let k = match encoding {
        Encoding::Paper => encoding.outputs(),
        Encoding::Cards => steps.iter().map(|st| st.k).max().unwrap_or(1).max(1),
    };
    let mut legal = vec![false; b * k];
    for (i, st) in steps.iter().enumerate() {
        for j in 0..st.k.min(k) {
            legal[i * k + j] = true;
        }
    }
    let features = (encoding == Encoding::Cards).then(|| {
        let a = encoding.action_dim();
        let mut f = vec![0f32; b * k * a];
        for (i, st) in steps.iter().enumerate() {
            f[i * k * a..i * k * a + st.features.len()].copy_from_slice(st.features);
        }
        Tensor::from_slice(&f)
            .view([b as i64, k as i64, a as i64])
            .to_device(device)
    });
    Batch {
        states: Tensor::from_slice(&states)
            .view([b as i64, s as i64])
            .to_device(device),
        features,
        legal: Tensor::from_slice(&legal)
            .view([b as i64, k as i64])
            .to_device(device),
    }
}

/// Scores `[B, K]` of every position, illegal ones at -1e9 (so that a softmax gives them 0
/// and a max never picks them).
pub fn scores(net: &Net, batch: &Batch) -> Tensor {
    let raw = match &batch.features {
        None => net.forward(&batch.states),
        Some(f) => {
            let (b, k, _) = f.size3().expect("[B, K, A]");
            let s = batch.states.size()[1];
            let x = Tensor::cat(
                &[
                    batch.states.unsqueeze(1).expand([b, k, s], false),
                    f.shallow_clone(),
                ],
                2,
            );
            net.forward(&x).squeeze_dim(-1)
        }
    };
    raw.masked_fill(&batch.legal.logical_not(), -1e9)
}

/// Adam, with its moments as plain tensors (saved in checkpoints).
pub struct Adam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub t: u64,
    /// (parameter, first moment, second moment), in a fixed order.
    pub slots: Vec<(String, Tensor, Tensor, Tensor)>,
}

impl Adam {
    pub fn new(lr: f64, params: Vec<(String, Tensor)>) -> Adam {
        let slots = params
            .into_iter()
            .map(|(name, p)| {
                let m = p.zeros_like().detach();
                let v = p.zeros_like().detach();
                (name, p, m, v)
            })
            .collect();
        Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            t: 0,
            slots,
        }
    }

    pub fn zero_grad(&mut self) {
        for (_, p, _, _) in &mut self.slots {
            p.zero_grad();
        }
    }

    /// Clips gradients to a global norm (0: no clipping), then steps.
    pub fn step(&mut self, max_norm: f64) {
        tch::no_grad(|| {
            if max_norm > 0.0 {
                let total: f64 = self
                    .slots
                    .iter()
                    .map(|(_, p, _, _)| {
                        let g = p.grad();
                        if g.defined() {
                            g.pow_tensor_scalar(2).sum(Kind::Double).double_value(&[])
                        } else {
                            0.0
                        }
                    })
                    .sum::<f64>()
                    .sqrt();
                if total > max_norm {
                    let scale = max_norm / (total + 1e-6);
                    for (_, p, _, _) in &self.slots {
                        let mut g = p.grad();
                        if g.defined() {
                            let _ = g.g_mul_scalar_(scale);
                        }
                    }
                }
            }
            self.t += 1;
            let c1 = 1.0 - self.beta1.powi(self.t as i32);
            let c2 = 1.0 - self.beta2.powi(self.t as i32);
            for (_, p, m, v) in &mut self.slots {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let _ = m.g_mul_scalar_(self.beta1);
                let _ = m.g_add_(&(&g * (1.0 - self.beta1)));
                let _ = v.g_mul_scalar_(self.beta2);
                let _ = v.g_add_(&(&g * &g * (1.0 - self.beta2)));
                let update = (&*m / c1) / ((&*v / c2).sqrt() + self.eps) * self.lr;
                let _ = p.g_sub_(&update);
            }
        });
    }

    pub fn tensors(&self) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let mut out = Vec::new();
        for (name, _, m, v) in &self.slots {
            out.push((format!("adam.{name}.m"), shape(m), to_vec(m)));
            out.push((format!("adam.{name}.v"), shape(v), to_vec(v)));
        }
        out
    }

    pub fn load(
        &mut self,
        tensors: &BTreeMap<String, (Vec<usize>, Vec<f32>)>,
        t: u64,
    ) -> Result<(), LoadError> {
        tch::no_grad(|| {
            for (name, _, m, v) in &mut self.slots {
                for (suffix, dst) in [("m", m), ("v", v)] {
                    let key = format!("adam.{name}.{suffix}");
                    let Some((_, vals)) = tensors.get(&key) else {
                        return Err(LoadError::Missing(key));
                    };
                    let src = Tensor::from_slice(vals)
                        .view(dst.size().as_slice())
                        .to_device(dst.device());
                    dst.copy_(&src);
                }
            }
            Ok(())
        })?;
        self.t = t;
        Ok(())
    }
}

/// Networks (each under its checkpoint name) and their optimizer into a checkpoint: every
/// parameter and moment, and the counters `updates` and `adam_t`.
pub fn save_training(
    nets: &[(&str, &Net)],
    adam: &Adam,
    updates: u64,
    tensors: &mut Tensors,
    progress: &mut Map<String, Value>,
) {
    let params = nets.iter().flat_map(|(name, net)| net.tensors(name));
    for (name, shape, v) in params.chain(adam.tensors()) {
        tensors.insert(name, (shape, v));
    }
    progress.insert("updates".into(), json!(updates));
    progress.insert("adam_t".into(), json!(adam.t));
}

/// What [`save_training`] saved, back into the networks and the optimizer; returns `updates`.
pub fn load_training(
    nets: &mut [(&str, &mut Net)],
    adam: &mut Adam,
    tensors: &Tensors,
    progress: &Map<String, Value>,
) -> Result<u64, LoadError> {
    for (name, net) in nets {
        net.load(name, tensors)?;
    }
    let get = |k: &str| progress.get(k).and_then(Value::as_u64).unwrap_or(0);
    adam.load(tensors, get("adam_t"))?;
    Ok(get("updates"))
}

/// Why a checkpoint cannot be resumed from: what its networks' state lacks.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("the checkpoint lacks {0}")]
    Missing(String),
    #[error("{key} is {found:?} in the checkpoint, the network needs {need:?}")]
    Shape {
        key: String,
        found: Vec<usize>,
        need: Vec<usize>,
    },
    #[error(
        "the checkpoint's replay buffer (the .train file beside it) is missing: use --force to train afresh"
    )]
    NoReplay,
}

/// The named parameters of several networks, for one optimizer.
pub fn named(nets: &[(&str, &Net)]) -> Vec<(String, Tensor)> {
    let mut out = Vec::new();
    for (name, net) in nets {
        for (i, l) in net.layers.iter().enumerate() {
            out.push((format!("{name}.{i}.weight"), l.ws.shallow_clone()));
            out.push((
                format!("{name}.{i}.bias"),
                l.bs.as_ref().expect("bias").shallow_clone(),
            ));
        }
    }
    out
}
