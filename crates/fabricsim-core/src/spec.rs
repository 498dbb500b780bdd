//! The wire spec: the resolved, unit-normalised scenario every engine consumes (JSON from Python's spec.py).
//!
//! Nodes are dense indices into `network.nodes`; a host's NICs are its ports, numbered in the order its
//! links appear in `network.links`. All times are picoseconds, sizes bytes, rates bits per second.
//! `validate` rejects every impossible value with the dotted path of the offending field.

use crate::error::{Error, Result};
pub use crate::roce::{EcnSpec, EcnThreshold, PfcSpec, RdmaCc, RdmaSpec};
pub use crate::uec::{UecCc, UecSpec, UecSpray};
use crate::workload::collectives::CollectiveSpec;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub seed: u64,
    /// Stop the run at this time; `None` runs until no event is left.
    #[serde(default)]
    pub stop_ps: Option<u64>,
    pub network: NetworkSpec,
    #[serde(default)]
    pub routing: RoutingSpec,
    #[serde(default)]
    pub sources: Vec<SourceSpec>,
    #[serde(default)]
    pub messages: Vec<MessageSpec>,
    /// TCP connections (each a BulkSend application); flow records list their data flows after the
    /// messages, then their ACK flows, as FlowMonitor classifies the two directions separately.
    #[serde(default)]
    pub tcp: Vec<TcpSpec>,
    /// Synchronisation points of the workload DAG (see `BarrierSpec`).
    #[serde(default)]
    pub barriers: Vec<BarrierSpec>,
    /// Collectives expanded into the workload by `compile`, after the message rows and columns.
    #[serde(default)]
    pub collectives: Vec<CollectiveSpec>,
    #[serde(default)]
    pub measure: MeasureSpec,
    /// Link failures, repairs and bit-error rates during the run (packet engine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<NetEventSpec>,
    /// PFC of the shared-buffer switches (required when a switch has `model = shared_buffer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSpec>,
    /// ECN marking at every switch egress port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnSpec>,
    /// When present, every message (and collective) runs over the RDMA transport, one QP per message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma: Option<RdmaSpec>,
    /// When present, every message (and collective) runs over the Ultra Ethernet transport (`crate::uec`), one
    /// connection per message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uec: Option<UecSpec>,
    /// The steady-state detector of `fidelity = "hybrid"` (ignored at packet and flow fidelity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridSpec>,
    /// The message transport's retransmission (`RetransmitSpec`; None: its defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmit: Option<RetransmitSpec>,
}

/// The message transport's retransmission: selective repeat on a timeout. A message that lost packets (a full
/// queue, a dead link, a bit error) re-sends exactly those packets `rto_ps` after its last transmission; each
/// further timeout without progress doubles the wait, and after `max_retries` of them the message is abandoned
/// (the run ends incomplete). `max_retries = 0` turns retransmission off.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetransmitSpec {
    /// The retransmission timeout (ps; default 100 µs).
    #[serde(default = "RetransmitSpec::default_rto_ps")]
    pub rto_ps: u64,
    /// Consecutive timeouts without progress before a message is abandoned (default 7, InfiniBand's largest
    /// retry count).
    #[serde(default = "RetransmitSpec::default_max_retries")]
    pub max_retries: u32,
}

impl RetransmitSpec {
    fn default_rto_ps() -> u64 {
        100_000_000
    }
    fn default_max_retries() -> u32 {
        7
    }

    /// Check the knobs: a timeout of 1 ns to 1 s, at most 16 retries (so that the backed-off wait, at most
    /// 2^16 s, never nears 2^64 ps).
    pub fn validate(&self) -> Result<()> {
        if !(1_000..=1_000_000_000_000).contains(&self.rto_ps) {
            return Err(Error::spec("retransmit.rto_ps", format!("must be 1 ns to 1 s, not {} ps", self.rto_ps)));
        }
        if self.max_retries > 16 {
            return Err(Error::spec("retransmit.max_retries", format!("must be 0 to 16, not {}", self.max_retries)));
        }
        Ok(())
    }
}

impl Default for RetransmitSpec {
    fn default() -> Self {
        RetransmitSpec { rto_ps: Self::default_rto_ps(), max_retries: Self::default_max_retries() }
    }
}

/// The knobs of hybrid fidelity's steady-state fast-forward (issue 30). The network is steady when, over
/// `windows` consecutive windows of `window_ps`, the same flows were active, each flow's packets sent and
/// delivered per window stayed within `tolerance` of their mean (or within 2 packets, whichever is larger), and
/// every port's queue at the window boundaries stayed within `tolerance` of its largest value plus two packets.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HybridSpec {
    /// Window length in ps; `None` = automatic: 4 × the longest base round trip (propagation and switch traversal) of the workload's routes
    /// (at least 1 µs), and with DCQCN at least 2 × its alpha-update and rate-decrease periods.
    #[serde(default)]
    pub window_ps: Option<u64>,
    /// Relative tolerance of "held steady" (default 0.02).
    #[serde(default = "HybridSpec::default_tolerance")]
    pub tolerance: f64,
    /// Consecutive steady windows before a jump (default 3).
    #[serde(default = "HybridSpec::default_windows")]
    pub windows: u32,
}

impl HybridSpec {
    fn default_tolerance() -> f64 {
        0.02
    }
    fn default_windows() -> u32 {
        3
    }

    /// Check the knobs: a window of at least 1 ns, a tolerance in (0, 1), 2 to 64 windows.
    pub fn validate(&self) -> Result<()> {
        if self.window_ps.is_some_and(|w| w < 1_000) {
            return Err(Error::spec("hybrid.window", "must be at least 1 ns"));
        }
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(Error::spec("hybrid.tolerance", format!("must be in (0, 1), not {}", self.tolerance)));
        }
        if !(2..=64).contains(&self.windows) {
            return Err(Error::spec("hybrid.windows", format!("must be 2 to 64, not {}", self.windows)));
        }
        Ok(())
    }
}

impl Default for HybridSpec {
    fn default() -> Self {
        HybridSpec { window_ps: None, tolerance: Self::default_tolerance(), windows: Self::default_windows() }
    }
}

/// A change of the network at `at_ps`: `links` go down or up, get a bit error rate `ber` (0 clears it), or
/// run at a new rate `rate_bps` in both directions (`link_rate`; 0 on every other kind). A switch going down is
/// every link of the switch going down.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetEventSpec {
    pub at_ps: u64,
    pub kind: NetEventKind,
    pub links: Vec<u32>,
    #[serde(default)]
    pub ber: f64,
    #[serde(default)]
    pub rate_bps: u64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NetEventKind {
    LinkDown,
    LinkUp,
    Ber,
    LinkRate,
}

/// A barrier of the workload DAG: it completes (carrying no traffic) when every message in `deps` has been
/// delivered and every barrier in `barriers` has completed; messages listing it start only after that.
/// N messages waiting for M others through one barrier cost N + M edges instead of N·M.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BarrierSpec {
    pub name: String,
    #[serde(default)]
    pub deps: Vec<u32>,
    #[serde(default)]
    pub barriers: Vec<u32>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TcpCc {
    /// ns-3 3.44's default (TcpCubic with HyStart).
    #[default]
    Cubic,
    NewReno,
}

/// A TCP connection from `src` to `dst` driven by a BulkSend application (send as fast as TCP allows).
/// Defaults (set by spec.py) are ns-3 3.44's.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    pub name: String,
    pub src: u32,
    #[serde(default)]
    pub src_nic: u32,
    pub dst: u32,
    #[serde(default)]
    pub dst_nic: u32,
    pub cc: TcpCc,
    #[serde(default)]
    pub start_ps: u64,
    #[serde(default)]
    pub stop_ps: Option<u64>,
    /// Total bytes to send (BulkSend MaxBytes); `None` = unlimited.
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// Maximum segment size (payload bytes per data packet).
    pub mss_bytes: u64,
    /// Header bytes on every segment and ACK (IP + TCP + options + link header).
    pub header_bytes: u64,
    /// Initial congestion window in segments.
    pub initial_cwnd: u32,
    pub min_rto_ps: u64,
    pub initial_rto_ps: u64,
    /// RTO timer granularity (ns-3 ClockGranularity).
    pub clock_granularity_ps: u64,
    /// ACK every this many segments (delayed ACKs) ...
    pub delack_count: u32,
    /// ... or when this timer expires.
    pub delack_timeout_ps: u64,
    /// Receiver buffer: the advertised window never exceeds it.
    pub rcv_buf_bytes: u64,
    /// Sender buffer: unacknowledged plus unsent bytes never exceed it.
    pub snd_buf_bytes: u64,
    /// The application writes into the sender buffer in chunks of this size (ns-3 BulkSend SendSize),
    /// whenever a whole chunk fits; with Nagle off, segments can then be shorter than the MSS.
    pub app_write_bytes: u64,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Selective acknowledgements.
    pub sack: bool,
    #[serde(default)]
    pub path: Option<Vec<u32>>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Host,
    Switch,
}

/// How a switch buffers packets.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SwitchModel {
    /// Lossy: an egress buffer per output port (DropTail or a discipline); full buffers drop.
    #[default]
    OutputQueued,
    /// Lossless: an input buffer per input port holding a virtual output queue per output port, a
    /// round-robin arbiter per output, and credit-based link-level flow control (the upstream port sends
    /// only when the input buffer has room; credits return over the reverse link). Never drops.
    InputBuffered,
    /// RoCE: one buffer shared by all ports with per-ingress-port accounting (reserve, dynamic threshold,
    /// headroom), PFC PAUSE/RESUME upstream, and strict priority of control packets; see `PfcSpec`.
    SharedBuffer,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
    /// Traversal latency added to every packet entering this node (switches), in ps.
    #[serde(default)]
    pub latency_ps: u64,
    /// Switches only.
    #[serde(default)]
    pub model: SwitchModel,
    /// Input buffer per input port of an input-buffered switch.
    #[serde(default = "default_input_buffer")]
    pub input_buffer_bytes: u64,
    /// How an input-buffered switch's output picks among its inputs' virtual output queues.
    #[serde(default, skip_serializing_if = "Arbiter::is_round_robin")]
    pub arbiter: Arbiter,
}

/// The output arbiter of an input-buffered switch.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arbiter {
    /// Round-robin over the inputs with a packet for this output (iSLIP-like, one grant per packet).
    #[default]
    RoundRobin,
    /// Oldest first: the head packet that reached the switch earliest, over all inputs (output FIFO order).
    Fifo,
}

impl Arbiter {
    fn is_round_robin(&self) -> bool {
        *self == Arbiter::RoundRobin
    }
}

fn one() -> u32 {
    1
}

fn is_one(w: &u32) -> bool {
    *w == 1
}

fn default_input_buffer() -> u64 {
    128 * 1024
}

impl NodeSpec {
    /// A node with the default (output-queued) switch model and buffer.
    pub fn new(name: impl Into<String>, kind: NodeKind, latency_ps: u64) -> NodeSpec {
        NodeSpec {
            name: name.into(),
            kind,
            latency_ps,
            model: SwitchModel::default(),
            input_buffer_bytes: default_input_buffer(),
            arbiter: Arbiter::default(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Egress queue of every port that has no override.
    #[serde(default)]
    pub default_queue: EgressSpec,
    /// The topology family the scenario wrote ("custom", "leaf_spine", …), so that an error names a node or a
    /// link as the user wrote it (`node_field`, `link_field`); absent in a hand-made wire spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
}

impl NetworkSpec {
    /// How an error names `rest` (".model", ".name", "") of node `i`: `topology.nodes[i]…` in a custom
    /// topology; in a generated one, whose nodes the user never listed, `topology (KIND) node 'NAME'…`, and a
    /// node's model as the family's key `topology.switch_model`; `network.nodes[i]…` in a hand-made wire spec.
    pub fn node_field(&self, i: usize, rest: &str) -> String {
        match self.topology.as_deref() {
            None => format!("network.nodes[{i}]{rest}"),
            Some("custom") => format!("topology.nodes[{i}]{rest}"),
            Some(_) if rest == ".model" => "topology.switch_model".into(),
            Some(kind) => match self.nodes.get(i) {
                Some(n) => format!("topology ({kind}) node '{}'{rest}", n.name),
                None => format!("network.nodes[{i}]{rest}"),
            },
        }
    }

    /// How an error names `rest` of link `i`: as `node_field`, a generated topology's link said by its ends
    /// (`topology (KIND) link a-b…`).
    pub fn link_field(&self, i: usize, rest: &str) -> String {
        let name = |n: u32| self.nodes.get(n as usize).map(|x| x.name.as_str()).unwrap_or("?");
        match (self.topology.as_deref(), self.links.get(i)) {
            (Some("custom"), _) => format!("topology.links[{i}]{rest}"),
            (Some(kind), Some(l)) => format!("topology ({kind}) link {}-{}{rest}", name(l.a), name(l.b)),
            _ => format!("network.links[{i}]{rest}"),
        }
    }
}

/// A full-duplex point-to-point link between `a` and `b`; each direction has its own egress port.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    pub rate_bps: u64,
    #[serde(default)]
    pub delay_ps: u64,
    /// Routing cost of the link in both directions (least-cost ECMP); 1 for every link gives fewest hops.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: u32,
    /// Egress configuration of a's port toward b.
    #[serde(default)]
    pub a_end: PortSpec,
    /// Egress configuration of b's port toward a.
    #[serde(default)]
    pub b_end: PortSpec,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    /// Overrides `network.default_queue` for this port.
    #[serde(default)]
    pub queue: Option<EgressSpec>,
    /// Injection-rate cap (a shaper: packets serialise at the link rate, starts spaced at size/cap).
    #[serde(default)]
    pub rate_cap_bps: Option<u64>,
    /// Error model (as ns-3's ListErrorModel): drop the packets offered to this port whose arrival index
    /// (0-based, counting every packet offered to the port) is listed.
    #[serde(default)]
    pub drop_packets: Vec<u64>,
}

/// An egress port's buffering: a device queue (DropTail) and an optional queue discipline above it.
/// The discipline releases a packet only when the device queue has room (ns-3 / Linux structure).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EgressSpec {
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    #[serde(default)]
    pub qdisc: Option<QdiscSpec>,
}

impl Default for EgressSpec {
    fn default() -> Self {
        EgressSpec { limit_packets: Some(100), limit_bytes: None, qdisc: None }
    }
}

/// Queue disciplines that may sit above a device queue.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscSpec {
    /// DropTail FIFO limited in packets and/or bytes.
    Fifo {
        #[serde(default)]
        limit_packets: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
    },
    /// CoDel (RFC 8289) as in Linux and ns-3: drops at dequeue when the sojourn time stays above `target`
    /// for `interval`; a queue with fewer than `min_bytes` is never dropped from.
    Codel { limit_packets: u64, target_ps: u64, interval_ps: u64, min_bytes: u64 },
    /// FQ-CoDel (RFC 8290): `flows` hashed queues, deficit round robin with `quantum_bytes`, new/old flow
    /// lists, CoDel per flow; past `limit_packets`, up to `drop_batch` packets (half the bytes) are dropped
    /// from the head of the fattest flow.
    FqCodel { limit_packets: u64, flows: u32, quantum_bytes: u32, target_ps: u64, interval_ps: u64, min_bytes: u64, drop_batch: u32 },
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcmpMode {
    /// One next hop per flow at every stage: a hash of (flow id, seed, node).
    #[default]
    PerFlow,
    /// A random next hop at every stage per message (per source for UDP), all its packets on one path; the
    /// randomness is a hash of (seed, message), so every engine routes a seed identically.
    PerMessage,
    /// A random next hop for every packet at every stage.
    PerPacket,
    /// Flowlets: per message (as `PerMessage`), but a message that pauses longer than
    /// `RoutingSpec::flowlet_gap_ps` between two of its packets at its NIC draws a new path for what follows
    /// (packets already in flight follow the new draw at their remaining stages).
    Flowlet,
    /// Adaptive routing: every packet takes the candidate port with the fewest bytes queued for it (egress
    /// queue, or virtual output queues on a lossless switch), ties broken by the per-flow hash. The flow
    /// engine, which has no queues, spreads the flow evenly over its candidates instead (ideal balancing).
    /// A message with an explicit path keeps the path's port unless another equal-cost port has fewer bytes
    /// queued (InfiniBand adaptive routing over a static Ftree route), then follows the FIB; the flow engine
    /// keeps the path.
    Adaptive,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    #[serde(default)]
    pub ecmp: EcmpMode,
    /// The topology family's routing on top of least-cost ECMP.
    #[serde(default, skip_serializing_if = "PolicySpec::is_minimal")]
    pub policy: PolicySpec,
    /// After a link goes down or up, the switches recompute their tables this much later; until then packets
    /// sent into a dead link are lost.
    #[serde(default = "default_detection_delay")]
    pub detection_delay_ps: u64,
    /// The idle gap that starts a new flowlet (`ecmp = flowlet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flowlet_gap_ps: Option<u64>,
}

/// 100 µs: a loss-of-signal link-down detection and table update in a data-center switch (sub-millisecond).
fn default_detection_delay() -> u64 {
    100_000_000
}

/// How routes are chosen. Node lists are dense node indices.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicySpec {
    /// Least-cost ECMP forwarding tables (link weights; fewest hops when every weight is 1).
    #[default]
    Minimal,
    /// Dimension-order routing: `routers[i]` sits at linear coordinate i (first dimension fastest); a packet
    /// corrects the first differing coordinate within that dimension's group of routers (those that differ only
    /// there): around a ring the shorter way (positive on a tie), to the target's router directly when the
    /// group is fully connected, or through the group's switch (`switches[k][group]`). `shapes` empty: every
    /// dimension a ring (a torus).
    DimensionOrder {
        dims: Vec<u32>,
        routers: Vec<u32>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        shapes: Vec<DimShape>,
        /// Per dimension: its switches, one per group in group order (empty for a ring or fully connected one).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        switches: Vec<Vec<u32>>,
    },
    /// Valiant routing on a dragonfly: between groups, minimal to a random router of a third group, then
    /// minimal on (the choice a hash of the seed and the flow); within a group, minimal.
    Valiant { groups: Vec<Vec<u32>> },
    /// NCCL's PXN on a rail-optimized cluster: a flow between GPUs of different servers and rails crosses the
    /// sender's NVSwitch to its GPU on the destination's rail and leaves through that GPU's NIC.
    Pxn { servers: Vec<RailServerSpec> },
}

/// How the routers of one dimension's group are joined (ASTRA-sim's building blocks).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DimShape {
    /// Each router linked to its two neighbours, with wrap-around.
    Ring,
    /// Every pair of routers linked.
    FullyConnected,
    /// Every router linked to the group's switch.
    Switch,
}

/// Group index of linear position `i` in dimension `k` (`stride` = the product of the sizes before k, `size`
/// = dims[k]): the groups of a dimension numbered in the order of their first member.
pub fn dim_group(i: usize, stride: usize, size: usize) -> usize {
    i % stride + i / (stride * size) * stride
}

impl Default for RoutingSpec {
    fn default() -> RoutingSpec {
        RoutingSpec { ecmp: EcmpMode::default(), policy: PolicySpec::default(), detection_delay_ps: default_detection_delay(), flowlet_gap_ps: None }
    }
}

impl PolicySpec {
    pub fn is_minimal(&self) -> bool {
        *self == PolicySpec::Minimal
    }
}

/// One server of a rail-optimized cluster: its NVSwitch, and per rail its GPU (a host) and the GPU's NIC switch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RailServerSpec {
    pub nvswitch: u32,
    pub gpus: Vec<u32>,
    pub nics: Vec<u32>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Constant bit rate from start to stop.
    Cbr,
    /// ns-3 OnOffApplication with constant on/off times (starts with an off period, as ns-3 does).
    Onoff,
}

/// A UDP traffic source (one FlowMonitor flow).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    pub name: String,
    pub kind: SourceKind,
    pub src: u32,
    #[serde(default)]
    pub src_nic: u32,
    pub dst: u32,
    #[serde(default)]
    pub dst_nic: u32,
    /// Application data rate (payload bits), as ns-3's OnOff DataRate.
    pub rate_bps: u64,
    pub packet_bytes: u64,
    #[serde(default)]
    pub header_bytes: u64,
    #[serde(default)]
    pub on_ps: u64,
    #[serde(default)]
    pub off_ps: u64,
    #[serde(default)]
    pub start_ps: u64,
    #[serde(default)]
    pub stop_ps: Option<u64>,
    /// Stop after this many payload bytes (ns-3 MaxBytes); `None` = unlimited.
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// Explicit path as node indices from src to dst; `None` = routing tables.
    #[serde(default)]
    pub path: Option<Vec<u32>>,
}

/// A message transfer: `size_bytes` of payload segmented into packets, paced by the sender's NIC.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MessageSpec {
    pub name: String,
    pub src: u32,
    #[serde(default)]
    pub src_nic: u32,
    pub dst: u32,
    #[serde(default)]
    pub dst_nic: u32,
    pub size_bytes: u64,
    pub packet_bytes: u64,
    #[serde(default)]
    pub header_bytes: u64,
    /// Earliest start time.
    #[serde(default)]
    pub start_ps: u64,
    /// Indices of messages that must complete (be fully delivered) first.
    #[serde(default)]
    pub deps: Vec<u32>,
    /// Indices of messages that must be fully *sent* first (their last packet handed to the NIC's
    /// transmitter): a node sending messages back to back without waiting for delivery.
    #[serde(default)]
    pub sent_deps: Vec<u32>,
    /// Indices of barriers that must complete first.
    #[serde(default)]
    pub barriers: Vec<u32>,
    /// Added after the later of `start_ps` and the last dependency's completion.
    #[serde(default)]
    pub delay_ps: u64,
    #[serde(default)]
    pub path: Option<Vec<u32>>,
}

impl MessageSpec {
    /// A message of `size_bytes` from host `src` to host `dst` (first NICs) in packets of `packet_bytes` payload
    /// plus `header_bytes`, starting at time 0 with no dependencies, delay or explicit path.
    pub fn new(name: impl Into<String>, src: u32, dst: u32, size_bytes: u64, packet_bytes: u64, header_bytes: u64) -> Self {
        MessageSpec {
            name: name.into(),
            src,
            src_nic: 0,
            dst,
            dst_nic: 0,
            size_bytes,
            packet_bytes,
            header_bytes,
            start_ps: 0,
            deps: vec![],
            sent_deps: vec![],
            barriers: vec![],
            delay_ps: 0,
            path: None,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// Sample queue depths every this many ps; `None` = no sampling.
    #[serde(default)]
    pub queue_sample_ps: Option<u64>,
    /// Ports to sample as (node, port index); `None` = every switch port.
    #[serde(default)]
    pub sample_ports: Option<Vec<(u32, u32)>>,
    /// Count delivered payload bytes in bins of this many ps (throughput over time); `None` = no bins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_bin_ps: Option<u64>,
}

/// Largest link weight: the tables' search keeps one bucket per weight value (Dial's algorithm).
pub const MAX_LINK_WEIGHT: u32 = 255;
/// The highest rate a `link_rate` event may set (bit/s): the scenario reader's ceiling on any rate, 1 Pb/s.
pub const MAX_EVENT_RATE_BPS: u128 = crate::scenario::units::MAX_RATE_BPS;
/// Largest packet we accept (jumbo frames are 9 KB; 64 KiB leaves room for TSO-like experiments).
pub const MAX_PACKET_BYTES: u64 = 65_536;
/// Largest single message (1 TiB).
pub const MAX_MESSAGE_BYTES: u64 = 1 << 40;

impl RunSpec {
    /// A spec of `network` with no workload, default routing and measurement, running until idle; fill the
    /// workload with struct-update syntax (`RunSpec { messages, ..RunSpec::new(seed, network) }`).
    pub fn new(seed: u64, network: NetworkSpec) -> RunSpec {
        RunSpec {
            seed,
            stop_ps: None,
            network,
            routing: RoutingSpec::default(),
            sources: vec![],
            messages: vec![],
            tcp: vec![],
            barriers: vec![],
            collectives: vec![],
            measure: MeasureSpec::default(),
            events: vec![],
            pfc: None,
            ecn: None,
            rdma: None,
            uec: None,
            hybrid: None,
            retransmit: None,
        }
    }

    /// Parse the JSON wire form; a serde error becomes a spec error naming the path serde reports.
    pub fn from_json(s: &str) -> Result<RunSpec> {
        let spec: RunSpec = serde_json::from_str(s).map_err(|e| Error::spec("spec", e.to_string()))?;
        spec.validate()?;
        Ok(spec)
    }

    /// The routing policy's node lists: in range, of the right kind, and consistent. O(listed nodes).
    fn validate_policy(&self) -> Result<()> {
        let nodes = &self.network.nodes;
        let check = |field: String, v: u32, kind: NodeKind| -> Result<()> {
            match nodes.get(v as usize) {
                None => Err(Error::spec(field, format!("node index {v} out of range (0..{})", nodes.len()))),
                Some(n) if n.kind != kind => {
                    let said = |k: NodeKind| if k == NodeKind::Host { "host" } else { "switch" };
                    Err(Error::spec(field, format!("'{}' is a {}, not a {}", n.name, said(n.kind), said(kind))))
                }
                _ => Ok(()),
            }
        };
        match &self.routing.policy {
            PolicySpec::Minimal => {}
            PolicySpec::DimensionOrder { dims, routers, shapes, switches } => {
                if dims.is_empty() || dims.contains(&0) {
                    return Err(Error::spec("routing.policy.dims", "needs at least one dimension, each of size > 0"));
                }
                let count: u64 = dims.iter().map(|&d| d as u64).product();
                if count != routers.len() as u64 {
                    return Err(Error::spec(
                        "routing.policy.routers",
                        format!("{} routers for dimensions {dims:?} ({count} positions)", routers.len()),
                    ));
                }
                for (i, &r) in routers.iter().enumerate() {
                    check(format!("routing.policy.routers[{i}]"), r, NodeKind::Switch)?;
                }
                if !shapes.is_empty() && shapes.len() != dims.len() {
                    return Err(Error::spec("routing.policy.shapes", format!("{} shapes for {} dimensions", shapes.len(), dims.len())));
                }
                if !switches.is_empty() && switches.len() != dims.len() {
                    return Err(Error::spec("routing.policy.switches", format!("{} switch lists for {} dimensions", switches.len(), dims.len())));
                }
                for (k, &d) in dims.iter().enumerate() {
                    let listed = switches.get(k).map_or(0, Vec::len) as u64;
                    let want = if shapes.get(k) == Some(&DimShape::Switch) { count / d as u64 } else { 0 };
                    if listed != want {
                        return Err(Error::spec(
                            format!("routing.policy.switches[{k}]"),
                            format!("{listed} switches for a dimension with {want} groups of its own switch"),
                        ));
                    }
                    for (g, &s) in switches.get(k).into_iter().flatten().enumerate() {
                        check(format!("routing.policy.switches[{k}][{g}]"), s, NodeKind::Switch)?;
                    }
                }
            }
            PolicySpec::Valiant { groups } => {
                if groups.len() < 2 {
                    return Err(Error::spec("routing.policy.groups", "Valiant routing needs at least two groups"));
                }
                for (g, rs) in groups.iter().enumerate() {
                    if rs.is_empty() {
                        return Err(Error::spec(format!("routing.policy.groups[{g}]"), "a group needs a router"));
                    }
                    for (i, &r) in rs.iter().enumerate() {
                        check(format!("routing.policy.groups[{g}][{i}]"), r, NodeKind::Switch)?;
                    }
                }
            }
            PolicySpec::Pxn { servers } => {
                for (k, s) in servers.iter().enumerate() {
                    let f = |x: &str| format!("routing.policy.servers[{k}].{x}");
                    check(f("nvswitch"), s.nvswitch, NodeKind::Switch)?;
                    if s.gpus.len() != s.nics.len() || s.gpus.is_empty() {
                        return Err(Error::spec(f("nics"), "one NIC switch per GPU (rail), and at least one GPU"));
                    }
                    for (i, (&g, &n)) in s.gpus.iter().zip(&s.nics).enumerate() {
                        check(f(&format!("gpus[{i}]")), g, NodeKind::Host)?;
                        check(f(&format!("nics[{i}]")), n, NodeKind::Switch)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Reject impossible values of the header (network, sources, TCP, measurement), among them a source or
    /// TCP connection that would send forever (no stop of its own, no byte limit and no scenario stop). The
    /// workload (message and barrier rows, columns, collectives) is checked by `Workload::validate` in
    /// `compile`. O(nodes + links + flows).
    pub fn validate(&self) -> Result<()> {
        let n = self.network.nodes.len() as u32;
        if n == 0 {
            return Err(Error::spec("network.nodes", "no nodes"));
        }
        let mut names = std::collections::HashSet::new();
        for (i, node) in self.network.nodes.iter().enumerate() {
            if node.name.is_empty() {
                return Err(Error::spec(self.network.node_field(i, ".name"), "empty name"));
            }
            if node.model == SwitchModel::SharedBuffer && node.kind == NodeKind::Switch && self.pfc.is_none() {
                return Err(Error::spec(
                    self.network.node_field(i, ".model"),
                    format!("'{}' is a shared-buffer switch but the scenario has no [pfc] section (its buffer, reserve, alpha)", node.name),
                ));
            }
            if node.model != SwitchModel::OutputQueued && node.kind != NodeKind::Switch {
                return Err(Error::spec(self.network.node_field(i, ".model"), "only switches have a switch model"));
            }
            if !names.insert(node.name.as_str()) {
                return Err(Error::spec(self.network.node_field(i, ".name"), format!("duplicate node name '{}'", node.name)));
            }
        }
        check_egress("network.default_queue", &self.network.default_queue)?;
        for (i, l) in self.network.links.iter().enumerate() {
            let f = |x: &str| self.network.link_field(i, &format!(".{x}"));
            if l.a >= n {
                return Err(Error::spec(f("a"), format!("node index {} out of range (0..{n})", l.a)));
            }
            if l.b >= n {
                return Err(Error::spec(f("b"), format!("node index {} out of range (0..{n})", l.b)));
            }
            if l.a == l.b {
                return Err(Error::spec(f("b"), "a link cannot connect a node to itself"));
            }
            if l.rate_bps == 0 {
                return Err(Error::spec(f("rate"), "must be > 0"));
            }
            if l.weight == 0 || l.weight > MAX_LINK_WEIGHT {
                return Err(Error::spec(f("weight"), format!("{} is not a routing weight in 1..={MAX_LINK_WEIGHT}", l.weight)));
            }
            for (end, p) in [("a_end", &l.a_end), ("b_end", &l.b_end)] {
                if let Some(q) = &p.queue {
                    check_egress(&f(&format!("{end}.queue")), q)?;
                }
                if p.rate_cap_bps == Some(0) {
                    return Err(Error::spec(f(&format!("{end}.rate_cap")), "must be > 0"));
                }
            }
        }
        self.validate_policy()?;
        match (self.routing.ecmp, self.routing.flowlet_gap_ps) {
            (EcmpMode::Flowlet, None | Some(0)) => {
                return Err(Error::spec("routing.flowlet_gap", "flowlet ECMP needs a gap > 0 (the idle time that starts a new flowlet)"))
            }
            (m, Some(_)) if m != EcmpMode::Flowlet => {
                return Err(Error::spec("routing.flowlet_gap", "a flowlet gap applies only with ecmp = flowlet"))
            }
            _ => {}
        }
        if let Some(p) = &self.pfc {
            p.validate()?;
        }
        if let Some(e) = &self.ecn {
            e.validate()?;
        }
        if let Some(h) = &self.hybrid {
            h.validate()?;
        }
        if let Some(r) = &self.retransmit {
            r.validate()?;
        }
        if let Some(r) = &self.rdma {
            r.validate()?;
            if let Some(i) = self.network.nodes.iter().position(|n| n.model == SwitchModel::InputBuffered && n.kind == NodeKind::Switch) {
                return Err(Error::spec(
                    self.network.node_field(i, ".model"),
                    "RDMA runs over shared_buffer (PFC) or output_queued switches, not credit-based input_buffered ones",
                ));
            }
            if r.cc == RdmaCc::Dcqcn && self.ecn.is_none() {
                return Err(Error::spec("rdma.cc", "dcqcn reacts to ECN marks, but the scenario has no [ecn] section"));
            }
        }
        if let Some(u) = &self.uec {
            u.validate()?;
            if self.rdma.is_some() {
                return Err(Error::spec("uec", "a scenario has one message transport: [uec] or [rdma], not both"));
            }
            if u.trimming {
                if let Some(i) = self.network.nodes.iter().position(|n| n.model == SwitchModel::InputBuffered && n.kind == NodeKind::Switch) {
                    return Err(Error::spec(
                        self.network.node_field(i, ".model"),
                        "UEC trimming needs output_queued or shared_buffer switches; a credit-based input_buffered switch never fills a queue to trim at (set uec.trimming = false, or change the switch model)",
                    ));
                }
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            let f = |x: &str| format!("events[{i}].{x}");
            if e.links.is_empty() {
                return Err(Error::spec(f("links"), "names no link"));
            }
            if let Some(&l) = e.links.iter().find(|&&l| l as usize >= self.network.links.len()) {
                return Err(Error::spec(f("links"), format!("link index {l} out of range (0..{})", self.network.links.len())));
            }
            if !(0.0..1.0).contains(&e.ber) {
                return Err(Error::spec(f("ber"), format!("{} is not a bit error rate in [0, 1)", e.ber)));
            }
            match (e.kind, e.rate_bps) {
                (NetEventKind::LinkRate, 0) => return Err(Error::spec(f("rate_bps"), "a link_rate event needs a rate > 0")),
                (NetEventKind::LinkRate, r) if r as u128 > MAX_EVENT_RATE_BPS => {
                    return Err(Error::spec(f("rate_bps"), format!("{r} bit/s is above the 1 Pb/s any link can run at")))
                }
                (NetEventKind::LinkRate, _) | (_, 0) => {}
                (_, _) => return Err(Error::spec(f("rate_bps"), "only a link_rate event sets a rate")),
            }
        }
        let nics = self.nic_counts();
        let check_end = |field: &str, node: u32, nic: u32| -> Result<()> {
            if node >= n {
                return Err(Error::spec(field, format!("node index {node} out of range (0..{n})")));
            }
            let spec = &self.network.nodes[node as usize];
            if spec.kind != NodeKind::Host {
                return Err(Error::spec(field, format!("'{}' is a switch; traffic starts and ends at hosts", spec.name)));
            }
            if nic >= nics[node as usize] {
                return Err(Error::spec(field, format!("'{}' has {} NIC(s); NIC {nic} does not exist", spec.name, nics[node as usize])));
            }
            Ok(())
        };
        let check_flow = |f: &dyn Fn(&str) -> String, src: u32, src_nic: u32, dst: u32, dst_nic: u32| -> Result<()> {
            check_end(&f("src"), src, src_nic)?;
            check_end(&f("dst"), dst, dst_nic)?;
            if src == dst && src_nic == dst_nic {
                return Err(Error::spec(f("dst_nic"), "source and destination are the same NIC of one host"));
            }
            Ok(())
        };
        for (i, s) in self.sources.iter().enumerate() {
            let f = |x: &str| format!("sources[{i}].{x}");
            check_flow(&f, s.src, s.src_nic, s.dst, s.dst_nic)?;
            if s.rate_bps == 0 {
                return Err(Error::spec(f("rate"), "must be > 0"));
            }
            check_packet(&f("packet_size"), s.packet_bytes, s.header_bytes)?;
            if s.kind == SourceKind::Onoff && s.on_ps == 0 {
                return Err(Error::spec(f("on"), "an on/off source needs an on time > 0"));
            }
            if let Some(stop) = s.stop_ps {
                if stop < s.start_ps {
                    return Err(Error::spec(f("stop"), "stop is before start"));
                }
            }
            if s.max_bytes == Some(0) {
                return Err(Error::spec(f("max_bytes"), "must be > 0 (omit it for no limit)"));
            }
            if self.stop_ps.is_none() && s.stop_ps.is_none() && s.max_bytes.is_none() {
                return Err(unbounded(&f("stop"), "source", &s.name, i, "sources"));
            }
        }
        for (i, t) in self.tcp.iter().enumerate() {
            let f = |x: &str| format!("tcp[{i}].{x}");
            check_flow(&f, t.src, t.src_nic, t.dst, t.dst_nic)?;
            check_packet(&f("mss"), t.mss_bytes, t.header_bytes)?;
            if t.initial_cwnd == 0 {
                return Err(Error::spec(f("initial_cwnd"), "must be > 0"));
            }
            if t.delack_count == 0 {
                return Err(Error::spec(f("delack_count"), "must be > 0"));
            }
            if t.dupack_threshold == 0 {
                return Err(Error::spec(f("dupack_threshold"), "must be > 0"));
            }
            if t.min_rto_ps == 0 || t.initial_rto_ps == 0 || t.clock_granularity_ps == 0 {
                return Err(Error::spec(f("min_rto"), "RTO times and clock granularity must be > 0"));
            }
            if t.rcv_buf_bytes < t.mss_bytes {
                return Err(Error::spec(f("rcv_buf"), "must hold at least one segment"));
            }
            if t.app_write_bytes == 0 || t.snd_buf_bytes < t.app_write_bytes {
                return Err(Error::spec(f("snd_buf"), "must hold at least one application write (> 0)"));
            }
            if t.max_bytes == Some(0) {
                return Err(Error::spec(f("max_bytes"), "must be > 0 (omit it for no limit)"));
            }
            if let Some(stop) = t.stop_ps {
                if stop < t.start_ps {
                    return Err(Error::spec(f("stop"), "stop is before start"));
                }
            }
            if self.stop_ps.is_none() && t.stop_ps.is_none() && t.max_bytes.is_none() {
                return Err(unbounded(&f("stop"), "TCP connection", &t.name, i, "tcp"));
            }
        }
        if self.measure.throughput_bin_ps == Some(0) {
            return Err(Error::spec("measure.throughput_interval", "must be > 0"));
        }
        if self.measure.queue_sample_ps == Some(0) {
            return Err(Error::spec("measure.queue_interval", "must be > 0"));
        }
        if let Some(ports) = &self.measure.sample_ports {
            let deg = self.degrees();
            for (i, &(node, port)) in ports.iter().enumerate() {
                if node >= n || port >= deg[node as usize] {
                    return Err(Error::spec(format!("measure.sample_ports[{i}]"), format!("no port {port} at node {node}")));
                }
            }
        }
        Ok(())
    }

    /// Number of ports of each node (links incident to it).
    pub fn degrees(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.network.nodes.len()];
        for l in &self.network.links {
            if (l.a as usize) < d.len() {
                d[l.a as usize] += 1;
            }
            if (l.b as usize) < d.len() {
                d[l.b as usize] += 1;
            }
        }
        d
    }

    /// NICs per node: a host's ports; switches have none.
    pub fn nic_counts(&self) -> Vec<u32> {
        let mut d = self.degrees();
        for (i, node) in self.network.nodes.iter().enumerate() {
            if node.kind == NodeKind::Switch {
                d[i] = 0;
            }
        }
        d
    }
}

fn check_egress(field: &str, q: &EgressSpec) -> Result<()> {
    if q.limit_packets == Some(0) {
        return Err(Error::spec(format!("{field}.limit_packets"), "must be > 0 (omit it for no limit)"));
    }
    if q.limit_bytes == Some(0) {
        return Err(Error::spec(format!("{field}.limit_bytes"), "must be > 0 (omit it for no limit)"));
    }
    let positive = |name: &str, v: u64| -> Result<()> {
        if v == 0 {
            return Err(Error::spec(format!("{field}.qdisc.{name}"), "must be > 0"));
        }
        Ok(())
    };
    match &q.qdisc {
        Some(QdiscSpec::Fifo { limit_packets, limit_bytes }) => {
            if *limit_packets == Some(0) {
                return Err(Error::spec(format!("{field}.qdisc.limit_packets"), "must be > 0 (omit it for no limit)"));
            }
            if *limit_bytes == Some(0) {
                return Err(Error::spec(format!("{field}.qdisc.limit_bytes"), "must be > 0 (omit it for no limit)"));
            }
        }
        Some(QdiscSpec::Codel { limit_packets, target_ps, interval_ps, .. }) => {
            positive("limit_packets", *limit_packets)?;
            positive("target_ps", *target_ps)?;
            positive("interval_ps", *interval_ps)?;
        }
        Some(QdiscSpec::FqCodel { limit_packets, flows, quantum_bytes, target_ps, interval_ps, drop_batch, .. }) => {
            positive("limit_packets", *limit_packets)?;
            positive("flows", *flows as u64)?;
            positive("quantum_bytes", *quantum_bytes as u64)?;
            positive("target_ps", *target_ps)?;
            positive("interval_ps", *interval_ps)?;
            positive("drop_batch", *drop_batch as u64)?;
        }
        None => {}
    }
    Ok(())
}

fn check_packet(field: &str, payload: u64, header: u64) -> Result<()> {
    if payload == 0 {
        return Err(Error::spec(field, "must be > 0"));
    }
    if payload + header > MAX_PACKET_BYTES {
        return Err(Error::spec(field, format!("packet of {} B exceeds the {MAX_PACKET_BYTES} B limit", payload + header)));
    }
    Ok(())
}

/// The error for a sender that never ends: the run could not finish. Names the user's keys.
fn unbounded(field: &str, what: &str, name: &str, i: usize, table: &str) -> Error {
    Error::spec(
        field,
        format!(
            "{what} '{name}' sends forever: it has no stop and no max_bytes, and the scenario has no stop; \
             set {table}[{i}].stop or {table}[{i}].max_bytes, or a top-level stop"
        ),
    )
}
