//! Unit newtypes: time in integer picoseconds, sizes in bytes, rates in bits per second.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Simulated time in picoseconds. Invariant: never a float; u64 spans about 213 days.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const PS_PER_S: u64 = 1_000_000_000_000;

    #[inline]
    pub const fn ps(self) -> u64 {
        self.0
    }
    #[inline]
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    #[inline]
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }
    #[inline]
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * 1_000_000_000)
    }
    #[inline]
    pub const fn from_s(s: u64) -> Time {
        Time(s * Self::PS_PER_S)
    }
    /// Seconds as a float, for reporting only (never fed back into the clock).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_S as f64
    }
    #[inline]
    pub fn saturating_add(self, d: Time) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

/// Saturating: a sum past the end of the clock becomes `Time::MAX`, which engines report as an error
/// instead of silently wrapping around.
impl std::ops::Add for Time {
    type Output = Time;
    #[inline]
    fn add(self, o: Time) -> Time {
        Time(self.0.saturating_add(o.0))
    }
}

impl std::ops::Sub for Time {
    type Output = Time;
    #[inline]
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ps", self.0)
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A rate in bits per second. Invariant (checked by spec validation): non-zero wherever it times a transfer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bps(pub u64);

impl Bps {
    /// Time to serialize `bytes` at this rate, rounded up to the next picosecond. O(1), exact: in u64 while
    /// bytes · 8 · 10^12 fits (up to about 2.3 MB, every packet), else in u128; both give the same value.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Time {
        const FITS: u64 = u64::MAX / (8 * Time::PS_PER_S);
        if bytes <= FITS {
            return Time((bytes * 8 * Time::PS_PER_S).div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * Time::PS_PER_S as u128;
        let r = self.0 as u128;
        Time(num.div_ceil(r) as u64)
    }
    /// Time to send `bits` at this rate, rounded to the nearest picosecond (ties up).
    #[inline]
    pub fn bits_time_round(self, bits: u64) -> Time {
        const FITS: u64 = u64::MAX / Time::PS_PER_S;
        if bits <= FITS {
            // The same quotient in u64 when the numerator and the rounding half fit (no 128-bit division).
            if let Some(num) = (bits * Time::PS_PER_S).checked_add(self.0 / 2) {
                return Time(num / self.0);
            }
        }
        let num = bits as u128 * Time::PS_PER_S as u128;
        let r = self.0 as u128;
        Time(((num + r / 2) / r) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_to_the_picosecond() {
        // 1500 B at 10 Gb/s = 12000 bits / 1e10 = 1.2 us.
        assert_eq!(Bps(10_000_000_000).tx_time(1500), Time(1_200_000));
        // 1 B at 3 b/s = 8/3 s, rounded up.
        assert_eq!(Bps(3).tx_time(1), Time(2_666_666_666_667));
    }

    #[test]
    fn bits_time_rounds_to_the_nearest_picosecond_in_both_paths() {
        // 8,192 bits at 200 Mb/s = 40.96 us exactly; 1 bit at 3 b/s = 333,333,333,333.33 ps -> ...333;
        // 2 bits at 3 b/s = ...666.67 ps -> ...667 (u64 path); 2^44 bits at 1 Tb/s = 17.592186044416 s (u128 path).
        assert_eq!(Bps(200_000_000).bits_time_round(8_192), Time(40_960_000));
        assert_eq!(Bps(3).bits_time_round(1), Time(333_333_333_333));
        assert_eq!(Bps(3).bits_time_round(2), Time(666_666_666_667));
        assert_eq!(Bps(1_000_000_000_000).bits_time_round(1 << 44), Time(17_592_186_044_416));
        // Numerator near u64::MAX with a huge rate: the rounding half overflows u64, so the u128 path answers.
        assert_eq!(Bps(u64::MAX).bits_time_round(18_000_000), Time(1));
    }

    #[test]
    fn time_constructors_agree() {
        assert_eq!(Time::from_s(1), Time::from_ms(1000));
        assert_eq!(Time::from_us(1), Time::from_ns(1000));
        assert_eq!(Time::from_ms(5).as_secs_f64(), 0.005);
    }
}
