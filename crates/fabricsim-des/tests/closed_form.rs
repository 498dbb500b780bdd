//! Closed-form and hand-computed checks of the packet engine: timing, drops, fairness, ECMP, DAG, determinism.

mod common;

use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;
use fabricsim_core::Error;

#[test]
fn one_message_over_one_link_is_exact() {
    let mut n = Net::new();
    let a = n.host("a");
    let b = n.host("b");
    n.link(a, b, GBPS, US);
    let mut spec = n.spec(1);
    // 10 packets of 1000 B payload + 40 B header: 10 * 1040 * 8 / 1e9 s = 83.2 us, plus 1 us propagation.
    spec.messages.push(msg("m", a, b, 10_000, 1000, 40));
    let r = run(&spec);
    assert_eq!(r.completion_ps, Some(84_200_000));
    // A remainder packet: 10 500 B = 10 x 1000 + 500, 11 headers: (10 500 + 440) * 8 ns = 87.52 us, + 1 us.
    spec.messages[0].size_bytes = 10_500;
    let r = run(&spec);
    assert_eq!(r.completion_ps, Some(88_520_000));
    assert_eq!(r.flows.tx_packets, vec![11]);
    assert_eq!(r.flows.rx_bytes, vec![10_940]);
}

#[test]
fn store_and_forward_over_k_hops_is_pipelined() {
    // h0 - s1 - s2 - s3 - h1: k = 4 links, 3 switches of 500 ns latency, 10 Gb/s, 1 us per link.
    let mut n = Net::new();
    let h0 = n.host("h0");
    let s: Vec<u32> = (1..=3).map(|i| n.switch(&format!("s{i}"), 500_000)).collect();
    let h1 = n.host("h1");
    n.link(h0, s[0], 10 * GBPS, US);
    n.link(s[0], s[1], 10 * GBPS, US);
    n.link(s[1], s[2], 10 * GBPS, US);
    n.link(s[2], h1, 10 * GBPS, US);
    let mut spec = n.spec(1);
    spec.network.default_queue.limit_packets = None;
    // 100 packets of 1500 B: ser = 1.2 us. T = (P + k - 1) ser + k d + (k - 1) L = 103 * 1.2 + 4 + 1.5 us.
    spec.messages.push(msg("m", h0, h1, 150_000, 1500, 0));
    let r = run(&spec);
    assert_eq!(r.completion_ps, Some(129_100_000));
    assert_eq!(r.hops, vec![0, 0, 0, 100], "every packet crosses 3 switches");
    // The single-packet case is k (ser + d) + (k - 1) L = 4 * 2.2 + 1.5 = 10.3 us.
    spec.messages[0].size_bytes = 1500;
    assert_eq!(run(&spec).completion_ps, Some(10_300_000));
}

#[test]
fn droptail_drops_the_hand_computed_count() {
    // a -(2 Gb/s)- s -(0.9 Gb/s)- b, 5-packet egress queue at s. 20 packets of 1000 B arrive every 4 us;
    // service takes 8.888889 us. By t = 80 us (last arrival) 1 + floor(76 / 8.888889) = 9 packets have
    // entered service and 5 wait, so 14 are accepted and 6 dropped (no arrival coincides with a departure).
    // The 6 are re-sent 100 us (the default RTO) after the last packet started (76 us) into the drained queue,
    // and the last leaves s at 180 us + 6 x 8,888,889 ps (tests/test_retransmit.py has the derivation).
    let mut n = Net::new();
    let a = n.host("a");
    let s = n.switch("s", 0);
    let b = n.host("b");
    n.link(a, s, 2 * GBPS, 0);
    n.link(s, b, 900_000_000, 0);
    let mut spec = n.spec(1);
    spec.network.default_queue.limit_packets = Some(5);
    spec.messages.push(msg("m", a, b, 20_000, 1000, 0));
    let r = run(&spec);
    assert_eq!(r.packets.dropped, 6);
    assert_eq!(r.packets.rx, 20);
    assert_eq!(r.flows.lost_packets, vec![6]);
    assert_eq!(r.completion_ps, Some(180_000_000 + 6 * 8_888_889), "re-sent at one timeout");
    spec.retransmit = Some(fabricsim_core::spec::RetransmitSpec { rto_ps: 100_000_000, max_retries: 0 });
    let r = run(&spec);
    assert_eq!((r.packets.dropped, r.packets.rx), (6, 14));
    assert_eq!(r.completion_ps, None, "without retransmission a message that lost packets never completes");
    let sb = r.queues.name.iter().position(|x| x == "s->b").unwrap();
    assert_eq!((r.queues.drops[sb], r.queues.peak_packets[sb]), (6, 5));
}

/// Run 4 CBR senders at ~61.8 Mb/s (a 129.44 us packet period) into a 100 Mb/s DropTail bottleneck
/// (2.5x overload) with the given start offsets; return each flow's share of the received bytes.
fn bottleneck_shares(offsets_ps: [u64; 4]) -> Vec<f64> {
    let (n, senders, rx) = dumbbell(4);
    let mut spec = n.spec(1);
    for (i, &h) in senders.iter().enumerate() {
        let mut s = source(&format!("f{i}"), SourceKind::Cbr, h, rx, 61_803_399, 1000);
        s.start_ps = offsets_ps[i];
        s.stop_ps = Some(4000 * MS);
        spec.sources.push(s);
    }
    let r = run(&spec);
    let total: u64 = r.flows.rx_bytes.iter().sum();
    // The bottleneck runs at line rate while overloaded: 100 Mb/s for ~4 s.
    assert!(total as f64 * 8.0 / 4.0 > 0.99e8);
    r.flows.rx_bytes.iter().map(|&b| b as f64 / total as f64).collect()
}

const PERIOD_PS: u64 = 129_442_719; // 8000 bits / 61.803399 Mb/s

#[test]
fn staggered_udp_flows_share_a_fifo_bottleneck_equally() {
    // Starts staggered by a quarter period (plus whole periods): arrivals interleave evenly. The period is
    // incommensurate with the 80 us service time, so departures sweep every phase and each flow gets 1/4.
    let shares = bottleneck_shares([0, 3 * PERIOD_PS + PERIOD_PS / 4, 7 * PERIOD_PS + PERIOD_PS / 2, 2 * PERIOD_PS + 3 * PERIOD_PS / 4]);
    for (i, &share) in shares.iter().enumerate() {
        assert!((share - 0.25).abs() < 0.25 * 0.02, "flow {i} got {share:.4} of the bottleneck, want 0.25 within 2%");
    }
}

#[test]
fn droptail_shares_follow_arrival_phase_gaps() {
    // Periodic arrivals into a full DropTail queue: a slot freed by a departure goes to the next arrival,
    // so a flow's share is the phase gap since the previous flow's arrival (departure phases are
    // equidistributed). Offsets 0, 0.1, 0.5, 0.6 of a period -> gaps 0.4, 0.1, 0.4, 0.1. This is the
    // deterministic-CBR phase effect; it is real (ns-3 shows it too), not an engine artefact.
    let shares = bottleneck_shares([0, PERIOD_PS / 10, PERIOD_PS / 2, 6 * PERIOD_PS / 10]);
    for (i, (&share, want)) in shares.iter().zip([0.4, 0.1, 0.4, 0.1]).enumerate() {
        assert!((share - want).abs() < 0.01, "flow {i} got {share:.4}, want {want} (its phase gap)");
    }
}

#[test]
fn per_message_ecmp_spreads_evenly_and_per_flow_pins() {
    // h0 - s0 = 8 spines = s9 - h1; 10 000 one-packet messages.
    let mut n = Net::new();
    let h0 = n.host("h0");
    let s0 = n.switch("s0", 0);
    let spines: Vec<u32> = (0..8).map(|i| n.switch(&format!("sp{i}"), 0)).collect();
    let s9 = n.switch("s9", 0);
    let h1 = n.host("h1");
    n.link(h0, s0, 100 * GBPS, 0);
    for &sp in &spines {
        n.link(s0, sp, 100 * GBPS, 0);
        n.link(sp, s9, 100 * GBPS, 0);
    }
    n.link(s9, h1, 100 * GBPS, 0);
    let mut spec = n.spec(7);
    spec.network.default_queue.limit_packets = None;
    spec.routing.ecmp = EcmpMode::PerMessage;
    for i in 0..10_000 {
        spec.messages.push(msg(&format!("m{i}"), h0, h1, 1000, 1000, 0));
    }
    let up = |r: &RunRecord| -> Vec<u64> {
        (0..8).map(|k| r.queues.tx_packets[r.queues.name.iter().position(|x| *x == format!("s0->sp{k}")).unwrap()]).collect()
    };
    let counts = up(&run(&spec));
    assert_eq!(counts.iter().sum::<u64>(), 10_000);
    // Uniformity: Pearson's chi-square over 8 bins stays below its 99.9% quantile for 7 degrees of freedom.
    let chi2: f64 = counts.iter().map(|&c| (c as f64 - 1250.0).powi(2) / 1250.0).sum();
    assert!(chi2 < 24.32, "chi-square {chi2:.2} rejects uniform ECMP: {counts:?}");
    for (k, &c) in counts.iter().enumerate() {
        assert!((c as f64 - 1250.0).abs() < 0.05 * 1250.0, "spine {k} carried {c}, want 1250 within 5%: {counts:?}");
    }
    // One 10 000-packet message: per-message ECMP keeps every packet on one path.
    spec.messages = vec![msg("big", h0, h1, 10_000_000, 1000, 0)];
    let counts = up(&run(&spec));
    assert_eq!(counts.iter().filter(|&&c| c > 0).count(), 1, "{counts:?}");
    // Per-packet ECMP spreads the same message.
    spec.routing.ecmp = EcmpMode::PerPacket;
    let counts = up(&run(&spec));
    assert!(counts.iter().all(|&c| c > 1000), "{counts:?}");
}

#[test]
fn dag_starts_a_message_only_after_its_dependencies() {
    let mut n = Net::new();
    let a = n.host("a");
    let s = n.switch("s", 0);
    let b = n.host("b");
    let c = n.host("c");
    n.link(a, s, GBPS, 0);
    n.link(b, s, GBPS, 0);
    n.link(c, s, GBPS, 0);
    let mut spec = n.spec(1);
    spec.messages.push(msg("m0", a, b, 10_000, 1000, 0)); // 80 us per link, 2 links pipelined: 88 us
    spec.messages.push(msg("m1", c, b, 1000, 1000, 0)); // independent, 16 us
    let mut m2 = msg("m2", b, a, 1000, 1000, 0);
    m2.deps = vec![0, 1];
    m2.delay_ps = 2 * US;
    spec.messages.push(m2);
    let r = run(&spec);
    let done = |i: usize| r.flows.complete_ps[i].unwrap();
    let start = |i: usize| r.flows.start_ps[i].unwrap();
    // The first packets of m0 and m1 reach s at the same instant (8 us); equal-time events run in insertion
    // order, so m0's goes first and m1's waits one slot: m1 done at 24 us. s->b then stays busy: m0's
    // 10 packets and m1's one leave back to back from 8 us, so m0 is done at 8 + 11 * 8 = 96 us.
    assert_eq!(done(1), 24 * US);
    assert_eq!(done(0), 96 * US);
    assert_eq!(start(2), done(0).max(done(1)) + 2 * US);
    assert_eq!(done(2), start(2) + 16 * US);
    assert_eq!(r.completion_ps, Some(done(2)));
}

#[test]
fn onoff_follows_ns3_semantics_with_residual_bits() {
    // 8 Mb/s, 1000 B packets: one packet per ms. Off 5 ms first (ns-3 starts with an off period), on 10.5 ms:
    // packets at 6..=15 ms; 0.5 ms of residual (4000 bits) carries over, so the next on period (20.5 ms)
    // sends its first packet after 0.5 ms: 21..=30 ms; the application stops at 30.9 ms. 20 packets.
    let mut n = Net::new();
    let a = n.host("a");
    let b = n.host("b");
    n.link(a, b, GBPS, 0);
    let mut spec = n.spec(1);
    let mut s = source("onoff", SourceKind::Onoff, a, b, 8_000_000, 1000);
    s.on_ps = 10_500 * US;
    s.off_ps = 5 * MS;
    s.stop_ps = Some(30_900 * US);
    spec.sources.push(s);
    let mut c = source("cbr", SourceKind::Cbr, b, a, 8_000_000, 1000);
    c.stop_ps = Some(10_500 * US);
    spec.sources.push(c);
    let r = run(&spec);
    assert_eq!(r.flows.tx_packets, vec![20, 10]);
    assert_eq!(r.flows.first_tx_ps[0], Some(6 * MS));
    assert_eq!(r.flows.last_tx_ps[0], Some(30 * MS));
    assert_eq!(r.flows.first_tx_ps[1], Some(MS), "CBR sends its first packet one interval after start");
    // max_bytes stops the source after 3 packets.
    spec.sources[1].max_bytes = Some(3000);
    assert_eq!(run(&spec).flows.tx_packets[1], 3);
}

#[test]
fn injection_cap_spaces_packet_starts() {
    // 10 Gb/s link, 1 Gb/s cap: 1250 B packets serialise in 1 us but start every 10 us.
    let mut n = Net::new();
    let a = n.host("a");
    let b = n.host("b");
    let l = n.link(a, b, 10 * GBPS, 500_000);
    let mut spec = n.spec(1);
    spec.network.links[l].a_end.rate_cap_bps = Some(GBPS);
    spec.messages.push(msg("m", a, b, 12_500, 1250, 0));
    assert_eq!(run(&spec).completion_ps, Some(9 * 10 * US + US + 500_000));
}

#[test]
fn stopped_run_conserves_packets_in_flight() {
    let mut n = Net::new();
    let a = n.host("a");
    let s = n.switch("s", 0);
    let b = n.host("b");
    n.link(a, s, 2 * GBPS, 10 * US);
    n.link(s, b, GBPS, 10 * US);
    let mut spec = n.spec(1);
    spec.network.default_queue.limit_packets = Some(20);
    spec.messages.push(msg("m", a, b, 1_000_000, 1000, 0));
    spec.stop_ps = Some(300 * US);
    let r = run(&spec);
    let p = r.packets;
    assert!(p.in_flight > 0 && p.dropped > 0 && p.rx > 0, "{p:?}");
    assert_eq!(p.tx, p.rx + p.dropped + p.in_flight);
    assert!(r.end_ps <= 300 * US);
}

#[test]
fn queue_samples_are_taken_at_the_interval() {
    let mut n = Net::new();
    let a = n.host("a");
    let s = n.switch("s", 0);
    let b = n.host("b");
    n.link(a, s, 2 * GBPS, 0);
    n.link(s, b, GBPS, 0);
    let mut spec = n.spec(1);
    spec.network.default_queue.limit_packets = None;
    spec.messages.push(msg("m", a, b, 100_000, 1000, 0)); // done at 800 us + 4 us
    spec.measure.queue_sample_ps = Some(100 * US);
    spec.measure.sample_ports = Some(vec![(1, 1)]); // s -> b
    let r = run(&spec);
    // Sampling goes on while any other event is pending: the last packet lands at 804 us, so the sample at
    // 800 us schedules one more at 900 us (an empty queue), and then sampling ends.
    assert_eq!(r.samples.t_ps, (1..=9).map(|k| k * 100 * US).collect::<Vec<_>>());
    assert_eq!(r.samples.packets[8], 0);
    // At 400 us: arrivals every 4 us from 4 us, so the 100th lands at exactly 400 us, and a sample sees every
    // arrival and departure of its own picosecond (samples come last in the tie order, `Ev::tie_key`): 100
    // arrived. Service takes 8 us from 4 us, so packets 1..=50 have started by 396 us (one in service): 50 wait.
    let at400 = r.samples.packets[3];
    assert_eq!(at400, 100 - 50);
}

#[test]
fn same_seed_is_identical_and_seeds_differ_where_random() {
    let mut n = Net::new();
    let h0 = n.host("h0");
    let s0 = n.switch("s0", 0);
    let sp: Vec<u32> = (0..4).map(|i| n.switch(&format!("sp{i}"), 0)).collect();
    let s9 = n.switch("s9", 0);
    let h1 = n.host("h1");
    n.link(h0, s0, 10 * GBPS, 0);
    for &x in &sp {
        n.link(s0, x, 10 * GBPS, US);
        n.link(x, s9, GBPS, US);
    }
    n.link(s9, h1, 10 * GBPS, 0);
    let mut spec = n.spec(3);
    spec.routing.ecmp = EcmpMode::PerPacket;
    spec.messages.push(msg("m", h0, h1, 2_000_000, 1000, 0));
    let mut a = run(&spec);
    let mut b = run(&spec);
    a.wall_s = 0.0;
    b.wall_s = 0.0;
    assert_eq!(a, b);
    spec.seed = 4;
    let mut c = run(&spec);
    c.wall_s = 0.0;
    assert_ne!(a.queues.tx_packets, c.queues.tx_packets);
}

#[test]
fn impossible_specs_are_rejected_with_the_field() {
    let mut n = Net::new();
    let a = n.host("a");
    let s = n.switch("s", 0);
    let b = n.host("b");
    let c = n.host("c");
    let t = n.switch("t", 0);
    n.link(a, s, GBPS, 0);
    n.link(b, s, GBPS, 0);
    n.link(c, t, GBPS, 0);
    let mut spec = n.spec(1);
    spec.messages.push(msg("m", a, c, 1000, 1000, 0));
    match fabricsim_des::validate(&spec) {
        Err(Error::Spec { field, reason }) => {
            assert_eq!(field, "messages[0].dst");
            assert!(reason.contains("unreachable"), "{reason}");
        }
        other => panic!("expected a spec error, got {other:?}"),
    }
    spec.messages[0].dst = b;
    spec.messages[0].deps = vec![0];
    assert!(matches!(fabricsim_des::validate(&spec), Err(Error::Spec { .. })));
    spec.messages[0].deps = vec![];
    spec.messages.push(msg("m2", b, a, 1000, 1000, 0));
    spec.messages[0].deps = vec![1];
    spec.messages[1].deps = vec![0];
    match fabricsim_des::validate(&spec) {
        Err(Error::Spec { reason, .. }) => assert!(reason.contains("cycle"), "{reason}"),
        other => panic!("expected a cycle error, got {other:?}"),
    }
}

#[test]
fn time_past_the_end_of_the_clock_is_an_error_not_a_wraparound() {
    let mut n = Net::new();
    let a = n.host("a");
    let b = n.host("b");
    n.link(a, b, GBPS, 9_000_000 * 1_000_000_000_000);
    let mut spec = n.spec(1);
    let mut m = msg("m", a, b, 1000, 1000, 0);
    m.start_ps = 9_000_000 * 1_000_000_000_000;
    m.delay_ps = 9_000_000 * 1_000_000_000_000;
    spec.messages.push(m);
    match fabricsim_des::run(&spec) {
        Err(Error::Spec { field, .. }) => assert_eq!(field, "time"),
        other => panic!("expected a time error, got {other:?}"),
    }
}

/// h0, h1 -> s0 = {sp0, sp1} = s9 -> h2, h3: 10 Gb/s host links, 1 Gb/s fabric links, no latency.
/// Returns the net, [sources, spines, sinks] and [s0, s9].
fn two_spines() -> (Net, [Vec<u32>; 3], [u32; 2]) {
    let mut n = Net::new();
    let h: Vec<u32> = (0..2).map(|i| n.host(&format!("h{i}"))).collect();
    let s0 = n.switch("s0", 0);
    let sp: Vec<u32> = (0..2).map(|i| n.switch(&format!("sp{i}"), 0)).collect();
    let s9 = n.switch("s9", 0);
    let d: Vec<u32> = (2..4).map(|i| n.host(&format!("h{i}"))).collect();
    for &x in &h {
        n.link(x, s0, 10 * GBPS, 0);
    }
    for &x in &sp {
        n.link(s0, x, GBPS, 0);
        n.link(x, s9, GBPS, 0);
    }
    for &x in &d {
        n.link(s9, x, 10 * GBPS, 0);
    }
    (n, [h, sp, d], [s0, s9])
}

#[test]
fn adaptive_routing_balances_two_flows_over_two_spines() {
    // h0, h1 -> s0 = {sp0, sp1} = s9 -> h2, h3 with 1 Gb/s fabric links, 10 Gb/s host links and unlimited
    // queues. Two 1 MB messages: adaptive routing sends every packet to the emptier uplink, so the two
    // uplinks share the 2 MB evenly: about 8 ms (2 MB at 2 Gb/s), whatever the seed. Per-flow hashing puts
    // both on one uplink for some seeds (16 ms).
    for seed in 1..6 {
        let (n, [h, _, d], _) = two_spines();
        let mut spec = n.spec(seed);
        spec.network.default_queue = EgressSpec { limit_packets: None, limit_bytes: None, qdisc: None };
        spec.routing.ecmp = EcmpMode::Adaptive;
        spec.messages.push(msg("a", h[0], d[0], 1_000_000, 1000, 0));
        spec.messages.push(msg("b", h[1], d[1], 1_000_000, 1000, 0));
        let r = run(&spec);
        let ms = r.completion_ps.unwrap() as f64 / MS as f64;
        assert!((ms - 8.0).abs() < 0.1, "seed {seed}: {ms} ms");
    }
}

#[test]
fn adaptive_routing_leaves_a_static_path_only_when_its_port_is_busier() {
    // The topology above with both messages pinned to spine sp0 by explicit paths. Static (per-flow) routing
    // follows the paths: 2 MB over one 1 Gb/s uplink, 16 ms. Adaptive routing keeps the path's port while it
    // is the emptiest and otherwise takes sp1, so the uplinks share the load: 8 ms. With the paths on
    // different spines nothing deviates and both modes give 8 ms.
    for (both_on_sp0, mode, want_ms) in
        [(true, EcmpMode::PerFlow, 16.0), (true, EcmpMode::Adaptive, 8.0), (false, EcmpMode::PerFlow, 8.0), (false, EcmpMode::Adaptive, 8.0)]
    {
        let (n, [h, sp, d], [s0, s9]) = two_spines();
        let mut spec = n.spec(1);
        spec.network.default_queue = EgressSpec { limit_packets: None, limit_bytes: None, qdisc: None };
        spec.routing.ecmp = mode;
        for (i, name) in ["a", "b"].iter().enumerate() {
            let mut m = msg(name, h[i], d[i], 1_000_000, 1000, 0);
            let spine = if both_on_sp0 { sp[0] } else { sp[i] };
            m.path = Some(vec![h[i], s0, spine, s9, d[i]]);
            spec.messages.push(m);
        }
        let ms = run(&spec).completion_ps.unwrap() as f64 / MS as f64;
        assert!((ms - want_ms).abs() < 0.1, "both on sp0 {both_on_sp0}, {mode:?}: {ms} ms, expected {want_ms}");
    }
}

/// Flowlet ECMP. A CBR source at half the line rate leaves a gap of one packet time (81.92 ns at 100 Gb/s for
/// 1024 B) between its packets, across a leaf-spine with two spines. A flowlet gap below that makes every
/// packet a new flowlet with a fresh hash: both spines carry about half of the 2,000 packets (binomial,
/// 1,000 ± 5σ = ± 112). A gap above it keeps one flowlet: one spine carries all of them.
#[test]
fn flowlets_split_at_gaps_longer_than_the_flowlet_gap() {
    let spine_share = |gap_ps: u64| {
        let mut n = Net::new();
        let (l0, l1) = (n.switch("l0", 0), n.switch("l1", 0));
        let (s0, s1) = (n.switch("s0", 0), n.switch("s1", 0));
        let (a, b) = (n.host("a"), n.host("b"));
        for (x, y) in [(a, l0), (b, l1), (l0, s0), (l0, s1), (l1, s0), (l1, s1)] {
            n.link(x, y, 100 * GBPS, US);
        }
        let mut spec = n.spec(1);
        spec.routing.ecmp = EcmpMode::Flowlet;
        spec.routing.flowlet_gap_ps = Some(gap_ps);
        let mut src = source("cbr", SourceKind::Cbr, a, b, 50 * GBPS, 1024);
        src.max_bytes = Some(2000 * 1024);
        spec.sources.push(src);
        let r = run(&spec);
        let tx = |name: &str| r.queues.tx_packets[r.queues.name.iter().position(|x| x == name).expect("port")];
        (tx("l0->s0"), tx("l0->s1"))
    };
    let (x, y) = spine_share(10_000);
    assert_eq!(x + y, 2000);
    assert!(x.abs_diff(1000) <= 112 && y.abs_diff(1000) <= 112, "per-packet flowlets: {x} / {y}");
    let (x, y) = spine_share(1_000_000);
    assert!((x, y) == (2000, 0) || (x, y) == (0, 2000), "one flowlet: {x} / {y}");
}
