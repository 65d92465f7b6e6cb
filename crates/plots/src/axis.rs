//! Axis ticks (linear and log10) and number formatting for labels.

/// Ticks of a linear axis running from `lo` to `hi`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ticks {
    pub values: Vec<f64>,
    pub labels: Vec<String>,
    lo: f64,
    hi: f64,
}

impl Ticks {
    pub fn lo(&self) -> f64 {
        self.lo
    }

    pub fn hi(&self) -> f64 {
        self.hi
    }

    /// Position of `v` between `from` (at lo) and `to` (at hi).
    pub fn map(&self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.lo()) / (self.hi() - self.lo()) * (to - from)
    }
}

/// "Nice" ticks (1, 2, 2.5 or 5 times a power of ten) covering `[lo, hi]` with at most
/// `max_ticks` ticks (at least 2); the axis runs from the first to the last tick (bar charts,
/// whose bars start at 0). Non-finite bounds give 0..1; an empty range is widened.
pub(crate) fn linear(lo: f64, hi: f64, max_ticks: usize) -> Ticks {
    let (lo, hi) = usable_range(lo, hi);
    let (step, m) = nice_step(lo, hi, max_ticks, |step| {
        (hi / step - 1e-9).ceil() - (lo / step + 1e-9).floor() + 1.0
    });
    let a = (lo / step + 1e-9).floor() as i64;
    let b = (hi / step - 1e-9).ceil() as i64;
    let values: Vec<f64> = (a..=b).map(|i| i as f64 * step).collect();
    let (first, last) = (values[0], values[values.len() - 1]);
    make(values, step, m, first, last)
}

/// Nice ticks inside `[lo, hi]`, at most `max_ticks`; the axis runs exactly from `lo` to
/// `hi` (line charts, whose data should fill the frame).
pub(crate) fn linear_within(lo: f64, hi: f64, max_ticks: usize) -> Ticks {
    let (lo, hi) = usable_range(lo, hi);
    let (step, m) = nice_step(lo, hi, max_ticks, |step| {
        (hi / step + 1e-9).floor() - (lo / step - 1e-9).ceil() + 1.0
    });
    let a = (lo / step - 1e-9).ceil() as i64;
    let b = (hi / step + 1e-9).floor() as i64;
    let values: Vec<f64> = (a..=b).map(|i| i as f64 * step).collect();
    make(values, step, m, lo, hi)
}

fn usable_range(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) || !(hi - lo).is_finite() {
        // One value: show it inside a range (0..1 when it is zero).
        let pad = lo.abs() * 0.1;
        if pad == 0.0 || !(hi - lo).is_finite() {
            (0.0, 1.0)
        } else {
            (lo - pad, hi + pad)
        }
    } else {
        (lo, hi)
    }
}

/// The smallest nice step (and its 1/2/2.5/5 multiplier) whose tick count is at most
/// `max_ticks`.
fn nice_step(lo: f64, hi: f64, max_ticks: usize, count: impl Fn(f64) -> f64) -> (f64, f64) {
    let max_ticks = max_ticks.max(2);
    let raw = (hi - lo) / (max_ticks - 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        let step = m * mag;
        if count(step) <= max_ticks as f64 {
            return (step, m);
        }
    }
    (10.0 * mag, 1.0)
}

fn make(values: Vec<f64>, step: f64, m: f64, lo: f64, hi: f64) -> Ticks {
    let decimals = decimals_for(step, m);
    let labels = values.iter().map(|&v| format_number(v, decimals)).collect();
    Ticks {
        values,
        labels,
        lo,
        hi,
    }
}

/// Decimals needed to write multiples of `step` (= m x 10^k) exactly.
fn decimals_for(step: f64, m: f64) -> usize {
    let k = step.log10().floor() as i32;
    let extra = if m == 2.5 { 1 } else { 0 };
    (-k + extra).max(0) as usize
}

/// A number with `decimals` decimals, a true minus sign, no negative zero, and thousands
/// separators for whole numbers from 1,000; beyond a million, or below 10^-6, as m×10ⁿ.
pub(crate) fn format_number(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let magnitude = v.abs();
    if magnitude >= 1e6 || decimals > 6 {
        if magnitude < 0.5 * 10f64.powi(-(decimals.min(300) as i32)) {
            return "0".to_string();
        }
        return scientific(v);
    }
    let text = format!("{:.*}", decimals, magnitude);
    let is_zero = text.chars().all(|c| c == '0' || c == '.');
    let text = if decimals == 0 && magnitude >= 1_000.0 {
        group_thousands(&text)
    } else {
        text
    };
    if v < 0.0 && !is_zero {
        format!("\u{2212}{text}")
    } else {
        text
    }
}

/// m×10ⁿ with up to three significant digits.
fn scientific(v: f64) -> String {
    let formatted = format!("{:.2e}", v.abs());
    let (mantissa, exponent) = formatted.split_once('e').unwrap_or((&formatted, "0"));
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if v < 0.0 { "\u{2212}" } else { "" };
    if mantissa == "1" {
        format!("{sign}10{}", superscript(exponent))
    } else {
        format!("{sign}{mantissa}\u{00D7}10{}", superscript(exponent))
    }
}

/// A string of digits with a comma every three from the right (`1234567` as `1,234,567`), as
/// the axes write numbers; tables and pages beside the figures use it too.
pub fn group_thousands(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Ticks of a log10 axis spanning whole decades.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LogTicks {
    pub lo_exp: i32,
    pub hi_exp: i32,
    /// Ticks that may carry a label: the decades, plus 2 and 5 times them when the axis
    /// spans at most two decades.
    pub major: Vec<LogTick>,
    /// Unlabelled ticks at the other integer multiples.
    pub minor: Vec<f64>,
}

/// A labelled log tick: `multiple` x 10^`exponent`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LogTick {
    pub value: f64,
    pub multiple: i32,
    pub exponent: i32,
}

impl LogTick {
    /// As a plain number in the usual range (0.001 to 10,000), else with a power of ten.
    pub fn plain(&self) -> String {
        if (-3..=4).contains(&self.exponent) {
            format_number(self.value, (-self.exponent).max(0) as usize)
        } else {
            self.power()
        }
    }

    /// With a power of ten: 10⁻³, 2×10⁴ (compact when decades are close together).
    pub fn power(&self) -> String {
        if self.multiple == 1 {
            format!("10{}", superscript(self.exponent))
        } else {
            format!("{}\u{00D7}10{}", self.multiple, superscript(self.exponent))
        }
    }
}

impl LogTicks {
    /// Position of `v` (> 0) between `from` (at 10^lo_exp) and `to` (at 10^hi_exp).
    pub fn map(&self, v: f64, from: f64, to: f64) -> f64 {
        let t = (v.log10() - f64::from(self.lo_exp)) / f64::from(self.hi_exp - self.lo_exp);
        from + t * (to - from)
    }
}

/// Decades covering the positive finite values in `[min, max]`.
pub(crate) fn log10(min: f64, max: f64) -> LogTicks {
    let (mut lo, mut hi) = if min > 0.0 && max > 0.0 && min.is_finite() && max.is_finite() {
        (
            (min.min(max).log10() + 1e-9).floor() as i32,
            (max.max(min).log10() - 1e-9).ceil() as i32,
        )
    } else {
        (0, 1)
    };
    if hi <= lo {
        hi = lo + 1;
    }
    lo = lo.clamp(-300, 299);
    hi = hi.clamp(lo + 1, 300);
    let dense = hi - lo <= 2;
    let mut major = Vec::new();
    let mut minor = Vec::new();
    for e in lo..=hi {
        let decade = 10f64.powi(e);
        major.push(LogTick {
            value: decade,
            multiple: 1,
            exponent: e,
        });
        if e == hi {
            break;
        }
        for m in 2..=9 {
            let v = f64::from(m) * decade;
            if dense && (m == 2 || m == 5) {
                major.push(LogTick {
                    value: v,
                    multiple: m,
                    exponent: e,
                });
            } else {
                minor.push(v);
            }
        }
    }
    major.sort_by(|a, b| a.value.total_cmp(&b.value));
    LogTicks {
        lo_exp: lo,
        hi_exp: hi,
        major,
        minor,
    }
}

fn superscript(e: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut out = String::new();
    if e < 0 {
        out.push('⁻');
    }
    for c in e.unsigned_abs().to_string().chars() {
        out.push(DIGITS[c.to_digit(10).unwrap_or(0) as usize]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_linear_ticks() {
        let t = linear(0.0, 0.883, 6);
        assert_eq!(t.values.len(), 6);
        assert_eq!(t.labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let t = linear(-29.24, 70.06, 6);
        assert_eq!(t.labels, ["−50", "−25", "0", "25", "50", "75"]);
    }

    #[test]
    fn ticks_cover_the_range() {
        for (lo, hi, n) in [
            (0.0, 1.0, 6),
            (-29.24, 70.06, 6),
            (3.0, 3.0, 5),
            (0.0, 0.0, 5),
            (1e-3, 2.5e-3, 4),
            (0.0, 81742.0, 5),
        ] {
            let t = linear(lo, hi, n);
            assert!(t.values.len() <= n.max(2), "{lo} {hi}: {t:?}");
            assert!(
                t.lo() <= lo.min(hi) + 1e-12 && t.hi() >= hi.max(lo) - 1e-12,
                "{lo} {hi}: {t:?}"
            );
            assert!(t.hi() > t.lo());
        }
        assert_eq!(linear(0.0, 0.0, 5).lo(), 0.0);
        let inside = linear_within(-0.9, 1024.0, 6);
        assert_eq!((inside.lo(), inside.hi()), (-0.9, 1024.0));
        assert_eq!(inside.labels, ["0", "200", "400", "600", "800", "1,000"]);
        assert!((inside.map(1024.0, 0.0, 10.0) - 10.0).abs() < 1e-12);
        assert_eq!(
            linear(f64::NAN, 1.0, 5).labels.first().map(String::as_str),
            Some("0.00")
        );
    }

    #[test]
    fn formats_numbers_for_print() {
        assert_eq!(format_number(-1.5, 1), "−1.5");
        assert_eq!(format_number(-0.0001, 2), "0.00");
        assert_eq!(format_number(81742.0, 0), "81,742");
        assert_eq!(format_number(-120000.0, 0), "−120,000");
        assert_eq!(format_number(2.5, 2), "2.50");
        assert_eq!(
            linear(0.0, 1.0, 5).labels,
            ["0.00", "0.25", "0.50", "0.75", "1.00"]
        );
        assert_eq!(format_number(2.5e7, 0), "2.5×10⁷");
        assert_eq!(format_number(-1e300, 0), "−10³⁰⁰");
        assert_eq!(format_number(3e-9, 9), "3×10⁻⁹");
        assert_eq!(format_number(0.0, 9), "0");
    }

    #[test]
    fn log_ticks_span_decades() {
        let t = log10(0.008, 1450.7);
        assert_eq!((t.lo_exp, t.hi_exp), (-3, 4));
        let labels: Vec<String> = t.major.iter().map(LogTick::plain).collect();
        assert_eq!(
            labels,
            ["0.001", "0.01", "0.1", "1", "10", "100", "1,000", "10,000"]
        );
        let powers: Vec<String> = t.major.iter().map(LogTick::power).collect();
        assert_eq!(powers[0], "10⁻³");
        assert_eq!(powers[7], "10⁴");
        assert_eq!(t.minor.len(), 7 * 8);
        let narrow = log10(2.0, 8.0);
        assert_eq!((narrow.lo_exp, narrow.hi_exp), (0, 1));
        let labels: Vec<String> = narrow.major.iter().map(LogTick::plain).collect();
        assert_eq!(labels, ["1", "2", "5", "10"]);
        assert_eq!(narrow.major[1].power(), "2×10⁰");
        assert_eq!(log10(1e-6, 1e-5).major[0].plain(), "10⁻⁶");
        assert_eq!(log10(10.0, 10.0).hi_exp, 2);
        assert!((t.map(1.0, 0.0, 70.0) - 30.0).abs() < 1e-9);
    }
}
