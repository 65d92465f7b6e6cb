//! Figures of a training run (the paper's Fig. 4, one panel per file), from its records alone
//! (`train/<id>/episodes.parquet`, `evaluations.parquet`, and the scoring named in
//! `manifest.json`): (a) reward with its moving average, (b) cumulative win rate beside the
//! evaluation win rate with its 95% interval, (c) episode length, (d) the rolling standard
//! deviation of the reward. The window is 100 episodes (the paper's) up to 10,000 episodes and
//! grows with longer runs (1% of them, rounded to 100), so that a long run's curves show its
//! trend rather than the noise of single rounds.

use std::path::{Path, PathBuf};

use anyhow::Result;

use dhumbal_plots::{Band, Width, lines};
use dhumbal_runner::train::read_records;

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

/// Writes the four figures of the training records in `dir` into `out` (SVG, PNG, PDF), with
/// the panel titles drawn inside when `titles` (a paper's caption carries them otherwise);
/// returns the files.
pub fn figures(dir: &Path, out: &Path, titles: bool) -> Result<Vec<PathBuf>> {
    let (episodes, evals) = read_records(dir, u64::MAX)?;
    anyhow::ensure!(!episodes.is_empty(), "no episodes in {}", dir.display());
    let title = |t: &'static str| if titles { t } else { "" };
    let out = out.to_path_buf();
    std::fs::create_dir_all(&out)?;
    let w = window(episodes.len());
    // The reward's unit, from the rules the manifest records (older manifests: both named).
    let scoring = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m["training"]["rules"]["scoring"].as_str().map(String::from));
    let reward_label = match scoring.as_deref() {
        Some("coins") => "coins per round",
        Some("points") => "minus points per round",
        _ => "reward (coins, or minus points)",
    };
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
        title("(a) Reward per episode"),
        "episode",
        reward_label,
        &[
            band(&format!("{w}-episode mean"), moving(&reward, w)),
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
        title("(b) Win rate"),
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
        title("(c) Episode length"),
        "episode",
        &format!("{w}-episode mean"),
        &[
            band("turns of the round", moving(&turns, w)),
            band("learner's decisions", moving(&steps, w)),
        ],
        Width::OneColumn,
    )?;
    files.extend(fig.write(&out, "training_length")?);

    let fig = lines(
        title("(d) Reward variability"),
        "episode",
        &format!("{w}-episode SD of the reward"),
        &[band("rolling SD", rolling_sd(&reward, w))],
        Width::OneColumn,
    )?;
    files.extend(fig.write(&out, "training_reward_sd")?);
    Ok(files)
}
