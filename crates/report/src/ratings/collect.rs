//! From records to the model's input: [`Collector`] reads a stage's rows, in record order (as
//! `metrics`' one pass is fed them, from a dataset or from a run's tap), into a stratum of a
//! [`Data`]; [`places_from_round`] gives a round's places; [`run_games`] reads every stage of a
//! run into one [`Data`], each stage a stratum, for the leaderboard across stages.
//!
//! Imports: of the report crate only `load` (the rows and the stage's description) and
//! [`super::model`]. Never `metrics`, `analyze`, `figures` or `tables`, nor
//! [`super::present`]: `metrics` feeds the collector, and `load` imports nothing of the crate,
//! so the collector and the model below it stay out of every circle of the crate's modules,
//! and the model stays testable against the `choix` fixtures without records or figures.

use std::path::Path;

use super::model::{Data, FxMap, Model, RatingError};
use crate::load::{Row, StageInfo, for_each_row, stage_info};

/// A round's places from its records: the winner (`won`) first, the other seats by the value
/// of their hands, lower first, equal values tied (docs/analysis.md, "Ratings").
pub fn places_from_round(won: &[bool], hand_values: &[u32]) -> Vec<u32> {
    // Competition ranking: one more than the number of seats strictly ahead.
    let ahead = |s: usize, t: usize| {
        if won[t] != won[s] {
            won[t]
        } else {
            hand_values[t] < hand_values[s]
        }
    };
    (0..won.len())
        .map(|s| (0..won.len()).filter(|&t| ahead(s, t)).count() as u32)
        .collect()
}

/// Collects the games of a stage from its rows, in record order, into a [`Data`] stratum:
/// under coin scoring a round is a game (the winner first, the other seats by the value of
/// their hands, lower first, equal values tied) and a deal with all its seating arrangements
/// a unit; under point scoring a game (one arrangement) is a game, ranked by how long each
/// player lasted (the winner first, then by the last round played, later first, players out
/// in the same round tied), and a game with all its arrangements a unit.
#[derive(Clone, Debug)]
pub struct Collector {
    data: Data,
    stratum: usize,
    /// Agent index in `data` of each slot.
    slots: Vec<usize>,
    points: bool,
    arrangements: u64,
    /// The round being read: (deal, arrangement, round) and its rows (seat, slot, won, hand);
    /// under point scoring `won` is the game won.
    key: Option<(u64, u32, u32)>,
    rows: Vec<(u32, u8, bool, u32)>,
    /// Coin scoring: per deal, the arrangements read and their games (indices into `data`'s
    /// distinct games); spare lists to reuse.
    pending: FxMap<u64, (u64, Vec<u32>)>,
    spare: Vec<Vec<u32>>,
    /// Point scoring: the game being read (deal, arrangement) and per seat its slot, last
    /// round and whether it won; the unit's deal and its finished games.
    game: Option<(u64, u32)>,
    seats: Vec<(u32, u8, u32, bool)>,
    unit: Option<u64>,
    unit_games: Vec<u32>,
    /// Scratch: a game's agents and places.
    agents: Vec<usize>,
    places: Vec<u32>,
    error: Option<RatingError>,
    units: usize,
}

impl Collector {
    /// A collector for one stage, alone.
    pub fn new(info: &StageInfo) -> Collector {
        let n = info.agents.len();
        let model = if info.players >= 3 {
            Model::PlackettLuce
        } else {
            Model::BradleyTerry
        };
        Collector::into_data(Data::new(n, model), 0, (0..n).collect(), info)
    }

    /// A collector adding a stage's units to `data` as stratum `stratum`, its slot `s` being
    /// agent `slots[s]` of `data`.
    pub fn into_data(data: Data, stratum: usize, slots: Vec<usize>, info: &StageInfo) -> Self {
        Collector {
            data,
            stratum,
            slots,
            points: info.points,
            arrangements: info.arrangements().max(1),
            key: None,
            rows: Vec::new(),
            pending: FxMap::default(),
            spare: Vec::new(),
            game: None,
            seats: Vec::new(),
            unit: None,
            unit_games: Vec::new(),
            agents: Vec::new(),
            places: Vec::new(),
            error: None,
            units: 0,
        }
    }

    /// Takes the next row (rows come grouped by round, in record order).
    pub fn push(&mut self, row: &Row) {
        let key = (row.deal, row.rotation, row.round);
        if self.key.is_some_and(|k| k != key) {
            self.end_round();
        }
        self.key = Some(key);
        // Under point scoring what counts is the game won, not the round.
        let won = if self.points { row.game_won } else { row.won };
        self.rows.push((row.seat, row.slot, won, row.hand_value));
    }

    fn end_round(&mut self) {
        let Some((deal, arrangement, round)) = self.key.take() else {
            return;
        };
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort_unstable_by_key(|r| r.0);
        if self.points {
            if self.game.is_some_and(|g| g != (deal, arrangement)) {
                self.end_game();
            }
            if self.unit.is_some_and(|u| u != deal) {
                self.end_unit();
            }
            self.game = Some((deal, arrangement));
            self.unit = Some(deal);
            for &(seat, slot, game_won, _) in &rows {
                match self.seats.iter_mut().find(|s| s.0 == seat) {
                    Some(s) => {
                        s.2 = round;
                        s.3 |= game_won;
                    }
                    None => self.seats.push((seat, slot, round, game_won)),
                }
            }
        } else if rows.len() >= 2 {
            // The winner first, the others by hand value, lower first (competition ranking:
            // one more than the seats strictly ahead).
            let ahead = |s: &(u32, u8, bool, u32), t: &(u32, u8, bool, u32)| {
                if t.2 != s.2 { t.2 } else { t.3 < s.3 }
            };
            self.rank(&rows, |r| r.1, ahead);
            if let Some(id) = self.game_id() {
                if self.arrangements == 1 {
                    let mut ids = [id];
                    self.add(&mut ids);
                } else {
                    let spare = &mut self.spare;
                    let entry = self
                        .pending
                        .entry(deal)
                        .or_insert_with(|| (0, spare.pop().unwrap_or_default()));
                    entry.0 += 1;
                    entry.1.push(id);
                    if entry.0 >= self.arrangements {
                        let (_, mut ids) = self.pending.remove(&deal).expect("just added");
                        self.add(&mut ids);
                        ids.clear();
                        self.spare.push(ids);
                    }
                }
            }
        }
        rows.clear();
        self.rows = rows;
    }

    /// The agents and places of a game's `seats` (`slot`: each one's slot), in competition
    /// ranking: one more than the seats strictly ahead (`ahead(s, t)`: `t` is ahead of `s`).
    fn rank<S>(&mut self, seats: &[S], slot: impl Fn(&S) -> u8, ahead: impl Fn(&S, &S) -> bool) {
        self.agents.clear();
        self.places.clear();
        for s in seats {
            self.agents.push(self.slot(slot(s)));
            self.places
                .push(seats.iter().filter(|t| ahead(s, t)).count() as u32);
        }
    }

    fn slot(&self, slot: u8) -> usize {
        self.slots
            .get(usize::from(slot))
            .copied()
            .unwrap_or(usize::MAX)
    }

    /// The index of the game in `agents` and `places`; `None` after an error (kept).
    fn game_id(&mut self) -> Option<u32> {
        if self.error.is_some() {
            return None;
        }
        match self.data.game_id(&self.agents, &self.places) {
            Ok(id) => Some(id),
            Err(reason) => {
                self.error = Some(RatingError::BadGame {
                    unit: self.units,
                    game: 0,
                    reason: reason.to_string(),
                });
                None
            }
        }
    }

    fn end_game(&mut self) {
        if self.game.take().is_none() {
            return;
        }
        let mut seats = std::mem::take(&mut self.seats);
        seats.sort_unstable_by_key(|s| s.0);
        if seats.len() >= 2 {
            // The game's winner first, then by the last round played, later first.
            let ahead = |s: &(u32, u8, u32, bool), t: &(u32, u8, u32, bool)| {
                if t.3 != s.3 { t.3 } else { t.2 > s.2 }
            };
            self.rank(&seats, |s| s.1, ahead);
            if let Some(id) = self.game_id() {
                self.unit_games.push(id);
            }
        }
        seats.clear();
        self.seats = seats;
    }

    fn end_unit(&mut self) {
        if self.unit.take().is_none() {
            return;
        }
        let mut games = std::mem::take(&mut self.unit_games);
        self.add(&mut games);
        games.clear();
        self.unit_games = games;
    }

    fn add(&mut self, ids: &mut [u32]) {
        if self.error.is_none() {
            self.data.add_unit_of(self.stratum, ids);
        }
        self.units += 1;
    }

    /// Ends the records: the units not finished yet (a deal short of some arrangements) are
    /// added in deal order.
    pub fn finish(mut self) -> Result<Data, RatingError> {
        self.end_round();
        if self.points {
            self.end_game();
            self.end_unit();
        } else {
            let mut deals: Vec<u64> = self.pending.keys().copied().collect();
            deals.sort_unstable();
            for d in deals {
                let (_, mut ids) = self.pending.remove(&d).expect("listed");
                self.add(&mut ids);
            }
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.data),
        }
    }
}

/// The games of all the stages of a run, for the leaderboard across them ([`run_games`]).
pub(super) struct RunGames {
    /// The agents by id (a `winner_of` seat is the agent it names), with their kinds.
    pub(super) names: Vec<String>,
    pub(super) kinds: Vec<String>,
    /// Every stage's units, each stage a stratum of the bootstrap; empty after a failure.
    pub(super) data: Data,
    /// Why a stage's games could not be rated (with the agents by name), if one could not.
    pub(super) failure: Option<String>,
}

/// Reads the games of every stage of the run under `run` (`manifest`: its `manifest.json`),
/// agents identified by id, a `winner_of` seat being the agent it names in its stage of origin;
/// the stages are read in order, up to the first whose games cannot be rated. `None` for fewer
/// than two stages.
pub(super) fn run_games(
    run: &Path,
    manifest: &serde_json::Value,
) -> crate::Result<Option<RunGames>> {
    let stages = manifest["stages"].as_array().cloned().unwrap_or_default();
    if stages.len() < 2 {
        return Ok(None);
    }
    let mut infos = Vec::with_capacity(stages.len());
    for stage in &stages {
        let name = stage["name"].as_str().unwrap_or_default();
        infos.push(stage_info(&run.join(name))?);
    }
    // Who each slot is: its own id, or for a `winner_of` seat the identity of the agent that
    // won the stage it names.
    let spec = &manifest["scenario"]["stages"];
    let index = |name: &str| stages.iter().position(|s| s["name"].as_str() == Some(name));
    fn identity(
        i: usize,
        slot: usize,
        infos: &[StageInfo],
        stages: &[serde_json::Value],
        spec: &serde_json::Value,
        index: &dyn Fn(&str) -> Option<usize>,
        depth: usize,
    ) -> (String, String) {
        let own = (
            infos[i].agents[slot].clone(),
            infos[i].kinds.get(slot).cloned().unwrap_or_default(),
        );
        let Some(from) = spec[i]["agents"][slot]["winner_of"].as_str() else {
            return own;
        };
        let Some(o) = index(from).filter(|&o| o != i && depth < stages.len()) else {
            return own;
        };
        let Some(w) = stages[o]["winner"]["agent"].as_str() else {
            return own;
        };
        match infos[o].agents.iter().position(|a| a == w) {
            Some(s) => identity(o, s, infos, stages, spec, index, depth + 1),
            None => own,
        }
    }
    let mut names: Vec<String> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    let mut slots: Vec<Vec<usize>> = Vec::new();
    for (i, info) in infos.iter().enumerate() {
        let mut map = Vec::with_capacity(info.agents.len());
        for slot in 0..info.agents.len() {
            let (id, kind) = identity(i, slot, &infos, &stages, spec, &index, 0);
            let k = match names.iter().position(|n| *n == id) {
                Some(k) => k,
                None => {
                    names.push(id);
                    kinds.push(kind);
                    names.len() - 1
                }
            };
            map.push(k);
        }
        slots.push(map);
    }
    let model = if infos.iter().any(|i| i.players >= 3) {
        Model::PlackettLuce
    } else {
        Model::BradleyTerry
    };
    let mut data = Data::new(names.len(), model);
    let mut failure = None;
    for (i, info) in infos.iter().enumerate() {
        let dir = run.join(&info.name);
        let mut c = Collector::into_data(data, i, slots[i].clone(), info);
        for_each_row(&dir, &info.agents, |row| c.push(row))?;
        data = match c.finish() {
            Ok(d) => d,
            Err(e) => {
                failure = Some(e.describe(&names));
                Data::new(names.len(), model)
            }
        };
        if failure.is_some() {
            break;
        }
    }
    Ok(Some(RunGames {
        names,
        kinds,
        data,
        failure,
    }))
}
