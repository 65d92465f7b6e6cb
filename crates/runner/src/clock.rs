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

/// Nanoseconds per tick, measured once (a 20 ms calibration on first use).
fn ns_per_tick() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        if cfg!(not(target_arch = "x86_64")) {
            return 1.0;
        }
        let (t0, c0) = (Instant::now(), ticks());
        std::thread::sleep(Duration::from_millis(20));
        let (t1, c1) = (Instant::now(), ticks());
        let ticks = c1.wrapping_sub(c0).max(1) as f64;
        (t1 - t0).as_nanos() as f64 / ticks
    })
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
