//! The UEC transport by hand: one connection at line rate, a trimmed packet's recovery, NSCC's fair shares and
//! an incast recovered by trimming alone. Every fabric is `star`: hosts on one switch, 100 Gb/s links of 1 µs,
//! so a 4,150 B packet takes T = 332,000 ps on a link and a 64 B ACK, NACK or trimmed header 5,120 ps.

mod common;
use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::{EgressSpec, RunSpec, SwitchModel, UecSpec};

const T: u64 = 332_000;
const H: u64 = 5_120;
const D: u64 = US;

/// `n` senders and a receiver on one output-queued switch, running `[uec]` (htsim_uec's defaults unless `u` says
/// otherwise); every sender sends `size` bytes to the receiver at t = 0.
fn incast(n: u32, size: u64, u: UecSpec, queue: EgressSpec) -> (RunSpec, Vec<u32>) {
    let (net, senders, rx) = star(n, SwitchModel::OutputQueued);
    let mut spec = net.spec(1);
    spec.network.default_queue = queue;
    for (i, &s) in senders.iter().enumerate() {
        spec.messages.push(msg(&format!("m{i}"), s, rx, size, 4096, 64));
    }
    spec.uec = Some(u);
    (spec, senders)
}

fn deep() -> EgressSpec {
    EgressSpec { limit_packets: None, limit_bytes: Some(178_450), qdisc: None }
}

fn uec(r: &RunRecord) -> fabricsim_core::record::UecStats {
    r.uec.as_ref().expect("a UEC run has its section").stats
}

#[test]
fn one_connection_runs_at_line_rate_exactly() {
    // 1 MiB in 4,086 B payloads: 256 full packets (4,150 B on the wire, T each) and a last one of 2,560 + 64 =
    // 2,624 B (209,920 ps). The window (1.5 BDP, 87,630 B: the base RTT 2·2 µs + 2·(T + 5,120 ps) = 4,674,240
    // ps) always covers a round trip's 58 kB in flight and the 4 packets an ACK waits for, so the NIC sends all
    // 257 back to back. The switch forwards each full packet as it arrives (equal rates): packet k ≤ 255 leaves
    // it over [(k+1)T + d, (k+2)T + d]; the last arrives at 256T + 209,920 + d, waits for packet 255 until
    // 257T + d, and reaches the receiver at 257T + 209,920 + 2d = 87,533,920 ps. Its ACK (asked for: the last
    // packet) crosses two links of 5,120 ps + d each: the sender sees it at 89,544,160 ps.
    let (spec, _) = incast(1, 1 << 20, UecSpec::default(), deep());
    let r = run(&spec);
    assert_eq!(r.flows.complete_ps[0], Some(257 * T + 209_920 + 2 * D));
    assert_eq!(r.uec.as_ref().unwrap().acked_ps[0], Some(257 * T + 209_920 + 2 * D + 2 * (H + D)));
    let s = uec(&r);
    assert_eq!((s.data_packets, s.trims, s.nacks, s.timeouts, s.retransmits, s.ecn_echoes), (257, 0, 0, 0, 0, 0));
}

#[test]
fn a_trimmed_packet_is_recovered_one_nack_round_trip_later() {
    // Three one-packet messages (4,086 B: 4,150 B on the wire), a switch queue of one packet. All three reach
    // the switch at T + d = 1,332,000 ps. The first starts toward the receiver at once, the second takes the
    // one queue slot, the third finds the queue full and is trimmed to its 64 B header, which goes ahead of
    // the queued packet: it leaves when the first ends (2T + d), arrives at 2T + H + 2d = 2,669,120 ps, and the
    // receiver NACKs it at once: the NACK arrives at the sender at 2T + 3H + 4d = 4,679,360 ps (its NIC was free
    // when the first packet's ACK ended, at exactly that picosecond). The re-sent packet starts then and
    // crosses both links at T each: the message completes at 2T + 3H + 4d + 2(T + d) = 4T + 3H + 6d =
    // 7,343,360 ps, instead of 3T + H + 2d without the trim (behind the other two). Its ACK returns
    // 2(H + d) later.
    let one = EgressSpec { limit_packets: Some(1), limit_bytes: None, qdisc: None };
    let (spec, _) = incast(3, 4086, UecSpec::default(), one);
    let r = run(&spec);
    let s = uec(&r);
    assert_eq!((s.trims, s.trimmed_received, s.nacks, s.retransmits, s.timeouts), (1, 1, 1, 1, 0));
    let c: Vec<u64> = r.flows.complete_ps[..3].iter().map(|t| t.unwrap()).collect();
    let (trimmed, _) = c.iter().enumerate().max_by_key(|(_, &t)| t).unwrap();
    assert_eq!(c[trimmed], 4 * T + 3 * H + 6 * D);
    assert_eq!(r.uec.as_ref().unwrap().acked_ps[trimmed], Some(4 * T + 3 * H + 6 * D + 2 * (H + D)));
    assert_eq!(r.uec.as_ref().unwrap().retransmits[trimmed], 1);
    // The other two: the first at 2T + 2d; the queued one behind the first and the trimmed header.
    let mut rest: Vec<u64> = (0..3).filter(|&i| i != trimmed).map(|i| c[i]).collect();
    rest.sort();
    assert_eq!(rest, vec![2 * T + 2 * D, 3 * T + H + 2 * D]);
}

/// NSCC shares one 100 Gb/s port fairly: N = 2, 4, 8 and 16 connections into one receiver, 512 MiB in all for
/// N ≤ 4 and 1 GiB for N ≥ 8 (NSCC converges slowly: with 64 MiB each, 8 connections still spread from 0.90 to
/// 1.06 of their share over the same interval, and 256 MiB each brings them within 3%).
/// Between 10% and 90% of the time the whole incast needs at line rate (N · size · 4,150 / 4,086 · 8 / 100 Gb/s),
/// every connection is active (a fair share would finish them all together at 100%), so each one's payload
/// delivered in that interval, against B / N of payload (B = 100 Gb/s · 4,086 / 4,150), is its share: each within
/// 10%. Two runs to the two instants (a run is deterministic, so both see the same history).
#[test]
fn nscc_gives_each_of_n_flows_into_one_port_its_fair_share() {
    for n in [2u32, 4, 8, 16] {
        let size = if n >= 8 { 1024u64 << 20 } else { 512u64 << 20 } / n as u64;
        let (mut spec, _) = incast(n, size, UecSpec::default(), deep());
        let total = n as f64 * size as f64 * 4150.0 / 4086.0 * 8.0 / 100e9;
        let (t1, t2) = ((0.1 * total * 1e12) as u64, (0.9 * total * 1e12) as u64);
        spec.stop_ps = Some(t1);
        let a = run(&spec);
        spec.stop_ps = Some(t2);
        let b = run(&spec);
        let fair = 100e9 * 4086.0 / 4150.0 / n as f64;
        for i in 0..n as usize {
            let bits = (b.flows.rx_payload_bytes[i] - a.flows.rx_payload_bytes[i]) as f64 * 8.0;
            let share = bits / ((t2 - t1) as f64 / 1e12) / fair;
            println!("n = {n}: connection {i} got {share:.3} of B/N");
            assert!((share - 1.0).abs() <= 0.10, "n = {n}: connection {i} got {share:.3} of B/N");
        }
    }
}

/// Trimming alone recovers an incast: N = 8, 16 and 32 senders of 4 MiB each into one receiver through a switch
/// queue of one BDP (178,450 B). Packets are trimmed (the first window of every sender, 1.5 BDP each, meets a
/// one-BDP queue), every trimmed header is NACKed and re-sent, and no retransmission timer ever fires. The
/// receiver's link stays busy: the last byte is acknowledged within 0.5% of the time N · 4 MiB take at line
/// rate on the wire (4,150 B per 4,086 B of payload) plus one base RTT.
#[test]
fn an_incast_with_trimming_needs_no_timeout() {
    for n in [8u32, 16, 32] {
        let size = 4u64 << 20;
        let (spec, _) = incast(n, size, UecSpec::default(), deep());
        let r = run(&spec);
        let s = uec(&r);
        assert!(s.trims > 0, "n = {n}: the incast overflows the queue");
        assert_eq!((s.timeouts, s.trimmed_received, s.nacks), (0, s.trims, s.trims), "n = {n}");
        assert_eq!(s.retransmits, s.nacks, "n = {n}: exactly the trimmed packets are re-sent");
        let wire = (size.div_ceil(4086) * 64 + size) as f64 * n as f64;
        let ideal = wire * 8.0 / 100e9 * 1e12 + 4_674_240.0;
        let last = r.uec.as_ref().unwrap().acked_ps.iter().flatten().max().copied().unwrap() as f64;
        assert!(last >= ideal * 0.999 && last <= ideal * 1.005, "n = {n}: last ACK at {last} ps, ideal {ideal} ps");
    }
}

/// RCCC: the receiver's pacer grants credit at 0.99 of its line rate (`pull_rate`), 4 MSS per pull, round-robin
/// over its senders. A sender starts with one maximum window of speculative credit (1.5 BDP = 87,630 B here: 22
/// packets at line rate), then sends only what it is granted. So one connection of 4 MiB (1,027 packets) finishes
/// at most 1/0.99 later than at line rate (a bound: its first 22 packets went at line rate), and N = 8 or 32
/// senders finish together (the pacer serves them in turn): the first and the last within 1% of the time all
/// the bytes take at line rate, only the speculative windows overflowing the queue (fewer trims than N × 22).
#[test]
fn rccc_paces_credit_at_just_under_the_receivers_line_rate() {
    for n in [1u32, 8, 32] {
        let size = 4u64 << 20;
        let u = UecSpec { cc: fabricsim_core::spec::UecCc::Rccc, ..UecSpec::default() };
        let (spec, _) = incast(n, size, u, deep());
        let r = run(&spec);
        let s = uec(&r);
        let wire = (size.div_ceil(4086) * 64 + size) as f64 * n as f64;
        let ideal = wire * 8.0 / 100e9 * 1e12 + 4_674_240.0;
        let acked: Vec<f64> = r.uec.as_ref().unwrap().acked_ps.iter().flatten().map(|&t| t as f64).collect();
        let (first, last) = (acked.iter().cloned().fold(f64::MAX, f64::min), acked.iter().cloned().fold(0.0, f64::max));
        assert!(last > ideal && last <= ideal / 0.99, "n = {n}: last ACK {last} ps against {ideal} ps at line rate");
        assert!((last - first) / ideal < 0.01, "n = {n}: first {first} ps, last {last} ps");
        assert!(s.pulls > 0 && s.timeouts == 0 && s.trims < n as u64 * 22, "n = {n}: {s:?}");
    }
}
