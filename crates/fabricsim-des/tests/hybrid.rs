//! Hybrid fidelity (issue 30): steady intervals are jumped, the rest is simulated packet by packet.
//!
//! A steady flow lands on the packet engine's closed-form completion within one serialisation (a jump advances
//! whole packets at the measured mean rate: at most one packet off the exact count), the workload's own times
//! stay where they are, conservation holds (the record's own check), the same spec gives the same record, TCP
//! runs packet by packet and says so, and a DCQCN incast stays within 2% of the packet engine.

mod common;

use common::*;
use fabricsim_core::compile::compile;
use fabricsim_core::control::Control;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;
use fabricsim_core::workload::Workload;

/// Serialisation of a 1048 B packet (1000 B payload + 48 B headers) at 100 Gb/s: 83.84 ns.
const T_PKT: u64 = 83_840;

fn hybrid(spec: &RunSpec) -> RunRecord {
    let c = compile(spec.clone(), Workload::default()).expect("valid spec");
    fabricsim_des::run_compiled_hybrid_with(c, Control::default()).expect("run succeeds")
}

/// One message of N = 20,000 packets alone on s0 -> sw -> rx: the NIC sends back to back, so the last packet
/// starts at (N − 1)·T, reaches the switch at N·T + d, leaves at N·T + d (store and forward, an idle port) and
/// arrives at (N + 1)·T + 2d = 1,678,483,840 ps (T = 83.84 ns, d = 1 µs). Hybrid jumps the steady middle and
/// lands within one T of it.
#[test]
fn a_steady_flow_lands_on_the_closed_form_within_one_packet() {
    let (net, s, rx) = star(1, SwitchModel::OutputQueued);
    let mut spec = net.spec(1);
    spec.messages = vec![msg("m", s[0], rx, 20_000_000, 1000, 48)];
    let exact = (20_000 + 1) * T_PKT + 2 * US;
    assert_eq!(run(&spec).flows.complete_ps[0], Some(exact), "the packet engine's closed form");
    let h = hybrid(&spec);
    let ff = h.fast_forward.as_ref().expect("a hybrid record says what it skipped");
    assert!(ff.jumps >= 1 && ff.skipped_packets > 10_000, "the steady middle is jumped: {ff:?}");
    let got = h.flows.complete_ps[0].expect("completes");
    assert!(got.abs_diff(exact) <= T_PKT, "{got} vs {exact}");
    assert_eq!(h.flows.rx_packets[0], 20_000, "every packet delivered once, skipped ones counted");
    assert_eq!(h.flows.rx_payload_bytes[0], 20_000_000);
    assert_eq!(h.fidelity, "hybrid");
}

/// The same over RDMA without congestion control: one QP at line rate, an ACK per packet; the sequence numbers
/// of packets in flight move with the jump, so go-back-N never fires (no loss, no NACK, N ACKs).
#[test]
fn an_rdma_queue_pair_jumps_without_breaking_its_sequence() {
    let (net, s, rx) = star(1, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.ecn = EcnSpec::preset("hpcc");
    spec.rdma = Some(RdmaSpec::preset("hpcc", RdmaCc::None).expect("preset"));
    spec.messages = vec![msg("m", s[0], rx, 20_000_000, 1000, 48)];
    let exact = (20_000 + 1) * T_PKT + 2 * US;
    let h = hybrid(&spec);
    assert!(h.fast_forward.as_ref().expect("hybrid").jumps >= 1);
    let got = h.flows.complete_ps[0].expect("completes");
    assert!(got.abs_diff(exact) <= T_PKT, "{got} vs {exact}");
    assert_eq!((h.flows.tx_packets[0], h.flows.lost_packets[0]), (20_000, 0), "nothing resent, nothing lost");
    assert_eq!(h.flows.rx_packets[1], 20_000, "one ACK per packet");
}

/// A message that starts at 3 ms on another pair bounds the jump: it starts exactly then, and both complete
/// near their closed forms (m0 alone until m1 starts; they share no link).
#[test]
fn workload_times_stay_put_across_jumps() {
    let (net, s, rx) = star(3, SwitchModel::OutputQueued);
    let mut spec = net.spec(1);
    let mut m1 = msg("m1", s[1], s[2], 5_000_000, 1000, 48);
    m1.start_ps = 3 * MS;
    spec.messages = vec![msg("m0", s[0], rx, 50_000_000, 1000, 48), m1];
    let p = run(&spec);
    let h = hybrid(&spec);
    assert!(h.fast_forward.as_ref().expect("hybrid").jumps >= 2);
    assert_eq!(h.flows.start_ps[1], Some(3 * MS), "a workload start is never moved by a jump");
    for i in 0..2 {
        let (a, b) = (p.flows.complete_ps[i].unwrap(), h.flows.complete_ps[i].unwrap());
        assert!(a.abs_diff(b) <= T_PKT, "message {i}: {b} vs packet {a}");
    }
}

/// The same spec and seed give the same record (wall time aside).
#[test]
fn hybrid_runs_are_reproducible() {
    let (net, s, rx) = star(4, SwitchModel::SharedBuffer);
    let mut spec = net.spec(7);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.ecn = EcnSpec::preset("hpcc");
    spec.rdma = Some(RdmaSpec::preset("hpcc", RdmaCc::Dcqcn).expect("preset"));
    spec.messages = s.iter().map(|&h| msg(&format!("m{h}"), h, rx, 2_000_000, 1000, 48)).collect();
    let (mut a, mut b) = (hybrid(&spec), hybrid(&spec));
    a.wall_s = 0.0;
    b.wall_s = 0.0;
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// TCP has no steady-state model here: the run goes packet by packet, says so in its note, and its record is
/// the packet engine's.
#[test]
fn tcp_runs_packet_by_packet_and_says_so() {
    let (net, s, rx) = star(1, SwitchModel::OutputQueued);
    let mut spec = net.spec(1);
    spec.tcp = vec![tcp_spec("t", s[0], rx, TcpCc::NewReno, 2_000_000)];
    let p = run(&spec);
    let h = hybrid(&spec);
    let ff = h.fast_forward.as_ref().expect("hybrid");
    assert_eq!(ff.jumps, 0);
    assert!(ff.note.as_deref().is_some_and(|n| n.contains("TCP")), "{:?}", ff.note);
    assert_eq!((p.end_ps, &p.flows.rx_packets, p.events), (h.end_ps, &h.flows.rx_packets, h.events));
}

/// A DCQCN incast, 8 x 4 MB into one 100 Gb/s port (shared buffer, PFC, HPCC's ECN and DCQCN presets): the
/// detector waits for the rates, target rates and α of every QP to hold before jumping; completion stays within
/// 2% of the packet engine's.
#[test]
fn a_dcqcn_incast_stays_within_two_percent() {
    let (net, s, rx) = star(8, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.ecn = EcnSpec::preset("hpcc");
    spec.rdma = Some(RdmaSpec::preset("hpcc", RdmaCc::Dcqcn).expect("preset"));
    spec.messages = s.iter().map(|&h| msg(&format!("m{h}"), h, rx, 4_000_000, 1000, 48)).collect();
    let (p, h) = (run(&spec), hybrid(&spec));
    let (a, b) = (p.completion_ps.unwrap() as f64, h.completion_ps.unwrap() as f64);
    assert!((b / a - 1.0).abs() <= 0.02, "hybrid {b} vs packet {a}");
    assert_eq!(h.packets.dropped, 0);
}
