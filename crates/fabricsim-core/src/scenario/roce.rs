//! The RoCE keys of a scenario (`transport = "rdma"`, `[pfc]`, `[ecn]`, `[rdma]`) as their wire objects, exactly as Python's `spec.roce` builds them from the engine's presets.
//!
//! Defaults are `crate::roce`'s presets (the table Python reads through `_core.roce_presets()`); a key the file
//! gives replaces the preset's value ("auto" is null on the wire). Anything Python rejects declines.

use super::read::{self, Tab};
use super::Decline;
use crate::roce::{EcnSpec, PfcSpec, RdmaCc, RdmaSpec};
use serde_json::{json, Map, Value as J};
use toml::Value;

const PRESETS: &[&str] = &["hpcc", "simai", "dcqcn_paper"];

fn to_json<T: serde::Serialize>(x: &T) -> Result<Map<String, J>, Decline> {
    match serde_json::to_value(x) {
        Ok(J::Object(m)) => Ok(m),
        _ => Err(Decline::new("preset not serializable")),
    }
}

/// A finite number as pydantic's strict float keeps it (an integer stays an integer in the JSON; equal as a
/// number either way).
fn real(v: &Value) -> Result<J, Decline> {
    match v {
        Value::Integer(i) if i.unsigned_abs() < (1 << 53) => Ok(json!(*i as f64)),
        Value::Float(x) if x.is_finite() => Ok(json!(*x)),
        _ => Err(Decline::new(format!("expected a finite number, got {v}"))),
    }
}

/// A strict integer that fits 32 bits (`Count32`).
fn count32(v: &Value) -> Result<J, Decline> {
    match v {
        Value::Integer(i) if (0..=u32::MAX as i64).contains(i) => Ok(json!(*i)),
        _ => Err(Decline::new(format!("expected a count, got {v}"))),
    }
}

fn auto_or(f: fn(&Value) -> Result<u64, Decline>) -> impl Fn(&Value) -> Result<J, Decline> {
    move |v| match v {
        Value::String(s) if s == "auto" => Ok(J::Null),
        _ => f(v).map(|x| json!(x)),
    }
}

fn set(out: &mut Map<String, J>, t: &mut Tab, key: &'static str, wire: &str, f: impl Fn(&Value) -> Result<J, Decline>) -> Result<(), Decline> {
    if let Some(v) = t.opt(key, f)? {
        out.insert(wire.into(), v);
    }
    Ok(())
}

/// `[pfc]` (`PfcDef.wire()`): HPCC's switch MMU preset with the file's keys.
pub fn pfc(v: &Value) -> Result<J, Decline> {
    let mut t = Tab::of(v, "pfc")?;
    let mut out = to_json(&PfcSpec::hpcc())?;
    set(&mut out, &mut t, "enabled", "enabled", |v| read::boolean(v).map(J::Bool))?;
    set(&mut out, &mut t, "buffer", "buffer_bytes", |v| read::pos_size(v).map(|x| json!(x)))?;
    set(&mut out, &mut t, "reserve", "reserve_bytes", |v| read::size(v).map(|x| json!(x)))?;
    set(&mut out, &mut t, "alpha", "alpha", real)?;
    set(&mut out, &mut t, "headroom", "headroom_bytes", auto_or(read::size))?;
    set(&mut out, &mut t, "resume_offset", "resume_offset_bytes", |v| read::size(v).map(|x| json!(x)))?;
    set(&mut out, &mut t, "frame", "frame_bytes", |v| read::pos_size(v).map(|x| json!(x)))?;
    set(&mut out, &mut t, "watchdog", "watchdog_ps", |v| read::pos_duration(v).map(|x| json!(x)))?;
    t.finish()?;
    Ok(J::Object(out))
}

/// `[ecn]` (`EcnDef.wire()`): a preset's thresholds by rate, with kmin/kmax/pmax replaced at every rate, or the
/// file's own `[[ecn.rate]]` tables.
pub fn ecn(v: &Value) -> Result<J, Decline> {
    let mut t = Tab::of(v, "ecn")?;
    let given_preset = t.has("preset");
    let preset = t.or("preset", "hpcc", read::literal(PRESETS))?;
    let kmin = t.opt("kmin", read::size)?;
    let kmax = t.opt("kmax", read::size)?;
    let pmax = t.opt("pmax", real)?;
    let own = t.opt("rate", |v| {
        read::tables(v, "ecn.rate")?
            .into_iter()
            .map(|mut r| {
                let row = json!({"rate_bps": r.req("rate", read::pos_rate)?, "kmin_bytes": r.req("kmin", read::size)?,
                    "kmax_bytes": r.req("kmax", read::size)?, "pmax": r.req("pmax", real)?});
                r.finish()?;
                Ok(row)
            })
            .collect::<Result<Vec<J>, Decline>>()
    })?;
    t.finish()?;
    if let Some(rows) = own {
        if given_preset || kmin.is_some() || kmax.is_some() || pmax.is_some() {
            return Err(Decline::new("ecn: both [[ecn.rate]] tables and a preset"));
        }
        return Ok(json!({"thresholds": rows}));
    }
    let spec = EcnSpec::preset(preset).ok_or_else(|| Decline::new("unknown ECN preset"))?;
    let mut rows = Vec::new();
    for th in &spec.thresholds {
        let mut row = to_json(th)?;
        if let Some(k) = kmin {
            row.insert("kmin_bytes".into(), json!(k));
        }
        if let Some(k) = kmax {
            row.insert("kmax_bytes".into(), json!(k));
        }
        if let Some(p) = &pmax {
            row.insert("pmax".into(), p.clone());
        }
        rows.push(J::Object(row));
    }
    Ok(json!({"thresholds": rows}))
}

/// `[rdma]` (`RdmaDef.wire()`, also for `transport = "rdma"` without the table): the preset for `cc` with the
/// file's keys.
pub fn rdma(v: Option<&Value>) -> Result<J, Decline> {
    let empty = Value::Table(toml::Table::new());
    let mut t = Tab::of(v.unwrap_or(&empty), "rdma")?;
    let cc = t.or("cc", "dcqcn", read::literal(&["none", "dcqcn", "hpcc"]))?;
    let preset = t.or("preset", "hpcc", read::literal(PRESETS))?;
    let cc_enum = match cc {
        "none" => RdmaCc::None,
        "hpcc" => RdmaCc::Hpcc,
        _ => RdmaCc::Dcqcn,
    };
    let mut out = to_json(&RdmaSpec::preset(preset, cc_enum).ok_or_else(|| Decline::new("unknown RDMA preset"))?)?;
    out.insert("cc".into(), json!(cc));
    let size = |v: &Value| read::pos_size(v).map(|x| json!(x));
    let dur = |v: &Value| read::pos_duration(v).map(|x| json!(x));
    let rate = |v: &Value| crate::scenario::units::rate_bps(v).map(|x| json!(x));
    let flag = |v: &Value| read::boolean(v).map(J::Bool);
    set(&mut out, &mut t, "ack_size", "ack_bytes", size)?;
    set(&mut out, &mut t, "ack_high_priority", "ack_high_priority", flag)?;
    set(&mut out, &mut t, "nack_interval", "nack_interval_ps", dur)?;
    set(&mut out, &mut t, "window", "window", flag)?;
    set(&mut out, &mut t, "var_window", "var_window", flag)?;
    set(&mut out, &mut t, "base_rtt", "base_rtt_ps", auto_or(read::pos_duration))?;
    set(&mut out, &mut t, "min_rate", "min_rate_bps", |v| read::pos_rate(v).map(|x| json!(x)))?;
    set(&mut out, &mut t, "g", "g", real)?;
    set(&mut out, &mut t, "alpha_interval", "alpha_resume_interval_ps", dur)?;
    set(&mut out, &mut t, "decrease_interval", "rate_decrease_interval_ps", dur)?;
    set(&mut out, &mut t, "rp_timer", "rp_timer_ps", dur)?;
    set(&mut out, &mut t, "fast_recovery", "fast_recovery_times", count32)?;
    set(&mut out, &mut t, "rate_ai", "rate_ai_bps", rate)?;
    set(&mut out, &mut t, "rate_hai", "rate_hai_bps", rate)?;
    set(&mut out, &mut t, "clamp_target", "clamp_target_rate", flag)?;
    set(&mut out, &mut t, "eta", "eta", real)?;
    set(&mut out, &mut t, "max_stage", "max_stage", count32)?;
    set(&mut out, &mut t, "hpcc_rate_ai", "hpcc_rate_ai_bps", rate)?;
    set(&mut out, &mut t, "fast_react", "fast_react", flag)?;
    t.finish()?;
    Ok(J::Object(out))
}
