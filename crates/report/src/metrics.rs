//! One pass over a stage's records: per-agent running moments of every per-round metric,
//! per-call success and risk, seat and starting-position counts, decision times, cumulative
//! series for the figures, and, per unit of analysis (the deal), per-agent means whose
//! pairwise differences feed the paired tests. Per deal too: each agent's calls and their
//! successes, and its rounds and wins in each seat and starting position, for intervals with
//! deals (games) as clusters.
//!
//! The unit of analysis is the deal. With `fixed` or `random` seating under coin scoring a
//! deal is one round; with `rotate` or `permute` it is the block of all arrangements of one
//! deal (duplicate play); under point scoring it is a game (with all its arrangements), since
//! the rounds of a game share standings and eliminations. Agents' means per deal are what is
//! paired across agents.

use super::load::{InputError, Row, StageInfo};
use super::ratings::collect::Collector;
use super::ratings::model::{Data, FxMap, RatingError};
use super::stats::{Cluster, ClusterPair, CoMoments, Moments, Stratified};

/// Records that make no sense (not grouped by round, more rows in a round than seats, a slot
/// the stage does not have): the pass stops at the first such row. [`accumulate`] names the
/// record file ([`InputError`]).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadRecords(pub String);

/// Returns a [`BadRecords`] made by `format!`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err(BadRecords(format!($($arg)*)))
    };
}

/// Per-round metrics with a value for every agent in every round it plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundMetric {
    Win,
    Economic,
    Calls,
    Cards,
    HandValue,
    DecisionTime,
}

impl RoundMetric {
    pub const ALL: [RoundMetric; 6] = [
        RoundMetric::Win,
        RoundMetric::Economic,
        RoundMetric::Calls,
        RoundMetric::Cards,
        RoundMetric::HandValue,
        RoundMetric::DecisionTime,
    ];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Slots per deal block: the six round metrics, the game-win indicator (point games), then
/// call success (per call: calls of two agents do not pair, but the calls of one deal are
/// clustered, so their comparison is the clustered two-sample test over the deals in which
/// either agent called).
const BLOCK_METRICS: usize = 8;
pub const GAME_WIN: usize = 6;
pub const CALL_SUCCESS: usize = 7;

/// Seat or starting-position counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WinCount {
    pub rounds: u64,
    pub wins: u64,
}

/// Everything accumulated for one agent.
#[derive(Clone, Debug, Default)]
pub struct AgentAcc {
    pub rounds: u64,
    pub wins: u64,
    pub calls: u64,
    pub call_successes: u64,
    /// Per-round values, indexed by [`RoundMetric::index`].
    pub round: [Moments; 6],
    /// Per-deal sums and counts (the unit of analysis), same index; index [`GAME_WIN`] is the
    /// game-win indicator, [`CALL_SUCCESS`] the successes over the calls of each deal.
    pub unit: [Cluster; BLOCK_METRICS],
    pub turns: Moments,
    /// Success (1) or failure (0) of each call.
    pub call_success: Moments,
    /// (hand value at the call, success) over the agent's calls: the paper's risk (eq. 9).
    pub risk: CoMoments,
    pub decisions: u64,
    /// Time on the timed decisions, and their number (rounds may be timed in a sample).
    pub decision_ns: u64,
    pub timed_decisions: u64,
    /// Mean time per decision in each round with decisions, in microseconds (for the 95th
    /// percentile; single decisions are not recorded).
    pub decision_us: Vec<f64>,
    pub by_seat: Vec<WinCount>,
    pub by_start: Vec<WinCount>,
    /// Wins over rounds in each seat and starting position, per deal (the unit of analysis).
    pub by_seat_units: Vec<Cluster>,
    pub by_start_units: Vec<Cluster>,
    /// Point games (per game and arrangement): played, won, and the win indicator.
    pub games: u64,
    pub game_wins: u64,
    pub game: Moments,
    /// Point games: wins over rounds by table size (stratum m - 1 for m players at the
    /// table), per game, for the win rate standardised to the stage's table-size mix.
    pub win_by_table: Stratified,
}

/// One pair of agents (a < b): their per-deal sums and counts over the deals both played,
/// per block metric.
#[derive(Clone, Debug)]
pub struct PairAcc {
    pub a: usize,
    pub b: usize,
    pub diff: [ClusterPair; BLOCK_METRICS],
}

/// A cumulative series for the figures: round number and, per agent, cumulative wins and
/// cumulative coins (or minus points).
#[derive(Clone, Debug, Default)]
pub struct Checkpoint {
    pub round: u64,
    pub wins: Vec<f64>,
    pub economic: Vec<f64>,
}

/// The result of the pass.
#[derive(Clone, Debug)]
pub struct Accumulated {
    pub agents: Vec<AgentAcc>,
    pub pairs: Vec<PairAcc>,
    pub rounds: u64,
    pub rows: u64,
    pub units: u64,
    /// Player-turns per round (a property of the table, the same for every seat).
    pub turns: Moments,
    pub checkpoints: Vec<Checkpoint>,
    /// Whether any decision was timed (`decision_ns` > 0).
    pub timed: bool,
    /// Rows whose decisions were not timed (empty `decision_ns`).
    pub untimed_rows: u64,
    /// Whether some round's starting seat was not seat 0 (then seats and starting positions
    /// differ and both are reported).
    pub starts_vary: bool,
    /// Wins over rounds in each seat and starting position, all agents pooled, per deal.
    pub seat_units: Vec<Cluster>,
    pub start_units: Vec<Cluster>,
    /// Records (agent-rounds) by table size, index m - 1 for m players at the table: the
    /// stage's table-size mix.
    pub table_rows: Vec<u64>,
    /// The games and units the ratings are fitted to (docs/analysis.md, "Ratings").
    pub ratings: Result<Data, RatingError>,
}

/// Checkpoints kept for the cumulative figures: between this and twice this many.
const CHECKPOINTS: usize = 400;

/// A deal's per-agent sums and counts, per block metric, and per agent, kind (seat, starting
/// position) and position its wins and rounds.
struct Block {
    groups: u64,
    sum: Vec<f64>,
    count: Vec<u32>,
    pos_wins: Vec<f64>,
    pos_rounds: Vec<u32>,
    /// Per agent and table size (point games): wins and rounds.
    size_wins: Vec<f64>,
    size_rounds: Vec<f64>,
}

/// The running state of the pass.
pub struct Accumulator {
    info_agents: usize,
    /// Seats (and starting positions) per round at most.
    seats: usize,
    points: bool,
    arrangements: u64,
    acc: Accumulated,
    group: Vec<Row>,
    /// Open deals by number, taken out and put back for every round (with the default
    /// SipHash, hashing was 1.5% of the report's time on a million rounds).
    blocks: FxMap<u64, Block>,
    spare: Vec<Block>,
    last_deal: Option<u64>,
    /// Point games: the (deal, arrangement) being played, its players and winners (bit sets).
    game: Option<(u64, u32, u64, u64)>,
    cum_wins: Vec<f64>,
    cum_econ: Vec<f64>,
    stride: u64,
    /// Scratch for [`Accumulator::close`]: each agent's (sum, count) per block metric, and
    /// the pooled (wins, rounds) per kind and position.
    units: Vec<(f64, f64)>,
    pooled: Vec<(f64, u32)>,
}

impl Accumulator {
    pub fn new(info: &StageInfo) -> Accumulator {
        let n = info.agents.len();
        let mut pairs = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                pairs.push(PairAcc {
                    a,
                    b,
                    diff: Default::default(),
                });
            }
        }
        let seats = info.players.max(n).max(1);
        let mut agents = vec![AgentAcc::default(); n];
        for t in &mut agents {
            t.win_by_table = Stratified::new(seats);
        }
        Accumulator {
            info_agents: n,
            seats,
            points: info.points,
            arrangements: info.arrangements().max(1),
            acc: Accumulated {
                agents,
                pairs,
                rounds: 0,
                rows: 0,
                units: 0,
                turns: Moments::new(),
                checkpoints: Vec::new(),
                timed: false,
                untimed_rows: 0,
                starts_vary: false,
                seat_units: vec![Cluster::default(); seats],
                start_units: vec![Cluster::default(); seats],
                table_rows: vec![0; seats],
                ratings: Ok(Data::new(0, Default::default())),
            },
            group: Vec::with_capacity(8),
            blocks: FxMap::default(),
            spare: Vec::new(),
            last_deal: None,
            game: None,
            cum_wins: vec![0.0; n],
            cum_econ: vec![0.0; n],
            stride: 1,
            units: Vec::with_capacity(n * BLOCK_METRICS),
            pooled: Vec::with_capacity(2 * seats),
        }
    }

    /// Takes the next row (rows come grouped by round, as the runner writes them).
    pub fn push(&mut self, row: &Row) -> Result<(), BadRecords> {
        if let Some(first) = self.group.first()
            && (first.deal, first.rotation, first.round) != (row.deal, row.rotation, row.round)
        {
            self.end_group()?;
        }
        if usize::from(row.slot) >= self.info_agents {
            bail!("row for an unknown agent slot {}", row.slot);
        }
        self.group.push(*row);
        self.acc.rows += 1;
        Ok(())
    }

    /// Ends the pass.
    pub fn finish(mut self) -> Result<Accumulated, BadRecords> {
        if !self.group.is_empty() {
            self.end_group()?;
        }
        self.end_game();
        let deals: Vec<u64> = self.blocks.keys().copied().collect();
        let mut deals = deals;
        deals.sort_unstable();
        for d in deals {
            self.flush(d);
        }
        let last = self.acc.rounds;
        if self.acc.checkpoints.last().is_none_or(|c| c.round != last) && last > 0 {
            self.checkpoint();
        }
        Ok(self.acc)
    }

    fn end_group(&mut self) -> Result<(), BadRecords> {
        let group = std::mem::take(&mut self.group);
        let (deal, rotation) = (group[0].deal, group[0].rotation);
        if group.len() > 64 {
            bail!(
                "more than 64 rows for one round (deal {deal}): the records are not grouped by round"
            );
        }
        if self.points {
            self.next_game(deal, rotation);
        }
        self.last_deal = Some(deal);
        self.acc.rounds += 1;
        self.acc.turns.push(f64::from(group[0].turns));
        let starter = group.iter().position(|r| r.starter);
        if let Some(k) = starter
            && group[k].seat != 0
        {
            self.acc.starts_vary = true;
        }
        let m = group.len();
        if m > self.seats {
            bail!(
                "{m} rows for one round (deal {deal}, arrangement {rotation}) but the stage has {} seats",
                self.seats
            );
        }
        if let Some(r) = group.iter().find(|r| r.seat as usize >= self.seats) {
            bail!(
                "seat {} in deal {deal}, but the stage has {} seats",
                r.seat,
                self.seats
            );
        }
        self.acc.table_rows[m - 1] += m as u64;
        let mut block = self.take_block(deal);
        for (i, r) in group.iter().enumerate() {
            // The row's position from the round's starter.
            let position = starter.map(|k| (i + m - k) % m);
            self.add_row(&mut block, r, m, position);
        }
        block.groups += 1;
        // A deal whose arrangements are all in is closed at once, without going back into the
        // map of open deals (with one arrangement, every round: a million map insertions and
        // removals fewer in a million-round report).
        if !self.points && block.groups >= self.arrangements {
            self.close(block);
        } else {
            self.blocks.insert(deal, block);
        }
        if self.acc.rounds.is_multiple_of(self.stride) {
            self.checkpoint();
        }
        self.group = group;
        self.group.clear();
        Ok(())
    }

    /// Point games: a new (game, arrangement) ends the previous one; a new game ends the
    /// previous game's block.
    fn next_game(&mut self, deal: u64, rotation: u32) {
        if self.game.is_some_and(|g| (g.0, g.1) != (deal, rotation)) {
            self.end_game();
        }
        if let Some(prev) = self.last_deal
            && prev != deal
        {
            self.flush(prev);
        }
        if self.game.is_none() {
            self.game = Some((deal, rotation, 0, 0));
        }
    }

    /// One row of a round of `m` rows: into its agent's totals and the deal's `block`
    /// (`position`: its place from the round's starter, if the round has one).
    fn add_row(&mut self, block: &mut Block, r: &Row, m: usize, position: Option<usize>) {
        let seats = self.seats;
        let a = usize::from(r.slot);
        let econ = if self.points {
            -(r.points_delta as f64)
        } else {
            r.coin_delta as f64
        };
        let t = &mut self.acc.agents[a];
        t.rounds += 1;
        t.wins += u64::from(r.won);
        t.calls += u64::from(r.called);
        t.call_successes += u64::from(r.called && r.call_success);
        t.decisions += u64::from(r.decisions);
        let decision_us = match r.decision_ns {
            Some(ns) => {
                t.decision_ns += ns;
                t.timed_decisions += u64::from(r.decisions);
                if ns > 0 {
                    self.acc.timed = true;
                }
                (r.decisions > 0).then(|| ns as f64 / f64::from(r.decisions) / 1000.0)
            }
            None => {
                self.acc.untimed_rows += 1;
                None
            }
        };
        let values = [
            Some(f64::from(u8::from(r.won))),
            Some(econ),
            Some(f64::from(u8::from(r.called))),
            Some(f64::from(r.cards_discarded)),
            Some(f64::from(r.hand_value)),
            decision_us,
        ];
        for (k, v) in values.iter().enumerate() {
            if let Some(v) = v {
                t.round[k].push(*v);
                block.sum[a * BLOCK_METRICS + k] += v;
                block.count[a * BLOCK_METRICS + k] += 1;
            }
        }
        if let Some(us) = decision_us {
            t.decision_us.push(us);
        }
        t.turns.push(f64::from(r.turns));
        if r.called {
            let s = f64::from(u8::from(r.call_success));
            t.call_success.push(s);
            t.risk.push(f64::from(r.hand_value), s);
            block.sum[a * BLOCK_METRICS + CALL_SUCCESS] += s;
            block.count[a * BLOCK_METRICS + CALL_SUCCESS] += 1;
        }
        let won = f64::from(u8::from(r.won));
        let seat = r.seat as usize;
        if t.by_seat.len() <= seat {
            t.by_seat.resize(seat + 1, WinCount::default());
        }
        t.by_seat[seat].rounds += 1;
        t.by_seat[seat].wins += u64::from(r.won);
        let at = (a * 2) * seats + seat;
        block.pos_wins[at] += won;
        block.pos_rounds[at] += 1;
        if self.points {
            block.size_wins[a * seats + m - 1] += won;
            block.size_rounds[a * seats + m - 1] += 1.0;
        }
        if let Some(pos) = position {
            if t.by_start.len() <= pos {
                t.by_start.resize(pos + 1, WinCount::default());
            }
            t.by_start[pos].rounds += 1;
            t.by_start[pos].wins += u64::from(r.won);
            let at = (a * 2 + 1) * seats + pos;
            block.pos_wins[at] += won;
            block.pos_rounds[at] += 1;
        }
        self.cum_wins[a] += f64::from(u8::from(r.won));
        self.cum_econ[a] += econ;
        if let Some(g) = &mut self.game {
            if r.round == 0 && a < 64 {
                g.2 |= 1 << a;
            }
            if r.game_won && a < 64 {
                g.3 |= 1 << a;
            }
        }
    }

    /// Records the cumulative totals after the current round, thinning the series (every
    /// other point, stride doubled) when it grows past twice its target.
    fn checkpoint(&mut self) {
        self.acc.checkpoints.push(Checkpoint {
            round: self.acc.rounds,
            wins: self.cum_wins.clone(),
            economic: self.cum_econ.clone(),
        });
        if self.acc.checkpoints.len() >= 2 * CHECKPOINTS {
            self.stride *= 2;
            let stride = self.stride;
            self.acc.checkpoints.retain(|c| c.round % stride == 0);
        }
    }

    fn take_block(&mut self, deal: u64) -> Block {
        if let Some(b) = self.blocks.remove(&deal) {
            return b;
        }
        let size = self.info_agents * BLOCK_METRICS;
        let positions = self.info_agents * 2 * self.seats;
        let size_by_table = self.info_agents * self.seats;
        match self.spare.pop() {
            Some(mut b) => {
                b.groups = 0;
                b.sum.iter_mut().for_each(|v| *v = 0.0);
                b.count.iter_mut().for_each(|v| *v = 0);
                b.pos_wins.iter_mut().for_each(|v| *v = 0.0);
                b.pos_rounds.iter_mut().for_each(|v| *v = 0);
                b.size_wins.iter_mut().for_each(|v| *v = 0.0);
                b.size_rounds.iter_mut().for_each(|v| *v = 0.0);
                b
            }
            None => Block {
                groups: 0,
                sum: vec![0.0; size],
                count: vec![0; size],
                pos_wins: vec![0.0; positions],
                pos_rounds: vec![0; positions],
                // Table sizes vary only in point games.
                size_wins: vec![0.0; if self.points { size_by_table } else { 0 }],
                size_rounds: vec![0.0; if self.points { size_by_table } else { 0 }],
            },
        }
    }

    /// Ends a point game (one arrangement): its players' win indicators go to the agents and
    /// the game's block.
    fn end_game(&mut self) {
        let Some((deal, _, players, winners)) = self.game.take() else {
            return;
        };
        let mut block = self.take_block(deal);
        for a in 0..self.info_agents.min(64) {
            if players & (1 << a) == 0 {
                continue;
            }
            let won = winners & (1 << a) != 0;
            let t = &mut self.acc.agents[a];
            t.games += 1;
            t.game_wins += u64::from(won);
            t.game.push(f64::from(u8::from(won)));
            block.sum[a * BLOCK_METRICS + GAME_WIN] += f64::from(u8::from(won));
            block.count[a * BLOCK_METRICS + GAME_WIN] += 1;
        }
        self.blocks.insert(deal, block);
    }

    /// Closes a deal: per-agent sums and counts go to the agents' unit accumulators and, for
    /// every pair that both played it, to the pair's.
    fn flush(&mut self, deal: u64) {
        if let Some(block) = self.blocks.remove(&deal) {
            self.close(block);
        }
    }

    /// Closes a deal's block (see [`Accumulator::flush`]).
    fn close(&mut self, block: Block) {
        self.acc.units += 1;
        const M: usize = BLOCK_METRICS;
        // Each agent's sum and count per block metric, the count made a float once for the
        // agent's own clusters and each of its pairs (a count of 0: no data in this deal).
        let units = &mut self.units;
        units.clear();
        units.extend(
            block
                .sum
                .iter()
                .zip(&block.count)
                .map(|(&s, &c)| (s, f64::from(c))),
        );
        for (t, us) in self.acc.agents.iter_mut().zip(units.chunks_exact(M)) {
            for (cluster, &(s, n)) in t.unit.iter_mut().zip(us) {
                if n > 0.0 {
                    cluster.push(s, n);
                }
            }
        }
        for p in &mut self.acc.pairs {
            let (ua, ub) = (&units[p.a * M..][..M], &units[p.b * M..][..M]);
            for (k, ((d, &(sa, na)), &(sb, nb))) in p.diff.iter_mut().zip(ua).zip(ub).enumerate() {
                // Calls: a deal in which one agent called and the other did not is a cluster
                // of the clustered comparison all the same (the other's sum and count are 0).
                let push = if k == CALL_SUCCESS {
                    na > 0.0 || nb > 0.0
                } else {
                    na > 0.0 && nb > 0.0
                };
                if push {
                    d.push(sa, na, sb, nb);
                }
            }
        }
        let seats = self.seats;
        if self.points {
            for (a, t) in self.acc.agents.iter_mut().enumerate() {
                let at = a * seats..(a + 1) * seats;
                if block.size_rounds[at.clone()].iter().any(|n| *n > 0.0) {
                    t.win_by_table
                        .push(&block.size_wins[at.clone()], &block.size_rounds[at]);
                }
            }
        }
        // Seats (kind 0) and starting positions (kind 1): per agent, and all agents pooled
        // (summed in agent order, as the agents come).
        let pooled = &mut self.pooled;
        pooled.clear();
        pooled.resize(2 * seats, (0.0, 0));
        for (a, t) in self.acc.agents.iter_mut().enumerate() {
            for (kind, list) in [&mut t.by_seat_units, &mut t.by_start_units]
                .into_iter()
                .enumerate()
            {
                let at = (a * 2 + kind) * seats;
                let wins = &block.pos_wins[at..at + seats];
                let rounds = &block.pos_rounds[at..at + seats];
                let pooled = &mut pooled[kind * seats..(kind + 1) * seats];
                for (pos, ((&w, &n), q)) in wins.iter().zip(rounds).zip(pooled).enumerate() {
                    if n == 0 {
                        continue;
                    }
                    if list.len() <= pos {
                        list.resize(pos + 1, Cluster::default());
                    }
                    list[pos].push(w, f64::from(n));
                    q.0 += w;
                    q.1 += n;
                }
            }
        }
        let (seat_pooled, start_pooled) = pooled.split_at(seats);
        for (list, pooled) in [
            (&mut self.acc.seat_units, seat_pooled),
            (&mut self.acc.start_units, start_pooled),
        ] {
            for (cluster, &(wins, rounds)) in list.iter_mut().zip(pooled) {
                if rounds > 0 {
                    cluster.push(wins, f64::from(rounds));
                }
            }
        }
        self.spare.push(block);
    }
}

/// The pass over a stage's records, row by row in unit order: [`accumulate`] feeds it the rows
/// it reads back from a stage's dataset, a run's tap ([`dhumbal_runner::run::RecordTap`]) the
/// records as they are played, so that both give the same result by construction.
pub struct Stream {
    acc: Accumulator,
    games: Collector,
    /// The first row that did not make sense (the pass stops at it).
    failure: Option<BadRecords>,
}

impl Stream {
    pub fn new(info: &StageInfo) -> Stream {
        Stream {
            acc: Accumulator::new(info),
            games: Collector::new(info),
            failure: None,
        }
    }

    /// Takes the records of the next units (none more once a row did not make sense: the pass
    /// ends in that error).
    pub fn push(&mut self, records: &[dhumbal_runner::records::Records]) {
        if self.failure.is_some() {
            return;
        }
        for record in records.iter().flat_map(|r| r.rows()) {
            let Some(row) = Row::of_record(record) else {
                self.failure.get_or_insert_with(|| {
                    BadRecords(format!("row for agent slot {}", record.slot))
                });
                return;
            };
            push_statistics(&mut self.acc, &mut self.failure, &row);
            self.games.push(&row);
        }
    }

    /// Ends the pass: `None` if the records held no round.
    pub fn finish(self) -> Result<Option<Accumulated>, BadRecords> {
        if let Some(e) = self.failure {
            return Err(e);
        }
        let mut acc = self.acc.finish()?;
        acc.ratings = self.games.finish();
        Ok((acc.rounds > 0).then_some(acc))
    }
}

/// Runs the pass over a stage folder's records. Records that do not make sense (not grouped
/// by round, more rows in a round than seats) and records without a single round are an
/// [`InputError`] naming the record file.
///
/// The games the ratings are fitted to are collected from the same rows in a second pass on a
/// thread of its own (`load::for_each_row_twice`), the same rows in the same order: on a
/// million rounds it was a sixth of this pass's thread, which bounds the report's time.
pub fn accumulate(dir: &std::path::Path, info: &StageInfo) -> crate::Result<Accumulated> {
    let mut pass = Stream::new(info);
    let Stream {
        acc,
        games,
        failure,
    } = &mut pass;
    super::load::for_each_row_twice(
        dir,
        &info.agents,
        |row| push_statistics(acc, failure, row),
        Some(|row: &Row| games.push(row)),
    )?;
    let path = super::load::record_file(dir).unwrap_or_else(|| dir.to_path_buf());
    match pass.finish() {
        Ok(Some(acc)) => Ok(acc),
        Ok(None) => Err(super::load::no_rounds(&path).into()),
        Err(e) => Err(InputError::new(&path, e.0).into()),
    }
}

/// A row's statistics ([`Stream`]'s pass without the ratings' part, which [`accumulate`] runs
/// on a thread of its own), unless an earlier row did not make sense.
fn push_statistics(acc: &mut Accumulator, failure: &mut Option<BadRecords>, row: &Row) {
    if failure.is_none()
        && let Err(e) = acc.push(row)
    {
        *failure = Some(e);
    }
}
