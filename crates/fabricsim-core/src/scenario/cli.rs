//! The commands the native front door takes, `run FILE [--seed N] [--fidelity packet|flow] [--memory-limit M] --json` and `validate FILE [--memory-limit M]`, prepared exactly as the Python CLI prepares them.
//!
//! `parse_argv` accepts only those shapes (anything else, such as `--figure`, `--partial`, `-q` or a run
//! without `--json`, is None); `prepare` reads the file and builds the engine's RunSpec and workload as
//! Python's `engine.run` / `engine.validate` build them, or declines.

use super::{lower, wire, Decline, Scenario};
use crate::compile::{compile, Compiled};
use crate::spec::RunSpec;
use crate::workload::Workload;

/// A command the native front door may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `quiet`: `--quiet`/`-q` (no progress bar); `memory_limit`: `--memory-limit` in bytes (`crate::budget`).
    Run {
        path: String,
        seed: Option<u64>,
        fidelity: Option<&'static str>,
        quiet: bool,
        memory_limit: Option<u64>,
    },
    Validate {
        path: String,
        memory_limit: Option<u64>,
    },
}

impl Command {
    pub fn path(&self) -> &str {
        match self {
            Command::Run { path, .. } | Command::Validate { path, .. } => path,
        }
    }

    /// The `--memory-limit` given, in bytes.
    pub fn memory_limit(&self) -> Option<u64> {
        match self {
            Command::Run { memory_limit, .. } | Command::Validate { memory_limit, .. } => *memory_limit,
        }
    }
}

/// `argv` (without the program name) as a command, or None for any other shape. Options are taken as click
/// takes them (`--seed N` or `--seed=N`, in any order around the file); a repeated option, `--`, or a file
/// name starting with '-' is None.
pub fn parse_argv(argv: &[String]) -> Option<Command> {
    let (cmd, rest) = argv.split_first()?;
    let mut path: Option<String> = None;
    let (mut seed, mut fidelity, mut json, mut quiet, mut memory_limit) = (None, None, false, false, None);
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a, None),
        };
        let mut value = || -> Option<String> {
            if let Some(v) = inline.clone() {
                return Some(v);
            }
            i += 1;
            rest.get(i).cloned()
        };
        match key {
            "--seed" if cmd == "run" && seed.is_none() => {
                let v = value()?;
                if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                seed = Some(v.parse::<u64>().ok()?);
            }
            "--fidelity" if cmd == "run" && fidelity.is_none() => {
                fidelity = Some(match value()?.as_str() {
                    "packet" => "packet",
                    "flow" => "flow",
                    _ => return None,
                });
            }
            // A malformed limit is the click CLI's to report.
            "--memory-limit" if memory_limit.is_none() => memory_limit = Some(crate::budget::parse_limit(&value()?).ok()?),
            "--json" if cmd == "run" && !json && inline.is_none() => json = true,
            "--quiet" | "-q" if cmd == "run" && !quiet && inline.is_none() => quiet = true,
            _ if !a.starts_with('-') && path.is_none() && !a.is_empty() => path = Some(a.to_string()),
            _ => return None,
        }
        i += 1;
    }
    let path = path?;
    match cmd.as_str() {
        "run" if json => Some(Command::Run { path, seed, fidelity, quiet, memory_limit }),
        "validate" => Some(Command::Validate { path, memory_limit }),
        _ => None,
    }
}

/// A scenario ready for the engine: compiled, with the fidelity to run it at and its stop time (ps).
pub struct Prepared {
    pub compiled: Compiled,
    pub flow: bool,
    pub stop_ps: Option<u64>,
}

/// Read and check the scenario file as Python's `load_scenario` does (the row form when it is small, else
/// the header and the workload columns).
pub fn load(path: &str) -> Result<Scenario, Decline> {
    if path.ends_with(".json") {
        return Err(Decline::unsupported("a .json scenario is read by Python"));
    }
    if path.ends_with(".yml") || path.ends_with(".yaml") {
        return Err(Decline::unsupported("an ASTRA-sim network configuration is read by Python"));
    }
    let bytes = std::fs::read(path).map_err(|e| Decline::unsupported(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| Decline::new(format!("cannot read: {}", utf8_error(e.as_bytes(), e.utf8_error()))))?;
    Scenario::parse_at(&text, std::path::Path::new(path).parent())
}

/// Python's `UnicodeDecodeError` text for `bytes` ("'utf-8' codec can't decode byte 0xff in position 31: invalid
/// start byte").
fn utf8_error(bytes: &[u8], e: std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    let byte = bytes.get(at).copied().unwrap_or(0);
    let why = match e.error_len() {
        None => "unexpected end of data",
        Some(_) if matches!(byte, 0x80..=0xc1 | 0xf5..=0xff) => "invalid start byte",
        Some(_) => "invalid continuation byte",
    };
    format!("'utf-8' codec can't decode byte 0x{byte:02x} in position {at}: {why}")
}

/// The wire header, the full row-form wire (small scenarios only) and the workload columns of `sc`, as
/// Python's `Scenario.header()`, `Scenario.to_wire()` and `scenario.workload().columns()`.
pub struct Wire {
    pub header: serde_json::Value,
    pub rows: Option<serde_json::Value>,
    pub workload: Option<Workload>,
}

/// Check a scenario document as Python holds it (JSON; `base` the folder a `graph` file is relative to) as
/// `load` and `wire_of` check a file: Ok, or the decline (invalid, warning, unsupported).
pub fn check_json(text: &str, base: Option<&std::path::Path>) -> Result<(), Decline> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| Decline::unsupported(format!("JSON: {e}")))?;
    wire_of(&Scenario::from_json(&doc, base)?).map(|_| ())
}

/// The wire of a scenario document as Python holds it (JSON text; `base` the folder a `graph` file is relative
/// to), for Python's `Scenario.header()` (`rows` false: the header, whose workload travels as columns) and
/// `Scenario.to_wire()` (`rows` true: the row form, messages and barriers included). Implausible values are taken
/// as written when `quiet` (the document was judged when it was loaded, and its warnings said then); otherwise
/// the first is a warning decline.
pub fn wire_json(text: &str, base: Option<&std::path::Path>, rows: bool, quiet: bool) -> Result<String, Decline> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| Decline::invalid("", format!("JSON: {e}")))?;
    let read = || Ok(wire::to_wire(&Scenario::from_json(&doc, base)?, rows)?.to_string());
    if quiet {
        super::units::quietly(read)
    } else {
        read()
    }
}

/// The workload columns of a scenario document (JSON, as `wire_json` takes it): its own `[[messages]]`,
/// `[[barriers]]`, `[[compute]]`, `[[collectives]]` and `[streams]` lowered with every name resolved (None when it
/// has none), as Python's `Scenario.workload()` starts from. Implausible values are taken as written.
pub fn columns_json(text: &str, base: Option<&std::path::Path>) -> Result<Option<Workload>, Decline> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| Decline::invalid("", format!("JSON: {e}")))?;
    super::units::quietly(|| {
        let sc = Scenario::from_json(&doc, base)?;
        let resolved = wire::Resolved::new(&sc.network, sc.topology_kind)?;
        lower::workload(&sc, &resolved)
    })
}

/// The network of a `[topology]` table given as JSON (`base` as for `wire_json`), as Python's `Network` holds it:
/// `{"nodes": [{name, kind, latency, model, input_buffer, arbiter}], "links": [{a, b, rate, delay, weight}],
/// "policy": null or the family's routing policy with node names}` (latency and delay in ps, rates in bit/s,
/// buffers in bytes). Errors name `topology.<key>`. Unless `quiet`, the first implausible rate or size is a
/// warning decline (a builder function's arguments, judged here for the first time).
pub fn network_json(text: &str, base: Option<&std::path::Path>, quiet: bool) -> Result<String, Decline> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| Decline::invalid("topology", format!("JSON: {e}")))?;
    let v = toml::Value::try_from(super::keys::strip_nulls(doc))
        .map_err(|e| Decline::invalid("topology", format!("a value a scenario cannot hold: {e}")))?;
    let (_, net) = if quiet { super::units::quietly(|| super::topology::build(&v, base))? } else { super::topology::build(&v, base)? };
    Ok(super::topology::network_value(&net).to_string())
}

/// The fabric document of an ASTRA-sim network configuration (`astra::fabric`: YAML, or JSON when `json`) as JSON
/// text; errors name the configuration's key (`npus_count[1]: ...`, or `line 3: YAML syntax error: ...`).
pub fn astra_json(text: &str, json: bool) -> Result<String, Decline> {
    super::astra::fabric(text, json).map(|v| v.to_string())
}

/// The implausible values of a scenario document (JSON, as `check_json` takes it): the first three as their
/// warnings (the graph file a value is in, if any; "topology.host_rate = 100 means 100 bit/s, below ..."), and
/// how many it has in all. Each warning is found by reading the document again past the ones before it, so this
/// costs up to five reads, and is asked only of a document `check_json` found a warning in.
pub fn warnings_json(text: &str, base: Option<&std::path::Path>) -> Result<String, Decline> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| Decline::invalid("", format!("JSON: {e}")))?;
    let read = || Scenario::from_json(&doc, base).and_then(|sc| wire_of(&sc).map(|_| ()));
    let mut said = Vec::new();
    for skip in 0..3 {
        match super::units::passing(skip, read).0 {
            Err(d) if d.kind == super::DeclineKind::Warning => said.push(serde_json::json!({"file": d.file, "text": d.text})),
            _ => break,
        }
    }
    let total = if said.len() < 3 { said.len() as u64 } else { super::units::passing(u64::MAX, read).1 };
    Ok(serde_json::json!({"said": said, "total": total}).to_string())
}

pub fn wire_of(sc: &Scenario) -> Result<Wire, Decline> {
    // Python checks a small scenario in its row form first (`Scenario.check`), so a file with several problems
    // is reported by the same first one.
    let rows = if sc.row_form() { Some(wire::to_wire(sc, true)?) } else { None };
    let header = wire::to_wire(sc, false)?;
    let resolved = wire::Resolved::new(&sc.network, sc.topology_kind)?;
    let workload = lower::workload(sc, &resolved)?;
    Ok(Wire { header, rows, workload })
}

fn fidelity_of(sc: &Scenario, over: Option<&'static str>) -> Result<bool, Decline> {
    let fidelity = over.unwrap_or(sc.fidelity);
    if fidelity == "hybrid" {
        return Err(Decline::unsupported("fidelity = \"hybrid\" is run by Python"));
    }
    let flow = fidelity == "flow";
    if flow && sc.transport == "rdma" {
        return Err(Decline::unsupported("the RDMA transport at flow fidelity: checked by Python's engine.run"));
    }
    if flow && sc.measure.queue_interval.is_some() {
        return Err(Decline::unsupported("queue sampling at flow fidelity: Python warns when it runs"));
    }
    Ok(flow)
}

fn spec_of(v: serde_json::Value) -> Result<RunSpec, Decline> {
    serde_json::from_value(v).map_err(|e| Decline::unsupported(format!("wire spec: {e}")))
}

/// `fabricsim run`: the compiled scenario (header and columns, the seed overridden), as `engine.run`.
pub fn prepare_run(path: &str, seed: Option<u64>, fidelity: Option<&'static str>) -> Result<Prepared, Decline> {
    let mut sc = load(path)?;
    let flow = fidelity_of(&sc, fidelity)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    let w = wire_of(&sc)?;
    let compiled = compile(spec_of(w.header)?, w.workload.unwrap_or_default()).map_err(|e| Decline::unsupported(format!("engine: {e}")))?;
    Ok(Prepared { compiled, flow, stop_ps: sc.stop })
}

/// `fabricsim validate`: the compiled scenario as `engine.validate` checks it (the row form when small).
pub fn prepare_validate(path: &str) -> Result<Prepared, Decline> {
    let sc = load(path)?;
    let flow = fidelity_of(&sc, None)?;
    let w = wire_of(&sc)?;
    let compiled = match w.rows {
        Some(rows) => compile(spec_of(rows)?, Workload::default()),
        None => compile(spec_of(w.header)?, w.workload.unwrap_or_default()),
    }
    .map_err(|e| Decline::unsupported(format!("engine: {e}")))?;
    Ok(Prepared { compiled, flow, stop_ps: sc.stop })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn argv_shapes() {
        assert_eq!(
            parse_argv(&argv("run a.toml --json")),
            Some(Command::Run { path: "a.toml".into(), seed: None, fidelity: None, quiet: false, memory_limit: None })
        );
        assert_eq!(
            parse_argv(&argv("run --seed=7 a.toml --fidelity flow --json -q --memory-limit 2GiB")),
            Some(Command::Run { path: "a.toml".into(), seed: Some(7), fidelity: Some("flow"), quiet: true, memory_limit: Some(2 << 30) })
        );
        assert_eq!(parse_argv(&argv("validate a.toml")), Some(Command::Validate { path: "a.toml".into(), memory_limit: None }));
        assert_eq!(
            parse_argv(&argv("validate --memory-limit=500MB a.toml")),
            Some(Command::Validate { path: "a.toml".into(), memory_limit: Some(500_000_000) })
        );
        for other in [
            "run a.toml",
            "run a.toml --json --partial",
            "run a.toml --json --seed -3",
            "run a.toml b.toml --json",
            "validate a.toml --json",
            "run a.toml --json --json",
            "run --json",
            "topology a.toml",
            "run a.toml --json -q -q",
            "run a.toml --json --figure x.png",
            "run a.toml --json --max-events 5",
            "run a.toml --json --",
            "validate a.toml --memory-limit lots",
            "validate a.toml --memory-limit 1GB --memory-limit 2GB",
        ] {
            assert_eq!(parse_argv(&argv(other)), None, "{other}");
        }
    }
}
