//! Problems found in a scenario file, each with its place (dotted path, line, column).

use std::fmt;
use std::path::PathBuf;

use dhumbal_agents::escape_controls;

use super::locate::Locations;

/// One problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where in the document, as a dotted path (`stages.1.agents.0.kind`); empty for the file.
    pub path: String,
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// Every problem found in a scenario file.
#[derive(Clone, Debug)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub problems: Vec<Problem>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "{} has {n} problem{}:",
            self.file.display(),
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "  {}", self.file.display())?;
            if let Some(line) = p.line {
                write!(f, ":{line}")?;
                if let Some(col) = p.column {
                    write!(f, ":{col}")?;
                }
            }
            // A message quotes values of the file, which may hold escape codes: shown, not
            // obeyed, on the terminal that prints it.
            let message = escape_controls(&p.message);
            if p.path.is_empty() {
                writeln!(f, ": {message}")?;
            } else {
                writeln!(f, ": `{}`: {message}", escape_controls(&p.path))?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

pub(super) fn syntax_problem(e: &serde_saphyr::Error, locations: &Locations) -> Problem {
    let location = e.location();
    let (line, column) = (
        location.map(|l| l.line() as usize),
        location.map(|l| l.column() as usize),
    );
    // The crate's message ends with a rendered snippet and starts with its own position; keep
    // the message itself, in plainer words for the common cases.
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("invalid YAML").trim();
    let mut message = first.trim_start_matches("error: ");
    if let Some(rest) = message.strip_prefix("line ")
        && let Some(i) = rest.find(": ")
    {
        message = &rest[i + 2..];
    }
    let message = match message {
        "invalid u64" | "invalid u32" | "invalid u8" => {
            "expected a whole number, 0 or more".to_string()
        }
        "invalid i64" => "expected a whole number".to_string(),
        "invalid f64" => "expected a number".to_string(),
        "invalid bool" => "expected true or false".to_string(),
        "expected mapping start" => {
            "expected a mapping (`key: value` lines, or `{key: value}`)".to_string()
        }
        "externally tagged enum expected scalar or mapping" => {
            "expected a name (one of the values listed for this field), not a list".to_string()
        }
        "expected sequence start" => "expected a list (`- item` lines, or `[a, b]`)".to_string(),
        other => other.to_string(),
    };
    let path = match (line, column) {
        (Some(l), Some(c)) => locations.path_at(l, c).unwrap_or_default(),
        _ => String::new(),
    };
    Problem {
        path,
        message,
        line,
        column,
    }
}
