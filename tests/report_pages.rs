//! Every figure a report draws is on its page. A figure is one declaration in crates/report
//! (`FigureSpec`, with the `Place` of the page where it goes), and the pages write every drawn
//! figure of each place: this test walks the `figures/` folder of every stage and of the
//! overview, for runs that draw every kind of figure (a four-player `permute` stage, a heads-up
//! stage, point games, whose starting seats vary, a sequential stage, a sweep), and requires each SVG to be shown by its
//! page (`report.md` beside the folder, or the overview for a sweep's figures).

mod common;
use common::{arg, ok, scenario, tmp};

use std::path::{Path, PathBuf};

const SCENARIO: &str = "\
name: pages
seed: 21
seating: permute
rules:
  preset: paper
stages:
  - name: four
    deals: 12
    agents:
      - kind: aggressive
      - kind: conservative
      - kind: balanced
      - kind: random
  - name: heads-up
    deals: 40
    seating: rotate
    rules: {players: 2}
    agents:
      - kind: aggressive
      - kind: random
    sequential: {candidate: aggressive, baseline: random, max_deals: 200, every: 20}
  - name: points
    games: 6
    seating: rotate
    rules: {preset: jhyap, players: 3}
    agents:
      - kind: aggressive
      - kind: balanced
      - kind: random
  - name: threshold
    games: 4
    seating: rotate
    rules: {preset: jhyap, players: 3}
    sweep: {rules.threshold: [5, 10]}
    agents:
      - kind: aggressive
      - kind: balanced
      - kind: random
";

/// Every `*.svg` under `dir` (recursively).
fn svgs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            svgs(&p, out);
        } else if p.extension().is_some_and(|x| x == "svg") {
            out.push(p);
        }
    }
}

#[test]
fn every_drawn_figure_is_on_its_page() {
    let dir = tmp();
    // A sequential stage states its maximum instead of `deals`.
    let body = SCENARIO.replace(
        "    deals: 40\n    seating: rotate\n",
        "    seating: rotate\n",
    );
    let file = scenario(dir.path(), "pages.yaml", &body);
    let out = dir.path().join("out");
    ok(&[arg(&file), "--out", arg(&out)]);

    let overview = std::fs::read_to_string(out.join("report.md")).unwrap();
    let mut all = Vec::new();
    svgs(&out, &mut all);
    assert!(all.len() > 20, "too few figures drawn: {all:?}");
    let mut missing = Vec::new();
    for svg in &all {
        let folder = svg.parent().unwrap();
        assert_eq!(folder.file_name().unwrap(), "figures", "{}", svg.display());
        let page_dir = folder.parent().unwrap();
        let stem = svg.file_stem().unwrap().to_str().unwrap();
        let shown = |page: &str, link: &str| page.contains(&format!("{link}/{stem}.svg"));
        let on_page = match std::fs::read_to_string(page_dir.join("report.md")) {
            Ok(page) => shown(&page, "figures"),
            Err(_) => false,
        };
        // A sweep's own figures are shown on the overview, with the sweep's folder in the link.
        let rel = page_dir
            .strip_prefix(&out)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let on_overview = !rel.is_empty() && shown(&overview, &format!("{rel}/figures"));
        if !on_page && !on_overview {
            missing.push(svg.strip_prefix(&out).unwrap().display().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "figures drawn but shown on no page: {missing:?}"
    );
    // The kinds this run was built to draw are there.
    for stem in [
        "four/figures/win_rate.svg",
        "four/figures/effects.svg",
        "four/figures/ratings.svg",
        "points/figures/win_by_start.svg",
        "four/figures/cumulative_wins.svg",
        "heads-up/figures/sequential_llr.svg",
        "points/figures/game_win.svg",
        "figures/ratings.svg",
    ] {
        assert!(out.join(stem).is_file(), "{stem} was not drawn");
    }
}
