//! The spec the engine examples share: a hand-built network with deep DropTail queues and per-flow ECMP.

use fabricsim_core::spec::*;

/// A full-duplex link of `rate_bps` and `delay_ps` between nodes a and b, default ports.
pub fn link(a: u32, b: u32, rate_bps: u64, delay_ps: u64) -> LinkSpec {
    LinkSpec { a, b, rate_bps, delay_ps, weight: 1, a_end: PortSpec::default(), b_end: PortSpec::default() }
}

/// Seed 1, `nodes` and `links`, 1,000,000-packet DropTail egress queues (nothing drops), per-flow ECMP, `messages`.
pub fn spec(nodes: Vec<NodeSpec>, links: Vec<LinkSpec>, messages: Vec<MessageSpec>) -> RunSpec {
    let network =
        NetworkSpec { nodes, links, default_queue: EgressSpec { limit_packets: Some(1_000_000), limit_bytes: None, qdisc: None }, topology: None };
    RunSpec { messages, routing: RoutingSpec { ecmp: EcmpMode::PerFlow, ..Default::default() }, ..RunSpec::new(1, network) }
}
