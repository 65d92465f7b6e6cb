//! `progress.json`: what a run has finished, saved after every chunk, so that `--resume` can
//! continue an interrupted run where its journal (`rounds.csv`) stops.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

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
    pub(crate) csv_len: u64,
    pub(crate) complete: bool,
    pub(crate) seconds: f64,
    pub(crate) totals: StageTotals,
}

impl Progress {
    /// A fresh record of progress, or with `resume` the one an interrupted run of the same
    /// scenario (same hash) left in `root`. A different scenario is refused with what differs
    /// (a changed script by name), read from the run's `source/run.json`.
    pub(crate) fn start(
        root: &Path,
        scenario: &Scenario,
        resume: bool,
    ) -> anyhow::Result<Progress> {
        let hash = scenario.hash();
        if !resume {
            return Ok(Progress {
                scenario_hash: hash,
                stages: Vec::new(),
            });
        }
        let path = root.join("progress.json");
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "--resume: there is no interrupted run in {} (no progress.json)",
                root.display()
            )
        })?;
        let p: Progress = serde_json::from_str(&text)
            .with_context(|| format!("cannot read {}", path.display()))?;
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

    /// Writes `progress.json` in `dir` (through a temporary file: never half written).
    pub(crate) fn save(&self, dir: &Path) -> anyhow::Result<()> {
        let tmp = dir.join("progress.json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, dir.join("progress.json")).context("cannot save progress.json")?;
        Ok(())
    }
}
