//! Result files read back typed: a JSON file that a serde type of this workspace wrote, with a
//! `format` number, read through the same type. One reader for all of them, so that every
//! file refuses another format the same way, naming the file and what to do.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

/// What kind of file a reader expects.
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    /// As messages name it ("tuning manifest").
    pub what: &'static str,
    /// The format this build writes and reads.
    pub format: u32,
    /// The format of a file without a `format` key (written before the key existed).
    pub unnumbered: u32,
    /// What to do with a file of another format.
    pub remedy: &'static str,
}

impl Kind {
    /// A kind whose files written before the `format` key existed have format 1 (as every
    /// result file's have).
    pub const fn new(what: &'static str, format: u32, remedy: &'static str) -> Kind {
        Kind {
            what,
            format,
            unnumbered: 1,
            remedy,
        }
    }
}

/// The format of a file written before the `format` key existed, for a type's
/// `#[serde(default = "result_file::format_one")]`.
pub fn format_one() -> u32 {
    1
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} was written by another version of dhumbal-run ({what} format {found}, this one \
         reads {reads}): {remedy}"
    )]
    Format {
        path: PathBuf,
        what: &'static str,
        found: u64,
        reads: u32,
        remedy: &'static str,
    },
    #[error("{path} is not a {what} dhumbal-run can read: {message}")]
    Invalid {
        path: PathBuf,
        what: &'static str,
        message: String,
    },
}

impl ReadError {
    /// The format the file had, when that is why it was refused.
    pub fn other_format(&self) -> Option<u64> {
        match self {
            ReadError::Format { found, .. } => Some(*found),
            _ => None,
        }
    }
}

/// Reads the file at `path` as a `T` of `kind`'s format.
pub fn read<T: DeserializeOwned>(path: &Path, kind: &Kind) -> Result<T, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, kind, path)
}

/// [`read`], with `None` where the file does not exist.
pub fn read_if_there<T: DeserializeOwned>(
    path: &Path,
    kind: &Kind,
) -> Result<Option<T>, ReadError> {
    match read(path, kind) {
        Ok(v) => Ok(Some(v)),
        Err(ReadError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Writes `value` as pretty JSON to `dir/name` through a temporary file beside it (never half
/// written). The temporary file is the process's own: shards that find the same outcome may
/// save it at once.
pub fn save<T: serde::Serialize>(dir: &Path, name: &str, value: &T) -> crate::Result<()> {
    use crate::error::Doing;
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
    let text = serde_json::to_vec_pretty(value).doing("cannot write", &tmp)?;
    std::fs::write(&tmp, text).doing("cannot write", &tmp)?;
    std::fs::rename(&tmp, &path).doing("cannot save", &path)?;
    Ok(())
}

/// Parses `text`, the contents of the file at `path`, as a `T` of `kind`'s format.
pub fn parse<T: DeserializeOwned>(text: &str, kind: &Kind, path: &Path) -> Result<T, ReadError> {
    let invalid = |message: String| ReadError::Invalid {
        path: path.to_path_buf(),
        what: kind.what,
        message,
    };
    let value: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let found = value
        .get("format")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(kind.unnumbered));
    if found != u64::from(kind.format) {
        return Err(ReadError::Format {
            path: path.to_path_buf(),
            what: kind.what,
            found,
            reads: kind.format,
            remedy: kind.remedy,
        });
    }
    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
}
