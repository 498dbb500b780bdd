//! The declaration of a scenario table's keys, shared by the tables declared this way (`roce`, `hybrid`): each
//! key's user name, kind (unit), the engine's wire field it sets and its meaning, in one table per scenario
//! table. The reader reads a table by its keys (`given`), an engine error on a wire field is said with the key
//! (`said`), and the schema Python's models are generated from is the tables' export (`schema_of`).

use super::read::{self, Tab};
use super::Decline;
use crate::error::Error;
use serde_json::{json, Value as J};
use toml::Value;

/// The value a key takes, as the reader reads it and the schema describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// A finite number.
    Real,
    /// An integer that fits 32 bits.
    Count32,
    Size,
    PosSize,
    /// A size, or "auto" (the engine's formula; null on the wire).
    AutoSize,
    PosDuration,
    /// A duration > 0, or "auto".
    AutoPosDuration,
    Rate,
    PosRate,
    /// One of the strings.
    Choice(&'static [&'static str]),
    /// A list of `[[ecn.rate]]` tables (`ECN_RATE`).
    EcnRates,
}

impl Kind {
    /// The JSON Schema of the value (units in the description; quantities are numbers or unit strings).
    pub fn schema(self) -> J {
        let q = |unit: &str, example: &str| {
            json!({"anyOf": [{"type": "number", "minimum": 0}, {"type": "string"}],
            "x-unit": unit, "examples": [example]})
        };
        match self {
            Kind::Bool => json!({"type": "boolean"}),
            Kind::Real => json!({"type": "number"}),
            Kind::Count32 => json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
            Kind::Size | Kind::PosSize => q("bytes", "4KiB"),
            Kind::AutoSize => json!({"anyOf": [{"const": "auto"}, q("bytes", "4KiB")]}),
            Kind::PosDuration => q("seconds", "10us"),
            Kind::AutoPosDuration => json!({"anyOf": [{"const": "auto"}, q("seconds", "10us")]}),
            Kind::Rate | Kind::PosRate => q("bit/s", "50Mbps"),
            Kind::Choice(options) => json!({"enum": options}),
            Kind::EcnRates => json!({"type": "array", "items": {"$ref": "#/ecn.rate"}}),
        }
    }

    /// Read `v` as this kind, as its wire value.
    pub fn read(self, v: &Value) -> Result<J, Decline> {
        let auto = matches!(v, Value::String(s) if s == "auto");
        Ok(match self {
            Kind::Bool => J::Bool(read::strict_boolean(v)?),
            Kind::Real => json!(read::number(v)?),
            Kind::Count32 => match v {
                Value::Integer(i) if (0..=u32::MAX as i64).contains(i) => json!(*i),
                _ => return Err(Decline::new(format!("expected an integer in 0..=4294967295, got {v}"))),
            },
            Kind::Size => json!(read::size(v)?),
            Kind::PosSize => json!(read::pos_size(v)?),
            Kind::AutoSize if auto => J::Null,
            Kind::AutoSize => json!(read::size(v)?),
            Kind::PosDuration => json!(read::pos_duration(v)?),
            Kind::AutoPosDuration if auto => J::Null,
            Kind::AutoPosDuration => json!(read::pos_duration(v)?),
            Kind::Rate => json!(super::units::rate_bps(v)?),
            Kind::PosRate => json!(read::pos_rate(v)?),
            Kind::Choice(options) => json!(read::literal(options)(v)?),
            Kind::EcnRates => return Err(Decline::new("a list of [[ecn.rate]] tables is read by `ecn`")),
        })
    }
}

/// One key of a RoCE table: the user's name, its kind, the engine's wire field ("" for a key that chooses
/// rather than sets one: `preset`, `rate`) and its meaning (the reference's text).
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub key: &'static str,
    pub kind: Kind,
    pub wire: &'static str,
    pub doc: &'static str,
}

pub const fn key(key: &'static str, kind: Kind, wire: &'static str, doc: &'static str) -> Key {
    Key { key, kind, wire, doc }
}

/// The keys of `table` that `t` gives, read, each as (key, wire value); unknown keys are errors.
pub fn given(t: &mut Tab, table: &'static [Key]) -> Result<Vec<(&'static Key, J)>, Decline> {
    let mut out = Vec::new();
    for k in table {
        if k.kind == Kind::EcnRates {
            continue;
        }
        if let Some(v) = t.opt(k.key, |v| k.kind.read(v))? {
            out.push((k, v));
        }
    }
    Ok(out)
}

/// The key of `table` whose wire field (or key: the engine may name either) is `wire`.
pub fn key_of(table: &'static [Key], wire: &str) -> Option<&'static Key> {
    table.iter().find(|k| !wire.is_empty() && (k.wire == wire || k.key == wire))
}

/// An engine validation error on a table's wire object, said with the user's key.
pub fn said(e: Error, head: &str, table: &'static [Key]) -> Decline {
    match e {
        Error::Spec { field, reason } => {
            let wire = field.strip_prefix(&format!("{head}.")).unwrap_or("");
            match key_of(table, wire) {
                Some(k) => Decline::new(format!("{head}.{}: {reason}", k.key)),
                None => Decline::new(format!("{head}: {reason}")),
            }
        }
        other => Decline::new(format!("{head}: {other}")),
    }
}

/// A table's schema: its meaning and its keys in order, each with its JSON Schema, meaning and default (JSON,
/// null for "unset").
pub fn schema_of(doc: &str, keys: &[Key], default: impl Fn(&Key) -> J) -> J {
    let keys: Vec<J> = keys.iter().map(|k| json!({"key": k.key, "schema": k.kind.schema(), "doc": k.doc, "default": default(k)})).collect();
    json!({"doc": doc, "keys": keys})
}

/// `v` without its null members (an unset key is an absent one, as in TOML).
pub fn strip_nulls(v: J) -> J {
    match v {
        J::Object(m) => J::Object(m.into_iter().filter(|(_, x)| !x.is_null()).map(|(k, x)| (k, strip_nulls(x))).collect()),
        J::Array(a) => J::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// The schema of a table whose every key defaults to the engine spec `S`'s `Default` (`[hybrid]`, `[retransmit]`).
pub fn defaulted_schema<S: Default + serde::Serialize>(doc: &str, keys: &'static [Key]) -> J {
    let d = serde_json::to_value(S::default()).unwrap_or(J::Null);
    schema_of(doc, keys, |k| d.get(k.wire).cloned().unwrap_or(J::Null))
}

/// Table `head` read by its `keys` into the engine spec `S`'s wire object: every field, `S::default()` filling
/// what is not given, checked by `validate` (the engine's), whose errors name the user's key.
pub fn defaulted<S>(v: &Value, head: &str, keys: &'static [Key], validate: impl Fn(&S) -> crate::error::Result<()>) -> Result<J, Decline>
where
    S: Default + serde::Serialize + serde::de::DeserializeOwned,
{
    let mut t = Tab::of(v, head)?;
    let mut out = match serde_json::to_value(S::default()) {
        Ok(J::Object(m)) => m,
        _ => unreachable!("an engine spec serializes to an object"),
    };
    for (k, v) in given(&mut t, keys)? {
        out.insert(k.wire.into(), v);
    }
    t.finish()?;
    let spec: S = serde_json::from_value(J::Object(out.clone())).map_err(|e| Decline::new(format!("{head}: {e}")))?;
    validate(&spec).map_err(|e| said(e, head, keys))?;
    Ok(J::Object(out))
}
