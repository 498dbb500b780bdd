//! Degraded links during a run (`link_rate` network events), by hand: the packet in serialisation ends at the old
//! rate, every later packet takes the new one, both directions change, the record lists the event, and hybrid
//! fidelity never jumps across the change (the flow engine's case is in crates/fabricsim-flow/tests/link_rate.rs).

mod common;
use common::*;
use fabricsim_core::compile::compile;
use fabricsim_core::control::Control;
use fabricsim_core::spec::{EcnSpec, NetEventKind, NetEventSpec, PfcSpec, RdmaCc, RdmaSpec, RunSpec, SourceKind, SwitchModel};
use fabricsim_core::workload::Workload;

/// Serialisation of one 1,000 B packet (no header) at 10 Gb/s: 800 ns.
const T: u64 = 800_000;

/// h0 -(10 Gb/s, 1 µs)- sw -(10 Gb/s, 1 µs)- h1, the switch without latency, and one message of 100 packets of
/// 1,000 B from h0 to h1; returns the spec and the NIC's link (h0–sw).
fn line() -> (RunSpec, u32) {
    let mut n = Net::new();
    let h0 = n.host("h0");
    let sw = n.switch("sw", 0);
    let h1 = n.host("h1");
    let nic = n.link(h0, sw, 10 * GBPS, US);
    n.link(sw, h1, 10 * GBPS, US);
    let mut spec = n.spec(1);
    spec.messages.push(msg("m", h0, h1, 100_000, 1000, 0));
    (spec, nic as u32)
}

fn rate_event(at_ps: u64, link: u32, rate_bps: u64) -> NetEventSpec {
    NetEventSpec { at_ps, kind: NetEventKind::LinkRate, links: vec![link], ber: 0.0, rate_bps }
}

/// Fault-free: packet k leaves h0 over [kT, (k+1)T); the last (k = 99) reaches sw at 100T + d, is forwarded at once
/// (idle port) and lands at 101T + 2d = 82.8 µs.
#[test]
fn fault_free_reference() {
    let (spec, _) = line();
    assert_eq!(run(&spec).flows.complete_ps[0], Some(101 * T + 2 * US));
}

/// The NIC's link halves (10 → 5 Gb/s, T' = 2T) at t = 40.5T = 32.4 µs, in the middle of packet 40
/// ([40T, 41T)). Packet 40 ends at the old rate, at 41T; packets 41..=99 (59 of them) follow at 2T each, the last
/// ending at 41T + 59·2T = 159T; it reaches sw at 159T + d and h1 one 10 Gb/s serialisation and d later:
/// completion = 160T + 2d = 128 µs + 2 µs = 130 µs.
///
/// The same by the formula, t + (bytes left at t)·8 / new rate + propagation, counts the half of packet 40
/// still to serialise at t at the new rate too (40.5T + (500 + 59,000)·8 / 5 Gb/s + T + 2d = 160.5T + 2d); the
/// engine's rule (a packet in serialisation finishes at its start's rate) is half a packet of the old rate
/// sooner: 0.5T = 400 ns.
#[test]
fn a_halved_nic_link_finishes_the_packet_on_the_wire_then_sends_at_half_rate() {
    let (mut spec, nic) = line();
    spec.events.push(rate_event(40 * T + T / 2, nic, 5 * GBPS));
    let rec = run(&spec);
    assert_eq!(rec.flows.complete_ps[0], Some(160 * T + 2 * US));
    assert_eq!(rec.flows.complete_ps[0], Some(130_000_000));
    assert_eq!(rec.flows.rx_packets[0], 100);
    assert_eq!(rec.flows.lost_packets[0], 0);
    // The record lists the event with its rate; the queue table keeps the topology's line rate.
    assert_eq!(rec.net_events.len(), 1);
    let e = &rec.net_events[0];
    assert_eq!((e.t_ps, e.kind.as_str(), e.links.clone(), e.rate_bps), (32_400_000, "link_rate", vec!["h0-sw".to_string()], 5 * GBPS));
    assert!(rec.queues.rate_bps.iter().all(|&r| r == 10 * GBPS));
}

/// Halved at 40.5T and restored to 10 Gb/s at 80.5T: at half rate packet k ≥ 41 occupies [41T + 2(k − 41)T, ...),
/// so packet 60 is on the wire at 80.5T ([79T, 81T)) and ends at the half rate, at 81T; packets 61..=99 (39)
/// follow at T, the last ending at 120T: completion = 121T + 2d = 96.8 µs + 2 µs.
#[test]
fn a_restored_link_returns_to_line_rate_from_the_next_packet() {
    let (mut spec, nic) = line();
    spec.events.push(rate_event(40 * T + T / 2, nic, 5 * GBPS));
    spec.events.push(rate_event(80 * T + T / 2, nic, 10 * GBPS));
    let rec = run(&spec);
    assert_eq!(rec.flows.complete_ps[0], Some(121 * T + 2 * US));
    assert_eq!(rec.net_events.iter().map(|e| e.rate_bps).collect::<Vec<_>>(), vec![5 * GBPS, 10 * GBPS]);
}

/// The switch's egress link (sw–h1) quartered (2.5 Gb/s, 4T per packet) at t = 0.5T, before any packet reaches
/// sw: the sw port is the bottleneck and its queue serves packet k from its arrival (k + 1)T + d or the end of
/// packet k − 1, whichever is later; from packet 0 (arriving T + d, idle port) the port is busy back to back, so
/// packet 99 ends at T + d + 100·4T = 401T + d and lands at 401T + 2d = 320.8 µs + 2 µs.
///
/// The reverse direction (h1 → sw) changes too. A second message of 100 packets from h1 to h0 (full duplex: the
/// two never share a port): h1's NIC started its packet 0 at 0, so it ends at the old rate, at T; packets 1..=99
/// follow at 4T, the last ending at T + 99·4T = 397T; it reaches sw at 397T + d and h0 at 398T + 2d.
#[test]
fn a_degraded_switch_link_is_the_bottleneck_in_both_directions() {
    let (mut spec, _) = line();
    spec.messages.push(msg("back", 2, 0, 100_000, 1000, 0));
    spec.events.push(rate_event(T / 2, 1, 2 * GBPS + GBPS / 2));
    let rec = run(&spec);
    assert_eq!(rec.flows.complete_ps[0], Some(401 * T + 2 * US));
    assert_eq!(rec.flows.complete_ps[1], Some(398 * T + 2 * US));
    assert_eq!(rec.packets.dropped, 0, "the default queue (100 packets) holds the backlog");
}

/// A rate on a kind other than link_rate, a link_rate without a rate, and one above 1 Pb/s are errors naming
/// `rate_bps`.
#[test]
fn the_spec_names_a_missing_or_misplaced_rate() {
    let (mut spec, nic) = line();
    spec.events.push(rate_event(T, nic, 0));
    let err = fabricsim_des::run(&spec).expect_err("no rate").to_string();
    assert!(err.contains("events[0].rate_bps"), "{err}");
    let (mut spec, nic) = line();
    spec.events.push(NetEventSpec { at_ps: T, kind: NetEventKind::LinkDown, links: vec![nic], ber: 0.0, rate_bps: GBPS });
    let err = fabricsim_des::run(&spec).expect_err("a rate on a link_down").to_string();
    assert!(err.contains("events[0].rate_bps"), "{err}");
    // Above 1 Pb/s, the ceiling of every rate a scenario writes.
    let (mut spec, nic) = line();
    spec.events.push(rate_event(T, nic, 2_000_000_000_000_000));
    let err = fabricsim_des::run(&spec).expect_err("2 Pb/s").to_string();
    assert!(err.contains("events[0].rate_bps") && err.contains("1 Pb/s"), "{err}");
}

/// Hybrid fidelity never jumps across the change: a 20,000-packet message (1,000 B + 48 B headers, T = 838.4 ns
/// at 10 Gb/s) whose NIC link halves at 8 ms, in the middle of packet 9,541 ([9,541·T, 9,542·T)): packet 9,541
/// ends at 9,542·T, the other 10,458 at 2T each, the last ending at 9,542·T + 20,916·T = 30,458·T; it lands
/// T + 2d later: 30,459·T + 2 µs = 25.5368256 ms + 2 µs, which the packet engine gives exactly. The hybrid run
/// jumps (before and after the change) and lands within one slow packet (2T) of it.
#[test]
fn hybrid_stops_at_the_change_and_lands_on_the_packet_engine() {
    const TH: u64 = 838_400;
    let (mut spec, nic) = line();
    spec.messages[0] = msg("m", 0, 2, 20_000_000, 1000, 48);
    spec.events.push(rate_event(8_000_000_000, nic, 5 * GBPS));
    assert_eq!(8_000_000_000 / TH, 9_541, "the change falls inside packet 9,541");
    let exact = 30_459 * TH + 2 * US;
    assert_eq!(run(&spec).flows.complete_ps[0], Some(exact));
    let c = compile(spec.clone(), Workload::default()).expect("valid spec");
    let h = fabricsim_des::run_compiled_hybrid_with(c, Control::default()).expect("runs");
    let ff = h.fast_forward.as_ref().expect("a hybrid record");
    assert!(ff.jumps >= 2, "jumps before and after the change: {ff:?}");
    let got = h.flows.complete_ps[0].expect("completes");
    assert!(got.abs_diff(exact) <= 2 * TH, "{got} vs {exact}");
    assert_eq!(h.flows.rx_packets[0], 20_000);
}

/// HPCC reads the rate now in force from its INT records. One queue pair s0 → sw → rx at 100 Gb/s (HPCC, η = 0.95,
/// the hpcc preset); at 20 µs the switch's link to rx drops to 25 Gb/s. HPCC sets the window so that the
/// bottleneck's utilisation, txRate / B + qlen / (B · T_base), is η, B being the rate the INT record carries: with
/// B = 25 Gb/s the sender settles at η · 25 Gb/s = 23.75 Gb/s and the queue drains, so no PAUSE is ever sent. Had
/// the record kept the topology's 100 Gb/s, a 25 Gb/s flow would read as 25% utilised and HPCC would climb back
/// toward line rate (with the INT record reading the topology's rate, this test fails: the rate samples sit at
/// 92–93 Gb/s).
#[test]
fn hpcc_settles_at_eta_times_the_degraded_rate() {
    let (net, s, rx) = star(1, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.ecn = EcnSpec::preset("hpcc");
    spec.rdma = Some(RdmaSpec::preset("hpcc", RdmaCc::Hpcc).expect("preset"));
    spec.messages = vec![msg("m", s[0], rx, 10_000_000, 1000, 48)];
    spec.events.push(rate_event(20 * US, 1, 25 * GBPS));
    spec.measure.queue_sample_ps = Some(US);
    let r = run(&spec);
    let done = r.flows.complete_ps[0].expect("completes");
    let roce = r.roce.expect("a RoCE record");
    assert_eq!(roce.pause_tx.iter().sum::<u64>(), 0, "no PAUSE: the queue never builds");
    // The sender's rate samples between 200 µs (well after the change) and the end: every one within 10% of
    // 23.75 Gb/s.
    let late: Vec<u64> = roce.rate_t_ps.iter().zip(&roce.rate_bps).filter(|&(&t, _)| t > 200 * US && t < done).map(|(_, &b)| b).collect();
    assert!(!late.is_empty(), "HPCC adjusts its rate after the change");
    let target = 0.95 * 25e9;
    assert!(late.iter().all(|&b| (b as f64 - target).abs() <= 0.1 * target), "rates {:?}", &late[..late.len().min(20)]);
    // 10 MB of payload (10,480,000 wire bytes) at ≤ 25 Gb/s after 20 µs: done no sooner than 20 µs + the bytes
    // left × 8 / 25 Gb/s, and within 10% of the 23.75 Gb/s pace.
    let left_bytes = 10_480_000.0 - 20e-6 * 100e9 / 8.0;
    let floor = 20e-6 + left_bytes * 8.0 / 25e9;
    let got = done as f64 * 1e-12;
    assert!(got >= floor && got <= 1.1 * (20e-6 + left_bytes * 8.0 / target), "{got} vs floor {floor}");
}

/// A UDP CBR source (1 Gb/s of 1,000 B packets: one every 8 µs, the first one interval after its start at 0, as
/// ns-3's OnOff sends, until it stops at 79 µs: 9 packets, at 8..=72 µs) over the line, the NIC's link dropping to
/// 2 Gb/s at 36 µs. Nothing queues (a packet takes at most 4 µs of the 8 µs gap), so only each packet's delay
/// shows the change: before it, T + d + T + d = 3.6 µs; after it, 4 µs + d + T + d = 6.8 µs. Packets sent at
/// 8..=32 µs (4) take the first, at 40..=72 µs (5) the second: delay sum 4 × 3.6 + 5 × 6.8 = 48.4 µs, maximum
/// 6.8 µs.
#[test]
fn a_udp_source_sees_the_slower_link_in_its_delay() {
    let (mut spec, nic) = line();
    spec.messages.clear();
    let mut s = source("u", SourceKind::Cbr, 0, 2, GBPS, 1000);
    s.stop_ps = Some(79 * US);
    spec.sources.push(s);
    spec.events.push(rate_event(36 * US, nic, 2 * GBPS));
    let rec = run(&spec);
    assert_eq!((rec.flows.tx_packets[0], rec.flows.rx_packets[0], rec.flows.lost_packets[0]), (9, 9, 0));
    assert_eq!(rec.flows.max_delay_ps[0], 6_800_000);
    assert_eq!(rec.flows.first_tx_ps[0], Some(8 * US));
    assert_eq!(rec.flows.delay_sum_ps[0], 48_400_000);
}
