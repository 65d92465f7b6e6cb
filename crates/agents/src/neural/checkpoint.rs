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
use std::path::{Path, PathBuf};

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
    /// Reads a checkpoint; the error says what is wrong with the file.
    pub fn read(path: &Path) -> Result<Checkpoint, CheckpointError> {
        let bytes = std::fs::read(path).map_err(|source| CheckpointError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let not = |why: NotCheckpoint| CheckpointError::NotCheckpoint {
            path: path.to_path_buf(),
            why,
        };
        let (_, header) = safetensors::SafeTensors::read_metadata(&bytes)
            .map_err(|e| not(NotCheckpoint::Safetensors(e)))?;
        let meta = header
            .metadata()
            .as_ref()
            .and_then(|m| m.get(KEY))
            .ok_or_else(|| not(NotCheckpoint::NoMetadata))?;
        let meta: Map<String, Value> =
            serde_json::from_str(meta).map_err(|e| not(NotCheckpoint::Metadata(e)))?;
        let tensors = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| not(NotCheckpoint::Safetensors(e)))?;
        let mut out = BTreeMap::new();
        for (name, view) in tensors.tensors() {
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(not(NotCheckpoint::Dtype {
                    tensor: name,
                    dtype: view.dtype(),
                }));
            }
            let data: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            // A network with a NaN or an infinity plays nonsense without a word (every score
            // NaN, the first legal action always chosen): refused here, where both seating and
            // resuming read checkpoints.
            if let Some((at, &bad)) = data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(CheckpointError::NonFinite {
                    path: path.to_path_buf(),
                    count: data.iter().filter(|v| !v.is_finite()).count(),
                    tensor: name,
                    bad,
                    at,
                });
            }
            out.insert(name, (view.shape().to_vec(), data));
        }
        let checkpoint = Checkpoint { meta, tensors: out };
        if checkpoint.meta.get("format").and_then(Value::as_u64) != Some(FORMAT) {
            return Err(not(NotCheckpoint::Format(
                checkpoint.meta.get("format").cloned(),
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
    pub fn encoding(&self) -> Result<Encoding, CheckpointError> {
        Encoding::from_name(self.text("encoding"))
            .ok_or_else(|| CheckpointError::UnknownEncoding(self.text("encoding").to_string()))
    }

    /// Whether network `net` is in the file.
    pub fn has(&self, net: &str) -> bool {
        self.tensors.contains_key(&format!("{net}.0.weight"))
    }

    /// Network `net` for play.
    pub fn mlp(&self, net: &str) -> Result<Mlp, CheckpointError> {
        let mut layers = Vec::new();
        while let (Some((ws, w)), Some((_, b))) = (
            self.tensors.get(&format!("{net}.{}.weight", layers.len())),
            self.tensors.get(&format!("{net}.{}.bias", layers.len())),
        ) {
            if ws.len() != 2 || b.len() != ws[0] {
                return Err(CheckpointError::LayerShape {
                    net: net.to_string(),
                    layer: layers.len(),
                    shape: ws.clone(),
                });
            }
            layers.push(Layer::from_torch(w, b, ws[1], ws[0]));
        }
        if layers.is_empty() {
            return Err(CheckpointError::NoNetwork(net.to_string()));
        }
        if layers.windows(2).any(|p| p[0].outputs != p[1].inputs) {
            return Err(CheckpointError::Unchained(net.to_string()));
        }
        Ok(Mlp { layers })
    }
}

/// Why a checkpoint cannot be read, or cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a dhumbal-run checkpoint (a safetensors file): {why}", path.display())]
    NotCheckpoint { path: PathBuf, why: NotCheckpoint },
    #[error(
        "{}: tensor `{tensor}` holds {count} non-finite value{} ({bad} at index {at}): the network diverged or the file is damaged; retrain it (`dhumbal-run train ... --force`) or use an earlier checkpoint",
        path.display(),
        if *count == 1 { "" } else { "s" }
    )]
    NonFinite {
        path: PathBuf,
        tensor: String,
        count: usize,
        /// The first non-finite value, and where it is.
        bad: f32,
        at: usize,
    },
    #[error("unknown algorithm `{0}` in the checkpoint")]
    UnknownAlgorithm(String),
    #[error("unknown encoding `{0}` in the checkpoint")]
    UnknownEncoding(String),
    #[error("layer {net}.{layer} has a bad shape {shape:?}")]
    LayerShape {
        net: String,
        layer: usize,
        shape: Vec<usize>,
    },
    #[error("the checkpoint has no network `{0}`")]
    NoNetwork(String),
    #[error("the layers of network `{0}` do not chain")]
    Unchained(String),
    #[error(
        "network `{net}` is {sizes:?} wide, the `{}` encoding needs {} inputs and {} outputs",
        encoding.name(),
        encoding.input_dim(),
        encoding.outputs()
    )]
    Width {
        net: &'static str,
        sizes: Vec<usize>,
        encoding: Encoding,
    },
}

/// Why a file is not a checkpoint at all.
#[derive(Debug, thiserror::Error)]
pub enum NotCheckpoint {
    #[error("{0}")]
    Safetensors(safetensors::SafeTensorError),
    #[error("no `{KEY}` metadata")]
    NoMetadata,
    #[error("{0}")]
    Metadata(serde_json::Error),
    #[error("tensor {tensor} is {dtype:?}, not F32")]
    Dtype {
        tensor: String,
        dtype: safetensors::Dtype,
    },
    #[error("format {0:?}, this program reads {FORMAT}")]
    Format(Option<Value>),
}
