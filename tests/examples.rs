//! Every command example of the README and of docs/*.md runs as written, as a new user would
//! paste it: the `dhumbal-run` lines of each fenced block marked ```sh, in order, one document
//! at a time in a folder of its own that has the repository's `scenarios/` (the examples are
//! written from the repository's root), each required to exit 0.
//!
//! - A block of another language whose first line names a file (`# my-study.yaml`,
//!   `// my-agent.rhai`) is that file: written into the folder before the document's commands
//!   run, so that the README's own study validates as the README says.
//! - Paths under `/tmp/` go to the test's own folder (`<folder>/tmp/...`), so that runs of the
//!   test neither meet each other nor a person's runs; `./target/release/dhumbal-run` is the
//!   binary under test. `mkdir` and `cp` lines run too (later commands read what they make);
//!   other commands (`cargo`, `scripts/...`, Python) are listed, not run: other tests cover
//!   them.
//! - A command too long for a test (the championship, ISMCTS at a thousand iterations on
//!   thousands of rounds, a tuning), one that needs what a person has and the repository does
//!   not (a cluster's `/scratch`, a study of their own, a keyboard), is marked in the document's
//!   source, just before its block, by an HTML comment that readers do not see:
//!   `<!-- example skip "PATTERN": why -->` skips the block's commands that contain PATTERN.
//!   The test lists every command it skipped with the reason, and fails on a mark that skips
//!   nothing (a stale one).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// The longest one example may take before the test calls it too slow (mark it skipped,
/// saying why, or make it smaller).
const LIMIT: Duration = Duration::from_secs(120);

/// A fenced block: the document's line where it starts, its language and its lines, and the
/// skip marks just before it.
struct Block {
    line: usize,
    lang: String,
    body: Vec<String>,
    skips: Vec<Skip>,
}

/// `<!-- example skip "PATTERN": REASON -->`.
#[derive(Clone)]
struct Skip {
    pattern: String,
    reason: String,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut skips = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, l)) = lines.next() {
        if let Some(rest) = l.trim().strip_prefix("<!-- example skip \"") {
            let (pattern, rest) = rest.split_once('"').expect("a closing quote");
            let reason = rest
                .trim_start_matches(':')
                .trim_end_matches("-->")
                .trim()
                .to_string();
            skips.push(Skip {
                pattern: pattern.to_string(),
                reason,
                line: i + 1,
            });
        } else if let Some(lang) = l.strip_prefix("```") {
            let body: Vec<String> = lines
                .by_ref()
                .take_while(|(_, l)| !l.starts_with("```"))
                .map(|(_, l)| l.to_string())
                .collect();
            out.push(Block {
                line: i + 1,
                lang: lang.trim().to_string(),
                body,
                skips: std::mem::take(&mut skips),
            });
        }
    }
    assert!(skips.is_empty(), "a skip mark with no block after it");
    out
}

/// The file a block is, from its first line (`# name.yaml`, `// name.rhai`), if it names one.
fn named_file(b: &Block) -> Option<String> {
    let first = b.body.first()?.trim();
    let name = first
        .strip_prefix("# ")
        .or_else(|| first.strip_prefix("// "))?
        .trim();
    (!name.contains(' ') && name.contains('.') && !name.contains('/')).then(|| name.to_string())
}

/// What happened to each command of the documents.
#[derive(Default)]
struct Tally {
    ran: Vec<String>,
    skipped: Vec<String>,
    not_ours: Vec<String>,
    failed: Vec<String>,
}

/// Runs the commands of the document at `doc` (relative to the repository's root).
fn run_document(root: &Path, doc: &str, tally: &mut Tally) {
    let text = std::fs::read_to_string(root.join(doc)).unwrap();
    let blocks = blocks(&text);
    let dir = common::tmp();
    let work = dir.path();
    std::os::unix::fs::symlink(root.join("scenarios"), work.join("scenarios")).unwrap();
    std::fs::create_dir(work.join("tmp")).unwrap();
    for b in blocks.iter().filter(|b| b.lang != "sh") {
        if let Some(name) = named_file(b) {
            std::fs::write(work.join(&name), b.body.join("\n") + "\n").unwrap();
        }
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_dhumbal-run"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = format!("{}/", work.join("tmp").display());
    for b in blocks.iter().filter(|b| b.lang == "sh") {
        let mut used = vec![false; b.skips.len()];
        for (k, line) in b.body.iter().enumerate() {
            let command = line.trim();
            let at = format!("{doc}:{}: {command}", b.line + 1 + k);
            if command.is_empty() || command.starts_with('#') {
                continue;
            }
            let ours = [
                "dhumbal-run ",
                "./target/release/dhumbal-run ",
                "mkdir ",
                "cp ",
            ]
            .iter()
            .any(|p| command.starts_with(p));
            if !ours {
                tally.not_ours.push(at);
                continue;
            }
            if let Some(i) = b.skips.iter().position(|s| command.contains(&s.pattern)) {
                used[i] = true;
                tally
                    .skipped
                    .push(format!("{at}\n      skipped: {}", b.skips[i].reason));
                continue;
            }
            let written = command
                .replace("./target/release/dhumbal-run", "dhumbal-run")
                .replace("/tmp/", &tmp);
            let began = Instant::now();
            let child = Command::new("bash")
                .args(["-c", &written])
                .current_dir(work)
                .env("PATH", &path)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let pid = child.id().to_string();
            let output = std::thread::spawn(move || {
                let mut child = child;
                let mut out = String::new();
                let mut err = String::new();
                use std::io::Read as _;
                if let Some(mut s) = child.stdout.take() {
                    let _ = s.read_to_string(&mut out);
                }
                if let Some(mut s) = child.stderr.take() {
                    let _ = s.read_to_string(&mut err);
                }
                (child.wait().unwrap(), out, err)
            });
            // Waited for up to the limit; a command past it is reported and killed.
            while !output.is_finished() && began.elapsed() < LIMIT {
                std::thread::sleep(Duration::from_millis(50));
            }
            if !output.is_finished() {
                let _ = Command::new("kill").args(["-9", &pid]).status();
                tally.failed.push(format!(
                    "{at}\n      took more than {} s: too long for this test; make it smaller \
                     or mark it `<!-- example skip \"...\": why -->`",
                    LIMIT.as_secs()
                ));
                continue;
            }
            let (status, out, err) = output.join().unwrap();
            if status.success() {
                tally
                    .ran
                    .push(format!("{at}  ({:.1} s)", began.elapsed().as_secs_f64()));
            } else {
                let tail = |t: &str| {
                    let lines: Vec<&str> = t.lines().collect();
                    lines[lines.len().saturating_sub(15)..].join("\n        ")
                };
                tally.failed.push(format!(
                    "{at}\n      {status}\n        {}\n        {}",
                    tail(&out),
                    tail(&err)
                ));
            }
        }
        for (s, used) in b.skips.iter().zip(used) {
            if !used {
                tally.failed.push(format!(
                    "{doc}:{}: the mark skip \"{}\" skips no command of the block after it",
                    s.line, s.pattern
                ));
            }
        }
    }
}

#[test]
fn every_command_example_of_the_readme_and_the_docs_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".into());
    let mut tally = Tally::default();
    for doc in &docs {
        run_document(root, doc, &mut tally);
    }
    println!("ran {} commands:", tally.ran.len());
    for c in &tally.ran {
        println!("  {c}");
    }
    println!("skipped {}, as their documents say:", tally.skipped.len());
    for c in &tally.skipped {
        println!("  {c}");
    }
    println!(
        "not dhumbal-run commands, not run here ({}):",
        tally.not_ours.len()
    );
    for c in &tally.not_ours {
        println!("  {c}");
    }
    assert!(
        tally.failed.is_empty(),
        "{} example(s) do not run as written:\n  {}",
        tally.failed.len(),
        tally.failed.join("\n  ")
    );
    // The documents hold commands that run: a parser that found none would pass on nothing.
    assert!(
        tally.ran.len() >= 15,
        "only {} commands ran",
        tally.ran.len()
    );
}
