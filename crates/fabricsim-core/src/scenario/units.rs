//! User quantities to integers, exactly as `fabricsim.units` reads them: durations to ps, rates to bit/s, sizes to bytes.
//!
//! A quantity is a TOML integer (in the base unit: seconds, bit/s, bytes), a float (its shortest decimal
//! form, as Python's `Decimal(repr(x))`) or a string `"<number><unit>"`. The value is the exact decimal
//! times the unit's factor, rounded half to even (Python's `round(Decimal)`). What Python rejects is an
//! invalid-input `Decline` in `fabricsim.units`' words, what it warns about (a link rate below 1 Mb/s, a size
//! below a byte) a warning in its words, and what this port is unsure of (whitespace other than blanks and
//! tabs, numbers beyond 38 digits) unsupported.

use super::Decline;
use toml::Value;

/// Longest duration Python accepts: 10^7 s in ps.
pub const MAX_DURATION_PS: u128 = 10_000_000 * 1_000_000_000_000;
/// Fastest rate: 1 Pb/s.
pub const MAX_RATE_BPS: u128 = 1_000_000_000_000_000;
/// Largest size: 1 PiB.
pub const MAX_SIZE_BYTES: u128 = 1 << 50;
/// A link rate below this (1 Mb/s) makes Python warn (a missing unit): declined.
pub const FABRIC_RATE_FLOOR_BPS: u64 = 1_000_000;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Duration,
    Rate,
    Size,
}

/// The factor of `unit` for `kind`, or None for a unit Python rejects (time units are case-sensitive, rate
/// and size units are not; a byte unit in a rate or a bit unit in a size is rejected).
fn factor(kind: Kind, unit: &str) -> Option<u128> {
    match kind {
        Kind::Duration => Some(match unit {
            "ps" => 1,
            "ns" => 1_000,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000_000,
            "ms" => 1_000_000_000,
            "s" | "" => 1_000_000_000_000,
            _ => return None,
        }),
        Kind::Rate => {
            if unit.contains('B') || !unit.is_ascii() {
                return None;
            }
            Some(match unit.to_ascii_lowercase().as_str() {
                "bps" | "b/s" | "" => 1,
                "kbps" | "kb/s" => 1_000,
                "mbps" | "mb/s" => 1_000_000,
                "gbps" | "gb/s" => 1_000_000_000,
                "tbps" | "tb/s" => 1_000_000_000_000,
                _ => return None,
            })
        }
        Kind::Size => {
            if (unit.ends_with('b') && !unit.ends_with("ib")) || !unit.is_ascii() {
                return None;
            }
            Some(match unit.to_ascii_lowercase().as_str() {
                "b" | "" | "byte" | "bytes" => 1,
                "kb" => 1_000,
                "mb" => 1_000_000,
                "gb" => 1_000_000_000,
                "tb" => 1_000_000_000_000,
                "pb" => 1_000_000_000_000_000,
                "kib" => 1 << 10,
                "mib" => 1 << 20,
                "gib" => 1 << 30,
                "tib" => 1 << 40,
                "pib" => 1 << 50,
                _ => return None,
            })
        }
    }
}

/// An exact non-negative decimal: `digits` × 10^`exp`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Decimal {
    digits: u128,
    exp: i32,
}

/// Parse Python's number pattern `[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?` in full; None if `s` is not one or has
/// more than 38 significant digits.
fn decimal(s: &str) -> Option<Decimal> {
    let (mant, exp_part) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => ("", mant),
    };
    // `[0-9]*\.?[0-9]+`: the part after the dot (or the whole, without a dot) must have a digit.
    if frac.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (int, frac) = if mant.contains('.') { (int, frac) } else { (frac, "") };
    let mut exp: i64 = -(frac.len() as i64);
    if let Some(e) = exp_part {
        let body = e.strip_prefix(['+', '-']).unwrap_or(e);
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) || body.len() > 6 {
            return None;
        }
        let v: i64 = body.parse().ok()?;
        exp += if e.starts_with('-') { -v } else { v };
    }
    let all = format!("{int}{frac}");
    let sig = all.trim_start_matches('0');
    if sig.len() > 38 {
        return None;
    }
    let digits: u128 = if sig.is_empty() { 0 } else { sig.parse().ok()? };
    Some(Decimal { digits, exp: i32::try_from(exp).ok()? })
}

/// round_half_even(d × factor) as an integer, or None when it exceeds u128 (far beyond every limit).
fn scaled(d: Decimal, factor: u128) -> Option<u128> {
    let n = d.digits.checked_mul(factor)?;
    if n == 0 {
        return Some(0);
    }
    if d.exp >= 0 {
        return n.checked_mul(10u128.checked_pow(d.exp as u32)?);
    }
    let k = (-d.exp) as u32;
    if k > 38 {
        // n < 10^77 / 10^39: below one half, rounds to 0 unless n is huge (then decline).
        return if n < 10u128.pow(38) && k >= 39 { Some(0) } else { None };
    }
    let den = 10u128.pow(k);
    let (q, r) = (n / den, n % den);
    let twice = r.checked_mul(2)?;
    Some(if twice > den || (twice == den && q % 2 == 1) { q + 1 } else { q })
}

/// The shortest decimal that reads back as `x` (Python's `repr`, Rust's `{:e}`).
fn float_decimal(x: f64) -> Option<Decimal> {
    let s = format!("{x:e}");
    decimal(&s)
}

/// Split a quantity string into (number, unit) as Python's `_RE` does: optional blanks, the number, optional
/// blanks, unit letters (`A-Za-z`, `/`, `µ`, `μ`), optional blanks. Only ASCII blanks (space, tab) are
/// taken; any other whitespace or character declines.
fn split(s: &str) -> Option<(&str, &str)> {
    let t = s.trim_matches([' ', '\t']);
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')).unwrap_or(t.len());
    // The number may end in an exponent ("1e3"); a unit never starts with e/E here except "ebit"-like units
    // which no table has, so a trailing e/E belongs to a failed parse either way.
    let (num, rest) = t.split_at(end);
    let unit = rest.trim_start_matches([' ', '\t']);
    if !unit.chars().all(|c| c.is_ascii_alphabetic() || c == '/' || c == '\u{b5}' || c == '\u{3bc}') {
        return None;
    }
    Some((num, unit))
}

/// The quantity's name, its base unit and its limit as said in errors, as `fabricsim.units` says them.
fn words(kind: Kind) -> (&'static str, &'static str, &'static str) {
    match kind {
        Kind::Duration => ("duration", "seconds", "the 10^7 s limit"),
        Kind::Rate => ("rate", "bit/s", "the 1 Pb/s limit"),
        Kind::Size => ("size", "bytes", "the 1 PiB limit"),
    }
}

/// The units a string may carry, as the error for an unknown one lists them.
fn unit_list(kind: Kind) -> &'static str {
    match kind {
        Kind::Duration => "ms, ns, ps, s, us, \u{b5}s, \u{3bc}s",
        Kind::Rate => "b/s, bps, gb/s, gbps, kb/s, kbps, mb/s, mbps, tb/s, tbps",
        Kind::Size => "b, byte, bytes, gb, gib, kb, kib, mb, mib, pb, pib, tb, tib",
    }
}

/// Python's `repr` of a float: the shortest decimal that reads back, positional for exponents -4..16, else
/// `d.ddde+XX`.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let body = if exp >= 0 {
            let point = exp as usize + 1;
            if digits.len() <= point {
                format!("{}{}.0", digits, "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// Python's `repr` of a TOML scalar, as the limit errors quote the value.
fn py_repr(v: &Value) -> String {
    match v {
        Value::Float(x) => py_float(*x),
        other => super::read::py_repr(other),
    }
}

/// The value as the user wrote it, as Python's warnings quote it (`_as_written`: strings as JSON, numbers bare).
fn as_written(v: &Value) -> String {
    match v {
        Value::String(s) => serde_json::Value::String(s.clone()).to_string(),
        other => py_repr(other),
    }
}

/// The number of a value given without a unit, as written (Python's `_unitless`); None if it has a unit.
fn unitless(v: &Value) -> Option<String> {
    match v {
        Value::Integer(_) | Value::Float(_) => Some(py_repr(v)),
        Value::String(s) => split(s).filter(|(_, unit)| unit.is_empty()).map(|(num, _)| num.to_string()),
        _ => None,
    }
}

fn parse(v: &Value, kind: Kind, limit: u128) -> Result<u64, Decline> {
    let (what, base, lim) = words(kind);
    let unread = |s: &str| Decline::new(format!("cannot read '{s}' as a {what}"));
    let n = match v {
        Value::Boolean(_) => return Err(Decline::new(format!("expected a {what}, got a boolean"))),
        Value::Integer(i) if *i < 0 => return Err(Decline::new(format!("{what} must not be negative, got {i}"))),
        Value::Integer(i) => (*i as u128).checked_mul(factor(kind, "").unwrap_or(1)),
        Value::Float(x) if !x.is_finite() => return Err(Decline::new(format!("{what} must be finite, got {}", py_float(*x)))),
        Value::Float(x) if x.is_sign_negative() && *x != 0.0 => {
            return Err(Decline::new(format!("{what} must not be negative, got {}", py_float(*x))))
        }
        Value::Float(x) => float_decimal(*x).and_then(|d| scaled(d, factor(kind, "").unwrap_or(1))),
        Value::String(s) => {
            if s.trim_start().starts_with('-') {
                return Err(Decline::new(format!("{what} must not be negative, got '{s}'")));
            }
            let odd_blank = |c: char| c.is_whitespace() && c != ' ' && c != '\t' || ('\u{1c}'..='\u{1f}').contains(&c);
            if s.chars().any(odd_blank) {
                return Err(Decline::new(format!("'{}': whitespace other than blanks and tabs in a quantity", s.escape_debug())));
            }
            let (num, unit) = split(s).ok_or_else(|| unread(s))?;
            if kind == Kind::Rate && unit.contains('B') {
                return Err(Decline::new(format!("rates are in bits: '{s}' has a byte unit (write e.g. Gbps, not GBps)")));
            }
            if kind == Kind::Size && unit.ends_with('b') && !unit.ends_with("ib") {
                return Err(Decline::new(format!("sizes are in bytes: '{s}' has a bit unit (write e.g. MB or MiB, not Mb)")));
            }
            let f =
                factor(kind, unit).ok_or_else(|| Decline::new(format!("unknown {what} unit '{unit}' in '{s}' (use one of: {})", unit_list(kind))))?;
            let d = match decimal(num) {
                Some(d) => d,
                None if num.len() > 38 => return Err(Decline::new(format!("'{s}': a number of more than 38 digits"))),
                None => return Err(unread(s)),
            };
            scaled(d, f)
        }
        other => {
            let ty = match other {
                Value::Array(_) => "list",
                Value::Table(_) => "dict",
                _ => "datetime",
            };
            return Err(Decline::new(format!("expected a {what} (number in {base} or a string with a unit), got {ty}")));
        }
    };
    match n {
        Some(n) if n <= limit => Ok(n as u64),
        _ => Err(Decline::new(format!("{what} {} exceeds {lim}", py_repr(v)))),
    }
}

/// A duration in ps (numbers are seconds; strings take ps, ns, us, µs, μs, ms, s). At most 10^7 s.
pub fn duration_ps(v: &Value) -> Result<u64, Decline> {
    parse(v, Kind::Duration, MAX_DURATION_PS)
}

/// A rate in bit/s (numbers are bit/s; strings take bps … Tbps and the b/s forms, any case). At most 1 Pb/s.
pub fn rate_bps(v: &Value) -> Result<u64, Decline> {
    parse(v, Kind::Rate, MAX_RATE_BPS)
}

/// A size in bytes (numbers are bytes; strings take B, kB … PB and KiB … PiB, any case). At most 1 PiB.
pub fn size_bytes(v: &Value) -> Result<u64, Decline> {
    parse(v, Kind::Size, MAX_SIZE_BYTES)
}

thread_local! {
    /// (implausible values to take as written before one is declined as a warning, implausible values seen).
    static PASS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// `f()` with the first `skip` implausible rates and sizes taken as written (the next one is a warning
/// decline), and how many `f` saw in all. `skip` = u64::MAX takes them all: the count of a whole document.
pub fn passing<T>(skip: u64, f: impl FnOnce() -> T) -> (T, u64) {
    let before = PASS.with(|p| p.replace((skip, 0)));
    let out = f();
    let (_, seen) = PASS.with(|p| p.replace(before));
    (out, seen)
}

/// `f()` with every implausible value taken as written: for a document whose warnings were said once.
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    passing(u64::MAX, f).0
}

/// An implausible value was read: whether to decline it as a warning (see `passing`).
fn warn_now() -> bool {
    PASS.with(|p| {
        let (skip, seen) = p.get();
        p.set((skip, seen + 1));
        seen >= skip
    })
}

/// A link or port rate: as `rate_bps`, and declined below 1 Mb/s (a warning: a missing unit).
pub fn fabric_rate_bps(v: &Value) -> Result<u64, Decline> {
    let r = rate_bps(v)?;
    if r > 0 && r < FABRIC_RATE_FLOOR_BPS && warn_now() {
        let hint = unitless(v).map(|b| format!("; did you mean \"{b}Gbps\"?")).unwrap_or_default();
        return Err(Decline::warning(format!(
            " = {} means {} bit/s, below the 1 Mb/s any fabric link has{hint}",
            as_written(v),
            crate::record_json::thousands(r)
        )));
    }
    Ok(r)
}

/// The exact byte count of a size written as `v` when it is below one byte (it rounds to 1 only from 0.5 up),
/// as Python's `_exact_bytes(v).normalize()` writes it ("0.75"); Some("") when it is not below one byte, None
/// when it cannot be read.
fn below_one_byte(v: &Value) -> Option<String> {
    let (d, f) = match v {
        Value::Float(x) => (float_decimal(*x)?, 1),
        Value::String(s) => {
            let (num, unit) = split(s)?;
            (decimal(num)?, factor(Kind::Size, unit)?)
        }
        _ => return None,
    };
    let n = d.digits.checked_mul(f)?;
    let k = (-d.exp) as u32;
    if d.exp >= 0 || n >= 10u128.checked_pow(k)? {
        return Some(String::new());
    }
    let frac = format!("{n:0>width$}", width = k as usize);
    Some(format!("0.{}", frac.trim_end_matches('0')))
}

/// A message or packet size: as `size_bytes`, and declined when a non-integer below one byte rounds to 1 byte
/// (Python warns: a missing unit).
pub fn fabric_size_bytes(v: &Value) -> Result<u64, Decline> {
    let n = size_bytes(v)?;
    if n == 1 && !matches!(v, Value::Integer(_)) {
        match below_one_byte(v) {
            Some(exact) if exact.is_empty() => {}
            Some(_) if !warn_now() => {}
            Some(exact) => {
                let hint = unitless(v).map(|b| format!("; did you mean \"{b}MiB\"?")).unwrap_or_default();
                return Err(Decline::warning(format!(" = {} means {exact} bytes (rounded to 1 byte), below 1 byte{hint}", as_written(v))));
            }
            None => {}
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    #[test]
    fn sizes_by_hand() {
        assert_eq!(size_bytes(&s("10MiB")).unwrap(), 10 * 1_048_576);
        assert_eq!(size_bytes(&s("1KiB")).unwrap(), 1024);
        assert_eq!(size_bytes(&s("1.5kB")).unwrap(), 1500);
        assert_eq!(size_bytes(&s(" 2 GB ")).unwrap(), 2_000_000_000);
        assert_eq!(size_bytes(&s("64")).unwrap(), 64);
        assert_eq!(size_bytes(&Value::Integer(4096)).unwrap(), 4096);
        // 2.5 B rounds half to even: 2; 3.5 B to 4.
        assert_eq!(size_bytes(&s("2.5")).unwrap(), 2);
        assert_eq!(size_bytes(&s("3.5B")).unwrap(), 4);
        assert!(size_bytes(&s("10Mb")).is_err(), "a bit unit is not a size");
        assert!(size_bytes(&s("2PiB")).is_err(), "above 1 PiB");
        assert!(size_bytes(&s("-1")).is_err());
        assert!(size_bytes(&Value::Boolean(true)).is_err());
    }

    #[test]
    fn rates_by_hand() {
        assert_eq!(rate_bps(&s("100Gbps")).unwrap(), 100_000_000_000);
        assert_eq!(rate_bps(&s("0.9Gbps")).unwrap(), 900_000_000);
        assert_eq!(rate_bps(&s("25 Gb/s")).unwrap(), 25_000_000_000);
        assert_eq!(rate_bps(&s("100mbps")).unwrap(), 100_000_000);
        assert_eq!(rate_bps(&Value::Float(1.5e9)).unwrap(), 1_500_000_000);
        assert!(rate_bps(&s("10GBps")).is_err(), "a byte unit is not a rate");
        assert!(fabric_rate_bps(&Value::Integer(100)).is_err(), "100 bit/s is implausible");
        assert!(fabric_size_bytes(&s("0.75")).is_err(), "0.75 B rounds to 1 B: implausible");
        assert_eq!(fabric_size_bytes(&s("1 B")).unwrap(), 1);
        assert_eq!(fabric_size_bytes(&Value::Float(1.0)).unwrap(), 1);
    }

    #[test]
    fn durations_by_hand() {
        assert_eq!(duration_ps(&s("1us")).unwrap(), 1_000_000);
        assert_eq!(duration_ps(&s("1\u{b5}s")).unwrap(), 1_000_000);
        assert_eq!(duration_ps(&s("500ns")).unwrap(), 500_000);
        assert_eq!(duration_ps(&s("5ms")).unwrap(), 5_000_000_000);
        assert_eq!(duration_ps(&s("2.5e-3")).unwrap(), 2_500_000_000);
        assert_eq!(duration_ps(&Value::Integer(2)).unwrap(), 2_000_000_000_000);
        // 0.1 s is exactly 10^11 ps through its shortest decimal, not through the binary float.
        assert_eq!(duration_ps(&Value::Float(0.1)).unwrap(), 100_000_000_000);
        assert_eq!(duration_ps(&s("0.0000005ps")).unwrap(), 0);
        assert!(duration_ps(&s("1US")).is_err(), "time units are case-sensitive");
        assert!(duration_ps(&s("1.")).is_err());
        assert!(duration_ps(&s("1e8")).is_err(), "above 10^7 s");
    }
}
