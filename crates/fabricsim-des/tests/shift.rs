//! `Sim::shift`: pausing a run for Δ in the middle delays everything after the pause by exactly Δ.
//!
//! Each case runs once straight through, then with `shift(Δ)` after 1/6, 2/6, …, 5/6 of its events. A shift delays every
//! pending event and every absolute time the components keep, so the second run must make the same decisions:
//! the same packets sent, delivered, dropped and marked, the same queue peaks and pauses, the same per-flow
//! delays (packets in flight keep their send time relative to the network), and a completion and end exactly Δ
//! later. Δ = 16 ms is a whole number of every clock unit a component rounds to (CoDel's 1,024 ns, TCP's 1 ms
//! timestamp granularity), so the equalities are exact.

mod common;

use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;
use fabricsim_core::Time;
use fabricsim_des::Sim;

const DELTA: u64 = 16 * MS;

/// Run `spec` straight, and again with a pause of Δ after k/6 of its events (k = 1..5); check each is the first,
/// Δ later after the pause.
fn check_shift(spec: &RunSpec) {
    let base = run(spec);
    assert!(base.events > 100, "the case is too small to pause in the middle ({} events)", base.events);
    for k in 1..=5 {
        let mut sim = Sim::new(spec).expect("valid spec");
        let mut at = 0;
        for _ in 0..base.events * k / 6 {
            at = sim.step().expect("events remain").0 .0;
        }
        sim.shift(Time(DELTA));
        let shifted = sim.run().expect("run succeeds");
        assert_same_but_later(&base, &shifted, at);
    }
}

/// As `check_shift`, with the pause after the last event before `at_ps` (`Sim::peek_time`).
fn check_shift_at(spec: &RunSpec, at_ps: u64) {
    let base = run(spec);
    let mut sim = Sim::new(spec).expect("valid spec");
    let mut at = 0;
    while sim.peek_time().expect("events remain").0 < at_ps {
        at = sim.step().expect("events remain").0 .0;
    }
    sim.shift(Time(DELTA));
    let shifted = sim.run().expect("run succeeds");
    assert_same_but_later(&base, &shifted, at);
}

fn assert_same_but_later(a: &RunRecord, b: &RunRecord, paused_at: u64) {
    assert_eq!(a.events, b.events, "same events");
    assert_eq!(a.packets, b.packets, "packet totals");
    assert_eq!(a.hops, b.hops, "hops");
    let (fa, fb) = (&a.flows, &b.flows);
    assert_eq!(fa.tx_packets, fb.tx_packets, "flow tx");
    assert_eq!(fa.rx_packets, fb.rx_packets, "flow rx");
    assert_eq!(fa.lost_packets, fb.lost_packets, "flow losses");
    assert_eq!(fa.rx_payload_bytes, fb.rx_payload_bytes, "flow payload");
    assert_eq!(fa.delay_sum_ps, fb.delay_sum_ps, "per-flow delay sums (send times move with the pause)");
    assert_eq!(fa.max_delay_ps, fb.max_delay_ps, "per-flow max delays");
    let later = |t: Option<u64>| t.map(|t| if t > paused_at { t + DELTA } else { t });
    let expect: Vec<Option<u64>> = fa.last_rx_ps.iter().map(|&t| later(t)).collect();
    assert_eq!(expect, fb.last_rx_ps, "last arrivals after the pause are Δ later");
    let expect: Vec<Option<u64>> = fa.last_tx_ps.iter().map(|&t| later(t)).collect();
    assert_eq!(expect, fb.last_tx_ps, "last sends after the pause are Δ later");
    let expect: Vec<Option<u64>> = fa.complete_ps.iter().map(|&t| later(t)).collect();
    assert_eq!(expect, fb.complete_ps, "completions after the pause are Δ later");
    assert_eq!(later(a.completion_ps), b.completion_ps, "completion");
    assert_eq!(a.end_ps + DELTA, b.end_ps, "end");
    let (qa, qb) = (&a.queues, &b.queues);
    assert_eq!(qa.tx_packets, qb.tx_packets, "port tx");
    assert_eq!(qa.drops, qb.drops, "port drops");
    assert_eq!(qa.peak_packets, qb.peak_packets, "port peaks");
    assert_eq!(qa.peak_bytes, qb.peak_bytes, "port peak bytes");
    match (&a.roce, &b.roce) {
        (Some(ra), Some(rb)) => {
            assert_eq!(ra.pause_tx, rb.pause_tx, "PAUSE frames");
            assert_eq!(ra.paused_ps, rb.paused_ps, "paused time");
            assert_eq!(ra.ecn_marks, rb.ecn_marks, "ECN marks");
            assert_eq!(ra.cnps, rb.cnps, "CNPs");
            assert_eq!(ra.rate_bps, rb.rate_bps, "the rate log's rates");
        }
        (None, None) => {}
        _ => panic!("RoCE columns in one run only"),
    }
}

/// Messages with dependencies, a future start and a dependency delay, over a shared FIFO bottleneck.
#[test]
fn messages_with_dependencies_resume_delta_later() {
    let (n, s, rx) = dumbbell(4);
    let mut spec = n.spec(3);
    spec.network.default_queue.limit_packets = Some(1_000);
    spec.messages = s.iter().map(|&h| msg(&format!("m{h}"), h, rx, 200_000, 1000, 40)).collect();
    let mut after = msg("after", rx, s[0], 50_000, 1000, 40);
    after.deps = vec![0, 1];
    after.delay_ps = 3 * MS;
    spec.messages.push(after);
    let mut late = msg("late", s[2], rx, 30_000, 1000, 40);
    late.start_ps = 40 * MS;
    spec.messages.push(late);
    // Gated by both a dependency and a start time that lies beyond it: the start time decides.
    let mut gated = msg("gated", s[3], rx, 30_000, 1000, 40);
    gated.deps = vec![0];
    gated.start_ps = 300 * MS;
    spec.messages.push(gated);
    check_shift(&spec);
}

/// Messages joining NICs that stream at line rate (pulled one packet ahead, `net::ahead`), one released when
/// another is fully sent, over switch ports that commit each departure at arrival (`net::commit`) with a small
/// DropTail queue, paused at event counts and at a time between a NIC's pull ahead and the pull it stands for.
#[test]
fn messages_joining_busy_nics_over_committing_ports_resume_delta_later() {
    let (n, s, rx) = dumbbell(3);
    let mut spec = n.spec(5);
    spec.network.default_queue.limit_packets = Some(20);
    spec.messages = s.iter().map(|&h| msg(&format!("m{h}"), h, rx, 300_000, 1000, 40)).collect();
    for (i, &h) in s.iter().enumerate() {
        let mut j = msg(&format!("j{h}"), h, rx, 7_000 + 1_000 * i as u64, 1000, 40);
        j.start_ps = 3 * MS + 4_100_000 * i as u64 + 1_234;
        spec.messages.push(j);
    }
    let mut sent = msg("after_sent", s[1], rx, 20_000, 500, 40);
    sent.sent_deps = vec![0];
    spec.messages.push(sent);
    check_shift(&spec);
    // 1 Gb/s, 1040 B: a NIC starts packets every 8.32 us from its start; pause 3.1 us into one.
    check_shift_at(&spec, 3 * MS + 8_320_000 * 5 + 3_100_000);
    // A message of 4 packets, every 8.32 us: the NIC pulls the second and the fourth ahead, the fourth (the flow's
    // last send, at 24.96 us) when the third starts; the pause at 20 us comes before the pull it stands for.
    let (n, s, rx) = dumbbell(1);
    let mut spec = n.spec(5);
    spec.messages = vec![msg("four", s[0], rx, 4_000, 1000, 40)];
    check_shift_at(&spec, 20_000_000);
}

/// UDP on/off sources into an FQ-CoDel bottleneck: residual bits, toggles and CoDel's clock move together.
#[test]
fn udp_onoff_into_fq_codel_resumes_delta_later() {
    let (mut n, s, rx) = dumbbell(3);
    let bottleneck = n.links.iter().position(|l| l.rate_bps == 100_000_000).expect("bottleneck link");
    n.links[bottleneck].a_end.queue = Some(EgressSpec {
        limit_packets: Some(100),
        limit_bytes: None,
        qdisc: Some(QdiscSpec::FqCodel {
            limit_packets: 200,
            flows: 64,
            quantum_bytes: 1514,
            target_ps: 5 * MS,
            interval_ps: 100 * MS,
            min_bytes: 1500,
            drop_batch: 64,
        }),
    });
    let mut spec = n.spec(5);
    spec.sources = s
        .iter()
        .map(|&h| {
            let mut src = source(&format!("u{h}"), SourceKind::Onoff, h, rx, 80_000_000, 1000);
            src.on_ps = 30 * MS;
            src.off_ps = 20 * MS;
            src.stop_ps = Some(400 * MS);
            src
        })
        .collect();
    check_shift(&spec);
}

/// TCP CUBIC and NewReno sharing a 20-packet bottleneck (windows not limited by the buffers, so congestion control
/// decides): timestamps in flight, RTO and CUBIC's epoch move.
#[test]
fn tcp_through_a_lossy_bottleneck_resumes_delta_later() {
    let (mut n, s, rx) = dumbbell(2);
    n.links
        .iter_mut()
        .filter(|l| l.rate_bps == 100_000_000)
        .for_each(|l| l.a_end.queue = Some(EgressSpec { limit_packets: Some(20), limit_bytes: None, qdisc: None }));
    let mut spec = n.spec(7);
    for (i, (&h, cc)) in s.iter().zip([TcpCc::Cubic, TcpCc::NewReno]).enumerate() {
        spec.tcp.push(TcpSpec {
            start_ps: i as u64 * 5 * MS,
            rcv_buf_bytes: 4_000_000,
            snd_buf_bytes: 4_000_000,
            ..tcp_spec(&format!("t{i}"), h, rx, cc, 2_000_000)
        });
    }
    check_shift(&spec);
}

/// A 3-to-1 incast through an input-buffered switch: credit returns in flight and blocked ports move.
#[test]
fn lossless_credit_incast_resumes_delta_later() {
    let mut n = Net::new();
    let sw = n.switch("sw", 100_000);
    n.nodes[sw as usize].model = SwitchModel::InputBuffered;
    n.nodes[sw as usize].input_buffer_bytes = 8_000;
    let senders: Vec<u32> = (0..3).map(|i| n.host(&format!("s{i}"))).collect();
    let rx = n.host("rx");
    for &h in senders.iter().chain([rx].iter()) {
        n.link(h, sw, 10 * GBPS, 2 * US);
    }
    let mut spec = n.spec(1);
    spec.messages = senders.iter().map(|&h| msg(&format!("m{h}"), h, rx, 300_000, 1000, 40)).collect();
    check_shift(&spec);
}

/// RoCE incasts on a shared-buffer switch with PFC and ECN: DCQCN (pacing, timers, CNPs) and HPCC (INT
/// timestamps in flight and in each QP's last snapshot).
#[test]
fn rdma_dcqcn_and_hpcc_incasts_resume_delta_later() {
    for cc in [RdmaCc::Dcqcn, RdmaCc::Hpcc] {
        let mut n = Net::new();
        let sw = n.switch("sw", 0);
        n.nodes[sw as usize].model = SwitchModel::SharedBuffer;
        let senders: Vec<u32> = (0..4).map(|i| n.host(&format!("s{i}"))).collect();
        let rx = n.host("rx");
        for &h in senders.iter().chain([rx].iter()) {
            n.link(h, sw, 100 * GBPS, US);
        }
        let mut spec = n.spec(2);
        spec.pfc = Some(PfcSpec::hpcc());
        spec.ecn = EcnSpec::preset("hpcc");
        spec.rdma = RdmaSpec::preset("hpcc", cc);
        spec.messages = senders.iter().map(|&h| msg(&format!("m{h}"), h, rx, 2_000_000, 1000, 48)).collect();
        check_shift(&spec);
    }
}

/// A pause in the last packet interval of an on period: the bits the source accrues before its off toggle are
/// counted from its interval start, which must move with the pause (ns-3 OnOff's residual bits). The source is
/// off for its first 20 ms (OnOff starts off), on until 50 ms, one 1000 B packet every 106.67 us at 75 Mb/s, so
/// the last packet of the period leaves at 49.973 ms and the pause falls between it and the toggle.
#[test]
fn udp_interval_start_moves_with_the_pause() {
    let (n, s, rx) = dumbbell(1);
    let mut spec = n.spec(1);
    let mut src = source("u", SourceKind::Onoff, s[0], rx, 75_000_000, 1000);
    src.on_ps = 30 * MS;
    src.off_ps = 20 * MS;
    src.stop_ps = Some(200 * MS);
    spec.sources = vec![src];
    check_shift_at(&spec, 50 * MS - 25 * US);
}
