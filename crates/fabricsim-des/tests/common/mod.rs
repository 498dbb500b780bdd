//! Shared builders for the engine's integration tests.
#![allow(dead_code)]

use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;

pub const US: u64 = 1_000_000;
pub const MS: u64 = 1_000_000_000;
pub const GBPS: u64 = 1_000_000_000;

pub struct Net {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
}

impl Net {
    pub fn new() -> Net {
        Net { nodes: vec![], links: vec![] }
    }
    pub fn host(&mut self, name: &str) -> u32 {
        self.nodes.push(NodeSpec::new(name, NodeKind::Host, 0));
        self.nodes.len() as u32 - 1
    }
    pub fn switch(&mut self, name: &str, latency_ps: u64) -> u32 {
        self.nodes.push(NodeSpec::new(name, NodeKind::Switch, latency_ps));
        self.nodes.len() as u32 - 1
    }
    pub fn link(&mut self, a: u32, b: u32, rate_bps: u64, delay_ps: u64) -> usize {
        self.links.push(LinkSpec { a, b, rate_bps, delay_ps, weight: 1, a_end: PortSpec::default(), b_end: PortSpec::default() });
        self.links.len() - 1
    }
    pub fn spec(self, seed: u64) -> RunSpec {
        RunSpec::new(seed, NetworkSpec { nodes: self.nodes, links: self.links, default_queue: EgressSpec::default(), topology: None })
    }
}

pub fn msg(name: &str, src: u32, dst: u32, size: u64, packet: u64, header: u64) -> MessageSpec {
    MessageSpec::new(name, src, dst, size, packet, header)
}

pub fn source(name: &str, kind: SourceKind, src: u32, dst: u32, rate_bps: u64, packet: u64) -> SourceSpec {
    SourceSpec {
        name: name.into(),
        kind,
        src,
        src_nic: 0,
        dst,
        dst_nic: 0,
        rate_bps,
        packet_bytes: packet,
        header_bytes: 0,
        on_ps: 0,
        off_ps: 0,
        start_ps: 0,
        stop_ps: None,
        max_bytes: None,
        path: None,
    }
}

pub fn run(spec: &RunSpec) -> RunRecord {
    fabricsim_des::run(spec).expect("run succeeds")
}

/// k senders -(1 Gb/s, 2 ms)- leaf -(100 Mb/s, 5 ms)- spine -(1 Gb/s, 2 ms)- rx: returns (net, senders, rx).
pub fn dumbbell(k: usize) -> (Net, Vec<u32>, u32) {
    let mut n = Net::new();
    let leaf = n.switch("leaf", 0);
    let spine = n.switch("spine", 0);
    let rx = n.host("rx");
    let senders: Vec<u32> = (0..k).map(|i| n.host(&format!("tx{i}"))).collect();
    for &h in &senders {
        n.link(h, leaf, GBPS, 2 * MS);
    }
    n.link(leaf, spine, 100_000_000, 5 * MS);
    n.link(spine, rx, GBPS, 2 * MS);
    (n, senders, rx)
}

/// Senders and a receiver on one switch of `model`, every link 100 Gb/s with 1 µs of delay: (net, senders, rx).
pub fn star(n: u32, model: SwitchModel) -> (Net, Vec<u32>, u32) {
    let mut net = Net::new();
    let sw = net.switch("sw", 0);
    net.nodes[sw as usize].model = model;
    let senders: Vec<u32> = (0..n).map(|i| net.host(&format!("s{i}"))).collect();
    let rx = net.host("rx");
    for &h in senders.iter().chain([rx].iter()) {
        net.link(h, sw, 100 * GBPS, US);
    }
    (net, senders, rx)
}

/// A bulk TCP transfer of `bytes` from `src` to `dst` with 1,000 B segments and 40 B headers, an initial window
/// of 10, a 200 ms minimum RTO (1 s initial), 1 ms timestamps, delayed ACKs every 2 segments (200 ms), 128 KiB
/// buffers, SACK and 3 duplicate ACKs; tests change what they need with struct-update syntax.
pub fn tcp_spec(name: &str, src: u32, dst: u32, cc: TcpCc, bytes: u64) -> TcpSpec {
    TcpSpec {
        name: name.into(),
        src,
        src_nic: 0,
        dst,
        dst_nic: 0,
        cc,
        start_ps: 0,
        stop_ps: None,
        max_bytes: Some(bytes),
        mss_bytes: 1000,
        header_bytes: 40,
        initial_cwnd: 10,
        min_rto_ps: 200 * MS,
        initial_rto_ps: 1_000 * MS,
        clock_granularity_ps: MS,
        delack_count: 2,
        delack_timeout_ps: 200 * MS,
        rcv_buf_bytes: 131_072,
        snd_buf_bytes: 131_072,
        app_write_bytes: 1000,
        dupack_threshold: 3,
        sack: true,
        path: None,
    }
}
