//! The run record's one schema: every column the record holds (name, Arrow type, unit, missing-value rule,
//! labels, description, place in the `--json` rows) and the per-row metrics derived from them.
//!
//! Everything that shows a record derives from `FIELDS`: the numpy columns the binding hands Python
//! (`record_to_py`), the `--json` rows written here (`rows_json`, for the native CLI and Python's `to_json`),
//! and, through `_core.record_schema()`, Python's frames, Arrow schema, Parquet files and per-column digests.
//! A new metric is one row of `FIELDS` (and the engine filling its column).

use crate::record::RunRecord;
use std::borrow::Cow;

/// A missing time in a u64 column (nothing sent or received, never completed).
pub const MISSING: u64 = u64::MAX;
/// Seconds per picosecond.
pub const PS: f64 = 1e-12;
/// `flows.kind` codes, in the engine's order (`FlowKind as u8`).
pub const FLOW_KINDS: [&str; 7] = ["cbr", "onoff", "message", "tcp", "tcp-ack", "rdma-ack", "uec-ack"];

/// A column's element type (as Arrow names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    U8,
    U32,
    U64,
    Bool,
    /// Derived metrics (NaN where undefined).
    F64,
    /// A row's name (`RowName` fields).
    Str,
}

impl Dtype {
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::U32 => "uint32",
            Dtype::U64 => "uint64",
            Dtype::Bool => "bool",
            Dtype::F64 => "float64",
            Dtype::Str => "string",
        }
    }
}

/// The names a code column indexes (out-of-range codes, as `u32::MAX` for an unnamed message, read "").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Labels {
    /// `RunRecord::flow_names`.
    FlowNames,
    /// `RunRecord::node_names`.
    NodeNames,
    /// `FLOW_KINDS`.
    FlowKinds,
    /// The queues' names (`QueueColumns::name`, one per port row).
    QueueNames,
}

impl Labels {
    /// The name of the list (a key of Python's `RunRecord.scalars`, or "flow_kinds").
    pub fn as_str(self) -> &'static str {
        match self {
            Labels::FlowNames => "flow_names",
            Labels::NodeNames => "node_names",
            Labels::FlowKinds => "flow_kinds",
            Labels::QueueNames => "queue_names",
        }
    }
}

/// How a field is written in its table's `--json` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Json {
    /// The label its code names, as a JSON string.
    Label,
    /// The integer.
    Int,
    /// A time in ps as seconds (shortest round-trip digits); `MISSING` as null.
    Seconds,
    /// A derived float (shortest round-trip digits); NaN as null.
    Float,
}

impl Json {
    pub fn as_str(self) -> &'static str {
        match self {
            Json::Label => "label",
            Json::Int => "int",
            Json::Seconds => "seconds",
            Json::Float => "float",
        }
    }
}

/// A column's values, borrowed from the record or owned where converted (`Option` times as `MISSING`).
#[derive(Clone, Debug, PartialEq)]
pub enum Values<'a> {
    U8(Cow<'a, [u8]>),
    U32(Cow<'a, [u32]>),
    U64(Cow<'a, [u64]>),
    Bool(Cow<'a, [bool]>),
    F64(Vec<f64>),
}

impl Values<'_> {
    pub fn len(&self) -> usize {
        match self {
            Values::U8(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dtype(&self) -> Dtype {
        match self {
            Values::U8(_) => Dtype::U8,
            Values::U32(_) => Dtype::U32,
            Values::U64(_) => Dtype::U64,
            Values::Bool(_) => Dtype::Bool,
            Values::F64(_) => Dtype::F64,
        }
    }

    /// Row i as an integer (an index into labels, or a count); floats truncate. Invariant: i < len.
    fn int(&self, i: usize) -> u64 {
        match self {
            Values::U8(v) => v[i] as u64,
            Values::U32(v) => v[i] as u64,
            Values::U64(v) => v[i],
            Values::Bool(v) => v[i] as u64,
            Values::F64(v) => v[i] as u64,
        }
    }
}

/// Where a field's values come from.
#[derive(Clone, Copy)]
pub enum Source {
    /// A column of the engine's record (`None` when the run has none: RoCE and hybrid columns).
    Stored(for<'a> fn(&'a RunRecord) -> Option<Values<'a>>),
    /// A per-row metric computed from the stored columns of its table (NaN where undefined).
    Derived(fn(&Table<'_>) -> Vec<f64>),
    /// Row i's name: label i of `labels`.
    RowName,
}

/// One field of the record: `table.column` (e.g. "flows.tx_bytes").
#[derive(Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub dtype: Dtype,
    /// "ps", "bytes", "packets", "bps", "s", "b/s"; "" for codes, names and flags.
    pub unit: &'static str,
    /// Whether `MISSING` (stored) or NaN (derived) marks a missing value (null in Arrow, <NA> in frames).
    pub missing: bool,
    /// The names the column's codes index (shown as those names in frames, Arrow and JSON).
    pub labels: Option<Labels>,
    /// Its key and form in the table's `--json` rows, if it has one (the rows follow `FIELDS` order).
    pub json: Option<(&'static str, Json)>,
    /// When the record has it: "" always, "hybrid" (hybrid runs), "roce" (runs with PFC, ECN, RDMA or UEC),
    /// "uec" (runs of the UEC transport).
    pub when: &'static str,
    pub description: &'static str,
    pub source: Source,
}

impl Field {
    /// The table ("flows") and column ("tx_bytes") of `name`.
    pub fn split(&self) -> (&'static str, &'static str) {
        self.name.split_once('.').unwrap_or(("", self.name))
    }

    pub fn table(&self) -> &'static str {
        self.split().0
    }
}

fn u32s(v: &[u32]) -> Option<Values<'_>> {
    Some(Values::U32(Cow::Borrowed(v)))
}
fn u64s(v: &[u64]) -> Option<Values<'_>> {
    Some(Values::U64(Cow::Borrowed(v)))
}
fn times(v: &[Option<u64>]) -> Option<Values<'static>> {
    Some(Values::U64(Cow::Owned(v.iter().map(|t| t.unwrap_or(MISSING)).collect())))
}
fn bools(v: &[bool]) -> Option<Values<'_>> {
    Some(Values::Bool(Cow::Borrowed(v)))
}

/// The stored-column defaults the rows of `FIELDS` start from.
const U64: Field = Field {
    name: "",
    dtype: Dtype::U64,
    unit: "",
    missing: false,
    labels: None,
    json: None,
    when: "",
    description: "",
    source: Source::Stored(|_| None),
};
const U32: Field = Field { dtype: Dtype::U32, ..U64 };
/// A time in ps, `MISSING` when it did not happen.
const TIME: Field = Field { unit: "ps", missing: true, ..U64 };

/// Every field of the record, table by table; a table's `--json` rows and frame columns follow this order.
pub static FIELDS: &[Field] = &[
    // ---- flows: one row per flow (sources, messages, TCP data and ACK flows, RDMA ACK flows, in spec order)
    Field {
        name: "flows.name",
        labels: Some(Labels::FlowNames),
        json: Some(("name", Json::Label)),
        description: "the flow's name (\"\" for an unnamed message)",
        source: Source::Stored(|r| u32s(&r.flows.name)),
        ..U32
    },
    Field {
        name: "flows.kind",
        dtype: Dtype::U8,
        labels: Some(Labels::FlowKinds),
        json: Some(("kind", Json::Label)),
        description: "what the flow is: cbr, onoff, message, tcp, tcp-ack, rdma-ack, uec-ack",
        source: Source::Stored(|r| Some(Values::U8(Cow::Owned(r.flows.kind.iter().map(|k| *k as u8).collect())))),
        ..U64
    },
    Field {
        name: "flows.src",
        labels: Some(Labels::NodeNames),
        json: Some(("src", Json::Label)),
        description: "the sending node",
        source: Source::Stored(|r| u32s(&r.flows.src)),
        ..U32
    },
    Field {
        name: "flows.dst",
        labels: Some(Labels::NodeNames),
        json: Some(("dst", Json::Label)),
        description: "the receiving node",
        source: Source::Stored(|r| u32s(&r.flows.dst)),
        ..U32
    },
    Field {
        name: "flows.tx_packets",
        unit: "packets",
        json: Some(("tx_packets", Json::Int)),
        description: "packets sent",
        source: Source::Stored(|r| u64s(&r.flows.tx_packets)),
        ..U64
    },
    Field {
        name: "flows.rx_packets",
        unit: "packets",
        json: Some(("rx_packets", Json::Int)),
        description: "packets received",
        source: Source::Stored(|r| u64s(&r.flows.rx_packets)),
        ..U64
    },
    Field {
        name: "flows.lost_packets",
        unit: "packets",
        json: Some(("lost_packets", Json::Int)),
        description: "packets of the flow a queue dropped",
        source: Source::Stored(|r| u64s(&r.flows.lost_packets)),
        ..U64
    },
    Field {
        name: "flows.tx_bytes",
        unit: "bytes",
        json: Some(("tx_bytes", Json::Int)),
        description: "bytes sent on the wire (payload and headers)",
        source: Source::Stored(|r| u64s(&r.flows.tx_bytes)),
        ..U64
    },
    Field {
        name: "flows.rx_bytes",
        unit: "bytes",
        json: Some(("rx_bytes", Json::Int)),
        description: "bytes received on the wire (payload and headers)",
        source: Source::Stored(|r| u64s(&r.flows.rx_bytes)),
        ..U64
    },
    Field {
        name: "flows.rx_payload_bytes",
        unit: "bytes",
        description: "payload bytes received",
        source: Source::Stored(|r| u64s(&r.flows.rx_payload_bytes)),
        ..U64
    },
    Field {
        name: "flows.delay_sum_ps",
        unit: "ps",
        description: "sum over received packets of (receive time - hand-over to the sender's NIC queue)",
        source: Source::Stored(|r| u64s(&r.flows.delay_sum_ps)),
        ..U64
    },
    Field {
        name: "flows.max_delay_ps",
        unit: "ps",
        description: "the largest one-way delay of a received packet",
        source: Source::Stored(|r| u64s(&r.flows.max_delay_ps)),
        ..U64
    },
    Field {
        name: "flows.throughput_bps",
        dtype: Dtype::F64,
        unit: "b/s",
        json: Some(("throughput_bps", Json::Float)),
        description: "rx_bytes * 8 / (last_rx - first_tx), FlowMonitor's reduction; 0 without a span",
        source: Source::Derived(throughput_bps),
        ..U64
    },
    Field {
        name: "flows.mean_delay_s",
        dtype: Dtype::F64,
        unit: "s",
        missing: true,
        json: Some(("mean_delay_s", Json::Float)),
        description: "delay_sum / rx_packets; missing when nothing was received",
        source: Source::Derived(mean_delay_s),
        ..U64
    },
    Field {
        name: "flows.max_delay_s",
        dtype: Dtype::F64,
        unit: "s",
        missing: true,
        json: Some(("max_delay_s", Json::Float)),
        description: "max_delay in seconds; missing when nothing was received",
        source: Source::Derived(max_delay_s),
        ..U64
    },
    Field {
        name: "flows.first_tx_ps",
        json: Some(("first_tx_s", Json::Seconds)),
        description: "when the first packet was sent",
        source: Source::Stored(|r| times(&r.flows.first_tx_ps)),
        ..TIME
    },
    Field { name: "flows.last_tx_ps", description: "when the last packet was sent", source: Source::Stored(|r| times(&r.flows.last_tx_ps)), ..TIME },
    Field {
        name: "flows.first_rx_ps",
        description: "when the first packet was received",
        source: Source::Stored(|r| times(&r.flows.first_rx_ps)),
        ..TIME
    },
    Field {
        name: "flows.last_rx_ps",
        json: Some(("last_rx_s", Json::Seconds)),
        description: "when the last packet was received",
        source: Source::Stored(|r| times(&r.flows.last_rx_ps)),
        ..TIME
    },
    Field {
        name: "flows.start_ps",
        json: Some(("start_s", Json::Seconds)),
        description: "messages: when the message became ready and started sending",
        source: Source::Stored(|r| times(&r.flows.start_ps)),
        ..TIME
    },
    Field {
        name: "flows.complete_ps",
        json: Some(("complete_s", Json::Seconds)),
        description: "messages: when the last payload byte arrived",
        source: Source::Stored(|r| times(&r.flows.complete_ps)),
        ..TIME
    },
    Field {
        name: "flows.acked_ps",
        json: Some(("acked_s", Json::Seconds)),
        when: "uec",
        description: "UEC connections: when the sender saw the last byte acknowledged (uet-htsim's flow finish)",
        source: Source::Stored(|r| r.uec.as_ref().and_then(|u| times(&u.acked_ps))),
        ..TIME
    },
    Field {
        name: "flows.retransmits",
        unit: "packets",
        json: Some(("retransmits", Json::Int)),
        when: "uec",
        description: "UEC connections: packets re-sent (after a NACK of a trimmed packet, or a timeout)",
        source: Source::Stored(|r| r.uec.as_ref().and_then(|u| u64s(&u.retransmits))),
        ..U64
    },
    Field {
        name: "flows.skipped_packets",
        unit: "packets",
        when: "hybrid",
        description: "delivered packets extrapolated by steady-state jumps, not simulated",
        source: Source::Stored(|r| r.fast_forward.as_ref().and_then(|f| u64s(&f.flow_skipped_packets))),
        ..U64
    },
    // ---- queues: one row per egress port (global port id)
    Field {
        name: "queues.name",
        dtype: Dtype::Str,
        labels: Some(Labels::QueueNames),
        json: Some(("name", Json::Label)),
        description: "the port, \"node->peer\" (with #k for parallel links)",
        source: Source::RowName,
        ..U64
    },
    Field {
        name: "queues.node",
        labels: Some(Labels::NodeNames),
        description: "the node the port belongs to",
        source: Source::Stored(|r| u32s(&r.queues.node)),
        ..U32
    },
    Field { name: "queues.port", description: "the port's number at its node", source: Source::Stored(|r| u32s(&r.queues.port)), ..U32 },
    Field {
        name: "queues.tx_packets",
        unit: "packets",
        json: Some(("tx_packets", Json::Int)),
        description: "packets the port sent",
        source: Source::Stored(|r| u64s(&r.queues.tx_packets)),
        ..U64
    },
    Field {
        name: "queues.tx_bytes",
        unit: "bytes",
        json: Some(("tx_bytes", Json::Int)),
        description: "bytes the port sent",
        source: Source::Stored(|r| u64s(&r.queues.tx_bytes)),
        ..U64
    },
    Field {
        name: "queues.drops",
        unit: "packets",
        json: Some(("drops", Json::Int)),
        description: "packets the port's queue dropped",
        source: Source::Stored(|r| u64s(&r.queues.drops)),
        ..U64
    },
    Field {
        name: "queues.peak_packets",
        unit: "packets",
        json: Some(("peak_packets", Json::Int)),
        description: "peak occupancy of discipline and device queue (the packet being serialised not counted)",
        source: Source::Stored(|r| u64s(&r.queues.peak_packets)),
        ..U64
    },
    Field {
        name: "queues.peak_bytes",
        unit: "bytes",
        json: Some(("peak_bytes", Json::Int)),
        description: "peak occupancy in bytes",
        source: Source::Stored(|r| u64s(&r.queues.peak_bytes)),
        ..U64
    },
    Field {
        name: "queues.rate_bps",
        unit: "b/s",
        description: "the link's line rate (the topology's, a per-end rate_cap not applied): the links' utilization denominator",
        source: Source::Stored(|r| u64s(&r.queues.rate_bps)),
        ..U64
    },
    // ---- samples: queue depth, one row per (sample time, sampled port)
    Field { name: "samples.t_ps", unit: "ps", description: "the sample's time", source: Source::Stored(|r| u64s(&r.samples.t_ps)), ..U64 },
    Field {
        name: "samples.port",
        labels: Some(Labels::QueueNames),
        description: "the sampled port",
        source: Source::Stored(|r| u32s(&r.samples.port)),
        ..U32
    },
    Field {
        name: "samples.packets",
        unit: "packets",
        description: "packets queued (discipline and device queue)",
        source: Source::Stored(|r| u64s(&r.samples.packets)),
        ..U64
    },
    Field { name: "samples.bytes", unit: "bytes", description: "bytes queued", source: Source::Stored(|r| u64s(&r.samples.bytes)), ..U64 },
    // ---- compute: one row per compute step
    Field {
        name: "compute.host",
        labels: Some(Labels::NodeNames),
        description: "the host that computes",
        source: Source::Stored(|r| u32s(&r.compute.host)),
        ..U32
    },
    Field { name: "compute.start_ps", description: "when the step started", source: Source::Stored(|r| times(&r.compute.start_ps)), ..TIME },
    Field { name: "compute.end_ps", description: "when the step ended", source: Source::Stored(|r| times(&r.compute.end_ps)), ..TIME },
    // ---- timeline: throughput bins of `measure.throughput_interval`
    Field {
        name: "timeline.rx_payload_bytes",
        unit: "bytes",
        description: "payload bytes delivered in each bin",
        source: Source::Stored(|r| u64s(&r.rx_bins)),
        ..U64
    },
    // ---- hosts: busy times of the hosts that compute or communicate (workloads with compute steps)
    Field { name: "hosts.node", labels: Some(Labels::NodeNames), description: "the host", source: Source::Stored(|r| u32s(&r.hosts.node)), ..U32 },
    Field {
        name: "hosts.compute_ps",
        unit: "ps",
        description: "time at least one compute step runs",
        source: Source::Stored(|r| u64s(&r.hosts.compute_ps)),
        ..U64
    },
    Field {
        name: "hosts.comm_ps",
        unit: "ps",
        description: "time at least one of its messages is between its start and its delivery",
        source: Source::Stored(|r| u64s(&r.hosts.comm_ps)),
        ..U64
    },
    Field {
        name: "hosts.exposed_comm_ps",
        unit: "ps",
        description: "communication time no compute overlaps",
        source: Source::Stored(|r| u64s(&r.hosts.exposed_comm_ps)),
        ..U64
    },
    // ---- roce: per port (rows as queues), runs with PFC, ECN or RDMA
    Field {
        name: "roce.pause_tx",
        unit: "frames",
        when: "roce",
        description: "PAUSE frames the port's ingress sent upstream",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.pause_tx))),
        ..U64
    },
    Field {
        name: "roce.pause_rx",
        unit: "frames",
        when: "roce",
        description: "PAUSE frames the port received",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.pause_rx))),
        ..U64
    },
    Field {
        name: "roce.paused_ps",
        unit: "ps",
        when: "roce",
        description: "time the port's data priority was paused",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.paused_ps))),
        ..U64
    },
    Field {
        name: "roce.ecn_marks",
        unit: "packets",
        when: "roce",
        description: "packets marked Congestion Experienced at the port's egress",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.ecn_marks))),
        ..U64
    },
    Field {
        name: "roce.peak_ingress_bytes",
        unit: "bytes",
        when: "roce",
        description: "peak bytes the port's ingress held in a shared-buffer switch",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.peak_ingress_bytes))),
        ..U64
    },
    // ---- rates: the RDMA rate log, one row per rate change of a queue pair
    Field {
        name: "rates.t_ps",
        unit: "ps",
        when: "roce",
        description: "when the rate changed",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.rate_t_ps))),
        ..U64
    },
    Field {
        name: "rates.flow",
        when: "roce",
        description: "the queue pair's data flow (its row in flows)",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u32s(&x.rate_flow))),
        ..U32
    },
    Field {
        name: "rates.rate_bps",
        unit: "b/s",
        when: "roce",
        description: "the new rate",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.rate_bps))),
        ..U64
    },
    // ---- windows: the UEC window log, one row per change of a connection's window (NSCC) or credit (RCCC)
    Field {
        name: "windows.t_ps",
        unit: "ps",
        when: "uec",
        description: "when the window or credit changed (by an MTU or more, or 1 us after the last row)",
        source: Source::Stored(|r| r.uec.as_ref().and_then(|u| u64s(&u.window_t_ps))),
        ..U64
    },
    Field {
        name: "windows.flow",
        when: "uec",
        description: "the connection's data flow (its row in flows)",
        source: Source::Stored(|r| r.uec.as_ref().and_then(|u| u32s(&u.window_flow))),
        ..U32
    },
    Field {
        name: "windows.bytes",
        unit: "bytes",
        when: "uec",
        description: "NSCC's congestion window, or RCCC's credit (clamped at 0)",
        source: Source::Stored(|r| r.uec.as_ref().and_then(|u| u64s(&u.window_bytes))),
        ..U64
    },
    // ---- pfc: the PFC frame log, one row per PAUSE or RESUME taking effect
    Field {
        name: "pfc.t_ps",
        unit: "ps",
        when: "roce",
        description: "when the frame took effect",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u64s(&x.pfc_t_ps))),
        ..U64
    },
    Field {
        name: "pfc.port",
        labels: Some(Labels::QueueNames),
        when: "roce",
        description: "the paused port (the upstream sender's)",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| u32s(&x.pfc_port))),
        ..U32
    },
    Field {
        name: "pfc.pause",
        dtype: Dtype::Bool,
        when: "roce",
        description: "PAUSE (true) or RESUME (false)",
        source: Source::Stored(|r| r.roce.as_ref().and_then(|x| bools(&x.pfc_pause))),
        ..U64
    },
];

/// The fields of `table` ("flows"), in order.
pub fn fields(table: &str) -> impl Iterator<Item = &'static Field> + '_ {
    FIELDS.iter().filter(move |f| f.table() == table)
}

/// One table's stored columns (`name` → values), all of one length.
#[derive(Clone, Debug, Default)]
pub struct Table<'a> {
    pub table: &'static str,
    pub rows: usize,
    pub columns: Vec<(&'static str, Values<'a>)>,
}

impl<'a> Table<'a> {
    /// `table` of the record `r` (the columns it has).
    pub fn of_record(r: &'a RunRecord, table: &'static str) -> Table<'a> {
        let mut t = Table { table, ..Table::default() };
        for f in fields(table) {
            if let Source::Stored(get) = f.source {
                if let Some(v) = get(r) {
                    t.rows = v.len();
                    t.columns.push((f.name, v));
                }
            }
        }
        t
    }

    /// `table` from columns keyed by full name (as the binding reads them), checked against the schema: every
    /// stored column the record always has is there, with its dtype, and all have one length; `Err` says which
    /// column is wrong.
    pub fn from_columns(table: &'static str, mut get: impl FnMut(&'static Field) -> Option<Values<'a>>) -> Result<Table<'a>, String> {
        let mut t = Table { table, ..Table::default() };
        let mut len = None;
        for f in fields(table) {
            if !matches!(f.source, Source::Stored(_)) {
                continue;
            }
            match get(f) {
                Some(v) if v.dtype() != f.dtype => return Err(format!("{}: expected {}, got {}", f.name, f.dtype.as_str(), v.dtype().as_str())),
                Some(v) if *len.get_or_insert(v.len()) != v.len() => return Err(format!("{}: the {table} columns differ in length", f.name)),
                Some(v) => t.columns.push((f.name, v)),
                None if f.when.is_empty() => return Err(format!("{}: missing", f.name)),
                None => {}
            }
        }
        t.rows = len.unwrap_or(0);
        Ok(t)
    }

    pub fn get(&self, name: &str) -> Option<&Values<'a>> {
        self.columns.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// A u64 column; empty when absent (a derived metric then reads zeros: see `at`).
    fn u64s(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(Values::U64(v)) => v,
            _ => &[],
        }
    }
}

/// Row i of a column, 0 when the column is absent or short.
fn at(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(0)
}

/// FlowMonitor's throughput: rx_bytes · 8 / (last_rx − first_tx), 0 without a positive span.
fn throughput_bps(t: &Table<'_>) -> Vec<f64> {
    let (rx, ftx, lrx) = (t.u64s("flows.rx_bytes"), t.u64s("flows.first_tx_ps"), t.u64s("flows.last_rx_ps"));
    (0..t.rows)
        .map(|i| {
            let (a, b) = (at(ftx, i), at(lrx, i));
            let span = if a != MISSING && b != MISSING { b as i128 - a as i128 } else { 0 };
            if span > 0 {
                at(rx, i).wrapping_mul(8) as f64 / (span as f64 * PS)
            } else {
                0.0
            }
        })
        .collect()
}

/// Mean one-way delay of the received packets (NaN when none was).
fn mean_delay_s(t: &Table<'_>) -> Vec<f64> {
    let (sum, rx) = (t.u64s("flows.delay_sum_ps"), t.u64s("flows.rx_packets"));
    (0..t.rows).map(|i| if at(rx, i) > 0 { at(sum, i) as f64 * PS / at(rx, i) as f64 } else { f64::NAN }).collect()
}

/// Largest one-way delay in seconds (NaN when nothing was received).
fn max_delay_s(t: &Table<'_>) -> Vec<f64> {
    let (max, rx) = (t.u64s("flows.max_delay_ps"), t.u64s("flows.rx_packets"));
    (0..t.rows).map(|i| if at(rx, i) > 0 { at(max, i) as f64 * PS } else { f64::NAN }).collect()
}

/// The derived fields of `t`'s table, each (name, values).
pub fn derive(t: &Table<'_>) -> Vec<(&'static str, Vec<f64>)> {
    fields(t.table)
        .filter_map(|f| match f.source {
            Source::Derived(d) => Some((f.name, d(t))),
            _ => None,
        })
        .collect()
}

/// The name lists labels index: the record's node, flow and queue names.
#[derive(Clone, Copy, Debug, Default)]
pub struct Names<'a> {
    pub node_names: &'a [String],
    pub flow_names: &'a [String],
    pub queue_names: &'a [String],
}

impl<'a> Names<'a> {
    pub fn of_record(r: &'a RunRecord) -> Names<'a> {
        Names { node_names: &r.node_names, flow_names: &r.flow_names, queue_names: &r.queues.name }
    }

    /// Each label of `l` as a JSON string.
    fn quoted(&self, l: Labels) -> Vec<String> {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
        match l {
            Labels::FlowNames => self.flow_names.iter().map(|s| q(s)).collect(),
            Labels::NodeNames => self.node_names.iter().map(|s| q(s)).collect(),
            Labels::QueueNames => self.queue_names.iter().map(|s| q(s)).collect(),
            Labels::FlowKinds => FLOW_KINDS.iter().map(|s| q(s)).collect(),
        }
    }
}

/// Append a float in Rust's shortest round-trip digits (ryu; integral values keep ".0"; non-finite → null).
fn fnum(out: &mut String, x: f64) {
    if x.is_finite() {
        out.push_str(ryu::Buffer::new().format_finite(x));
    } else {
        out.push_str("null");
    }
}

/// How one JSON field reads its row (the common column types as plain slices, for speed).
enum Cell<'t> {
    Label(&'t Values<'t>, Vec<String>),
    Label32(&'t [u32], Vec<String>),
    RowName(Vec<String>),
    Int(&'t Values<'t>),
    Int64(&'t [u64]),
    Seconds(&'t [u64]),
    Float(Vec<f64>),
}

/// The `--json` rows of table `t` (its fields with a `json` key, in `FIELDS` order) as one JSON array
/// (`json.dumps` separators), the rows `only` names or all of them. Fields the table lacks are left out.
/// O(rows · fields).
pub fn rows_json(t: &Table<'_>, names: &Names<'_>, only: Option<&[usize]>) -> String {
    let mut cells: Vec<(String, Cell)> = Vec::new();
    for f in fields(t.table) {
        let Some((key, form)) = f.json else { continue };
        let cell = match (f.source, form) {
            (Source::RowName, _) => Cell::RowName(names.quoted(f.labels.unwrap_or(Labels::QueueNames))),
            (Source::Derived(d), _) => Cell::Float(d(t)),
            (Source::Stored(_), form) => match (t.get(f.name), form) {
                (None, _) => continue,
                (Some(Values::U32(v)), Json::Label) => Cell::Label32(v, names.quoted(f.labels.unwrap_or(Labels::FlowNames))),
                (Some(v), Json::Label) => Cell::Label(v, names.quoted(f.labels.unwrap_or(Labels::FlowNames))),
                (Some(Values::U64(v)), Json::Seconds) => Cell::Seconds(v),
                (Some(Values::U64(v)), _) => Cell::Int64(v),
                (Some(Values::F64(v)), _) => Cell::Float(v.clone()),
                (Some(v), _) => Cell::Int(v),
            },
        };
        let sep = if cells.is_empty() { "{" } else { ", " };
        cells.push((format!("{sep}{}: ", serde_json::to_string(key).unwrap_or_default()), cell));
    }
    let all: Vec<usize>;
    let rows = match only {
        Some(r) => r,
        None => {
            all = (0..t.rows).collect();
            &all
        }
    };
    // Room for every row at 24 bytes a value, so the text is never moved while growing (pages never written cost nothing).
    let per_row = cells.iter().map(|(k, _)| k.len() + 24).sum::<usize>() + 2;
    let mut out = String::with_capacity(rows.len() * per_row + 2);
    let mut ints = itoa::Buffer::new();
    fn label(pool: &[String], k: u64) -> &str {
        pool.get(k as usize).map_or("\"\"", String::as_str)
    }
    out.push('[');
    for (n, &i) in rows.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        for (key, cell) in &cells {
            out.push_str(key);
            match cell {
                Cell::Label(v, pool) => out.push_str(label(pool, v.int(i))),
                Cell::Label32(v, pool) => out.push_str(label(pool, v[i] as u64)),
                Cell::Int64(v) => out.push_str(ints.format(v[i])),
                Cell::RowName(pool) => out.push_str(label(pool, i as u64)),
                Cell::Int(v) => out.push_str(ints.format(v.int(i))),
                Cell::Seconds(v) if v[i] == MISSING => out.push_str("null"),
                Cell::Seconds(v) => fnum(&mut out, v[i] as f64 * PS),
                Cell::Float(v) => fnum(&mut out, v[i]),
            }
        }
        if !cells.is_empty() {
            out.push('}');
        }
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_tables_grouped() {
        let mut seen = std::collections::HashSet::new();
        let mut tables: Vec<&str> = Vec::new();
        for f in FIELDS {
            assert!(seen.insert(f.name), "{} declared twice", f.name);
            if tables.last() != Some(&f.table()) {
                assert!(!tables.contains(&f.table()), "{}'s table is split", f.name);
                tables.push(f.table());
            }
        }
    }

    #[test]
    fn every_stored_column_of_a_full_record_is_declared_once() {
        let r =
            RunRecord { fast_forward: Some(Default::default()), roce: Some(Default::default()), uec: Some(Default::default()), ..Default::default() };
        let stored = FIELDS.iter().filter(|f| matches!(f.source, Source::Stored(g) if g(&r).is_some())).count();
        assert_eq!(stored, FIELDS.iter().filter(|f| matches!(f.source, Source::Stored(_))).count());
        for f in FIELDS {
            if let Source::Stored(g) = f.source {
                assert_eq!(g(&r).map(|v| v.dtype()), Some(f.dtype), "{}", f.name);
            }
        }
    }

    #[test]
    fn a_flow_row_by_hand() {
        let mut r = RunRecord { node_names: vec!["a".into(), "b".into()], flow_names: vec!["m".into()], ..Default::default() };
        let f = &mut r.flows;
        f.name = vec![0, u32::MAX];
        f.kind = vec![crate::record::FlowKind::Message; 2];
        (f.src, f.dst) = (vec![0, 1], vec![1, 0]);
        (f.tx_packets, f.rx_packets, f.lost_packets) = (vec![2, 1], vec![2, 0], vec![0, 1]);
        (f.tx_bytes, f.rx_bytes, f.rx_payload_bytes) = (vec![2000, 1000], vec![2000, 0], vec![2000, 0]);
        (f.delay_sum_ps, f.max_delay_ps) = (vec![3_000_000, 0], vec![2_000_000, 0]);
        f.first_tx_ps = vec![Some(0), Some(5)];
        f.last_tx_ps = f.first_tx_ps.clone();
        (f.first_rx_ps, f.last_rx_ps) = (vec![Some(1_000_000), None], vec![Some(2_000_000), None]);
        (f.start_ps, f.complete_ps) = (vec![Some(0), Some(5)], vec![Some(2_000_000), None]);
        let json = rows_json(&Table::of_record(&r, "flows"), &Names::of_record(&r), None);
        assert_eq!(
            json,
            "[{\"name\": \"m\", \"kind\": \"message\", \"src\": \"a\", \"dst\": \"b\", \"tx_packets\": 2, \"rx_packets\": 2, \
             \"lost_packets\": 0, \"tx_bytes\": 2000, \"rx_bytes\": 2000, \"throughput_bps\": 8000000000.0, \"mean_delay_s\": 1.5e-6, \
             \"max_delay_s\": 2e-6, \"first_tx_s\": 0.0, \"last_rx_s\": 2e-6, \"start_s\": 0.0, \"complete_s\": 2e-6}, \
             {\"name\": \"\", \"kind\": \"message\", \"src\": \"b\", \"dst\": \"a\", \"tx_packets\": 1, \"rx_packets\": 0, \
             \"lost_packets\": 1, \"tx_bytes\": 1000, \"rx_bytes\": 0, \"throughput_bps\": 0.0, \"mean_delay_s\": null, \
             \"max_delay_s\": null, \"first_tx_s\": 5e-12, \"last_rx_s\": null, \"start_s\": 5e-12, \"complete_s\": null}]"
        );
    }
}
