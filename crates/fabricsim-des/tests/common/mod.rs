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
        self.links.push(LinkSpec { a, b, rate_bps, delay_ps, a_end: PortSpec::default(), b_end: PortSpec::default() });
        self.links.len() - 1
    }
    pub fn spec(self, seed: u64) -> RunSpec {
        RunSpec {
            seed,
            stop_ps: None,
            network: NetworkSpec { nodes: self.nodes, links: self.links, default_queue: EgressSpec::default() },
            routing: RoutingSpec::default(),
            sources: vec![],
            messages: vec![],
            tcp: vec![],
        measure: MeasureSpec::default(),
        }
    }
}

pub fn msg(name: &str, src: u32, dst: u32, size: u64, packet: u64, header: u64) -> MessageSpec {
    MessageSpec {
        name: name.into(),
        src,
        src_nic: 0,
        dst,
        dst_nic: 0,
        size_bytes: size,
        packet_bytes: packet,
        header_bytes: header,
        start_ps: 0,
        deps: vec![],
        sent_deps: vec![],
        delay_ps: 0,
        path: None,
    }
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

