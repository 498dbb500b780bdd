//! Degraded links at flow fidelity (`link_rate` network events): the max-min solve takes the new capacity from the
//! event's time on, in closed form (the packet engine's side of the same case: crates/fabricsim-des/tests/link_rate.rs).

use fabricsim_core::spec::{EgressSpec, LinkSpec, MessageSpec, NetEventKind, NetEventSpec, NetworkSpec, NodeKind, NodeSpec, PortSpec, RunSpec};

const US: u64 = 1_000_000;
const GBPS: u64 = 1_000_000_000;
/// Serialisation of one 1,000 B packet (no header) at 10 Gb/s: 800 ns.
const T: u64 = 800_000;

/// h0 -(10 Gb/s, 1 µs)- sw -(10 Gb/s, 1 µs)- h1, the switch without latency, and one message of 100 packets of
/// 1,000 B from h0 to h1; link 0 is the NIC's (h0–sw).
fn line() -> (RunSpec, u32) {
    let nodes = vec![NodeSpec::new("h0", NodeKind::Host, 0), NodeSpec::new("sw", NodeKind::Switch, 0), NodeSpec::new("h1", NodeKind::Host, 0)];
    let link = |a, b| LinkSpec { a, b, rate_bps: 10 * GBPS, delay_ps: US, weight: 1, a_end: PortSpec::default(), b_end: PortSpec::default() };
    let mut spec = RunSpec::new(1, NetworkSpec { nodes, links: vec![link(0, 1), link(1, 2)], default_queue: EgressSpec::default(), topology: None });
    spec.messages.push(MessageSpec::new("m", 0, 2, 100_000, 1000, 0));
    (spec, 0)
}

fn rate_event(at_ps: u64, link: u32, rate_bps: u64) -> NetEventSpec {
    NetEventSpec { at_ps, kind: NetEventKind::LinkRate, links: vec![link], ber: 0.0, rate_bps }
}

/// The NIC's link halves (10 → 5 Gb/s) at t = 40.5T = 32.4 µs: the fluid message sends at 10 Gb/s until t
/// (324,000 of its 800,000 bits), then the rest, 476,000 bits, at 5 Gb/s: 95.2 µs = 119T, so its last bit
/// leaves h0 at 159.5T; the tail is d + (d + T) (its last packet stored and forwarded at sw at 10 Gb/s):
/// completion = 160.5T + 2d = 128.4 µs + 2 µs. (Half a packet later than the packet engine, whose packet on the
/// wire at t keeps the old rate; the fluid has no packet on the wire.)
#[test]
fn the_flow_engine_solves_with_the_new_capacity_from_t_on() {
    let (mut spec, nic) = line();
    spec.events.push(rate_event(40 * T + T / 2, nic, 5 * GBPS));
    let rec = fabricsim_flow::run(&spec).expect("the flow engine takes link_rate events");
    assert_eq!(rec.flows.complete_ps[0], Some(160 * T + T / 2 + 2 * US));
    assert_eq!(rec.net_events.len(), 1);
    assert_eq!(rec.net_events[0].rate_bps, 5 * GBPS);
    // Without the event: 100T + 2d + T (the fault-free packet engine's 101T + 2d).
    let (plain, _) = line();
    assert_eq!(fabricsim_flow::run(&plain).expect("runs").flows.complete_ps[0], Some(101 * T + 2 * US));
}

/// The flow engine still refuses the events it cannot model (loss), naming the event.
#[test]
fn the_flow_engine_refuses_a_link_down() {
    let (mut spec, nic) = line();
    spec.events.push(rate_event(T, nic, 5 * GBPS));
    spec.events.push(NetEventSpec { at_ps: T, kind: NetEventKind::LinkDown, links: vec![nic], ber: 0.0, rate_bps: 0 });
    let err = fabricsim_flow::run(&spec).expect_err("a link_down is not modelled at flow fidelity").to_string();
    assert!(err.contains("events[1]") && err.contains("flow fidelity"), "{err}");
}

/// Two senders x0, x1 -(10 Gb/s, 1 µs)- sw -(10 Gb/s, 1 µs)- h1, a message of 100,000 B (1,000 B packets, no
/// header: 800,000 bits) from each: they share sw → h1 at 5 Gb/s each. At t = 40 µs (200,000 bits sent each)
/// that link drops to 4 Gb/s: 2 Gb/s each for the remaining 600,000 bits, 300 µs, so both finish sending at
/// 340 µs. Tail: d, then d plus the last packet's store and forward at sw at the rate now in force
/// (8,000 bits / 4 Gb/s = 2 µs): completion 340 + 1 + 1 + 2 = 344 µs.
#[test]
fn a_shared_bottleneck_degrades_both_flows_max_min_fairly() {
    let nodes = vec![
        NodeSpec::new("x0", NodeKind::Host, 0),
        NodeSpec::new("x1", NodeKind::Host, 0),
        NodeSpec::new("sw", NodeKind::Switch, 0),
        NodeSpec::new("h1", NodeKind::Host, 0),
    ];
    let link = |a, b| LinkSpec { a, b, rate_bps: 10 * GBPS, delay_ps: US, weight: 1, a_end: PortSpec::default(), b_end: PortSpec::default() };
    let links = vec![link(0, 2), link(1, 2), link(2, 3)];
    let mut spec = RunSpec::new(1, NetworkSpec { nodes, links, default_queue: EgressSpec::default(), topology: None });
    spec.messages.push(MessageSpec::new("a", 0, 3, 100_000, 1000, 0));
    spec.messages.push(MessageSpec::new("b", 1, 3, 100_000, 1000, 0));
    spec.events.push(rate_event(40 * US, 2, 4 * GBPS));
    let rec = fabricsim_flow::run(&spec).expect("runs");
    assert_eq!(rec.flows.complete_ps, vec![Some(344 * US), Some(344 * US)]);
    assert_eq!(rec.net_events[0].links, vec!["sw-h1".to_string()]);
}
