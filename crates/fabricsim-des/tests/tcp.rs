//! TCP on hand-built loss cases: a single drop is repaired by one fast retransmit, a lost window by an RTO.

mod common;

use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;

const MSS: u64 = 1000;

fn tcp(src: u32, dst: u32, cc: TcpCc, segments: u64) -> TcpSpec {
    TcpSpec { min_rto_ps: 1_000 * MS, ..tcp_spec("t", src, dst, cc, segments * MSS) }
}

/// a -(10 Gb/s, 10 us)- s -(1 Gb/s, 10 us)- b with unlimited queues; `drops` are arrival indices at s -> b
/// (0 = SYN, 1 = the handshake's ACK, 2 + k = data segment k while nothing is retransmitted).
fn run_with_drops(cc: TcpCc, sack: bool, segments: u64, drops: Vec<u64>) -> RunRecord {
    let mut n = Net::new();
    let a = n.host("a");
    let s = n.switch("s", 0);
    let b = n.host("b");
    n.link(a, s, 10 * GBPS, 10 * US);
    let l = n.link(s, b, GBPS, 10 * US);
    let mut spec = n.spec(1);
    spec.network.default_queue.limit_packets = None;
    spec.network.links[l].a_end.drop_packets = drops;
    let mut t = tcp(a, b, cc, segments);
    t.sack = sack;
    spec.tcp.push(t);
    run(&spec)
}

#[test]
fn lossless_transfer_delivers_every_byte_once() {
    let r = run_with_drops(TcpCc::Cubic, true, 100, vec![]);
    // Data flow: SYN + handshake ACK + 100 segments, nothing lost or resent.
    assert_eq!((r.flows.tx_packets[0], r.flows.lost_packets[0]), (102, 0));
    assert_eq!(r.flows.rx_payload_bytes[0], 100 * MSS);
    assert!(r.flows.complete_ps[0].unwrap() < 10 * MS);
}

#[test]
fn a_single_drop_costs_one_fast_retransmit() {
    for (cc, sack) in [(TcpCc::Cubic, true), (TcpCc::NewReno, true), (TcpCc::NewReno, false)] {
        let r = run_with_drops(cc, sack, 100, vec![2 + 19]);
        // One extra data packet (the retransmission of segment 19), one loss, and no RTO: the transfer
        // finishes in a few round trips (~50 us each), far below the 1 s minimum RTO.
        assert_eq!((r.flows.tx_packets[0], r.flows.lost_packets[0]), (103, 1), "{cc:?} sack={sack}");
        assert_eq!(r.flows.rx_payload_bytes[0], 100 * MSS, "{cc:?}: every segment arrives exactly once");
        let done = r.flows.complete_ps[0].unwrap();
        assert!(done < 20 * MS, "{cc:?} sack={sack}: completed at {done} ps, an RTO must not have fired");
    }
}

#[test]
fn losing_the_whole_first_window_needs_an_rto() {
    // Segments 0..9 (the initial window of 10) are all dropped: no ACK comes back, so only the RTO
    // (1 s minimum) recovers. Then go-back-N from segment 0 with cwnd = 1 segment: the receiver holds
    // the lone in-order segment for the 200 ms delayed-ACK timer; slow start then sends flights of
    // 2, 4, 8 and 5 segments, and the last segment of the odd final flight waits for the delayed-ACK timer
    // again: done 1 s + 2 x 200 ms + a few 50 us round trips after the first data left.
    let r = run_with_drops(TcpCc::Cubic, true, 20, (2..12).collect());
    assert_eq!(r.flows.lost_packets[0], 10);
    assert_eq!(r.flows.tx_packets[0], 2 + 10 + 20, "the lost window is sent again, then the rest");
    let done = r.flows.complete_ps[0].unwrap();
    let first_data = r.flows.start_ps[0].unwrap() + 40 * US; // after the handshake's round trip
    assert!(done > first_data + 1_400 * MS, "RTO (1 s) + 2 delayed ACKs (200 ms): done at {done}");
    assert!(done < first_data + 1_401 * MS, "then a few 50 us round trips: done at {done}");
}

#[test]
fn tcp_fills_a_bottleneck_and_shares_it() {
    // Four Cubic flows through a 100 Mb/s, 100-packet bottleneck for 60 s: the link stays busy and the
    // long-run shares are close (within 30% of the mean). Cubic converges slowly: over 20 s the shares
    // still differ by more than 2x in this setup.
    let (n, senders, rx) = dumbbell(4);
    let mut spec = n.spec(1);
    spec.stop_ps = Some(60_000 * MS);
    for (i, &h) in senders.iter().enumerate() {
        let mut t = tcp(h, rx, TcpCc::Cubic, 1);
        t.name = format!("t{i}");
        t.max_bytes = None;
        t.start_ps = i as u64 * 100 * MS;
        spec.tcp.push(t);
    }
    let r = run(&spec);
    let got: Vec<f64> = (0..4).map(|i| r.flows.rx_payload_bytes[i] as f64 * 8.0 / 60.0 / 1e6).collect();
    let total: f64 = got.iter().sum();
    // Payload capacity: 100 Mb/s x 1000 / 1040 = 96.2 Mb/s.
    assert!(total > 0.95 * 96.15, "bottleneck underused: {got:?}");
    for g in &got {
        assert!((g / (total / 4.0) - 1.0).abs() < 0.30, "{got:?}");
    }
}
