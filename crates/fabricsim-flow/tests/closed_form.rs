//! Flow engine against closed forms: a lone message matches the packet engine's pipelined formula to the
//! picosecond; sharing, caps, barriers and per-packet spreading match hand calculations.

use fabricsim_core::spec::RunSpec;
use serde_json::json;

/// A chain h0 - s1 - ... - s(k-1) - h1 of `k` links, plus extra hosts on s1 when `extra` > 0.
fn chain(k: usize, rate: u64, delay: u64, latency: u64, extra: usize) -> serde_json::Value {
    let mut nodes = vec![json!({"name": "h0", "kind": "host"})];
    for i in 1..k {
        nodes.push(json!({"name": format!("s{i}"), "kind": "switch", "latency_ps": latency}));
    }
    nodes.push(json!({"name": "h1", "kind": "host"}));
    let mut links: Vec<_> = (0..k).map(|i| json!({"a": i, "b": i + 1, "rate_bps": rate, "delay_ps": delay})).collect();
    for e in 0..extra {
        nodes.push(json!({"name": format!("x{e}"), "kind": "host"}));
        links.push(json!({"a": k + 1 + e, "b": 1, "rate_bps": rate, "delay_ps": delay}));
    }
    json!({"seed": 1, "network": {"nodes": nodes, "links": links}})
}

fn msg(name: &str, src: usize, dst: usize, size: u64, packet: u64, header: u64) -> serde_json::Value {
    json!({"name": name, "src": src, "dst": dst, "size_bytes": size, "packet_bytes": packet, "header_bytes": header})
}

fn run(mut spec: serde_json::Value, messages: Vec<serde_json::Value>) -> fabricsim_core::record::RunRecord {
    spec["messages"] = json!(messages);
    let spec = RunSpec::from_json(&spec.to_string()).expect("valid spec");
    fabricsim_flow::run(&spec).expect("runs")
}

#[test]
fn lone_message_matches_the_pipelined_closed_form() {
    // 100 x 1500 B over 4 hops at 10 Gb/s, 1 us links, 500 ns switches: (P + k - 1)·ser + k·d + (k - 1)·L
    // = 103 x 1.2 us + 4 us + 1.5 us = 129.1 us, as the packet engine.
    let rec = run(chain(4, 10_000_000_000, 1_000_000, 500_000, 0), vec![msg("m", 0, 4, 150_000, 1500, 0)]);
    assert_eq!(rec.completion_ps, Some(129_100_000));
    assert_eq!(rec.fidelity, "flow");
    assert_eq!(rec.hops, vec![0, 0, 0, 100]);
    // With a remainder packet: 10 000 B in 1000 B packets + 40 B headers over one 1 Gb/s link, 1 us:
    // 10 x 1040 x 8 ns + 1 us = 84.2 us; 10 500 B adds a 540 B packet: 84.2 + 4.32 = 88.52 us.
    let rec = run(chain(1, 1_000_000_000, 1_000_000, 0, 0), vec![msg("m", 0, 1, 10_000, 1000, 40)]);
    assert_eq!(rec.completion_ps, Some(84_200_000));
    let rec = run(chain(1, 1_000_000_000, 1_000_000, 0, 0), vec![msg("m", 0, 1, 10_500, 1000, 40)]);
    assert_eq!(rec.completion_ps, Some(88_520_000));
    assert_eq!((rec.packets.tx, rec.packets.rx, rec.packets.in_flight), (11, 11, 0));
}

#[test]
fn two_senders_share_the_bottleneck_then_the_survivor_speeds_up() {
    // h0 and x0 both send to h1 through s1 (1 Gb/s everywhere, no delay): 1 MB and 2 MB. Both run at
    // 0.5 Gb/s until the first finishes at 16 ms; the second then has 1 MB left at 1 Gb/s: 24 ms. Plus the
    // store-and-forward of the last 1000 B packet at s1 (8 us).
    let rec = run(chain(2, 1_000_000_000, 0, 0, 1), vec![msg("a", 0, 2, 1_000_000, 1000, 0), msg("b", 3, 2, 2_000_000, 1000, 0)]);
    let done = &rec.flows.complete_ps;
    assert_eq!(done[0], Some(16_000_000_000 + 8_000_000));
    assert_eq!(done[1], Some(24_000_000_000 + 8_000_000));
}

#[test]
fn barriers_and_send_completion_order_messages() {
    // a (1 MB) then, after barrier "b" (a delivered), c; c also waits for d to be *sent* (not delivered).
    // One 1 Gb/s link with 1 ms delay: d (0.5 MB, sent from t = 0 in parallel with a) shares the NIC with a,
    // both at 0.5 Gb/s, so d is sent at 8 ms and delivered at 9 ms; a, 0.5 MB sent by then, sends the rest
    // at 1 Gb/s in 4 ms and is delivered at 12 + 1 = 13 ms; c (1 MB) starts at 13 ms and lands 8 + 1 ms later.
    let mut spec = chain(1, 1_000_000_000, 1_000_000_000, 0, 0);
    spec["barriers"] = json!([{"name": "b", "deps": [0]}]);
    let mut c = msg("c", 0, 1, 1_000_000, 1000, 0);
    c["barriers"] = json!([0]);
    c["sent_deps"] = json!([2]);
    let rec = run(spec, vec![msg("a", 0, 1, 1_000_000, 1000, 0), c, msg("d", 0, 1, 500_000, 1000, 0)]);
    let done = &rec.flows.complete_ps;
    // d delivered at 9 ms; a sent at 12 ms, delivered at 13 ms; c at 13 + 9 = 22 ms.
    assert_eq!(done[2], Some(9_000_000_000));
    assert_eq!(done[0], Some(13_000_000_000));
    assert_eq!(done[1], Some(13_000_000_000 + 9_000_000_000));
}

#[test]
fn nic_cap_and_cbr_rate() {
    // A 10 Gb/s NIC capped at 2 Gb/s sends 1 MB in 4 ms; a CBR source of 1 Gb/s payload with 24 B headers on
    // 1000 B packets uses 1.024 Gb/s of wire, so its 1 MB (1000 packets) takes 1000 x 1024 x 8 / 1.024e9 = 8 ms.
    let mut spec = chain(1, 10_000_000_000, 0, 0, 0);
    spec["network"]["links"][0]["a_end"] = json!({"rate_cap_bps": 2_000_000_000u64});
    let rec = run(spec, vec![msg("m", 0, 1, 1_000_000, 1000, 0)]);
    assert_eq!(rec.completion_ps, Some(4_000_000_000));
    let mut spec = chain(1, 10_000_000_000, 0, 0, 0);
    spec["sources"] = json!([{"name": "s", "kind": "cbr", "src": 0, "dst": 1, "rate_bps": 1_000_000_000u64,
                              "packet_bytes": 1000, "header_bytes": 24, "max_bytes": 1_000_000}]);
    let rec = run(spec, vec![]);
    assert_eq!(rec.flows.last_rx_ps[0], Some(8_000_000_000));
    assert_eq!(rec.flows.rx_payload_bytes[0], 1_000_000);
}

#[test]
fn per_packet_ecmp_spreads_a_flow_over_its_paths() {
    // h0 - s0 = {s1, s2} = s3 - h1 with 1 Gb/s fabric links and 10 Gb/s host links: per-flow ECMP puts a
    // 1 MB message on one 1 Gb/s path (8 ms); per-packet spreading uses both (4 ms).
    let nodes = json!([{"name": "h0", "kind": "host"}, {"name": "s0", "kind": "switch"}, {"name": "s1", "kind": "switch"},
                       {"name": "s2", "kind": "switch"}, {"name": "s3", "kind": "switch"}, {"name": "h1", "kind": "host"}]);
    let l = |a: u32, b: u32, r: u64| json!({"a": a, "b": b, "rate_bps": r});
    let g = 1_000_000_000u64;
    let links = json!([l(0, 1, 10 * g), l(1, 2, g), l(1, 3, g), l(2, 4, g), l(3, 4, g), l(4, 5, 10 * g)]);
    let mut spec = json!({"seed": 1, "network": {"nodes": nodes, "links": links}});
    let one = run(spec.clone(), vec![msg("m", 0, 5, 1_000_000, 1000, 0)]);
    spec["routing"] = json!({"ecmp": "per_packet"});
    let both = run(spec, vec![msg("m", 0, 5, 1_000_000, 1000, 0)]);
    let ms = |r: &fabricsim_core::record::RunRecord| r.completion_ps.unwrap() as f64 / 1e9;
    assert!((ms(&one) - 8.0).abs() < 0.02, "{}", ms(&one));
    assert!((ms(&both) - 4.0).abs() < 0.02, "{}", ms(&both));
}

#[test]
fn what_flows_cannot_model_is_rejected_by_field() {
    let mut spec = chain(1, 1_000_000_000, 0, 0, 0);
    spec["sources"] = json!([{"name": "s", "kind": "onoff", "src": 0, "dst": 1, "rate_bps": 1000, "packet_bytes": 100, "on_ps": 1, "off_ps": 1, "stop_ps": 1000000}]);
    let err = fabricsim_flow::run(&RunSpec::from_json(&spec.to_string()).unwrap()).unwrap_err().to_string();
    assert!(err.contains("sources[0].kind") && err.contains("flow fidelity"), "{err}");
}
