//! The native front door: a scenario TOML read with the user's key names and units into the wire spec and workload columns, exactly as Python's `fabricsim.spec` makes them.
//!
//! Contract: `Scenario::parse` either yields values identical to what the Python models validate, or a
//! `Decline` naming why this port is not sure (an unknown key, an unsupported feature, anything Python
//! would reject or warn about). A decline is never an error to the user: the caller hands the command to
//! the Python front door, which gives the one true answer and message. Modules: `units` (quantities),
//! `read` (strict typed reading), `topology` (one file per family), `wire` (the RunSpec JSON, as
//! `_to_wire`), `lower` (the workload columns, as `fabricsim.Workload.add_rows`), `cli` (the commands).

pub mod cli;
pub mod hybrid;
pub mod keys;
pub mod lower;
pub mod read;
pub mod roce;
pub mod topology;
pub mod units;
pub mod wire;

use read::Tab;
use toml::Value;

/// Why the native front door hands a scenario or command to Python; the text is for tests and debugging.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decline(pub String);

impl Decline {
    pub fn new(why: impl Into<String>) -> Decline {
        Decline(why.into())
    }

    /// As a spec error: (field, reason) split at the first ": " after a field path (no blanks), else the
    /// whole text as the reason of field "scenario".
    pub fn into_error(self) -> crate::error::Error {
        match self.0.split_once(": ") {
            Some((field, reason)) if !field.is_empty() && !field.contains(' ') => crate::error::Error::spec(field, reason),
            _ => crate::error::Error::spec("scenario", self.0),
        }
    }

    /// The same decline with `at` (a field path) in front, unless it names one already.
    pub fn within(self, at: &str) -> Decline {
        if self.0.starts_with(at) {
            self
        } else {
            Decline(format!("{at}: {}", self.0))
        }
    }
}

/// An egress queue (`QueueDef`): limits (None = unlimited) and an optional discipline as its wire object.
#[derive(Clone, Debug)]
pub struct Queue {
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    pub qdisc: Option<serde_json::Value>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue { limit_packets: Some(100), limit_bytes: None, qdisc: None }
    }
}

/// A `[[ports]]` override.
#[derive(Clone, Debug)]
pub struct Port {
    pub node: String,
    pub peer: String,
    pub queue: Option<Queue>,
    pub rate_cap: Option<u64>,
    pub drop_packets: Vec<u64>,
}

/// `[routing]`.
#[derive(Clone, Debug)]
pub struct Routing {
    pub ecmp: &'static str,
    pub flowlet_gap: Option<u64>,
    pub detection_delay: u64,
}

/// A `[[sources]]` UDP source.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: Option<String>,
    pub kind: &'static str,
    pub src: String,
    pub dst: String,
    pub src_nic: u64,
    pub dst_nic: u64,
    pub rate: u64,
    pub packet_size: u64,
    pub header: u64,
    pub on: Option<u64>,
    pub off: Option<u64>,
    pub start: u64,
    pub stop: Option<u64>,
    pub max_bytes: Option<u64>,
    pub path: Option<Vec<String>>,
}

/// A `[[messages]]` row.
#[derive(Clone, Debug)]
pub struct Message {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub src_nic: u64,
    pub dst_nic: u64,
    pub size: u64,
    pub packet_size: u64,
    pub header: u64,
    pub start: u64,
    pub after: Vec<String>,
    pub after_sent: Vec<String>,
    pub delay: u64,
    pub path: Option<Vec<String>>,
}

/// A `[[barriers]]` row.
#[derive(Clone, Debug)]
pub struct Barrier {
    pub name: String,
    pub after: Vec<String>,
}

/// A `[[compute]]` step.
#[derive(Clone, Debug)]
pub struct Compute {
    pub name: Option<String>,
    pub host: String,
    pub duration: u64,
    pub after: Vec<String>,
}

/// A collective's ranks: every host's NIC 0, or (host, NIC) endpoints.
#[derive(Clone, Debug)]
pub enum Ranks {
    All,
    List(Vec<(String, u64)>),
}

/// A `[[collectives]]` row.
#[derive(Clone, Debug)]
pub struct Collective {
    pub name: Option<String>,
    pub kind: &'static str,
    pub algorithm: Option<&'static str>,
    pub ranks: Ranks,
    pub size: u64,
    pub packet_size: u64,
    pub header: u64,
    pub chunks: u64,
    pub order: Option<&'static str>,
    pub ag_order: Option<&'static str>,
    pub barrier: bool,
    pub root: u64,
    pub start: u64,
    pub after: Vec<String>,
    pub local: u64,
    pub inter: &'static str,
}

/// A `[[tcp]]` connection (every field, defaults applied).
#[derive(Clone, Debug)]
pub struct Tcp {
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    pub src_nic: u64,
    pub dst_nic: u64,
    pub cc: &'static str,
    pub start: u64,
    pub stop: Option<u64>,
    pub max_bytes: Option<u64>,
    pub mss: u64,
    pub header: u64,
    pub initial_cwnd: u64,
    pub min_rto: u64,
    pub initial_rto: u64,
    pub clock_granularity: u64,
    pub delack_count: u64,
    pub delack_timeout: u64,
    pub rcv_buf: u64,
    pub snd_buf: u64,
    pub app_write: u64,
    pub dupack_threshold: u64,
    pub sack: bool,
    pub path: Option<Vec<String>>,
}

/// `[measure]`.
#[derive(Clone, Debug, Default)]
pub struct Measure {
    pub queue_interval: Option<u64>,
    pub queues: Option<Vec<String>>,
    pub throughput_interval: Option<u64>,
}

/// An `[[events]]` network change.
#[derive(Clone, Debug)]
pub struct NetEvent {
    pub at: u64,
    pub kind: &'static str,
    pub link: Option<Vec<String>>,
    pub node: Option<String>,
    pub ber: f64,
}

/// A whole scenario, validated as far as the Python models validate at load, with its built network.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub seed: u64,
    pub stop: Option<u64>,
    pub fidelity: &'static str,
    pub topology_kind: &'static str,
    pub network: topology::Network,
    pub queue: Queue,
    pub ports: Vec<Port>,
    pub routing: Routing,
    pub sources: Vec<Source>,
    pub messages: Vec<Message>,
    pub tcp: Vec<Tcp>,
    pub barriers: Vec<Barrier>,
    pub compute: Vec<Compute>,
    pub collectives: Vec<Collective>,
    /// `[streams]` in file order: host name, concurrent compute steps.
    pub streams: Vec<(String, u64)>,
    pub measure: Measure,
    pub events: Vec<NetEvent>,
    /// "message" or "rdma".
    pub transport: &'static str,
    /// The RoCE wire objects the scenario has (`roce_wire`): `pfc`, `ecn`, and `rdma` with the RDMA transport.
    pub pfc: Option<serde_json::Value>,
    pub ecn: Option<serde_json::Value>,
    pub rdma: Option<serde_json::Value>,
    /// `[hybrid]` as its wire object (`hybrid::hybrid`).
    pub hybrid: Option<serde_json::Value>,
}

/// Most message and barrier rows a scenario may have and still be checked in its row form (Python's
/// `ROW_FORM_MAX`).
pub const ROW_FORM_MAX: usize = 1000;

/// Decline the TOML 1.1 forms the `toml` crate reads but Python's `tomllib` (TOML 1.0) rejects: a newline,
/// a comment or a trailing comma inside an inline table, and the `\x` and `\e` escapes of basic strings.
/// Conservative: a newline inside an array inside an inline table (valid 1.0) declines too. O(text).
fn toml10(text: &str) -> Result<(), Decline> {
    let b = text.as_bytes();
    let no = |why: &str| Err(Decline::new(format!("TOML: {why} (TOML 1.1; Python reads 1.0)")));
    let (mut i, mut depth, mut last) = (0usize, 0usize, b' ');
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            if depth > 0 {
                return no("a comment inside an inline table");
            }
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'"' || c == b'\'' {
            let triple = b[i..].starts_with(if c == b'"' { b"\"\"\"" } else { b"'''" });
            let quote: &[u8] = if triple { &b[i..i + 3] } else { &b[i..i + 1] };
            i += quote.len();
            loop {
                if i >= b.len() {
                    return no("an unterminated string");
                }
                if c == b'"' && b[i] == b'\\' {
                    if matches!(b.get(i + 1), Some(b'x') | Some(b'e')) {
                        return no("a \\x or \\e escape");
                    }
                    i += 2;
                    continue;
                }
                if b[i..].starts_with(quote) {
                    i += quote.len();
                    break;
                }
                if b[i] == b'\n' && (depth > 0 || !triple) {
                    return no("a newline in a one-line string or an inline table");
                }
                i += 1;
            }
            last = c;
            continue;
        }
        match c {
            b'{' => depth += 1,
            b'}' if depth > 0 => {
                if last == b',' {
                    return no("a trailing comma in an inline table");
                }
                depth -= 1;
            }
            b'\n' if depth > 0 => return no("a newline inside an inline table"),
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last = c;
        }
        i += 1;
    }
    Ok(())
}

fn list<'a, T>(v: &'a Value, at: &str, f: impl Fn(Tab<'a>) -> Result<T, Decline>) -> Result<Vec<T>, Decline> {
    read::tables(v, at)?.into_iter().map(f).collect()
}

fn queue(v: &Value, at: &str) -> Result<Queue, Decline> {
    let mut t = Tab::of(v, at)?;
    let q = Queue {
        limit_packets: t.or("limit_packets", Some(100), read::count_or_unlimited)?,
        limit_bytes: t.or("limit_bytes", None, read::size_or_unlimited)?,
        qdisc: t.opt("qdisc", |v| qdisc(v, &format!("{at}.qdisc")))?,
    };
    t.finish()?;
    Ok(q)
}

/// A queue discipline's wire object (`FifoQdisc`, `CodelQdisc`, `FqCodelQdisc` `.wire()`).
fn qdisc(v: &Value, at: &str) -> Result<serde_json::Value, Decline> {
    use serde_json::json;
    let mut t = Tab::of(v, at)?;
    let kind = t.req("kind", read::literal(&["fifo", "codel", "fq_codel"]))?;
    let w = match kind {
        "fifo" => json!({
            "kind": "fifo",
            "limit_packets": t.or("limit_packets", Some(100), read::count_or_unlimited)?,
            "limit_bytes": t.or("limit_bytes", None, read::size_or_unlimited)?,
        }),
        "codel" => json!({
            "kind": "codel",
            "limit_packets": t.or("limit_packets", 1500, read::pos_int)?,
            "target_ps": t.or("target", 5_000_000_000, read::pos_duration)?,
            "interval_ps": t.or("interval", 100_000_000_000, read::pos_duration)?,
            "min_bytes": t.or("min_bytes", 1500, read::nonneg_int)?,
        }),
        _ => json!({
            "kind": "fq_codel",
            "limit_packets": t.or("limit_packets", 10240, read::pos_int)?,
            "flows": t.or("flows", 1024, read::pos_int)?,
            "quantum_bytes": t.or("quantum", 1514, read::pos_size)?,
            "target_ps": t.or("target", 5_000_000_000, read::pos_duration)?,
            "interval_ps": t.or("interval", 100_000_000_000, read::pos_duration)?,
            "min_bytes": t.or("min_bytes", 1500, read::nonneg_int)?,
            "drop_batch": t.or("drop_batch", 64, read::pos_int)?,
        }),
    };
    t.finish()?;
    Ok(w)
}

fn port(mut t: Tab) -> Result<Port, Decline> {
    let at = t.at.clone();
    let p = Port {
        node: t.req("node", read::name)?,
        peer: t.req("peer", read::name)?,
        queue: t.opt("queue", |v| queue(v, &format!("{at}.queue")))?,
        rate_cap: t.opt("rate_cap", read::link_rate)?,
        drop_packets: t.or("drop_packets", Vec::new(), |v| match v {
            Value::Array(a) => a.iter().map(read::nonneg_int).collect(),
            _ => Err(Decline::new("expected a list")),
        })?,
    };
    t.finish()?;
    Ok(p)
}

fn source(mut t: Tab) -> Result<Source, Decline> {
    let s = Source {
        name: t.opt("name", read::name)?,
        kind: t.req("kind", read::literal(&["cbr", "onoff"]))?,
        src: t.req("src", read::name)?,
        dst: t.req("dst", read::name)?,
        src_nic: t.or("src_nic", 0, read::nonneg_int)?,
        dst_nic: t.or("dst_nic", 0, read::nonneg_int)?,
        rate: t.req("rate", read::pos_rate)?,
        packet_size: t.or("packet_size", 1024, read::msg_size)?,
        header: t.or("header", 0, read::size)?,
        on: t.opt("on", read::pos_duration)?,
        off: t.opt("off", read::duration)?,
        start: t.or("start", 0, read::duration)?,
        stop: t.opt("stop", read::duration)?,
        max_bytes: t.opt("max_bytes", read::pos_size)?,
        path: t.opt("path", read::names)?,
    };
    t.finish()?;
    Ok(s)
}

fn message(mut t: Tab) -> Result<Message, Decline> {
    let m = Message {
        name: t.req("name", read::name)?,
        src: t.req("src", read::name)?,
        dst: t.req("dst", read::name)?,
        src_nic: t.or("src_nic", 0, read::nonneg_int)?,
        dst_nic: t.or("dst_nic", 0, read::nonneg_int)?,
        size: t.req("size", read::msg_size)?,
        packet_size: t.or("packet_size", 1024, read::msg_size)?,
        header: t.or("header", 0, read::size)?,
        start: t.or("start", 0, read::duration)?,
        after: t.or("after", Vec::new(), read::names)?,
        after_sent: t.or("after_sent", Vec::new(), read::names)?,
        delay: t.or("delay", 0, read::duration)?,
        path: t.opt("path", read::names)?,
    };
    t.finish()?;
    Ok(m)
}

fn barrier(mut t: Tab) -> Result<Barrier, Decline> {
    let b = Barrier { name: t.req("name", read::name)?, after: t.or("after", Vec::new(), read::names)? };
    t.finish()?;
    Ok(b)
}

fn compute(mut t: Tab) -> Result<Compute, Decline> {
    let c = Compute {
        name: t.opt("name", read::name)?,
        host: t.req("host", read::name)?,
        duration: t.req("duration", read::duration)?,
        after: t.or("after", Vec::new(), read::names)?,
    };
    t.finish()?;
    Ok(c)
}

const ORDERS: &[&str] = &["sent", "delivered", "parallel"];

fn collective(mut t: Tab) -> Result<Collective, Decline> {
    let ranks = t.req("ranks", |v| match v {
        Value::String(s) if s == "all" => Ok(Ranks::All),
        Value::Array(a) => a
            .iter()
            .map(|r| match r {
                Value::String(_) => Ok((read::name(r)?, 0)),
                Value::Array(p) if p.len() == 2 => Ok((read::name(&p[0])?, read::nonneg_int(&p[1])?)),
                _ => Err(Decline::new("a rank is a host name or [host, nic]")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Ranks::List),
        _ => Err(Decline::new("ranks: expected \"all\" or a list")),
    })?;
    let c = Collective {
        name: t.opt("name", read::name)?,
        kind: t.req("kind", read::literal(&["all_to_all", "all_gather", "all_reduce", "reduce_scatter", "broadcast", "reduce"]))?,
        algorithm: t.opt("algorithm", read::literal(&["ring", "direct", "halving_doubling", "shift", "hierarchical"]))?,
        ranks,
        size: t.req("size", read::msg_size)?,
        packet_size: t.or("packet_size", 1024, read::msg_size)?,
        header: t.or("header", 0, read::size)?,
        chunks: t.or("chunks", 1, read::pos_int)?,
        order: t.opt("order", read::literal(ORDERS))?,
        ag_order: t.opt("ag_order", read::literal(ORDERS))?,
        barrier: t.or("barrier", false, read::boolean)?,
        root: t.or("root", 0, read::nonneg_int)?,
        start: t.or("start", 0, read::duration)?,
        after: t.or("after", Vec::new(), read::names)?,
        local: t.or("local", 0, read::nonneg_int)?,
        inter: t.or("inter", "ring", read::literal(&["ring", "tree"]))?,
    };
    t.finish()?;
    Ok(c)
}

fn tcp(mut t: Tab) -> Result<Tcp, Decline> {
    let c = Tcp {
        name: t.opt("name", read::name)?,
        src: t.req("src", read::name)?,
        dst: t.req("dst", read::name)?,
        src_nic: t.or("src_nic", 0, read::nonneg_int)?,
        dst_nic: t.or("dst_nic", 0, read::nonneg_int)?,
        cc: t.or("cc", "cubic", read::literal(&["cubic", "newreno"]))?,
        start: t.or("start", 0, read::duration)?,
        stop: t.opt("stop", read::duration)?,
        max_bytes: t.opt("max_bytes", read::pos_size)?,
        mss: t.or("mss", 536, read::msg_size)?,
        header: t.or("header", 54, read::size)?,
        initial_cwnd: t.or("initial_cwnd", 10, read::pos_int)?,
        min_rto: t.or("min_rto", 1_000_000_000_000, read::pos_duration)?,
        initial_rto: t.or("initial_rto", 1_000_000_000_000, read::pos_duration)?,
        clock_granularity: t.or("clock_granularity", 1_000_000_000, read::pos_duration)?,
        delack_count: t.or("delack_count", 2, read::pos_int)?,
        delack_timeout: t.or("delack_timeout", 200_000_000_000, read::pos_duration)?,
        rcv_buf: t.or("rcv_buf", 131_072, read::pos_size)?,
        snd_buf: t.or("snd_buf", 131_072, read::pos_size)?,
        app_write: t.or("app_write", 512, read::pos_size)?,
        dupack_threshold: t.or("dupack_threshold", 3, read::pos_int)?,
        sack: t.or("sack", true, read::boolean)?,
        path: t.opt("path", read::names)?,
    };
    t.finish()?;
    Ok(c)
}

fn event(mut t: Tab) -> Result<NetEvent, Decline> {
    let e = NetEvent {
        at: t.req("at", read::duration)?,
        kind: t.req("kind", read::literal(&["link_down", "link_up", "switch_down", "ber"]))?,
        link: t.opt("link", read::names)?,
        node: t.opt("node", read::name)?,
        ber: t.or("ber", 0.0, read::number)?,
    };
    t.finish()?;
    Ok(e)
}

impl Scenario {
    /// Read a scenario document (TOML text). The `graph` topology declines; so does every value the Python
    /// models reject or warn about.
    pub fn parse(text: &str) -> Result<Scenario, Decline> {
        toml10(text)?;
        let doc: toml::Table = text.parse().map_err(|_| Decline::new("TOML this port cannot read"))?;
        let mut t = Tab::new(&doc, "scenario");
        let transport = t.or("transport", "message", read::literal(&["message", "rdma"]))?;
        let (pfc_v, ecn_v, rdma_v) = (t.get("pfc"), t.get("ecn"), t.get("rdma"));
        let mut roce = roce::tables(transport, pfc_v, ecn_v, rdma_v)?;
        let (pfc, ecn, rdma) = (roce.remove("pfc"), roce.remove("ecn"), roce.remove("rdma"));
        let (topology_kind, network) = t.req("topology", topology::build)?;
        let routing = t.or("routing", None, |v| {
            let mut r = Tab::of(v, "routing")?;
            let out = Routing {
                ecmp: r.or("ecmp", "per_flow", read::literal(&["per_flow", "per_message", "per_packet", "flowlet", "adaptive"]))?,
                flowlet_gap: r.opt("flowlet_gap", read::duration)?,
                detection_delay: r.or("detection_delay", 100_000_000, read::duration)?,
            };
            r.finish()?;
            Ok(Some(out))
        })?;
        let measure = t.or("measure", Measure::default(), |v| {
            let mut m = Tab::of(v, "measure")?;
            let out = Measure {
                queue_interval: m.opt("queue_interval", read::pos_duration)?,
                queues: m.opt("queues", |v| match v {
                    Value::Array(a) => a.iter().map(read::string).collect(),
                    _ => Err(Decline::new("expected a list")),
                })?,
                throughput_interval: m.opt("throughput_interval", read::pos_duration)?,
            };
            m.finish()?;
            Ok(out)
        })?;
        let sc = Scenario {
            seed: t.or("seed", 1, read::nonneg_int)?,
            stop: t.opt("stop", read::duration)?,
            fidelity: t.or("fidelity", "packet", read::literal(&["packet", "flow"]))?,
            topology_kind,
            network,
            queue: t.or("queue", Queue::default(), |v| queue(v, "queue"))?,
            ports: t.or("ports", Vec::new(), |v| list(v, "ports", port))?,
            routing: routing.unwrap_or(Routing { ecmp: "per_flow", flowlet_gap: None, detection_delay: 100_000_000 }),
            sources: t.or("sources", Vec::new(), |v| list(v, "sources", source))?,
            messages: t.or("messages", Vec::new(), |v| list(v, "messages", message))?,
            tcp: t.or("tcp", Vec::new(), |v| list(v, "tcp", tcp))?,
            barriers: t.or("barriers", Vec::new(), |v| list(v, "barriers", barrier))?,
            compute: t.or("compute", Vec::new(), |v| list(v, "compute", compute))?,
            collectives: t.or("collectives", Vec::new(), |v| list(v, "collectives", collective))?,
            streams: t.or("streams", Vec::new(), |v| match v {
                Value::Table(s) => s.iter().map(|(k, n)| Ok((read::name(&Value::String(k.clone()))?, read::pos_int(n)?))).collect(),
                _ => Err(Decline::new("streams: expected a table")),
            })?,
            measure,
            events: t.or("events", Vec::new(), |v| list(v, "events", event))?,
            transport,
            pfc,
            ecn,
            rdma,
            hybrid: t.opt("hybrid", hybrid::hybrid)?,
        };
        t.finish()?;
        Ok(sc)
    }

    /// Whether the scenario lists messages, barriers, compute steps or collectives of its own.
    pub fn has_workload_rows(&self) -> bool {
        !(self.messages.is_empty() && self.barriers.is_empty() && self.compute.is_empty() && self.collectives.is_empty())
    }

    /// Whether it is checked in its row form (no compute, collectives or streams; few rows).
    pub fn row_form(&self) -> bool {
        self.compute.is_empty() && self.collectives.is_empty() && self.streams.is_empty() && self.messages.len() + self.barriers.len() <= ROW_FORM_MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_1_1_forms_decline_and_1_0_ones_pass() {
        assert!(toml10("a = { x = 1, y = \"s#\" } # c\nb = [1,\n 2]\nc = \"\"\"l1\nl2\"\"\"\nd = '\\x'\n").is_ok());
        for bad in ["a = { x = 1,\n y = 2 }", "a = { x = 1, }", "a = \"\\x41\"", "a = \"\\e\"", "a = { x = 1 # c\n}"] {
            assert!(toml10(bad).is_err(), "{bad}");
        }
    }
}
