//! Checkpoints: one safetensors file per trained agent, holding its networks, the optimizer's
//! state and the training's progress (so that an interrupted training resumes), and, in the
//! file's metadata under the key `dhumbal-run`, a JSON object saying what it is: algorithm,
//! encoding, hidden widths, the rules it was trained under, the training scenario's hash and
//! program version. Written by `dhumbal-learn`; read here, without libtorch, so that a trained
//! agent plays in any build.
//!
//! Tensor names: `<net>.<layer>.weight` (`[outputs, inputs]`, torch's layout) and
//! `<net>.<layer>.bias` for the networks (`q`, `q_target`, `policy`, `value`), `adam.<name>.m`
//! and `adam.<name>.v` for the optimizer's moments of parameter `<name>`. All f32.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value};

use dhumbal_game::Rules;

use super::encoding::Encoding;
use super::net::{Layer, Mlp};

/// The metadata key.
pub const KEY: &str = "dhumbal-run";
/// The checkpoint format's version.
pub const FORMAT: u64 = 1;

/// A checkpoint in memory.
#[derive(Clone, Debug, Default)]
pub struct Checkpoint {
    /// The JSON object under [`KEY`].
    pub meta: Map<String, Value>,
    /// Every tensor: shape and values.
    pub tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
}

/// The rules a network was trained under, as the checkpoint records them: the variant's every
/// field but the number of players (a network may be seated at another table size; its
/// encoding covers up to 8 seats). Two rule sets with equal fingerprints play alike.
pub fn rules_fingerprint(rules: &Rules) -> String {
    let mut v = *rules.variant();
    v.players = 0;
    format!(
        "{:016x}",
        dhumbal_game::hash::fnv1a(format!("{v:?}").as_bytes())
    )
}

/// How messages name rules: the preset they equal (players aside), or "custom rules".
pub fn rules_name(rules: &Rules) -> String {
    let v = *rules.variant();
    for preset in dhumbal_game::rules::Preset::ALL {
        let mut p = preset.variant();
        p.players = v.players;
        if p == v {
            return format!("the `{}` preset", preset.name());
        }
    }
    "custom rules".to_string()
}

impl Checkpoint {
    /// Reads a checkpoint; the message says what is wrong with the file.
    pub fn read(path: &Path) -> Result<Checkpoint, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let not = |e: &dyn std::fmt::Display| {
            format!(
                "{} is not a dhumbal-run checkpoint (a safetensors file): {e}",
                path.display()
            )
        };
        let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| not(&e))?;
        let meta = header
            .metadata()
            .as_ref()
            .and_then(|m| m.get(KEY))
            .ok_or_else(|| not(&format!("no `{KEY}` metadata")))?;
        let meta: Map<String, Value> = serde_json::from_str(meta).map_err(|e| not(&e))?;
        let tensors = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| not(&e))?;
        let mut out = BTreeMap::new();
        for (name, view) in tensors.tensors() {
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(not(&format!(
                    "tensor {name} is {:?}, not F32",
                    view.dtype()
                )));
            }
            let data: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            // A network with a NaN or an infinity plays nonsense without a word (every score
            // NaN, the first legal action always chosen): refused here, where both seating and
            // resuming read checkpoints.
            if let Some((at, bad)) = data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                let count = data.iter().filter(|v| !v.is_finite()).count();
                return Err(format!(
                    "{}: tensor `{name}` holds {count} non-finite value{} ({bad} at index {at}): \
                     the network diverged or the file is damaged; retrain it (`dhumbal-run \
                     train ... --force`) or use an earlier checkpoint",
                    path.display(),
                    if count == 1 { "" } else { "s" }
                ));
            }
            out.insert(name, (view.shape().to_vec(), data));
        }
        let checkpoint = Checkpoint { meta, tensors: out };
        if checkpoint.meta.get("format").and_then(Value::as_u64) != Some(FORMAT) {
            return Err(not(&format!(
                "format {:?}, this program reads {FORMAT}",
                checkpoint.meta.get("format")
            )));
        }
        Ok(checkpoint)
    }

    /// Writes the checkpoint whole: into a temporary file beside `path`, synced, then renamed
    /// over it, so that a kill leaves the previous checkpoint or the new one, never half.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let bytes: Vec<(String, Vec<u8>, Vec<usize>)> = self
            .tensors
            .iter()
            .map(|(name, (shape, data))| {
                (
                    name.clone(),
                    data.iter().flat_map(|v| v.to_le_bytes()).collect(),
                    shape.clone(),
                )
            })
            .collect();
        let views = bytes
            .iter()
            .map(|(name, data, shape)| {
                let view = safetensors::tensor::TensorView::new(
                    safetensors::Dtype::F32,
                    shape.clone(),
                    data,
                )
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
                Ok((name.clone(), view))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        let mut info = HashMap::new();
        info.insert(
            KEY.to_string(),
            Value::Object(self.meta.clone()).to_string(),
        );
        let out = safetensors::tensor::serialize(views, &Some(info))
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&out)?;
            f.sync_data()?;
        }
        std::fs::rename(&tmp, path)
    }

    pub fn text(&self, key: &str) -> &str {
        self.meta.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// The encoding its networks read.
    pub fn encoding(&self) -> Result<Encoding, String> {
        Encoding::from_name(self.text("encoding")).ok_or_else(|| {
            format!(
                "unknown encoding `{}` in the checkpoint",
                self.text("encoding")
            )
        })
    }

    /// Whether network `net` is in the file.
    pub fn has(&self, net: &str) -> bool {
        self.tensors.contains_key(&format!("{net}.0.weight"))
    }

    /// Network `net` for play.
    pub fn mlp(&self, net: &str) -> Result<Mlp, String> {
        let mut layers = Vec::new();
        while let (Some((ws, w)), Some((_, b))) = (
            self.tensors.get(&format!("{net}.{}.weight", layers.len())),
            self.tensors.get(&format!("{net}.{}.bias", layers.len())),
        ) {
            if ws.len() != 2 || b.len() != ws[0] {
                return Err(format!(
                    "layer {net}.{} has a bad shape {ws:?}",
                    layers.len()
                ));
            }
            layers.push(Layer::from_torch(w, b, ws[1], ws[0]));
        }
        if layers.is_empty() {
            return Err(format!("the checkpoint has no network `{net}`"));
        }
        if layers.windows(2).any(|p| p[0].outputs != p[1].inputs) {
            return Err(format!("the layers of network `{net}` do not chain"));
        }
        Ok(Mlp { layers })
    }
}
