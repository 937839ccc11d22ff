//! Virtual time: nanoseconds since the start of a run.
//!
//! Virtual time is a newtype so it never mixes with `std::time::Instant`
//! (which must not reach the simulation). It only moves forward.
use std::fmt;
use std::ops::{Add, Sub};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct VTime(pub u64);

/// The longest duration a config or a schedule file may give (a run's
/// length, a latency, a fault's time or length): 1000 hours. Inputs are
/// checked against it when read, so sums of them stay far from overflow.
pub const DURATION_MAX: VTime = VTime(1000 * 3_600_000_000_000);

impl VTime {
    pub const ZERO: VTime = VTime(0);

    pub fn from_millis(ms: u64) -> VTime {
        VTime(ms.saturating_mul(1_000_000))
    }
    pub fn from_micros(us: u64) -> VTime {
        VTime(us.saturating_mul(1_000))
    }
    pub fn nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_add(self, ns: u64) -> VTime {
        VTime(self.0.saturating_add(ns))
    }
}

/// Saturating: inputs are bounded by `DURATION_MAX`, so this never
/// saturates in practice, and if it did the run would end at its duration
/// instead of the process ending with a panic.
impl Add<u64> for VTime {
    type Output = VTime;
    fn add(self, ns: u64) -> VTime {
        VTime(self.0.saturating_add(ns))
    }
}

impl Sub for VTime {
    type Output = u64;
    fn sub(self, earlier: VTime) -> u64 {
        assert!(earlier <= self, "virtual time went backwards: {earlier:?} > {self:?}");
        self.0 - earlier.0
    }
}

/// `923.003008ms` below one second, `12.000345678s` above: always exact to
/// the nanosecond, so two printed times compare the way the run saw them.
impl fmt::Display for VTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns < 1_000_000_000 {
            write!(f, "{}.{:06}ms", ns / 1_000_000, ns % 1_000_000)
        } else {
            write!(f, "{}.{:09}s", ns / 1_000_000_000, ns % 1_000_000_000)
        }
    }
}

/// Parses `250ms`, `10s`, `1.5s`, `2m`, `800us`, `100ns`.
pub fn parse_duration(text: &str) -> Option<VTime> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    };
    if number.is_empty() || number.starts_with('-') {
        return None;
    }
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut ns = whole.checked_mul(scale)?;
    if !frac.is_empty() {
        if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let frac_value: u64 = frac.parse().ok()?;
        let frac_ns = frac_value.checked_mul(scale)? / 10u64.pow(frac.len() as u32);
        ns = ns.checked_add(frac_ns)?;
    }
    Some(VTime(ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_exact() {
        assert_eq!(VTime(923_003_008).to_string(), "923.003008ms");
        assert_eq!(VTime(0).to_string(), "0.000000ms");
        assert_eq!(VTime(12_000_345_678).to_string(), "12.000345678s");
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s"), Some(VTime(10_000_000_000)));
        assert_eq!(parse_duration("1.5s"), Some(VTime(1_500_000_000)));
        assert_eq!(parse_duration("250ms"), Some(VTime(250_000_000)));
        assert_eq!(parse_duration("2m"), Some(VTime(120_000_000_000)));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("5 parsecs"), None);
    }
}
