//! The RoCE keys of a scenario (`transport = "rdma"`, `[pfc]`, `[ecn]`, `[rdma]`): their one declaration
//! (`PFC`, `ECN`, `ECN_RATE`, `RDMA`: key, unit, wire field, meaning), the reader that takes them to the
//! engine's wire objects, and the schema Python's models are generated from (`schema`).
//!
//! A key is declared once, in a table here: the reader reads it, the schema exports it (Python's `PfcDef`,
//! `EcnDef`, `EcnRateDef` and `RdmaDef` are made from that export, with no rules of their own), and an engine
//! error on the value is said back with the key, found in the same table. Defaults are `crate::roce`'s presets
//! (HPCC's `mix/config.txt`, SimAI's `SimAI.conf`, the DCQCN paper; docs/roce_parameters.md); a key the file
//! gives replaces the preset's value ("auto" is null on the wire). Errors are `Decline`s whose text is
//! "field: reason", with the user's key.

use super::keys::{given, key, key_of, said, schema_of, Key, Kind};
use super::read::{self, Tab};
use super::Decline;
use crate::error::Error;
use crate::roce::{EcnSpec, PfcSpec, RdmaCc, RdmaSpec};
use serde_json::{json, Map, Value as J};
use toml::Value;

const PRESETS: &[&str] = &["hpcc", "simai", "dcqcn_paper"];
const CCS: &[&str] = &["none", "dcqcn", "hpcc"];
/// The preset of `[ecn]` and `[rdma]`, and the congestion control of `[rdma]`, when the file names none.
pub const DEFAULT_PRESET: &str = "hpcc";
pub const DEFAULT_CC: &str = "dcqcn";

/// `[pfc]`: priority flow control of the `shared_buffer` switches (HPCC's switch MMU).
pub const PFC: &[Key] = &[
    key("enabled", Kind::Bool, "enabled", "Whether switches send PAUSE frames; without PFC a shared-buffer switch drops what its headroom cannot hold."),
    key("buffer", Kind::PosSize, "buffer_bytes", "Shared buffer of each switch."),
    key("reserve", Kind::Size, "reserve_bytes", "Bytes reserved per ingress port outside the shared pool."),
    key(
        "alpha",
        Kind::Real,
        "alpha",
        "Dynamic-threshold factor in (0, 64]: a port may use alpha × (the shared buffer left) before it pauses; doubled per doubling of a port's rate above the hosts' NIC rate, up to 1 (HPCC's `pfc_a_shift`).",
    ),
    key(
        "headroom",
        Kind::AutoSize,
        "headroom_bytes",
        "Headroom per ingress port for the bytes in flight while a PAUSE travels; \"auto\" is HPCC's 3 × link rate × link delay / 8.",
    ),
    key("resume_offset", Kind::Size, "resume_offset_bytes", "A paused port resumes when its shared use is this far below the threshold (or zero)."),
    key("frame", Kind::PosSize, "frame_bytes", "Wire size of a PAUSE or RESUME frame (it waits for the packet being sent, then goes first)."),
    key(
        "watchdog",
        Kind::PosDuration,
        "watchdog_ps",
        "Deadlock check period: a run whose paused ports sent nothing for this long is searched for a cycle of paused ports, and a cycle ends it (`fabricsim run` names it and exits 3).",
    ),
];

/// `[ecn]`: RED-like marking at every switch egress port, by the port's rate.
pub const ECN: &[Key] = &[
    key(
        "preset",
        Kind::Choice(PRESETS),
        "",
        "Thresholds by rate: \"hpcc\" (HPCC's config.txt at 25, 50 and 100 Gb/s, and run.py's 400 Gb/s row), \"simai\" (SimAI.conf, with rows for faster links) or \"dcqcn_paper\" (the DCQCN paper's single row); docs/roce_parameters.md lists them.",
    ),
    key("kmin", Kind::Size, "kmin_bytes", "Kmin at every rate of the preset (unset: the preset's)."),
    key("kmax", Kind::Size, "kmax_bytes", "Kmax at every rate of the preset (unset: the preset's)."),
    key("pmax", Kind::Real, "pmax", "Pmax at every rate of the preset (unset: the preset's)."),
    key(
        "rate",
        Kind::EcnRates,
        "",
        "Your own thresholds, one [[ecn.rate]] table per link rate, instead of a preset's (given, even empty, it replaces the preset).",
    ),
];

/// `[[ecn.rate]]`: the thresholds of the egress ports of one link rate (every key required).
pub const ECN_RATE: &[Key] = &[
    key(
        "rate",
        Kind::PosRate,
        "rate_bps",
        "The link rate these thresholds apply to (a port of another rate takes the nearest rate below, else the lowest).",
    ),
    key("kmin", Kind::Size, "kmin_bytes", "Queue length below which nothing is marked."),
    key("kmax", Kind::Size, "kmax_bytes", "Queue length above which every packet is marked (≥ kmin)."),
    key("pmax", Kind::Real, "pmax", "Marking probability at kmax, in [0, 1]; between kmin and kmax it rises linearly from 0."),
];

/// `[rdma]`: the RDMA transport's congestion control and parameters (unset: the preset's for `cc`).
pub const RDMA: &[Key] = &[
    key(
        "cc",
        Kind::Choice(CCS),
        "cc",
        "Congestion control: \"dcqcn\" (HPCC fork's Mellanox model; needs [ecn]), \"hpcc\" (INT per hop) or \"none\" (line rate; only PFC holds it back).",
    ),
    key(
        "preset",
        Kind::Choice(PRESETS),
        "",
        "Parameter set: \"hpcc\" (HPCC's mix/config.txt), \"simai\" (SimAI.conf) or \"dcqcn_paper\" (the reaction point of Zhu et al. 2015); docs/roce_parameters.md lists them.",
    ),
    key("ack_size", Kind::PosSize, "ack_bytes", "Wire size of an ACK or NACK (unset: the preset's)."),
    key(
        "ack_high_priority",
        Kind::Bool,
        "ack_high_priority",
        "ACKs and NACKs travel in the control class (strict priority, never paused) rather than with the data (unset: the preset's).",
    ),
    key("nack_interval", Kind::PosDuration, "nack_interval_ps", "A receiver sends at most one NACK per hole in this interval (unset: the preset's)."),
    key("window", Kind::Bool, "window", "Limit the bytes in flight to one bandwidth-delay product (HPCC's HAS_WIN; unset: the preset's for `cc`)."),
    key("var_window", Kind::Bool, "var_window", "The window follows the rate (VAR_WIN; unset: the preset's)."),
    key(
        "base_rtt",
        Kind::AutoPosDuration,
        "base_rtt_ps",
        "Base RTT T of the window and of HPCC; \"auto\" is the largest over the QPs of 2 × propagation + payload serialisation (unset: the preset's).",
    ),
    key("min_rate", Kind::PosRate, "min_rate_bps", "Lowest rate congestion control may set (unset: the preset's)."),
    key("g", Kind::Real, "g", "DCQCN: EWMA gain of α, in (0, 1] (unset: the preset's)."),
    key("alpha_interval", Kind::PosDuration, "alpha_resume_interval_ps", "DCQCN: α update period (unset: the preset's)."),
    key("decrease_interval", Kind::PosDuration, "rate_decrease_interval_ps", "DCQCN: rate-decrease check period, at most one cut per period (unset: the preset's)."),
    key("rp_timer", Kind::PosDuration, "rp_timer_ps", "DCQCN: rate-increase timer (unset: the preset's)."),
    key("fast_recovery", Kind::Count32, "fast_recovery_times", "DCQCN: fast-recovery steps F before additive increase (unset: the preset's)."),
    key("rate_ai", Kind::Rate, "rate_ai_bps", "DCQCN: additive-increase step (unset: the preset's)."),
    key("rate_hai", Kind::Rate, "rate_hai_bps", "DCQCN: hyper-increase step (unset: the preset's)."),
    key("clamp_target", Kind::Bool, "clamp_target_rate", "DCQCN: every cut sets the target rate to the current rate (unset: the preset's)."),
    key(
        "rate_on_first_cnp",
        Kind::Real,
        "rate_on_first_cnp",
        "DCQCN: the first CNP of a queue pair cuts its rate to this fraction, in (0, 1] (HPCC fork's `RateOnFirstCnp`; unset: the preset's, 1: no cut).",
    ),
    key("eta", Kind::Real, "eta", "HPCC: target utilisation η, in (0, 1] (unset: the preset's)."),
    key("max_stage", Kind::Count32, "max_stage", "HPCC: additive-increase stages before a multiplicative update (unset: the preset's)."),
    key("hpcc_rate_ai", Kind::Rate, "hpcc_rate_ai_bps", "HPCC: additive-increase step, as a rate (unset: the preset's)."),
    key("fast_react", Kind::Bool, "fast_react", "HPCC: react on every ACK from the per-RTT reference rate (unset: the preset's)."),
];

/// The tables' meanings (the models' docstrings).
pub const TABLE_DOCS: &[(&str, &str)] = &[
    (
        "pfc",
        "Priority flow control of the `shared_buffer` switches (HPCC's switch MMU; a scenario with such a switch needs this table, even empty). An ingress port may hold its `reserve`, then up to `alpha` × (the shared pool left) before it sends PAUSE upstream, and its `headroom` for what is on the wire meanwhile; it sends RESUME once it is `resume_offset` below the threshold. A PAUSE lasts until its RESUME (the pause time of 802.1Qbb is not modelled, as in HPCC's fork). Defaults: HPCC's `mix/config.txt` and `switch-mmu.cc`.",
    ),
    (
        "ecn",
        "ECN marking at every switch egress port: RED-like on the instantaneous queue, decided at dequeue on the bytes of the data queue the packet leaves behind. Thresholds depend on the port's rate: a `preset`'s table, optionally with `kmin`, `kmax` or `pmax` replaced at every rate, or a table of your own (`[[ecn.rate]]`).",
    ),
    ("ecn.rate", "ECN thresholds of the egress ports of one link rate."),
    (
        "rdma",
        "The RDMA transport (`transport = \"rdma\"`): every message is one queue pair with an ACK per packet (a CNP flag echoes an ECN mark), NACK and go-back-N, pacing at its rate and congestion control `cc`. Every other key starts from `preset` for that `cc` (docs/roce_parameters.md) and may be overridden.",
    ),
];

/// The schema of the four tables: for each, its meaning and its keys in order, each with its JSON Schema,
/// unit and meaning. Python's models are generated from it (`fabricsim.spec.roce`).
pub fn schema() -> J {
    let pfc = to_json(&PfcSpec::hpcc());
    let default = |table: &'static str| {
        let pfc = &pfc;
        move |k: &Key| -> J {
            match (table, k.key) {
                ("pfc", _) => match pfc.get(k.wire) {
                    Some(J::Null) if k.kind == Kind::AutoSize => json!("auto"),
                    Some(v) => v.clone(),
                    None => J::Null,
                },
                ("ecn" | "rdma", "preset") => json!(DEFAULT_PRESET),
                ("rdma", "cc") => json!(DEFAULT_CC),
                _ => J::Null,
            }
        }
    };
    let doc = |name: &str| TABLE_DOCS.iter().find(|(n, _)| *n == name).map(|(_, d)| *d).unwrap_or("");
    let mut rate = schema_of(doc("ecn.rate"), ECN_RATE, default("ecn.rate"));
    rate["required"] = json!(true);
    json!({
        "pfc": schema_of(doc("pfc"), PFC, default("pfc")),
        "ecn": schema_of(doc("ecn"), ECN, default("ecn")),
        "ecn.rate": rate,
        "rdma": schema_of(doc("rdma"), RDMA, default("rdma")),
    })
}

fn to_json<T: serde::Serialize>(x: &T) -> Map<String, J> {
    match serde_json::to_value(x) {
        Ok(J::Object(m)) => m,
        _ => unreachable!("a RoCE spec serializes to an object"),
    }
}

fn wire_of<T: serde::de::DeserializeOwned>(m: Map<String, J>, head: &str) -> Result<T, Decline> {
    serde_json::from_value(J::Object(m)).map_err(|e| Decline::new(format!("{head}: {e}")))
}

/// `[pfc]`: HPCC's switch MMU preset with the file's keys, validated.
pub fn pfc(v: &Value) -> Result<J, Decline> {
    let mut t = Tab::of(v, "pfc")?;
    let mut out = to_json(&PfcSpec::hpcc());
    for (k, v) in given(&mut t, PFC)? {
        out.insert(k.wire.into(), v);
    }
    t.finish()?;
    let spec: PfcSpec = wire_of(out.clone(), "pfc")?;
    spec.validate().map_err(|e| said(e, "pfc", PFC))?;
    Ok(J::Object(out))
}

/// `[ecn]`: a preset's thresholds by rate, with kmin/kmax/pmax replaced at every rate, or the file's own
/// `[[ecn.rate]]` tables; validated, an error named by the key that set the value.
pub fn ecn(v: &Value) -> Result<J, Decline> {
    let mut t = Tab::of(v, "ecn")?;
    let set = given(&mut t, ECN)?;
    let own = t.opt("rate", |v| {
        read::tables(v, "ecn.rate")?
            .into_iter()
            .map(|mut r| {
                let mut row = Map::new();
                for k in ECN_RATE {
                    row.insert(k.wire.into(), r.req(k.key, |v| k.kind.read(v))?);
                }
                r.finish()?;
                Ok(J::Object(row))
            })
            .collect::<Result<Vec<J>, Decline>>()
    })?;
    t.finish()?;
    let spec = match own {
        Some(rows) => {
            if let Some((k, _)) = set.first() {
                return Err(Decline::new(format!(
                    "ecn.{}: give thresholds either as [[ecn.rate]] tables or as a preset with kmin/kmax/pmax, not both",
                    k.key
                )));
            }
            json!({ "thresholds": rows })
        }
        None => {
            let preset = set.iter().find(|(k, _)| k.key == "preset").and_then(|(_, v)| v.as_str()).unwrap_or(DEFAULT_PRESET);
            let spec = EcnSpec::preset(preset).ok_or_else(|| Decline::new(format!("ecn.preset: unknown preset '{preset}'")))?;
            let rows: Vec<J> = spec
                .thresholds
                .iter()
                .map(|th| {
                    let mut row = to_json(th);
                    for (k, v) in set.iter().filter(|(k, _)| !k.wire.is_empty()) {
                        row.insert(k.wire.into(), v.clone());
                    }
                    J::Object(row)
                })
                .collect();
            json!({ "thresholds": rows })
        }
    };
    let parsed: EcnSpec = wire_of(spec.as_object().cloned().unwrap_or_default(), "ecn")?;
    parsed.validate().map_err(|e| ecn_said(e, own_given(v), &set))?;
    Ok(spec)
}

fn own_given(v: &Value) -> bool {
    matches!(v, Value::Table(t) if t.contains_key("rate"))
}

/// An engine error on `ecn.thresholds[i].<wire>`, named by the key that set the value: `ecn.rate[i].<key>` for
/// the file's own tables; else `ecn.kmin`/`ecn.kmax`/`ecn.pmax` if the file set it (a Kmin above Kmax by
/// whichever of the two it set), else `ecn.preset`.
fn ecn_said(e: Error, own: bool, set: &[(&'static Key, J)]) -> Decline {
    let Error::Spec { field, reason } = e else { return Decline::new(format!("ecn: {e}")) };
    let Some(rest) = field.strip_prefix("ecn.thresholds[") else {
        return Decline::new(format!("{}: {reason}", if own { "ecn.rate" } else { "ecn" }));
    };
    let (i, wire) = rest.split_once("].").unwrap_or((rest, ""));
    let user = key_of(ECN_RATE, wire).map(|k| k.key).unwrap_or(wire);
    if own {
        return Decline::new(format!("ecn.rate[{i}].{user}: {reason}"));
    }
    let is_set = |name: &str| set.iter().any(|(k, _)| k.key == name);
    let user = if user == "kmin" && !is_set("kmin") && is_set("kmax") { "kmax" } else { user };
    let at = if user != "rate" && is_set(user) { format!("ecn.{user}") } else { "ecn.preset".into() };
    Decline::new(format!("{at}: {reason}"))
}

/// `[rdma]` (also for `transport = "rdma"` without the table): the preset for `cc` with the file's keys,
/// validated.
pub fn rdma(v: Option<&Value>) -> Result<J, Decline> {
    let empty = Value::Table(toml::Table::new());
    let mut t = Tab::of(v.unwrap_or(&empty), "rdma")?;
    let set = given(&mut t, RDMA)?;
    t.finish()?;
    let pick =
        |name: &str, default: &'static str| set.iter().find(|(k, _)| k.key == name).and_then(|(_, v)| v.as_str()).unwrap_or(default).to_string();
    let (cc, preset) = (pick("cc", DEFAULT_CC), pick("preset", DEFAULT_PRESET));
    let cc_enum = match cc.as_str() {
        "none" => RdmaCc::None,
        "hpcc" => RdmaCc::Hpcc,
        _ => RdmaCc::Dcqcn,
    };
    let spec = RdmaSpec::preset(&preset, cc_enum).ok_or_else(|| Decline::new(format!("rdma.preset: unknown preset '{preset}'")))?;
    let mut out = to_json(&spec);
    for (k, v) in set.into_iter().filter(|(k, _)| !k.wire.is_empty()) {
        out.insert(k.wire.into(), v);
    }
    let parsed: RdmaSpec = wire_of(out.clone(), "rdma")?;
    parsed.validate().map_err(|e| said(e, "rdma", RDMA))?;
    Ok(J::Object(out))
}

/// The RoCE wire objects of a scenario document's `transport`, `[pfc]`, `[ecn]` and `[rdma]` (only those it
/// has): {"pfc": …, "ecn": …, "rdma": …}. An `[rdma]` table without `transport = "rdma"` is an error.
pub fn tables(transport: &str, pfc_v: Option<&Value>, ecn_v: Option<&Value>, rdma_v: Option<&Value>) -> Result<Map<String, J>, Decline> {
    let mut out = Map::new();
    if rdma_v.is_some() && transport != "rdma" {
        return Err(Decline::new("rdma: an [rdma] table needs transport = \"rdma\" (without it, messages use the message transport)"));
    }
    if let Some(v) = pfc_v {
        out.insert("pfc".into(), pfc(v)?);
    }
    if let Some(v) = ecn_v {
        out.insert("ecn".into(), ecn(v)?);
    }
    if transport == "rdma" {
        out.insert("rdma".into(), rdma(rdma_v).map_err(|d| d.within("rdma"))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Value {
        Value::Table(s.parse().unwrap())
    }

    #[test]
    fn every_wire_field_has_exactly_one_key() {
        let pfc: Vec<&str> = PFC.iter().map(|k| k.wire).collect();
        assert_eq!(pfc.len(), to_json(&PfcSpec::hpcc()).len());
        assert!(to_json(&PfcSpec::hpcc()).keys().all(|w| pfc.contains(&w.as_str())));
        let rdma = to_json(&RdmaSpec::preset("hpcc", RdmaCc::Dcqcn).unwrap());
        let wires: Vec<&str> = RDMA.iter().map(|k| k.wire).filter(|w| !w.is_empty()).collect();
        assert_eq!(wires.len(), rdma.len());
        assert!(rdma.keys().all(|w| wires.contains(&w.as_str())));
    }

    #[test]
    fn engine_errors_name_the_users_key() {
        let e = pfc(&doc("alpha = -0.5")).unwrap_err();
        assert!(e.text.starts_with("pfc.alpha: -0.5 is not a dynamic-threshold factor"), "{e:?}");
        let e = rdma(Some(&doc("ack_size = 70000"))).unwrap_err();
        assert!(e.text.starts_with("rdma.ack_size: "), "{e:?}");
        // HPCC's 100G row: Kmin 400 kB, Kmax 1600 kB; a Kmax of 2 kB is named by the key that set it.
        let e = ecn(&doc("kmax = \"2kB\"")).unwrap_err();
        assert!(e.text.starts_with("ecn.kmax: Kmin 100000 B is above Kmax 2000 B"), "{e:?}");
        let e = ecn(&doc("[[rate]]\nrate = \"1Gbps\"\nkmin = 5\nkmax = 1\npmax = 0.1")).unwrap_err();
        assert!(e.text.starts_with("ecn.rate[0].kmin: "), "{e:?}");
        assert!(ecn(&doc("rate = []\nkmin = 5")).unwrap_err().text.starts_with("ecn.kmin: "));
    }
}
