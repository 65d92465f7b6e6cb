//! Crash points, for the tests that kill a run: with `DHUMBAL_RUN_CRASH_AT=POINT:N` in its
//! environment, the process kills itself with SIGKILL (no destructor runs, no buffer is
//! flushed: exactly what `kill -9` or a power cut leaves) the N-th time it passes POINT. A
//! test can so stop a run at each moment that matters, every time, and a failure names the
//! point to replay it, which killing at wall-clock moments cannot promise.
//!
//! The points (in the order a part passes them):
//! - `part-begun`: a part's temporary file created under `.incoming/`, nothing in it yet;
//! - `part-written`: the part written and synced, not yet renamed into `rounds/`;
//! - `part-placed`: the part renamed into `rounds/`, `progress.json` not yet told;
//! - `progress-saved`: `progress.json` replaced;
//! - `stage-finished`: a stage's summary and statistics written, the next stage not begun.
//!
//! Without the variable, passing a point costs one load of an initialised `OnceLock`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The points a run passes (see the module's documentation).
pub const POINTS: [&str; 5] = [
    "part-begun",
    "part-written",
    "part-placed",
    "progress-saved",
    "stage-finished",
];

/// Kills the process if this is the passing of `point` that `DHUMBAL_RUN_CRASH_AT` names.
pub fn point(point: &'static str) {
    static PLAN: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static PASSED: AtomicU64 = AtomicU64::new(0);
    let plan = PLAN.get_or_init(|| {
        let value = std::env::var("DHUMBAL_RUN_CRASH_AT").ok()?;
        let (name, n) = value.rsplit_once(':')?;
        let n = n.parse().ok()?;
        POINTS.contains(&name).then(|| (name.to_string(), n))
    });
    if let Some((name, n)) = plan
        && name == point
        && PASSED.fetch_add(1, Ordering::SeqCst) + 1 == *n
    {
        die();
    }
}

#[cfg(unix)]
fn die() -> ! {
    // At once, from this thread: a `kill` program, forked and run, took milliseconds, in which
    // the other threads went on writing parts (a run's last one, even its reports).
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    // Not delivered: abort is the nearest thing.
    std::process::abort()
}

#[cfg(not(unix))]
fn die() -> ! {
    std::process::abort()
}
