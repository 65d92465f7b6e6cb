//! A study's report (docs/studies.md): people against each agent, from the study's records
//! alone, with intervals clustered by participant (each person's games are not independent)
//! and by deal (game g is the same deal for everyone); how the people did over their games;
//! each participant; and move matching: how often each agent, asked on the person's own
//! observation at each of their decisions (the games replayed from the journals), chose what
//! the person chose. Written as `report.md` and `stats.json` (one type, [`StudyStats`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use dhumbal_plots::{self as plots, Interval, Width};
use dhumbal_runner::scenario::Study;
use dhumbal_runner::study::records::StudyRow;
use dhumbal_runner::study::{self, Folder, Line, Matched};

use crate::error::{Doing, Result};
use crate::load::InputError;
use crate::stats::{Cluster, wilson};

/// The layout of a study's `stats.json`.
pub const FORMAT: u32 = 1;

/// A study's statistics, as `stats.json` holds them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyStats {
    pub format: u32,
    pub name: String,
    /// `coins` or `points`: what a game's `net` counts.
    pub scoring: String,
    pub participants: usize,
    pub games: usize,
    pub agents: Vec<AgentRow>,
    pub by_game: Vec<GameRow>,
    pub people: Vec<PersonRow>,
    pub matching: Vec<MatchRow>,
}

/// An estimate with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    pub ci95: Option<[f64; 2]>,
    /// The clusters behind the interval.
    pub clusters: u64,
}

/// People against one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentRow {
    pub agent: String,
    pub games: usize,
    /// The person's share of games won, clustered by participant and by deal.
    pub won_by_participant: Option<Estimate>,
    pub won_by_deal: Option<Estimate>,
    /// The person's net coins (or points) per game, clustered by participant.
    pub net: Option<Estimate>,
}

/// People at their g-th game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    pub game: u64,
    pub games: usize,
    pub won: Option<Estimate>,
    pub net: Option<Estimate>,
}

/// One participant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PersonRow {
    pub participant: String,
    pub games: usize,
    pub won: usize,
    pub net_per_game: f64,
    pub decisions: u64,
    /// The median time a decision took them, in seconds.
    pub median_decision_s: Option<f64>,
    pub hints: u64,
    /// Each agent's share of their decisions matched.
    pub matching: BTreeMap<String, f64>,
}

/// One agent's move matching.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRow {
    pub agent: String,
    pub decisions: u64,
    pub matched: u64,
    /// The share matched, clustered by participant.
    pub rate: Option<Estimate>,
    /// By phase: call, discard, pick (matched, decisions).
    pub phases: [(u64, u64); 3],
}

/// One game of one person, from the records.
struct Game {
    participant: String,
    deal: u64,
    agent: String,
    won: bool,
    net: f64,
}

/// The games of the records: the person's net (coins won, or points taken) and whether they
/// won (coins: the most at the end, ties to the lower seat, as the table's leader; points:
/// the game won).
fn games(rows: &[StudyRow], points: bool) -> Vec<Game> {
    let mut by: BTreeMap<(String, u64), Vec<&StudyRow>> = BTreeMap::new();
    for r in rows {
        by.entry((r.participant.clone(), r.deal))
            .or_default()
            .push(r);
    }
    let mut out = Vec::new();
    for ((participant, deal), rs) in by {
        let last = rs.iter().map(|r| r.round).max().unwrap_or(0);
        let Some(me) = rs.iter().find(|r| r.human && r.round == last) else {
            continue;
        };
        let agent = (rs.iter().find(|r| !r.human))
            .map(|r| r.agent.split('@').next().unwrap_or(&r.agent).to_string())
            .unwrap_or_default();
        let mine = rs.iter().filter(|r| r.human);
        let net = if points {
            mine.map(|r| r.points_delta).sum::<i64>()
        } else {
            mine.map(|r| r.coin_delta).sum::<i64>()
        } as f64;
        let won = if points {
            rs.iter().any(|r| r.human && r.game_won)
        } else {
            rs.iter().filter(|r| r.round == last && !r.human).all(|r| {
                r.standing < me.standing || (r.standing == me.standing && r.seat > me.seat)
            })
        };
        out.push(Game {
            participant,
            deal,
            agent,
            won,
            net,
        });
    }
    out
}

/// The mean of `value` over `items`, clustered by `key`, with its 95% interval (a rate of 0
/// or 1: Wilson's with the clusters as observations, as the tournaments' report does).
fn clustered<T, K: Ord>(
    items: &[&T],
    key: impl Fn(&T) -> K,
    value: impl Fn(&T) -> f64,
    rate: bool,
) -> Option<Estimate> {
    let mut groups: BTreeMap<K, (f64, f64)> = BTreeMap::new();
    for t in items {
        let e = groups.entry(key(t)).or_default();
        e.0 += value(t);
        e.1 += 1.0;
    }
    let mut c = Cluster::default();
    for (sum, n) in groups.values() {
        c.push(*sum, *n);
    }
    let mean = c.mean()?;
    let ci = if rate && (mean == 0.0 || mean == 1.0) {
        wilson(if mean == 0.0 { 0 } else { c.g }, c.g, 0.95)
    } else {
        c.interval(0.95)
    };
    Some(Estimate {
        mean,
        ci95: ci.map(|(l, h)| {
            if rate {
                [l.max(0.0), h.min(1.0)]
            } else {
                [l, h]
            }
        }),
        clusters: c.g,
    })
}

/// Reads the study in `dir` (served from `study`), matches moves, and writes `report.md`
/// and `stats.json` into `out`. Returns the page's path.
pub fn report(dir: &Path, name: &str, study: &Study, out: &Path) -> Result<PathBuf> {
    let id = study::Identity::read(dir)?;
    let folder = Folder {
        dir: dir.to_path_buf(),
        hash: id.study.clone(),
    };
    if study::study_hash(name, study) != id.study {
        return Err(InputError::new(
            &dir.join("study.json"),
            format!(
                "the scenario {} is no longer the study served into {}: restore it as it was",
                id.scenario.display(),
                dir.display()
            ),
        )
        .into());
    }
    let rows = study::records::read(dir)?;
    let games = games(&rows, study.is_points());
    let mut codes: Vec<String> = games.iter().map(|g| g.participant.clone()).collect();
    codes.dedup();
    let mut matched: Vec<(String, Matched)> = Vec::new();
    let mut journals: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    for code in &codes {
        for m in study::match_moves(study, &folder, code)? {
            matched.push((code.clone(), m));
        }
        let path = folder.participant_dir(code).join("journal.jsonl");
        journals.insert(code.clone(), study::journal::read(&path)?);
    }
    let stats = StudyStats {
        format: FORMAT,
        name: name.to_string(),
        scoring: if study.is_points() { "points" } else { "coins" }.into(),
        participants: codes.len(),
        games: games.len(),
        agents: agent_rows(study, &games),
        by_game: game_rows(&games),
        people: people(&codes, &games, &matched, &journals),
        matching: matching(study, &matched),
    };
    std::fs::create_dir_all(out).doing("cannot create", out)?;
    let json = out.join("stats.json");
    let text = serde_json::to_string_pretty(&stats).doing("cannot write", &json)?;
    std::fs::write(&json, text).doing("cannot write", &json)?;
    let drawn = figures(&stats, &out.join("figures"));
    let page = out.join("report.md");
    std::fs::write(&page, page_text(&stats, study, &drawn)).doing("cannot write", &page)?;
    Ok(page)
}

/// The figures' stems and, for each, whether it was drawn (else why not).
type Drawn = Vec<(&'static str, std::result::Result<(), String>)>;

/// Two figures, each agent in its colour: the people's share of games won against it, and
/// its move matching, with their 95% intervals clustered by participant.
fn figures(s: &StudyStats, dir: &Path) -> Drawn {
    let bars = |of: &dyn Fn(usize) -> Option<Estimate>| -> Vec<(String, usize, Interval)> {
        (0..s.agents.len())
            .filter_map(|i| {
                let e = of(i)?;
                let [low, high] = e.ci95.unwrap_or([e.mean, e.mean]);
                Some((
                    s.agents[i].agent.clone(),
                    i,
                    Interval {
                        estimate: 100.0 * e.mean,
                        low: 100.0 * low,
                        high: 100.0 * high,
                    },
                ))
            })
            .collect()
    };
    let won = bars(&|i| s.agents[i].won_by_participant);
    let matched = bars(&|i| s.matching.get(i).and_then(|m| m.rate));
    let draw = |stem: &'static str, axis: &str, bars: &[(String, usize, Interval)]| {
        let made = plots::interval_bars_coloured("", axis, bars, Width::OneColumn)
            .and_then(|f| f.write(dir, stem));
        (stem, made.map(|_| ()).map_err(|e| e.to_string()))
    };
    vec![
        draw("people-won", "People's games won (%)", &won),
        draw("move-matching", "Decisions matched (%)", &matched),
    ]
}

fn agent_rows(study: &Study, games: &[Game]) -> Vec<AgentRow> {
    (study.agents.iter())
        .map(|a| {
            let mine: Vec<&Game> = games.iter().filter(|g| g.agent == a.id).collect();
            let won = |g: &Game| f64::from(u8::from(g.won));
            AgentRow {
                agent: a.id.clone(),
                games: mine.len(),
                won_by_participant: clustered(&mine, |g| g.participant.clone(), won, true),
                won_by_deal: clustered(&mine, |g| g.deal, won, true),
                net: clustered(&mine, |g| g.participant.clone(), |g| g.net, false),
            }
        })
        .collect()
}

fn game_rows(games: &[Game]) -> Vec<GameRow> {
    let mut numbers: Vec<u64> = games.iter().map(|g| g.deal).collect();
    numbers.sort();
    numbers.dedup();
    (numbers.into_iter())
        .map(|n| {
            let mine: Vec<&Game> = games.iter().filter(|g| g.deal == n).collect();
            GameRow {
                game: n,
                games: mine.len(),
                won: clustered(
                    &mine,
                    |g| g.participant.clone(),
                    |g| f64::from(u8::from(g.won)),
                    true,
                ),
                net: clustered(&mine, |g| g.participant.clone(), |g| g.net, false),
            }
        })
        .collect()
}

fn people(
    codes: &[String],
    games: &[Game],
    matched: &[(String, Matched)],
    journals: &BTreeMap<String, Vec<Line>>,
) -> Vec<PersonRow> {
    (codes.iter())
        .map(|code| {
            let mine: Vec<&Game> = games.iter().filter(|g| &g.participant == code).collect();
            let mut times: Vec<f64> = Vec::new();
            let mut hints = 0;
            for line in journals.get(code).into_iter().flatten() {
                if let Line::Decision(d) = line {
                    times.push(d.ns as f64 / 1e9);
                    hints += u64::from(d.hints);
                }
            }
            let decisions = times.len() as u64;
            let mut rates: BTreeMap<String, (u32, u32)> = BTreeMap::new();
            for (_, m) in matched.iter().filter(|(c, _)| c == code) {
                let e = rates.entry(m.agent.clone()).or_default();
                e.0 += m.tally.matched();
                e.1 += m.tally.decisions();
            }
            PersonRow {
                participant: code.clone(),
                games: mine.len(),
                won: mine.iter().filter(|g| g.won).count(),
                net_per_game: mine.iter().map(|g| g.net).sum::<f64>() / mine.len().max(1) as f64,
                decisions,
                median_decision_s: crate::stats::percentile(&mut times, 0.5),
                hints,
                matching: (rates.into_iter())
                    .map(|(a, (k, n))| (a, f64::from(k) / f64::from(n.max(1))))
                    .collect(),
            }
        })
        .collect()
}

fn matching(study: &Study, matched: &[(String, Matched)]) -> Vec<MatchRow> {
    (study.agents.iter())
        .map(|a| {
            let mine: Vec<&(String, Matched)> =
                matched.iter().filter(|(_, m)| m.agent == a.id).collect();
            let mut phases = [(0u64, 0u64); 3];
            for (_, m) in &mine {
                for (k, p) in phases.iter_mut().enumerate() {
                    p.0 += u64::from(m.tally.matched[k]);
                    p.1 += u64::from(m.tally.decisions[k]);
                }
            }
            // Clustered by participant: each game's tally a group of decisions.
            let mut by: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
            for (code, m) in &mine {
                let e = by.entry(code.as_str()).or_default();
                e.0 += f64::from(m.tally.matched());
                e.1 += f64::from(m.tally.decisions());
            }
            let mut c = Cluster::default();
            by.values().for_each(|(s, n)| c.push(*s, *n));
            let rate = c.mean().map(|mean| Estimate {
                mean,
                ci95: c.interval(0.95).map(|(l, h)| [l.max(0.0), h.min(1.0)]),
                clusters: c.g,
            });
            MatchRow {
                agent: a.id.clone(),
                decisions: phases.iter().map(|p| p.1).sum(),
                matched: phases.iter().map(|p| p.0).sum(),
                rate,
                phases,
            }
        })
        .collect()
}

fn pct(e: &Option<Estimate>) -> String {
    match e {
        None => "–".into(),
        Some(e) => match e.ci95 {
            Some([l, h]) => format!("{:.1} [{:.1}, {:.1}]", 100.0 * e.mean, 100.0 * l, 100.0 * h),
            None => format!("{:.1}", 100.0 * e.mean),
        },
    }
}

fn num(e: &Option<Estimate>) -> String {
    match e {
        None => "–".into(),
        Some(e) => match e.ci95 {
            Some([l, h]) => format!("{:+.1} [{:+.1}, {:+.1}]", e.mean, l, h),
            None => format!("{:+.1}", e.mean),
        },
    }
}

/// `report.md`. Participant codes and agent ids are the study's own (checked when it was
/// read: letters, digits, `-`, `_`), so they go into the Markdown as they are.
fn page_text(s: &StudyStats, study: &Study, drawn: &Drawn) -> String {
    let figure = |stem: &str, caption: &str| match drawn.iter().find(|(d, _)| *d == stem) {
        Some((_, Ok(()))) => format!(
            "\n![{stem}](figures/{stem}.svg)\n\n*{caption} ([PNG](figures/{stem}.png), \
             [PDF](figures/{stem}.pdf))*\n"
        ),
        Some((_, Err(e))) => format!("\n*The figure could not be drawn: {e}*\n"),
        None => String::new(),
    };
    let unit = &s.scoring;
    let mut t = format!(
        "# Study `{}`\n\n{} participants, {} games, {} agents ({} order, {} games each, the \
         same deals for everyone). Intervals are 95%, clustered by participant (a person's \
         games are not independent); the agents' column also by deal.\n\n",
        s.name,
        s.participants,
        s.games,
        s.agents.len(),
        serde_json::to_value(study.order)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        study.games
    );
    t.push_str(&format!(
        "## People against each agent\n\n| agent | games | people's games won, % (by participant) | (by deal) | people's net {unit} per game |\n|---|---|---|---|---|\n"
    ));
    for a in &s.agents {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            a.agent,
            a.games,
            pct(&a.won_by_participant),
            pct(&a.won_by_deal),
            num(&a.net)
        ));
    }
    t.push_str(&figure(
        "people-won",
        "The people's share of games won against each agent, with its 95% interval clustered \
         by participant.",
    ));
    t.push_str(&format!(
        "\n## Over the games\n\nEach person's g-th game, whichever agent it was against (the order is counterbalanced).\n\n| game | games | won, % | net {unit} |\n|---|---|---|---|\n"
    ));
    for g in &s.by_game {
        t.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            g.game + 1,
            g.games,
            pct(&g.won),
            num(&g.net)
        ));
    }
    t.push_str(
        "\n## Move matching\n\nAt each of a person's decisions, each agent is asked on the person's own observation (the games replayed from the journals, the agent's random stream its own): the share of decisions where it chose what the person chose.\n\n| agent | decisions | matched, % (by participant) | call | discard | pick |\n|---|---|---|---|---|---|\n",
    );
    for m in &s.matching {
        let phase = |k: usize| {
            let (a, n) = m.phases[k];
            if n == 0 {
                "–".to_string()
            } else {
                format!("{:.1} ({n})", 100.0 * a as f64 / n as f64)
            }
        };
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            m.agent,
            m.decisions,
            pct(&m.rate),
            phase(0),
            phase(1),
            phase(2)
        ));
    }
    t.push_str(&figure(
        "move-matching",
        "The share of the people's decisions each agent would have made, with its 95% \
         interval clustered by participant.",
    ));
    let agents: Vec<&str> = s.agents.iter().map(|a| a.agent.as_str()).collect();
    t.push_str(&format!(
        "\n## Participants\n\n| participant | games | won | net {unit} per game | decisions | median decision, s | hints | {} |\n|---|---|---|---|---|---|---|{}\n",
        agents
            .iter()
            .map(|a| format!("matches {a}, %"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(agents.len())
    ));
    for p in &s.people {
        let rates: Vec<String> = (agents.iter())
            .map(|a| {
                p.matching
                    .get(*a)
                    .map_or("–".into(), |r| format!("{:.1}", 100.0 * r))
            })
            .collect();
        t.push_str(&format!(
            "| {} | {} | {} | {:+.1} | {} | {} | {} | {} |\n",
            p.participant,
            p.games,
            p.won,
            p.net_per_game,
            p.decisions,
            p.median_decision_s
                .map_or("–".into(), |x| format!("{x:.3}")),
            p.hints,
            rates.join(" | ")
        ));
    }
    t
}
