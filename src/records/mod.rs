//! Per-round records: one row per round and seat, gathered column by column, turned into a
//! Polars DataFrame per chunk and appended to `rounds.csv` and `rounds.parquet`. The columns
//! are documented in `docs/records.md`.

pub mod summary;

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::Context;
use polars::prelude::{
    Column, CsvReadOptions, CsvWriter, DataFrame, ParquetCompression, ParquetWriter, PolarsResult,
    Schema, SerReader, SerWriter,
};
use std::sync::Arc;

use crate::game::EndReason;

/// One row: a seat's view of one round.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The agent's slot in the stage's agent list.
    pub slot: usize,
    pub deal: u64,
    pub rotation: u32,
    pub round: u32,
    pub seat: u8,
    pub starter: bool,
    pub won: bool,
    pub called: bool,
    pub call_success: bool,
    pub coin_delta: i64,
    pub points_delta: i64,
    pub standing: i64,
    pub hand_value: u32,
    pub cards_discarded: u32,
    pub pile_picks: u32,
    pub turns: u32,
    pub end_reason: EndReason,
    pub decisions: u32,
    pub decision_ns: u64,
    pub eliminated: bool,
    pub game_won: bool,
}

/// Rows stored column by column.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    pub slot: Vec<usize>,
    pub deal: Vec<u64>,
    pub rotation: Vec<u32>,
    pub round: Vec<u32>,
    pub seat: Vec<u8>,
    pub starter: Vec<bool>,
    pub won: Vec<bool>,
    pub called: Vec<bool>,
    pub call_success: Vec<bool>,
    pub coin_delta: Vec<i64>,
    pub points_delta: Vec<i64>,
    pub standing: Vec<i64>,
    pub hand_value: Vec<u32>,
    pub cards_discarded: Vec<u32>,
    pub pile_picks: Vec<u32>,
    pub turns: Vec<u32>,
    pub end_reason: Vec<EndReason>,
    pub decisions: Vec<u32>,
    pub decision_ns: Vec<u64>,
    pub eliminated: Vec<bool>,
    pub game_won: Vec<bool>,
    /// Whether the row's round ended its game (point games).
    pub game_over: Vec<bool>,
    rounds: u64,
    in_game_over: bool,
}

impl Columns {
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Rounds recorded (rows come one per active seat).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Appends another unit's rows.
    pub fn extend(&mut self, other: &Columns) {
        self.slot.extend_from_slice(&other.slot);
        self.deal.extend_from_slice(&other.deal);
        self.rotation.extend_from_slice(&other.rotation);
        self.round.extend_from_slice(&other.round);
        self.seat.extend_from_slice(&other.seat);
        self.starter.extend_from_slice(&other.starter);
        self.won.extend_from_slice(&other.won);
        self.called.extend_from_slice(&other.called);
        self.call_success.extend_from_slice(&other.call_success);
        self.coin_delta.extend_from_slice(&other.coin_delta);
        self.points_delta.extend_from_slice(&other.points_delta);
        self.standing.extend_from_slice(&other.standing);
        self.hand_value.extend_from_slice(&other.hand_value);
        self.cards_discarded
            .extend_from_slice(&other.cards_discarded);
        self.pile_picks.extend_from_slice(&other.pile_picks);
        self.turns.extend_from_slice(&other.turns);
        self.end_reason.extend_from_slice(&other.end_reason);
        self.decisions.extend_from_slice(&other.decisions);
        self.decision_ns.extend_from_slice(&other.decision_ns);
        self.eliminated.extend_from_slice(&other.eliminated);
        self.game_won.extend_from_slice(&other.game_won);
        self.game_over.extend_from_slice(&other.game_over);
        self.rounds += other.rounds;
    }

    /// Starts a round; `game_over` marks a point game's last round.
    pub fn begin_round(&mut self, game_over: bool) {
        self.rounds += 1;
        self.in_game_over = game_over;
    }

    /// Adds one seat's row to the round begun last.
    pub fn push(&mut self, r: Row) {
        self.slot.push(r.slot);
        self.deal.push(r.deal);
        self.rotation.push(r.rotation);
        self.round.push(r.round);
        self.seat.push(r.seat);
        self.starter.push(r.starter);
        self.won.push(r.won);
        self.called.push(r.called);
        self.call_success.push(r.call_success);
        self.coin_delta.push(r.coin_delta);
        self.points_delta.push(r.points_delta);
        self.standing.push(r.standing);
        self.hand_value.push(r.hand_value);
        self.cards_discarded.push(r.cards_discarded);
        self.pile_picks.push(r.pile_picks);
        self.turns.push(r.turns);
        self.end_reason.push(r.end_reason);
        self.decisions.push(r.decisions);
        self.decision_ns.push(r.decision_ns);
        self.eliminated.push(r.eliminated);
        self.game_won.push(r.game_won);
        self.game_over.push(self.in_game_over);
    }

    /// The rows as a DataFrame (the columns move into it, no copy).
    pub fn into_frame(self, stage: &str, agent_ids: &[String]) -> PolarsResult<DataFrame> {
        let n = self.len();
        let agents: Vec<&str> = self.slot.iter().map(|&s| agent_ids[s].as_str()).collect();
        let ends: Vec<&str> = self.end_reason.iter().map(|e| e.as_str()).collect();
        DataFrame::new(
            n,
            vec![
                Column::new("stage".into(), vec![stage; n]),
                Column::new("deal".into(), self.deal),
                Column::new("rotation".into(), self.rotation),
                Column::new("round".into(), self.round),
                Column::new(
                    "seat".into(),
                    self.seat.iter().map(|&s| u32::from(s)).collect::<Vec<_>>(),
                ),
                Column::new("agent".into(), agents),
                Column::new("starter".into(), self.starter),
                Column::new("won".into(), self.won),
                Column::new("called".into(), self.called),
                Column::new("call_success".into(), self.call_success),
                Column::new("coin_delta".into(), self.coin_delta),
                Column::new("points_delta".into(), self.points_delta),
                Column::new("standing".into(), self.standing),
                Column::new("hand_value".into(), self.hand_value),
                Column::new("cards_discarded".into(), self.cards_discarded),
                Column::new("pile_picks".into(), self.pile_picks),
                Column::new("turns".into(), self.turns),
                Column::new("end_reason".into(), ends),
                Column::new("decisions".into(), self.decisions),
                Column::new("decision_ns".into(), self.decision_ns),
                Column::new("eliminated".into(), self.eliminated),
                Column::new("game_won".into(), self.game_won),
            ],
        )
    }
}

/// Appends chunks of records to `rounds.csv` (the journal) and `rounds.parquet`.
pub struct RecordWriter {
    csv: Option<(PathBuf, File)>,
    parquet: Option<(PathBuf, polars::io::parquet::write::BatchedWriter<File>)>,
    header_written: bool,
    stage: String,
    agent_ids: Vec<String>,
}

impl RecordWriter {
    /// Starts the files in `dir`. With `resume_csv_len`, keeps that many bytes of an existing
    /// `rounds.csv` (the records of finished chunks) and rebuilds `rounds.parquet` from them.
    pub fn open(
        dir: &Path,
        stage: &str,
        agent_ids: Vec<String>,
        csv: bool,
        parquet: bool,
        resume_csv_len: Option<u64>,
    ) -> anyhow::Result<RecordWriter> {
        let csv_path = dir.join("rounds.csv");
        let parquet_path = dir.join("rounds.parquet");
        let mut w = RecordWriter {
            csv: None,
            parquet: None,
            header_written: false,
            stage: stage.to_string(),
            agent_ids,
        };
        let mut previous = None;
        if let Some(len) = resume_csv_len.filter(|&l| l > 0) {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&csv_path)
                .with_context(|| format!("cannot resume: {} is missing", csv_path.display()))?;
            file.set_len(len)
                .with_context(|| format!("cannot truncate {}", csv_path.display()))?;
            drop(file);
            w.header_written = true;
            if parquet {
                previous = Some(
                    CsvReadOptions::default()
                        .with_has_header(true)
                        .with_schema(Some(Arc::new(schema())))
                        .try_into_reader_with_file_path(Some(csv_path.clone()))?
                        .finish()
                        .with_context(|| format!("cannot read {} to resume", csv_path.display()))?,
                );
            }
        }
        if csv {
            let mut file = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(resume_csv_len.unwrap_or(0) == 0)
                .open(&csv_path)
                .with_context(|| format!("cannot write {}", csv_path.display()))?;
            file.seek(SeekFrom::End(0))?;
            w.csv = Some((csv_path, file));
        }
        if parquet {
            let file = File::create(&parquet_path)
                .with_context(|| format!("cannot write {}", parquet_path.display()))?;
            let mut batched = ParquetWriter::new(file)
                .with_compression(ParquetCompression::Zstd(None))
                .batched(&schema())?;
            if let Some(df) = previous {
                batched.write_batch(&df)?;
            }
            w.parquet = Some((parquet_path, batched));
        }
        Ok(w)
    }

    /// Appends one chunk; returns the CSV's length afterwards (the resume point).
    pub fn append(&mut self, chunk: &[Columns]) -> anyhow::Result<u64> {
        if self.csv.is_none() && self.parquet.is_none() {
            return Ok(0);
        }
        // One frame per chunk: one CSV write, one Parquet row group.
        let mut all = Columns::default();
        for cols in chunk {
            all.extend(cols);
        }
        if !all.is_empty() {
            let mut df = all.into_frame(&self.stage, &self.agent_ids)?;
            if let Some((path, file)) = &mut self.csv {
                CsvWriter::new(&mut *file)
                    .include_header(!self.header_written)
                    .finish(&mut df)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            self.header_written = true;
            if let Some((path, w)) = &mut self.parquet {
                w.write_batch(&df)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        match &mut self.csv {
            Some((_, file)) => {
                file.sync_data()?;
                Ok(file.stream_position()?)
            }
            None => Ok(0),
        }
    }

    /// Closes the Parquet file (it is only complete after this).
    pub fn finish(self) -> anyhow::Result<()> {
        if let Some((path, w)) = self.parquet {
            w.finish()
                .with_context(|| format!("cannot finish {}", path.display()))?;
        }
        Ok(())
    }
}

/// The schema of `rounds.*`: that of an empty frame, so it cannot drift from `into_frame`.
pub fn schema() -> Schema {
    let frame = Columns::default()
        .into_frame("", &[])
        .expect("an empty frame builds");
    (**frame.schema()).clone()
}
