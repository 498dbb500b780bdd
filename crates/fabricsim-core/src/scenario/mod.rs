//! The scenario reader, the one validator: a scenario (a TOML file, or the document Python holds) read with the
//! user's key names and units into the wire spec and workload columns. The native front door and Python's
//! `Scenario` (`_core.scenario_check`, `_core.scenario_read`) both read through it.
//!
//! Contract: `Scenario::parse` (and `wire`, `lower`) either yields the scenario, or a `Decline` of one of three
//! kinds (`DeclineKind`): the input is invalid ("field: reason", the field as the user wrote it), a value is
//! implausible (a warning: Python's models say it, up to three), or the input is valid but the native command
//! line does not run it (why: a hybrid run, a `.json` scenario; `cli`). The command line hands every decline to
//! the Python front door, which prints its message; tests/test_front_door_errors.py holds the texts. Modules:
//! `units` (quantities), `read` (strict typed reading), `topology` (one file per family), `wire` (the RunSpec
//! JSON), `lower` (the workload columns `fabricsim.Workload` starts from), `cli` (the commands).

pub mod astra;
pub mod cli;
pub mod hybrid;
pub mod keys;
pub mod lower;
pub mod read;
pub mod retransmit;
pub mod roce;
pub mod topology;
pub mod uec;
pub mod units;
pub mod wire;

use read::Tab;
use toml::Value;

/// What a `Decline` is: the input is wrong (Python rejects it), Python would warn about it, or it is valid
/// but this port does not read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclineKind {
    /// The input is invalid: the text is "field: reason", the field and reason as Python's front door names
    /// them (a bare reason for a problem of the whole file, as Python's field "").
    Invalid,
    /// Python would warn (an implausible value): the text is the warning, "field = value as written means …".
    Warning,
    /// A valid input this port does not handle (a graph topology, a very large fabric, a JSON file): why.
    Unsupported,
}

/// Why the native front door hands a scenario or command to Python: an invalid input (the user's error, by
/// field), a value Python warns about, or a valid input this port does not handle (`DeclineKind`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decline {
    pub kind: DeclineKind,
    pub text: String,
    /// The file the text is about when it is not the scenario's own (a `graph` topology's file).
    pub file: Option<String>,
}

impl Decline {
    /// An invalid input: `why` is "field: reason" or a reason still to be placed by `within`.
    pub fn new(why: impl Into<String>) -> Decline {
        Decline { kind: DeclineKind::Invalid, text: why.into(), file: None }
    }

    /// An invalid input at `field` ("" for the whole file).
    pub fn invalid(field: &str, reason: impl std::fmt::Display) -> Decline {
        if field.is_empty() {
            Decline::new(reason.to_string())
        } else {
            Decline::new(format!("{field}: {reason}"))
        }
    }

    /// An invalid input in another file than the scenario (a `graph` topology's): "field: reason" there.
    pub fn in_file(file: impl Into<String>, field: &str, reason: impl std::fmt::Display) -> Decline {
        Decline { file: Some(file.into()), ..Decline::invalid(field, reason) }
    }

    /// A value Python warns about: `text` is the warning as Python words it (without the file).
    pub fn warning(text: impl Into<String>) -> Decline {
        Decline { kind: DeclineKind::Warning, text: text.into(), file: None }
    }

    /// A valid input this port does not handle.
    pub fn unsupported(why: impl Into<String>) -> Decline {
        Decline { kind: DeclineKind::Unsupported, text: why.into(), file: None }
    }

    pub fn is_invalid(&self) -> bool {
        self.kind == DeclineKind::Invalid
    }

    /// The decline as reported by `_core.native_scenario`: "field: reason" (invalid), "warning: …" or
    /// "unsupported: …".
    pub fn report(&self) -> String {
        match self.kind {
            DeclineKind::Invalid if self.file.is_some() => format!("{}: {}", self.file.as_deref().unwrap_or(""), self.text),
            DeclineKind::Invalid => self.text.clone(),
            DeclineKind::Warning => format!("warning: {}", self.text),
            DeclineKind::Unsupported => format!("unsupported: {}", self.text),
        }
    }

    /// A spec error as an invalid input: "field: reason" (the memory budget's refusals, said at a scenario's key).
    pub fn from_error(e: crate::error::Error) -> Decline {
        match e {
            crate::error::Error::Spec { field, reason } => Decline::invalid(&field, reason),
            other => Decline::new(other.to_string()),
        }
    }

    /// As a spec error: (field, reason) split at the first ": " after a field path (no blanks), else the
    /// whole text as the reason of field "scenario".
    pub fn into_error(self) -> crate::error::Error {
        if !self.is_invalid() {
            return crate::error::Error::spec("scenario", self.report());
        }
        match self.text.split_once(": ") {
            Some((field, reason)) if !field.is_empty() && !field.contains(' ') => crate::error::Error::spec(field, reason),
            _ => crate::error::Error::spec("scenario", self.text),
        }
    }

    /// The decline with `at` (a field path) in front: an invalid input's text unless it names a field at or
    /// under `at` already (it starts with `at` then '.', '[' or ':'); a text starting with '[' (an index under
    /// `at`) or a warning's " = value …" joined to it; an unsupported input as it is.
    pub fn within(self, at: &str) -> Decline {
        let named = self.text.strip_prefix(at).is_some_and(|rest| rest.starts_with(['.', '[', ':']));
        let joined = self.text.starts_with('[') || (self.kind == DeclineKind::Warning && self.text.starts_with(" = "));
        match self.kind {
            DeclineKind::Unsupported => self,
            _ if at.is_empty() || named || self.file.is_some() => self,
            _ if joined => Decline { text: format!("{at}{}", self.text), ..self },
            DeclineKind::Warning => self,
            DeclineKind::Invalid => Decline { text: format!("{at}: {}", self.text), ..self },
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
    /// The new rate of a `link_rate` event (bit/s).
    pub rate: Option<u64>,
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
    /// "message", "rdma" or "uec".
    pub transport: &'static str,
    /// The RoCE wire objects the scenario has (`roce_wire`): `pfc`, `ecn`, and `rdma` with the RDMA transport.
    pub pfc: Option<serde_json::Value>,
    pub ecn: Option<serde_json::Value>,
    pub rdma: Option<serde_json::Value>,
    /// `[hybrid]` as its wire object (`hybrid::hybrid`).
    pub hybrid: Option<serde_json::Value>,
    /// `[retransmit]` as its wire object (`retransmit::retransmit`; message transport only).
    pub retransmit: Option<serde_json::Value>,
    /// `[uec]` as its wire object (`uec::uec`; present exactly with `transport = "uec"`).
    pub uec: Option<serde_json::Value>,
}

/// Most message and barrier rows a scenario may have and still be checked in its row form (Python's
/// `ROW_FORM_MAX`).
pub const ROW_FORM_MAX: usize = 1000;

/// A TOML syntax error at byte `at` of `text`, as Python's `read_document` words tomllib's: field "line N",
/// reason "TOML syntax error: <what> (column C)" (C counts characters, as tomllib's does).
fn syntax_error(text: &str, at: usize, what: &str) -> Decline {
    if at >= text.len() {
        return Decline::new(format!("TOML syntax error: {what} (at end of document)"));
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = match before.rfind('\n') {
        Some(nl) => before[nl..].chars().count(),
        None => before.chars().count() + 1,
    };
    Decline::invalid(&format!("line {line}"), format!("TOML syntax error: {what} (column {column})"))
}

/// Reject the TOML 1.1 forms the `toml` crate reads but Python's `tomllib` (TOML 1.0) rejects, where tomllib
/// does (the line and column of the character it stops at): a newline, a comment or a trailing comma directly
/// inside an inline table (inside an array inside one they are TOML 1.0), and the `\x` and `\e` escapes of
/// basic strings. tomllib's message is chosen by what precedes (a key is expected after '{' or ',', a value
/// after '='); after a key without '=' tomllib says "Expected '='…" where this says "Unclosed inline table".
/// O(text).
fn toml10(text: &str) -> Result<(), Decline> {
    let b = text.as_bytes();
    let bad = |at: usize, what: &str| Err(syntax_error(text, at, what));
    // The brackets open inside the outermost inline table: b'{' or b'['.
    let mut open: Vec<u8> = Vec::new();
    let (mut i, mut last) = (0usize, b' ');
    let in_table = |open: &Vec<u8>| open.last() == Some(&b'{');
    let stop_why = |last: u8| match last {
        b'{' | b',' => "Invalid initial character for a key part",
        b'=' => "Invalid value",
        _ => "Unclosed inline table",
    };
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            if in_table(&open) {
                return bad(i, stop_why(last));
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
                    // Unterminated: the toml crate's own error says where.
                    return Ok(());
                }
                if c == b'"' && b[i] == b'\\' {
                    if matches!(b.get(i + 1), Some(b'x') | Some(b'e')) {
                        return bad(i + 2, "Unescaped '\\' in a string");
                    }
                    i += 2;
                    continue;
                }
                if b[i..].starts_with(quote) {
                    i += quote.len();
                    break;
                }
                if b[i] == b'\n' && !triple {
                    // The toml crate's own error says where.
                    return Ok(());
                }
                i += 1;
            }
            last = c;
            continue;
        }
        match c {
            b'{' => open.push(b'{'),
            b'[' if !open.is_empty() => open.push(b'['),
            b']' if !open.is_empty() => {
                open.pop();
            }
            b'}' if !open.is_empty() => {
                if in_table(&open) && last == b',' {
                    return bad(i, "Invalid initial character for a key part");
                }
                open.pop();
            }
            b'\n' if in_table(&open) => return bad(i, stop_why(last)),
            b'\r' if in_table(&open) => return bad(i, stop_why(last)),
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last = c;
        }
        i += 1;
    }
    Ok(())
}

/// The TOML document: a syntax error as Python's (tomllib reads TOML 1.0) by line, in tomllib's words where
/// `toml10` finds it and the `toml` crate's otherwise.
fn document(text: &str) -> Result<toml::Table, Decline> {
    toml10(text)?;
    text.parse::<toml::Table>().map_err(|e| {
        let what = e.message().trim().replace('\n', "; ");
        match e.span() {
            Some(span) => syntax_error(text, span.start, &what),
            None => Decline::new(format!("TOML syntax error: {what}")),
        }
    })
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
    let kind = t.kind(&["fifo", "codel", "fq_codel"])?;
    // Python's path names the discriminator's branch under a queue (`queue.qdisc.codel.target`).
    t.at = format!("{at}.{kind}");
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
        drop_packets: t.or("drop_packets", Vec::new(), |v| read::list_of(v, read::nonneg_int))?,
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
    // Read in the model's order (`CollectiveDef`), so a row with several problems is reported by Python's first.
    let name = t.opt("name", read::name)?;
    let kind = t.req("kind", read::literal(&["all_to_all", "all_gather", "all_reduce", "reduce_scatter", "broadcast", "reduce"]))?;
    let algorithm = t.opt("algorithm", read::literal(&["ring", "direct", "halving_doubling", "shift", "hierarchical"]))?;
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
        _ => Err(Decline::new("expected \"all\" or a list of ranks")),
    })?;
    let c = Collective {
        name,
        kind,
        algorithm,
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
        kind: t.req("kind", read::literal(&["link_down", "link_up", "switch_down", "ber", "link_rate"]))?,
        link: t.opt("link", read::names)?,
        node: t.opt("node", read::name)?,
        ber: t.or("ber", 0.0, read::number)?,
        rate: t.opt("rate", read::link_rate)?,
    };
    t.finish()?;
    Ok(e)
}

impl Scenario {
    /// Read a scenario document (TOML text), its keys in the order Python's model declares them (so a file with
    /// several problems is reported by the same first one), a `graph` file relative to the current folder; every value
    /// the Python models reject is invalid, and one they warn about a warning (`DeclineKind`).
    pub fn parse(text: &str) -> Result<Scenario, Decline> {
        Scenario::parse_at(text, None)
    }

    /// `parse`, a `graph` topology's file read relative to `base` (the scenario file's folder).
    pub fn parse_at(text: &str, base: Option<&std::path::Path>) -> Result<Scenario, Decline> {
        Scenario::from_table(&document(text)?, base)
    }

    /// `parse` of a document given as JSON (a parsed scenario, as Python holds it: null members are absent keys).
    pub fn from_json(doc: &serde_json::Value, base: Option<&std::path::Path>) -> Result<Scenario, Decline> {
        match doc {
            serde_json::Value::Object(_) => {}
            _ => return Err(Decline::invalid("", "a scenario must be a table of keys")),
        }
        let v = Value::try_from(keys::strip_nulls(doc.clone())).map_err(|e| Decline::invalid("", format!("a value a scenario cannot hold: {e}")))?;
        match v {
            Value::Table(t) => Scenario::from_table(&t, base),
            _ => Err(Decline::invalid("", "a scenario must be a table of keys")),
        }
    }

    /// `parse` of a read TOML table.
    pub fn from_table(doc: &toml::Table, base: Option<&std::path::Path>) -> Result<Scenario, Decline> {
        let mut t = Tab::new(doc, "");
        let seed = t.or("seed", 1, read::nonneg_int)?;
        let stop = t.opt("stop", read::duration)?;
        let fidelity = t.or("fidelity", "packet", read::literal(&["packet", "flow", "hybrid"]))?;
        let (topology_kind, network) = t.req("topology", |v| topology::build(v, base))?;
        let queue = t.or("queue", Queue::default(), |v| queue(v, "queue"))?;
        let ports = t.or("ports", Vec::new(), |v| list(v, "ports", port))?;
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
        let sources = t.or("sources", Vec::new(), |v| list(v, "sources", source))?;
        let messages = t.or("messages", Vec::new(), |v| list(v, "messages", message))?;
        let tcp = t.or("tcp", Vec::new(), |v| list(v, "tcp", tcp))?;
        let barriers = t.or("barriers", Vec::new(), |v| list(v, "barriers", barrier))?;
        let compute = t.or("compute", Vec::new(), |v| list(v, "compute", compute))?;
        let collectives = t.or("collectives", Vec::new(), |v| list(v, "collectives", collective))?;
        let streams = t.or("streams", Vec::new(), |v| match v {
            Value::Table(s) => s
                .iter()
                .map(|(k, n)| {
                    let host = read::name(&Value::String(k.clone())).map_err(|d| d.within(&format!("streams.{k}")))?;
                    Ok((host, read::pos_int(n).map_err(|d| d.within(&format!("streams.{k}")))?))
                })
                .collect(),
            _ => Err(Decline::new(format!("Input should be a valid dictionary, got {}", read::py_repr(v)))),
        })?;
        let measure = t.or("measure", Measure::default(), |v| {
            let mut m = Tab::of(v, "measure")?;
            let out = Measure {
                queue_interval: m.opt("queue_interval", read::pos_duration)?,
                queues: m.opt("queues", |v| read::list_of(v, read::string))?,
                throughput_interval: m.opt("throughput_interval", read::pos_duration)?,
            };
            m.finish()?;
            Ok(out)
        })?;
        let events = t.or("events", Vec::new(), |v| list(v, "events", event))?;
        let transport = t.or("transport", "message", read::literal(&["message", "rdma", "uec"]))?;
        let (pfc_v, ecn_v, rdma_v) = (t.get("pfc"), t.get("ecn"), t.get("rdma"));
        let mut roce = roce::tables(transport, pfc_v, ecn_v, rdma_v)?;
        let (pfc, ecn, rdma) = (roce.remove("pfc"), roce.remove("ecn"), roce.remove("rdma"));
        let hybrid = t.opt("hybrid", hybrid::hybrid)?;
        let retransmit = t.opt("retransmit", retransmit::retransmit)?;
        if retransmit.is_some() && transport != "message" {
            return Err(Decline::invalid(
                "retransmit",
                "is the message transport's; the RDMA transport recovers a loss by its NACK and go-back-N, the UEC transport by its NACK and [uec] rto",
            ));
        }
        let uec_v = t.get("uec");
        if uec_v.is_some() && transport != "uec" {
            return Err(Decline::invalid("uec", "a [uec] table needs transport = \"uec\" (without it, messages use the message transport)"));
        }
        let uec = if transport == "uec" { Some(uec::uec(uec_v).map_err(|d| d.within("uec"))?) } else { None };
        if uec.is_some() && fidelity == "hybrid" {
            return Err(Decline::invalid(
                "fidelity",
                "transport = \"uec\" runs at packet fidelity (hybrid's steady-state jumps do not model its windows); use fidelity = \"packet\"",
            ));
        }
        t.finish()?;
        Ok(Scenario {
            seed,
            stop,
            fidelity,
            topology_kind,
            network,
            queue,
            ports,
            routing: routing.unwrap_or(Routing { ecmp: "per_flow", flowlet_gap: None, detection_delay: 100_000_000 }),
            sources,
            messages,
            tcp,
            barriers,
            compute,
            collectives,
            streams,
            measure,
            events,
            transport,
            pfc,
            ecn,
            rdma,
            hybrid,
            retransmit,
            uec,
        })
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
    fn toml_1_1_forms_are_syntax_errors_and_1_0_ones_pass() {
        assert!(toml10("a = { x = 1, y = \"s#\" } # c\nb = [1,\n 2]\nc = \"\"\"l1\nl2\"\"\"\nd = '\\x'\n").is_ok());
        // A newline or a comment inside an array inside an inline table is TOML 1.0.
        assert!(toml10("t = { kind = \"x\", l = [1, # one\n 2] }\n").is_ok());
        for bad in ["a = { x = 1,\n y = 2 }", "a = { x = 1, }", "a = \"\\x41\"", "a = \"\\e\"", "a = { x = 1 # c\n}"] {
            assert!(toml10(bad).is_err(), "{bad}");
        }
        // As tomllib says them: the line, the character it stops at and its words.
        let e = toml10("s = 1\na = { x = 1,\n y = 2 }").unwrap_err();
        assert_eq!(e.text, "line 2: TOML syntax error: Invalid initial character for a key part (column 13)");
        assert_eq!(toml10("a = { x = 1, }").unwrap_err().text, "line 1: TOML syntax error: Invalid initial character for a key part (column 14)");
        assert_eq!(toml10("a = \"\\x41\"").unwrap_err().text, "line 1: TOML syntax error: Unescaped '\\' in a string (column 8)");
        assert_eq!(document("[t\nx = 1").unwrap_err().report(), "line 1: TOML syntax error: unclosed table, expected `]` (column 3)");
    }

    #[test]
    fn declines_say_what_they_are_and_where() {
        // A reason gets its field once; a text naming a field at or under the path keeps it.
        assert_eq!(Decline::new("bad").within("a").within("a").text, "a: bad");
        assert_eq!(Decline::new("a.b: bad").within("a").text, "a.b: bad");
        assert_eq!(Decline::new("a[0].b: bad").within("a").text, "a[0].b: bad");
        assert_eq!(Decline::new("ab: bad").within("a").text, "a: ab: bad");
        assert_eq!(Decline::new("[2]: bad").within("x.after").text, "x.after[2]: bad");
        assert_eq!(Decline::warning(" = 100 means 100 bit/s").within("topology.rate").report(), "warning: topology.rate = 100 means 100 bit/s");
        assert_eq!(Decline::unsupported("graph").within("topology").report(), "unsupported: graph");
        assert!(Decline::invalid("seed", "x").is_invalid() && !Decline::unsupported("x").is_invalid());
        assert_eq!(Decline::invalid("", "whole file").report(), "whole file");
    }

    #[test]
    fn top_level_keys_are_plain_fields() {
        let e = |text: &str| Scenario::parse(text).unwrap_err().report();
        assert_eq!(e("seed = -1"), "seed: Input should be greater than or equal to 0");
        assert_eq!(e("seed = true"), "seed: Input should be a valid integer, got True");
        assert_eq!(e("colour = 1\n[topology]\nkind = \"dumbbell\""), "colour: unknown key");
        assert_eq!(e("[topology]\nkind = \"hypercube\"").split(" (").next().unwrap(), "topology: unknown kind 'hypercube'");
        assert_eq!(e("[topology]\nkind = \"graph\"\nfile = \"x.graphml\""), "topology.file: cannot read 'x.graphml' (x.graphml): no such file");
        assert_eq!(
            e("[topology]\nkind = \"dumbbell\"\nbottleneck_rate = 100"),
            "warning: topology.bottleneck_rate = 100 means 100 bit/s, below the 1 Mb/s any fabric link has; did you mean \"100Gbps\"?"
        );
        assert_eq!(
            e("[topology]\nkind = \"fat_tree3\"\nk = 5\nrate = \"1Gbps\""),
            "topology.k: must be even (a k-ary fat-tree switch has k/2 ports down and k/2 up), got 5"
        );
    }
}
