//! The columnar workload every engine reads: messages, barriers and compute steps as columns, dependencies as CSR.
//!
//! DAG nodes are numbered messages `0..M`, barriers `M..M+B`, compute steps `M+B..M+B+C`. The predecessors
//! of node x are `pred[pred_start[x]..pred_start[x + 1]]`, each a tagged reference (`Dep`): a message's
//! delivery, a message fully sent (its last packet handed to its NIC), a barrier or a compute step. Names are
//! kept only where a user gave them, as indices into one interned pool. Validation is one pass over the
//! columns (O(M + B + C + edges)) plus an iterative cycle search, and every error names the row.

pub mod collectives;

use crate::error::{Error, Result};
use crate::spec::{BarrierSpec, MessageSpec, NodeKind, RunSpec, MAX_MESSAGE_BYTES, MAX_PACKET_BYTES};
use std::collections::HashMap;

/// "No value" in an index column (no explicit path, no name).
pub const NONE: u32 = u32::MAX;

/// A dependency: what a DAG node waits for. Encoded in 32 bits as `kind << 30 | index` (index < 2^30).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dep {
    /// Message i delivered (its last payload byte arrived).
    Msg(u32),
    /// Message i fully sent (its last packet handed to the NIC's transmitter).
    Sent(u32),
    Barrier(u32),
    Compute(u32),
}

/// Largest index a `Dep` can carry.
pub const MAX_DEP_INDEX: u32 = (1 << 30) - 1;

impl Dep {
    #[inline]
    pub fn encode(self) -> u32 {
        match self {
            Dep::Msg(i) => i,
            Dep::Sent(i) => 1 << 30 | i,
            Dep::Barrier(i) => 2 << 30 | i,
            Dep::Compute(i) => 3 << 30 | i,
        }
    }
    #[inline]
    pub fn decode(x: u32) -> Dep {
        let i = x & MAX_DEP_INDEX;
        match x >> 30 {
            0 => Dep::Msg(i),
            1 => Dep::Sent(i),
            2 => Dep::Barrier(i),
            _ => Dep::Compute(i),
        }
    }
}

/// The workload as columns. Invariant after `validate`: every message column has M rows, `pred_start` has
/// M + B + C + 1 entries, non-decreasing from 0 to `pred.len()`, and every reference is in range.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// Source and destination endpoints: node index and NIC number (a host's NICs are its links in order).
    pub src: Vec<u32>,
    pub src_nic: Vec<u32>,
    pub dst: Vec<u32>,
    pub dst_nic: Vec<u32>,
    /// Payload bytes; payload bytes per packet; header bytes added to every packet.
    pub size: Vec<u64>,
    pub packet: Vec<u32>,
    pub header: Vec<u32>,
    /// Earliest start (ps) and the delay added after the last dependency (ps).
    pub start_ps: Vec<u64>,
    pub delay_ps: Vec<u64>,
    /// Explicit path id (into `path_start`) or NONE (routing tables).
    pub path: Vec<u32>,
    pub n_barriers: u32,
    /// Compute steps: the host (node index) and the duration (ps).
    pub compute_host: Vec<u32>,
    pub compute_ps: Vec<u64>,
    /// (host, concurrent compute streams) for hosts that run more than one step at a time (default 1).
    pub streams: Vec<(u32, u32)>,
    /// CSR of predecessors over all DAG nodes (encoded `Dep`s). Empty `pred_start` means no dependencies.
    pub pred_start: Vec<u32>,
    pub pred: Vec<u32>,
    /// Explicit paths as node lists: path k is `path_nodes[path_start[k]..path_start[k + 1]]`.
    pub path_start: Vec<u32>,
    pub path_nodes: Vec<u32>,
    /// Interned names; `msg_name`, `barrier_name` and `compute_name` index it (NONE = unnamed). An empty
    /// column means that no row of that kind is named.
    pub names: Vec<String>,
    pub msg_name: Vec<u32>,
    pub barrier_name: Vec<u32>,
    pub compute_name: Vec<u32>,
}

/// Builds a workload row by row (generators, the JSON row form); columns grow in place.
impl Workload {
    pub fn n_msgs(&self) -> usize {
        self.size.len()
    }
    pub fn n_compute(&self) -> usize {
        self.compute_ps.len()
    }
    pub fn n_nodes(&self) -> usize {
        self.n_msgs() + self.n_barriers as usize + self.n_compute()
    }

    /// Predecessors of DAG node x (0 ≤ x < n_nodes).
    #[inline]
    pub fn preds(&self, x: usize) -> &[u32] {
        if self.pred_start.is_empty() {
            return &[];
        }
        &self.pred[self.pred_start[x] as usize..self.pred_start[x + 1] as usize]
    }

    /// The name of message i, if it has one.
    pub fn msg_name(&self, i: usize) -> Option<&str> {
        self.msg_name.get(i).filter(|&&k| k != NONE).map(|&k| self.names[k as usize].as_str())
    }

    /// Concatenate `other` after `self`, shifting every index it holds (messages, barriers, compute steps,
    /// paths, names). The predecessor CSR keeps node order: messages, barriers, compute steps. O(size of both).
    pub fn append(&mut self, other: Workload) {
        self.append_impl(other, true);
    }

    /// Concatenate a fragment whose dependency references are already absolute (collective generators get
    /// the current counts as their base); paths and names are still shifted. O(size of both).
    pub fn append_absolute(&mut self, other: Workload) {
        self.append_impl(other, false);
    }

    fn append_impl(&mut self, other: Workload, shift_deps: bool) {
        if other.n_nodes() == 0 && other.path_start.is_empty() && other.streams.is_empty() {
            return;
        }
        if self.n_nodes() == 0 && self.path_start.is_empty() && self.streams.is_empty() && self.names.is_empty() && shift_deps {
            *self = other;
            return;
        }
        let (m0, b0, c0) = (self.n_msgs() as u32, self.n_barriers, self.n_compute() as u32);
        let (p0, n0) = (self.path_start.len().saturating_sub(1) as u32, self.names.len() as u32);
        let shift = |x: u32| {
            if !shift_deps {
                x
            } else {
                match Dep::decode(x) {
                    Dep::Msg(i) => Dep::Msg(i + m0),
                    Dep::Sent(i) => Dep::Sent(i + m0),
                    Dep::Barrier(i) => Dep::Barrier(i + b0),
                    Dep::Compute(i) => Dep::Compute(i + c0),
                }
                .encode()
            }
        };
        // The predecessor CSR in node order: messages (old, new), barriers (old, new), compute (old, new).
        let (sm, sb) = (self.n_msgs(), self.n_barriers as usize);
        let (om, ob) = (other.n_msgs(), other.n_barriers as usize);
        let has_preds = !self.pred_start.is_empty() || !other.pred_start.is_empty();
        let mut csr: Option<(Vec<u32>, Vec<u32>)> = None;
        if has_preds {
            let mut start = Vec::with_capacity(self.n_nodes() + other.n_nodes() + 1);
            let mut pred = Vec::with_capacity(self.pred.len() + other.pred.len());
            start.push(0u32);
            let ranges = [
                (false, 0..sm),
                (true, 0..om),
                (false, sm..sm + sb),
                (true, om..om + ob),
                (false, sm + sb..self.n_nodes()),
                (true, om + ob..other.n_nodes()),
            ];
            for (is_other, range) in ranges {
                for x in range {
                    if is_other {
                        pred.extend(other.preds(x).iter().map(|&d| shift(d)));
                    } else {
                        pred.extend_from_slice(self.preds(x));
                    }
                    start.push(pred.len() as u32);
                }
            }
            csr = Some((start, pred));
        }
        let name_of = |col: &Vec<u32>, n: usize| -> Vec<u32> {
            if col.is_empty() {
                vec![NONE; n]
            } else {
                col.clone()
            }
        };
        let shift_names =
            |col: &Vec<u32>, n: usize| -> Vec<u32> { name_of(col, n).into_iter().map(|k| if k == NONE { NONE } else { k + n0 }).collect() };
        let any_names = !self.names.is_empty() || !other.names.is_empty();
        let (mn, bn, cn) = if any_names {
            let mut mn = name_of(&self.msg_name, sm);
            mn.extend(shift_names(&other.msg_name, om));
            let mut bn = name_of(&self.barrier_name, sb);
            bn.extend(shift_names(&other.barrier_name, ob));
            let mut cn = name_of(&self.compute_name, self.n_compute());
            cn.extend(shift_names(&other.compute_name, other.n_compute()));
            (mn, bn, cn)
        } else {
            (vec![], vec![], vec![])
        };
        self.src.extend(other.src);
        self.src_nic.extend(other.src_nic);
        self.dst.extend(other.dst);
        self.dst_nic.extend(other.dst_nic);
        self.size.extend(other.size);
        self.packet.extend(other.packet);
        self.header.extend(other.header);
        self.start_ps.extend(other.start_ps);
        self.delay_ps.extend(other.delay_ps);
        self.path.extend(other.path.into_iter().map(|p| if p == NONE { NONE } else { p + p0 }));
        self.n_barriers += other.n_barriers;
        self.compute_host.extend(other.compute_host);
        self.compute_ps.extend(other.compute_ps);
        self.streams.extend(other.streams);
        if !other.path_start.is_empty() {
            if self.path_start.is_empty() {
                self.path_start.push(0);
            }
            let base = self.path_nodes.len() as u32;
            self.path_start.extend(other.path_start[1..].iter().map(|&s| s + base));
            self.path_nodes.extend(other.path_nodes);
        }
        self.names.extend(other.names);
        (self.msg_name, self.barrier_name, self.compute_name) = (mn, bn, cn);
        if let Some((start, pred)) = csr {
            (self.pred_start, self.pred) = (start, pred);
        }
    }

    /// Lower the JSON row form (`RunSpec.messages`, `RunSpec.barriers`) into columns. O(rows + deps).
    pub fn from_rows(messages: &[MessageSpec], barriers: &[BarrierSpec]) -> Workload {
        let mut w = Workload { n_barriers: barriers.len() as u32, ..Workload::default() };
        let mut intern: HashMap<&str, u32> = HashMap::new();
        fn name<'a>(w: &mut Workload, intern: &mut HashMap<&'a str, u32>, s: &'a str) -> u32 {
            if s.is_empty() {
                return NONE;
            }
            *intern.entry(s).or_insert_with(|| {
                w.names.push(s.to_string());
                w.names.len() as u32 - 1
            })
        }
        let mut paths: Vec<&Vec<u32>> = Vec::new();
        w.pred_start.push(0);
        for m in messages {
            w.src.push(m.src);
            w.src_nic.push(m.src_nic);
            w.dst.push(m.dst);
            w.dst_nic.push(m.dst_nic);
            w.size.push(m.size_bytes);
            w.packet.push(m.packet_bytes.min(u32::MAX as u64) as u32);
            w.header.push(m.header_bytes.min(u32::MAX as u64) as u32);
            w.start_ps.push(m.start_ps);
            w.delay_ps.push(m.delay_ps);
            w.path.push(match &m.path {
                Some(p) => {
                    paths.push(p);
                    paths.len() as u32 - 1
                }
                None => NONE,
            });
            let k = name(&mut w, &mut intern, &m.name);
            w.msg_name.push(k);
            w.pred.extend(m.deps.iter().map(|&d| Dep::Msg(d).encode()));
            w.pred.extend(m.sent_deps.iter().map(|&d| Dep::Sent(d).encode()));
            w.pred.extend(m.barriers.iter().map(|&b| Dep::Barrier(b).encode()));
            w.pred_start.push(w.pred.len() as u32);
        }
        for b in barriers {
            let k = name(&mut w, &mut intern, &b.name);
            w.barrier_name.push(k);
            w.pred.extend(b.deps.iter().map(|&d| Dep::Msg(d).encode()));
            w.pred.extend(b.barriers.iter().map(|&x| Dep::Barrier(x).encode()));
            w.pred_start.push(w.pred.len() as u32);
        }
        if !paths.is_empty() {
            w.path_start.push(0);
            for p in paths {
                w.path_nodes.extend_from_slice(p);
                w.path_start.push(w.path_nodes.len() as u32);
            }
        }
        if w.names.is_empty() {
            w.msg_name.clear();
            w.barrier_name.clear();
        }
        w
    }

    /// Check the columns against the network of `spec` (endpoints, sizes, references, cycles); every error
    /// names the row with the user's field names (`messages[12345].dst`). O(M + B + C + edges + nodes).
    pub fn validate(&self, spec: &RunSpec) -> Result<()> {
        let m = self.n_msgs();
        for (col, len) in [
            ("src", self.src.len()),
            ("src_nic", self.src_nic.len()),
            ("dst", self.dst.len()),
            ("dst_nic", self.dst_nic.len()),
            ("packet_size", self.packet.len()),
            ("header", self.header.len()),
            ("start", self.start_ps.len()),
            ("delay", self.delay_ps.len()),
            ("path", self.path.len()),
        ] {
            if len != m {
                return Err(Error::spec(format!("messages.{col}"), format!("column has {len} rows; messages.size has {m}")));
            }
        }
        if self.compute_host.len() != self.n_compute() {
            return Err(Error::spec(
                "compute.host",
                format!("column has {} rows; compute.duration has {}", self.compute_host.len(), self.n_compute()),
            ));
        }
        let n_nodes = self.n_nodes();
        if m > MAX_DEP_INDEX as usize || self.n_barriers > MAX_DEP_INDEX || self.n_compute() > MAX_DEP_INDEX as usize {
            return Err(Error::spec("messages", format!("more than {MAX_DEP_INDEX} rows of one kind")));
        }
        for (col, v) in [("msg_name", &self.msg_name), ("barrier_name", &self.barrier_name), ("compute_name", &self.compute_name)] {
            let want = match col {
                "msg_name" => m,
                "barrier_name" => self.n_barriers as usize,
                _ => self.n_compute(),
            };
            if !v.is_empty() && v.len() != want {
                return Err(Error::spec(format!("workload.{col}"), format!("column has {} rows, expected {want}", v.len())));
            }
            if let Some(i) = v.iter().position(|&k| k != NONE && k as usize >= self.names.len()) {
                return Err(Error::spec(format!("workload.{col}[{i}]"), "name index out of range"));
            }
        }
        if !self.pred_start.is_empty() {
            if self.pred_start.len() != n_nodes + 1 {
                return Err(Error::spec(
                    "workload.pred_start",
                    format!("has {} entries; {} DAG nodes need {}", self.pred_start.len(), n_nodes, n_nodes + 1),
                ));
            }
            if self.pred_start[0] != 0
                || self.pred_start.windows(2).any(|w| w[0] > w[1])
                || *self.pred_start.last().unwrap() as usize != self.pred.len()
            {
                return Err(Error::spec("workload.pred_start", "must rise from 0 to the number of dependencies"));
            }
        } else if !self.pred.is_empty() {
            return Err(Error::spec("workload.pred_start", "dependencies given without their row offsets"));
        }
        let n_paths = self.path_start.len().saturating_sub(1);
        if !self.path_start.is_empty()
            && (self.path_start[0] != 0
                || self.path_start.windows(2).any(|w| w[0] > w[1])
                || *self.path_start.last().unwrap() as usize != self.path_nodes.len())
        {
            return Err(Error::spec("workload.path_start", "must rise from 0 to the number of path nodes"));
        }
        let net = &spec.network;
        let n = net.nodes.len() as u32;
        let nics = spec.nic_counts();
        let end = |i: usize, key: &str, node: u32, nic: u32, nic_key: &str| -> Result<()> {
            if node >= n {
                return Err(Error::spec(format!("messages[{i}].{key}"), format!("node index {node} out of range (0..{n})")));
            }
            let nd = &net.nodes[node as usize];
            if nd.kind != NodeKind::Host {
                return Err(Error::spec(format!("messages[{i}].{key}"), format!("'{}' is a switch; traffic starts and ends at hosts", nd.name)));
            }
            if nic >= nics[node as usize] {
                return Err(Error::spec(
                    format!("messages[{i}].{nic_key}"),
                    format!("'{}' has {} NIC(s); NIC {nic} does not exist", nd.name, nics[node as usize]),
                ));
            }
            Ok(())
        };
        for i in 0..m {
            end(i, "src", self.src[i], self.src_nic[i], "src_nic")?;
            end(i, "dst", self.dst[i], self.dst_nic[i], "dst_nic")?;
            if self.src[i] == self.dst[i] && self.src_nic[i] == self.dst_nic[i] {
                return Err(Error::spec(format!("messages[{i}].dst_nic"), "source and destination are the same NIC of one host"));
            }
            let size = self.size[i];
            if size == 0 {
                return Err(Error::spec(format!("messages[{i}].size"), "must be > 0"));
            }
            if size > MAX_MESSAGE_BYTES {
                return Err(Error::spec(format!("messages[{i}].size"), format!("{size} B exceeds the 1 TiB limit")));
            }
            let (p, h) = (self.packet[i] as u64, self.header[i] as u64);
            if p == 0 {
                return Err(Error::spec(format!("messages[{i}].packet_size"), "must be > 0"));
            }
            if p + h > MAX_PACKET_BYTES {
                return Err(Error::spec(
                    format!("messages[{i}].packet_size"),
                    format!("packet of {} B exceeds the {MAX_PACKET_BYTES} B limit", p + h),
                ));
            }
            let path = self.path[i];
            if path != NONE && path as usize >= n_paths {
                return Err(Error::spec(format!("messages[{i}].path"), format!("path id {path} out of range (0..{n_paths})")));
            }
        }
        for (i, (&h, _)) in self.compute_host.iter().zip(&self.compute_ps).enumerate() {
            if h >= n || net.nodes[h as usize].kind != NodeKind::Host {
                let what = if h >= n {
                    format!("node index {h} out of range (0..{n})")
                } else {
                    format!("'{}' is a switch; compute runs on hosts", net.nodes[h as usize].name)
                };
                return Err(Error::spec(format!("compute[{i}].host"), what));
            }
        }
        for (k, &(h, s)) in self.streams.iter().enumerate() {
            if h >= n || net.nodes[h as usize].kind != NodeKind::Host {
                return Err(Error::spec(format!("streams[{k}].host"), format!("node index {h} is not a host")));
            }
            if s == 0 {
                return Err(Error::spec(format!("streams[{k}].streams"), "must be > 0"));
            }
        }
        let (nb, nc) = (self.n_barriers, self.n_compute() as u32);
        for x in 0..n_nodes {
            for (j, &d) in self.preds(x).iter().enumerate() {
                let (ok, what) = match Dep::decode(d) {
                    Dep::Msg(i) | Dep::Sent(i) => ((i as usize) < m, format!("message index {i} out of range (0..{m})")),
                    Dep::Barrier(i) => (i < nb, format!("barrier index {i} out of range (0..{nb})")),
                    Dep::Compute(i) => (i < nc, format!("compute index {i} out of range (0..{nc})")),
                };
                if !ok {
                    return Err(Error::spec(format!("{}.after[{j}]", self.node_label(x)), what));
                }
                if self.node_of(Dep::decode(d)) == x {
                    return Err(Error::spec(format!("{}.after[{j}]", self.node_label(x)), "a node cannot wait for itself"));
                }
            }
        }
        if let Some(cycle) = self.find_cycle() {
            let names: Vec<String> = cycle.iter().map(|&x| self.node_display(x)).collect();
            return Err(Error::spec(format!("{}.after", self.node_label(cycle[0])), format!("dependency cycle: {}", names.join(" -> "))));
        }
        Ok(())
    }

    /// DAG node index of a dependency.
    #[inline]
    pub fn node_of(&self, d: Dep) -> usize {
        let (m, b) = (self.n_msgs(), self.n_barriers as usize);
        match d {
            Dep::Msg(i) | Dep::Sent(i) => i as usize,
            Dep::Barrier(i) => m + i as usize,
            Dep::Compute(i) => m + b + i as usize,
        }
    }

    /// `messages[i]`, `barriers[i]` or `compute[i]` for DAG node x.
    pub fn node_label(&self, x: usize) -> String {
        let (m, b) = (self.n_msgs(), self.n_barriers as usize);
        if x < m {
            format!("messages[{x}]")
        } else if x < m + b {
            format!("barriers[{}]", x - m)
        } else {
            format!("compute[{}]", x - m - b)
        }
    }

    /// A node's name if it has one, else its label.
    fn node_display(&self, x: usize) -> String {
        let (m, b) = (self.n_msgs(), self.n_barriers as usize);
        let (col, i) = if x < m {
            (&self.msg_name, x)
        } else if x < m + b {
            (&self.barrier_name, x - m)
        } else {
            (&self.compute_name, x - m - b)
        };
        match col.get(i) {
            Some(&k) if k != NONE => self.names[k as usize].clone(),
            _ => self.node_label(x),
        }
    }

    /// A dependency cycle as DAG nodes (first repeated at the end), or None. Iterative DFS, O(nodes + edges).
    fn find_cycle(&self) -> Option<Vec<usize>> {
        let n = self.n_nodes();
        if self.pred.is_empty() {
            return None;
        }
        let mut state = vec![0u8; n];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            state[root] = 1;
            stack.push((root, 0));
            while let Some(&mut (v, ref mut k)) = stack.last_mut() {
                let ps = self.preds(v);
                if *k < ps.len() {
                    let w = self.node_of(Dep::decode(ps[*k]));
                    *k += 1;
                    match state[w] {
                        0 => {
                            state[w] = 1;
                            stack.push((w, 0));
                        }
                        1 => {
                            let from = stack.iter().position(|&(u, _)| u == w).expect("w is on the stack");
                            let mut cyc: Vec<usize> = stack[from..].iter().map(|&(u, _)| u).collect();
                            cyc.push(w);
                            return Some(cyc);
                        }
                        _ => {}
                    }
                } else {
                    state[v] = 2;
                    stack.pop();
                }
            }
        }
        None
    }

    /// Compute streams of every host (default 1). O(nodes + overrides).
    pub fn streams_per_node(&self, n_nodes: usize) -> Vec<u32> {
        let mut s = vec![1u32; n_nodes];
        for &(h, k) in &self.streams {
            if (h as usize) < n_nodes {
                s[h as usize] = k;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_encoding_round_trips() {
        for d in [Dep::Msg(0), Dep::Sent(7), Dep::Barrier(MAX_DEP_INDEX), Dep::Compute(12345)] {
            assert_eq!(Dep::decode(d.encode()), d);
        }
    }

    /// Appending shifts every index: b's message 0 waits for b's barrier 0, which becomes barrier 1.
    #[test]
    fn append_shifts_indices() {
        let mk = |name: &str| {
            let mut w = Workload { n_barriers: 1, ..Workload::default() };
            for col in [&mut w.src, &mut w.src_nic, &mut w.dst_nic, &mut w.path] {
                col.push(0);
            }
            w.path[0] = NONE;
            w.dst.push(1);
            w.size.push(10);
            w.packet.push(10);
            w.header.push(0);
            w.start_ps.push(0);
            w.delay_ps.push(0);
            w.pred_start = vec![0, 1, 2];
            w.pred = vec![Dep::Barrier(0).encode(), Dep::Sent(0).encode()];
            w.names = vec![name.into()];
            w.msg_name = vec![0];
            w
        };
        let mut a = mk("a");
        a.append(mk("b"));
        assert_eq!(a.n_msgs(), 2);
        assert_eq!(a.n_barriers, 2);
        let preds: Vec<Vec<Dep>> = (0..4).map(|x| a.preds(x).iter().map(|&d| Dep::decode(d)).collect()).collect();
        assert_eq!(preds, vec![vec![Dep::Barrier(0)], vec![Dep::Barrier(1)], vec![Dep::Sent(0)], vec![Dep::Sent(1)]]);
        assert_eq!(a.msg_name(1), Some("b"));
        assert_eq!(a.barrier_name, vec![NONE, NONE]);
    }
}
