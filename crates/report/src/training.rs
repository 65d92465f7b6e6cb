//! Figures of a training run (the paper's Fig. 4, one panel per file), from its records alone
//! (`train/<id>/episodes.parquet`, `evaluations.parquet`): (a) reward with its 100-episode
//! moving average, (b) cumulative win rate beside the evaluation win rate with its 95%
//! interval, (c) episode length, (d) the 100-episode rolling standard deviation of the reward.

use std::path::{Path, PathBuf};

use anyhow::Result;

use dhumbal_plots::{Band, Width, lines};
use dhumbal_runner::train::read_records;

/// Episodes per moving window.
const WINDOW: usize = 100;

/// Means over the trailing `WINDOW` values (from the `WINDOW`-th on), as (episode, mean).
fn moving(xs: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut sum = 0.0;
    for i in 0..xs.len() {
        sum += xs[i].1;
        if i >= WINDOW {
            sum -= xs[i - WINDOW].1;
        }
        if i + 1 >= WINDOW.min(xs.len()) {
            out.push((xs[i].0, sum / WINDOW.min(i + 1) as f64));
        }
    }
    out
}

/// Standard deviations over the trailing `WINDOW` values.
fn rolling_sd(xs: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let (mut s, mut s2) = (0.0, 0.0);
    let mut out = Vec::new();
    for i in 0..xs.len() {
        s += xs[i].1;
        s2 += xs[i].1 * xs[i].1;
        if i >= WINDOW {
            s -= xs[i - WINDOW].1;
            s2 -= xs[i - WINDOW].1 * xs[i - WINDOW].1;
        }
        let n = WINDOW.min(i + 1) as f64;
        if i + 1 >= WINDOW.min(xs.len()) && n > 1.0 {
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

/// Writes the four figures into `dir/figures/` (SVG, PNG, PDF); returns the files.
pub fn figures(dir: &Path) -> Result<Vec<PathBuf>> {
    let (episodes, evals) = read_records(dir, u64::MAX)?;
    anyhow::ensure!(!episodes.is_empty(), "no episodes in {}", dir.display());
    let out = dir.join("figures");
    std::fs::create_dir_all(&out)?;
    let x = |i: usize| episodes[i].episode as f64 + 1.0;
    let reward: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), episodes[i].reward))
        .collect();
    let mut files = Vec::new();

    let mut cumulative = Vec::with_capacity(reward.len());
    let mut total = 0.0;
    for (i, &(e, r)) in reward.iter().enumerate() {
        total += r;
        cumulative.push((e, total / (i + 1) as f64));
    }
    let fig = lines(
        "(a) Reward per episode",
        "episode",
        "reward (coins, or minus points)",
        &[
            band("100-episode mean", moving(&reward)),
            band("mean so far", cumulative),
        ],
        Width::OneColumn,
    )?;
    files.extend(fig.write(&out, "training_reward")?);

    let wins: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), f64::from(u8::from(episodes[i].win))))
        .collect();
    let mut cum = Vec::with_capacity(wins.len());
    let mut won = 0.0;
    for (i, &(e, w)) in wins.iter().enumerate() {
        won += w;
        cum.push((e, 100.0 * won / (i + 1) as f64));
    }
    let mut series = vec![band("training, cumulative", cum)];
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
    let fig = lines(
        "(b) Win rate",
        "episode",
        "rounds won (%)",
        &series,
        Width::OneColumn,
    )?;
    files.extend(fig.write(&out, "training_win_rate")?);

    let steps: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), f64::from(episodes[i].steps)))
        .collect();
    let turns: Vec<(f64, f64)> = (0..episodes.len())
        .map(|i| (x(i), f64::from(episodes[i].turns)))
        .collect();
    let fig = lines(
        "(c) Episode length",
        "episode",
        "100-episode mean",
        &[
            band("turns of the round", moving(&turns)),
            band("learner's decisions", moving(&steps)),
        ],
        Width::OneColumn,
    )?;
    files.extend(fig.write(&out, "training_length")?);

    let fig = lines(
        "(d) Reward variability",
        "episode",
        "100-episode SD of the reward",
        &[band("rolling SD", rolling_sd(&reward))],
        Width::OneColumn,
    )?;
    files.extend(fig.write(&out, "training_reward_sd")?);
    Ok(files)
}
