//! Collective operations generated in Rust: a compact spec expands into workload columns (messages, barriers, dependencies).
//!
//! `expand` turns one `CollectiveSpec` into a `Workload` fragment whose dependency references are already
//! absolute (offset by the `Base` it is appended at). This is the project's only collective generator: the
//! Python `fabricsim.collectives.all_to_all` & co. name its rows. The shift patterns, the ring all-reduce and
//! the ring reduce-scatter reproduce the Python generators they replaced exactly (same messages in the same
//! order, same dependencies in the order the Python lowering lists them; their DAGs are frozen in
//! tests/fixtures/collectives); the other algorithms are documented on their generator functions. Every
//! expansion costs O(messages + dependencies) time and memory.
//!
//! Conventions shared by the step algorithms (ring, halving-doubling, trees, hierarchical):
//! - A message from rank i waits for the delivery of every message rank i received since the last step in
//!   which it sent; if it received none since, for the latest message it received (if any). For rings and
//!   pairwise exchanges that is "step s waits for the rank's incoming message of step s − 1"; for trees it is
//!   the data the rank forwards (broadcast) or reduces (reduce).
//! - Sizes derived by division are floored and at least 1 byte (as the Python ring's `max(1, size // n)`).
//! - `barrier = true`: one barrier per step over all of that step's messages (the last step included), and
//!   every message of the next step waits for it.
//! - `chunks = C > 1`: the size is split into C parts (the first `size % C` one byte larger) and the algorithm
//!   is emitted once per chunk, chunk after chunk; the message at position t of chunk c also waits for the
//!   message at position t of chunk c − 1 (same ranks, same step) to be fully sent.
//! - A non-empty `after` adds one entry barrier (the fragment's barrier 0) listing `after`; every message
//!   without a predecessor inside the collective waits for it.

use super::{Dep, Workload, MAX_DEP_INDEX, NONE};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;

/// The collective operation.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    AllToAll,
    AllGather,
    AllReduce,
    ReduceScatter,
    Broadcast,
    Reduce,
}

/// How the operation is carried out (not every algorithm is defined for every kind; see `expand`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    Ring,
    Direct,
    HalvingDoubling,
    Shift,
    Hierarchical,
}

/// How a rank orders its own messages of one exchange: `Sent` = back to back (the next starts when the
/// previous has been fully handed to the NIC), `Delivered` = the next waits until the previous has arrived,
/// `Parallel` = all at once (the NIC interleaves their packets).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    Sent,
    Delivered,
    Parallel,
}

fn one() -> u32 {
    1
}

/// The phase across servers (along rails) of a hierarchical collective.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Inter {
    /// Rings along the rails.
    #[default]
    Ring,
    /// Binomial trees along the rails: all-reduce as a reduce to the rail's first member, then a broadcast.
    Tree,
}

fn is_default<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// A collective over `ranks` (resolved endpoints: (node index, NIC)).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSpec {
    pub kind: CollectiveKind,
    pub algorithm: Algorithm,
    pub ranks: Vec<(u32, u32)>,
    pub size_bytes: u64,
    pub packet_bytes: u64,
    #[serde(default)]
    pub header_bytes: u64,
    #[serde(default = "one")]
    pub chunks: u32,
    /// None = the default of the kind and algorithm (shift: all-to-all and all-reduce Sent, all-gather
    /// Parallel; direct: Parallel). Only shift and direct algorithms have an order.
    #[serde(default)]
    pub order: Option<Order>,
    /// Shift all-reduce only: the order of its all-gather part (default Parallel).
    #[serde(default)]
    pub ag_order: Option<Order>,
    /// A barrier between phases (shift) or steps (every other algorithm).
    #[serde(default)]
    pub barrier: bool,
    /// Rank index of the root (broadcast, reduce).
    #[serde(default)]
    pub root: u32,
    /// Earliest start of every message.
    #[serde(default)]
    pub start_ps: u64,
    /// Encoded `Dep`s (absolute indices into the whole workload) the collective waits for before its first
    /// messages.
    #[serde(default)]
    pub after: Vec<u32>,
    /// Hierarchical only: ranks per server (NVLink domain), consecutive ranks forming one; 0 = the ranks of
    /// one host node form one (multi-NIC hosts).
    #[serde(default, skip_serializing_if = "is_default")]
    pub local: u32,
    /// Hierarchical all-reduce only: rings or trees across servers.
    #[serde(default, skip_serializing_if = "is_default")]
    pub inter: Inter,
}

/// Counts of the workload this collective is appended to: its messages, barriers and compute steps.
#[derive(Clone, Copy, Debug, Default)]
pub struct Base {
    pub msgs: u32,
    pub barriers: u32,
    pub compute: u32,
}

impl CollectiveKind {
    /// The spec spelling (`all_to_all`, …).
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::AllReduce => "all_reduce",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
        }
    }
}

impl Algorithm {
    /// The spec spelling (`ring`, …).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Direct => "direct",
            Algorithm::HalvingDoubling => "halving_doubling",
            Algorithm::Shift => "shift",
            Algorithm::Hierarchical => "hierarchical",
        }
    }
}

/// Whether `algorithm` is defined for `kind`.
pub fn supported(kind: CollectiveKind, algorithm: Algorithm) -> bool {
    use Algorithm::*;
    use CollectiveKind::*;
    matches!(
        (kind, algorithm),
        (AllToAll, Shift | Direct | Ring)
            | (AllGather | AllReduce, Shift | Ring | Direct | HalvingDoubling | Hierarchical)
            | (ReduceScatter, Ring | Direct | HalvingDoubling | Hierarchical)
            | (Broadcast | Reduce, Ring | Direct | HalvingDoubling)
    )
}

/// What validation learned about the ranks: their number, and for hierarchical the host groups and rails.
struct Shape {
    n: usize,
    /// Ranks of each host in order of first appearance (hierarchical only).
    hosts: Vec<Vec<usize>>,
    /// Rail l: local rank l of every host, in host order (hierarchical only).
    rails: Vec<Vec<usize>>,
    /// Hierarchical all-reduce with trees across servers.
    tree: bool,
}

impl Shape {
    /// (messages, steps) of one chunk; a step is what one barrier closes when `barrier` is set.
    fn per_chunk(&self, kind: CollectiveKind, algorithm: Algorithm) -> (u64, u64) {
        use Algorithm::*;
        use CollectiveKind::*;
        let n = self.n as u64;
        let p = n.trailing_zeros() as u64;
        match (algorithm, kind) {
            (Shift, AllReduce) => (2 * n * (n - 1), 2 * (n - 1)),
            (Shift, _) => (n * (n - 1), n - 1),
            (Direct, AllReduce) => (2 * n * (n - 1), 2),
            (Direct, Broadcast | Reduce) => (n - 1, 1),
            (Direct, _) => (n * (n - 1), 1),
            (Ring, AllReduce) => (2 * n * (n - 1), 2 * (n - 1)),
            (Ring, Broadcast | Reduce) => (n - 1, n - 1),
            (Ring, _) => (n * (n - 1), n - 1),
            (HalvingDoubling, AllReduce) => (2 * p * n, 2 * p),
            (HalvingDoubling, Broadcast | Reduce) => (n - 1, p),
            (HalvingDoubling, _) => (p * n, p),
            (Hierarchical, _) => {
                let (h, l) = (self.hosts.len() as u64, self.hosts.first().map_or(0, |g| g.len()) as u64);
                if self.tree {
                    // Rings in servers (2(L−1) steps of n messages), then per rail a tree reduce and broadcast:
                    // 2·ceil(log2 H) steps carrying 2(H−1) messages per rail.
                    let depth = (h as usize).next_power_of_two().trailing_zeros() as u64;
                    return (2 * n * (l - 1) + 2 * l * (h - 1), 2 * (l - 1) + 2 * depth);
                }
                let steps = match kind {
                    AllReduce => 2 * (l - 1) + 2 * (h - 1),
                    _ => (l - 1) + (h - 1),
                };
                (n * steps, steps)
            }
        }
    }
}

fn field(index: usize, key: &str) -> String {
    format!("collectives[{index}].{key}")
}

/// Check a spec; every error names its field (`collectives[{index}].…`). O(ranks).
fn check(c: &CollectiveSpec, index: usize) -> Result<Shape> {
    let n = c.ranks.len();
    if n < 2 {
        return Err(Error::spec(field(index, "ranks"), format!("a collective needs at least 2 ranks, got {n}")));
    }
    let mut seen: HashMap<(u32, u32), usize> = HashMap::with_capacity(n);
    for (r, &e) in c.ranks.iter().enumerate() {
        if let Some(first) = seen.insert(e, r) {
            return Err(Error::spec(field(index, &format!("ranks[{r}]")), format!("duplicates ranks[{first}] (node {}, NIC {})", e.0, e.1)));
        }
    }
    if c.size_bytes == 0 {
        return Err(Error::spec(field(index, "size_bytes"), "must be > 0"));
    }
    if c.packet_bytes == 0 {
        return Err(Error::spec(field(index, "packet_bytes"), "must be > 0"));
    }
    if c.chunks == 0 {
        return Err(Error::spec(field(index, "chunks"), "must be > 0"));
    }
    if c.chunks as u64 > c.size_bytes {
        return Err(Error::spec(field(index, "chunks"), format!("{} chunks of {} B would leave empty chunks", c.chunks, c.size_bytes)));
    }
    let (kind, alg) = (c.kind.name(), c.algorithm.name());
    if !supported(c.kind, c.algorithm) {
        return Err(Error::spec(field(index, "algorithm"), format!("'{alg}' is not defined for '{kind}'")));
    }
    if c.order.is_some() && !matches!(c.algorithm, Algorithm::Shift | Algorithm::Direct) {
        return Err(Error::spec(field(index, "order"), format!("'{alg}' has no message order (only shift and direct do)")));
    }
    if c.ag_order.is_some() && !(c.kind == CollectiveKind::AllReduce && c.algorithm == Algorithm::Shift) {
        return Err(Error::spec(field(index, "ag_order"), format!("only the shift all_reduce has an all-gather order, not '{alg}' {kind}")));
    }
    let rooted = matches!(c.kind, CollectiveKind::Broadcast | CollectiveKind::Reduce);
    if rooted && c.root as usize >= n {
        return Err(Error::spec(field(index, "root"), format!("rank index {} out of range (0..{n})", c.root)));
    }
    if !rooted && c.root != 0 {
        return Err(Error::spec(field(index, "root"), format!("'{kind}' has no root (only broadcast and reduce do)")));
    }
    if c.algorithm == Algorithm::HalvingDoubling && !n.is_power_of_two() {
        return Err(Error::spec(field(index, "ranks"), format!("halving_doubling needs a power-of-two number of ranks, got {n}")));
    }
    if c.algorithm != Algorithm::Hierarchical && c.local != 0 {
        return Err(Error::spec(field(index, "local"), format!("only hierarchical collectives have servers, not '{alg}'")));
    }
    if c.inter != Inter::Ring && !(c.algorithm == Algorithm::Hierarchical && c.kind == CollectiveKind::AllReduce) {
        return Err(Error::spec(field(index, "inter"), format!("only the hierarchical all_reduce has a tree variant, not '{alg}' {kind}")));
    }
    let (mut hosts, mut rails) = (Vec::new(), Vec::new());
    if c.algorithm == Algorithm::Hierarchical && c.local > 0 {
        let l = c.local as usize;
        if !n.is_multiple_of(l) {
            return Err(Error::spec(field(index, "local"), format!("{n} ranks do not make whole servers of {l}")));
        }
        hosts = (0..n / l).map(|h| (h * l..(h + 1) * l).collect()).collect();
    } else if c.algorithm == Algorithm::Hierarchical {
        let mut of_node: HashMap<u32, usize> = HashMap::new();
        for (r, &(node, _)) in c.ranks.iter().enumerate() {
            let h = *of_node.entry(node).or_insert_with(|| {
                hosts.push(Vec::new());
                hosts.len() - 1
            });
            hosts[h].push(r);
        }
        let l = hosts[0].len();
        if let Some(g) = hosts.iter().find(|g| g.len() != l) {
            let (a, b) = (c.ranks[hosts[0][0]].0, c.ranks[g[0]].0);
            return Err(Error::spec(
                field(index, "ranks"),
                format!("hierarchical needs the same number of ranks on every host: node {a} has {l}, node {b} has {}", g.len()),
            ));
        }
    }
    if let Some(first) = hosts.first() {
        rails = (0..first.len()).map(|x| hosts.iter().map(|g| g[x]).collect()).collect();
    }
    Ok(Shape { n, hosts, rails, tree: c.inter == Inter::Tree })
}

/// The messages collective `index` expands to and a lower bound of the bytes they carry (every message of a
/// chunk carries at least the chunk over the ranks, one byte at the least), without expanding it: what the
/// memory budget (`crate::budget`) and the run's length estimate start from. Errors as `expand` names them.
/// O(ranks).
pub fn volume(c: &CollectiveSpec, index: usize) -> Result<(u64, u64)> {
    let shape = check(c, index)?;
    let (per_msgs, _) = shape.per_chunk(c.kind, c.algorithm);
    let msgs = per_msgs.saturating_mul(c.chunks as u64);
    let each = part(c.size_bytes / c.chunks as u64, shape.n as u64);
    Ok((msgs, msgs.saturating_mul(each)))
}

/// Expand collective `index` (for error field names `collectives[{index}].ranks` etc.) into a Workload
/// fragment whose dependency references are ABSOLUTE (offset by `base`), messages unnamed (names empty).
///
/// The fragment holds the message columns (endpoints from `ranks`, `packet = packet_bytes`, `delay_ps = 0`,
/// `path = NONE`), `n_barriers` barriers, no compute steps, and a predecessor CSR over exactly its own
/// nodes (its messages, then its barriers; `pred_start` starts at 0). Its message i is
/// `Dep::Msg(base.msgs + i)`, its barrier j `Dep::Barrier(base.barriers + j)`. A message's predecessors are
/// listed as delivered messages, then sent messages, then barriers (the order of `Workload::from_rows`).
/// Endpoints are checked against the network later, by `Workload::validate`. O(messages + dependencies).
pub fn expand(c: &CollectiveSpec, index: usize, base: Base) -> Result<Workload> {
    let shape = check(c, index)?;
    let (per_msgs, per_steps) = shape.per_chunk(c.kind, c.algorithm);
    let chunks = c.chunks as u64;
    let msgs = per_msgs.saturating_mul(chunks);
    let barriers = if c.barrier { per_steps.saturating_mul(chunks) } else { 0 } + u64::from(!c.after.is_empty());
    let limit = MAX_DEP_INDEX as u64 + 1;
    if base.msgs as u64 + msgs > limit || base.barriers as u64 + barriers > limit {
        return Err(Error::spec(
            format!("collectives[{index}]"),
            format!("expands to {msgs} messages and {barriers} barriers; a workload holds at most {limit} of each"),
        ));
    }
    let mut b = Builder::new(c, base, shape.n, msgs as usize, barriers as usize);
    if !c.after.is_empty() {
        b.entry = Some(b.barrier_over(c.after.iter().copied()));
    }
    for ch in 0..c.chunks {
        b.begin_chunk(ch);
        generate(&mut b, c, &shape, chunk_size(c.size_bytes, c.chunks, ch));
    }
    debug_assert_eq!((b.w.size.len() as u64, b.bar_end.len() as u64), (msgs, barriers));
    b.finish(index)
}

/// Size of chunk `ch` of `size` split into `chunks` near-equal parts (the first `size % chunks` one byte larger).
fn chunk_size(size: u64, chunks: u32, ch: u32) -> u64 {
    let c = chunks as u64;
    size / c + ((ch as u64) < size % c) as u64
}

/// `x / d`, at least 1.
fn part(x: u64, d: u64) -> u64 {
    (x / d).max(1)
}

/// Emit one chunk of the collective.
fn generate(b: &mut Builder, c: &CollectiveSpec, s: &Shape, size: u64) {
    use Algorithm::*;
    use CollectiveKind::*;
    let n = s.n;
    let root = c.root as usize;
    match (c.algorithm, c.kind) {
        (Shift, AllToAll) => shift_single(b, size, c.order.unwrap_or(Order::Sent), c.barrier),
        (Shift, AllGather) => shift_single(b, size, c.order.unwrap_or(Order::Parallel), c.barrier),
        (Shift, AllReduce) => shift_all_reduce(b, size, c.order.unwrap_or(Order::Sent), c.ag_order.unwrap_or(Order::Parallel), c.barrier),
        (Direct, AllToAll | AllGather) => direct_exchange(b, size, c.order.unwrap_or(Order::Parallel)),
        (Direct, ReduceScatter) => direct_exchange(b, part(size, n as u64), c.order.unwrap_or(Order::Parallel)),
        (Direct, AllReduce) => direct_all_reduce(b, size, c.order.unwrap_or(Order::Parallel), c.barrier),
        (Direct, Broadcast) => direct_broadcast(b, size, root, c.order.unwrap_or(Order::Parallel)),
        (Direct, Reduce) => direct_reduce(b, size, root),
        (Ring, AllReduce) => ring(b, &[(0..n).collect()], part(size, n as u64), 2 * (n - 1)),
        (Ring, ReduceScatter) => ring(b, &[(0..n).collect()], part(size, n as u64), n - 1),
        (Ring, AllGather) => ring(b, &[(0..n).collect()], size, n - 1),
        (Ring, AllToAll) => ring_all_to_all(b, size),
        (Ring, Broadcast) => chain_broadcast(b, size, root),
        (Ring, Reduce) => chain_reduce(b, size, root),
        (HalvingDoubling, AllReduce) => {
            halving(b, size);
            doubling(b, |k| (((size as u128) << k) / n as u128).max(1) as u64);
        }
        (HalvingDoubling, ReduceScatter) => halving(b, size),
        (HalvingDoubling, AllGather) => doubling(b, |k| size.saturating_mul(1 << k)),
        (HalvingDoubling, Broadcast) => binomial_broadcast(b, size, root),
        (HalvingDoubling, Reduce) => binomial_reduce(b, size, root),
        (Hierarchical, kind) => hierarchical(b, kind, s, size),
        (alg, kind) => unreachable!("check() rejects {} for {}", alg.name(), kind.name()),
    }
}

/// Accumulates the fragment: message columns and their predecessor rows as they are emitted, barrier rows
/// aside (they follow every message in the CSR), plus the per-chunk and per-step state of the generators.
/// Invariant: `w.pred_start` has one entry per emitted message plus the leading 0; `bar_end[j]` is the end of
/// barrier j's row in `bar_pred`.
struct Builder<'a> {
    ranks: &'a [(u32, u32)],
    base: Base,
    packet: u32,
    header: u32,
    start_ps: u64,
    w: Workload,
    bar_end: Vec<u32>,
    bar_pred: Vec<u32>,
    /// Local index of the entry barrier (when `after` is non-empty).
    entry: Option<u32>,
    /// Close every step with a barrier (non-shift algorithms).
    barrier: bool,
    chunk_first: u32,
    prev_chunk_first: Option<u32>,
    step_first: u32,
    /// The barrier closing the previous step of this chunk.
    step_barrier: Option<u32>,
    /// Per rank: messages received since its last sending step, and the latest message received.
    inbox: Vec<Vec<u32>>,
    latest_in: Vec<Option<u32>>,
    /// Senders and (destination, message) deliveries of the current step, applied by `end_step`.
    step_senders: Vec<usize>,
    step_deliveries: Vec<(usize, u32)>,
    scratch: Vec<Dep>,
}

impl<'a> Builder<'a> {
    fn new(c: &'a CollectiveSpec, base: Base, n: usize, msgs: usize, barriers: usize) -> Builder<'a> {
        let mut w = Workload::default();
        for col in [&mut w.src, &mut w.src_nic, &mut w.dst, &mut w.dst_nic, &mut w.packet, &mut w.header, &mut w.path] {
            col.reserve_exact(msgs);
        }
        for col in [&mut w.size, &mut w.start_ps, &mut w.delay_ps] {
            col.reserve_exact(msgs);
        }
        w.pred_start.reserve_exact(msgs + barriers + 1);
        w.pred_start.push(0);
        Builder {
            ranks: &c.ranks,
            base,
            packet: c.packet_bytes.min(u32::MAX as u64) as u32,
            header: c.header_bytes.min(u32::MAX as u64) as u32,
            start_ps: c.start_ps,
            w,
            bar_end: Vec::with_capacity(barriers),
            bar_pred: Vec::new(),
            entry: None,
            barrier: c.barrier,
            chunk_first: 0,
            prev_chunk_first: None,
            step_first: 0,
            step_barrier: None,
            inbox: vec![Vec::new(); n],
            latest_in: vec![None; n],
            step_senders: Vec::new(),
            step_deliveries: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn n_msgs(&self) -> u32 {
        self.w.size.len() as u32
    }

    /// Start chunk `ch`: its messages pair up with the previous chunk's; step state and inboxes start afresh.
    fn begin_chunk(&mut self, ch: u32) {
        let first = self.n_msgs();
        self.prev_chunk_first = (ch > 0).then_some(self.chunk_first);
        self.chunk_first = first;
        self.step_first = first;
        self.step_barrier = None;
        self.inbox.iter_mut().for_each(Vec::clear);
        self.latest_in.fill(None);
    }

    /// Append a message from rank `src` to rank `dst`; `deps` are local references (`Msg`, `Sent`,
    /// `Barrier`), written delivered, sent (then the previous chunk's twin), barriers, each kind in the given
    /// order. A message left without predecessors waits for the entry barrier. Returns its local index.
    fn emit(&mut self, src: usize, dst: usize, size: u64, deps: &[Dep]) -> u32 {
        let i = self.n_msgs();
        let ((s, sn), (d, dn)) = (self.ranks[src], self.ranks[dst]);
        let w = &mut self.w;
        w.src.push(s);
        w.src_nic.push(sn);
        w.dst.push(d);
        w.dst_nic.push(dn);
        w.size.push(size);
        w.packet.push(self.packet);
        w.header.push(self.header);
        w.start_ps.push(self.start_ps);
        w.delay_ps.push(0);
        w.path.push(NONE);
        let (m0, b0) = (self.base.msgs, self.base.barriers);
        let before = w.pred.len();
        w.pred.extend(deps.iter().filter_map(|d| match d {
            Dep::Msg(x) => Some(Dep::Msg(m0 + x).encode()),
            _ => None,
        }));
        w.pred.extend(deps.iter().filter_map(|d| match d {
            Dep::Sent(x) => Some(Dep::Sent(m0 + x).encode()),
            _ => None,
        }));
        if let Some(p) = self.prev_chunk_first {
            w.pred.push(Dep::Sent(m0 + p + (i - self.chunk_first)).encode());
        }
        w.pred.extend(deps.iter().filter_map(|d| match d {
            Dep::Barrier(x) => Some(Dep::Barrier(b0 + x).encode()),
            _ => None,
        }));
        debug_assert!(!deps.iter().any(|d| matches!(d, Dep::Compute(_))));
        if w.pred.len() == before {
            if let Some(e) = self.entry {
                w.pred.push(Dep::Barrier(b0 + e).encode());
            }
        }
        w.pred_start.push(w.pred.len() as u32);
        i
    }

    /// A new barrier whose predecessors are `preds` (encoded, absolute). Returns its local index.
    fn barrier_over(&mut self, preds: impl Iterator<Item = u32>) -> u32 {
        self.bar_pred.extend(preds);
        self.bar_end.push(self.bar_pred.len() as u32);
        self.bar_end.len() as u32 - 1
    }

    /// A new barrier over the local messages `msgs`. Returns its local index.
    fn barrier_over_msgs(&mut self, msgs: Range<u32>) -> u32 {
        let m0 = self.base.msgs;
        self.barrier_over(msgs.map(|m| Dep::Msg(m0 + m).encode()))
    }

    /// Emit a message of a step algorithm: it waits for what rank `src` received since its last sending step
    /// (or, if nothing, for the latest message it received), then for `extra`, then for the previous step's
    /// barrier.
    fn step_send(&mut self, src: usize, dst: usize, size: u64, extra: &[Dep]) -> u32 {
        let mut deps = std::mem::take(&mut self.scratch);
        deps.clear();
        if self.inbox[src].is_empty() {
            deps.extend(self.latest_in[src].map(Dep::Msg));
        } else {
            deps.extend(self.inbox[src].iter().map(|&m| Dep::Msg(m)));
        }
        deps.extend_from_slice(extra);
        deps.extend(self.step_barrier.map(Dep::Barrier));
        let m = self.emit(src, dst, size, &deps);
        self.scratch = deps;
        self.step_senders.push(src);
        self.step_deliveries.push((dst, m));
        m
    }

    /// Close the current step: a barrier over its messages when `barrier` is set; senders' inboxes are
    /// emptied, then this step's deliveries land in their destinations' inboxes.
    fn end_step(&mut self) {
        let n = self.n_msgs();
        if self.barrier && n > self.step_first {
            self.step_barrier = Some(self.barrier_over_msgs(self.step_first..n));
        }
        self.step_first = n;
        for s in self.step_senders.drain(..) {
            self.inbox[s].clear();
        }
        for (d, m) in self.step_deliveries.drain(..) {
            self.inbox[d].push(m);
            self.latest_in[d] = Some(m);
        }
    }

    /// The finished fragment: barrier rows appended after the message rows.
    fn finish(mut self, index: usize) -> Result<Workload> {
        let offset = self.w.pred.len();
        if offset + self.bar_pred.len() > u32::MAX as usize {
            return Err(Error::spec(format!("collectives[{index}]"), format!("expands to more than {} dependencies", u32::MAX)));
        }
        self.w.pred_start.extend(self.bar_end.iter().map(|&e| e + offset as u32));
        self.w.pred.append(&mut self.bar_pred);
        self.w.n_barriers = self.bar_end.len() as u32;
        Ok(self.w)
    }
}

/// Which messages a shift exchange's first messages (or, in parallel order, all of them) wait for.
enum Gate<'g> {
    None,
    /// Per rank, messages to be delivered first.
    Msgs(&'g [Vec<u32>]),
    /// A barrier.
    Barrier(u32),
}

/// Sort keys reproducing the Python generator's `sorted(set(after))` over message names: within one shift
/// exchange the names are `{tag}.p{k}.{i}to{j}`, message `start + (k − 1)·n + i`; the all-reduce's two parts
/// are tagged `….a2a` (`starts[0]`) and `….ag` (`starts[1]`, which sorts after `a2a`).
#[derive(Clone, Copy)]
struct Names {
    n: u32,
    starts: [u32; 2],
}

impl Names {
    /// (part, `{k}.{i}to{j}` as zero-padded bytes): byte order equals Python's string order. O(1).
    fn key(&self, m: u32) -> (u8, [u8; 36]) {
        let t = (m >= self.starts[1]) as usize;
        let off = m - self.starts[t];
        let (k, i) = (off / self.n + 1, off % self.n);
        let mut buf = [0u8; 36];
        write!(&mut buf[..], "{k}.{i}to{}", (i + k) % self.n).expect("36 bytes hold three u32 numbers");
        (t as u8, buf)
    }
}

/// One shift exchange (Python `_shift`): in phase k = 1..n−1 rank i sends `size` to rank (i + k) mod n.
struct Shift<'g> {
    size: u64,
    order: Order,
    gate: Gate<'g>,
    /// Each rank's previous message (chained per `order` to its first message here).
    last_own: Option<Vec<Option<u32>>>,
    /// A barrier after every phase, phase k + 1 waiting for it (Python `barrier=True`).
    phase_barriers: bool,
    /// Order message dependencies by Python name (exact reproduction); None = by index.
    names: Option<Names>,
}

/// What a shift exchange leaves: each rank's last message, the messages addressed to each rank, and the
/// last phase barrier.
struct Shifted {
    sent: Vec<Option<u32>>,
    received: Vec<Vec<u32>>,
    last_barrier: Option<u32>,
}

/// Emit a shift exchange: n(n−1) messages in phase-major order. Rank i's message of phase k waits for
/// `gate[i]` (phase 1, or every phase in parallel order), for i's previous message (delivered or fully sent,
/// per `order`; none in parallel order), for the previous phase's barrier (`phase_barriers`) and for the
/// builder's previous step barrier. O(n² + gate sizes · log n).
fn shift(b: &mut Builder, x: Shift) -> Shifted {
    let n = b.ranks.len();
    let mut sent = x.last_own.unwrap_or_else(|| vec![None; n]);
    let mut received = vec![Vec::new(); n];
    let sorted_gate: Option<Vec<Vec<u32>>> = match (&x.gate, x.names) {
        (Gate::Msgs(g), Some(nm)) => Some(
            g.iter()
                .map(|l| {
                    let mut l = l.clone();
                    l.sort_by_cached_key(|&m| nm.key(m));
                    l
                })
                .collect(),
        ),
        _ => None,
    };
    let mut last_barrier = None;
    let (mut msgs, mut deps): (Vec<u32>, Vec<Dep>) = (Vec::new(), Vec::new());
    for k in 1..n {
        let first = b.n_msgs();
        for i in 0..n {
            let j = (i + k) % n;
            let gated = k == 1 || x.order == Order::Parallel;
            msgs.clear();
            deps.clear();
            if let (true, Gate::Msgs(g)) = (gated, &x.gate) {
                msgs.extend_from_slice(sorted_gate.as_ref().map_or(&g[i], |s| &s[i]));
            }
            let mut own_sent = None;
            match (sent[i], x.order) {
                (Some(s), Order::Delivered) => match x.names {
                    Some(nm) => {
                        let ks = nm.key(s);
                        let at = msgs.partition_point(|&m| nm.key(m) < ks);
                        msgs.insert(at, s);
                    }
                    None => msgs.push(s),
                },
                (Some(s), Order::Sent) => own_sent = Some(s),
                _ => {}
            }
            deps.extend(msgs.iter().map(|&m| Dep::Msg(m)));
            deps.extend(own_sent.map(Dep::Sent));
            if let (true, Gate::Barrier(g)) = (gated, &x.gate) {
                deps.push(Dep::Barrier(*g));
            }
            if x.phase_barriers && k > 1 {
                deps.extend(last_barrier.map(Dep::Barrier));
            }
            deps.extend(b.step_barrier.map(Dep::Barrier));
            let m = b.emit(i, j, x.size, &deps);
            sent[i] = Some(m);
            received[j].push(m);
        }
        if x.phase_barriers {
            last_barrier = Some(b.barrier_over_msgs(first..b.n_msgs()));
        }
    }
    Shifted { sent, received, last_barrier }
}

/// Shift all-to-all or all-gather (Python `all_to_all` / `all_gather`): n−1 phases; in phase k rank i sends
/// `size` to rank (i + k) mod n. n(n−1) messages of `size`; with `barrier`, n−1 barriers (one per phase, phase
/// k + 1 waiting for barrier k).
fn shift_single(b: &mut Builder, size: u64, order: Order, barrier: bool) {
    let start = b.n_msgs();
    let names = Names { n: b.ranks.len() as u32, starts: [start, u32::MAX] };
    shift(b, Shift { size, order, gate: Gate::None, last_own: None, phase_barriers: barrier, names: Some(names) });
}

/// Shift all-reduce (Python `all_reduce`): a shift all-to-all (`order`) then a shift all-gather (`ag_order`).
/// Rank i's all-gather waits for every all-to-all message addressed to i (with `barrier`: for the last
/// all-to-all barrier) and, unless `ag_order` is parallel, follows i's own last all-to-all message.
/// 2n(n−1) messages of `size`; with `barrier`, 2(n−1) barriers.
fn shift_all_reduce(b: &mut Builder, size: u64, order: Order, ag_order: Order, barrier: bool) {
    let n = b.ranks.len() as u32;
    let start = b.n_msgs();
    let names = Names { n, starts: [start, start + n * (n - 1)] };
    let a2a = shift(b, Shift { size, order, gate: Gate::None, last_own: None, phase_barriers: barrier, names: Some(names) });
    let gate = match a2a.last_barrier {
        Some(x) if barrier => Gate::Barrier(x),
        _ => Gate::Msgs(&a2a.received),
    };
    let last_own = (ag_order != Order::Parallel).then(|| a2a.sent.clone());
    shift(b, Shift { size, order: ag_order, gate, last_own, phase_barriers: barrier, names: Some(names) });
}

/// Direct exchange (all-to-all, all-gather, reduce-scatter with `size` = size/n): every rank sends `size` to
/// every other rank at once, in shift order (message (k, i) goes from i to (i + k) mod n). One step of n(n−1)
/// messages; `Sent`/`Delivered` chain each rank's messages in that order, `Parallel` sends them all at once.
/// With `barrier`, one barrier over all of them.
fn direct_exchange(b: &mut Builder, size: u64, order: Order) {
    shift(b, Shift { size, order, gate: Gate::None, last_own: None, phase_barriers: false, names: None });
    b.end_step();
}

/// Direct all-reduce: a direct reduce-scatter (n(n−1) messages of size/n) then a direct all-gather (n(n−1)
/// messages of size/n); rank i's all-gather messages wait for every reduce-scatter message addressed to i
/// (with `barrier`, for the reduce-scatter's barrier instead) and, unless parallel, follow i's own last
/// reduce-scatter message. 2n(n−1) messages, 2 steps.
fn direct_all_reduce(b: &mut Builder, size: u64, order: Order, barrier: bool) {
    let block = part(size, b.ranks.len() as u64);
    let rs = shift(b, Shift { size: block, order, gate: Gate::None, last_own: None, phase_barriers: false, names: None });
    b.end_step();
    let gate = if barrier { Gate::None } else { Gate::Msgs(&rs.received) };
    let last_own = (order != Order::Parallel).then(|| rs.sent.clone());
    shift(b, Shift { size: block, order, gate, last_own, phase_barriers: false, names: None });
    b.end_step();
}

/// Rank index `r` steps after the root.
fn rel(root: usize, r: usize, n: usize) -> usize {
    (root + r) % n
}

/// The dependency chaining a rank's next message after `prev` in `order`.
fn chained(order: Order, prev: Option<u32>) -> Option<Dep> {
    match (order, prev) {
        (Order::Sent, Some(p)) => Some(Dep::Sent(p)),
        (Order::Delivered, Some(p)) => Some(Dep::Msg(p)),
        _ => None,
    }
}

/// Direct broadcast: the root sends `size` to root+1, root+2, … (mod n): n−1 messages in one step, chained
/// per `order` (default parallel: no dependencies).
fn direct_broadcast(b: &mut Builder, size: u64, root: usize, order: Order) {
    let n = b.ranks.len();
    let mut prev = None;
    for r in 1..n {
        let extra: Vec<Dep> = chained(order, prev).into_iter().collect();
        prev = Some(b.step_send(root, rel(root, r, n), size, &extra));
    }
    b.end_step();
}

/// Direct reduce: root+1, root+2, … (mod n) each send `size` to the root: n−1 messages in one step, no
/// dependencies.
fn direct_reduce(b: &mut Builder, size: u64, root: usize) {
    let n = b.ranks.len();
    for r in 1..n {
        b.step_send(rel(root, r, n), root, size, &[]);
    }
    b.end_step();
}

/// Rings over `groups` (each a list of ranks): `steps` steps; in each, member p of every group sends
/// `step_size` to member p + 1 (mod the group's size), waiting for what it received in the previous step
/// (for its first step, its last incoming message of the previous phase). Per step Σ|group| messages.
/// With one group of all n ranks this is Python's `_ring`: all-reduce 2(n−1) steps of max(1, size // n),
/// reduce-scatter n−1 such steps, all-gather (new) n−1 steps of the block.
fn ring(b: &mut Builder, groups: &[Vec<usize>], step_size: u64, steps: usize) {
    for _ in 0..steps {
        for g in groups {
            for (p, &r) in g.iter().enumerate() {
                b.step_send(r, g[(p + 1) % g.len()], step_size, &[]);
            }
        }
        b.end_step();
    }
}

/// Ring all-to-all (a relay, as ASTRA-sim's "ring" all-to-all): `size` is the block for one destination.
/// Step k = 1..n−1: every rank i sends to i + 1 the (n − k) blocks it still holds for others (its own, and
/// those it relays), waiting for its incoming message of step k − 1. n(n−1) messages, n−1 steps; each link
/// carries n(n−1)/2 blocks, so on a ring of links of rate B the bandwidth term is (n−1)/2 · n·size / B.
fn ring_all_to_all(b: &mut Builder, size: u64) {
    let n = b.ranks.len();
    for k in 1..n {
        for i in 0..n {
            b.step_send(i, (i + 1) % n, size.saturating_mul((n - k) as u64), &[]);
        }
        b.end_step();
    }
}

/// Ring broadcast: a chain root → root+1 → … → root+n−1, `size` per hop, each hop waiting for the one
/// before: n−1 messages, n−1 steps.
fn chain_broadcast(b: &mut Builder, size: u64, root: usize) {
    let n = b.ranks.len();
    for h in 0..n - 1 {
        b.step_send(rel(root, h, n), rel(root, h + 1, n), size, &[]);
        b.end_step();
    }
}

/// Ring reduce: a chain root+1 → root+2 → … → root+n−1 → root, `size` per hop, each hop waiting for the one
/// before: n−1 messages, n−1 steps.
fn chain_reduce(b: &mut Builder, size: u64, root: usize) {
    let n = b.ranks.len();
    for h in 1..n {
        b.step_send(rel(root, h, n), rel(root, h + 1, n), size, &[]);
        b.end_step();
    }
}

/// Recursive halving (reduce-scatter; n = 2^p): step k = 0..p−1, rank i sends max(1, size / 2^(k+1)) to
/// i XOR (n >> (k+1)), waiting for its incoming message of step k − 1. p·n messages, p steps; every rank
/// sends size·(n−1)/n in all.
fn halving(b: &mut Builder, size: u64) {
    let n = b.ranks.len();
    let p = n.trailing_zeros();
    for k in 0..p {
        for i in 0..n {
            b.step_send(i, i ^ (n >> (k + 1)), (size >> (k + 1)).max(1), &[]);
        }
        b.end_step();
    }
}

/// Recursive doubling (all-gather; n = 2^p): step k = 0..p−1, rank i sends `step_size(k)` to i XOR 2^k,
/// waiting for its incoming message of step k − 1 (for step 0: its last incoming message, if any).
/// p·n messages, p steps. All-gather of a block B: B·2^k per step; Rabenseifner's second half:
/// size·2^k / n.
fn doubling(b: &mut Builder, step_size: impl Fn(u32) -> u64) {
    let n = b.ranks.len();
    for k in 0..n.trailing_zeros() {
        for i in 0..n {
            b.step_send(i, i ^ (1 << k), step_size(k), &[]);
        }
        b.end_step();
    }
}

/// Binomial-tree broadcast (n = 2^p): step k = 0..p−1, every rank r < 2^k steps after the root sends `size`
/// to the rank r + 2^k steps after it, waiting for the message that brought it the data (the root waits for
/// nothing): `tree_broadcast` over the ranks counted from the root. n−1 messages, p steps; step k has 2^k messages.
fn binomial_broadcast(b: &mut Builder, size: u64, root: usize) {
    let n = b.ranks.len();
    tree_broadcast(b, &[(0..n).map(|r| rel(root, r, n)).collect()], size);
}

/// Binomial-tree reduce (n = 2^p), the broadcast reversed: step t = 0..p−1 with k = p−1−t, every rank
/// r ∈ [2^k, 2^(k+1)) steps after the root sends `size` to the rank r − 2^k steps after it, waiting for every
/// message it received (its subtree's): `tree_reduce` over the ranks counted from the root. n−1 messages, p steps;
/// step t has n / 2^(t+1) messages.
fn binomial_reduce(b: &mut Builder, size: u64, root: usize) {
    let n = b.ranks.len();
    tree_reduce(b, &[(0..n).map(|r| rel(root, r, n)).collect()], size);
}

/// Binomial-tree reduce in every group at once toward its first member (any group size m): with D =
/// ceil(log2 m), step t = 0..D−1 with k = D−1−t, member r ∈ [2^k, min(2^(k+1), m)) sends `size` to member
/// r − 2^k, waiting for everything it received (its subtree). m − 1 messages per group, D steps.
fn tree_reduce(b: &mut Builder, groups: &[Vec<usize>], size: u64) {
    let depth = groups.iter().map(|g| g.len().next_power_of_two().trailing_zeros()).max().unwrap_or(0);
    for k in (0..depth).rev() {
        for g in groups {
            for r in (1usize << k)..(2usize << k).min(g.len()) {
                b.step_send(g[r], g[r - (1 << k)], size, &[]);
            }
        }
        b.end_step();
    }
}

/// Binomial-tree broadcast in every group at once from its first member, the reduce reversed: step k = 0..D−1,
/// member r < 2^k sends `size` to member r + 2^k (if it exists), waiting for the data it holds. m − 1 messages
/// per group, D steps.
fn tree_broadcast(b: &mut Builder, groups: &[Vec<usize>], size: u64) {
    let depth = groups.iter().map(|g| g.len().next_power_of_two().trailing_zeros()).max().unwrap_or(0);
    for k in 0..depth {
        for g in groups {
            for r in 0..(1usize << k).min(g.len().saturating_sub(1 << k)) {
                b.step_send(g[r], g[r + (1 << k)], size, &[]);
            }
        }
        b.end_step();
    }
}

/// Hierarchical collectives over H hosts of L ranks each (n = H·L), built from rings (`ring`): inside each
/// host (groups = hosts) and across hosts along rails (groups = ranks with the same local index). Each phase's
/// first message of a rank waits for that rank's last incoming message of the previous phase.
/// - all_reduce: reduce-scatter in hosts (L−1 steps of S/L), all-reduce along rails (2(H−1) steps of S/L/H),
///   all-gather in hosts (L−1 steps of S/L). n·(2(L−1) + 2(H−1)) messages. With `inter = tree` the rails
///   reduce their S/L shard up a binomial tree and broadcast it down (2·ceil(log2 H) steps, 2(H−1) messages
///   of S/L per rail), as NCCL's tree across nodes.
/// - reduce_scatter: the first phase, then a reduce-scatter along rails (H−1 steps of S/L/H), so every rank
///   ends with an S/n shard. n·((L−1) + (H−1)) messages.
/// - all_gather (block B per rank): an all-gather along rails (H−1 steps of B), then an all-gather in hosts
///   of the H gathered blocks (L−1 steps of H·B). n·((H−1) + (L−1)) messages.
/// - A "host" is a host node (its ranks are NICs), or with `local = L` every L consecutive ranks: the GPUs of
///   one server of a rail-optimized cluster, whose rails are their NICs' rails.
///
/// With L = 1 this is the ring across hosts; with H = 1 the ring inside the host.
fn hierarchical(b: &mut Builder, kind: CollectiveKind, s: &Shape, size: u64) {
    let (h, l) = (s.hosts.len(), s.rails.len());
    let shard = part(size, l as u64);
    match kind {
        CollectiveKind::AllReduce if s.tree => {
            ring(b, &s.hosts, shard, l - 1);
            tree_reduce(b, &s.rails, shard);
            tree_broadcast(b, &s.rails, shard);
            ring(b, &s.hosts, shard, l - 1);
        }
        CollectiveKind::AllReduce => {
            ring(b, &s.hosts, shard, l - 1);
            ring(b, &s.rails, part(shard, h as u64), 2 * (h - 1));
            ring(b, &s.hosts, shard, l - 1);
        }
        CollectiveKind::ReduceScatter => {
            ring(b, &s.hosts, shard, l - 1);
            ring(b, &s.rails, part(shard, h as u64), h - 1);
        }
        CollectiveKind::AllGather => {
            ring(b, &s.rails, size, h - 1);
            ring(b, &s.hosts, size.saturating_mul(h as u64), l - 1);
        }
        _ => unreachable!("check() rejects hierarchical {}", kind.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn spec(kind: CollectiveKind, algorithm: Algorithm, n: u32, size: u64) -> CollectiveSpec {
        CollectiveSpec {
            kind,
            algorithm,
            ranks: (0..n).map(|i| (i, 0)).collect(),
            size_bytes: size,
            packet_bytes: 1024,
            header_bytes: 0,
            chunks: 1,
            order: None,
            ag_order: None,
            barrier: false,
            root: 0,
            start_ps: 0,
            after: vec![],
            local: 0,
            inter: Inter::Ring,
        }
    }

    fn preds(w: &Workload, x: usize) -> Vec<Dep> {
        w.preds(x).iter().map(|&d| Dep::decode(d)).collect()
    }

    /// Structural checks every fragment (built at `Base::default()`) must pass: column lengths, CSR shape,
    /// the entry barrier listing `after`, references in range, no cycle, no self-message, endpoints from the
    /// ranks. Returns the fragment without the entry barrier's external references.
    fn sane(c: &CollectiveSpec, w: &Workload) -> Workload {
        let m = w.n_msgs();
        let mut w = w.clone();
        if !c.after.is_empty() {
            let (a, b) = (w.pred_start[m] as usize, w.pred_start[m + 1] as usize);
            assert_eq!(&w.pred[a..b], c.after.as_slice());
            w.pred.drain(a..b);
            w.pred_start[m + 1..].iter_mut().for_each(|s| *s -= (b - a) as u32);
        }
        let w = &w;
        for len in [
            w.src.len(),
            w.src_nic.len(),
            w.dst.len(),
            w.dst_nic.len(),
            w.packet.len(),
            w.header.len(),
            w.start_ps.len(),
            w.delay_ps.len(),
            w.path.len(),
        ] {
            assert_eq!(len, m);
        }
        assert_eq!(w.pred_start.len(), w.n_nodes() + 1);
        assert_eq!(w.pred_start[0], 0);
        assert!(w.pred_start.windows(2).all(|p| p[0] <= p[1]));
        assert_eq!(*w.pred_start.last().unwrap() as usize, w.pred.len());
        for x in 0..w.n_nodes() {
            for d in preds(w, x) {
                match d {
                    Dep::Msg(i) | Dep::Sent(i) => assert!((i as usize) < m),
                    Dep::Barrier(i) => assert!(i < w.n_barriers),
                    Dep::Compute(_) => panic!("no compute steps"),
                }
            }
        }
        assert_eq!(w.find_cycle(), None);
        for i in 0..m {
            assert!((w.src[i], w.src_nic[i]) != (w.dst[i], w.dst_nic[i]));
            assert!(c.ranks.contains(&(w.src[i], w.src_nic[i])) && c.ranks.contains(&(w.dst[i], w.dst_nic[i])));
        }
        assert!(w.names.is_empty() && w.msg_name.is_empty() && w.barrier_name.is_empty() && w.compute_ps.is_empty());
        w.clone()
    }

    fn run(c: &CollectiveSpec) -> Workload {
        let w = expand(c, 0, Base::default()).unwrap();
        sane(c, &w);
        w
    }

    /// (messages, total bytes) of a kind × algorithm.
    fn totals(kind: CollectiveKind, alg: Algorithm, n: u32, size: u64) -> (usize, u64) {
        let w = run(&spec(kind, alg, n, size));
        (w.n_msgs(), w.size.iter().sum())
    }

    #[test]
    fn message_counts_and_bytes() {
        use Algorithm::*;
        use CollectiveKind::*;
        // Shift, n = 4, S = 1 MiB: n(n−1) = 12 messages of S; all-reduce twice that.
        assert_eq!(totals(AllToAll, Shift, 4, MIB), (12, 12 * MIB));
        assert_eq!(totals(AllGather, Shift, 4, MIB), (12, 12 * MIB));
        assert_eq!(totals(AllReduce, Shift, 4, MIB), (24, 24 * MIB));
        // Ring, n = 4: all-reduce 2(n−1)·n = 24 messages of S/n = 256 KiB (6 MiB); reduce-scatter 12 of
        // 256 KiB (3 MiB); all-gather 12 of the 1 MiB block.
        assert_eq!(totals(AllReduce, Ring, 4, MIB), (24, 6 * MIB));
        assert_eq!(totals(ReduceScatter, Ring, 4, MIB), (12, 3 * MIB));
        assert_eq!(totals(AllGather, Ring, 4, MIB), (12, 12 * MIB));
        // Ring all-to-all (relay), n = 4, blocks of 1 MiB: steps of 3, 2, 1 blocks, 4 ranks each: 24 MiB =
        // n · n(n−1)/2 blocks.
        assert_eq!(totals(AllToAll, Ring, 4, MIB), (12, 24 * MIB));
        // Ring broadcast / reduce, n = 5: a chain of 4 hops of S.
        assert_eq!(totals(Broadcast, Ring, 5, MIB), (4, 4 * MIB));
        assert_eq!(totals(Reduce, Ring, 5, MIB), (4, 4 * MIB));
        // Direct, n = 4: all-to-all / all-gather 12 of S; reduce-scatter 12 of S/4 (3 MiB); all-reduce 24 of
        // S/4 (6 MiB); broadcast / reduce n−1 = 3 of S.
        assert_eq!(totals(AllToAll, Direct, 4, MIB), (12, 12 * MIB));
        assert_eq!(totals(AllGather, Direct, 4, MIB), (12, 12 * MIB));
        assert_eq!(totals(ReduceScatter, Direct, 4, MIB), (12, 3 * MIB));
        assert_eq!(totals(AllReduce, Direct, 4, MIB), (24, 6 * MIB));
        assert_eq!(totals(Broadcast, Direct, 4, MIB), (3, 3 * MIB));
        assert_eq!(totals(Reduce, Direct, 4, MIB), (3, 3 * MIB));
        // Halving-doubling, n = 8 (p = 3), S = 1 MiB: halving steps of 512, 256, 128 KiB (8 each: 7 MiB);
        // doubling steps of S·2^k/8 = 128, 256, 512 KiB (7 MiB); all-reduce 48 messages, 14 MiB.
        assert_eq!(totals(AllReduce, HalvingDoubling, 8, MIB), (48, 14 * MIB));
        assert_eq!(totals(ReduceScatter, HalvingDoubling, 8, MIB), (24, 7 * MIB));
        // All-gather of a 1 MiB block: steps of 1, 2, 4 MiB, 8 ranks each: 56 MiB = 8 ranks × 7 blocks.
        assert_eq!(totals(AllGather, HalvingDoubling, 8, MIB), (24, 56 * MIB));
        // Binomial trees, n = 8: 1 + 2 + 4 = 7 messages of S.
        assert_eq!(totals(Broadcast, HalvingDoubling, 8, MIB), (7, 7 * MIB));
        assert_eq!(totals(Reduce, HalvingDoubling, 8, MIB), (7, 7 * MIB));
    }

    /// 2 hosts × 3 ranks (H = 2, L = 3), S = 6 MiB.
    fn hier(kind: CollectiveKind) -> CollectiveSpec {
        let mut c = spec(kind, Algorithm::Hierarchical, 6, 6 * MIB);
        c.ranks = vec![(10, 0), (10, 1), (10, 2), (11, 0), (11, 1), (11, 2)];
        c
    }

    #[test]
    fn hierarchical_counts_and_bytes() {
        // All-reduce: in-host reduce-scatter 2 hosts × 3 ranks × 2 steps = 12 messages of S/L = 2 MiB; along 3
        // rails of 2, all-reduce 2(H−1) = 2 steps × 6 = 12 messages of S/L/H = 1 MiB; in-host all-gather 12
        // of 2 MiB. 36 messages, 24 + 12 + 24 = 60 MiB.
        let w = run(&hier(CollectiveKind::AllReduce));
        assert_eq!((w.n_msgs(), w.size.iter().sum::<u64>()), (36, 60 * MIB));
        // Reduce-scatter: 12 × 2 MiB in hosts, then H−1 = 1 step × 6 = 6 messages of 1 MiB: 18, 30 MiB.
        let w = run(&hier(CollectiveKind::ReduceScatter));
        assert_eq!((w.n_msgs(), w.size.iter().sum::<u64>()), (18, 30 * MIB));
        // All-gather, block 6 MiB: 6 rail messages of 6 MiB, then 12 in-host messages of H·B = 12 MiB:
        // 18 messages, 36 + 144 = 180 MiB = 6 ranks × 5 blocks × 6 MiB.
        let w = run(&hier(CollectiveKind::AllGather));
        assert_eq!((w.n_msgs(), w.size.iter().sum::<u64>()), (18, 180 * MIB));
        // Phase boundary: the first rail message of rank 0 (message 12, rank 0 → rank 3) waits for rank 0's
        // last in-host message (step 1, from rank 2: message 6 + 2 = 8).
        let w = run(&hier(CollectiveKind::AllReduce));
        assert_eq!((w.src[12], w.src_nic[12], w.dst[12], w.dst_nic[12]), (10, 0, 11, 0));
        assert_eq!(preds(&w, 12), vec![Dep::Msg(8)]);
    }

    #[test]
    fn hierarchical_degenerates_to_ring() {
        for kind in [CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather] {
            // One rank per host: the ring across hosts; one host: the ring inside it.
            for ranks in [vec![(0, 0), (1, 0), (2, 0), (3, 0)], vec![(0, 0), (0, 1), (0, 2), (0, 3)]] {
                let mut h = spec(kind, Algorithm::Hierarchical, 4, 1000);
                h.ranks = ranks.clone();
                let mut r = spec(kind, Algorithm::Ring, 4, 1000);
                r.ranks = ranks;
                assert_eq!(run(&h), run(&r), "{kind:?}");
            }
        }
    }

    #[test]
    fn ring_steps_wait_for_the_left_neighbour() {
        let w = run(&spec(CollectiveKind::AllReduce, Algorithm::Ring, 4, 4000));
        assert!(w.size.iter().all(|&s| s == 1000));
        for s in 0..6 {
            for i in 0..4 {
                let m = s * 4 + i;
                let want = if s == 0 { vec![] } else { vec![Dep::Msg(((s - 1) * 4 + (i + 3) % 4) as u32)] };
                assert_eq!(preds(&w, m), want);
            }
        }
    }

    #[test]
    fn halving_doubling_partners_and_deps() {
        let w = run(&spec(CollectiveKind::AllReduce, Algorithm::HalvingDoubling, 4, 4000));
        // Step k: partners at distance 2, 1 (halving), then 1, 2 (doubling); sizes 2000, 1000, 1000, 2000.
        let dist = [2, 1, 1, 2];
        let size = [2000, 1000, 1000, 2000];
        for k in 0..4 {
            for i in 0..4u32 {
                let m = k * 4 + i as usize;
                assert_eq!((w.src[m], w.dst[m], w.size[m]), (i, i ^ dist[k], size[k]));
                // Waits for its incoming message of step k − 1: from partner i ^ dist[k−1].
                let want = if k == 0 { vec![] } else { vec![Dep::Msg(((k - 1) * 4) as u32 + (i ^ dist[k - 1]))] };
                assert_eq!(preds(&w, m), want);
            }
        }
    }

    #[test]
    fn trees_respect_the_data() {
        // Broadcast from rank 1 of 4: step 0: 1→2; step 1: 1→3, 2→0 (2 waits for message 0).
        let mut c = spec(CollectiveKind::Broadcast, Algorithm::HalvingDoubling, 4, 100);
        c.root = 1;
        let w = run(&c);
        assert_eq!(w.src, vec![1, 1, 2]);
        assert_eq!(w.dst, vec![2, 3, 0]);
        assert_eq!((preds(&w, 0), preds(&w, 1), preds(&w, 2)), (vec![], vec![], vec![Dep::Msg(0)]));
        // Broadcast of 8 from rank 0: rank 1 (fed by message 0 at step 0) sends at steps 1 and 2, both
        // waiting for message 0.
        let w = run(&spec(CollectiveKind::Broadcast, Algorithm::HalvingDoubling, 8, 100));
        let from1: Vec<usize> = (0..7).filter(|&m| w.src[m] == 1).collect();
        assert_eq!(from1.len(), 2);
        assert!(from1.iter().all(|&m| preds(&w, m) == vec![Dep::Msg(0)]));
        // Reduce of 8 to rank 0: step 0: 4..8 → 0..4; step 1: 2, 3 → 0, 1; step 2: 1 → 0. Rank 1's message
        // waits for its children 5 (step 0) and 3 (step 1).
        let w = run(&spec(CollectiveKind::Reduce, Algorithm::HalvingDoubling, 8, 100));
        assert_eq!(w.src, vec![4, 5, 6, 7, 2, 3, 1]);
        assert_eq!(w.dst, vec![0, 1, 2, 3, 0, 1, 0]);
        assert_eq!(preds(&w, 6), vec![Dep::Msg(1), Dep::Msg(5)]);
        assert_eq!(preds(&w, 4), vec![Dep::Msg(2)]);
        // Ring chains from root 2 of 4: broadcast 2→3→0→1, reduce 3→0→1→2, each hop after the previous.
        for (kind, src, dst) in [(CollectiveKind::Broadcast, [2, 3, 0], [3, 0, 1]), (CollectiveKind::Reduce, [3, 0, 1], [0, 1, 2])] {
            let mut c = spec(kind, Algorithm::Ring, 4, 100);
            c.root = 2;
            let w = run(&c);
            assert_eq!((w.src.as_slice(), w.dst.as_slice()), (&src[..], &dst[..]));
            assert_eq!((preds(&w, 0), preds(&w, 1), preds(&w, 2)), (vec![], vec![Dep::Msg(0)], vec![Dep::Msg(1)]));
        }
        // Direct: root sends to all, or all send to the root; no dependencies in parallel order.
        let mut c = spec(CollectiveKind::Broadcast, Algorithm::Direct, 4, 100);
        c.root = 3;
        let w = run(&c);
        assert_eq!((w.src, w.dst, w.pred.len()), (vec![3, 3, 3], vec![0, 1, 2], 0));
        c.order = Some(Order::Sent);
        let w = run(&c);
        assert_eq!((preds(&w, 1), preds(&w, 2)), (vec![Dep::Sent(0)], vec![Dep::Sent(1)]));
        let w = run(&spec(CollectiveKind::Reduce, Algorithm::Direct, 4, 100));
        assert_eq!((w.src, w.dst, w.pred.len()), (vec![1, 2, 3], vec![0, 0, 0], 0));
    }

    #[test]
    fn direct_orders_and_all_reduce_gate() {
        let mut c = spec(CollectiveKind::AllToAll, Algorithm::Direct, 3, 300);
        let w = run(&c);
        assert_eq!((w.n_msgs(), w.pred.len(), w.n_barriers), (6, 0, 0));
        // Shift order: messages (k, i) = 3(k−1) + i; rank 0's second message (3) follows its first (0).
        c.order = Some(Order::Delivered);
        assert_eq!(preds(&run(&c), 3), vec![Dep::Msg(0)]);
        c.order = Some(Order::Sent);
        let w = run(&c);
        assert_eq!(preds(&w, 3), vec![Dep::Sent(0)]);
        // Same DAG as the shift all-to-all in Sent order (without barriers).
        assert_eq!(w, run(&spec(CollectiveKind::AllToAll, Algorithm::Shift, 3, 300)));
        // All-reduce: rank 0's all-gather messages (6 and 9) wait for the reduce-scatter messages to 0:
        // 2→0 (message 2, phase 1) and 1→0 (message 4, phase 2); sizes are S/n = 100.
        let w = run(&spec(CollectiveKind::AllReduce, Algorithm::Direct, 3, 300));
        assert!(w.size.iter().all(|&s| s == 100));
        assert_eq!(preds(&w, 6), vec![Dep::Msg(2), Dep::Msg(4)]);
        assert_eq!(preds(&w, 9), vec![Dep::Msg(2), Dep::Msg(4)]);
        // With a barrier: one per step; the all-gather waits for the reduce-scatter's barrier only.
        let mut c = spec(CollectiveKind::AllReduce, Algorithm::Direct, 3, 300);
        c.barrier = true;
        let w = run(&c);
        assert_eq!(w.n_barriers, 2);
        assert_eq!(preds(&w, 6), vec![Dep::Barrier(0)]);
        assert_eq!(preds(&w, 12), (0..6).map(Dep::Msg).collect::<Vec<_>>());
        assert_eq!(preds(&w, 13), (6..12).map(Dep::Msg).collect::<Vec<_>>());
    }

    #[test]
    fn step_barriers() {
        // Ring all-reduce n = 3 with barriers: 4 steps, 4 barriers over 3 messages each; step s > 0 waits
        // for its left neighbour's message and for barrier s − 1.
        let mut c = spec(CollectiveKind::AllReduce, Algorithm::Ring, 3, 300);
        c.barrier = true;
        let w = run(&c);
        assert_eq!((w.n_msgs(), w.n_barriers), (12, 4));
        assert_eq!(preds(&w, 4), vec![Dep::Msg(0), Dep::Barrier(0)]);
        assert_eq!(preds(&w, 12 + 3), vec![Dep::Msg(9), Dep::Msg(10), Dep::Msg(11)]);
        // Halving-doubling all-reduce n = 8: 2p = 6 barriers.
        let mut c = spec(CollectiveKind::AllReduce, Algorithm::HalvingDoubling, 8, 800);
        c.barrier = true;
        assert_eq!(run(&c).n_barriers, 6);
    }

    #[test]
    fn chunks_pipeline_in_order() {
        // 10 bytes in 3 chunks: 4, 3, 3; the ring reduce-scatter n = 2 has 2 messages per chunk (S/n each).
        assert_eq!((0..3).map(|c| chunk_size(10, 3, c)).collect::<Vec<_>>(), vec![4, 3, 3]);
        let mut c = spec(CollectiveKind::ReduceScatter, Algorithm::Ring, 2, 10);
        c.chunks = 3;
        let w = run(&c);
        assert_eq!(w.size, vec![2, 2, 1, 1, 1, 1]);
        assert_eq!(preds(&w, 0), vec![]);
        assert_eq!(preds(&w, 2), vec![Dep::Sent(0)]);
        assert_eq!(preds(&w, 5), vec![Dep::Sent(3)]);
        // Ring all-reduce n = 4 in 2 chunks: chunk 1's step-1 message of rank 0 (message 24 + 4) waits for
        // its left neighbour's step-0 message of chunk 1 (24 + 3), then for chunk 0's twin (4) being sent.
        let mut c = spec(CollectiveKind::AllReduce, Algorithm::Ring, 4, MIB);
        c.chunks = 2;
        let w = run(&c);
        assert_eq!(w.n_msgs(), 48);
        assert_eq!(w.size.iter().sum::<u64>(), 2 * 24 * (MIB / 2 / 4));
        assert_eq!(preds(&w, 28), vec![Dep::Msg(27), Dep::Sent(4)]);
        // With barriers, each chunk has its own: 2 × 6.
        c.barrier = true;
        let w = run(&c);
        assert_eq!(w.n_barriers, 12);
        assert_eq!(preds(&w, 28), vec![Dep::Msg(27), Dep::Sent(4), Dep::Barrier(6)]);
    }

    #[test]
    fn entry_barrier_and_absolute_references() {
        let mut c = spec(CollectiveKind::AllToAll, Algorithm::Shift, 3, 300);
        c.barrier = true;
        c.after = vec![Dep::Msg(5).encode(), Dep::Compute(2).encode()];
        let base = Base { msgs: 100, barriers: 10, compute: 3 };
        let w = expand(&c, 0, base).unwrap();
        // Entry barrier first (10), then the phase barriers 11, 12.
        assert_eq!(w.n_barriers, 3);
        assert_eq!(preds(&w, 6), vec![Dep::Msg(5), Dep::Compute(2)]);
        assert_eq!(preds(&w, 7), (100..103).map(Dep::Msg).collect::<Vec<_>>());
        // Phase 1 (no predecessor in the collective) waits for the entry barrier; phase 2 does not.
        for m in 0..3 {
            assert_eq!(preds(&w, m), vec![Dep::Barrier(10)]);
        }
        assert_eq!(preds(&w, 3), vec![Dep::Sent(100), Dep::Barrier(11)]);
        // Without `after` the same DAG minus the entry barrier.
        c.after.clear();
        let plain = expand(&c, 0, Base::default()).unwrap();
        assert_eq!((plain.n_barriers, preds(&plain, 0), preds(&plain, 3)), (2, vec![], vec![Dep::Sent(0), Dep::Barrier(0)]));
        // Parallel order: every message lacks an in-collective predecessor in phase 1, and later phases
        // without barriers too.
        let mut c = spec(CollectiveKind::AllGather, Algorithm::Shift, 3, 300);
        c.after = vec![Dep::Barrier(0).encode()];
        let w = expand(&c, 0, Base { msgs: 7, barriers: 1, compute: 0 }).unwrap();
        assert!((0..6).all(|m| preds(&w, m) == vec![Dep::Barrier(1)]));
    }

    #[test]
    fn every_combination_is_sane() {
        use Algorithm::*;
        use CollectiveKind::*;
        for kind in [AllToAll, AllGather, AllReduce, ReduceScatter, Broadcast, Reduce] {
            for alg in [Ring, Direct, HalvingDoubling, Shift, Hierarchical] {
                if !supported(kind, alg) {
                    continue;
                }
                for n in [2u32, 4, 8] {
                    for (barrier, chunks, after) in [(false, 1, false), (true, 1, false), (true, 3, true), (false, 2, true)] {
                        let mut c = spec(kind, alg, n, 1000);
                        if alg == Hierarchical && n > 2 {
                            c.ranks = (0..n).map(|i| (i / 2, i % 2)).collect();
                        }
                        c.root = (kind == Broadcast || kind == Reduce) as u32;
                        (c.barrier, c.chunks) = (barrier, chunks);
                        if after {
                            c.after = vec![Dep::Compute(0).encode()];
                        }
                        let w = sane(&c, &expand(&c, 0, Base::default()).unwrap());
                        let shape = check(&c, 0).unwrap();
                        let (pm, ps) = shape.per_chunk(kind, alg);
                        assert_eq!(w.n_msgs() as u64, pm * chunks as u64, "{kind:?} {alg:?} {n}");
                        assert_eq!(w.n_barriers as u64, barrier as u64 * ps * chunks as u64 + after as u64);
                        if after {
                            // Everything runs after the entry barrier (transitively).
                            let e = w.n_msgs();
                            assert!((0..w.n_msgs()).all(|m| reaches(&w, m, e)), "{kind:?} {alg:?} {n}");
                        }
                    }
                }
            }
        }
    }

    /// Whether DAG node x (transitively) waits for node `target`.
    fn reaches(w: &Workload, x: usize, target: usize) -> bool {
        let mut stack = vec![x];
        let mut seen = vec![false; w.n_nodes()];
        while let Some(v) = stack.pop() {
            if v == target {
                return true;
            }
            for &d in w.preds(v) {
                let u = w.node_of(Dep::decode(d));
                if !std::mem::replace(&mut seen[u], true) {
                    stack.push(u);
                }
            }
        }
        false
    }

    #[test]
    fn python_name_order() {
        // Python sorts `after` by name: "p10.…" before "p2.…", "10to0" before "2to0".
        let nm = Names { n: 12, starts: [0, 132] };
        let key = |k: u32, i: u32| nm.key((k - 1) * 12 + i);
        assert!(key(10, 2) < key(2, 0));
        assert!(key(1, 10) < key(1, 2));
        assert!(nm.key(131) < nm.key(132));
        // Shift all-reduce n = 12, parallel all-gather: rank 0's gate lists the 11 all-to-all messages to 0,
        // p1.11to0, p10.2to0, p11.1to0, p2.10to0, …, p9.3to0 by name.
        let w = run(&spec(CollectiveKind::AllReduce, Algorithm::Shift, 12, 100));
        let gate: Vec<Dep> = preds(&w, 132);
        let order = [1u32, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9];
        let want: Vec<Dep> = order.iter().map(|&k| Dep::Msg((k - 1) * 12 + (12 - k) % 12)).collect();
        assert_eq!(gate, want);
    }

    #[test]
    fn errors_name_the_field() {
        use Algorithm::*;
        use CollectiveKind::*;
        let err = |c: &CollectiveSpec| match expand(c, 7, Base::default()) {
            Err(Error::Spec { field, reason }) => (field, reason),
            other => panic!("expected a spec error, got {other:?}"),
        };
        let ok = spec(AllReduce, Ring, 4, 1000);
        let with = |f: &dyn Fn(&mut CollectiveSpec)| {
            let mut c = ok.clone();
            f(&mut c);
            err(&c)
        };
        assert_eq!(with(&|c| c.ranks.truncate(1)).0, "collectives[7].ranks");
        let (f, r) = with(&|c| c.ranks[3] = c.ranks[1]);
        assert_eq!((f.as_str(), r.as_str()), ("collectives[7].ranks[3]", "duplicates ranks[1] (node 1, NIC 0)"));
        assert_eq!(with(&|c| c.size_bytes = 0).0, "collectives[7].size_bytes");
        assert_eq!(with(&|c| c.packet_bytes = 0).0, "collectives[7].packet_bytes");
        assert_eq!(with(&|c| c.chunks = 0).0, "collectives[7].chunks");
        assert_eq!(with(&|c| c.chunks = 1001).0, "collectives[7].chunks");
        let (f, r) = with(&|c| (c.kind, c.algorithm) = (AllToAll, HalvingDoubling));
        assert_eq!((f.as_str(), r.as_str()), ("collectives[7].algorithm", "'halving_doubling' is not defined for 'all_to_all'"));
        assert_eq!(with(&|c| (c.kind, c.algorithm) = (ReduceScatter, Shift)).0, "collectives[7].algorithm");
        assert_eq!(with(&|c| (c.kind, c.algorithm) = (Broadcast, Hierarchical)).0, "collectives[7].algorithm");
        assert_eq!(with(&|c| c.order = Some(Order::Sent)).0, "collectives[7].order");
        assert_eq!(with(&|c| (c.algorithm, c.ag_order) = (Direct, Some(Order::Sent))).0, "collectives[7].ag_order");
        assert_eq!(with(&|c| c.root = 1).0, "collectives[7].root");
        assert_eq!(with(&|c| (c.kind, c.root) = (Broadcast, 4)).0, "collectives[7].root");
        let (f, r) = with(&|c| {
            c.algorithm = HalvingDoubling;
            c.ranks.pop();
        });
        assert_eq!((f.as_str(), r.as_str()), ("collectives[7].ranks", "halving_doubling needs a power-of-two number of ranks, got 3"));
        let (f, r) = with(&|c| {
            c.algorithm = Hierarchical;
            c.ranks = vec![(0, 0), (0, 1), (1, 0)];
        });
        assert_eq!(f, "collectives[7].ranks");
        assert!(r.contains("node 0 has 2, node 1 has 1"), "{r}");
        // Too many messages for 30-bit references.
        let mut c = spec(AllToAll, Direct, 2, 1000);
        assert!(expand(&c, 0, Base { msgs: MAX_DEP_INDEX - 1, ..Base::default() }).is_ok());
        c.chunks = 2;
        assert_eq!(err_at(&c, Base { msgs: MAX_DEP_INDEX - 1, ..Base::default() }), "collectives[0]");
    }

    fn err_at(c: &CollectiveSpec, base: Base) -> String {
        match expand(c, 0, base) {
            Err(Error::Spec { field, .. }) => field,
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    #[test]
    fn columns_carry_the_spec() {
        let mut c = spec(CollectiveKind::AllGather, Algorithm::Ring, 3, 500);
        c.ranks = vec![(4, 1), (2, 3), (9, 0)];
        (c.packet_bytes, c.header_bytes, c.start_ps) = (4096, 64, 777);
        let w = run(&c);
        assert_eq!((w.src[1], w.src_nic[1], w.dst[1], w.dst_nic[1]), (2, 3, 9, 0));
        assert!(w.packet.iter().all(|&p| p == 4096) && w.header.iter().all(|&h| h == 64));
        assert!(w.start_ps.iter().all(|&s| s == 777) && w.delay_ps.iter().all(|&d| d == 0));
        assert!(w.path.iter().all(|&p| p == NONE));
        // Serde: defaults and snake_case names.
        let parsed: CollectiveSpec = serde_json::from_str(
            r#"{"kind": "all_gather", "algorithm": "ring", "ranks": [[4, 1], [2, 3], [9, 0]], "size_bytes": 500,
                "packet_bytes": 4096, "header_bytes": 64, "start_ps": 777}"#,
        )
        .unwrap();
        assert_eq!(parsed, c);
        assert!(serde_json::from_str::<CollectiveSpec>(
            r#"{"kind": "all_gather", "algorithm": "ring", "ranks": [], "size_bytes": 1, "packet_bytes": 1, "colour": 1}"#
        )
        .is_err());
    }
}
