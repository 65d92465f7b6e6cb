//! `tuned: FILE`: an agent whose entry is kept in a file, the way a `tune:` section writes its
//! best parameters (docs/tuning.md). The file holds one agent entry as JSON (which is also
//! YAML, so the same text pastes into a scenario's `agents:`): `{"kind": "aggressive",
//! "params": {...}}` or `{"script": "mine.rhai", "params": {...}}`, any nesting included.
//! Paths inside it (a script, a checkpoint) are relative to the file, so a tuned agent can be
//! seated from any scenario.
//!
//! A file that does not exist yet but that a `tune:` section of the same scenario writes is
//! accepted: the run tunes it before play (its agents refuse to play until then), as a
//! training's checkpoint is.
//!
//! This file is the whole family; its entry in `FAMILIES` (`lib.rs`) registers it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::{Agent, Rules};

use crate::family::{Context, Entry, Family, Param, ParamType, Recipe, Resolve};
use crate::learned::PendingAgent;
use crate::log::AgentLog;
use crate::registry;

pub struct TunedFamily;

impl Family for TunedFamily {
    fn name(&self) -> &'static str {
        "tuned"
    }

    fn doc(&self) -> &'static str {
        "an agent entry kept in a file (JSON), as `dhumbal-run tune` writes the best parameters it found: `tuned: tuned/mine.json`"
    }

    fn params(&self) -> Vec<Param> {
        Vec::new()
    }

    fn fields(&self) -> Vec<Param> {
        vec![Param::required(
            "tuned",
            ParamType::Path,
            "the agent file (JSON: one agent entry), relative to the scenario file",
        )]
    }

    fn shorthand(&self) -> Option<&'static str> {
        Some("tuned")
    }

    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
        let written = entry.text("tuned");
        let path = cx.path(&written);
        if !path.is_file() {
            if cx.planned(&path) {
                return Some(Arc::new(TunedRecipe {
                    written,
                    id: stem(&path),
                    text: String::new(),
                    inner: None,
                }));
            }
            cx.problem(
                "tuned",
                format!(
                    "no agent file at {}: tune one with `dhumbal-run tune` (a `tune:` section that writes this path), or fix the path",
                    path.display()
                ),
            );
            return None;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                cx.problem("tuned", format!("cannot read {}: {e}", path.display()));
                return None;
            }
        };
        let mut value: Value = match serde_json::from_str(&text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => {
                cx.problem(
                    "tuned",
                    format!(
                        "{} holds {other}, not an agent entry (a JSON object such as {{\"kind\": \"aggressive\", \"params\": {{...}}}})",
                        path.display()
                    ),
                );
                return None;
            }
            Err(e) => {
                cx.problem(
                    "tuned",
                    format!("{} is not valid JSON: {e}", path.display()),
                );
                return None;
            }
        };
        // The file's `id` names the agent unless the seat gives its own.
        let id = match value.as_object_mut().and_then(|m| m.remove("id")) {
            Some(Value::String(id)) => id,
            _ => stem(&path),
        };
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let inner = {
            let mut file_cx = FileContext {
                outer: cx,
                folder,
                written: &written,
            };
            registry::resolve(&value, &mut file_cx, "")?
        };
        Some(Arc::new(TunedRecipe {
            written,
            id,
            text,
            inner: Some(inner),
        }))
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tuned".into())
}

/// Resolution of the file's entry: paths relative to the file, problems reported at the
/// seat's `tuned` field with the file's own field path.
struct FileContext<'c, 'w> {
    outer: &'c mut dyn Resolve,
    folder: PathBuf,
    written: &'w str,
}

impl Context for FileContext<'_, '_> {
    fn rules(&self) -> Option<&Arc<Rules>> {
        self.outer.rules()
    }

    fn path(&self, written: &str) -> PathBuf {
        self.folder.join(written)
    }

    fn problem(&mut self, field: &str, message: String) {
        let at = if field.is_empty() {
            String::new()
        } else {
            format!(" at `{field}`")
        };
        self.outer
            .problem("tuned", format!("in {}{at}: {message}", self.written));
    }

    fn log(&self) -> Arc<AgentLog> {
        self.outer.log()
    }

    fn planned(&self, path: &Path) -> bool {
        self.outer.planned(path)
    }
}

struct TunedRecipe {
    written: String,
    id: String,
    /// The file as read (copied into the results folder with the scenario's sources).
    text: String,
    /// The file's agent; `None` while a planned file is not tuned yet.
    inner: Option<Arc<dyn Recipe>>,
}

impl Recipe for TunedRecipe {
    fn family(&self) -> &'static str {
        "tuned"
    }

    fn kind(&self) -> String {
        self.inner
            .as_ref()
            .map_or_else(|| "tuned".to_string(), |r| r.kind())
    }

    fn default_id(&self) -> String {
        self.id.clone()
    }

    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("tuned".into(), Value::from(self.written.clone()));
        if let Some(inner) = &self.inner {
            m.insert("agent".into(), Value::Object(inner.describe()));
        }
        m
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        match &self.inner {
            Some(r) => r.build(id),
            None => Box::new(PendingAgent {
                name: id.to_string(),
                message: format!(
                    "agent file {} is not tuned yet (run the scenario, which tunes it first, or `dhumbal-run tune`)",
                    self.written
                ),
            }),
        }
    }

    fn searches(&self) -> bool {
        self.inner.as_ref().is_some_and(|r| r.searches())
    }

    /// Its agents are its entry's (see `build`).
    fn inner(&self) -> Option<&dyn Recipe> {
        self.inner.as_deref()
    }

    fn uniform_random(&self) -> bool {
        self.inner.as_ref().is_some_and(|r| r.uniform_random())
    }

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        let Some(inner) = &self.inner else {
            return Ok(None);
        };
        Ok(inner.for_rules(rules)?.map(|inner| {
            Arc::new(TunedRecipe {
                written: self.written.clone(),
                id: self.id.clone(),
                text: self.text.clone(),
                inner: Some(inner),
            }) as Arc<dyn Recipe>
        }))
    }

    fn sources(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.inner.is_some() {
            out.push((self.written.clone(), self.text.clone()));
        }
        if let Some(inner) = &self.inner {
            out.extend(inner.sources());
        }
        out
    }
}
