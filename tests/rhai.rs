//! A researcher's Rhai typo, caught: a misspelt key of `obs` or `obs.params` is an error with
//! the script's line and column and the nearest key (the engine fails on a missing map key),
//! met by the rehearsal at `validate` and before a run; a return value of the wrong type names
//! the function's line; a top-level `let` read in a function gets a hint; `debug` lines and
//! `validate --help` say what docs/rhai.md says; and correct scripts, the optional-key idioms
//! and the docs' examples still validate and play as before.

mod common;
use common::{
    arg, failed_rehearsal, has, has_all, invalid_script, lacks, ok, refused, run, script_scenario,
    text, tmp,
};

const THRESHOLD: &str = include_str!("../scenarios/heuristics/threshold.rhai");
const AGGRESSIVE: &str = include_str!("../scenarios/heuristics/aggressive.rhai");
const DOCS: &str = include_str!("../docs/rhai.md");

/// A discard that sheds the most valuable legal set, so that hands get low enough for the
/// rehearsal to ask `call_jhyap`.
const SHED: &str = "fn discard(obs) {\n\
                    \x20   let best = []; let top = -1;\n\
                    \x20   for d in legal_discards(obs.hand) { let v = hand_value(d); if v > top { best = d; top = v; } }\n\
                    \x20   best\n\
                    }\n";

/// The 1-based line and column of the first `needle` in `source`.
fn at(source: &str, needle: &str) -> (usize, usize) {
    for (i, line) in source.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            return (i + 1, line[..byte].chars().count() + 1);
        }
    }
    panic!("`{needle}` is not in the script");
}

#[test]
fn a_misspelt_obs_key_fails_validate_with_line_column_and_the_nearest_key() {
    let typo = THRESHOLD.replace("obs.hand_value <= call_at", "obs.hand_vlaue <= call_at");
    assert_ne!(typo, THRESHOLD);
    let (line, column) = at(&typo, "hand_vlaue");
    let t = failed_rehearsal("typo.rhai", &typo);
    has(
        &t,
        &format!(
            "script typo.rhai, in call_jhyap(), line {line}, column {column}: `obs` has no key `hand_vlaue`; did you mean `hand_value`?"
        ),
    );
    // Read by index, and under another name than `obs`.
    let script =
        format!("fn call_jhyap(o) {{ o[\"hand_vlaue\"] <= 5 }}\n{SHED}fn pick(obs) {{ () }}\n");
    let (line, column) = at(&script, "\"hand_vlaue\"");
    let t = invalid_script("index.rhai", &script, "");
    has(
        &t,
        &format!(
            "line {line}, column {column}: `o` has no key `hand_vlaue`; did you mean `hand_value`?"
        ),
    );
    // Nothing near: the map's keys are listed, and how to read a key that may be absent.
    let script =
        format!("fn call_jhyap(obs) {{ obs.zzzzqqqq <= 5 }}\n{SHED}fn pick(obs) {{ () }}\n");
    let t = invalid_script("far.rhai", &script, "");
    has_all(
        &t,
        &[
            "`obs` has no key `zzzzqqqq`; its keys: active, ",
            "hand_value",
            "\"zzzzqqqq\" in map",
        ],
    );
}

#[test]
fn a_misspelt_parameter_fails_validate_with_the_nearest_declared_name() {
    let typo = THRESHOLD.replace("obs.params.take_at_most", "obs.params.take_atmost");
    assert_ne!(typo, THRESHOLD);
    let (line, column) = at(&typo, "take_atmost");
    let t = invalid_script("param.rhai", &typo, "");
    has(
        &t,
        &format!(
            "script param.rhai, in pick(), line {line}, column {column}: `obs.params` has no key `take_atmost`; did you mean `take_at_most`?"
        ),
    );
    // A script that declares no parameters.
    let script = format!(
        "fn call_jhyap(obs) {{ obs.hand_value <= obs.params.callat }}\n{SHED}fn pick(obs) {{ () }}\n"
    );
    let t = invalid_script("none.rhai", &script, "");
    has(
        &t,
        "`obs.params` has no key `callat`: the script declares no parameters",
    );
    // A map the scenario gives as a parameter (`type: "any"`), and the parameters under
    // another name.
    let script = format!(
        "fn parameters() {{ #{{ weights: #{{ type: \"any\" }}, call_at: #{{ type: \"int\", default_value: 5 }} }} }}\n\
         fn call_jhyap(obs) {{ obs.hand_value <= obs.params.weights.hihg }}\n{SHED}fn pick(obs) {{ () }}\n"
    );
    let t = invalid_script("nested.rhai", &script, "    params: {weights: {high: 7}}\n");
    has(
        &t,
        "`obs.params.weights` has no key `hihg`; did you mean `high`?",
    );
    let script = script
        .replace("obs.params.weights.hihg", "p.callat")
        .replace(
            "fn call_jhyap(obs) {",
            "fn call_jhyap(obs) { let p = obs.params;",
        );
    let t = invalid_script("alias.rhai", &script, "    params: {weights: {high: 7}}\n");
    has(
        &t,
        "`p` has no key `callat`; did you mean `obs.params.call_at`?",
    );
}

#[test]
fn a_run_refuses_a_misspelt_key_before_it_plays() {
    let dir = tmp();
    let typo = THRESHOLD.replace("obs.hand_value <= call_at", "obs.hand_vlaue <= call_at");
    let file = script_scenario(dir.path(), "typo.rhai", &typo, "");
    let out = dir.path().join("out");
    let t = refused(&[arg(&file), "--out", arg(&out), "--threads", "1"]);
    has_all(&t, &["s.yaml:5:", "did you mean `hand_value`?"]);
    let rounds = out.join("rounds");
    assert!(
        !rounds.exists() || std::fs::read_dir(&rounds).unwrap().next().is_none(),
        "records were written: {t}"
    );
}

#[test]
fn a_return_value_of_the_wrong_type_names_the_functions_line() {
    let script = format!(
        "// returns a number\n\n{SHED}fn call_jhyap(obs) {{\n    obs.hand_value\n}}\nfn pick(obs) {{ () }}\n"
    );
    let (line, _) = at(&script, "fn call_jhyap");
    let t = invalid_script("number.rhai", &script, "");
    has(
        &t,
        &format!(
            "script number.rhai, call_jhyap() (line {line}) must return true or false, not i64"
        ),
    );
    // `()`: the usual cause is said.
    let script = "fn call_jhyap(obs) { false }\n\nfn discard(obs) {\n    if obs.hand_value > 100 { [obs.hand[0]] }\n}\nfn pick(obs) { () }\n";
    let t = invalid_script("unit.rhai", script, "");
    has(
        &t,
        "discard() (line 3) must return a card id or an array of card ids, not ()",
    );
    has(&t, "an `if` without `else`");
}

#[test]
fn a_top_level_let_read_in_a_function_gets_a_hint() {
    let script = format!(
        "// the threshold\nlet limit = 8;\nfn call_jhyap(obs) {{ obs.hand_value <= limit }}\n{SHED}fn pick(obs) {{ () }}\n"
    );
    let (line, column) = at(&script, "limit }");
    let t = invalid_script("top.rhai", &script, "");
    has(
        &t,
        &format!(
            "in call_jhyap(), line {line}, column {column}: variable `limit` not found: it is set by top-level code (line 2), which is not run"
        ),
    );
    has(&t, "`fn parameters()`, read as `obs.params.limit`");
    // A `let` inside another function is not top-level code.
    let script = format!(
        "fn helper() {{ let limit = 8; limit }}\nfn call_jhyap(obs) {{ obs.hand_value <= limit }}\n{SHED}fn pick(obs) {{ () }}\n"
    );
    let t = invalid_script("local.rhai", &script, "");
    has(&t, "variable `limit` not found (a function sees only");
    lacks(&t, "set by top-level code");
}

#[test]
fn debug_lines_and_validate_help_say_what_the_docs_say() {
    let dir = tmp();
    let script = format!(
        "fn call_jhyap(obs) {{ false }}\n{SHED}fn pick(obs) {{\n    debug(obs.turn);\n    ()\n}}\n"
    );
    let (line, column) = at(&script, "debug(");
    let file = script_scenario(dir.path(), "debug.rhai", &script, "");
    let out = dir.path().join("out");
    ok(&[arg(&file), "--out", arg(&out)]);
    let log = std::fs::read_to_string(out.join("scripts.log")).unwrap();
    has(&log, &format!("debug at line {line}, column {column}: "));
    assert!(
        DOCS.contains("`debug(x)` lines read `debug at line 3, column 5: x`"),
        "docs/rhai.md says another form"
    );
    let help = text(&run(&["validate", "--help"]));
    has(&help, "a few rounds, or eight");
    assert!(DOCS.contains("a few\nrounds") || DOCS.contains("a few rounds"));
    assert!(DOCS.contains("or eight rounds"));
}

/// The code blocks of `markdown` whose fence names one of `langs`.
fn blocks(markdown: &str, langs: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let (mut fenced, mut wanted): (bool, Option<String>) = (false, None);
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            if fenced {
                out.extend(wanted.take());
            } else if langs.contains(&t.trim_start_matches('`')) {
                wanted = Some(String::new());
            }
            fenced = !fenced;
            continue;
        }
        if let Some(block) = wanted.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    out
}

/// Each Rhai example of docs/rhai.md as a whole script: the block, with the parameters the
/// docs declare and plain versions of the functions it does not define; and the README's
/// `my-agent.rhai`.
fn docs_scripts() -> Vec<(String, String)> {
    let rhai = blocks(DOCS, &["rhai"]);
    let declaration = rhai
        .iter()
        .find(|b| b.contains("fn parameters()"))
        .expect("docs/rhai.md declares parameters in an example")
        .clone();
    let plain = [
        ("fn parameters(", declaration.as_str()),
        (
            "fn call_jhyap(",
            "fn call_jhyap(obs) { obs.hand_value <= obs.threshold }\n",
        ),
        ("fn discard(", SHED),
        ("fn pick(", "fn pick(obs) { () }\n"),
    ];
    let mut out = Vec::new();
    for (i, block) in rhai.iter().enumerate() {
        let mut script = block.clone();
        for (defined, fallback) in plain {
            if !script.contains(defined) {
                script.push_str(fallback);
            }
        }
        out.push((format!("docs-{i}.rhai"), script));
    }
    assert!(
        out.len() >= 4,
        "docs/rhai.md has fewer Rhai examples than it had"
    );
    let readme = std::fs::read_to_string("README.md").unwrap();
    out.extend(
        blocks(&readme, &["rust", "rhai"])
            .into_iter()
            .filter(|b| b.starts_with("// my-agent.rhai"))
            .map(|b| ("my-agent.rhai".to_string(), b)),
    );
    out
}

#[test]
fn correct_scripts_validate_and_play_as_before() {
    let dir = tmp();
    // The shipped scripts, the docs' examples, and the idioms for a key that may be absent
    // (`in`, `get`), on the observation and on maps the script builds and reads.
    let optional = format!(
        "fn parameters() {{ #{{ call_at: #{{ type: \"int\" }} }} }}\n\
         fn call_jhyap(obs) {{\n\
         \x20   let limit = if \"call_at\" in obs.params && obs.params.call_at != () {{ obs.params.call_at }} else {{ obs.threshold }};\n\
         \x20   if \"no_such_key\" in obs {{ return false; }}\n\
         \x20   let extra = obs.get(\"no_such_key\") ?? 0;\n\
         \x20   let seen = #{{}};\n\
         \x20   seen[\"a\"] = 1; seen.b = 2;\n\
         \x20   if seen.get(\"c\") != () {{ return false; }}\n\
         \x20   obs.hand_value + extra + seen.a + seen.b - 3 <= limit\n\
         }}\n{SHED}fn pick(obs) {{ () }}\n"
    );
    let mut scripts = vec![
        ("threshold.rhai".to_string(), THRESHOLD.to_string()),
        ("aggressive.rhai".to_string(), AGGRESSIVE.to_string()),
        ("optional.rhai".to_string(), optional),
    ];
    scripts.extend(docs_scripts());
    for (name, source) in scripts {
        let file = script_scenario(dir.path(), &name, &source, "");
        let o = run(&["validate", arg(&file)]);
        assert!(o.status.success(), "{name}: {}", text(&o));
        let out = dir.path().join(format!("out-{name}"));
        let o = run(&[arg(&file), "--out", arg(&out), "--trace", "0"]);
        assert!(o.status.success(), "{name}: {}", text(&o));
    }
    // (The port still plays record for record as the built-in agent: tests/cli.rs,
    // the_rhai_port_of_aggressive_gives_the_native_records.)
}
