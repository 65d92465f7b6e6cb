//! A stage's records as a Parquet dataset, which is both the result and the journal.
//!
//! ```text
//! <stage>/rounds/part-0000000000-0000000016.parquet   units 0..16 of the stage
//! <stage>/rounds/part-0000000016-0000000032.parquet   units 16..32
//! <stage>/.incoming/                                  parts being written (never read)
//! ```
//!
//! Each part holds the records of a contiguous range of units, in unit order, and says in its
//! footer what it is ([`PartMeta`]: the program, the scenario's hash, the stage, its units, its
//! totals). A part is written whole under `.incoming/`, synced, and renamed into `rounds/`, so
//! `rounds/` only ever holds complete parts: a reader (Polars, pyarrow, DuckDB) sees finished
//! records, and a run killed at any moment loses at most the parts it was writing. What a
//! stage has finished is read from the footers alone: `--resume` plays the units no part
//! holds, a shard plays those of its slice, and `merge` checks that the parts cover the stage
//! exactly once.

use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use polars_core::prelude::DataFrame;
use polars_io::prelude::{CsvWriter, ParquetReader, SerReader, SerWriter};
use polars_parquet::write::KeyValue;
use serde::{Deserialize, Serialize};

use crate::error::{Doing, Error, Result, copy_error};
use crate::part_file::PartSchema;
use crate::records::{Categories, Records};
use crate::totals::StageTotals;

/// The folder of a stage's part files.
pub const DATASET_DIR: &str = "rounds";
/// Where parts are written before they are renamed into [`DATASET_DIR`].
pub const INCOMING_DIR: &str = ".incoming";
/// The footer key of a part's [`PartMeta`].
const META_KEY: &str = "dhumbal-run";
/// The layout of parts and their footers; a reader refuses others.
const FORMAT: u32 = 1;
/// The program that writes parts: parts of different versions are never merged.
pub const PROGRAM: &str = concat!("dhumbal-run ", env!("CARGO_PKG_VERSION"));

/// What a part is, kept in its footer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartMeta {
    pub format: u32,
    /// [`PROGRAM`] of the writer.
    pub program: String,
    /// The scenario's hash (`Scenario::hash`): parts of other scenarios are refused.
    pub scenario: String,
    pub stage: String,
    /// The agents of the stage, in slot order (a `winner_of` resolved).
    pub agents: Vec<String>,
    /// The units of the stage this part holds: `start..end`.
    pub start: u64,
    pub end: u64,
    /// Units in the whole stage.
    pub stage_units: u64,
    pub rounds: u64,
    pub rows: u64,
    /// The part's totals (integers: the stage's are their sum, in any order).
    pub totals: StageTotals,
}

impl PartMeta {
    fn units(&self) -> Range<u64> {
        self.start..self.end
    }
}

/// A part's file name: its unit range, zero-padded so that names sort in unit order.
pub fn part_name(units: &Range<u64>) -> String {
    format!("part-{:010}-{:010}.parquet", units.start, units.end)
}

/// What every part of a stage shares: checked when a dataset is opened for a run.
#[derive(Clone, Debug)]
pub struct StageKey {
    pub scenario: String,
    pub stage: String,
    pub agents: Vec<String>,
    pub stage_units: u64,
}

/// Writes a stage's parts; shared by the encoder threads (it only reads its settings).
pub struct PartWriter {
    rounds: PathBuf,
    incoming: PathBuf,
    key: StageKey,
    /// The file schema of the stage's parts (its enum columns' categories included).
    schema: PartSchema,
    points: bool,
}

impl PartWriter {
    /// A writer of `key`'s parts in `stage_dir` (creating `rounds/` and `.incoming/`).
    /// `points`: the stage plays point games (for the totals).
    pub fn new(stage_dir: &Path, key: StageKey, points: bool) -> Result<PartWriter> {
        let rounds = stage_dir.join(DATASET_DIR);
        let incoming = stage_dir.join(INCOMING_DIR);
        for dir in [&rounds, &incoming] {
            std::fs::create_dir_all(dir).doing("cannot create", dir)?;
        }
        let schema = Categories::new(&key.stage, &key.agents)
            .and_then(|cats| PartSchema::new(&cats))
            .doing("cannot write the records in", &rounds)?;
        Ok(PartWriter {
            rounds,
            incoming,
            key,
            schema,
            points,
        })
    }

    /// Writes the records of `units` (`chunk`, one [`Records`] per unit, in order) as one
    /// part, and returns its description. The part appears in `rounds/` complete or not at
    /// all.
    pub fn write(&self, units: Range<u64>, chunk: &[Records]) -> Result<PartMeta> {
        let mut totals = StageTotals::new(self.key.agents.len());
        for records in chunk {
            totals.add(records, self.points);
        }
        let meta = PartMeta {
            format: FORMAT,
            program: PROGRAM.into(),
            scenario: self.key.scenario.clone(),
            stage: self.key.stage.clone(),
            agents: self.key.agents.clone(),
            start: units.start,
            end: units.end,
            stage_units: self.key.stage_units,
            rounds: totals.rounds,
            rows: chunk.iter().map(|r| r.len() as u64).sum(),
            totals,
        };
        let name = part_name(&units);
        // Unique among the processes that may share the folder (shards on several machines).
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = self
            .incoming
            .join(format!("{name}.{}-{nanos}.tmp", std::process::id()));
        let write = || -> Result<()> {
            let cannot = "cannot write";
            let mut file = File::create(&tmp).doing(cannot, &tmp)?;
            crate::crash::point("part-begun");
            // Encoded from the rows on this thread (parts are written on several threads
            // already), see `part_file.rs`.
            let meta = KeyValue {
                key: META_KEY.into(),
                value: Some(serde_json::to_string(&meta).doing(cannot, &tmp)?),
            };
            crate::part_file::write(&mut file, chunk, &self.schema, meta).doing(cannot, &tmp)?;
            // On disk before it has its name: a crash of the machine cannot leave a named part
            // that is empty.
            file.sync_data().doing(cannot, &tmp)?;
            crate::crash::point("part-written");
            Ok(())
        };
        write()?;
        // The units' traces go first: a part in place has its traces.
        for (file, text) in chunk.iter().filter_map(|r| r.trace.as_ref()) {
            self.write_trace(file, text)?;
        }
        let path = self.rounds.join(&name);
        std::fs::rename(&tmp, &path).map_err(copy_error("cannot move", &tmp, &path))?;
        crate::crash::point("part-placed");
        Ok(meta)
    }
}

impl PartWriter {
    /// Writes one unit's trace into `traces/` beside `rounds/`, whole or not at all (written
    /// under `.incoming/`, then renamed). A unit played again writes the same trace.
    fn write_trace(&self, file: &str, text: &[Vec<u8>]) -> Result<()> {
        let dir = self
            .rounds
            .parent()
            .expect("rounds/ is inside the stage's folder")
            .join(crate::trace::TRACES_DIR);
        std::fs::create_dir_all(&dir).doing("cannot create", &dir)?;
        let tmp = self
            .incoming
            .join(format!("{file}.{}.tmp", std::process::id()));
        (|| -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            text.iter().try_for_each(|chunk| f.write_all(chunk))
        })()
        .doing("cannot write", &tmp)?;
        let path = dir.join(file);
        std::fs::rename(&tmp, &path).map_err(copy_error("cannot move", &tmp, &path))
    }
}

/// One finished part.
#[derive(Clone, Debug)]
pub struct Part {
    pub path: PathBuf,
    pub meta: PartMeta,
}

/// The finished parts of a stage, read from their footers, in unit order.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    pub dir: PathBuf,
    pub parts: Vec<Part>,
    /// A sequential stage that has decided ends here, in units (`sequential.json`, written by
    /// the runner from these parts): it is complete at its stop, not at its maximum.
    pub stop: Option<u64>,
}

/// Reads a part's footer.
pub fn part_meta(path: &Path) -> Result<PartMeta> {
    let file = File::open(path).doing("cannot open", path)?;
    let mut reader = ParquetReader::new(file);
    let metadata = reader.get_metadata().map_err(|e| {
        Error::Records(format!(
            "{} is not a readable Parquet file: {e}",
            path.display()
        ))
    })?;
    let text = metadata
        .key_value_metadata()
        .iter()
        .flatten()
        .find(|kv| kv.key == META_KEY)
        .and_then(|kv| kv.value.clone())
        .ok_or_else(|| {
            Error::Records(format!(
                "{} is not a part written by dhumbal-run (no `{META_KEY}` in its footer)",
                path.display()
            ))
        })?;
    let meta: PartMeta = serde_json::from_str(&text).map_err(|e| {
        Error::Records(format!(
            "{}: unreadable part description: {e}",
            path.display()
        ))
    })?;
    if meta.format != FORMAT {
        return Err(Error::Records(format!(
            "{} is a part of layout {}, this program reads layout {FORMAT}",
            path.display(),
            meta.format
        )));
    }
    Ok(meta)
}

impl Dataset {
    /// The parts in `stage_dir/rounds/` (none if the folder does not exist). Files other than
    /// `*.parquet` are ignored; a `.parquet` file that is not a part is an error.
    pub fn open(stage_dir: &Path) -> Result<Dataset> {
        let dir = stage_dir.join(DATASET_DIR);
        let mut parts = Vec::new();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Dataset {
                    dir,
                    parts,
                    stop: None,
                });
            }
            Err(e) => return Err(e).doing("cannot read", &dir),
        };
        for entry in entries {
            let path = entry.doing("cannot read", &dir)?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !name.ends_with(".parquet") || name.starts_with('.') {
                continue;
            }
            let meta = part_meta(&path)?;
            parts.push(Part { path, meta });
        }
        parts.sort_by_key(|p| (p.meta.start, p.meta.end));
        // The decision of a sequential stage (or of an `exploit:` responder's test of its
        // gain), if it was computed from these records.
        let ours = |scenario: &str| parts.first().is_some_and(|p| p.meta.scenario == scenario);
        let stop = match crate::sequential::Outcome::read(stage_dir)? {
            Some(o) => ours(&o.scenario).then_some(o.stop_units),
            None => crate::exploit::GainOutcome::read(stage_dir)?
                .filter(|o| ours(&o.scenario))
                .map(|o| o.stop_units),
        };
        Ok(Dataset { dir, parts, stop })
    }

    /// The units the stage needs of a stage of `units`: all of them, or up to a sequential
    /// stage's stop.
    pub fn target(&self, units: u64) -> u64 {
        self.stop.map_or(units, |s| s.min(units))
    }

    /// Whether `stage_dir` holds a dataset folder.
    pub fn exists(stage_dir: &Path) -> bool {
        stage_dir.join(DATASET_DIR).is_dir()
    }

    /// Units held by the parts.
    pub fn units_done(&self) -> u64 {
        self.parts.iter().map(|p| p.meta.end - p.meta.start).sum()
    }

    /// The stage's totals so far: the sum of the parts'.
    pub fn totals(&self, slots: usize) -> StageTotals {
        let mut totals = StageTotals::new(slots);
        for p in &self.parts {
            totals.absorb(&p.meta.totals);
        }
        totals
    }

    /// The totals of the parts within `units` (a shard's share, say).
    pub fn totals_within(&self, units: Range<u64>, slots: usize) -> StageTotals {
        let mut totals = StageTotals::new(slots);
        for p in &self.parts {
            if p.meta.start >= units.start && p.meta.end <= units.end {
                totals.absorb(&p.meta.totals);
            }
        }
        totals
    }

    /// Checks that every part belongs to `key` (same scenario, stage, agents and size, and
    /// the same program) and that no two parts overlap.
    pub fn check(&self, key: &StageKey) -> Result<()> {
        self.check_written_by(key, PROGRAM)
    }

    /// [`Dataset::check`] with the parts' program given.
    fn check_written_by(&self, key: &StageKey, program: &str) -> Result<()> {
        for p in &self.parts {
            let m = &p.meta;
            let differs = if m.scenario != key.scenario {
                Some(format!(
                    "another scenario (hash {}, this one {})",
                    m.scenario, key.scenario
                ))
            } else if m.program != program {
                Some(format!("another program ({}, not {program})", m.program))
            } else if m.stage != key.stage || m.agents != key.agents {
                Some(format!(
                    "stage `{}` with agents {:?}, not `{}` with {:?}",
                    m.stage, m.agents, key.stage, key.agents
                ))
            } else if m.stage_units != key.stage_units || m.end > key.stage_units {
                Some(format!(
                    "a stage of {} units, not {}",
                    m.stage_units, key.stage_units
                ))
            } else {
                None
            };
            if let Some(what) = differs {
                return Err(Error::Records(format!(
                    "{} was written by {what}",
                    p.path.display()
                )));
            }
        }
        self.overlaps()
    }

    /// An error naming the first two parts that hold the same units.
    fn overlaps(&self) -> Result<()> {
        for w in self.parts.windows(2) {
            if w[1].meta.start < w[0].meta.end {
                return Err(Error::Records(format!(
                    "{} and {} hold the same units ({}..{}): the records of a unit must be \
                     there exactly once; remove one of them",
                    w[0].path.display(),
                    w[1].path.display(),
                    w[1].meta.start,
                    w[0].meta.end.min(w[1].meta.end)
                )));
            }
        }
        Ok(())
    }

    /// The ranges of `within` that no part holds, in order.
    pub fn missing(&self, within: Range<u64>) -> Vec<Range<u64>> {
        let mut gaps = Vec::new();
        let mut at = within.start;
        for p in &self.parts {
            let r = p.meta.units();
            if r.end <= at || r.start >= within.end {
                continue;
            }
            if r.start > at {
                gaps.push(at..r.start);
            }
            at = at.max(r.end);
        }
        if at < within.end {
            gaps.push(at..within.end);
        }
        gaps
    }

    /// Whether the parts hold every one of `units` units (up to a sequential stage's stop).
    pub fn is_complete(&self, units: u64) -> bool {
        self.missing(0..self.target(units)).is_empty()
    }

    /// Checks that the parts hold every unit of the stage exactly once: one program (any
    /// version: results stay readable after an upgrade; [`Dataset::check`] asks for this
    /// one), one scenario, one stage and its agents, no overlap, no gap. Returns the stage's
    /// description from the parts.
    pub fn check_complete(&self) -> Result<StageKey> {
        let Some(first) = self.parts.first() else {
            return Err(Error::Records(format!(
                "{} holds no parts yet: no unit of this stage is finished (run its shards, or \
                 --resume the run, first)",
                self.dir.display()
            )));
        };
        let key = StageKey {
            scenario: first.meta.scenario.clone(),
            stage: first.meta.stage.clone(),
            agents: first.meta.agents.clone(),
            stage_units: first.meta.stage_units,
        };
        // One program wrote them all (readers take any; `merge` also asks for this one).
        self.check_written_by(&key, &first.meta.program)?;
        let gaps = self.missing(0..self.target(key.stage_units));
        if !gaps.is_empty() {
            let missing: u64 = gaps.iter().map(|g| g.end - g.start).sum();
            let list: Vec<String> = gaps
                .iter()
                .take(4)
                .map(|g| format!("{}..{}", g.start, g.end))
                .collect();
            return Err(Error::Records(format!(
                "stage `{}` is not complete: {missing} of its {} units have no records yet \
                 (units {}{}) in {}. Run the shards that play them (or --resume the run) first",
                key.stage,
                key.stage_units,
                list.join(", "),
                if gaps.len() > 4 { ", ..." } else { "" },
                self.dir.display()
            )));
        }
        Ok(key)
    }

    /// Rows held by the parts.
    pub fn rows(&self) -> u64 {
        self.parts.iter().map(|p| p.meta.rows).sum()
    }
}

/// Reads one part, `columns` only (all if `None`).
pub fn read_part(path: &Path, columns: Option<&[&str]>) -> Result<DataFrame> {
    let file = File::open(path).doing("cannot open", path)?;
    ParquetReader::new(file)
        .with_columns(columns.map(|c| c.iter().map(|s| s.to_string()).collect()))
        .finish()
        .doing("cannot read", path)
}

/// Writes `rounds.csv` in `stage_dir` from the dataset, part by part (a temporary file renamed
/// into place: never half written). Enum columns are written as their names.
pub fn write_csv(stage_dir: &Path, dataset: &Dataset) -> Result<()> {
    let path = stage_dir.join("rounds.csv");
    let tmp = stage_dir.join(format!("rounds.csv.{}.tmp", std::process::id()));
    let cannot = "cannot write";
    let mut out = std::io::BufWriter::new(File::create(&tmp).doing(cannot, &tmp)?);
    for (i, part) in dataset.parts.iter().enumerate() {
        let mut df = read_part(&part.path, None)?;
        CsvWriter::new(&mut out)
            .include_header(i == 0)
            .finish(&mut df)
            .doing(cannot, &tmp)?;
    }
    let file = out
        .into_inner()
        .map_err(|e| e.into_error())
        .doing(cannot, &tmp)?;
    file.sync_data().doing(cannot, &tmp)?;
    std::fs::rename(&tmp, &path).map_err(copy_error("cannot move", &tmp, &path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Row, frame};
    use dhumbal_game::EndReason;
    use polars_io::prelude::ParquetWriter;

    fn unit(u: u64) -> Records {
        let mut r = Records::with_capacity(6);
        for round in 0..2u32 {
            r.begin_round();
            for seat in 0..3u8 {
                r.push(Row {
                    slot: u32::from(seat),
                    deal: u * 2 + u64::from(round),
                    rotation: 0,
                    round,
                    seat,
                    starter: seat == 0,
                    won: seat == (u % 3) as u8,
                    called: seat == 0,
                    call_success: seat == 0 && u.is_multiple_of(3),
                    coin_delta: 0,
                    points_delta: 0,
                    standing: 0,
                    hand_value: 7,
                    cards_discarded: 2,
                    pile_picks: 1,
                    turns: 20,
                    end_reason: EndReason::Call,
                    decisions: 9,
                    decision_ns: u.is_multiple_of(2).then_some(1000),
                    eliminated: false,
                    game_won: false,
                });
            }
        }
        r
    }

    fn key(units: u64) -> StageKey {
        StageKey {
            scenario: "abc".into(),
            stage: "s".into(),
            agents: vec!["a".into(), "b".into(), "c".into()],
            stage_units: units,
        }
    }

    /// Writes the part of `units`, each unit's records made by [`unit`].
    fn write(w: &PartWriter, units: Range<u64>) {
        w.write(units.clone(), &units.map(unit).collect::<Vec<_>>())
            .unwrap();
    }

    /// A stage folder of `units` units with the parts of `written` written, in that order, and
    /// its writer.
    fn stage_with(units: u64, written: &[Range<u64>]) -> (tempfile::TempDir, PartWriter) {
        let dir = tempfile::tempdir().unwrap();
        let w = PartWriter::new(dir.path(), key(units), false).unwrap();
        for part in written {
            write(&w, part.clone());
        }
        (dir, w)
    }

    /// Parts written out of order are found in unit order with their totals; what is missing
    /// is the complement; a complete dataset checks, and the CSV holds every row.
    #[test]
    fn parts_record_what_they_hold() {
        let (dir, w) = stage_with(10, &[4..7, 0..4]);
        let ds = Dataset::open(dir.path()).unwrap();
        ds.check(&key(10)).unwrap();
        assert_eq!(ds.units_done(), 7);
        assert_eq!(ds.missing(0..10), vec![7..10]);
        assert_eq!(ds.missing(2..5), Vec::<Range<u64>>::new());
        assert!(ds.check_complete().is_err());
        let mut expected = StageTotals::new(3);
        for u in 0..7 {
            expected.add(&unit(u), false);
        }
        assert_eq!(ds.totals(3), expected);
        write(&w, 7..10);
        let ds = Dataset::open(dir.path()).unwrap();
        assert_eq!(ds.check_complete().unwrap().stage_units, 10);
        assert_eq!(ds.rows(), 60);
        write_csv(dir.path(), &ds).unwrap();
        let csv = crate::records::read_csv(&dir.path().join("rounds.csv"), None).unwrap();
        assert_eq!(csv.height(), 60);
        let deals = csv.column("deal").unwrap().u64().unwrap();
        assert!(deals.into_no_null_iter().is_sorted());
        // Nothing is left half written.
        assert_eq!(
            std::fs::read_dir(dir.path().join(INCOMING_DIR))
                .unwrap()
                .count(),
            0
        );
    }

    /// Overlapping parts, and parts of another scenario, are refused by name.
    #[test]
    fn overlaps_and_strangers_are_refused() {
        let (dir, _) = stage_with(6, &[0..4, 3..6]);
        let err = Dataset::open(dir.path())
            .unwrap()
            .check_complete()
            .unwrap_err()
            .to_string();
        assert!(err.contains("the same units (3..4)"), "{err}");
        let (dir, w) = stage_with(6, &[]);
        write(&w, 0..3);
        let mut other = key(6);
        other.scenario = "def".into();
        let err = Dataset::open(dir.path())
            .unwrap()
            .check(&other)
            .unwrap_err()
            .to_string();
        assert!(err.contains("another scenario"), "{err}");
    }

    /// A `.parquet` file that dhumbal-run did not write is not taken for a part.
    #[test]
    fn a_foreign_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(DATASET_DIR)).unwrap();
        let mut df = frame(&[unit(0)], &Categories::new("s", &key(1).agents).unwrap()).unwrap();
        let path = dir.path().join(DATASET_DIR).join("mine.parquet");
        ParquetWriter::new(File::create(&path).unwrap())
            .finish(&mut df)
            .unwrap();
        let err = Dataset::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a part written by dhumbal-run"), "{err}");
    }
}
