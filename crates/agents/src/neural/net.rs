//! Networks for play: a multilayer perceptron (ReLU between layers, linear output) evaluated
//! in plain Rust over weights exported from training. It is `Sync` (one copy shared by every
//! thread of a run), allocates nothing per decision (the caller's [`Scratch`]), and skips zero
//! inputs, which most of an encoding's card bits are. Training (`dhumbal-learn`, on tch)
//! uses the same layout, so a checkpoint is the same network in both.

use super::encoding::{Encoded, Encoding};

/// One fully connected layer, its weights stored input-major (`w[i * out + o]`: the torch
/// weight transposed) so that a sparse input adds whole contiguous rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    pub inputs: usize,
    pub outputs: usize,
    pub w: Vec<f32>,
    pub b: Vec<f32>,
}

impl Layer {
    /// From torch's layout: `weight` is `[outputs][inputs]` row-major, `bias` `[outputs]`.
    pub fn from_torch(weight: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> Layer {
        assert_eq!(weight.len(), inputs * outputs);
        assert_eq!(bias.len(), outputs);
        let mut w = vec![0.0; inputs * outputs];
        for o in 0..outputs {
            for i in 0..inputs {
                w[i * outputs + o] = weight[o * inputs + i];
            }
        }
        Layer {
            inputs,
            outputs,
            w,
            b: bias.to_vec(),
        }
    }

    /// The weights in torch's layout, `[outputs][inputs]` row-major (the inverse of
    /// [`Layer::from_torch`]).
    pub fn torch_weight(&self) -> Vec<f32> {
        let mut w = vec![0.0; self.inputs * self.outputs];
        for i in 0..self.inputs {
            for o in 0..self.outputs {
                w[o * self.inputs + i] = self.w[i * self.outputs + o];
            }
        }
        w
    }

    /// `y += W x` over the nonzero entries of `x` (y already holds the bias or a partial sum).
    #[inline]
    fn accumulate(&self, x: &[f32], offset: usize, y: &mut [f32]) {
        for (i, &v) in x.iter().enumerate() {
            if v != 0.0 {
                let row = &self.w[(offset + i) * self.outputs..(offset + i + 1) * self.outputs];
                for (y, w) in y.iter_mut().zip(row) {
                    *y += v * w;
                }
            }
        }
    }
}

/// A multilayer perceptron.
#[derive(Clone, Debug, PartialEq)]
pub struct Mlp {
    pub layers: Vec<Layer>,
}

/// Buffers for a forward pass, kept by the caller between decisions.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    first: Vec<f32>,
    out: Vec<f32>,
}

impl Mlp {
    pub fn inputs(&self) -> usize {
        self.layers[0].inputs
    }

    pub fn outputs(&self) -> usize {
        self.layers.last().map_or(0, |l| l.outputs)
    }

    /// Widths, input first: `[117, 128, 64, 128]`.
    pub fn sizes(&self) -> Vec<usize> {
        let mut s = vec![self.inputs()];
        s.extend(self.layers.iter().map(|l| l.outputs));
        s
    }

    /// The rest of the network after the first layer's pre-activation `h` (in `s.a`).
    fn finish<'s>(&self, s: &'s mut Scratch) -> &'s [f32] {
        let (mut cur, mut next) = (std::mem::take(&mut s.a), std::mem::take(&mut s.b));
        for layer in &self.layers[1..] {
            for v in cur.iter_mut() {
                *v = v.max(0.0);
            }
            next.clear();
            next.extend_from_slice(&layer.b);
            layer.accumulate(&cur, 0, &mut next);
            std::mem::swap(&mut cur, &mut next);
        }
        s.out.clear();
        s.out.extend_from_slice(&cur);
        s.a = cur;
        s.b = next;
        &s.out
    }

    /// The outputs for `x`.
    pub fn forward<'s>(&self, x: &[f32], s: &'s mut Scratch) -> &'s [f32] {
        let l0 = &self.layers[0];
        s.a.clear();
        s.a.extend_from_slice(&l0.b);
        l0.accumulate(x, 0, &mut s.a);
        self.finish(s)
    }

    /// One score per legal action of `enc`, into `scores`: the network's output at the
    /// action's position (`paper`), or its single output on (state, action features)
    /// (`cards`; the first layer's state part is computed once for all actions).
    pub fn score(&self, enc: &Encoded, s: &mut Scratch, scores: &mut Vec<f32>) {
        scores.clear();
        let n = enc.actions.len();
        match enc.encoding {
            Some(Encoding::Cards) => {
                let l0 = &self.layers[0];
                let state = enc.state.len();
                s.first.clear();
                s.first.extend_from_slice(&l0.b);
                let mut first = std::mem::take(&mut s.first);
                l0.accumulate(&enc.state, 0, &mut first);
                for i in 0..n {
                    s.a.clear();
                    s.a.extend_from_slice(&first);
                    l0.accumulate(enc.action_features(i), state, &mut s.a);
                    scores.push(self.finish(s)[0]);
                }
                s.first = first;
            }
            _ => {
                let out = self.forward(&enc.state, s);
                scores.extend_from_slice(&out[..n]);
            }
        }
    }
}

/// The index of the largest score (the first of equals).
pub fn argmax(scores: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in scores.iter().enumerate() {
        if v > scores[best] {
            best = i;
        }
    }
    best
}

/// Softmax probabilities of `scores`, in place.
pub fn softmax(scores: &mut [f32]) {
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in scores.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in scores.iter_mut() {
        *v /= sum;
    }
}

/// An index drawn from probabilities `p` with a uniform `u` in [0, 1).
pub fn sample(p: &[f32], u: f64) -> usize {
    let mut acc = 0.0f64;
    for (i, &v) in p.iter().enumerate() {
        acc += f64::from(v);
        if u < acc {
            return i;
        }
    }
    p.len() - 1
}
