//! Per-round records: one row per round and seat, gathered as rows while a unit plays, then
//! encoded a chunk at a time into a part of the stage's Parquet dataset (`part_file.rs`,
//! `dataset.rs`; [`frame`] makes the same columns as a Polars frame). The columns are
//! documented in `docs/records.md`.

use std::path::Path;
use std::sync::Arc;

use polars_core::prelude::{
    Column, DataFrame, DataType, FrozenCategories, NamedFrom, PolarsResult, Schema, Series,
};

use polars_io::prelude::{CsvReadOptions, SerReader};

use dhumbal_game::{EndReason, RoundOutcome};

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

impl Row {
    /// Seat `seat`'s row of the round `o`, played by the agent in `slot` in `deal`'s
    /// `rotation`: `standings` are the table's before the round, `game_winner` the game's
    /// winner once the game is over.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn of_seat(
        o: &RoundOutcome,
        seat: usize,
        slot: usize,
        deal: u64,
        rotation: u32,
        standings: &[i64],
        game_winner: Option<usize>,
        decision_ns: Option<u64>,
    ) -> Row {
        Row {
            slot: slot as u32,
            deal,
            rotation,
            round: o.round,
            seat: seat as u8,
            starter: o.starter == seat,
            won: o.winner == Some(seat),
            called: o.caller == Some(seat),
            call_success: o.caller == Some(seat) && o.call_success,
            coin_delta: o.coin_delta[seat],
            points_delta: o.points_delta[seat],
            standing: standings[seat],
            hand_value: o.hand_values[seat],
            cards_discarded: u32::from(o.cards_discarded[seat]),
            pile_picks: u32::from(o.pile_picks[seat]),
            turns: o.turns,
            end_reason: o.end,
            decisions: u32::from(o.decisions[seat]),
            decision_ns,
            eliminated: o.eliminated[seat],
            game_won: game_winner == Some(seat),
        }
    }
}

/// The rows of one unit (or a chunk of units), in play order.
///
/// Rows are stored whole (one push per seat and round, on the simulation thread); they are
/// turned into a part's columns by the record writer, off that thread.
#[derive(Clone, Debug, Default)]
pub struct Records {
    rows: Vec<Row>,
    rounds: u64,
    /// The unit's trace (file name, JSON Lines in chunks of whole lines), when it was traced.
    pub trace: Option<(String, Vec<Vec<u8>>)>,
}

impl Records {
    /// Room for `rows` rows, so that a unit's records grow without reallocating.
    pub fn with_capacity(rows: usize) -> Records {
        Records {
            rows: Vec::with_capacity(rows),
            rounds: 0,
            trace: None,
        }
    }

    /// Empty records with room for `rows` rows, in `spare`'s memory when it has room: the
    /// buffers of chunks already written go to the next units, so that play does not keep
    /// touching fresh memory (each first touch of a page is a fault, zeroed by the kernel).
    /// Memory more than twice `rows` is given back (units of unbounded games may be long).
    pub fn reuse(mut spare: Records, rows: usize) -> Records {
        spare.rows.clear();
        if spare.rows.capacity() > 2 * rows {
            spare.rows.shrink_to(rows);
        }
        spare.rows.reserve(rows);
        spare.rounds = 0;
        spare.trace = None;
        spare
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Rows these records hold room for.
    pub fn capacity(&self) -> usize {
        self.rows.capacity()
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
    /// One of a fixed list of names (the stage, the stage's agents, the end reasons): an
    /// `Enum` in Polars, a dictionary of strings in Parquet (pandas reads a `category`,
    /// DuckDB a `VARCHAR`), a plain string in CSV.
    Enum,
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
            ColumnType::Enum => "enum (string)",
            ColumnType::OptionalU64 => "u64, nullable",
        }
    }

    /// The Polars type of the column as read from CSV (an enum's names are strings there;
    /// its categories come from the stage, see [`Categories`]).
    pub fn dtype(self) -> DataType {
        match self {
            ColumnType::U64 | ColumnType::OptionalU64 => DataType::UInt64,
            ColumnType::U32 => DataType::UInt32,
            ColumnType::I64 => DataType::Int64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::Enum => DataType::String,
        }
    }

    /// Whether a column read back with type `dtype` is of this type: an enum column is an
    /// `Enum` (Parquet) or a string (CSV, or Parquet written by another tool).
    pub fn matches(self, dtype: &DataType) -> bool {
        match self {
            ColumnType::Enum => {
                matches!(dtype, DataType::Enum(..) | DataType::Categorical(..))
                    || *dtype == DataType::String
            }
            _ => *dtype == self.dtype(),
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

/// The categories of a stage's enum columns, built once per stage: the stage's name, its
/// agents' ids in slot order (so an agent's code is its slot), and the end reasons.
#[derive(Clone, Debug)]
pub struct Categories {
    stage: DataType,
    agent: DataType,
    end_reason: DataType,
    names: CategoryNames,
}

/// The names behind [`Categories`] that a stage chooses, in code order (the end reasons'
/// are [`END_REASONS`]).
#[derive(Clone, Debug)]
pub struct CategoryNames {
    pub stage: String,
    pub agents: Vec<String>,
}

/// Every end reason, in code order.
pub(crate) const END_REASONS: [EndReason; 5] = [
    EndReason::Call,
    EndReason::EmptyHand,
    EndReason::TurnLimit,
    EndReason::StockExhausted,
    EndReason::Horizon,
];

impl Categories {
    /// The categories of `stage` with these agents. Fails on repeated agent ids.
    pub fn new(stage: &str, agent_ids: &[String]) -> PolarsResult<Categories> {
        let enum_of = |names: &mut dyn Iterator<Item = &str>| {
            FrozenCategories::new(names).map(DataType::from_frozen_categories)
        };
        Ok(Categories {
            stage: enum_of(&mut std::iter::once(stage))?,
            agent: enum_of(&mut agent_ids.iter().map(String::as_str))?,
            end_reason: enum_of(&mut END_REASONS.iter().map(|e| e.as_str()))?,
            names: CategoryNames {
                stage: stage.to_string(),
                agents: agent_ids.to_vec(),
            },
        })
    }

    /// The names of the categories, in code order.
    pub fn names(&self) -> &CategoryNames {
        &self.names
    }
}

/// An end reason's code: its place in [`END_REASONS`].
fn end_code(e: EndReason) -> u32 {
    END_REASONS
        .iter()
        .position(|&x| x == e)
        .expect("every end reason is listed") as u32
}

/// A column of codes into `dtype`'s categories.
fn enum_column(name: &str, dtype: &DataType, codes: Vec<u32>) -> PolarsResult<Column> {
    let physical = DataType::from(dtype.cat_physical()?);
    let codes = Series::new(name.into(), codes).cast(&physical)?;
    Ok(Series::from_cats_and_dtype(&codes, dtype, true)?.into())
}

/// The record schema, written once: each column's name, type, meaning and how to get it from
/// a [`Row`]. The column list ([`COLUMNS`]), the frame and so the Parquet schema ([`frame`])
/// and every reader's checks follow from it.
macro_rules! record_schema {
    ($( #[doc = $doc:literal] $name:ident: $ty:ident $(($cats:ident))? = |$r:ident| $get:expr; )+) => {
        /// The record columns, in file order (Parquet schema, CSV header).
        pub const COLUMNS: &[ColumnDef] = &[
            $(ColumnDef { name: stringify!($name), ty: ColumnType::$ty, doc: $doc.trim_ascii() }),+
        ];

        /// The rows of `chunk` as columns, in [`COLUMNS`] order.
        fn columns(chunk: &[Records], cats: &Categories, n: usize) -> PolarsResult<Vec<Column>> {
            let rows = || chunk.iter().flat_map(|r| r.rows.iter());
            Ok(vec![$({
                let mut v = Vec::with_capacity(n);
                v.extend(rows().map(|$r| $get));
                record_schema!(@column $name, v $(, cats.$cats)?)
            }),+])
        }

        /// Encodes each column of a part's row group from its rows, in [`COLUMNS`] order
        /// (`part_file.rs`).
        pub(crate) fn encode_columns(
            group: &mut crate::part_file::RowGroup<'_>,
        ) -> polars_core::prelude::PolarsResult<()> {
            $(record_schema!(@encode group, $ty $(($cats))?, |$r: &Row| $get);)+
            Ok(())
        }
    };
    (@encode $g:ident, U64, $get:expr) => { $g.u64($get)? };
    (@encode $g:ident, U32, $get:expr) => { $g.u32($get)? };
    (@encode $g:ident, I64, $get:expr) => { $g.i64($get)? };
    (@encode $g:ident, Bool, $get:expr) => { $g.bool($get)? };
    (@encode $g:ident, OptionalU64, $get:expr) => { $g.optional_u64($get)? };
    (@encode $g:ident, Enum($cats:ident), $get:expr) => { $g.codes(|s| &s.$cats, $get)? };
    (@column $name:ident, $v:expr) => {
        Column::new(stringify!($name).into(), $v)
    };
    (@column $name:ident, $v:expr, $dtype:expr) => {
        enum_column(stringify!($name), &$dtype, $v)?
    };
}

record_schema! {
    /// the stage name (the scenario name when there are no stages)
    stage: Enum(stage) = |_r| 0u32;
    /// coin scoring: the deal's number (`session index x session + round`), the same under every seating; point scoring: the game's number
    deal: U64 = |r| r.deal;
    /// the seating arrangement: 0 for `fixed` and `random`; the rotation (0..n-1) for `rotate`; the permutation index (lexicographic) for `permute`
    rotation: U32 = |r| r.rotation;
    /// the round within its session (coins) or game (points), from 0
    round: U32 = |r| r.round;
    /// 0-based; seat order is turn order
    seat: U32 = |r| u32::from(r.seat);
    /// the agent's `id`
    agent: Enum(agent) = |r| r.slot;
    /// this seat moved first in the round
    starter: Bool = |r| r.starter;
    /// this seat won the round's showdown
    won: Bool = |r| r.won;
    /// this seat called Jhyap, emptied its hand, or (with `no_call_end: first_minimum_calls`, the paper) was treated as the caller of a forced showdown; `end_reason` tells which
    called: Bool = |r| r.called;
    /// `called` and won
    call_success: Bool = |r| r.call_success;
    /// coins won (+) or paid (-) this round; 0 under point scoring
    coin_delta: I64 = |r| r.coin_delta;
    /// points taken this round; 0 under coin scoring
    points_delta: I64 = |r| r.points_delta;
    /// coins, or cumulative points, after the round
    standing: I64 = |r| r.standing;
    /// value of the hand at the end of the round (for the caller: at the call)
    hand_value: U32 = |r| r.hand_value;
    /// cards this seat actually discarded during the round
    cards_discarded: U32 = |r| r.cards_discarded;
    /// cards this seat took from the pile instead of the stock
    pile_picks: U32 = |r| r.pile_picks;
    /// player-turns in the round, the last one included
    turns: U32 = |r| r.turns;
    /// `call`, `empty_hand`, `turn_limit` or `stock_exhausted`; the enum also lists `horizon` (a search's simulated round cut short by its rollout cap), which never occurs in records
    end_reason: Enum(end_reason) = |r| end_code(r.end_reason);
    /// decisions asked of this seat's agent (call, discard, pick)
    decisions: U32 = |r| r.decisions;
    /// time this seat's agent spent deciding, in nanoseconds; empty unless the deal was timed (one deal in `output.decision_sample`, default 16; never with `output.decision_timing: false`)
    decision_ns: OptionalU64 = |r| r.decision_ns;
    /// point scoring: this seat went out this round
    eliminated: Bool = |r| r.eliminated;
    /// point scoring: the game ended this round and this seat won it
    game_won: Bool = |r| r.game_won;
}

/// A column named `name` of what `of` reads from each of `rows` (a training's episodes, a
/// tuning's evaluations).
pub(crate) fn per_row<R, T>(name: &str, rows: &[R], of: impl Fn(&R) -> T) -> Column
where
    Series: NamedFrom<Vec<T>, [T]>,
{
    Column::new(name.into(), rows.iter().map(of).collect::<Vec<T>>())
}

/// The column named `name`.
pub fn column(name: &str) -> Option<&'static ColumnDef> {
    COLUMNS.iter().find(|c| c.name == name)
}

/// The rows of `chunk` as a DataFrame with the columns of [`COLUMNS`].
pub fn frame(chunk: &[Records], cats: &Categories) -> PolarsResult<DataFrame> {
    let n: usize = chunk.iter().map(Records::len).sum();
    DataFrame::new(n, columns(chunk, cats, n)?)
}

/// A `rounds.csv` read back with the records' schema, `columns` only (all if `None`): the one
/// CSV reader of records (the analysis checks the header against [`COLUMNS`] first). Enum
/// columns read as strings.
pub fn read_csv(path: &Path, columns: Option<&[&str]>) -> PolarsResult<DataFrame> {
    CsvReadOptions::default()
        .with_has_header(true)
        .with_schema(Some(Arc::new(csv_schema())))
        .with_columns(columns.map(|c| c.iter().map(|&n| n.into()).collect()))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))?
        .finish()
}

/// The schema of `rounds.csv`: each column with [`ColumnType::dtype`].
pub fn csv_schema() -> Schema {
    COLUMNS
        .iter()
        .map(|c| (c.name.into(), c.ty.dtype()))
        .collect()
}

#[cfg(test)]
/// `units` units of `rows` rows each, with extreme values, every end reason, and values
/// of `decision_ns` present in runs and alone; a round every three rows (the tests' sample).
pub(crate) fn sample(units: u64, rows: u32) -> Vec<Records> {
    let ends = END_REASONS;
    (0..units)
        .map(|unit| {
            let mut r = Records::with_capacity(rows as usize);
            for i in 0..rows {
                let k = unit * 1_000_003 + u64::from(i);
                if i % 3 == 0 {
                    r.begin_round();
                }
                r.push(Row {
                    slot: ((k + 1) % 3) as u32,
                    deal: k * 7_919,
                    rotation: (k % 5) as u32,
                    round: i / 3,
                    seat: (i % 3) as u8,
                    starter: k % 3 == 0,
                    won: k % 7 < 3,
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
                    turns: 30 + i,
                    end_reason: ends[(k % 5) as usize],
                    decisions: (k % 40) as u32,
                    decision_ns: (k % 100 < 30 || k % 17 == 0).then_some(u64::MAX - k),
                    eliminated: k % 7 == 0,
                    game_won: k % 9 == 0,
                });
            }
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars_io::prelude::{CsvWriter, SerWriter};

    /// Reused records start empty, with room for the rows asked, keeping the memory unless it
    /// is more than twice that.
    #[test]
    fn reused_records_are_empty_and_keep_no_more_than_twice_the_room_asked() {
        let mut big = sample(1, 3000).pop().unwrap();
        big.trace = Some(("t.jsonl".into(), vec![b"{}".to_vec()]));
        let at = big.rows().as_ptr();
        let kept = Records::reuse(big, 2000);
        assert_eq!(
            (kept.len(), kept.rounds(), kept.trace.is_none()),
            (0, 0, true)
        );
        assert!(kept.capacity() >= 2000 && kept.rows().as_ptr() == at);
        let shrunk = Records::reuse(kept, 100);
        assert!(
            (100..=200).contains(&shrunk.capacity()),
            "{}",
            shrunk.capacity()
        );
        assert!(Records::reuse(Records::default(), 50).capacity() >= 50);
    }

    fn cats(stage: &str, ids: &[&str]) -> Categories {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        Categories::new(stage, &ids).unwrap()
    }

    #[test]
    fn frame_has_the_listed_columns_in_order() {
        let df = frame(&sample(3, 12), &cats("s", &["x", "y", "z"])).unwrap();
        assert_eq!(df.height(), 36);
        let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
        let listed: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, listed);
        for (c, col) in COLUMNS.iter().zip(df.columns()) {
            assert!(c.ty.matches(col.dtype()), "{}: {}", c.name, col.dtype());
        }
        // Agents are coded by slot, end reasons by their place in the list.
        let agents = df.column("agent").unwrap().cast(&DataType::String).unwrap();
        assert_eq!(agents.str().unwrap().get(0), Some("y"));
        let ends = df
            .column("end_reason")
            .unwrap()
            .cast(&DataType::String)
            .unwrap();
        assert_eq!(ends.str().unwrap().get(1), Some("empty_hand"));
    }

    /// Repeated agent ids cannot make an enum (the scenario refuses them first).
    #[test]
    fn categories_need_distinct_names() {
        assert!(Categories::new("s", &["a".into(), "a".into()]).is_err());
    }

    /// Polars' CSV of a frame reads back, with the CSV schema, to the same values (enum
    /// columns as their names), with plain and awkward names (a separator, quotes, a line
    /// break).
    #[test]
    fn csv_reads_back_as_the_frame() {
        let dir = tempfile::tempdir().unwrap();
        for (stage, ids) in [
            ("paper", ["aggressive", "conservative", "balanced"]),
            ("a,b", ["say \"hi\"", "two\nlines", "plain"]),
        ] {
            let mut df = frame(&sample(3, 12), &cats(stage, &ids)).unwrap();
            let path = dir.path().join("rounds.csv");
            let mut file = std::fs::File::create(&path).unwrap();
            CsvWriter::new(&mut file).finish(&mut df).unwrap();
            let back = read_csv(&path, None).unwrap();
            let as_text = df
                .columns()
                .iter()
                .map(|c| match c.dtype() {
                    DataType::Enum(..) => c.cast(&DataType::String).unwrap(),
                    _ => c.clone(),
                })
                .collect::<Vec<_>>();
            let expected = DataFrame::new(df.height(), as_text).unwrap();
            assert!(back.equals_missing(&expected), "{back}\n{expected}");
        }
    }

    /// The columns table of `docs/records.md` is the schema: same names, order, types and
    /// meanings.
    #[test]
    fn docs_list_the_schema() {
        let doc = include_str!("../../../docs/records.md");
        let table: Vec<(String, String, String)> = doc
            .lines()
            .skip_while(|l| !l.starts_with("## Columns of `rounds/`"))
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
}
