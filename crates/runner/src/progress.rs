//! `progress.json`: how far a run is, saved after every part, for people and tools watching a
//! run (and a shard's, `shards/I-of-N.json`). What is finished is read from the parts
//! themselves (`dataset.rs`); `--resume` only checks here that the scenario is the same.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Doing, Result};
use crate::folder::{self, Refusal};
use crate::scenario::Scenario;
use crate::totals::StageTotals;

/// Saved after every chunk (`progress.json` in the output folder).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Progress {
    pub(crate) scenario_hash: String,
    pub(crate) stages: Vec<StageProgress>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StageProgress {
    pub(crate) name: String,
    pub(crate) units_total: u64,
    pub(crate) units_done: u64,
    pub(crate) complete: bool,
    pub(crate) seconds: f64,
    pub(crate) totals: StageTotals,
}

impl Progress {
    /// A fresh record of progress, or with `resume` the one an interrupted run of the same
    /// scenario (same hash) left in `root`. A different scenario is refused with what differs
    /// (a changed script by name), read from the run's `source/run.json`.
    pub(crate) fn start(path: &Path, scenario: &Scenario, resume: bool) -> Result<Progress> {
        let root = path.parent().unwrap_or(Path::new("."));
        let hash = scenario.hash();
        if !resume {
            return Ok(Progress {
                scenario_hash: hash,
                stages: Vec::new(),
            });
        }
        // A folder without one was refused already (`folder::claim`).
        let text = std::fs::read_to_string(path).doing("--resume: cannot read", path)?;
        let p: Progress = serde_json::from_str(&text).doing("cannot read", path)?;
        if p.scenario_hash != hash {
            let what = match folder::saved_run(root) {
                Ok(saved) => {
                    let diff = folder::differences(&saved.resolved, &scenario.resolved_json(), 8);
                    diff.iter().map(|d| format!("\n  {d}")).collect::<String>()
                }
                Err(_) => format!(" (hash {} there, {hash} here)", p.scenario_hash),
            };
            return Err(Refusal(format!(
                "--resume: {} was started from a different scenario; nothing was changed. \
                 What differs:{what}\nResuming needs the same files, seed and sample size; \
                 restore them, or start again with --force (or another --out)",
                root.display()
            ))
            .into());
        }
        Ok(p)
    }

    /// Reads a progress file.
    pub(crate) fn read(path: &Path) -> Result<Progress> {
        let text = std::fs::read_to_string(path).doing("cannot read", path)?;
        serde_json::from_str(&text).doing("cannot read", path)
    }

    /// Writes the progress file `path` (through a temporary file: never half written).
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).doing("cannot create", parent)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        let text = serde_json::to_vec_pretty(self).doing("cannot write", &tmp)?;
        std::fs::write(&tmp, text).doing("cannot write", &tmp)?;
        std::fs::rename(&tmp, path).doing("cannot save", path)?;
        crate::crash::point("progress-saved");
        Ok(())
    }
}
