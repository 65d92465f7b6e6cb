//! A study's records (`records/<code>-game-NNN.parquet`, one file per game played): the
//! record columns of `docs/records.md` (the stage `study`, the agent the seat's id: `human`
//! for the person), then `participant` (the code) and `human` (the row is the person's).
//! `deal` is the game's number (the same cards for every participant's game g).

use std::path::Path;

use polars_core::prelude::{Column, DataFrame, DataType};
use polars_io::prelude::ParquetWriter;

use dhumbal_game::RoundOutcome;

use super::Folder;
use crate::error::{Doing, Error, Result};
use crate::records::{Categories, Records, Row};

/// The columns a study adds to the records.
pub const STUDY_COLUMNS: [(&str, &str); 2] = [
    ("participant", "the participant's code"),
    ("human", "this row is the participant's seat"),
];

/// Seat `s`'s row of a round of game `deal`.
pub(super) fn row(
    o: &RoundOutcome,
    standings: &[i64],
    s: usize,
    deal: u64,
    leader: Option<usize>,
    ns: u64,
) -> Row {
    Row {
        slot: s as u32,
        deal,
        rotation: 0,
        round: o.round,
        seat: s as u8,
        starter: o.starter == s,
        won: o.winner == Some(s),
        called: o.caller == Some(s),
        call_success: o.caller == Some(s) && o.call_success,
        coin_delta: o.coin_delta[s],
        points_delta: o.points_delta[s],
        standing: standings[s],
        hand_value: o.hand_values[s],
        cards_discarded: u32::from(o.cards_discarded[s]),
        pile_picks: u32::from(o.pile_picks[s]),
        turns: o.turns,
        end_reason: o.end,
        decisions: u32::from(o.decisions[s]),
        decision_ns: Some(ns),
        eliminated: o.eliminated[s],
        game_won: leader == Some(s),
    }
}

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
    let col = |name: &str| {
        df.column(name)
            .map_err(|_| format!("no column `{name}`: not a study's records"))
    };
    let typed = |name: &str, want: DataType| -> std::result::Result<Column, String> {
        let c = col(name)?;
        let ok = match crate::records::column(name) {
            Some(def) => def.ty.matches(c.dtype()),
            None => c.dtype() == &want,
        };
        if !ok {
            return Err(format!("column `{name}` is {}, not {want}", c.dtype()));
        }
        Ok(c.clone())
    };
    let e = |x: polars_core::error::PolarsError| x.to_string();
    let participant = typed("participant", DataType::String)?;
    let participant = participant.str().map_err(e)?;
    let human = typed("human", DataType::Boolean)?;
    let human = human.bool().map_err(e)?;
    let agent = typed("agent", DataType::String)?
        .cast(&DataType::String)
        .map_err(e)?;
    let agent = agent.str().map_err(e)?;
    let deal = typed("deal", DataType::UInt64)?;
    let deal = deal.u64().map_err(e)?;
    let round = typed("round", DataType::UInt32)?;
    let round = round.u32().map_err(e)?;
    let seat = typed("seat", DataType::UInt32)?;
    let seat = seat.u32().map_err(e)?;
    let won = typed("won", DataType::Boolean)?;
    let won = won.bool().map_err(e)?;
    let standing = typed("standing", DataType::Int64)?;
    let standing = standing.i64().map_err(e)?;
    let coin = typed("coin_delta", DataType::Int64)?;
    let coin = coin.i64().map_err(e)?;
    let points = typed("points_delta", DataType::Int64)?;
    let points = points.i64().map_err(e)?;
    let decisions = typed("decisions", DataType::UInt32)?;
    let decisions = decisions.u32().map_err(e)?;
    let ns = typed("decision_ns", DataType::UInt64)?;
    let ns = ns.u64().map_err(e)?;
    let game_won = typed("game_won", DataType::Boolean)?;
    let game_won = game_won.bool().map_err(e)?;
    let missing = |name: &str| format!("column `{name}` has an empty value");
    for i in 0..df.height() {
        out.push(StudyRow {
            participant: participant
                .get(i)
                .ok_or_else(|| missing("participant"))?
                .into(),
            human: human.get(i).ok_or_else(|| missing("human"))?,
            agent: agent.get(i).ok_or_else(|| missing("agent"))?.into(),
            deal: deal.get(i).ok_or_else(|| missing("deal"))?,
            round: round.get(i).ok_or_else(|| missing("round"))?,
            seat: seat.get(i).ok_or_else(|| missing("seat"))?,
            won: won.get(i).ok_or_else(|| missing("won"))?,
            standing: standing.get(i).ok_or_else(|| missing("standing"))?,
            coin_delta: coin.get(i).ok_or_else(|| missing("coin_delta"))?,
            points_delta: points.get(i).ok_or_else(|| missing("points_delta"))?,
            decisions: decisions.get(i).ok_or_else(|| missing("decisions"))?,
            decision_ns: ns.get(i),
            game_won: game_won.get(i).ok_or_else(|| missing("game_won"))?,
        });
    }
    Ok(())
}
