//! Lossless input-buffered switching with credit-based flow control: closed forms, fairness, back-pressure.

mod common;

use common::*;
use fabricsim_core::spec::*;

fn lossless(n: &mut Net, name: &str, latency_ps: u64, buffer: u64) -> u32 {
    let s = n.switch(name, latency_ps);
    n.nodes[s as usize].model = SwitchModel::InputBuffered;
    n.nodes[s as usize].input_buffer_bytes = buffer;
    s
}

#[test]
fn message_across_three_hops_meets_the_pipelined_closed_form() {
    // h0 - s1 - s2 - h1 at 100 Gb/s, 1 us links, 1.5 us switch latency, 128 KiB input buffers. Credits never
    // bind (a credit loop holds ~41 packets of 1088 B < 128 KiB), so store-and-forward pipelining holds:
    // (P + k - 1) ser + k d + (k - 1) L = 102 x 87.04 ns + 3 us + 3 us = 14 878.08 ns.
    let mut n = Net::new();
    let h0 = n.host("h0");
    let s1 = lossless(&mut n, "s1", 1_500_000, 128 * 1024);
    let s2 = lossless(&mut n, "s2", 1_500_000, 128 * 1024);
    let h1 = n.host("h1");
    n.link(h0, s1, 100 * GBPS, US);
    n.link(s1, s2, 100 * GBPS, US);
    n.link(s2, h1, 100 * GBPS, US);
    let mut spec = n.spec(1);
    spec.messages.push(msg("m", h0, h1, 100 * 1024, 1024, 64));
    let r = run(&spec);
    assert_eq!(r.completion_ps, Some(14_878_080));
    assert_eq!(r.packets.dropped, 0);
}

#[test]
fn credits_limit_a_long_link_to_buffer_per_round_trip() {
    // a -(10 Gb/s, 10 us)- s -(10 Gb/s, 10 us)- b with a 2-packet (2000 B) input buffer at s. The sender
    // may have 2 packets unacknowledged by credit: packet j starts at (j div 2) x 20.8 us + (j mod 2) x 0.8 us
    // (a credit returns 10 us after its packet leaves s, which is 10.8 us after it left a), and reaches b
    // 21.6 us after it started: the 10th packet (j = 9) lands at 84.0 + 21.6 = 105.6 us.
    let mut n = Net::new();
    let a = n.host("a");
    let s = lossless(&mut n, "s", 0, 2000);
    let b = n.host("b");
    n.link(a, s, 10 * GBPS, 10 * US);
    n.link(s, b, 10 * GBPS, 10 * US);
    let mut spec = n.spec(1);
    spec.messages.push(msg("m", a, b, 10_000, 1000, 0));
    let r = run(&spec);
    assert_eq!(r.completion_ps, Some(105_600_000));
    let sb = r.queues.name.iter().position(|x| x == "s->b").unwrap();
    assert!(r.queues.peak_bytes[sb] <= 2000, "the input buffer never holds more than its size");
}

#[test]
fn two_to_one_incast_splits_the_output_fairly_and_drops_nothing() {
    // Two senders at 10 Gb/s into one 10 Gb/s output: the round-robin arbiter alternates, so both 1 MB
    // messages finish within one packet time of each other, at about 2 MB / 10 Gb/s = 1.6 ms.
    let mut n = Net::new();
    let a = n.host("a");
    let b = n.host("b");
    let s = lossless(&mut n, "s", 1_500_000, 128 * 1024);
    let r0 = n.host("r");
    n.link(a, s, 10 * GBPS, US);
    n.link(b, s, 10 * GBPS, US);
    n.link(s, r0, 10 * GBPS, US);
    let mut spec = n.spec(1);
    spec.messages.push(msg("ma", a, r0, 1_000_000, 1000, 0));
    spec.messages.push(msg("mb", b, r0, 1_000_000, 1000, 0));
    let r = run(&spec);
    assert_eq!(r.packets.dropped, 0);
    let (ta, tb) = (r.flows.complete_ps[0].unwrap(), r.flows.complete_ps[1].unwrap());
    assert!(ta.abs_diff(tb) <= 800_000, "finish times {ta} and {tb} differ by more than one packet time");
    let ideal = 1_600_000_000u64; // 2 MB at 10 Gb/s
    assert!(tb.max(ta) >= ideal && tb.max(ta) < ideal + 10_000_000, "{ta} {tb}");
}

#[test]
fn a_slow_sink_throttles_its_senders_without_loss() {
    // Four 100 Gb/s senders into a 1 Gb/s sink behind two lossless switches with 16 KiB input buffers:
    // back-pressure reaches the senders' NICs, nothing is dropped, and the sink's link runs flat out:
    // 4 x 100 kB at 1 Gb/s = 3.2 ms, plus the path.
    let mut n = Net::new();
    let hs: Vec<u32> = (0..4).map(|i| n.host(&format!("h{i}"))).collect();
    let s1 = lossless(&mut n, "s1", 1_500_000, 16 * 1024);
    let s2 = lossless(&mut n, "s2", 1_500_000, 16 * 1024);
    let sink = n.host("sink");
    for &h in &hs {
        n.link(h, s1, 100 * GBPS, US);
    }
    n.link(s1, s2, 100 * GBPS, US);
    n.link(s2, sink, GBPS, US);
    let mut spec = n.spec(1);
    for (i, &h) in hs.iter().enumerate() {
        spec.messages.push(msg(&format!("m{i}"), h, sink, 100_000, 1000, 0));
    }
    let r = run(&spec);
    assert_eq!(r.packets.dropped, 0);
    let done = r.completion_ps.unwrap();
    assert!((3_200_000_000..3_220_000_000).contains(&done), "done at {done}");
    for (name, peak) in r.queues.name.iter().zip(&r.queues.peak_bytes) {
        if name.starts_with("s1->") || name.starts_with("s2->") {
            assert!(*peak <= 4 * 16 * 1024, "{name} held {peak} B: more than its inputs' buffers");
        }
    }
}

/// The output arbiter. a and b (100 Gb/s) feed r (10 Gb/s) through one input-buffered switch, zero delays and
/// latency: a sends 3 packets of 1024 B from t = 0 (each takes T_in = 81.92 ns to arrive), b one packet from
/// 3·T_in (it arrives at 4·T_in). The output starts a's first packet at T_in; when it ends (T_in + T_out,
/// T_out = 819.2 ns) a2, a3 and b1 wait. Round robin serves the next input, b: b1 arrives at T_in + 2·T_out.
/// Oldest first serves a2 and a3 (they came first): b1 arrives at T_in + 4·T_out.
#[test]
fn round_robin_and_oldest_first_arbiters_order_the_inputs_as_computed() {
    let t_in = 81_920;
    let t_out = 819_200;
    for (arbiter, expect) in [(Arbiter::RoundRobin, t_in + 2 * t_out), (Arbiter::Fifo, t_in + 4 * t_out)] {
        let mut n = Net::new();
        let a = n.host("a");
        let b = n.host("b");
        let s = lossless(&mut n, "s", 0, 128 * 1024);
        n.nodes[s as usize].arbiter = arbiter;
        let r = n.host("r");
        n.link(a, s, 100 * GBPS, 0);
        n.link(b, s, 100 * GBPS, 0);
        n.link(r, s, 10 * GBPS, 0);
        let mut spec = n.spec(1);
        spec.messages.push(msg("a", a, r, 3 * 1024, 1024, 0));
        let mut mb = msg("b", b, r, 1024, 1024, 0);
        mb.start_ps = 3 * t_in;
        spec.messages.push(mb);
        let rec = run(&spec);
        assert_eq!(rec.flows.complete_ps[1], Some(expect), "{arbiter:?}");
    }
}
