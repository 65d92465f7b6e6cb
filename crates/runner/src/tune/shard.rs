//! A tuning's asks played by shards (`--shard I/N`, docs/cluster.md): every shard replays the
//! evaluation log into a fresh optimizer, as a resumed search does, so all of them stand at
//! the same ask; each plays an even share of that ask's deals and writes their values as a
//! part (`tune/<id>/parts/ask-<k>/values-<from>-<to>.json`). The shard that finds every share
//! on disk puts the values together in the order one machine plays them (point, lineup,
//! deal), which gives the same objective and interval bit for bit, writes the ask's
//! evaluations to the log and goes on with the search. The others stop with "not yet"; the
//! next wave of shards (the Slurm driver, scripts/slurm/drive.sbatch) replays the longer log.
//!
//! A part is written whole (a temporary file renamed), so a killed shard leaves none or all
//! of it; a part of another search (its hash) or of another ask is refused, and two parts
//! that cover the same deal must agree on its value (shards of another count may have played
//! it). The log is written whole too, by whoever completes an ask: every shard that does so
//! writes the same bytes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Evaluation, agent_at, deal_values, summarize};
use crate::error::{Doing, Result};
use crate::folder::Refusal;
use crate::run::Shard;
use crate::scenario::Tuning;
use crate::train::write_atomic;

/// The folder of the shards' parts, in a tuning's folder.
pub const PARTS: &str = "parts";

/// One shard's share of an ask: the values of the deals `from..to` of the ask's deals, in
/// the order one machine plays them (points, then lineups, then deals), as bits (exact).
#[derive(Debug, Serialize, Deserialize)]
struct Part {
    hash: String,
    ask: u64,
    stage: u8,
    from: u64,
    to: u64,
    values: Vec<u64>,
}

/// The folder of ask `ask`'s parts.
fn ask_dir(dir: &Path, ask: u64) -> PathBuf {
    dir.join(PARTS).join(format!("ask-{ask}"))
}

/// Plays `shard`'s share of ask `ask` (`points`, of search stage `stage`) unless its part is
/// on disk, then the ask's evaluations if every share is there (`None`: not yet).
pub(super) fn share(
    t: &Tuning,
    dir: &Path,
    hash: &str,
    (ask, stage): (u64, u8),
    points: &[Vec<f64>],
    shard: Shard,
) -> Result<Option<Vec<Evaluation>>> {
    let per = t.deals_per_lineup();
    let per_point = per * t.lineups.len() as u64;
    let total = per_point * points.len() as u64;
    let folder = ask_dir(dir, ask);
    std::fs::create_dir_all(&folder).doing("cannot create", &folder)?;
    let mine = shard.within(0..total);
    let file = folder.join(format!("values-{}-{}.json", mine.start, mine.end));
    if !mine.is_empty() && !file.exists() {
        let mut values = Vec::with_capacity((mine.end - mine.start) as usize);
        let mut at = mine.start;
        let mut agent = None;
        while at < mine.end {
            // The run of deals of one point and one lineup that starts here.
            let (point, rest) = ((at / per_point) as usize, at % per_point);
            let (lineup, deal) = ((rest / per) as usize, rest % per);
            let end = (at - deal + per).min(mine.end);
            let def = match &agent {
                Some((p, def)) if *p == point => def,
                _ => &agent.insert((point, agent_at(t, &points[point])?)).1,
            };
            let played = deal_values(t, def, &points[point], ask, lineup, deal..deal + (end - at))?;
            values.extend(played.into_iter().map(f64::to_bits));
            at = end;
        }
        let part = Part {
            hash: hash.to_string(),
            ask,
            stage,
            from: mine.start,
            to: mine.end,
            values,
        };
        let text = serde_json::to_string(&part).doing("cannot write", &file)?;
        write_atomic(&file, text.as_bytes())?;
    }
    let Some(values) = gathered(&folder, hash, (ask, stage), total)? else {
        return Ok(None);
    };
    Ok(Some(
        points
            .iter()
            .enumerate()
            .map(|(index, point)| {
                let at = index * per_point as usize;
                let summary = summarize(&values[at..at + per_point as usize]);
                Evaluation::played((ask, index, stage), point, summary)
            })
            .collect(),
    ))
}

/// Every value of the ask's `total` deals from the parts in `folder`, or `None` while a deal
/// has none; a part of another search or ask, or two parts that disagree, is refused.
fn gathered(
    folder: &Path,
    hash: &str,
    (ask, stage): (u64, u8),
    total: u64,
) -> Result<Option<Vec<f64>>> {
    let mut values: Vec<Option<u64>> = vec![None; total as usize];
    let entries = std::fs::read_dir(folder).doing("cannot read", folder)?;
    for entry in entries {
        let path = entry.doing("cannot read", folder)?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue; // a part being written (its temporary file)
        }
        let text = std::fs::read_to_string(&path).doing("cannot read", &path)?;
        let refuse = |why: String| -> Result<Option<Vec<f64>>> {
            Err(Refusal(format!(
                "{}: {why}; it is not a part of this search (remove the folder {} to play the ask again, or `--force` to search afresh)",
                path.display(),
                folder.display()
            ))
            .into())
        };
        let part: Part = match serde_json::from_str(&text) {
            Ok(p) => p,
            Err(e) => return refuse(format!("not a tuning's part ({e})")),
        };
        if part.hash != hash {
            return refuse(
                "a part of another search (the `tune:` entry or its files changed)".into(),
            );
        }
        if (part.ask, part.stage) != (ask, stage) {
            return refuse(format!(
                "a part of evaluation {} (stage {})",
                part.ask, part.stage
            ));
        }
        if part.to > total || part.to < part.from || part.values.len() as u64 != part.to - part.from
        {
            return refuse(format!(
                "deals {}..{} with {} values, of an evaluation of {total} deals",
                part.from,
                part.to,
                part.values.len()
            ));
        }
        for (slot, bits) in values[part.from as usize..part.to as usize]
            .iter_mut()
            .zip(part.values)
        {
            match slot {
                Some(b) if *b != bits => {
                    return refuse("a deal's value differs from another part's".into());
                }
                _ => *slot = Some(bits),
            }
        }
    }
    Ok(values.into_iter().map(|v| v.map(f64::from_bits)).collect())
}

/// The shards' parts of a search, gone (its agent file is written, or it starts afresh).
pub(super) fn clear(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir.join(PARTS));
}
