//! Rhai agents as a researcher meets them: parameters the script declares (`fn parameters()`),
//! checked against the scenario with line numbers and did-you-mean; the rehearsal that makes
//! `validate` catch runtime errors (a misspelt helper, a blown budget); `scripts.log` lines
//! that say where they come from and never interleave; the recipe's `sources`.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use dhumbal::agents::registry::{self, Standalone};
use dhumbal::agents::{AgentLog, Context, Recipe, log};
use dhumbal::game::{Agent, Preset, Rules, Table};
use dhumbal::rng::ChaChaStreams;
use serde_json::{Value, json};

const THRESHOLD: &str = include_str!("../scenarios/heuristics/threshold.rhai");

mod common;
use common::{arg, failed_rehearsal, has, has_all, invalid_script, ok, script_scenario, tmp};

fn paper() -> Rules {
    Rules::new(Preset::Paper.variant()).unwrap()
}

/// The problems of resolving `entry` for the paper's rules, joined.
fn problems(entry: Value) -> String {
    match Standalone::recipe(&entry, &paper()) {
        Ok(_) => panic!("{entry} resolved"),
        Err(p) => p
            .iter()
            .map(|(field, message)| format!("`{field}`: {message}"))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn write(dir: &Path, name: &str, source: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    path.to_str().unwrap().to_string()
}

const PLAIN: &str = "fn call_jhyap(obs) { obs.hand_value <= obs.threshold }\n\
                     fn discard(obs) { legal_discards(obs.hand)[0] }\n\
                     fn pick(obs) { () }\n";

#[test]
fn a_misspelt_parameter_is_rejected_at_its_line_with_the_nearest_declared_name() {
    let t = invalid_script("threshold.rhai", THRESHOLD, "    params: {cal_at: 8}\n");
    has_all(
        &t,
        &[
            "s.yaml:6:",
            "`agents.0.params.cal_at`",
            "did you mean `call_at`?",
            "declared: call_at, take_at_most",
        ],
    );
}

#[test]
fn a_value_of_the_wrong_type_is_rejected_naming_the_declared_type() {
    let t = invalid_script(
        "threshold.rhai",
        THRESHOLD,
        "    params:\n      call_at: 8\n      take_at_most: \"three\"\n",
    );
    has_all(
        &t,
        &[
            "s.yaml:8:",
            "`agents.0.params.take_at_most`",
            "expected a whole number (`int`",
            "got \"three\"",
        ],
    );
    // A fraction is no whole number either.
    let t = problems(json!({
        "script": "scenarios/heuristics/threshold.rhai",
        "params": {"call_at": 7.5}
    }));
    has(&t, "`params.call_at`: expected a whole number");
}

#[test]
fn the_shipped_scripts_validate_with_their_parameters() {
    for file in [
        "scenarios/challenge.yaml",
        "scenarios/championship.yaml",
        "scenarios/rhai-aggressive.yaml",
    ] {
        ok(&["validate", file]);
    }
}

/// A script that declares one parameter of each type and, at its first decision, throws what
/// `obs.params` holds (the rehearsal reports it).
const SHOW_PARAMS: &str = r#"
fn parameters() {
    #{
        take: #{ type: "int", default_value: 3, doc: "a count" },
        weight: #{ type: "float", default_value: 1, doc: "a whole default of a float" },
        name: #{ type: "string", default_value: "x" },
        flag: #{ type: "bool", default_value: false },
        unset: #{ type: "int", doc: "no default: ()" },
        list: #{ type: "any", default_value: [1, 2] },
    }
}
fn call_jhyap(obs) { false }
fn discard(obs) {
    let p = obs.params;
    throw `take=${p.take} ${type_of(p.take)}; weight=${p.weight} ${type_of(p.weight)}; name=${p.name}; flag=${p.flag}; unset=${p.unset == ()}; list=${p.list}; keys=${p.keys().len()}`;
}
fn pick(obs) { () }
"#;

#[test]
fn obs_params_hold_every_declared_parameter_given_or_default() {
    let dir = tmp();
    let script = write(dir.path(), "show.rhai", SHOW_PARAMS);
    let t = problems(json!({ "script": script }));
    has(
        &t,
        "take=3 i64; weight=1.0 f64; name=x; flag=false; unset=true; list=[1, 2]; keys=6",
    );
    let t = problems(json!({
        "script": script,
        "params": {"take": 5, "weight": 2, "name": "y", "flag": true, "unset": -1, "list": {"a": 1}}
    }));
    has(
        &t,
        "take=5 i64; weight=2.0 f64; name=y; flag=true; unset=false; list=#{\"a\": 1}; keys=6",
    );
    // A null is as good as not given.
    let t = problems(json!({ "script": script, "params": {"take": null} }));
    has(&t, "take=3 i64");
}

#[test]
fn the_manifest_shows_every_declared_parameter_in_force() {
    let recipe = Standalone::recipe(
        &json!({"script": "scenarios/heuristics/threshold.rhai", "params": {"take_at_most": 2}}),
        &paper(),
    )
    .unwrap();
    let d = recipe.describe();
    assert_eq!(d["params"], json!({"call_at": null, "take_at_most": 2}));
}

#[test]
fn a_script_declaring_nothing_takes_no_parameters() {
    let dir = tmp();
    let t = invalid_script("plain.rhai", PLAIN, "    params: {call_at: 8}\n");
    has_all(
        &t,
        &[
            "s.yaml:6:",
            "`agents.0.params`",
            "declares no parameters",
            "fn parameters()",
        ],
    );
    // Given none, it is fine, and sees an empty map.
    let script = write(dir.path(), "plain2.rhai", PLAIN);
    assert!(Standalone::recipe(&json!({ "script": script }), &paper()).is_ok());
}

#[test]
fn a_malformed_declaration_is_a_problem_naming_the_script() {
    let dir = tmp();
    let cases = [
        ("fn parameters() { 3 }", "must return a map"),
        (
            r#"fn parameters() { #{ a: #{ type: "integer" } } }"#,
            "declares `a` of unknown type \"integer\"; did you mean \"int\"?",
        ),
        (
            r#"fn parameters() { #{ a: #{ type: "int", default_value: "three" } } }"#,
            "declares `a` as int but its default_value is string",
        ),
        (
            r#"fn parameters() { #{ a: #{ type: "float", default_value: 0.0 / 0.0 } } }"#,
            "declares `a` as float but its default_value is f64 `NaN` (not a finite number)",
        ),
        (
            r#"fn parameters() { #{ a: #{ type: "float", default_value: 1.0 / 0.0 } } }"#,
            "(not a finite number)",
        ),
        (
            r#"fn parameters() { #{ a: #{ type: "bool", dco: "x" } } }"#,
            "unknown key `dco`; did you mean `doc`?",
        ),
        (
            r#"fn parameters() { #{ a: "int" } }"#,
            "declares `a` as string",
        ),
        (
            r#"fn parameters() { #{ a: #{ doc: "x" } } }"#,
            "without a `type`",
        ),
        (
            r#"fn parameters() { #{ a: #{ type: "int", default: 3 } } }"#,
            "`default_value:`",
        ),
    ];
    for (i, (declaration, expected)) in cases.iter().enumerate() {
        let name = format!("m{i}.rhai");
        let script = write(dir.path(), &name, &format!("{declaration}\n{PLAIN}"));
        let t = problems(json!({ "script": script }));
        has(&t, "`script`");
        has(&t, &name);
        assert!(t.contains(expected), "{declaration}: {t}");
    }
}

#[test]
fn validate_catches_a_misspelt_helper_with_its_line_and_the_nearest_name() {
    let typo = THRESHOLD.replace("legal_discards(obs.hand)", "legal_discard(obs.hand)");
    assert_ne!(typo, THRESHOLD);
    let line = typo
        .lines()
        .position(|l| l.contains("legal_discard("))
        .unwrap()
        + 1;
    let t = failed_rehearsal("typo.rhai", &typo);
    has(
        &t,
        &format!("script typo.rhai, in discard(), line {line}, column "),
    );
    has(&t, "did you mean `legal_discards`?");
    // A misspelt function of the script's own, in a function it calls.
    let own = "fn call_jhyap(obs) { false }\n\
               fn discard(obs) { [lowest_card(obs.hand)] }\n\
               fn lowest_card(hand) { lowst(hand) }\n\
               fn lowest(hand) { hand[0] }\n\
               fn pick(obs) { () }\n";
    let t = invalid_script("own.rhai", own, "");
    has(&t, "via lowest_card(), line 3");
    has(
        &t,
        "unknown function `lowst` (called with array); did you mean `lowest`?",
    );
    // The rehearsal asks every function: one failing only in pick is caught too.
    let pick = THRESHOLD.replace("value(c) <= limit", "valu(c) <= limit");
    assert_ne!(pick, THRESHOLD);
    let t = invalid_script("pick.rhai", &pick, "");
    has_all(&t, &["in pick()", "did you mean `value`?"]);
}

#[test]
fn too_many_operations_names_the_budget_and_max_operations() {
    let dir = tmp();
    let t = invalid_script(
        "loops.rhai",
        "fn call_jhyap(obs) { false }\nfn discard(obs) { loop { } }\nfn pick(obs) { () }\n",
        "    max_operations: 10000\n",
    );
    has(
        &t,
        "the decision took more than 10,000 operations (`max_operations` in the agent entry raises the budget)",
    );
    // The same in a run of the API, at the default budget.
    let script = write(
        dir.path(),
        "loops2.rhai",
        "fn call_jhyap(obs) { false }\nfn discard(obs) { loop { } }\nfn pick(obs) { () }\n",
    );
    let t = problems(json!({ "script": script }));
    has(&t, "more than 1,000,000 operations");
}

/// A context whose agent log writes to a file.
struct Logged {
    rules: Arc<Rules>,
    log: Arc<AgentLog>,
    problems: Vec<String>,
}

impl Context for Logged {
    fn rules(&self) -> Option<&Arc<Rules>> {
        Some(&self.rules)
    }

    fn path(&self, written: &str) -> PathBuf {
        PathBuf::from(written)
    }

    fn problem(&mut self, field: &str, message: String) {
        self.problems.push(format!("{field}: {message}"));
    }

    fn log(&self) -> Arc<AgentLog> {
        self.log.clone()
    }
}

#[test]
fn script_log_lines_name_stage_deal_seat_and_agent() {
    let dir = tmp();
    let path = dir.path().join("scripts.log");
    let script = write(
        dir.path(),
        "talk.rhai",
        "fn call_jhyap(obs) { false }\n\
         fn discard(obs) { print(`turn ${obs.turn}`); [obs.hand[0]] }\n\
         fn pick(obs) { () }\n",
    );
    let mut cx = Logged {
        rules: Arc::new(paper()),
        log: Arc::new(AgentLog::default()),
        problems: Vec::new(),
    };
    cx.log.attach(&path);
    let recipe: Arc<dyn Recipe> =
        registry::resolve(&json!({ "script": script }), &mut cx, "").expect("resolves");
    assert!(cx.problems.is_empty(), "{:?}", cx.problems);
    // The rehearsal at resolution printed nothing.
    assert!(!path.exists());
    let mut agents: Vec<Box<dyn Agent>> = (0..4)
        .map(|s| {
            if s == 2 {
                recipe.build("talker")
            } else {
                registry::resolve(&json!("random"), &mut cx, "")
                    .unwrap()
                    .build("r")
            }
        })
        .collect();
    let mut table = Table::new(paper());
    log::set_place("main", 7, None);
    let mut streams = ChaChaStreams::new(1, 7, &[0, 1, 2, 3]);
    table
        .play_round(&mut agents, &mut streams, &mut ())
        .unwrap();
    log::clear_place();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.is_empty());
    for line in text.lines() {
        assert!(
            line.starts_with("[stage main, deal 7, seat 2, talker] turn "),
            "{line}"
        );
    }
}

#[test]
fn script_log_lines_never_interleave_across_threads() {
    let dir = tmp();
    let path = dir.path().join("scripts.log");
    let log = Arc::new(AgentLog::default());
    log.attach(&path);
    let long = "x".repeat(3000);
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let (log, long) = (log.clone(), long.clone());
            s.spawn(move || {
                for deal in 0..200u64 {
                    log::set_place(&format!("stage{t}"), deal, None);
                    log.write("w.rhai", &format!("{t}:{deal}:{long}\nsecond"));
                }
            });
        }
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8 * 200 * 2);
    for pair in lines.chunks(2) {
        let (first, second) = (pair[0], pair[1]);
        let prefix = first.split("] ").next().unwrap();
        let t: u64 = prefix["[stage stage".len()..]
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let deal: u64 = prefix
            .split("deal ")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            first,
            format!("[stage stage{t}, deal {deal}, w.rhai] {t}:{deal}:{long}")
        );
        assert_eq!(
            second,
            format!("[stage stage{t}, deal {deal}, w.rhai] second")
        );
    }
}

#[test]
fn a_run_writes_scripts_log_lines_with_their_seat() {
    let dir = tmp();
    let file = script_scenario(
        dir.path(),
        "threshold.rhai",
        THRESHOLD,
        "    id: mine\n    params: {take_at_most: 13}\n",
    );
    let out = dir.path().join("o");
    ok(&[arg(&file), "--out", arg(&out), "--threads", "2"]);
    let log = std::fs::read_to_string(out.join("scripts.log")).unwrap();
    assert!(!log.is_empty());
    for line in log.lines() {
        // threshold.rhai prints `seat N takes ...`; the prefix names the same seat.
        let seat = line
            .split("] seat ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(line.starts_with('['), "{line}");
        has(line, &format!("seat {seat}, mine] "));
    }
}

#[test]
fn sources_are_the_scripts_read_through_wrappers_too() {
    let script = "scenarios/heuristics/threshold.rhai";
    let plain = Standalone::recipe(&json!({ "script": script }), &paper()).unwrap();
    assert_eq!(
        plain.sources(),
        vec![(script.to_string(), THRESHOLD.to_string())]
    );
    let wrapped = Standalone::recipe(
        &json!({"kind": "epsilon", "params": {"agent": {"script": script}, "epsilon": 0.1}}),
        &paper(),
    )
    .unwrap();
    assert_eq!(wrapped.sources(), plain.sources());
    assert!(
        Standalone::recipe(&json!("random"), &paper())
            .unwrap()
            .sources()
            .is_empty()
    );
}

/// The sandbox's other limits (docs/rhai.md, "Sandbox and errors"), each met by a script that
/// would otherwise run: `eval` and modules are refused when the script is compiled, and too
/// deep a recursion, too long a string, too large an array or map stop the rehearsal, each
/// with its reason.
#[test]
fn the_sandbox_refuses_eval_modules_deep_calls_and_huge_values() {
    let cases = [
        (
            "eval.rhai",
            "fn call_jhyap(obs) { false }\nfn discard(obs) { eval(\"[obs.hand[0]]\") }\nfn pick(obs) { () }\n",
            "reserved keyword 'eval' is disabled",
        ),
        (
            "module.rhai",
            "import \"helpers\" as h;\nfn call_jhyap(obs) { false }\nfn discard(obs) { [obs.hand[0]] }\nfn pick(obs) { () }\n",
            "'import' is a reserved keyword",
        ),
        (
            "deep.rhai",
            "fn deep(n) { deep(n + 1) }\nfn call_jhyap(obs) { false }\nfn discard(obs) { deep(0) }\nfn pick(obs) { () }\n",
            "too deep: more than 64 nested function calls",
        ),
        (
            "string.rhai",
            "fn call_jhyap(obs) { false }\nfn discard(obs) { let s = \"x\"; loop { s += s; } }\nfn pick(obs) { () }\n",
            "Length of string is over the sandbox's limit (strings: 65,536 characters",
        ),
        (
            "array.rhai",
            "fn call_jhyap(obs) { false }\nfn discard(obs) { let a = []; for i in 0..100000 { a.push(i); } [obs.hand[0]] }\nfn pick(obs) { () }\n",
            "Size of array/BLOB is over the sandbox's limit",
        ),
        (
            "map.rhai",
            "fn call_jhyap(obs) { false }\nfn discard(obs) { let m = #{}; for i in 0..10000 { m[`k${i}`] = i; } let n = m.len(); [obs.hand[0]] }\nfn pick(obs) { () }\n",
            "Size of object map is over the sandbox's limit",
        ),
    ];
    for (name, source, reason) in cases {
        let t = invalid_script(name, source, "");
        assert!(t.contains(name) && t.contains(reason), "{name}: {t}");
    }
}
