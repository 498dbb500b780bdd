//! Strict reading of TOML tables into scenario values: every key consumed or declined, every type as pydantic's strict models take it.
//!
//! Invariant: a reader accepts a value only where the Python models accept it with the same meaning;
//! anything else (an unknown key, a wrong type, an out-of-range value, a value Python would warn about) is a
//! `Decline`, so the Python front door reports it in its own words.

use super::{units, Decline};
use toml::{Table, Value};

/// One TOML table being read: the keys taken so far, and `at` (its path, for decline reasons).
pub struct Tab<'a> {
    t: &'a Table,
    used: Vec<&'a str>,
    pub at: String,
}

impl<'a> Tab<'a> {
    pub fn new(t: &'a Table, at: impl Into<String>) -> Tab<'a> {
        Tab { t, used: Vec::new(), at: at.into() }
    }

    /// The table `v` (declined if it is not one).
    pub fn of(v: &'a Value, at: impl Into<String>) -> Result<Tab<'a>, Decline> {
        let at = at.into();
        match v {
            Value::Table(t) => Ok(Tab::new(t, at)),
            _ => Err(Decline::new(format!("{at}: not a table"))),
        }
    }

    /// The value of `key`, marking it read.
    pub fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        let v = self.t.get(key)?;
        self.used.push(key);
        Some(v)
    }

    pub fn has(&self, key: &str) -> bool {
        self.t.contains_key(key)
    }

    fn field(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    /// `key` read by `f`, or `default` when absent.
    pub fn or<T>(&mut self, key: &'static str, default: T, f: impl Fn(&Value) -> Result<T, Decline>) -> Result<T, Decline> {
        let at = self.field(key);
        match self.get(key) {
            Some(v) => f(v).map_err(|d| d.within(&at)),
            None => Ok(default),
        }
    }

    /// `key` read by `f`, or None when absent (TOML has no null, so an optional key is an absent one).
    pub fn opt<T>(&mut self, key: &'static str, f: impl Fn(&Value) -> Result<T, Decline>) -> Result<Option<T>, Decline> {
        let at = self.field(key);
        match self.get(key) {
            Some(v) => f(v).map(Some).map_err(|d| d.within(&at)),
            None => Ok(None),
        }
    }

    /// Required `key` read by `f`.
    pub fn req<T>(&mut self, key: &'static str, f: impl Fn(&Value) -> Result<T, Decline>) -> Result<T, Decline> {
        let at = self.field(key);
        match self.get(key) {
            Some(v) => f(v).map_err(|d| d.within(&at)),
            None => Err(Decline::new(format!("{at}: required field is missing"))),
        }
    }

    /// Decline if any key was not read (an unknown key is an error in Python).
    pub fn finish(self) -> Result<(), Decline> {
        for k in self.t.keys() {
            if !self.used.contains(&k.as_str()) {
                return Err(Decline::new(format!("{}.{k}: unknown key", self.at)));
            }
        }
        Ok(())
    }
}

/// The items of an array of tables (`[[messages]]`), each as a `Tab` at `at[i]`.
pub fn tables<'a>(v: &'a Value, at: &str) -> Result<Vec<Tab<'a>>, Decline> {
    match v {
        Value::Array(a) => a.iter().enumerate().map(|(i, x)| Tab::of(x, format!("{at}[{i}]"))).collect(),
        _ => Err(Decline::new(format!("{at}: not a list"))),
    }
}

fn no(what: &str, v: &Value) -> Decline {
    Decline::new(format!("expected {what}, got {v}"))
}

/// A strict integer > 0 (pydantic `PositiveInt`).
pub fn pos_int(v: &Value) -> Result<u64, Decline> {
    match v {
        Value::Integer(i) if *i > 0 => Ok(*i as u64),
        _ => Err(no("an integer > 0", v)),
    }
}

/// A strict integer ≥ 0 (pydantic `NonNegativeInt`).
pub fn nonneg_int(v: &Value) -> Result<u64, Decline> {
    match v {
        Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        _ => Err(no("an integer >= 0", v)),
    }
}

/// A TOML boolean (pydantic's lax bool also takes 0/1 and "yes": declined here).
pub fn boolean(v: &Value) -> Result<bool, Decline> {
    match v {
        Value::Boolean(b) => Ok(*b),
        _ => Err(no("a boolean", v)),
    }
}

/// A finite number (pydantic strict float takes an integer as it is).
pub fn number(v: &Value) -> Result<f64, Decline> {
    match v {
        Value::Integer(i) if i.unsigned_abs() < (1 << 53) => Ok(*i as f64),
        Value::Float(x) if x.is_finite() => Ok(*x),
        _ => Err(no("a finite number", v)),
    }
}

/// A string.
pub fn string(v: &Value) -> Result<String, Decline> {
    match v {
        Value::String(s) => Ok(s.clone()),
        _ => Err(no("a string", v)),
    }
}

/// A `Name`: non-empty, no whitespace, ':', '>' or '#'. Only printable ASCII is taken (Python's pattern also
/// admits other characters; those decline).
pub fn name(v: &Value) -> Result<String, Decline> {
    match v {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| (0x21..0x7f).contains(&b) && !b":>#".contains(&b)) => Ok(s.clone()),
        _ => Err(no("a name", v)),
    }
}

/// A list of `Name`s.
pub fn names(v: &Value) -> Result<Vec<String>, Decline> {
    match v {
        Value::Array(a) => a.iter().map(name).collect(),
        _ => Err(no("a list of names", v)),
    }
}

/// One of `options` (a pydantic `Literal` of strings).
pub fn literal(options: &'static [&'static str]) -> impl Fn(&Value) -> Result<&'static str, Decline> {
    move |v| {
        let quoted: Vec<String> = options.iter().map(|o| format!("'{o}'")).collect();
        let choices = match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        match v {
            Value::String(s) => {
                options.iter().find(|o| **o == s.as_str()).copied().ok_or_else(|| Decline::new(format!("must be {choices}, not '{s}'")))
            }
            _ => Err(Decline::new(format!("must be {choices}, not {v}"))),
        }
    }
}

pub fn duration(v: &Value) -> Result<u64, Decline> {
    units::duration_ps(v)
}

/// A duration > 0 (`PositiveDuration`).
pub fn pos_duration(v: &Value) -> Result<u64, Decline> {
    match units::duration_ps(v)? {
        0 => Err(no("a duration > 0", v)),
        d => Ok(d),
    }
}

/// A rate > 0 (`PositiveRate`).
pub fn pos_rate(v: &Value) -> Result<u64, Decline> {
    match units::rate_bps(v)? {
        0 => Err(no("a rate > 0", v)),
        r => Ok(r),
    }
}

/// A link rate > 0 (`LinkRate`: declined below 1 Mb/s, where Python warns).
pub fn link_rate(v: &Value) -> Result<u64, Decline> {
    match units::fabric_rate_bps(v)? {
        0 => Err(no("a rate > 0", v)),
        r => Ok(r),
    }
}

pub fn size(v: &Value) -> Result<u64, Decline> {
    units::size_bytes(v)
}

/// A size > 0 (`PositiveSize`).
pub fn pos_size(v: &Value) -> Result<u64, Decline> {
    match units::size_bytes(v)? {
        0 => Err(no("a size > 0", v)),
        n => Ok(n),
    }
}

/// A message or packet size > 0 (`MessageSize`: declined where Python may warn).
pub fn msg_size(v: &Value) -> Result<u64, Decline> {
    match units::fabric_size_bytes(v)? {
        0 => Err(no("a size > 0", v)),
        n => Ok(n),
    }
}

/// A count > 0 or "unlimited" (None), as `PositiveInt | Unlimited`.
pub fn count_or_unlimited(v: &Value) -> Result<Option<u64>, Decline> {
    match v {
        Value::String(s) if s == "unlimited" => Ok(None),
        _ => pos_int(v).map(Some),
    }
}

/// A size > 0 or "unlimited" (None), as `PositiveSize | Unlimited`.
pub fn size_or_unlimited(v: &Value) -> Result<Option<u64>, Decline> {
    match v {
        Value::String(s) if s == "unlimited" => Ok(None),
        _ => pos_size(v).map(Some),
    }
}
