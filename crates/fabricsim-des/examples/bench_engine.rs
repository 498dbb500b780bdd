//! Engine throughput on the fixed benchmark scenario (the same one `make bench` runs through Python), for profiling.
//!
//! 64 flows x 100 000 packets x 4 hops: leaf-spine with 2 leaves, 8 spines, 64 hosts per leaf (100 Gb/s),
//! leaf-spine links 800 Gb/s, per-flow ECMP, DropTail FIFOs, every host on leaf 0 sends one message of
//! 100 000 x 1 KiB packets to its peer on leaf 1. Usage: `cargo run --release --example bench_engine [packets]`.

use fabricsim_core::spec::*;

fn main() {
    let packets: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("packets per flow"))
        .unwrap_or(100_000);
    let (hosts, spines) = (64u32, 8u32);
    let mut nodes = vec![];
    let mut links = vec![];
    let sw = |name: String| NodeSpec::new(name, NodeKind::Switch, 0);
    nodes.push(sw("leaf0".into()));
    nodes.push(sw("leaf1".into()));
    for s in 0..spines {
        nodes.push(sw(format!("spine{s}")));
    }
    let link = |a, b, rate_bps| LinkSpec {
        a,
        b,
        rate_bps,
        delay_ps: 1_000_000,
        weight: 1,
        a_end: PortSpec::default(),
        b_end: PortSpec::default(),
    };
    for s in 0..spines {
        links.push(link(0, 2 + s, 800_000_000_000));
        links.push(link(1, 2 + s, 800_000_000_000));
    }
    let first_host = nodes.len() as u32;
    for h in 0..2 * hosts {
        nodes.push(NodeSpec::new(format!("h{h}"), NodeKind::Host, 0));
        links.push(link(first_host + h, h / hosts, 100_000_000_000));
    }
    let messages = (0..hosts)
        .map(|i| MessageSpec::new(format!("m{i}"), first_host + i, first_host + hosts + i, packets * 1024, 1024, 64))
        .collect();
    let network = NetworkSpec {
        nodes,
        links,
        default_queue: EgressSpec {
            limit_packets: Some(1_000_000),
            limit_bytes: None,
            qdisc: None,
        },
    };
    let spec = RunSpec {
        messages,
        routing: RoutingSpec {
            ecmp: EcmpMode::PerFlow,
            ..Default::default()
        },
        ..RunSpec::new(1, network)
    };
    let r = fabricsim_des::run(&spec).expect("benchmark run");
    println!(
        "events {} in {:.3} s = {:.2} M events/s; packets rx {} dropped {}; completion {:.3} ms",
        r.events,
        r.wall_s,
        r.events as f64 / r.wall_s / 1e6,
        r.packets.rx,
        r.packets.dropped,
        r.completion_ps.unwrap_or(0) as f64 / 1e9
    );
}
