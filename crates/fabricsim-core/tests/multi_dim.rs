//! The `multi_dim` family (ASTRA-sim's networks) by hand: its nodes and links counted, and its dimension-order
//! tables walked hop by hop against ASTRA-sim's routing (dimension 0 first; a ring the shorter way, clockwise on a
//! tie; a switch through the group's switch; fully connected directly).

use fabricsim_core::compile::{compile, Compiled};
use fabricsim_core::scenario::{astra, cli, Scenario};
use fabricsim_core::spec::RunSpec;

fn compiled(text: &str) -> Compiled {
    let sc = Scenario::parse(text).expect("the scenario reads");
    let w = cli::wire_of(&sc).expect("the scenario lowers");
    let spec: RunSpec = serde_json::from_value(w.header).expect("a wire spec");
    compile(spec, w.workload.unwrap_or_default()).expect("the scenario compiles")
}

fn node(c: &Compiled, name: &str) -> u32 {
    c.topo.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no node {name}")) as u32
}

/// The nodes a packet from router `from` crosses to host `to` (the first of equal next hops each time).
fn walk(c: &Compiled, from: u32, to: u32) -> Vec<String> {
    let ep = c.topo.endpoints.iter().position(|&nic| c.topo.ports[nic as usize].node == to).expect("an endpoint") as u32;
    let (mut v, mut seen) = (from, vec![c.topo.names[from as usize].clone()]);
    while v != to {
        let hops = c.fib.next_hops(v, ep);
        assert!(!hops.is_empty(), "no route from {} to {}", c.topo.names[v as usize], c.topo.names[to as usize]);
        v = c.topo.ports[hops[0] as usize].peer_node;
        seen.push(c.topo.names[v as usize].clone());
        assert!(seen.len() < 64, "a loop: {seen:?}");
    }
    seen
}

#[test]
fn a_ring_switch_and_fully_connected_grid_by_hand() {
    let c = compiled(
        r#"
[topology]
kind = "multi_dim"
dims = [{ shape = "ring", npus = 4, rate = "400Gbps", delay = "500ns" },
        { shape = "switch", npus = 2, rate = "200Gbps", delay = "1us" },
        { shape = "fully_connected", npus = 3, rate = "100Gbps" }]
"#,
    );
    // 4 × 2 × 3 = 24 NPUs: 24 hosts, 24 routers, 24 / 2 = 12 switches of dimension 1.
    let hosts = c.topo.names.iter().filter(|n| !n.contains('.')).count();
    assert_eq!((hosts, c.topo.n_nodes()), (24, 24 + 24 + 12));
    // Links: 24 host links; rings of 4: 4 links × 6 rings; 24 router–switch links; 8 groups of 3 pairs.
    let links = c.spec.network.links.len();
    assert_eq!(links, 24 + 24 + 24 + 8 * 3);
    // The host link carries all of an NPU's links: 2 × 400 + 200 + 2 × 100 = 1,200 Gb/s.
    assert_eq!(c.spec.network.links[0].rate_bps, 1_200_000_000_000);
    // npu i at (i % 4, i / 4 % 2, i / 8). npu0 → npu2: 2 steps either way round the ring of 4: clockwise.
    let r = |i: u32| format!("npu{i}.r");
    assert_eq!(walk(&c, node(&c, &r(0)), node(&c, "npu2")), [r(0), r(1), r(2), "npu2".into()]);
    // npu1 → npu0: one step back.
    assert_eq!(walk(&c, node(&c, &r(1)), node(&c, "npu0")), [r(1), r(0), "npu0".into()]);
    // npu0 (0,0,0) → npu23 (3,1,2): back round the ring to x = 3 (npu3), through npu3's switch of dimension 1
    // (groups numbered by their first member: 0, 1, 2, 3, 8, 9, ...; npu3's is d1.sw3) to y = 1 (npu7), then
    // directly to z = 2.
    assert_eq!(walk(&c, node(&c, &r(0)), node(&c, "npu23")), [r(0), r(3), "d1.sw3".into(), r(7), r(23), "npu23".into()]);
    // npu9 (1,0,1) → npu13 (1,1,1): only y differs; the group starting at npu9 is the sixth (0, 1, 2, 3, 8, 9).
    assert_eq!(walk(&c, node(&c, &r(9)), node(&c, "npu13")), [r(9), "d1.sw5".into(), r(13), "npu13".into()]);
}

#[test]
fn astra_sims_ring_of_8_is_16_nodes_and_16_links() {
    let doc = astra::fabric("topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n", false).expect("reads");
    let sc = Scenario::from_json(&doc, None).expect("a fabric");
    let w = cli::wire_of(&sc).expect("lowers");
    let spec: RunSpec = serde_json::from_value(w.header).expect("spec");
    let c = compile(spec, Default::default()).expect("compiles");
    // 8 NPUs, each a host and a router; 8 host links and a ring of 8.
    assert_eq!((c.topo.n_nodes(), c.spec.network.links.len()), (16, 16));
    // Ring links at 50 × 2^33 bit/s, 500 ns; host links at twice that (two ring links), no delay.
    let ring = &c.spec.network.links[8];
    assert_eq!((ring.rate_bps, ring.delay_ps), (429_496_729_600, 500_000));
    assert_eq!((c.spec.network.links[0].rate_bps, c.spec.network.links[0].delay_ps), (858_993_459_200, 0));
    // Four steps either way from npu0 to npu4: clockwise, as ASTRA-sim's Ring::route on a tie.
    let r = |i: u32| format!("npu{i}.r");
    assert_eq!(walk(&c, node(&c, &r(0)), node(&c, "npu4")), [r(0), r(1), r(2), r(3), r(4), "npu4".into()]);
    assert_eq!(walk(&c, node(&c, &r(0)), node(&c, "npu5")), [r(0), r(7), r(6), r(5), "npu5".into()]);
}
