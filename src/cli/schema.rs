//! `dhumbal-run schema`: the JSON Schema of scenario files (the same types that read them).

use std::process::ExitCode;

/// `dhumbal-run schema`.
pub fn schema() -> anyhow::Result<ExitCode> {
    let text = serde_json::to_string_pretty(&dhumbal_runner::scenario::json_schema())?;
    // A closed pipe (`dhumbal-run schema | head`) is not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), format!("{text}\n").as_bytes());
    Ok(ExitCode::SUCCESS)
}
