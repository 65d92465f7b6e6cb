//! A cheap clock for timing decisions.
//!
//! Every decision is timed, and a built-in agent decides in well under a microsecond, so the
//! clock must cost little: on x86-64 it reads the time-stamp counter (about 10 ns here, against
//! about 25 ns for `Instant::now` and more for `quanta`, which fell back to the OS clock on our
//! VMs), converted to nanoseconds with a rate calibrated once against `Instant`. Elsewhere it
//! counts `Instant` nanoseconds directly. Timings are measurements, not results: they never
//! influence play.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The current tick count.
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC is available on every x86-64 processor and has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        epoch().elapsed().as_nanos() as u64
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds per tick, measured once (a 10 ms calibration on first use; see
/// [`calibrate_in_background`]).
fn ns_per_tick() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        if cfg!(not(target_arch = "x86_64")) {
            return 1.0;
        }
        let (t0, c0) = paired();
        std::thread::sleep(Duration::from_millis(10));
        let (t1, c1) = paired();
        let ticks = c1.wrapping_sub(c0).max(1) as f64;
        (t1 - t0).as_nanos() as f64 / ticks
    })
}

/// An `Instant` and the tick count at the same moment: of a few tries, the one whose two tick
/// reads around the `Instant` lie closest (a thread paused between its reads would skew the
/// rate by the pause), the ticks taken midway.
fn paired() -> (Instant, u64) {
    let mut best = (u64::MAX, Instant::now(), 0);
    for _ in 0..5 {
        let before = ticks();
        let now = Instant::now();
        let gap = ticks().wrapping_sub(before);
        if gap < best.0 {
            best = (gap, now, before.wrapping_add(gap / 2));
        }
    }
    (best.1, best.2)
}

/// Measures the tick rate on a thread of its own, once. A run calls it as it starts, so that
/// the first conversion (a play thread's, in its first round) finds the rate ready: measured
/// there, it kept every play thread waiting 20 ms (one sleeping through the calibration, the
/// others for its result), 2% of a million-round run.
pub fn calibrate_in_background() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("clock-calibration".into())
            .spawn(|| {
                ns_per_tick();
            });
    });
}

/// Converts a tick count to nanoseconds.
pub fn to_nanos(ticks: u64) -> u64 {
    (ticks as f64 * ns_per_tick()).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conversion: a calibrated, finite rate, applied linearly. No assertion here depends
    /// on how long anything took (a loaded machine stretches every duration).
    #[test]
    fn ticks_convert_linearly() {
        let rate = ns_per_tick();
        assert!(rate.is_finite() && rate > 0.0, "{rate} ns per tick");
        assert_eq!(to_nanos(0), 0);
        let k = 1_000_000_007;
        assert!(to_nanos(2 * k).abs_diff(2 * to_nanos(k)) <= 1);
    }

    /// A sleep lasts at least what it asked for, however loaded the machine: the clock may
    /// not read less (a rate calibrated too low, or ticks that stop, would).
    #[test]
    fn a_sleep_is_never_measured_short() {
        let start = ticks();
        std::thread::sleep(Duration::from_millis(30));
        let ns = to_nanos(ticks().wrapping_sub(start));
        assert!(ns >= 29_000_000, "{ns} ns for a 30 ms sleep");
    }
}
