//! Reading a stage's records for analysis: the Parquet dataset `rounds/` a part at a time
//! (checked complete first: every unit exactly once), else an older `rounds.parquet` in slices
//! of rows, else `rounds.csv`; only the columns the analysis needs, each read by its name and cast to the type it
//! expects, and what the stage was (agents in slot order, seating, scoring) from the run's
//! `manifest.json`, `summary.csv` or, failing both, the records themselves.
//!
//! A record file whose columns are not those of `docs/records.md` (missing, unexpected or
//! reordered), an empty one, an unparsable value or an agent the stage does not have is an
//! [`InputError`]: bad input, naming the file, which the command line maps to exit code 2
//! ([`crate::Error::is_bad_input`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use polars_core::prelude::{BooleanChunked, ChunkedArray, DataFrame, DataType, PolarsNumericType};
use polars_core::utils::arrow::array::{
    Array, DictionaryArray, DictionaryKey, PrimitiveArray, Utf8ViewArray,
};
use polars_core::utils::arrow::bitmap::Bitmap;
use polars_core::utils::arrow::types::NativeType;

use polars_io::prelude::{ParquetReader, SerReader};
use serde::{Deserialize, Serialize};

use dhumbal_runner::dataset::Dataset;
use dhumbal_runner::scenario::AgentDef;
pub use dhumbal_runner::scenario::Seating;
use dhumbal_runner::scenario::Stage;
use dhumbal_runner::scenario::rules_spec::ScoringName;
use dhumbal_runner::summary::Manifest;

/// Records (or the files describing their stage) that cannot be read or do not make sense:
/// bad input, as opposed to a failure to write the report. The message names the file (once:
/// a message that names it already, such as a result file's refusal, is shown as it is).
#[derive(Debug, thiserror::Error)]
#[error("{}", self.shown())]
pub struct InputError {
    pub path: PathBuf,
    pub message: String,
}

impl InputError {
    pub fn new(path: &Path, message: impl Into<String>) -> InputError {
        InputError {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    fn shown(&self) -> String {
        let path = self.path.display().to_string();
        if self.message.contains(&path) {
            self.message.clone()
        } else {
            format!("{path}: {}", self.message)
        }
    }
}

type Result<T> = std::result::Result<T, InputError>;

/// What the stage was, as far as the analysis needs to know.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageInfo {
    pub name: String,
    /// Agent ids in slot order (the scenario's order): the order of every table and the
    /// colour of every agent in the figures.
    pub agents: Vec<String>,
    /// Kind of each agent (`aggressive`, `script:...`); empty when unknown.
    pub kinds: Vec<String>,
    pub seating: Seating,
    /// Point scoring (games until one player is left) rather than coins.
    pub points: bool,
    pub players: usize,
    /// Coin scoring: rounds per session (coins carry over within one).
    pub session: Option<u32>,
    pub seed: Option<u64>,
    /// Where this description came from (`runner`, `manifest.json`, `summary.csv`, `records`).
    pub source: String,
}

impl StageInfo {
    /// What the runner knows of a stage it has just played (`agents` as seated, `winner_of`
    /// resolved).
    pub fn of_stage(stage: &Stage, agents: &[AgentDef]) -> StageInfo {
        StageInfo {
            name: stage.name.clone(),
            agents: agents.iter().map(|a| a.id.clone()).collect(),
            kinds: agents.iter().map(|a| a.kind.clone()).collect(),
            seating: stage.seating,
            points: stage.is_points(),
            players: stage.players(),
            session: stage.session,
            seed: Some(stage.seed),
            source: "runner".into(),
        }
    }

    pub fn arrangements(&self) -> u64 {
        self.seating.arrangements(self.players)
    }
}

/// One row of `rounds.*`, reduced to what the analysis reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Row {
    pub slot: u8,
    pub deal: u64,
    pub rotation: u32,
    pub round: u32,
    pub seat: u32,
    pub starter: bool,
    pub won: bool,
    pub called: bool,
    pub call_success: bool,
    pub coin_delta: i64,
    pub points_delta: i64,
    pub hand_value: u32,
    pub cards_discarded: u32,
    pub turns: u32,
    pub decisions: u32,
    /// Empty for rounds whose decisions were not timed.
    pub decision_ns: Option<u64>,
    pub game_won: bool,
}

impl Row {
    /// The row as the analysis reads it from a record the runner made, before it is written:
    /// the same values the dataset gives back. `None` for an agent slot past 255 (the
    /// analysis' slots are bytes).
    pub fn of_record(r: &dhumbal_runner::records::Row) -> Option<Row> {
        Some(Row {
            slot: u8::try_from(r.slot).ok()?,
            deal: r.deal,
            rotation: r.rotation,
            round: r.round,
            seat: u32::from(r.seat),
            starter: r.starter,
            won: r.won,
            called: r.called,
            call_success: r.call_success,
            coin_delta: r.coin_delta,
            points_delta: r.points_delta,
            hand_value: r.hand_value,
            cards_discarded: r.cards_discarded,
            turns: r.turns,
            decisions: r.decisions,
            decision_ns: r.decision_ns,
            game_won: r.game_won,
        })
    }
}

/// The record columns the analysis reads (their types come from the record schema,
/// `dhumbal_runner::records::COLUMNS`).
const READ: [&str; 17] = [
    "agent",
    "deal",
    "rotation",
    "round",
    "seat",
    "starter",
    "won",
    "called",
    "call_success",
    "coin_delta",
    "points_delta",
    "hand_value",
    "cards_discarded",
    "turns",
    "decisions",
    "decision_ns",
    "game_won",
];

/// Rows per slice: bounds memory (a slice of two million rows takes about 100 MB) while
/// keeping Polars' parallel decoding busy.
const SLICE_ROWS: usize = 2_000_000;

/// Where a stage folder's records are: the dataset folder `rounds/` if present, else
/// `rounds.parquet` (written by earlier versions), else `rounds.csv`.
pub fn record_file(dir: &Path) -> Option<PathBuf> {
    if Dataset::exists(dir) {
        return Some(dir.join(dhumbal_runner::dataset::DATASET_DIR));
    }
    ["rounds.parquet", "rounds.csv"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// What a folder without records is told.
const NO_RECORDS: &str = "no records here (a rounds/ dataset, rounds.parquet or rounds.csv)";

/// Calls `each` on the stage's records, `columns` only, in unit order: a part of the dataset
/// at a time (so memory does not grow with the records), or slices of a single file. A
/// dataset must be complete: every unit of the stage exactly once, all written by this
/// program for one scenario.
fn for_each_frame(
    dir: &Path,
    columns: &[&str],
    each: impl FnMut(&DataFrame, &Path) -> Result<()>,
) -> Result<()> {
    let mut each = each;
    for_each_frame_with(dir, columns, None, |df, path, _| each(df, path))
}

/// [`for_each_frame`], the `agent` column of the dataset's parts decoded here (as codes into
/// its dictionary, and the dictionary's names: [`part_agents`]) and left out of the frame,
/// when `slots` is given and the part allows it.
fn for_each_frame_with(
    dir: &Path,
    columns: &[&str],
    slots: Option<&HashMap<&str, u8>>,
    mut each: impl FnMut(&DataFrame, &Path, Option<Vec<u8>>) -> Result<()>,
) -> Result<()> {
    let path = record_file(dir).ok_or_else(|| InputError::new(dir, NO_RECORDS))?;
    if path.is_dir() {
        let dataset = Dataset::open(dir).map_err(|e| InputError::new(&path, e.to_string()))?;
        dataset
            .check_complete()
            .map_err(|e| InputError::new(&path, e.to_string()))?;
        for (i, part) in dataset.parts.iter().enumerate() {
            if i == 0 {
                // Every part of one program has the same columns: the first is checked.
                let _ = parquet_reader(&part.path)?;
            }
            let agents = match slots {
                Some(slots) => part_agents(&part.path, slots)?,
                None => None,
            };
            let df = match agents {
                Some(_) => {
                    let others: Vec<&str> =
                        columns.iter().copied().filter(|&c| c != "agent").collect();
                    read_parquet(&part.path, &others, None)?
                }
                None => read_parquet(&part.path, columns, None)?,
            };
            each(&df, &part.path, agents)?;
        }
    } else if is_parquet(&path) {
        let total = parquet_reader(&path)?
            .num_rows()
            .map_err(|e| InputError::new(&path, format!("cannot read: {}", polars_message(&e))))?;
        let mut offset = 0;
        while offset < total {
            let len = SLICE_ROWS.min(total - offset);
            each(
                &read_parquet(&path, columns, Some((offset, len)))?,
                &path,
                None,
            )?;
            offset += len;
        }
    } else {
        each(&read_csv(&path, Some(columns))?, &path, None)?;
    }
    Ok(())
}

/// Rows in a batch handed from the reading thread to `each` (a few megabytes).
const BATCH_ROWS: usize = 1 << 15;

/// Calls `each` on every row of the stage's records, in unit order. `agents` maps agent ids
/// to slots; an id not in it is an error (the records do not belong to this stage).
///
/// The records are read and turned into rows on a second thread, a batch ahead of `each`: the
/// report's pass over a million rounds otherwise waits for every part to be decoded, while a
/// core sits idle. At most four batches exist at a time (being filled, being sent, waiting,
/// being read; two more with [`for_each_row_twice`]'s second pass), and they go back and forth
/// between the threads rather than being made anew.
pub fn for_each_row(dir: &Path, agents: &[String], each: impl FnMut(&Row)) -> Result<u64> {
    for_each_row_twice(dir, agents, each, None::<fn(&Row)>)
}

/// [`for_each_row`], with `then` (if any) also called on every row in unit order, on a thread
/// of its own, a batch behind `each`: two passes over the same rows that need not wait for
/// each other (the report's statistics, and the games its ratings are fitted to).
pub fn for_each_row_twice(
    dir: &Path,
    agents: &[String],
    mut each: impl FnMut(&Row),
    then: Option<impl FnMut(&Row) + Send>,
) -> Result<u64> {
    let slots: HashMap<&str, u8> = agents
        .iter()
        .enumerate()
        .map(|(i, a)| (a.as_str(), i as u8))
        .collect();
    std::thread::scope(|scope| {
        // Made inside the scope, so that if `each` panics the receiver is dropped before the
        // scope waits for the reader, which then stops at its next batch instead of blocking.
        let (full, filled) = mpsc::sync_channel::<Vec<Row>>(1);
        let (give_back, empty) = mpsc::channel::<Vec<Row>>();
        let slots = &slots;
        let reader = std::thread::Builder::new()
            .name("report-read".into())
            .spawn_scoped(scope, move || {
                let mut out = Batches {
                    full,
                    empty,
                    batch: Vec::with_capacity(BATCH_ROWS),
                    gone: false,
                };
                let mut rows = 0u64;
                let read = for_each_frame_with(dir, &READ, Some(slots), |df, path, agents| {
                    if out.gone {
                        return Err(InputError::new(path, "the rows are no longer wanted"));
                    }
                    rows += visit(df, agents, slots, path, &mut |row| out.push(row))?;
                    Ok(())
                });
                // The rows before an error too, as when they were visited in place.
                out.send();
                read.map(|()| rows)
            })
            .expect("cannot start the thread that reads the records");
        // The second pass: batches go on to it after `each`, and back to the reader from it.
        let (onward, second) = match then {
            Some(mut then) => {
                let (onward, batches) = mpsc::sync_channel::<Vec<Row>>(1);
                let give_back = give_back.clone();
                let second = std::thread::Builder::new()
                    .name("report-pass".into())
                    .spawn_scoped(scope, move || {
                        for mut batch in batches {
                            batch.iter().for_each(&mut then);
                            batch.clear();
                            let _ = give_back.send(batch);
                        }
                    })
                    .expect("cannot start the thread of the records' second pass");
                (Some(onward), Some(second))
            }
            None => (None, None),
        };
        for mut batch in filled {
            batch.iter().for_each(&mut each);
            match &onward {
                // Gone only if the second pass panicked: its join below says so.
                Some(onward) => {
                    if onward.send(batch).is_err() {
                        break;
                    }
                }
                None => {
                    batch.clear();
                    // An error only when the reader has finished: the batch is not needed.
                    let _ = give_back.send(batch);
                }
            }
        }
        drop(onward);
        if let Some(second) = second
            && let Err(panic) = second.join()
        {
            std::panic::resume_unwind(panic);
        }
        reader
            .join()
            .expect("the thread reading the records panicked")
    })
}

/// The reading side of [`for_each_row`]: rows gathered into batches, each sent when full.
struct Batches {
    full: mpsc::SyncSender<Vec<Row>>,
    /// Batches `each` is done with, to be filled again.
    empty: mpsc::Receiver<Vec<Row>>,
    batch: Vec<Row>,
    /// Whether the receiving side has gone (`each` panicked): the rest is not read.
    gone: bool,
}

impl Batches {
    #[inline]
    fn push(&mut self, row: Row) {
        if self.gone {
            return;
        }
        self.batch.push(row);
        if self.batch.len() == BATCH_ROWS {
            self.send();
        }
    }

    fn send(&mut self) {
        if self.batch.is_empty() || self.gone {
            return;
        }
        let next = self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH_ROWS));
        self.gone = self
            .full
            .send(std::mem::replace(&mut self.batch, next))
            .is_err();
    }
}

fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "parquet")
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| InputError::new(path, format!("cannot open: {e}")))
}

/// A Parquet reader whose columns have been checked against the records' schema.
fn parquet_reader(path: &Path) -> Result<ParquetReader<File>> {
    let mut reader = ParquetReader::new(open(path)?);
    let names: Vec<String> = reader
        .schema()
        .map_err(|e| {
            InputError::new(
                path,
                format!("not a readable Parquet file: {}", polars_message(&e)),
            )
        })?
        .iter_names()
        .map(|n| n.to_string())
        .collect();
    check_columns(path, &names)?;
    Ok(ParquetReader::new(open(path)?))
}

/// Reads `columns` (by name) of rows `slice` (offset, length) of a Parquet record file.
fn read_parquet(path: &Path, columns: &[&str], slice: Option<(usize, usize)>) -> Result<DataFrame> {
    parquet_reader(path)?
        .with_columns(Some(columns.iter().map(|c| c.to_string()).collect()))
        .with_slice(slice)
        .finish()
        .map_err(|e| InputError::new(path, format!("cannot read: {}", polars_message(&e))))
}

/// Reads a CSV record file, `columns` only (all if `None`). The header is checked against
/// the records' schema first, and each column gets the type of the schema column of the same
/// name, so that types follow names, never positions.
fn read_csv(path: &Path, columns: Option<&[&str]>) -> Result<DataFrame> {
    let header = csv_header(path)?;
    check_columns(path, &header)?;
    dhumbal_runner::records::read_csv(path, columns)
        .map_err(|e| InputError::new(path, format!("cannot parse: {}", polars_message(&e))))
}

/// A Polars error without its advice, which is about Polars' own options (Python's at that).
fn polars_message(e: &polars_core::prelude::PolarsError) -> String {
    e.to_string()
        .split("\n\n")
        .map(str::trim)
        .filter(|p| {
            !p.is_empty() && !p.starts_with("You might want") && !p.starts_with("Original error")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The column names of a CSV file's first line.
fn csv_header(path: &Path) -> Result<Vec<String>> {
    let mut line = String::new();
    BufReader::new(open(path)?)
        .read_line(&mut line)
        .map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    let line = line
        .trim_start_matches('\u{feff}')
        .trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() {
        return Err(InputError::new(
            path,
            "the file is empty: no header line, no records",
        ));
    }
    Ok(line
        .split(',')
        .map(|c| c.trim().trim_matches('"').to_string())
        .collect())
}

/// Checks a record file's column names against the records' schema (`docs/records.md`):
/// every column present, none unexpected or repeated, in the documented order. The error names
/// the missing, unexpected, repeated and out-of-order columns.
pub fn check_columns(path: &Path, names: &[String]) -> Result<()> {
    let expected: Vec<String> = dhumbal_runner::records::COLUMNS
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    if names == expected.as_slice() {
        return Ok(());
    }
    let quote = |v: &[&String]| {
        v.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let missing: Vec<&String> = expected.iter().filter(|e| !names.contains(e)).collect();
    // Each name once, in the header's order.
    fn once(v: Vec<&String>) -> Vec<&String> {
        let mut out: Vec<&String> = Vec::new();
        for n in v {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }
    let unexpected = once(names.iter().filter(|n| !expected.contains(n)).collect());
    let repeated = once(
        names
            .iter()
            .enumerate()
            .filter(|(i, n)| names[..*i].contains(n) && expected.contains(n))
            .map(|(_, n)| n)
            .collect(),
    );
    // Among the columns both have, those not where the schema's order puts them.
    let mut seen = Vec::new();
    let common_got: Vec<&String> = names
        .iter()
        .filter(|n| {
            let first = expected.contains(n) && !seen.contains(n);
            seen.push(*n);
            first
        })
        .collect();
    let common_want: Vec<&String> = expected.iter().filter(|e| names.contains(e)).collect();
    let misordered: Vec<&String> = common_got
        .iter()
        .zip(&common_want)
        .filter(|(g, w)| g != w)
        .map(|(g, _)| *g)
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("missing {}", quote(&missing)));
    }
    if !unexpected.is_empty() {
        problems.push(format!("unexpected {}", quote(&unexpected)));
    }
    if !repeated.is_empty() {
        problems.push(format!("repeated {}", quote(&repeated)));
    }
    if !misordered.is_empty() {
        problems.push(format!("out of order {}", quote(&misordered)));
    }
    Err(InputError::new(
        path,
        format!(
            "the columns are not those of the records (docs/records.md): {}; expected {}",
            problems.join("; "),
            expected.join(",")
        ),
    ))
}

/// Walks one frame row by row.
fn visit(
    df: &DataFrame,
    agents: Option<Vec<u8>>,
    slots: &HashMap<&str, u8>,
    path: &Path,
    each: &mut impl FnMut(Row),
) -> Result<u64> {
    // The agent column by its codes when it is an `Enum` (as dhumbal-run writes it): each
    // category's name looked up once, not a string made per row.
    let coded = match agents {
        Some(agents) if agents.len() == df.height() => Some(AgentSlots::Whole(agents)),
        Some(_) => {
            return Err(InputError::new(
                path,
                "column `agent`: not as many values as the other columns",
            ));
        }
        None => agent_slots(df, slots, path)?.map(AgentSlots::Maybe),
    };
    let cols = read_columns(df, coded.is_some(), path)?;
    let null = |name: &str| empty_value(path, name);
    let names = match coded {
        Some(_) => None,
        None => Some(
            cols["agent"]
                .str()
                .map_err(|e| column_error(path, "agent", e))?,
        ),
    };
    let columns = RecordColumns::of(&cols, path)?;
    let rows = df.height();
    let mut last: Option<(&str, u8)> = None;
    let mut named = names.map(|c| c.iter());
    for i in 0..rows {
        let slot = match (&coded, &mut named) {
            (Some(codes), _) => match codes.get(i) {
                Some(slot) => slot,
                None => return Err(null("agent")),
            },
            (None, Some(names)) => {
                let id = names.next().flatten().ok_or_else(|| null("agent"))?;
                match last {
                    Some((prev, slot)) if prev == id => slot,
                    _ => {
                        let slot = slot_of(slots, id, path)?;
                        last = Some((id, slot));
                        slot
                    }
                }
            }
            (None, None) => unreachable!("the agent column is read one way or the other"),
        };
        each(columns.row(i, slot, path)?);
    }
    Ok(rows as u64)
}

/// The columns the analysis reads (`agent` left out when it is `coded`), each by its name, cast
/// to the type the record schema gives it.
fn read_columns(
    df: &DataFrame,
    coded: bool,
    path: &Path,
) -> Result<HashMap<&'static str, polars_core::prelude::Column>> {
    let col = |name: &str| -> Result<polars_core::prelude::Column> {
        let ty = dhumbal_runner::records::column(name)
            .map(|c| c.ty.dtype())
            .ok_or_else(|| InputError::new(path, format!("`{name}` is not a record column")))?;
        df.column(name)
            .map_err(|_| InputError::new(path, format!("no column `{name}`")))?
            .strict_cast(&ty)
            .map_err(|e| {
                InputError::new(
                    path,
                    format!("column `{name}` is not {ty}: {}", polars_message(&e)),
                )
            })
    };
    READ.iter()
        .filter(|&&name| !(name == "agent" && coded))
        .map(|&name| col(name).map(|c| (name, c)))
        .collect()
}

/// A column that is not of the type it was cast to.
fn column_error(path: &Path, name: &str, e: polars_core::prelude::PolarsError) -> InputError {
    InputError::new(path, format!("column `{name}`: {}", polars_message(&e)))
}

/// The columns of a frame but `agent`, each as one Arrow array read by row index: Polars'
/// iterators of optional values cost more than the rest of the conversion.
struct RecordColumns {
    deal: Values<u64>,
    rotation: Values<u32>,
    round: Values<u32>,
    seat: Values<u32>,
    starter: Bits,
    won: Bits,
    called: Bits,
    success: Bits,
    coin: Values<i64>,
    points: Values<i64>,
    hand: Values<u32>,
    cards: Values<u32>,
    turns: Values<u32>,
    decisions: Values<u32>,
    ns: Values<u64>,
    game_won: Bits,
}

impl RecordColumns {
    fn of(
        cols: &HashMap<&str, polars_core::prelude::Column>,
        path: &Path,
    ) -> Result<RecordColumns> {
        let typed = |name: &str, e| column_error(path, name, e);
        let u64s = |n: &str| cols[n].u64().map(Values::of).map_err(|e| typed(n, e));
        let u32s = |n: &str| cols[n].u32().map(Values::of).map_err(|e| typed(n, e));
        let i64s = |n: &str| cols[n].i64().map(Values::of).map_err(|e| typed(n, e));
        let bools = |n: &str| cols[n].bool().map(Bits::of).map_err(|e| typed(n, e));
        Ok(RecordColumns {
            deal: u64s("deal")?,
            rotation: u32s("rotation")?,
            round: u32s("round")?,
            seat: u32s("seat")?,
            starter: bools("starter")?,
            won: bools("won")?,
            called: bools("called")?,
            success: bools("call_success")?,
            coin: i64s("coin_delta")?,
            points: i64s("points_delta")?,
            hand: u32s("hand_value")?,
            cards: u32s("cards_discarded")?,
            turns: u32s("turns")?,
            decisions: u32s("decisions")?,
            ns: u64s("decision_ns")?,
            game_won: bools("game_won")?,
        })
    }

    /// Row `i`, played by `slot`.
    // Always: it is the body of `visit`'s loop, a call per row otherwise.
    #[inline(always)]
    fn row(&self, i: usize, slot: u8, path: &Path) -> Result<Row> {
        // A `match` rather than `ok_or_else`, which was not inlined: a call per value.
        macro_rules! at {
            ($column:ident, $name:literal) => {
                match self.$column.get(i) {
                    Some(value) => value,
                    None => return Err(empty_value(path, $name)),
                }
            };
        }
        Ok(Row {
            slot,
            deal: at!(deal, "deal"),
            rotation: at!(rotation, "rotation"),
            round: at!(round, "round"),
            seat: at!(seat, "seat"),
            starter: at!(starter, "starter"),
            won: at!(won, "won"),
            called: at!(called, "called"),
            call_success: at!(success, "call_success"),
            coin_delta: at!(coin, "coin_delta"),
            points_delta: at!(points, "points_delta"),
            hand_value: at!(hand, "hand_value"),
            cards_discarded: at!(cards, "cards_discarded"),
            turns: at!(turns, "turns"),
            decisions: at!(decisions, "decisions"),
            decision_ns: self.ns.get(i),
            game_won: at!(game_won, "game_won"),
        })
    }
}

/// The error for an empty value in a column that must have one (out of the row loop's way).
#[cold]
fn empty_value(path: &Path, name: &str) -> InputError {
    InputError::new(path, format!("column `{name}` has an empty value"))
}

/// A numeric column by row index, as one chunk (a part's columns are one chunk each already;
/// only a frame of several, a CSV or a file of several row groups, is copied into one).
struct Values<T: NativeType> {
    values: PrimitiveArray<T>,
    /// `None` when every value is present.
    valid: Option<Bitmap>,
}

impl<T: NativeType> Values<T> {
    fn of<P: PolarsNumericType<Native = T>>(ca: &ChunkedArray<P>) -> Values<T> {
        if ca.chunks().is_empty() {
            // No rows: nothing to read (and no array to rechunk into).
            return Values {
                values: PrimitiveArray::from_vec(Vec::new()),
                valid: None,
            };
        }
        let ca = ca.rechunk();
        let array = ca.downcast_as_array();
        Values {
            values: array.clone(),
            valid: array.validity().filter(|v| v.unset_bits() > 0).cloned(),
        }
    }

    // Always: `#[inline]` left it a call per value in `visit`'s long loop body.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<T> {
        match &self.valid {
            Some(valid) if !valid.get_bit(i) => None,
            _ => Some(self.values.value(i)),
        }
    }
}

/// A Boolean column by row index, as one chunk (see [`Values`]).
struct Bits {
    values: Bitmap,
    valid: Option<Bitmap>,
}

impl Bits {
    fn of(ca: &BooleanChunked) -> Bits {
        if ca.chunks().is_empty() {
            return Bits {
                values: Bitmap::new(),
                valid: None,
            };
        }
        let ca = ca.rechunk();
        let array = ca.downcast_as_array();
        Bits {
            values: array.values().clone(),
            valid: array.validity().filter(|v| v.unset_bits() > 0).cloned(),
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<bool> {
        match &self.valid {
            Some(valid) if !valid.get_bit(i) => None,
            _ => Some(self.values.get_bit(i)),
        }
    }
}

/// The slot of agent `id`, or an error naming the stage's agents.
fn slot_of(slots: &HashMap<&str, u8>, id: &str, path: &Path) -> Result<u8> {
    slots.get(id).copied().ok_or_else(|| {
        let mut known: Vec<&str> = slots.keys().copied().collect();
        known.sort_unstable();
        InputError::new(
            path,
            format!(
                "agent `{id}` is not one of this stage's agents ({})",
                known.join(", ")
            ),
        )
    })
}

/// The agent column of `df` as slots (`None` for an empty value), when it is an `Enum` or a
/// `Categorical`: the codes read as they are stored and each category's name looked up once.
/// `Ok(None)` for a column of strings (a dataset another tool wrote), which is read by name.
fn agent_slots(
    df: &DataFrame,
    slots: &HashMap<&str, u8>,
    path: &Path,
) -> Result<Option<Vec<Option<u8>>>> {
    let Ok(column) = df.column("agent") else {
        return Ok(None);
    };
    if !matches!(
        column.dtype(),
        DataType::Enum(..) | DataType::Categorical(..)
    ) {
        return Ok(None);
    }
    let mut table = CodeSlots::default();
    let mut slot =
        |code: usize, mapping: &polars_core::prelude::CategoricalMapping| -> Result<u8> {
            table
                .get(code, || mapping.cat_to_str(code as _), slots, path)?
                .ok_or_else(|| {
                    InputError::new(path, format!("column `agent`: code {code} has no category"))
                })
        };
    let mut out = Vec::with_capacity(df.height());
    macro_rules! read {
        ($ca:expr) => {{
            let ca = $ca;
            let mapping = ca.get_mapping().clone();
            for code in ca.physical().iter() {
                out.push(match code {
                    Some(c) => Some(slot(c as usize, &mapping)?),
                    None => None,
                });
            }
        }};
    }
    let bad = |e: polars_core::prelude::PolarsError| {
        InputError::new(path, format!("column `agent`: {}", polars_message(&e)))
    };
    if let Ok(ca) = column.cat8() {
        read!(ca)
    } else if let Ok(ca) = column.cat16() {
        read!(ca)
    } else {
        read!(column.cat32().map_err(bad)?)
    }
    Ok(Some(out))
}

/// A frame's `agent` column as slots, row by row.
enum AgentSlots {
    /// Decoded from the part's pages ([`part_agents`]): a value in every row.
    Whole(Vec<u8>),
    /// From a Polars Enum ([`agent_slots`]), which may have empty values.
    Maybe(Vec<Option<u8>>),
}

impl AgentSlots {
    #[inline(always)]
    fn get(&self, i: usize) -> Option<u8> {
        match self {
            AgentSlots::Whole(slots) => Some(slots[i]),
            AgentSlots::Maybe(slots) => slots[i],
        }
    }
}

/// A dataset part's `agent` column as slots, decoded here from its pages: the dictionary's
/// few names looked up once, each row's code mapped through them. Polars would turn every
/// row's code into its string and hash that into its Enum, 0.15 of the 0.95 CPU-seconds of a
/// million rounds' report. `None` where the column is not what this program writes (a
/// dictionary of strings with u32 codes, no value missing): Polars reads it then, and says
/// what is wrong with it if anything is.
pub fn part_agents(path: &Path, slots: &HashMap<&str, u8>) -> Result<Option<Vec<u8>>> {
    use polars_parquet::arrow::read as pq;
    let bytes =
        std::fs::read(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    let buffer = polars_buffer::Buffer::from(bytes);
    let Ok(meta) = pq::read_metadata(&mut std::io::Cursor::new(buffer.clone())) else {
        return Ok(None);
    };
    let Ok(schema) = pq::infer_schema(&meta) else {
        return Ok(None);
    };
    let Some(field) = schema.get("agent") else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(meta.num_rows);
    for group in &meta.row_groups {
        let Some(&[index]) = group.columns_idxs_under_root_iter("agent") else {
            return Ok(None);
        };
        let column = &group.parquet_columns()[index];
        let Ok(pages) = pq::get_page_iterator(
            column,
            std::io::Cursor::new(buffer.clone()),
            vec![],
            usize::MAX,
        ) else {
            return Ok(None);
        };
        let decoded = pq::column_iter_to_arrays(
            vec![pq::BasicDecompressor::new(pages, vec![])],
            vec![&column.descriptor().descriptor.primitive_type],
            field.clone(),
            None,
        );
        let Ok((arrays, _)) = decoded else {
            return Ok(None);
        };
        for array in arrays {
            // Polars' Enum codes are as narrow as its categories allow (u8 up to 256).
            let array = &*array;
            let decoded = dictionary_slots::<u8>(array, slots, path, &mut out)?
                || dictionary_slots::<u16>(array, slots, path, &mut out)?
                || dictionary_slots::<u32>(array, slots, path, &mut out)?;
            if !decoded {
                return Ok(None);
            }
        }
    }
    Ok((out.len() == meta.num_rows).then_some(out))
}

/// `array`'s codes as slots, appended to `out`, if it is a dictionary of `K` codes over names,
/// none missing (`Ok(false)`, and `out` not to be used, otherwise).
fn dictionary_slots<K: DictionaryKey>(
    array: &dyn Array,
    slots: &HashMap<&str, u8>,
    path: &Path,
    out: &mut Vec<u8>,
) -> Result<bool> {
    let Some(dict) = array.as_any().downcast_ref::<DictionaryArray<K>>() else {
        return Ok(false);
    };
    let Some(names) = dict.values().as_any().downcast_ref::<Utf8ViewArray>() else {
        return Ok(false);
    };
    if dict.null_count() > 0 || names.null_count() > 0 {
        return Ok(false);
    }
    let mut table = CodeSlots::default();
    for code in dict.keys_values_iter() {
        let name = || (code < names.len()).then(|| names.value(code));
        match table.get(code, name, slots, path)? {
            Some(slot) => out.push(slot),
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// Each agent code's slot, looked up the first time a row uses the code (an Enum's or a
/// dictionary's: a few names, many rows).
#[derive(Default)]
struct CodeSlots(Vec<Option<u8>>);

impl CodeSlots {
    /// The slot of the agent `code` stands for (`name` gives its name, `None` if it has none;
    /// then `Ok(None)`). An agent the stage does not have is an error ([`slot_of`]).
    fn get<'n>(
        &mut self,
        code: usize,
        name: impl FnOnce() -> Option<&'n str>,
        slots: &HashMap<&str, u8>,
        path: &Path,
    ) -> Result<Option<u8>> {
        if let Some(Some(slot)) = self.0.get(code) {
            return Ok(Some(*slot));
        }
        let Some(name) = name() else {
            return Ok(None);
        };
        let slot = slot_of(slots, name, path)?;
        if self.0.len() <= code {
            self.0.resize(code + 1, None);
        }
        self.0[code] = Some(slot);
        Ok(Some(slot))
    }
}

/// Describes the stage in `dir`: from the run's `manifest.json` (in `dir` or its parent),
/// else from `summary.csv` and the records.
pub fn stage_info(dir: &Path) -> Result<StageInfo> {
    for run in [dir.to_path_buf(), dir.join("..")] {
        if run.join(MANIFEST_FILE).is_file()
            && let Some(info) = from_manifest(&read_manifest(&run)?, &run, dir)
        {
            return Ok(info);
        }
    }
    infer(dir)
}

/// Stage folders of a run: the stages listed in `root/manifest.json`, else `root` itself if it
/// holds records, else every subfolder that does.
pub fn stage_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    if root.join(MANIFEST_FILE).is_file() {
        let m = read_manifest(root)?;
        let mut dirs = Vec::new();
        for stage in &m.stages {
            let sub = root.join(&stage.name);
            if !stage.name.is_empty() && record_file(&sub).is_some() {
                dirs.push(sub);
            } else if record_file(root).is_some() {
                dirs.push(root.to_path_buf());
            }
        }
        dirs.dedup();
        if !dirs.is_empty() {
            return Ok(dirs);
        }
    }
    if record_file(root).is_some() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(|e| InputError::new(root, format!("cannot read the folder: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && record_file(p).is_some())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(InputError::new(
            root,
            "holds no records (a rounds/ dataset, rounds.parquet or rounds.csv), neither itself \
             nor in a subfolder",
        ));
    }
    Ok(dirs)
}

/// The file of a run that describes its stages.
const MANIFEST_FILE: &str = "manifest.json";

/// The manifest of the run in `run` (a file that does not read is bad input).
fn read_manifest(run: &Path) -> Result<Manifest> {
    Manifest::read(run).map_err(|e| InputError::new(&run.join(MANIFEST_FILE), e.to_string()))
}

/// The stage of `m` (the manifest in `run`) whose folder is `dir`: a stage named like
/// `dir`'s last component, or the only stage when the records sit next to the manifest.
fn from_manifest(m: &Manifest, run: &Path, dir: &Path) -> Option<StageInfo> {
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    let i = if same(run, dir) && m.stages.len() == 1 {
        0
    } else {
        (m.stages.iter()).position(|s| Some(s.name.as_str()) == folder.as_deref())?
    };
    let stage = &m.stages[i];
    let spec = m.scenario.stages.get(i);
    let agents: Vec<String> = stage.agents.iter().map(|a| a.id.clone()).collect();
    let kinds = (stage.agents.iter())
        .map(|a| match (&a.kind, &a.script) {
            (Some(kind), _) => kind.clone(),
            (None, Some(script)) => format!("script:{script}"),
            (None, None) => String::new(),
        })
        .collect();
    if agents.is_empty() {
        return None;
    }
    let rules = spec.map(|s| &s.rules);
    Some(StageInfo {
        name: stage.name.clone(),
        players: (rules.and_then(|r| r.players)).map_or(agents.len(), usize::from),
        agents,
        kinds,
        seating: spec.map_or(Seating::Fixed, |s| s.seating),
        points: rules.and_then(|r| r.scoring) == Some(ScoringName::Points),
        session: spec.and_then(|s| s.session),
        seed: Some(spec.map_or(m.seed, |s| s.seed)),
        source: "manifest.json".into(),
    })
}

fn same(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Without a manifest: agents in `summary.csv` order (slot order), else in order of first
/// appearance; the seating from the number of arrangements in the records.
fn infer(dir: &Path) -> Result<StageInfo> {
    let mut agents: Vec<String> = Vec::new();
    let mut kinds = Vec::new();
    let mut source = "records";
    let summary = dir.join("summary.csv");
    if summary.is_file() {
        let bad = |e: csv::Error| InputError::new(&summary, format!("cannot read: {e}"));
        let mut reader = csv::Reader::from_path(&summary).map_err(bad)?;
        let header = reader.headers().map_err(bad)?.clone();
        let (a, k) = (
            header.iter().position(|h| h == "agent"),
            header.iter().position(|h| h == "kind"),
        );
        if let Some(a) = a {
            for record in reader.records() {
                let record = record.map_err(bad)?;
                if let Some(id) = record.get(a) {
                    agents.push(id.to_string());
                    kinds.push(k.and_then(|k| record.get(k)).unwrap_or("").to_string());
                }
            }
            source = "summary.csv";
        }
    }
    let path = record_file(dir).ok_or_else(|| InputError::new(dir, NO_RECORDS))?;
    let wanted = [
        "stage",
        "agent",
        "rotation",
        "seat",
        "points_delta",
        "coin_delta",
    ];
    let infer_agents = agents.is_empty();
    let (mut rows, mut max_rotation, mut max_seat) = (0usize, 0u64, 0u64);
    let mut points = false;
    let mut name: Option<String> = None;
    for_each_frame(dir, &wanted, |df, path| {
        let bad = |e: polars_core::prelude::PolarsError| InputError::new(path, polars_message(&e));
        // Enum columns (parts) and strings (CSV) alike.
        let text = |column: &str| {
            df.column(column)
                .and_then(|c| c.cast(&DataType::String))
                .map_err(bad)
        };
        rows += df.height();
        if infer_agents {
            let ids = text("agent")?;
            for id in ids.str().map_err(bad)?.iter().flatten() {
                if !agents.iter().any(|a| a == id) {
                    agents.push(id.to_string());
                }
            }
        }
        let max_of = |column: &str| -> Result<u64> {
            Ok(df
                .column(column)
                .and_then(|c| c.cast(&DataType::UInt64))
                .map_err(bad)?
                .u64()
                .map_err(bad)?
                .iter()
                .flatten()
                .max()
                .unwrap_or(0))
        };
        max_rotation = max_rotation.max(max_of("rotation")?);
        max_seat = max_seat.max(max_of("seat")?);
        points |= df
            .column("points_delta")
            .and_then(|c| c.cast(&DataType::Int64))
            .map_err(bad)?
            .i64()
            .map_err(bad)?
            .iter()
            .any(|v| v.is_some_and(|v| v != 0));
        if name.is_none() {
            name = text("stage")?
                .str()
                .map_err(bad)?
                .iter()
                .flatten()
                .next()
                .map(str::to_string);
        }
        Ok(())
    })?;
    if rows == 0 {
        return Err(no_rounds(&path));
    }
    if infer_agents {
        kinds = vec![String::new(); agents.len()];
    }
    let arrangements = max_rotation + 1;
    let players = (max_seat + 1) as usize;
    let seating = if arrangements == 1 {
        Seating::Fixed
    } else if arrangements == players as u64 && players > 2 {
        Seating::Rotate
    } else {
        Seating::Permute
    };
    let name = name.unwrap_or_default();
    Ok(StageInfo {
        name,
        agents,
        kinds,
        seating,
        points,
        players,
        session: None,
        seed: None,
        source: source.into(),
    })
}

/// The error for a record file without a single round.
pub fn no_rounds(path: &Path) -> InputError {
    InputError::new(
        path,
        "holds no rounds (a header without records?): nothing to analyse",
    )
}
