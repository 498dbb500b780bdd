//! Strict reading of TOML tables into scenario values: every key consumed or declined, every type as pydantic's strict models take it.
//!
//! Invariant: a reader accepts a value only where the Python models accept it with the same meaning;
//! anything else (an unknown key, a wrong type, an out-of-range value) is an invalid-input `Decline` in
//! pydantic's words as Python's front door prints them (`Input should be greater than 0`), a value Python
//! would warn about a warning, and a value Python may take but this port does not read (a name with other
//! than printable ASCII) unsupported. A reader's error is a bare reason; `Tab` puts the field in front.

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
            _ => Err(Decline::invalid(&at, format!("Input should be a valid dictionary or instance of a model, got {}", py_repr(v)))),
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
        if self.at.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.at)
        }
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

    /// The `kind` of a tagged union (pydantic's discriminator), one of `kinds`: a missing or unknown kind is an
    /// error of the table itself, as Python names it (`topology: unknown kind 'x' (expected one of: ...)`).
    pub fn kind(&mut self, kinds: &'static [&'static str]) -> Result<&'static str, Decline> {
        let listed: Vec<String> = kinds.iter().map(|k| format!("'{k}'")).collect();
        let listed = listed.join(", ");
        let given = match self.get("kind") {
            None => return Err(Decline::invalid(&self.at, format!("a kind is required (one of: {listed})"))),
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
        };
        kinds
            .iter()
            .find(|k| **k == given)
            .copied()
            .ok_or_else(|| Decline::invalid(&self.at, format!("unknown kind {} (expected one of: {listed})", py_repr(&Value::String(given.clone())))))
    }

    /// Decline if any key was not read (an unknown key is an error in Python).
    pub fn finish(self) -> Result<(), Decline> {
        for k in self.t.keys() {
            if !self.used.contains(&k.as_str()) {
                return Err(Decline::invalid(&self.field(k), "unknown key"));
            }
        }
        Ok(())
    }
}

/// The items of an array of tables (`[[messages]]`), each as a `Tab` at `at[i]`.
pub fn tables<'a>(v: &'a Value, at: &str) -> Result<Vec<Tab<'a>>, Decline> {
    match v {
        Value::Array(a) => a.iter().enumerate().map(|(i, x)| Tab::of(x, format!("{at}[{i}]"))).collect(),
        _ => Err(Decline::invalid(at, format!("Input should be a valid list, got {}", py_repr(v)))),
    }
}

/// Python's `repr` of a TOML value, as pydantic's messages quote the input.
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::String(s) if s.contains('\'') && !s.contains('"') => format!("\"{s}\""),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Boolean(true) => "True".into(),
        Value::Boolean(false) => "False".into(),
        Value::Float(x) if x.is_nan() => "nan".into(),
        Value::Float(x) if x.is_infinite() => if *x > 0.0 { "inf" } else { "-inf" }.into(),
        Value::Float(x) => format!("{x:?}"),
        Value::Array(_) => "[…]".into(),
        Value::Table(_) => "{…}".into(),
        other => other.to_string(),
    }
}

/// pydantic's error for a value of the wrong type: "Input should be a valid <what>, got <repr>".
fn not_a(what: &str, v: &Value) -> Decline {
    match v {
        Value::Array(_) | Value::Table(_) | Value::Datetime(_) => Decline::new(format!("Input should be a valid {what}")),
        _ => Decline::new(format!("Input should be a valid {what}, got {}", py_repr(v))),
    }
}

/// A strict integer > 0 (pydantic `PositiveInt`).
pub fn pos_int(v: &Value) -> Result<u64, Decline> {
    match v {
        Value::Integer(i) if *i > 0 => Ok(*i as u64),
        Value::Integer(_) => Err(Decline::new("Input should be greater than 0")),
        _ => Err(not_a("integer", v)),
    }
}

/// A strict integer ≥ 0 (pydantic `NonNegativeInt`).
pub fn nonneg_int(v: &Value) -> Result<u64, Decline> {
    match v {
        Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        Value::Integer(_) => Err(Decline::new("Input should be greater than or equal to 0")),
        _ => Err(not_a("integer", v)),
    }
}

/// A boolean: a TOML boolean, or as pydantic's lax bool takes one (0, 1, 0.0, 1.0, and the strings "true",
/// "false", "yes", "no", "on", "off", "t", "f", "y", "n", "1", "0" in any case); anything else invalid in its words.
pub fn boolean(v: &Value) -> Result<bool, Decline> {
    const BAD: &str = "Input should be a valid boolean, unable to interpret input";
    match v {
        Value::Boolean(b) => Ok(*b),
        Value::Integer(0) => Ok(false),
        Value::Integer(1) => Ok(true),
        Value::Float(x) if *x == 0.0 => Ok(false),
        Value::Float(x) if *x == 1.0 => Ok(true),
        Value::Integer(_) => Err(Decline::new(BAD)),
        Value::Float(_) => Err(Decline::new("Input should be a valid boolean, got a number with a fractional part")),
        Value::String(s) => match s.to_lowercase().as_str() {
            "true" | "yes" | "on" | "t" | "y" | "1" => Ok(true),
            "false" | "no" | "off" | "f" | "n" | "0" => Ok(false),
            _ => Err(Decline::new(BAD)),
        },
        _ => strict_boolean(v),
    }
}

/// A TOML boolean and nothing else (a key the engine's reader judges: `[pfc]`, `[rdma]`, `[hybrid]`).
pub fn strict_boolean(v: &Value) -> Result<bool, Decline> {
    match v {
        Value::Boolean(b) => Ok(*b),
        _ => Err(not_a("boolean", v)),
    }
}

/// A finite number (pydantic strict float takes an integer as it is).
pub fn number(v: &Value) -> Result<f64, Decline> {
    match v {
        Value::Integer(i) if i.unsigned_abs() < (1 << 53) => Ok(*i as f64),
        Value::Float(x) if x.is_finite() => Ok(*x),
        Value::Float(_) => Err(Decline::new("Input should be a finite number")),
        Value::Integer(i) => Ok(*i as f64),
        _ => Err(not_a("number", v)),
    }
}

/// A string.
pub fn string(v: &Value) -> Result<String, Decline> {
    match v {
        Value::String(s) => Ok(s.clone()),
        _ => Err(not_a("string", v)),
    }
}

/// A `Name`: non-empty, with no whitespace (Unicode's, as Python's `\\s`), ':', '>' or '#'.
pub fn name(v: &Value) -> Result<String, Decline> {
    let Value::String(s) = v else { return Err(not_a("string", v)) };
    if s.is_empty() {
        return Err(Decline::new("String should have at least 1 character"));
    }
    if s.chars().any(|c| c.is_whitespace() || matches!(c, ':' | '>' | '#' | '\x1c'..='\x1f')) {
        return Err(Decline::new("String should match pattern '^[^\\s:>#]+$'"));
    }
    Ok(s.clone())
}

/// The items of a list read by `f`, an item's error under its index (`[k]`).
pub fn list_of<T>(v: &Value, f: impl Fn(&Value) -> Result<T, Decline>) -> Result<Vec<T>, Decline> {
    match v {
        Value::Array(a) => a.iter().enumerate().map(|(k, x)| f(x).map_err(|d| d.within(&format!("[{k}]")))).collect(),
        _ => Err(not_a("list", v)),
    }
}

/// A list of `Name`s.
pub fn names(v: &Value) -> Result<Vec<String>, Decline> {
    list_of(v, name)
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
        0 => Err(Decline::new("Input should be greater than 0")),
        d => Ok(d),
    }
}

/// A rate > 0 (`PositiveRate`).
pub fn pos_rate(v: &Value) -> Result<u64, Decline> {
    match units::rate_bps(v)? {
        0 => Err(Decline::new("Input should be greater than 0")),
        r => Ok(r),
    }
}

/// A link rate > 0 (`LinkRate`: declined below 1 Mb/s, where Python warns).
pub fn link_rate(v: &Value) -> Result<u64, Decline> {
    match units::fabric_rate_bps(v)? {
        0 => Err(Decline::new("Input should be greater than 0")),
        r => Ok(r),
    }
}

pub fn size(v: &Value) -> Result<u64, Decline> {
    units::size_bytes(v)
}

/// A size > 0 (`PositiveSize`).
pub fn pos_size(v: &Value) -> Result<u64, Decline> {
    match units::size_bytes(v)? {
        0 => Err(Decline::new("Input should be greater than 0")),
        n => Ok(n),
    }
}

/// A message or packet size > 0 (`MessageSize`: declined where Python may warn).
pub fn msg_size(v: &Value) -> Result<u64, Decline> {
    match units::fabric_size_bytes(v)? {
        0 => Err(Decline::new("Input should be greater than 0")),
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
