//! Validation as a user meets it, through the `dhumbal-run` binary: each rule-based style
//! declares only the constants it reads, a constant of another style is refused with the
//! reason, and one `validate` reports every problem of a file, each once, in file order.

use std::collections::BTreeSet;

mod common;
use common::{arg, has, has_all, lacks, ok, run, text, tmp_scenario};

/// `dhumbal-run validate` on `body`: exit code and output.
fn validate(body: &str) -> (Option<i32>, String) {
    let (_dir, file) = tmp_scenario("bad.yaml", body);
    let o = run(&["validate", arg(&file)]);
    (o.status.code(), text(&o))
}

/// The problem lines of a `validate` report (`  FILE:LINE:COL: message`).
fn problem_lines(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| l.trim_start().starts_with("bad.yaml:") || l.contains("/bad.yaml:"))
        .collect()
}

/// The problem lines of `report`, each of `wanted` required on exactly one of them.
#[track_caller]
fn each_once<'a>(report: &'a str, wanted: &[&str]) -> Vec<&'a str> {
    let lines = problem_lines(report);
    for want in wanted {
        let hits = lines.iter().filter(|l| l.contains(want)).count();
        assert_eq!(hits, 1, "`{want}` reported {hits} times:\n{report}");
    }
    lines
}

/// The parameter names `dhumbal-run agents` lists under `kind`.
fn listed_params(listing: &str, kind: &str) -> BTreeSet<String> {
    let mut lines = listing
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{kind}: ")));
    assert!(lines.next().is_some(), "`{kind}` is not listed:\n{listing}");
    lines
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

const SHARED: [&str; 12] = [
    "pickup_threshold",
    "pickup_high_hand",
    "pickup_high_raise",
    "pickup_low_hand",
    "pickup_low_drop",
    "high_preference",
    "multi_card_bonus",
    "sequence_bonus",
    "call_bonus",
    "improvement_weight",
    "risk_adjustment",
    "expected_draw",
];

/// The call constants each style's call rule reads (`Heuristic::wants_call`).
fn own_call_params(kind: &str) -> &'static [&'static str] {
    match kind {
        "aggressive" => &[],
        "conservative" => &["strict_threshold"],
        "balanced" => &[
            "strict_threshold",
            "sure_threshold",
            "call_probability",
            "late_call_probability",
        ],
        "opportunistic" => &[
            "strict_threshold",
            "ahead_call_probability",
            "ahead_risk",
            "behind_call_probability",
            "behind_risk",
            "per_point_probability",
            "late_turn",
            "late_turn_bonus",
        ],
        other => panic!("not a style: {other}"),
    }
}

const STYLES: [&str; 4] = ["aggressive", "conservative", "balanced", "opportunistic"];

#[test]
fn agents_lists_each_style_with_only_the_constants_it_reads() {
    let o = ok(&["agents"]);
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    for kind in STYLES {
        let want: BTreeSet<String> = SHARED
            .iter()
            .chain(own_call_params(kind))
            .map(|s| s.to_string())
            .collect();
        assert_eq!(listed_params(&listing, kind), want, "{kind}:\n{listing}");
    }
    // The cases users asked about, spelled out.
    assert!(listed_params(&listing, "balanced").contains("sure_threshold"));
    assert!(!listed_params(&listing, "aggressive").contains("sure_threshold"));
    assert!(!listed_params(&listing, "aggressive").contains("strict_threshold"));
    // Opportunistic sets its call probability from the standings before reading it.
    assert!(!listed_params(&listing, "opportunistic").contains("call_probability"));
    // The defaults are still the paper's.
    let balanced = listing
        .lines()
        .skip_while(|l| !l.starts_with("balanced: "))
        .find(|l| l.trim_start().starts_with("call_probability "))
        .unwrap();
    has(balanced, "default 0.7");
}

#[test]
fn the_json_schema_gives_each_style_only_its_own_parameters() {
    let schema = dhumbal::scenario::json_schema();
    let alternatives = schema["$defs"]["AgentSpec"]["anyOf"].as_array().unwrap();
    for kind in STYLES {
        let entry = alternatives
            .iter()
            .find(|a| a["title"] == kind)
            .unwrap_or_else(|| panic!("no schema for {kind}"));
        let params = &entry["properties"]["params"];
        assert_eq!(params["additionalProperties"], false, "{kind}");
        let names: BTreeSet<&str> = params["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let want: BTreeSet<&str> = SHARED
            .iter()
            .chain(own_call_params(kind))
            .copied()
            .collect();
        assert_eq!(names, want, "{kind}");
    }
}

#[test]
fn another_styles_parameter_is_refused_with_its_reader_and_line() {
    let (code, t) = validate(
        "name: x\nseed: 1\ndeals: 4\nagents:\n  - kind: aggressive\n    params:\n      sure_threshold: 4\n  - kind: opportunistic\n    params: {call_probability: 0.5}\n  - kind: conservative\n    params: {late_turn: 3}\n  - kind: random\n",
    );
    assert_eq!(code, Some(2), "{t}");
    has(
        &t,
        "bad.yaml:7:23: `agents.0.params.sure_threshold`: `sure_threshold` is read only by `balanced`, not by `aggressive`",
    );
    has(&t, "always calls when allowed");
    has(
        &t,
        "bad.yaml:9:32: `agents.1.params.call_probability`: `call_probability` is read only by `balanced`, not by `opportunistic`",
    );
    has(
        &t,
        "`agents.2.params.late_turn`: `late_turn` is read only by `opportunistic`, not by `conservative`",
    );
    lacks(&t, "unknown parameter");
    has(&t, "3 problems");
    // A plain typo is still a typo.
    let (code, t) = validate(
        "name: x\nseed: 1\ndeals: 4\nagents:\n  - kind: aggressive\n    params: {sure_treshold: 4}\n  - kind: random\n  - kind: random\n  - kind: random\n",
    );
    assert_eq!(code, Some(2), "{t}");
    has(
        &t,
        "`agents.0.params.sure_treshold`: unknown parameter of `aggressive`",
    );
}

#[test]
fn one_pass_reports_every_problem_once_in_file_order() {
    let body = "\
name: many
seed: 1
deals: 8
colour: blue
seating: rotat
rules:
  preset: paper
  threshold: 500
agents:
  - kind: balanced
    params: {call_probabilty: 0.5}
  - kind: aggressive
    params: {sure_threshold: 3}
  - kind: agressive
  - kind: random
stages:
  - name: first
  - name: second
    rules: {players: 4}
    session: 0
";
    let (code, t) = validate(body);
    assert_eq!(code, Some(2), "{t}");
    let expected = [
        "bad.yaml:4:1: `colour`: unknown field",
        "bad.yaml:5:10: `seating`: unknown variant `rotat`",
        "bad.yaml:8:14: `rules.threshold`: 500 is above any possible hand value",
        "bad.yaml:11:31: `agents.0.params.call_probabilty`: unknown parameter of `balanced`; did you mean `call_probability`?",
        "bad.yaml:13:30: `agents.1.params.sure_threshold`: `sure_threshold` is read only by `balanced`",
        "bad.yaml:14:11: `agents.2.kind`: unknown agent kind `agressive`; did you mean `aggressive`?",
        "bad.yaml:20:14: `stages.1.session`: must be at least 1",
    ];
    let lines = each_once(&t, &expected);
    assert_eq!(lines.len(), expected.len(), "unexpected problems:\n{t}");
    has(&t, &format!("{} problems", expected.len()));
    // In file order.
    let at: Vec<(usize, usize)> = lines
        .iter()
        .map(|l| {
            let mut parts = l.split("bad.yaml:").nth(1).unwrap().split(':');
            (
                parts.next().unwrap().parse().unwrap(),
                parts.next().unwrap().parse().unwrap(),
            )
        })
        .collect();
    let mut sorted = at.clone();
    sorted.sort();
    assert_eq!(at, sorted, "{t}");
}

#[test]
fn values_that_do_not_read_are_reported_with_the_rest() {
    // Each of these used to stop deserialization, hiding everything after it.
    let (code, t) = validate(
        "name: x\ndeals: -1\nrules: {preset: papr}\nstages:\n  - 5\n  - name: b\n    seating: [fixed]\nagents: [{kind: random}, {kind: random}, {kind: random}, {kind: nope}]\nextra: 1\n",
    );
    assert_eq!(code, Some(2), "{t}");
    each_once(
        &t,
        &[
            "`seed`: missing field `seed`",
            "bad.yaml:2:8: `deals`: expected a whole number, 0 or more",
            "bad.yaml:3:17: `rules.preset`: unknown variant `papr`",
            "bad.yaml:5:5: `stages.0`: expected a mapping",
            "bad.yaml:7:14: `stages.1.seating`:",
            "bad.yaml:8:65: `agents.3.kind`: unknown agent kind `nope`",
            "bad.yaml:9:1: `extra`: unknown field",
        ],
    );
    // Nothing that only the placeholders cause (rules or a sample size that did not read).
    has(&t, "7 problems");
}

#[test]
fn a_constant_without_effect_under_the_rules_is_a_problem() {
    let four = |params: &str, rules: &str| {
        format!(
            "name: x\nseed: 1\ndeals: 4\nrules: {rules}\nagents:\n  - kind: balanced\n    params: {params}\n  - kind: random\n  - kind: random\n  - kind: random\n"
        )
    };
    let (code, t) = validate(&four("{sequence_bonus: 5}", "{runs: false}"));
    assert_eq!(code, Some(2), "{t}");
    has(
        &t,
        "bad.yaml:7:30: `agents.0.params.sequence_bonus`: has no effect under these rules",
    );
    has(&t, "`runs: false`");
    let (code, t) = validate(&four("{multi_card_bonus: 5}", "{runs: false, sets: false}"));
    assert_eq!(code, Some(2), "{t}");
    has(
        &t,
        "`agents.0.params.multi_card_bonus`: has no effect under these rules",
    );
    // Where the discards exist, the same constants are fine.
    let (code, t) = validate(&four("{multi_card_bonus: 5}", "{runs: false}"));
    assert_eq!(code, Some(0), "{t}");
    let (code, t) = validate(&four("{sequence_bonus: 5}", "{preset: paper}"));
    assert_eq!(code, Some(0), "{t}");
}

#[test]
fn an_agent_id_with_control_characters_is_refused_at_its_line() {
    // An id is shown in tables, terminals and pages: an escape code in it would reach them.
    let (code, report) = validate(
        "name: t\nseed: 1\ndeals: 2\nrules: {preset: paper, players: 2}\nagents:\n  - {id: \"red\\u001b[31m\", kind: aggressive}\n  - kind: balanced\n",
    );
    assert_eq!(code, Some(2), "{report}");
    has_all(&report, &["agents.0.id", "control characters"]);
    assert!(
        !report.contains('\u{1b}'),
        "the message itself writes the escape raw: {report:?}"
    );
}

#[test]
fn names_with_control_characters_are_refused_and_quoted_values_shown_escaped() {
    // The scenario's and a stage's names name folders and are shown on the terminal; a
    // misspelt kind is quoted in its message, and a script path in its own: all escaped.
    let (code, report) = validate(
        "name: \"t\\e]0;title\\a\"\nseed: 1\ndeals: 2\nrules: {preset: paper, players: 2}\n\
         stages:\n  - name: \"s\\e[31m\"\n    agents:\n      - kind: \"bal\\e[2Janced\"\n      \
         - script: \"x\\e[2J.rhai\"\n",
    );
    assert_eq!(code, Some(2), "{report}");
    let lines = problem_lines(&report);
    for (at, what) in [
        ("bad.yaml:1:7: `name`", "control characters"),
        ("bad.yaml:6:11: `stages.0.name`", "control characters"),
        (
            "bad.yaml:8:15: `stages.0.agents.0.kind`",
            "bal\\x1b[2Janced",
        ),
        (
            "bad.yaml:9:17: `stages.0.agents.1.script`",
            "x\\x1b[2J.rhai",
        ),
    ] {
        assert!(
            lines.iter().any(|l| l.contains(at) && l.contains(what)),
            "{at} ... {what} in\n{report}"
        );
    }
    assert!(
        !report.contains('\u{1b}') && !report.contains('\u{7}'),
        "{report:?}"
    );
}

#[test]
fn an_alias_bomb_is_refused_at_once_with_its_line() {
    // Nine levels of ten-fold aliases (a billion values once expanded) in ten lines.
    let mut body = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..9 {
        body.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(",")
        ));
    }
    body.push_str("agents: *a8\n");
    let began = std::time::Instant::now();
    let (code, report) = validate(&body);
    let took = began.elapsed();
    assert_eq!(code, Some(2), "{report}");
    let lines = problem_lines(&report);
    assert_eq!(
        lines.len(),
        1,
        "one problem, where the aliases pass the limit: {report}"
    );
    assert!(
        lines[0].contains("bad.yaml:5:")
            && lines[0].contains("alias `*a3`")
            && lines[0].contains("refused"),
        "{report}"
    );
    assert!(took.as_secs_f64() < 1.0, "took {took:?}");
}
