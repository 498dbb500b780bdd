//! ASTRA-sim's network configuration read as a fabric: the analytical backend's YAML (or the same keys in JSON),
//! one entry per dimension under `topology` (Ring, FullyConnected, Switch), `npus_count`, `bandwidth` (GB/s)
//! and `latency` (ns), becomes a `multi_dim` topology with unlimited (lossless) queues.
//!
//! What the keys mean is ASTRA-sim's (astra-network-analytical, `NetworkParser` and `bw_GBps_to_Bpns`): every
//! link carries `bandwidth` GB/s in each direction, 1 GB being 2^30 bytes, so a dimension's rate is bandwidth ×
//! 2^33 bit/s; `latency` is each link's delay in ns. ASTRA-sim's own rules hold: the four lists have one entry
//! per dimension, more than 1 NPU per dimension, bandwidth > 0, latency ≥ 0. An error names the key as the user
//! wrote it (`npus_count[1]`), also for what the `multi_dim` reader finds (`topology.dims[1].npus`).

use super::Decline;
use serde_json::{json, Map, Value};

/// The keys of ASTRA-sim's network configuration, in its order.
pub const KEYS: &[&str] = &["topology", "npus_count", "bandwidth", "latency"];
/// ASTRA-sim's building blocks and the `multi_dim` shape each one is.
const BLOCKS: &[(&str, &str)] = &[("Ring", "ring"), ("FullyConnected", "fully_connected"), ("Switch", "switch")];
/// Bits per second in one "GB/s" of ASTRA-sim's: 2^30 bytes (`bw_GBps_to_Bpns`: "1 GB is 2^30 B").
pub const BPS_PER_GBPS: f64 = (1u64 << 33) as f64;
/// Keys of ASTRA-sim's older analytical network JSON (`topology-name`, ...) and of its system configuration.
const OLD_KEYS: &[&str] =
    &["topology-name", "dimensions-count", "topologies-per-dim", "dimension-type", "units-count", "links-count", "link-latency", "link-bandwidth"];
const SYSTEM_KEYS: &[&str] = &[
    "scheduling-policy",
    "endpoint-delay",
    "active-chunks-per-dimension",
    "preferred-dataset-splits",
    "all-reduce-implementation",
    "collective-optimization",
];

/// The fabric document (`{"topology": {"kind": "multi_dim", "dims": [...]}, "queue": {"limit_packets":
/// "unlimited"}}`) of an ASTRA-sim network configuration `text`, YAML (`json` false) or JSON. The topology is
/// built once here, so that every error names the configuration's own key. O(size of the fabric).
pub fn fabric(text: &str, json: bool) -> Result<Value, Decline> {
    let doc = if json {
        serde_json::from_str(text).map_err(|e| Decline::invalid(&format!("line {}", e.line()), format!("JSON syntax error: {e}")))?
    } else {
        yaml(text)?
    };
    let Value::Object(map) = doc else {
        return Err(Decline::invalid("", "an ASTRA-sim network configuration is a mapping of topology, npus_count, bandwidth and latency"));
    };
    for key in map.keys() {
        if OLD_KEYS.contains(&key.as_str()) {
            return Err(Decline::invalid(
                key,
                "ASTRA-sim 1.0's analytical network format is not read; write ASTRA-sim 2.0's keys topology, npus_count, bandwidth, latency",
            ));
        }
        if SYSTEM_KEYS.contains(&key.as_str()) {
            return Err(Decline::invalid(
                key,
                "this is an ASTRA-sim system configuration, not a network; give the network configuration (topology, npus_count, bandwidth, latency)",
            ));
        }
        if !KEYS.contains(&key.as_str()) {
            return Err(Decline::invalid(key, "unknown key (ASTRA-sim's network keys: topology, npus_count, bandwidth, latency)"));
        }
    }
    let list = |key: &str| -> Result<&Vec<Value>, Decline> {
        match map.get(key) {
            Some(Value::Array(a)) => Ok(a),
            Some(other) => Err(Decline::invalid(key, format!("must be a list with one entry per dimension, e.g. [ 8 ], not {}", shown(other)))),
            None => Err(Decline::invalid(key, "required key is missing")),
        }
    };
    let topo = list("topology")?;
    if topo.is_empty() {
        return Err(Decline::invalid("topology", "needs at least one dimension"));
    }
    for key in &KEYS[1..] {
        let n = list(key)?.len();
        if n != topo.len() {
            let (entries, dims) = (if n == 1 { "entry" } else { "entries" }, if topo.len() == 1 { "dimension" } else { "dimensions" });
            return Err(Decline::invalid(key, format!("{n} {entries}, but topology lists {} {dims}", topo.len())));
        }
    }
    let mut dims = Vec::with_capacity(topo.len());
    for (k, t) in topo.iter().enumerate() {
        let at = |key: &str| format!("{key}[{k}]");
        let shape = match t {
            Value::String(s) => BLOCKS.iter().find(|b| b.0 == s).map(|b| b.1),
            _ => None,
        }
        .ok_or_else(|| {
            Decline::invalid(&at("topology"), format!("{} is not one of ASTRA-sim's building blocks Ring, FullyConnected, Switch", shown(t)))
        })?;
        let npus = match &list("npus_count")?[k] {
            Value::Number(x) if x.as_u64().is_some_and(|n| n > 1) => x.as_u64().unwrap_or(0),
            other => return Err(Decline::invalid(&at("npus_count"), format!("must be a whole number of NPUs larger than 1, not {}", shown(other)))),
        };
        let bw = match &list("bandwidth")?[k] {
            Value::Number(x) if x.as_f64().is_some_and(|b| b > 0.0 && b.is_finite()) => x.as_f64().unwrap_or(0.0),
            other => return Err(Decline::invalid(&at("bandwidth"), format!("must be a number of GB/s larger than 0, not {}", shown(other)))),
        };
        let ns = match &list("latency")?[k] {
            Value::Number(x) if x.as_f64().is_some_and(|l| l >= 0.0 && l.is_finite()) => x.as_f64().unwrap_or(0.0),
            other => return Err(Decline::invalid(&at("latency"), format!("must be a number of ns, 0 or more, not {}", shown(other)))),
        };
        let rate = (bw * BPS_PER_GBPS).round();
        let rate = if rate < i64::MAX as f64 { json!(rate as u64) } else { json!(format!("{rate:.0}bps")) };
        dims.push(json!({"shape": shape, "npus": npus, "rate": rate, "delay": format!("{}ps", (ns * 1e3).round())}));
    }
    let topology = json!({"kind": "multi_dim", "dims": dims});
    let table = toml::Value::try_from(&topology).map_err(|e| Decline::invalid("", format!("a value a fabric cannot hold: {e}")))?;
    super::units::quietly(|| super::topology::build(&table, None)).map_err(said)?;
    Ok(json!({"topology": topology, "queue": {"limit_packets": "unlimited"}}))
}

/// A value as the user wrote it: a string in single quotes, anything else as JSON.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

/// The multi_dim reader's decline with the configuration's key in place of its own (`topology.dims[k].npus` is
/// `npus_count[k]`; a problem of the whole topology, such as its size, is the file's).
fn said(d: Decline) -> Decline {
    let Some(rest) = d.text.strip_prefix("topology.dims[") else {
        return Decline { text: d.text.strip_prefix("topology: ").unwrap_or(&d.text).to_string(), ..d };
    };
    let (k, tail) = rest.split_once(']').unwrap_or((rest, ""));
    let (key, reason) = tail.split_once(": ").unwrap_or((tail, ""));
    let ours = match key {
        ".npus" => "npus_count",
        ".rate" => "bandwidth",
        ".delay" => "latency",
        _ => "topology",
    };
    Decline { text: format!("{ours}[{k}]: {reason}"), ..d }
}

/// One YAML document as JSON values (scalars as YAML 1.2's core schema reads them); a syntax error names its line.
fn yaml(text: &str) -> Result<Value, Decline> {
    use yaml_rust2::{Yaml, YamlLoader};
    let docs = YamlLoader::load_from_str(text).map_err(|e| {
        Decline::invalid(&format!("line {}", e.marker().line()), format!("YAML syntax error: {} (column {})", e.info(), e.marker().col() + 1))
    })?;
    fn conv(y: &Yaml) -> Result<Value, Decline> {
        Ok(match y {
            Yaml::Real(s) => match y.as_f64() {
                Some(x) if x.is_finite() => json!(x),
                _ => Value::String(s.clone()),
            },
            Yaml::Integer(i) => json!(i),
            Yaml::String(s) => Value::String(s.clone()),
            Yaml::Boolean(b) => json!(b),
            Yaml::Array(a) => Value::Array(a.iter().map(conv).collect::<Result<_, _>>()?),
            Yaml::Hash(h) => {
                let mut m = Map::new();
                for (k, v) in h {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        other => conv(other)?.to_string(),
                    };
                    m.insert(key, conv(v)?);
                }
                Value::Object(m)
            }
            Yaml::Null => Value::Null,
            Yaml::Alias(_) | Yaml::BadValue => return Err(Decline::invalid("", "YAML aliases are not read")),
        })
    }
    match docs.as_slice() {
        [] => Err(Decline::invalid("", "the file is empty: an ASTRA-sim network configuration lists topology, npus_count, bandwidth and latency")),
        [one] => conv(one),
        _ => Err(Decline::invalid("", format!("{} YAML documents: an ASTRA-sim network configuration is one", docs.len()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(text: &str) -> Value {
        fabric(text, false).unwrap()["topology"]["dims"].clone()
    }

    #[test]
    fn ring_and_hgx_by_hand() {
        // 50 GB/s of 2^30 B: 50 × 8 × 2^30 = 429,496,729,600 bit/s; 500 ns = 500,000 ps.
        let d = dims("topology: [ Ring ]\nnpus_count: [ 8 ]  # NPUs\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n");
        assert_eq!(d, json!([{"shape": "ring", "npus": 8, "rate": 429_496_729_600u64, "delay": "500000ps"}]));
        let d = dims("topology:\n  - Switch\nnpus_count:\n  - 8\nbandwidth: [400]\nlatency: [936.25]\n");
        assert_eq!(d[0]["rate"], json!(3_435_973_836_800u64));
        assert_eq!(d[0]["delay"], json!("936250ps"));
    }

    #[test]
    fn errors_name_the_key() {
        let err = |t: &str| fabric(t, false).unwrap_err().text;
        let ok = "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 700 ]\n";
        assert!(fabric(ok, false).is_ok());
        assert!(err(&ok.replace("Switch", "Torus")).starts_with("topology[1]: 'Torus' is not one of"), "{}", err(&ok.replace("Switch", "Torus")));
        assert_eq!(err(&ok.replace("[ 4, 2 ]", "[ 4 ]")), "npus_count: 1 entry, but topology lists 2 dimensions");
        assert!(err(&ok.replace("[ 4, 2 ]", "[ 4, 1 ]")).starts_with("npus_count[1]: must be a whole number of NPUs larger than 1"));
        assert!(err(&ok.replace("[ 50, 25 ]", "[ 50, 0 ]")).starts_with("bandwidth[1]: must be a number of GB/s larger than 0"));
        assert!(err(&ok.replace("[ 500, 700 ]", "[ -1, 700 ]")).starts_with("latency[0]: must be a number of ns"));
        assert_eq!(
            err(&(ok.to_string() + "nics: [ 1 ]\n")),
            "nics: unknown key (ASTRA-sim's network keys: topology, npus_count, bandwidth, latency)"
        );
        assert!(err("topology: [ Ring\n").starts_with("line "), "{}", err("topology: [ Ring\n"));
        assert_eq!(err("{\"scheduling-policy\": \"LIFO\"}").split(':').next(), Some("scheduling-policy"));
        // The multi_dim reader's own verdict, said with the configuration's key: 10^12 NPUs are too many.
        let big = "topology: [ Ring, Ring ]\nnpus_count: [ 1000000, 1000000 ]\nbandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n";
        assert!(err(big).contains("nodes and links"), "{}", err(big));
        assert_eq!(said(Decline::new("topology.dims[2].rate: too fast")).text, "bandwidth[2]: too fast");
    }
}
