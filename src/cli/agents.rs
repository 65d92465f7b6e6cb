//! `dhumbal-run agents`: the built-in agent kinds, their fields and parameters with defaults,
//! from the registry.

use std::process::ExitCode;

use dhumbal_agents::registry;

/// `dhumbal-run agents`.
pub fn agents() -> anyhow::Result<ExitCode> {
    use std::fmt::Write as _;
    let mut out = String::new();
    let line = |out: &mut String, p: &dhumbal_agents::Param| {
        let default = p.default.as_ref().map_or_else(
            || "required".to_string(),
            |d| format!("default {}", dhumbal_agents::family::show(d)),
        );
        let _ = writeln!(
            out,
            "  {:<24} {:<13} {:<16} {}",
            p.name,
            p.ty.describe(),
            default,
            p.doc
        );
    };
    let _ = writeln!(
        out,
        "Agent kinds (use as `kind:` in a scenario; set parameters under `params:`).\n"
    );
    for f in registry::FAMILIES {
        let _ = writeln!(out, "{}: {}", f.name(), f.doc());
        let fields = f.fields();
        if let Some(key) = f.shorthand() {
            let _ = writeln!(
                out,
                "  (written `{key}: ...` in place of `kind: {}`; these fields sit beside it)",
                f.name()
            );
        }
        for p in &fields {
            line(&mut out, p);
        }
        let params = f.params();
        if f.open_params() {
            let _ = writeln!(
                out,
                "  {:<24} declared by the script itself (`fn parameters()`, docs/rhai.md) and checked against it",
                "params:"
            );
        } else if params.is_empty() && fields.is_empty() {
            let _ = writeln!(out, "  (no parameters)");
        }
        for p in &params {
            line(&mut out, p);
        }
        let _ = writeln!(out);
    }
    // A closed pipe (`dhumbal-run agents | head`) is not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
    Ok(ExitCode::SUCCESS)
}
