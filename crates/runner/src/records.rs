//! Per-round records: one row per round and seat, gathered as rows while a unit plays, then
//! appended chunk by chunk to `rounds.csv` (written by hand) and `rounds.parquet` (a Polars
//! DataFrame per chunk). The columns are documented in `docs/records.md`.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use polars::io::parquet::write::{BatchedWriter, get_encodings};
use polars::prelude::{
    Column, CompatLevel, CsvReadOptions, DataFrame, DataType, ParquetCompression, ParquetWriter,
    PlSmallStr, PolarsResult, Schema, SerReader,
};
use polars_parquet::write::{
    CompressedPage, Encoding, ParquetType, WriteOptions, array_to_columns, compress,
};

use dhumbal_game::EndReason;

/// One row: a seat's view of one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The agent's slot in the stage's agent list.
    pub slot: u32,
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
    /// Time spent deciding, for rounds whose decisions were timed.
    pub decision_ns: Option<u64>,
    pub eliminated: bool,
    pub game_won: bool,
}

/// The rows of one unit (or a chunk of units), in play order.
///
/// Rows are stored whole (one push per seat and round, on the simulation thread); they are
/// turned into CSV text and Polars columns by the record writer, off that thread.
#[derive(Clone, Debug, Default)]
pub struct Records {
    rows: Vec<Row>,
    rounds: u64,
}

impl Records {
    /// Room for `rows` rows, so that a unit's records grow without reallocating.
    pub fn with_capacity(rows: usize) -> Records {
        Records {
            rows: Vec::with_capacity(rows),
            rounds: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Rounds recorded (rows come one per active seat).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Starts a round.
    pub fn begin_round(&mut self) {
        self.rounds += 1;
    }

    /// Adds one seat's row to the round begun last.
    #[inline]
    pub fn push(&mut self, r: Row) {
        self.rows.push(r);
    }
}

/// The type of a record column, in the files and in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    U64,
    U32,
    I64,
    Bool,
    Text,
    /// A `u64` that may be empty (null in Parquet, an empty CSV field).
    OptionalU64,
}

impl ColumnType {
    /// How `docs/records.md` names the type.
    pub fn describe(self) -> &'static str {
        match self {
            ColumnType::U64 => "u64",
            ColumnType::U32 => "u32",
            ColumnType::I64 => "i64",
            ColumnType::Bool => "bool",
            ColumnType::Text => "string",
            ColumnType::OptionalU64 => "u64, nullable",
        }
    }

    /// The Polars type of the column (Parquet and CSV read back with it).
    pub fn dtype(self) -> DataType {
        match self {
            ColumnType::U64 | ColumnType::OptionalU64 => DataType::UInt64,
            ColumnType::U32 => DataType::UInt32,
            ColumnType::I64 => DataType::Int64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::Text => DataType::String,
        }
    }
}

/// One record column: its name, type and meaning (`docs/records.md` says the same; a test
/// compares them).
#[derive(Clone, Copy, Debug)]
pub struct ColumnDef {
    pub name: &'static str,
    pub ty: ColumnType,
    pub doc: &'static str,
}

/// The stage and agent names of a chunk's rows, as text and as CSV fields.
pub struct Names {
    stage: Name,
    agents: Vec<Name>,
}

struct Name {
    text: String,
    /// The CSV field: quoted when it must be.
    csv: Vec<u8>,
}

impl Name {
    fn new(text: &str) -> Name {
        Name {
            text: text.to_string(),
            csv: csv_field(text),
        }
    }
}

impl Names {
    pub fn new(stage: &str, agent_ids: &[String]) -> Names {
        Names {
            stage: Name::new(stage),
            agents: agent_ids.iter().map(|a| Name::new(a)).collect(),
        }
    }
}

/// A value of a record, as it goes into a CSV line and into a column.
trait Field: Copy {
    type Native;
    fn csv(self, num: &mut itoa::Buffer, out: &mut Vec<u8>);
    fn native(self) -> Self::Native;
}

macro_rules! integer_field {
    ($($t:ty),+) => {$(
        impl Field for $t {
            type Native = $t;
            #[inline]
            fn csv(self, num: &mut itoa::Buffer, out: &mut Vec<u8>) {
                out.extend_from_slice(num.format(self).as_bytes());
            }
            #[inline]
            fn native(self) -> $t {
                self
            }
        }
    )+};
}
integer_field!(u64, u32, i64);

impl Field for bool {
    type Native = bool;
    #[inline]
    fn csv(self, _: &mut itoa::Buffer, out: &mut Vec<u8>) {
        out.extend_from_slice(if self { b"true" } else { b"false" });
    }
    #[inline]
    fn native(self) -> bool {
        self
    }
}

impl Field for Option<u64> {
    type Native = Option<u64>;
    #[inline]
    fn csv(self, num: &mut itoa::Buffer, out: &mut Vec<u8>) {
        if let Some(v) = self {
            out.extend_from_slice(num.format(v).as_bytes());
        }
    }
    #[inline]
    fn native(self) -> Option<u64> {
        self
    }
}

impl<'a> Field for &'a Name {
    type Native = &'a str;
    #[inline]
    fn csv(self, _: &mut itoa::Buffer, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.csv);
    }
    #[inline]
    fn native(self) -> &'a str {
        &self.text
    }
}

/// An end reason's name (never needs quoting).
#[derive(Clone, Copy)]
struct Word(&'static str);

impl Field for Word {
    type Native = &'static str;
    #[inline]
    fn csv(self, _: &mut itoa::Buffer, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
    #[inline]
    fn native(self) -> &'static str {
        self.0
    }
}

/// The record schema, written once: each column's name, type, meaning and how to get it from
/// a [`Row`]. The column list ([`COLUMNS`]), the CSV line ([`CsvFormat`]), the frame and so
/// the Parquet schema ([`frame`], [`schema`]) and every reader's checks follow from it.
macro_rules! record_schema {
    ($( #[doc = $doc:literal] $name:ident: $ty:ident $(per $scope:ident)? = |$r:ident, $cx:ident| $get:expr; )+) => {
        /// The record columns, in file order (CSV header, Parquet schema).
        pub const COLUMNS: &[ColumnDef] = &[
            $(ColumnDef { name: stringify!($name), ty: ColumnType::$ty, doc: $doc.trim_ascii() }),+
        ];

        /// Appends one row as a CSV line.
        #[inline]
        fn csv_line(row: &Row, names: &Names, num: &mut itoa::Buffer, out: &mut Vec<u8>) {
            let mut first = true;
            $(
                if !first {
                    out.push(b',');
                }
                first = false;
                let ($r, $cx) = (row, names);
                Field::csv($get, num, out);
            )+
            let _ = first;
            out.push(b'\n');
        }

        /// The rows of `chunk` as columns, in [`COLUMNS`] order.
        fn columns(chunk: &[Records], names: &Names, n: usize) -> Vec<Column> {
            let rows = || chunk.iter().flat_map(|r| r.rows.iter());
            vec![$({
                let $cx = names;
                record_schema!(@column $($scope)? $name, n, rows, |$r| $get)
            }),+]
        }
    };
    // A column with one value per row.
    (@column $name:ident, $n:expr, $rows:expr, |$r:ident| $get:expr) => {{
        let mut v = Vec::with_capacity($n);
        v.extend($rows().map(|$r| Field::native($get)));
        Column::new(stringify!($name).into(), v)
    }};
    // A name that is the same for every row of a chunk (the stage): one value, not a copy
    // per row.
    (@column chunk $name:ident, $n:expr, $rows:expr, |$r:ident| $get:expr) => {{
        match $rows().next() {
            Some($r) => Column::new_scalar(
                stringify!($name).into(),
                PlSmallStr::from(Field::native($get)).into(),
                $n,
            ),
            None => Column::new(stringify!($name).into(), Vec::<&str>::new()),
        }
    }};
}

record_schema! {
    /// the stage name (the scenario name when there are no stages)
    stage: Text per chunk = |_r, cx| &cx.stage;
    /// coin scoring: the deal's number (`session index x session + round`), the same under every seating; point scoring: the game's number
    deal: U64 = |r, _cx| r.deal;
    /// the seating arrangement: 0 for `fixed` and `random`; the rotation (0..n-1) for `rotate`; the permutation index (lexicographic) for `permute`
    rotation: U32 = |r, _cx| r.rotation;
    /// the round within its session (coins) or game (points), from 0
    round: U32 = |r, _cx| r.round;
    /// 0-based; seat order is turn order
    seat: U32 = |r, _cx| u32::from(r.seat);
    /// the agent's `id`
    agent: Text = |r, cx| &cx.agents[r.slot as usize];
    /// this seat moved first in the round
    starter: Bool = |r, _cx| r.starter;
    /// this seat won the round's showdown
    won: Bool = |r, _cx| r.won;
    /// this seat called Jhyap, emptied its hand, or (with `no_call_end: first_minimum_calls`, the paper) was treated as the caller of a forced showdown; `end_reason` tells which
    called: Bool = |r, _cx| r.called;
    /// `called` and won
    call_success: Bool = |r, _cx| r.call_success;
    /// coins won (+) or paid (-) this round; 0 under point scoring
    coin_delta: I64 = |r, _cx| r.coin_delta;
    /// points taken this round; 0 under coin scoring
    points_delta: I64 = |r, _cx| r.points_delta;
    /// coins, or cumulative points, after the round
    standing: I64 = |r, _cx| r.standing;
    /// value of the hand at the end of the round (for the caller: at the call)
    hand_value: U32 = |r, _cx| r.hand_value;
    /// cards this seat actually discarded during the round
    cards_discarded: U32 = |r, _cx| r.cards_discarded;
    /// cards this seat took from the pile instead of the stock
    pile_picks: U32 = |r, _cx| r.pile_picks;
    /// player-turns in the round, the last one included
    turns: U32 = |r, _cx| r.turns;
    /// `call`, `empty_hand`, `turn_limit` or `stock_exhausted`
    end_reason: Text = |r, _cx| Word(r.end_reason.as_str());
    /// decisions asked of this seat's agent (call, discard, pick)
    decisions: U32 = |r, _cx| r.decisions;
    /// time this seat's agent spent deciding, in nanoseconds; empty unless the deal was timed (one deal in `output.decision_sample`, default 16; never with `output.decision_timing: false`)
    decision_ns: OptionalU64 = |r, _cx| r.decision_ns;
    /// point scoring: this seat went out this round
    eliminated: Bool = |r, _cx| r.eliminated;
    /// point scoring: the game ended this round and this seat won it
    game_won: Bool = |r, _cx| r.game_won;
}

/// The column named `name`.
pub fn column(name: &str) -> Option<&'static ColumnDef> {
    COLUMNS.iter().find(|c| c.name == name)
}

/// The rows of `chunk` as a DataFrame with the columns of [`COLUMNS`].
pub fn frame(chunk: &[Records], stage: &str, agent_ids: &[String]) -> PolarsResult<DataFrame> {
    named_frame(chunk, &Names::new(stage, agent_ids))
}

/// [`frame`] with the names already prepared (the encoder does so once per stage).
fn named_frame(chunk: &[Records], names: &Names) -> PolarsResult<DataFrame> {
    let n: usize = chunk.iter().map(Records::len).sum();
    DataFrame::new(n, columns(chunk, names, n))
}

/// Writes records as CSV text, one line per row, straight from the rows (a generic writer
/// spent most of the record writer's time on per-value dispatch, and this is the widest
/// output of a run).
///
/// The text is what Polars' CSV writer gives for [`frame`] (booleans `true`/`false`, fields
/// quoted only when they hold a comma, a quote or a line break), and Polars reads it back to
/// the same frame (a test checks both).
pub struct CsvFormat {
    names: Names,
}

impl CsvFormat {
    pub fn new(stage: &str, agent_ids: &[String]) -> CsvFormat {
        CsvFormat {
            names: Names::new(stage, agent_ids),
        }
    }

    /// The header line.
    pub fn header(out: &mut Vec<u8>) {
        let names: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        out.extend_from_slice(names.join(",").as_bytes());
        out.push(b'\n');
    }

    /// Appends `rows` to `out`.
    pub fn rows(&self, rows: &[Row], out: &mut Vec<u8>) {
        let mut num = itoa::Buffer::new();
        for r in rows {
            csv_line(r, &self.names, &mut num, out);
        }
    }
}

/// A string as one CSV field, quoted (quotes doubled) when it must be: the project's CSV
/// writer (the `csv` crate) decides, as for every table it writes.
fn csv_field(s: &str) -> Vec<u8> {
    // A lone empty field is written as `""` so that the line is not blank; in a record line
    // it is one of many, and empty is what Polars writes.
    if s.is_empty() {
        return Vec::new();
    }
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record([s]).expect("writing to memory");
    let mut field = w.into_inner().expect("writing to memory");
    field.pop(); // the record's line break
    field
}

/// A chunk's Parquet row groups, encoded and compressed: for each, the number of rows and each
/// column's pages (one group per chunk; none when Parquet is off or the chunk is empty).
///
/// Encoding the Parquet is the larger cost of records, so it is done by
/// [`RecordEncoder::encode`] on several threads at once; the [`RecordWriter`] appends the
/// pages in chunk order.
pub struct Encoded(Vec<(u64, Vec<Vec<CompressedPage>>)>);

/// The Parquet layout of the record columns: what a row group is encoded with.
struct ParquetLayout {
    fields: Vec<ParquetType>,
    encodings: Vec<Vec<Encoding>>,
    options: WriteOptions,
}

/// The compression of `rounds.parquet`.
const PARQUET_COMPRESSION: ParquetCompression = ParquetCompression::Zstd(None);

/// Turns chunks of records into [`Encoded`] row groups; shared by the encoder threads (it only
/// reads its settings).
pub struct RecordEncoder {
    parquet: Option<ParquetLayout>,
    names: Names,
}

impl RecordEncoder {
    /// Encodes one chunk as Parquet row groups (one: the chunk's frame is built whole).
    pub fn encode(&self, chunk: &[Records]) -> anyhow::Result<Encoded> {
        let rows: usize = chunk.iter().map(Records::len).sum();
        Ok(Encoded(match &self.parquet {
            Some(layout) if rows > 0 => layout.row_groups(&named_frame(chunk, &self.names)?)?,
            _ => Vec::new(),
        }))
    }
}

impl ParquetLayout {
    /// The row groups of `df`, one per chunk of its columns: rows and compressed pages,
    /// column by column.
    fn row_groups(&self, df: &DataFrame) -> anyhow::Result<Vec<(u64, Vec<Vec<CompressedPage>>)>> {
        let mut groups = Vec::with_capacity(1);
        for batch in df.iter_chunks(CompatLevel::newest(), false) {
            let mut columns = Vec::with_capacity(self.fields.len());
            for ((array, field), encoding) in batch
                .columns()
                .iter()
                .zip(&self.fields)
                .zip(&self.encodings)
            {
                for pages in array_to_columns(array, field.clone(), self.options, encoding)? {
                    let mut compressed = Vec::new();
                    for page in pages {
                        compressed.push(compress(page?, Vec::new(), self.options.compression)?);
                    }
                    columns.push(compressed);
                }
            }
            groups.push((batch.len() as u64, columns));
        }
        Ok(groups)
    }
}

/// How much CSV text the writer formats before handing it to the file, and in steps of how
/// many rows (about 120 bytes each).
const CSV_PIECE: usize = 128 * 1024;
const CSV_PIECE_ROWS: usize = 512;

/// Appends chunks to `rounds.csv` (the journal; formatted here, a piece at a time) and
/// `rounds.parquet` (row groups encoded by a [`RecordEncoder`]).
pub struct RecordWriter {
    csv: Option<(PathBuf, File)>,
    parquet: Option<(PathBuf, BatchedWriter<File>)>,
    format: CsvFormat,
    /// The CSV text being written (kept to reuse its allocation).
    text: Vec<u8>,
}

impl RecordWriter {
    /// Starts the files in `dir`, and returns the encoder for their chunks. With
    /// `resume_csv_len`, keeps that many bytes of an existing `rounds.csv` (the records of
    /// finished chunks) and rebuilds `rounds.parquet` from them.
    pub fn open(
        dir: &Path,
        stage: &str,
        agent_ids: Vec<String>,
        csv: bool,
        parquet: bool,
        resume_csv_len: Option<u64>,
    ) -> anyhow::Result<(RecordWriter, RecordEncoder)> {
        let csv_path = dir.join("rounds.csv");
        let parquet_path = dir.join("rounds.parquet");
        let mut w = RecordWriter {
            csv: None,
            parquet: None,
            format: CsvFormat::new(stage, &agent_ids),
            text: Vec::new(),
        };
        let mut encoder = RecordEncoder {
            parquet: None,
            names: Names::new(stage, &agent_ids),
        };
        let resume_len = resume_csv_len.filter(|&l| l > 0);
        let mut previous = None;
        if let Some(len) = resume_len {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&csv_path)
                .with_context(|| format!("cannot resume: {} is missing", csv_path.display()))?;
            // Shorter than the saved resume point: the file was cut or replaced since (growing
            // it would pad the journal with zeros).
            let on_disk = file.metadata()?.len();
            if on_disk < len {
                anyhow::bail!(
                    "cannot resume: {} has {on_disk} bytes, fewer than the {len} that progress.json \
                     records as written; it was changed after the run stopped, so rerun without \
                     --resume",
                    csv_path.display()
                );
            }
            file.set_len(len)
                .with_context(|| format!("cannot truncate {}", csv_path.display()))?;
            drop(file);
            if parquet {
                previous =
                    Some(read_csv(&csv_path, None).with_context(|| {
                        format!("cannot read {} to resume", csv_path.display())
                    })?);
            }
        }
        if csv {
            let mut file = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(resume_len.is_none())
                .open(&csv_path)
                .with_context(|| format!("cannot write {}", csv_path.display()))?;
            file.seek(SeekFrom::End(0))?;
            if resume_len.is_none() {
                let mut header = Vec::new();
                CsvFormat::header(&mut header);
                file.write_all(&header)
                    .with_context(|| format!("cannot write {}", csv_path.display()))?;
            }
            w.csv = Some((csv_path, file));
        }
        if parquet {
            let file = File::create(&parquet_path)
                .with_context(|| format!("cannot write {}", parquet_path.display()))?;
            let mut batched = ParquetWriter::new(file)
                .with_compression(PARQUET_COMPRESSION)
                .batched(&schema())?;
            if let Some(df) = previous {
                batched.write_batch(&df)?;
            }
            // The writer's own settings, so that the pages encoded elsewhere fit the file's
            // footer and statistics.
            let options = batched
                .get_writer()
                .lock()
                .expect("not shared yet")
                .options();
            encoder.parquet = Some(ParquetLayout {
                fields: batched.parquet_schema().fields().to_vec(),
                encodings: get_encodings(&polars::io::schema_to_arrow_checked(
                    &schema(),
                    CompatLevel::newest(),
                    "parquet",
                )?)
                .to_vec(),
                options,
            });
            w.parquet = Some((parquet_path, batched));
        }
        Ok((w, encoder))
    }

    /// Appends one chunk, given with its encoded row group; returns the CSV's length
    /// afterwards (the resume point).
    pub fn append(&mut self, chunk: &[Records], encoded: &Encoded) -> anyhow::Result<u64> {
        if let Some((path, file)) = &mut self.csv {
            // Written in pieces while they are still in the cache: copying a whole chunk's
            // text into the page cache after formatting it all was the writer's largest cost.
            self.text.clear();
            for rows in chunk.iter().flat_map(|r| r.rows().chunks(CSV_PIECE_ROWS)) {
                self.format.rows(rows, &mut self.text);
                if self.text.len() >= CSV_PIECE {
                    file.write_all(&self.text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    self.text.clear();
                }
            }
            // Synced, so that the resume point saved after this chunk survives a crash of the
            // machine, not only of the run.
            file.write_all(&self.text)
                .and_then(|()| file.sync_data())
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        if let Some((path, w)) = &mut self.parquet {
            for (rows, pages) in &encoded.0 {
                w.write_row_group(*rows, pages)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        match &mut self.csv {
            Some((_, file)) => Ok(file.stream_position()?),
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

/// A `rounds.csv` read back with the records' schema, `columns` only (all if `None`): the one
/// CSV reader of records (the resume and the analysis use it; the analysis checks the header
/// against [`COLUMNS`] first).
pub fn read_csv(path: &Path, columns: Option<&[&str]>) -> PolarsResult<DataFrame> {
    CsvReadOptions::default()
        .with_has_header(true)
        .with_schema(Some(Arc::new(schema())))
        .with_columns(columns.map(|c| c.iter().map(|&n| n.into()).collect()))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))?
        .finish()
}

/// The schema of `rounds.*`: that of an empty frame, so it cannot drift from [`frame`].
pub fn schema() -> Schema {
    let frame = frame(&[], "", &[]).expect("an empty frame builds");
    (**frame.schema()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::{CsvWriter, SerWriter};

    fn sample() -> Vec<Records> {
        let ends = [
            EndReason::Call,
            EndReason::EmptyHand,
            EndReason::TurnLimit,
            EndReason::StockExhausted,
            EndReason::Horizon,
        ];
        let mut chunk = Vec::new();
        for unit in 0..3u64 {
            let mut r = Records::with_capacity(8);
            for round in 0..4u32 {
                r.begin_round();
                for seat in 0..3u8 {
                    let k = unit * 100 + u64::from(round) * 10 + u64::from(seat);
                    r.push(Row {
                        slot: u32::from(seat + 1) % 3,
                        deal: k * 1_000_003,
                        rotation: (k % 5) as u32,
                        round,
                        seat,
                        starter: seat == 0,
                        won: k % 3 == 1,
                        called: k % 4 == 2,
                        call_success: k % 8 == 2,
                        coin_delta: if k % 2 == 0 {
                            -(k as i64)
                        } else {
                            i64::MIN + k as i64
                        },
                        points_delta: k as i64 * 7,
                        standing: i64::MAX - k as i64,
                        hand_value: u32::MAX - k as u32,
                        cards_discarded: k as u32 % 11,
                        pile_picks: 0,
                        turns: 30 + round,
                        end_reason: ends[(k % 5) as usize],
                        decisions: seat.into(),
                        decision_ns: (k % 3 != 0).then_some(u64::MAX - k),
                        eliminated: k % 7 == 0,
                        game_won: k % 9 == 0,
                    });
                }
            }
            chunk.push(r);
        }
        chunk
    }

    /// The hand-written CSV is byte for byte what Polars writes for the same frame, with
    /// plain and awkward names (a separator, quotes, a line break).
    #[test]
    fn csv_text_is_polars_csv_of_the_frame() {
        let chunk = sample();
        for (stage, ids) in [
            ("paper", ["aggressive", "conservative", "balanced"]),
            ("a,b", ["say \"hi\"", "two\nlines", "plain"]),
        ] {
            let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            let mut ours = Vec::new();
            CsvFormat::header(&mut ours);
            let format = CsvFormat::new(stage, &ids);
            for records in &chunk {
                format.rows(records.rows(), &mut ours);
            }
            let mut df = frame(&chunk, stage, &ids).unwrap();
            let mut theirs = Vec::new();
            CsvWriter::new(&mut theirs).finish(&mut df).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs).unwrap()
            );
        }
    }

    #[test]
    fn frame_has_the_listed_columns_in_order() {
        let names: Vec<String> = schema().iter_names().map(|n| n.to_string()).collect();
        let listed: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, listed);
        for (c, (_, dtype)) in COLUMNS.iter().zip(schema().iter()) {
            assert_eq!(&c.ty.dtype(), dtype, "{}", c.name);
        }
        let df = frame(&sample(), "s", &["x".into(), "y".into(), "z".into()]).unwrap();
        assert_eq!(df.height(), 36);
    }

    /// The columns table of `docs/records.md` is the schema: same names, order, types and
    /// meanings.
    #[test]
    fn docs_list_the_schema() {
        let doc = include_str!("../../../docs/records.md");
        let table: Vec<(String, String, String)> = doc
            .lines()
            .skip_while(|l| !l.starts_with("## `rounds.csv`"))
            .filter_map(|l| {
                let cells: Vec<&str> = l
                    .trim()
                    .trim_matches('|')
                    .split(" | ")
                    .map(str::trim)
                    .collect();
                (cells.len() == 3 && cells[0].starts_with('`')).then(|| {
                    (
                        cells[0].trim_matches('`').to_string(),
                        cells[1].to_string(),
                        cells[2].to_string(),
                    )
                })
            })
            .collect();
        let schema: Vec<(String, String, String)> = COLUMNS
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.ty.describe().to_string(),
                    c.doc.to_string(),
                )
            })
            .collect();
        assert_eq!(table[..schema.len().min(table.len())], schema[..]);
    }

    fn three_ids() -> Vec<String> {
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    }

    fn read_parquet(dir: &Path) -> DataFrame {
        let file = File::open(dir.join("rounds.parquet")).unwrap();
        polars::prelude::ParquetReader::new(file).finish().unwrap()
    }

    /// Row groups encoded off the writer (as the encoder threads do) make a Parquet file that
    /// reads back as the frames of the chunks, and the CSV beside it reads back the same.
    #[test]
    fn encoded_chunks_read_back_as_their_frames() {
        let dir = tempfile::tempdir().unwrap();
        let ids = three_ids();
        let (mut writer, encoder) =
            RecordWriter::open(dir.path(), "stage", ids.clone(), true, true, None).unwrap();
        let chunk = sample();
        let (first, second) = chunk.split_at(1);
        // Encoded in the other order from the writing, as parallel encoders may finish.
        let second_encoded = encoder.encode(second).unwrap();
        let first_encoded = encoder.encode(first).unwrap();
        writer.append(first, &first_encoded).unwrap();
        let csv_len = writer.append(second, &second_encoded).unwrap();
        writer.finish().unwrap();
        let expected = frame(&chunk, "stage", &ids).unwrap();
        let parquet = read_parquet(dir.path());
        assert!(parquet.equals_missing(&expected), "{parquet}\n{expected}");
        let csv = read_csv(&dir.path().join("rounds.csv"), None).unwrap();
        assert!(csv.equals_missing(&expected));
        let on_disk = std::fs::metadata(dir.path().join("rounds.csv"))
            .unwrap()
            .len();
        assert_eq!(csv_len, on_disk);
    }

    /// A frame of several chunks becomes one row group per chunk, each with its own rows.
    #[test]
    fn a_frame_of_several_chunks_makes_a_row_group_each() {
        let dir = tempfile::tempdir().unwrap();
        let ids = three_ids();
        let (mut writer, encoder) =
            RecordWriter::open(dir.path(), "s", ids.clone(), false, true, None).unwrap();
        let chunk = sample();
        let mut df = frame(&chunk[..1], "s", &ids).unwrap();
        df.vstack_mut(&frame(&chunk[1..], "s", &ids).unwrap())
            .unwrap();
        assert_eq!(df.first_col_n_chunks(), 2);
        let groups = encoder.parquet.as_ref().unwrap().row_groups(&df).unwrap();
        let rows: Vec<u64> = groups.iter().map(|g| g.0).collect();
        assert_eq!(rows, [12, 24]);
        writer.append(&chunk, &Encoded(groups)).unwrap();
        writer.finish().unwrap();
        let back = read_parquet(dir.path());
        assert!(back.equals_missing(&frame(&chunk, "s", &ids).unwrap()));
    }
}
