//! Figures of a training run (the paper's Fig. 4, one panel per file), from its records alone
//! (`train/<id>/episodes.parquet`, `evaluations.parquet`, and the scoring named in
//! `manifest.json`): (a) reward with its moving average, (b) cumulative win rate beside the
//! evaluation win rate with its 95% interval, (c) episode length, (d) the rolling standard
//! deviation of the reward. The window is 100 episodes (the paper's) up to 10,000 episodes and
//! grows with longer runs (1% of them, rounded to 100), so that a long run's curves show its
//! trend rather than the noise of single rounds.

use std::path::{Path, PathBuf};

use dhumbal_plots::{Band, Width, lines};
use dhumbal_runner::scenario::rules_spec::ScoringName;
use dhumbal_runner::train::{self, read_records};

use crate::error::{Doing, Result};
use crate::load::InputError;

/// Episodes per moving window for a run of `episodes`: 100 (the paper's), or 1% of a run
/// longer than 10,000 episodes, in hundreds.
fn window(episodes: usize) -> usize {
    (episodes / 100 / 100 * 100).max(100)
}

/// Means over the trailing `window` values (from the `window`-th on), as (episode, mean).
fn moving(xs: &[(f64, f64)], window: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut sum = 0.0;
    for i in 0..xs.len() {
        sum += xs[i].1;
        if i >= window {
            sum -= xs[i - window].1;
        }
        if i + 1 >= window.min(xs.len()) {
            out.push((xs[i].0, sum / window.min(i + 1) as f64));
        }
    }
    out
}

/// Standard deviations over the trailing `window` values.
fn rolling_sd(xs: &[(f64, f64)], window: usize) -> Vec<(f64, f64)> {
    let (mut s, mut s2) = (0.0, 0.0);
    let mut out = Vec::new();
    for i in 0..xs.len() {
        s += xs[i].1;
        s2 += xs[i].1 * xs[i].1;
        if i >= window {
            s -= xs[i - window].1;
            s2 -= xs[i - window].1 * xs[i - window].1;
        }
        let n = window.min(i + 1) as f64;
        if i + 1 >= window.min(xs.len()) && n > 1.0 {
            let var = ((s2 - s * s / n) / (n - 1.0)).max(0.0);
            out.push((xs[i].0, var.sqrt()));
        }
    }
    out
}

fn band(label: &str, points: Vec<(f64, f64)>) -> Band {
    Band {
        label: label.to_string(),
        points,
        band: None,
    }
}

/// Whether `dir` holds a training run's records (`train/<id>/` of a run's output).
pub fn is_training(dir: &Path) -> bool {
    dir.join("episodes.parquet").is_file()
}

/// What the training's manifest says of its learner: whether a table learned it (an episode is
/// then a whole game; a network's is a round), and the reward's unit from the rules it
/// records (no manifest in the folder: a network, both units named).
fn learner(dir: &Path) -> Result<(bool, &'static str)> {
    if !dir.join(train::MANIFEST_FILE).is_file() {
        return Ok((false, "reward (coins, or minus points)"));
    }
    let training = train::Manifest::read(dir)?.training;
    let tabular = training.tabular();
    let label = match (training.rules.scoring, tabular) {
        (Some(ScoringName::Points), true) => "minus points per game",
        (Some(ScoringName::Coins), _) => "coins per round",
        (Some(ScoringName::Points), false) => "minus points per round",
        (None, _) => "reward (coins, or minus points)",
    };
    Ok((tabular, label))
}

/// Writes the four figures of the training records in `dir` into `out` (SVG, PNG, PDF), with
/// the panel titles drawn inside when `titles` (a paper's caption carries them otherwise);
/// returns the files.
pub fn figures(dir: &Path, out: &Path, titles: bool) -> Result<Vec<PathBuf>> {
    let (episodes, evals) = read_records(dir, u64::MAX)?;
    if episodes.is_empty() {
        return Err(InputError::new(dir, format!("no episodes in {}", dir.display())).into());
    }
    let title = |t: &'static str| if titles { t } else { "" };
    let out = out.to_path_buf();
    std::fs::create_dir_all(&out).doing("cannot create", &out)?;
    let w = window(episodes.len());
    let (tabular, reward_label) = learner(dir)?;
    let x = |i: usize| episodes[i].episode as f64 + 1.0;
    let reward: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), episodes[i].reward))
        .collect();
    let mut files = Vec::new();

    files.extend(figure(
        &out,
        "training_reward",
        title("(a) Reward per episode"),
        ["episode", reward_label],
        &[
            band(&format!("{w}-episode mean"), moving(&reward, w)),
            band("mean so far", running_mean(&reward)),
        ],
    )?);

    // 100 for a win: the running mean is the percentage won so far.
    let wins: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), 100.0 * f64::from(u8::from(episodes[i].win))))
        .collect();
    let mut series = vec![band("training, cumulative", running_mean(&wins))];
    let mut opponents: Vec<&str> = Vec::new();
    for e in &evals {
        if !opponents.contains(&e.opponent.as_str()) {
            opponents.push(&e.opponent);
        }
    }
    for o in opponents {
        let of: Vec<_> = evals.iter().filter(|e| e.opponent == o).collect();
        series.push(Band {
            label: format!("evaluation vs {o} (95% CI)"),
            points: of
                .iter()
                .map(|e| (e.episode as f64, 100.0 * e.win_rate))
                .collect(),
            band: Some(
                of.iter()
                    .map(|e| (e.episode as f64, 100.0 * e.low, 100.0 * e.high))
                    .collect(),
            ),
        });
    }
    files.extend(figure(
        &out,
        "training_win_rate",
        title("(b) Win rate"),
        [
            "episode",
            if tabular {
                "games won (%)"
            } else {
                "rounds won (%)"
            },
        ],
        &series,
    )?);

    let steps: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), f64::from(episodes[i].steps)))
        .collect();
    let turns: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), f64::from(episodes[i].turns)))
        .collect();
    files.extend(figure(
        &out,
        "training_length",
        title("(c) Episode length"),
        ["episode", &format!("{w}-episode mean")],
        &if tabular {
            [
                band("turns of the game", moving(&turns, w)),
                band("rounds of the game", moving(&steps, w)),
            ]
        } else {
            [
                band("turns of the round", moving(&turns, w)),
                band("learner's decisions", moving(&steps, w)),
            ]
        },
    )?);

    files.extend(figure(
        &out,
        "training_reward_sd",
        title("(d) Reward variability"),
        ["episode", &format!("{w}-episode SD of the reward")],
        &[band("rolling SD", rolling_sd(&reward, w))],
    )?);
    if tabular && dir.join("policy.csv").is_file() {
        files.extend(policy_figures(&dir.join("policy.csv"), &out, titles)?);
    }
    Ok(files)
}

/// One row of a tabular policy (`policy.csv`, written by the learner).
struct PolicyRow {
    own: usize,
    opponent: usize,
    value: usize,
    q: [f64; 3],
    /// The macro played (0 greedy-decrease, 1 delay-collect, 2 call).
    action: usize,
    visits: u64,
}

fn read_policy(path: &Path) -> Result<Vec<PolicyRow>> {
    let text = std::fs::read_to_string(path).doing("cannot read", path)?;
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let bad = |what: String| InputError::new(path, format!("{what} in the row `{line}`"));
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 8 {
            return Err(InputError::new(path, format!("a row without 8 fields: {line}")).into());
        }
        let int = |s: &str| s.parse::<usize>().map_err(|e| bad(format!("`{s}`: {e}")));
        let real = |s: &str| s.parse::<f64>().map_err(|e| bad(format!("`{s}`: {e}")));
        rows.push(PolicyRow {
            own: int(f[0])?,
            opponent: int(f[1])?,
            value: int(f[2])?,
            q: [real(f[3])?, real(f[4])?, real(f[5])?],
            action: ["greedy-decrease", "delay-collect", "call"]
                .iter()
                .position(|&a| a == f[6])
                .ok_or_else(|| InputError::new(path, format!("unknown action `{}`", f[6])))?,
            visits: f[7]
                .parse::<u64>()
                .map_err(|e| bad(format!("`{}`: {e}", f[7])))?,
        });
    }
    Ok(rows)
}

/// States met fewer times than this while learning are left out of the policy figures: their
/// estimates are noise (a handful of samples).
const MIN_VISITS: u64 = 100;

/// The learned policy and its value function, from `policy.csv`, over the states met at least
/// [`MIN_VISITS`] times while learning: (e) for each number of cards held and each number the
/// opponent holds, the calling threshold (the highest hand value up to which the policy calls
/// in every such state); (f) the share of those states where it plays delay-collect; (g) the
/// value of the macro played against the hand value, one line per number of cards held
/// (opponent's cards weighted by how often each state was met).
pub fn policy_figures(path: &Path, out: &Path, titles: bool) -> Result<Vec<PathBuf>> {
    let rows = read_policy(path)?;
    let title = |t: &'static str| if titles { t } else { "" };
    // The states met with `own` cards held (in the order of the file) where `at` holds.
    let met = |own: usize, at: &dyn Fn(&PolicyRow) -> bool| -> Vec<&PolicyRow> {
        rows.iter()
            .filter(|r| r.own == own && at(r) && r.visits >= MIN_VISITS)
            .collect()
    };
    let held = |own: usize| format!("{own} card{} held", if own == 1 { "" } else { "s" });
    let mut files = Vec::new();
    let mut call_at = Vec::new();
    let mut delay = Vec::new();
    for own in 1..=5 {
        let mut calls = Vec::new();
        let mut delays = Vec::new();
        for opp in 1..=5 {
            let met = met(own, &|r| r.opponent == opp);
            if met.is_empty() {
                continue;
            }
            // Rows come in increasing hand value: the threshold ends at the first met state
            // where it does not call.
            let highest = met
                .iter()
                .take_while(|r| r.action == 2)
                .map(|r| r.value)
                .last()
                .unwrap_or(0);
            calls.push((opp as f64, highest as f64));
            let d = met.iter().filter(|r| r.action == 1).count();
            delays.push((opp as f64, 100.0 * d as f64 / met.len() as f64));
        }
        call_at.push(band(&held(own), calls));
        delay.push(band(&held(own), delays));
    }
    files.extend(figure(
        out,
        "policy_calls",
        title("(e) Where the policy calls"),
        ["cards the opponent holds", "calls up to this hand value"],
        &call_at,
    )?);
    files.extend(figure(
        out,
        "policy_delay",
        title("(f) Delay-collect"),
        ["cards the opponent holds", "states met where it delays (%)"],
        &delay,
    )?);
    let mut values = Vec::new();
    for own in 1..=5 {
        let mut pts = Vec::new();
        for v in 1..=64 {
            let met = met(own, &|r| r.value == v);
            let n: u64 = met.iter().map(|r| r.visits).sum();
            if n == 0 {
                continue;
            }
            let x: f64 = met
                .iter()
                .map(|r| r.visits as f64 * r.q[r.action])
                .sum::<f64>()
                / n as f64;
            if x.is_finite() {
                pts.push((v as f64, x));
            }
        }
        values.push(band(&held(own), pts));
    }
    files.extend(figure(
        out,
        "policy_value",
        title("(g) Value function"),
        ["hand value", "value of the macro played"],
        &values,
    )?);
    Ok(files)
}

/// `series` drawn one column wide with `title` and the axes' `labels` (x, y), written to
/// `out` as `name`: the files written.
fn figure(
    out: &Path,
    name: &str,
    title: &str,
    [x_label, y_label]: [&str; 2],
    series: &[Band],
) -> Result<Vec<PathBuf>> {
    let fig = lines(title, x_label, y_label, series, Width::OneColumn)?;
    Ok(fig.write(out, name)?)
}

/// The mean of the values up to each point, at its x.
fn running_mean(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut total = 0.0;
    points
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            total += y;
            (x, total / (i + 1) as f64)
        })
        .collect()
}
