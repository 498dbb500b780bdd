//! The memory budget: what a scenario will take, estimated from its parameters before anything is built, against a limit (`--memory-limit`, `FABRICSIM_MEMORY_LIMIT`, else the available memory, else 8 GiB).
//!
//! Four things grow with a scenario's numbers rather than with its file: the fabric (nodes, links and the
//! forwarding tables over them), the workload's messages (a collective's expansion), the throughput bins
//! (`measure.throughput_interval`: one per interval of simulated time) and the queue samples
//! (`measure.queue_interval`: one row per sampled port per interval). Each is estimated from the spec alone,
//! in O(parameters) or O(rows), before anything of that size is allocated: the topology families from their
//! parameters (`fabric`), the scenario reader before it expands a collective (`messages`), and `compile` over
//! the whole run (`run`), which also hands the engines the bins and sample rows left within the budget
//! (`Limits`), so a run whose length was not known beforehand stops with a named error instead of aborting
//! on an allocation. A refusal is one `field: reason` naming the key, the estimate and the budget.
//!
//! The per-item costs are calibrated: peak resident memory of `fabricsim validate` and `fabricsim run` (the
//! Python front door, the heavier one) measured on this repository's build for fabrics and all-to-alls of
//! several sizes, the slope of a least-squares line (docs/guide/large-workloads.md, "Memory budget", has the
//! table). They are estimates of the marginal cost, not bounds: a run within the budget may still take some
//! more than estimated, and the process itself (Python, numpy) takes about 100 MB besides.

use crate::error::{Error, Result};
use crate::spec::{NodeKind, RunSpec};
use crate::workload::collectives::volume;
use crate::workload::Workload;
use std::cell::Cell;

/// The environment variable that sets the budget when no `--memory-limit` is given ("8GiB", "500MB", bytes).
pub const ENV: &str = "FABRICSIM_MEMORY_LIMIT";
/// The budget when neither the flag, the variable nor /proc/meminfo says one (8 GiB).
pub const FALLBACK_BYTES: u64 = 8 << 30;

/// Calibrated: resident bytes per node or link of a fabric, its forwarding tables and its Python copies
/// included (fat_tree3 k = 8…40: 2.8–2.9 kB per node plus link, validate and run alike; rounded up).
pub const ELEMENT_BYTES: u64 = 3_000;
/// Calibrated: resident bytes per message of a run (workload columns in Python and Rust, dependencies, the
/// DAG, flow routes, per-flow statistics and the record's flow columns). All-to-alls of 4k…1M messages took
/// 212 B per message to validate, 515 B to run at packet fidelity and 759 B at flow fidelity; this is the
/// largest, rounded up, so `validate` says whether either run fits.
pub const MESSAGE_BYTES: u64 = 800;
/// Resident bytes per throughput bin: a u64 in the engine, its copy in the record and in Python (exact: 3 × 8).
pub const BIN_BYTES: u64 = 24;
/// Resident bytes per queue-sample row: time (8), port (4), packets (8), bytes (8) in the engine, the record
/// and Python (exact: 3 × 28).
pub const SAMPLE_BYTES: u64 = 84;

/// Where the limit came from, for the refusal's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `--memory-limit` on the command line (or `with_limit` from an API).
    Given,
    /// The `FABRICSIM_MEMORY_LIMIT` environment variable.
    Env,
    /// MemAvailable of /proc/meminfo.
    Available,
    /// Neither: `FALLBACK_BYTES`.
    Fallback,
}

/// The memory budget of one run, in bytes, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    pub source: Source,
}

impl Limit {
    /// "the memory budget of 8 GiB (--memory-limit)" and the like.
    pub fn said(&self) -> String {
        let how = match self.source {
            Source::Given => "--memory-limit".to_string(),
            Source::Env => format!("--memory-limit or {ENV}"),
            Source::Available => "the available memory; set --memory-limit or FABRICSIM_MEMORY_LIMIT to change it".to_string(),
            Source::Fallback => "the default; set --memory-limit or FABRICSIM_MEMORY_LIMIT to change it".to_string(),
        };
        format!("the memory budget of {} ({how})", human(self.bytes))
    }
}

thread_local! {
    /// The limit `with_limit` set for the calls it makes (None: the environment's).
    static GIVEN: Cell<Option<u64>> = const { Cell::new(None) };
}

/// `f()` with the budget `limit` bytes (None: as the environment says); restored afterwards.
pub fn with_limit<T>(limit: Option<u64>, f: impl FnOnce() -> T) -> T {
    let before = GIVEN.with(|g| g.replace(limit.or(GIVEN.with(Cell::get))));
    let out = f();
    GIVEN.with(|g| g.set(before));
    out
}

/// A memory size as the user writes one: "8GiB", "500MB", "1.5 GB", or bytes ("1000000"); more than 0.
pub fn parse_limit(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let v = match t.parse::<u64>() {
        Ok(n) => toml::Value::Integer(i64::try_from(n).map_err(|_| format!("{t} is too large"))?),
        Err(_) => toml::Value::String(t.replace(' ', "")),
    };
    match crate::scenario::units::size_bytes(&v) {
        Ok(0) => Err(format!("{t:?} is no memory: give a size above 0 such as \"8GiB\" or \"500MB\"")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{t:?} is not a memory size: give one such as \"8GiB\", \"500MB\" or a number of bytes")),
    }
}

/// The memory this process may still take, when Linux says: MemAvailable of /proc/meminfo, or less when the
/// process's cgroup (v2) has a limit (`memory.max` − `memory.current`, as in a container) or the process an
/// address-space limit (`ulimit -v`, of which the process already maps some: a loose cap).
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let free = kb.saturating_mul(1024);
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok().and_then(|t| t.trim().parse::<u64>().ok());
    let free = match (read("memory.max"), read("memory.current")) {
        (Some(max), Some(used)) => free.min(max.saturating_sub(used)),
        _ => free,
    };
    // An address-space limit (`ulimit -v`) caps what can be mapped at all.
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let address_space = limits.lines().find(|l| l.starts_with("Max address space")).and_then(|l| l.split_whitespace().nth(3)?.parse::<u64>().ok());
    Some(address_space.map_or(free, |a| free.min(a)))
}

/// The budget in force: `with_limit`'s, else `FABRICSIM_MEMORY_LIMIT`, else the available memory, else
/// `FALLBACK_BYTES`. A malformed variable is an error naming it.
pub fn limit() -> Result<Limit> {
    if let Some(bytes) = GIVEN.with(Cell::get) {
        return Ok(Limit { bytes, source: Source::Given });
    }
    if let Ok(text) = std::env::var(ENV) {
        if !text.trim().is_empty() {
            let bytes = parse_limit(&text).map_err(|why| Error::spec(ENV, why))?;
            return Ok(Limit { bytes, source: Source::Env });
        }
    }
    Ok(match available() {
        Some(bytes) => Limit { bytes, source: Source::Available },
        None => Limit { bytes: FALLBACK_BYTES, source: Source::Fallback },
    })
}

/// `bytes` for people: "358 kB" below 1 MB, "512 MB" below 1 GiB (decimal, rounded up), else "8.0 GiB",
/// "1,118 GiB", "3.4e12 GiB".
pub fn human(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if bytes < 1_000_000 {
        format!("{} kB", (bytes as f64 / 1e3).ceil() as u64)
    } else if gib < 1.0 {
        format!("{} MB", (bytes as f64 / 1e6).ceil() as u64)
    } else if gib < 10.0 {
        format!("{:.1} GiB", gib)
    } else if gib < 1e6 {
        format!("{} GiB", crate::record_json::thousands(gib.round() as u64))
    } else {
        format!("{gib:.1e} GiB")
    }
}

/// A count for people (saturated products: "more than 18 quintillion").
pub fn count(n: u64) -> String {
    if n == u64::MAX {
        "more than 18 quintillion".to_string()
    } else {
        crate::record_json::thousands(n)
    }
}

/// Ok when `bytes` (the estimate of `what`) fits the budget, else the refusal at `key`: "KEY: WHAT would take
/// about X, beyond the memory budget of Y (…)".
pub fn fits(key: &str, what: &str, bytes: u64, hint: &str) -> Result<()> {
    let lim = limit()?;
    if bytes <= lim.bytes {
        return Ok(());
    }
    Err(Error::spec(key, format!("{what} would take about {}, beyond {}{hint}", human(bytes), lim.said())))
}

/// The fabric of `nodes` and `links` (a family's count from its parameters, before it builds anything).
pub fn fabric(nodes: u64, links: u64) -> Result<()> {
    let elements = nodes.saturating_add(links);
    fits(
        "topology",
        &format!("{} nodes and {} links", count(nodes), count(links)),
        elements.saturating_mul(ELEMENT_BYTES),
        "; give a smaller fabric or a larger budget",
    )
}

/// A workload of `msgs` messages, `key` the row that makes the most of them (before it is expanded).
pub fn messages(key: &str, msgs: u64) -> Result<()> {
    fits(key, &format!("{} messages", count(msgs)), msgs.saturating_mul(MESSAGE_BYTES), "; give fewer ranks or chunks, or a larger budget")
}

/// What the engines may still allocate for a run whose length was not known when it was estimated: the
/// throughput bins and queue-sample rows left within the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_bins: u64,
    pub max_sample_rows: u64,
    pub budget: Limit,
}

impl Default for Limits {
    /// No limit (tests and tools that build a `Compiled` by hand).
    fn default() -> Self {
        Limits { max_bins: u64::MAX, max_sample_rows: u64::MAX, budget: Limit { bytes: u64::MAX, source: Source::Fallback } }
    }
}

/// The run's estimate, item by item: (key as the user writes it, what, bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub items: Vec<(String, String, u64)>,
    /// A lower bound of the run's simulated length (ps): the stop time, or the time its last start or
    /// network event comes, or its bytes over every host link at once, whichever is latest (the stop time
    /// caps it).
    pub min_length_ps: u64,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.items.iter().fold(0u64, |s, i| s.saturating_add(i.2))
    }
}

/// The estimate of running `spec` with the workload `columns` (besides the spec's own rows and collectives),
/// before anything is compiled. O(nodes + links + rows + collectives' ranks).
pub fn estimate(spec: &RunSpec, columns: &Workload) -> Result<Estimate> {
    let mut est = Estimate::default();
    let (nodes, links) = (spec.network.nodes.len() as u64, spec.network.links.len() as u64);
    est.items.push(("topology".into(), format!("{} nodes and {} links", count(nodes), count(links)), (nodes + links).saturating_mul(ELEMENT_BYTES)));
    // Messages: rows, columns, then each collective's expansion, counted without expanding it.
    let mut msgs = spec.messages.len() as u64 + columns.n_msgs() as u64;
    let mut bytes: u64 = spec.messages.iter().map(|m| m.size_bytes).fold(0, u64::saturating_add);
    bytes = columns.size.iter().copied().fold(bytes, u64::saturating_add);
    let mut latest = spec.messages.iter().map(|m| m.start_ps).chain(columns.start_ps.iter().copied()).max().unwrap_or(0);
    let mut biggest = ("messages".to_string(), msgs);
    for (i, c) in spec.collectives.iter().enumerate() {
        let (m, b) = volume(c, i)?;
        msgs = msgs.saturating_add(m);
        bytes = bytes.saturating_add(b);
        latest = latest.max(c.start_ps);
        if m > biggest.1 {
            biggest = (format!("collectives[{i}]"), m);
        }
    }
    // An RDMA run has an ACK flow per message; a UEC run has one too, and a sender's and a receiver's state
    // (window, send-record ring, retransmission queue, receive bitmap, spraying state: about 500 B at rest).
    let per_msg = if spec.rdma.is_some() {
        2 * MESSAGE_BYTES
    } else if spec.uec.is_some() {
        3 * MESSAGE_BYTES
    } else {
        MESSAGE_BYTES
    };
    est.items.push((biggest.0, format!("{} messages", count(msgs)), msgs.saturating_mul(per_msg)));
    latest = spec.events.iter().map(|e| e.at_ps).fold(latest, u64::max);
    latest = spec.sources.iter().map(|s| s.start_ps).fold(latest, u64::max);
    // Every host link sending at once is the fastest the bytes can leave (a lower bound of the length).
    let host = |v: u32| spec.network.nodes.get(v as usize).is_some_and(|n| n.kind == NodeKind::Host);
    let capacity_bps: u128 = spec.network.links.iter().filter(|l| host(l.a) || host(l.b)).map(|l| l.rate_bps as u128).sum();
    let drain_ps = (bytes as u128 * 8 * 1_000_000_000_000).checked_div(capacity_bps).map_or(0, |t| t.min(u64::MAX as u128) as u64);
    let mut length = latest.max(drain_ps);
    if let Some(stop) = spec.stop_ps {
        length = length.min(stop);
    }
    est.min_length_ps = length;
    if let Some(bin) = spec.measure.throughput_bin_ps.filter(|&b| b > 0) {
        let bins = length / bin + 1;
        est.items.push(("measure.throughput_interval".into(), format!("{} throughput bins", count(bins)), bins.saturating_mul(BIN_BYTES)));
    }
    if let Some(every) = spec.measure.queue_sample_ps.filter(|&b| b > 0) {
        let ports = match &spec.measure.sample_ports {
            Some(p) => p.len() as u64,
            None => {
                let switch = |v: u32| spec.network.nodes.get(v as usize).is_some_and(|n| n.kind == NodeKind::Switch);
                spec.network.links.iter().map(|l| switch(l.a) as u64 + switch(l.b) as u64).sum()
            }
        };
        let rows = (length / every).saturating_mul(ports);
        est.items.push((
            "measure.queue_interval".into(),
            format!("{} queue-sample rows ({} ports)", count(rows), count(ports)),
            rows.saturating_mul(SAMPLE_BYTES),
        ));
    }
    Ok(est)
}

/// Refuse `spec` (with `columns`) when its estimate exceeds the budget, naming the largest item; else the
/// bins and sample rows the engines may still allocate (what the budget leaves after the rest).
pub fn run(spec: &RunSpec, columns: &Workload) -> Result<Limits> {
    let est = estimate(spec, columns)?;
    let lim = limit()?;
    let total = est.total();
    if total > lim.bytes {
        let (key, what, bytes) = est.items.iter().max_by_key(|i| i.2).expect("an estimate has its topology item");
        let rest = if human(*bytes) != human(total) { format!(" ({} with the rest of the run)", human(total)) } else { String::new() };
        let hint = match key.as_str() {
            "measure.throughput_interval" => "; raise the interval or set a stop time",
            "measure.queue_interval" => "; raise the interval, sample fewer queues or set a stop time",
            "topology" => "; give a smaller fabric or a larger budget",
            _ => "; give fewer ranks or chunks, or a larger budget",
        };
        let length = if key.starts_with("measure.") {
            format!(" over at least {} s", crate::record_json::py_g6(est.min_length_ps as f64 * 1e-12))
        } else {
            String::new()
        };
        return Err(Error::spec(key, format!("{what}{length} would take about {}{rest}, beyond {}{hint}", human(*bytes), lim.said())));
    }
    let left = lim.bytes - total;
    Ok(Limits { max_bins: left / BIN_BYTES, max_sample_rows: left / SAMPLE_BYTES, budget: lim })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_as_users_write_them() {
        assert_eq!(parse_limit("8GiB"), Ok(8 << 30));
        assert_eq!(parse_limit("500MB"), Ok(500_000_000));
        assert_eq!(parse_limit("1.5 GB"), Ok(1_500_000_000));
        assert_eq!(parse_limit("1000000"), Ok(1_000_000));
        assert!(parse_limit("0").unwrap_err().contains("is no memory"));
        assert!(parse_limit("lots").unwrap_err().contains("not a memory size"));
        assert!(parse_limit("-5GB").is_err());
    }

    #[test]
    fn a_given_limit_wins_and_is_restored() {
        let inner = with_limit(Some(1234), || limit().unwrap());
        assert_eq!(inner, Limit { bytes: 1234, source: Source::Given });
        assert_eq!(with_limit(Some(5), || with_limit(None, || limit().unwrap().bytes)), 5);
        assert_ne!(limit().unwrap().source, Source::Given);
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human(500_000_000), "500 MB");
        assert_eq!(human(357_824), "358 kB");
        assert_eq!(human(8 << 30), "8.0 GiB");
        assert_eq!(human(1118 << 30), "1,118 GiB");
        assert_eq!(count(u64::MAX), "more than 18 quintillion");
    }
}
