//! Links that fail during a run: loss until the tables catch up, the reroute, and the recovery, by hand.

mod common;
use common::*;
use fabricsim_core::spec::{NetEventKind, NetEventSpec, RetransmitSpec};

/// h0 - leaf0 = {s0, s1} = leaf1 - h2 at 1 Gb/s with zero delays and latencies; the s1 side weighs 2 per link,
/// so every packet takes s0 until leaf0–s0 fails. 100 packets of 1,000 B: T = 8 µs per packet on every link.
///
/// Packet k (0-based) leaves h0 at (k+1)T and is forwarded at leaf0 at once; leaf0 serialises it toward s0
/// until (k+2)T, when it reaches the far end of the link. The link dies at t_f = 10.5 T and the tables learn
/// it D = 20 T later, at 30.5 T:
/// - k = 9 is on the wire at t_f (it ends at 11 T): lost;
/// - k = 10..=29 are forwarded into the dead link before 30.5 T: lost;
/// - k ≥ 30 are forwarded at (k+1)T ≥ 31 T over s1 (three more links of T each): delivered.
///
/// So 21 packets are lost and 79 arrive by 103 T (the last, k = 99, at 100 T + 3 T); without retransmission
/// (`max_retries = 0`) the message never completes.
///
/// With retransmission (RTO = 10 T): the last packet started at 99 T, so the timer is due at 109 T; the 21 lost
/// packets leave h0 back to back, the j-th starting at (109 + j) T and arriving over s1 three links after its
/// serialisation ends, at (113 + j) T: the message completes at 133 T = 103 T + RTO + (21 − 1) T, the fault-free
/// completion plus the timeout plus the re-sent packets but one (the last packet's own T is in both).
fn two_spines() -> (fabricsim_core::spec::RunSpec, usize) {
    let mut n = Net::new();
    let h0 = n.host("h0");
    let h2 = n.host("h2");
    let l0 = n.switch("leaf0", 0);
    let l1 = n.switch("leaf1", 0);
    let s0 = n.switch("s0", 0);
    let s1 = n.switch("s1", 0);
    n.link(h0, l0, GBPS, 0);
    let dead = n.link(l0, s0, GBPS, 0);
    n.link(s0, l1, GBPS, 0);
    let a = n.link(l0, s1, GBPS, 0);
    let b = n.link(s1, l1, GBPS, 0);
    n.links[a].weight = 2;
    n.links[b].weight = 2;
    n.link(l1, h2, GBPS, 0);
    let mut spec = n.spec(1);
    spec.messages.push(msg("m", h0, h2, 100_000, 1000, 0));
    (spec, dead)
}

const T: u64 = 8 * US;

#[test]
fn a_link_down_loses_until_the_tables_catch_up_then_traffic_recovers() {
    let (mut spec, dead) = two_spines();
    spec.routing.detection_delay_ps = 20 * T;
    spec.events.push(NetEventSpec { at_ps: 10 * T + T / 2, kind: NetEventKind::LinkDown, links: vec![dead as u32], ber: 0.0, rate_bps: 0 });
    spec.retransmit = Some(RetransmitSpec { rto_ps: 10 * T, max_retries: 0 });
    let rec = run(&spec);
    assert_eq!(rec.flows.lost_packets[0], 21);
    assert_eq!(rec.flows.rx_packets[0], 79);
    assert_eq!(rec.flows.complete_ps[0], None);
    assert_eq!(rec.flows.last_rx_ps[0], Some(103 * T));
    assert_eq!(rec.packets.dropped, 21);
    // Retransmission off: the message is abandoned at its first loss, with no timer.
    let r = rec.retransmit.expect("a message lost packets");
    assert_eq!((r.lost_packets, r.timeouts, r.packets, r.abandoned), (21, 0, 0, 1));
}

#[test]
fn a_link_down_costs_the_timeout_and_the_resent_packets() {
    let (mut spec, dead) = two_spines();
    spec.routing.detection_delay_ps = 20 * T;
    spec.retransmit = Some(RetransmitSpec { rto_ps: 10 * T, max_retries: 7 });
    spec.events.push(NetEventSpec { at_ps: 10 * T + T / 2, kind: NetEventKind::LinkDown, links: vec![dead as u32], ber: 0.0, rate_bps: 0 });
    let rec = run(&spec);
    assert_eq!(rec.flows.lost_packets[0], 21);
    assert_eq!(rec.flows.tx_packets[0], 121);
    assert_eq!(rec.flows.rx_packets[0], 100);
    assert_eq!(rec.flows.complete_ps[0], Some(133 * T));
    assert_eq!(rec.completion_ps, Some(133 * T));
    let r = rec.retransmit.expect("a message lost packets");
    assert_eq!((r.lost_packets, r.timeouts, r.packets, r.bytes, r.abandoned), (21, 1, 21, 21_000, 0));
}

#[test]
fn without_a_failure_every_packet_takes_the_light_path() {
    let (spec, _) = two_spines();
    let rec = run(&spec);
    assert_eq!(rec.flows.lost_packets[0], 0);
    // Three links after h0's NIC (leaf0 → s0, s0 → leaf1, leaf1 → h2): the last packet leaves h0 at 100 T and
    // arrives 3 T later, as over s1 (the same link count) in the failure case.
    assert_eq!(rec.flows.complete_ps[0], Some(103 * T));
}

#[test]
fn a_link_that_comes_back_before_detection_loses_only_what_it_carried_meanwhile() {
    // Down at 10.5 T, up at 15.5 T, detection 20 T: the tables never move; packets reaching the far end of the
    // link in (10.5 T, 15.5 T), i.e. (k+2)T ∈ {11 T, ..., 15 T}: k = 9..=13, five packets, are lost.
    let (mut spec, dead) = two_spines();
    spec.routing.detection_delay_ps = 20 * T;
    spec.events.push(NetEventSpec { at_ps: 10 * T + T / 2, kind: NetEventKind::LinkDown, links: vec![dead as u32], ber: 0.0, rate_bps: 0 });
    spec.events.push(NetEventSpec { at_ps: 15 * T + T / 2, kind: NetEventKind::LinkUp, links: vec![dead as u32], ber: 0.0, rate_bps: 0 });
    let rec = run(&spec);
    assert_eq!(rec.flows.lost_packets[0], 5);
    // Re-sent 99 T + RTO (the default 100 µs = 12.5 T) after the last packet started, over the repaired link:
    // the j-th starts at (111.5 + j) T and arrives three links after its serialisation ends, at (115.5 + j) T;
    // the last (j = 4) at 119.5 T.
    assert_eq!(rec.flows.complete_ps[0], Some(119 * T + T / 2));
    assert_eq!(rec.retransmit.map(|r| (r.timeouts, r.packets)), Some((1, 5)));
}

#[test]
fn a_bit_error_rate_loses_the_expected_share() {
    // BER 1e-5 on the 8,000-bit packets of the light path's first spine link: each is lost with probability
    // 1 − (1 − 1e-5)^8000 = 0.0769; over 100,000 packets sent once (no retransmission) the count is within
    // 4 sigma (sigma = 84) of 7,688.
    let (mut spec, dead) = two_spines();
    spec.messages[0].size_bytes = 100_000_000;
    spec.events.push(NetEventSpec { at_ps: 0, kind: NetEventKind::Ber, links: vec![dead as u32], ber: 1e-5, rate_bps: 0 });
    spec.retransmit = Some(RetransmitSpec { rto_ps: 10 * T, max_retries: 0 });
    let rec = run(&spec);
    let p = 1.0 - (1.0f64 - 1e-5).powi(8000);
    let (mean, sigma) = (100_000.0 * p, (100_000.0 * p * (1.0 - p)).sqrt());
    let lost = rec.flows.lost_packets[0] as f64;
    assert!((lost - mean).abs() < 4.0 * sigma, "lost {lost}, expected {mean:.0} ± {sigma:.0}");
}

#[test]
fn under_a_bit_error_rate_every_packet_is_resent_until_it_arrives() {
    // As above with retransmission: each packet is sent until it arrives, so its losses are geometric with mean
    // p/(1 − p) and variance p/(1 − p)²: over 100,000 packets the lost count is within 4 sigma of
    // 100,000 p/(1 − p) = 8,329 (sigma = √(100,000 p)/(1 − p) = 95), every one re-sent, and the message
    // completes.
    let (mut spec, dead) = two_spines();
    spec.messages[0].size_bytes = 100_000_000;
    spec.events.push(NetEventSpec { at_ps: 0, kind: NetEventKind::Ber, links: vec![dead as u32], ber: 1e-5, rate_bps: 0 });
    let rec = run(&spec);
    let p = 1.0 - (1.0f64 - 1e-5).powi(8000);
    let (mean, sigma) = (100_000.0 * p / (1.0 - p), (100_000.0 * p).sqrt() / (1.0 - p));
    let lost = rec.flows.lost_packets[0] as f64;
    assert!((lost - mean).abs() < 4.0 * sigma, "lost {lost}, expected {mean:.0} ± {sigma:.0}");
    let r = rec.retransmit.expect("packets were lost");
    assert_eq!((r.lost_packets, r.packets, r.abandoned), (rec.flows.lost_packets[0], rec.flows.lost_packets[0], 0));
    assert_eq!(rec.flows.rx_packets[0], 100_000);
    assert!(rec.flows.complete_ps[0].is_some());
}
