//! A study's records (`records/<code>-game-NNN.parquet`, one file per game played): the
//! record columns of `docs/records.md` (the stage `study`, the agent the seat's id: `human`
//! for the person), then `participant` (the code) and `human` (the row is the person's).
//! `deal` is the game's number (the same cards for every participant's game g).

use std::path::Path;

use polars_core::prelude::{
    BooleanType, ChunkedArray, Column, DataFrame, Int64Type, PolarsDataType, PolarsPhysicalType,
    StringType, UInt32Type, UInt64Type,
};
use polars_io::prelude::ParquetWriter;

use super::Folder;
use crate::error::{Doing, Error, Result};
use crate::records::{Categories, Records};

/// The columns a study adds to the records.
pub const STUDY_COLUMNS: [(&str, &str); 2] = [
    ("participant", "the participant's code"),
    ("human", "this row is the participant's seat"),
];

/// Writes game `g` of `code` (`ids`: each seat's agent id, `human` for the person), whole:
/// a temporary file synced, then renamed.
pub(super) fn write(
    folder: &Folder,
    code: &str,
    g: u32,
    ids: &[String],
    rows: &Records,
) -> Result<()> {
    let path = folder.records_path(code, g);
    let dir = folder.records_dir();
    std::fs::create_dir_all(&dir).doing("cannot create", &dir)?;
    let n = rows.len();
    let cats = Categories::new("study", ids).doing("cannot write", &path)?;
    let mut df = crate::records::frame(std::slice::from_ref(rows), &cats)
        .and_then(|mut df| {
            df.with_column(Column::new("participant".into(), vec![code.to_string(); n]))?;
            df.with_column(Column::new(
                "human".into(),
                rows.rows()
                    .iter()
                    .map(|r| ids[r.slot as usize] == "human")
                    .collect::<Vec<bool>>(),
            ))?;
            Ok(df)
        })
        .doing("cannot write", &path)?;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&tmp).doing("cannot write", &tmp)?;
    ParquetWriter::new(&mut file)
        .finish(&mut df)
        .doing("cannot write", &tmp)?;
    file.sync_data().doing("cannot write", &tmp)?;
    std::fs::rename(&tmp, &path).doing("cannot write", &path)
}

/// A study's record row, as the analysis reads it back.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyRow {
    pub participant: String,
    pub human: bool,
    pub agent: String,
    /// The game's number.
    pub deal: u64,
    pub round: u32,
    pub seat: u32,
    pub won: bool,
    pub standing: i64,
    pub coin_delta: i64,
    pub points_delta: i64,
    pub decisions: u32,
    pub decision_ns: Option<u64>,
    pub game_won: bool,
}

/// Every record of the study in `dir` (its `records/`), file by file in name order, each
/// column found by name and checked for its type.
pub fn read(dir: &Path) -> Result<Vec<StudyRow>> {
    let records = dir.join("records");
    let mut paths: Vec<_> = match std::fs::read_dir(&records) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        r => r
            .doing("cannot read", &records)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
            .collect(),
    };
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let df = crate::dataset::read_part(&path, None)?;
        read_frame(&df, &mut out)
            .map_err(|e| Error::Records(format!("{}: {e}", path.display())))?;
    }
    Ok(out)
}

fn read_frame(df: &DataFrame, out: &mut Vec<StudyRow>) -> std::result::Result<(), String> {
    let participant = Col::<StringType>::read(df, "participant")?;
    let human = Col::<BooleanType>::read(df, "human")?;
    let agent = Col::<StringType>::read(df, "agent")?;
    let deal = Col::<UInt64Type>::read(df, "deal")?;
    let round = Col::<UInt32Type>::read(df, "round")?;
    let seat = Col::<UInt32Type>::read(df, "seat")?;
    let won = Col::<BooleanType>::read(df, "won")?;
    let standing = Col::<Int64Type>::read(df, "standing")?;
    let coin = Col::<Int64Type>::read(df, "coin_delta")?;
    let points = Col::<Int64Type>::read(df, "points_delta")?;
    let decisions = Col::<UInt32Type>::read(df, "decisions")?;
    let ns = Col::<UInt64Type>::read(df, "decision_ns")?;
    let game_won = Col::<BooleanType>::read(df, "game_won")?;
    for i in 0..df.height() {
        out.push(StudyRow {
            participant: participant.at(i)?.into(),
            human: human.at(i)?,
            agent: agent.at(i)?.into(),
            deal: deal.at(i)?,
            round: round.at(i)?,
            seat: seat.at(i)?,
            won: won.at(i)?,
            standing: standing.at(i)?,
            coin_delta: coin.at(i)?,
            points_delta: points.at(i)?,
            decisions: decisions.at(i)?,
            decision_ns: ns.values.get(i),
            game_won: game_won.at(i)?,
        });
    }
    Ok(())
}

/// A column of a study's records, found by name and checked for its type: a record column's
/// as `docs/records.md` gives it (an enum's names read as strings), a study column's `T`.
struct Col<T: PolarsDataType> {
    name: &'static str,
    values: ChunkedArray<T>,
}

impl<T: PolarsPhysicalType> Col<T> {
    fn read(df: &DataFrame, name: &'static str) -> std::result::Result<Col<T>, String> {
        let c = df
            .column(name)
            .map_err(|_| format!("no column `{name}`: not a study's records"))?;
        let want = T::get_static_dtype();
        let ok = match crate::records::column(name) {
            Some(def) => def.ty.matches(c.dtype()),
            None => c.dtype() == &want,
        };
        if !ok {
            return Err(format!("column `{name}` is {}, not {want}", c.dtype()));
        }
        let e = |x: polars_core::error::PolarsError| x.to_string();
        let c = c.cast(&want).map_err(e)?;
        let values = c.as_materialized_series().unpack::<T>().map_err(e)?;
        Ok(Col {
            name,
            values: values.clone(),
        })
    }

    /// Row `i`'s value; an empty one is an error.
    fn at(&self, i: usize) -> std::result::Result<T::Physical<'_>, String> {
        let name = self.name;
        self.values
            .get(i)
            .ok_or_else(|| format!("column `{name}` has an empty value"))
    }
}
