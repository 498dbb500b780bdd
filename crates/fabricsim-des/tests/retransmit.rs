//! The message transport's retransmission on a lossy path (an error model's listed drops), by hand: selective
//! repeat of the lost packets `rto` after the message's last send, the wait doubling after a timeout without
//! progress, and abandonment after `max_retries` such timeouts.

mod common;
use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::RetransmitSpec;

/// h0 -(1 Gb/s, 0 delay)- sw -(1 Gb/s)- h1, zero latencies; one message of 10 packets of 1,000 B (no header):
/// T = 8 µs per packet on each link. Packet k starts at h0 at kT, reaches sw at (k+1)T and h1 at (k+2)T. The
/// switch's port toward h1 drops the arrivals listed in `drops` (0-based, counting every packet offered to it,
/// re-sent ones included: the first re-sent packet is arrival 10). RTO = 5 T.
fn lossy(drops: Vec<u64>, max_retries: u32) -> RunRecord {
    let mut n = Net::new();
    let h0 = n.host("h0");
    let h1 = n.host("h1");
    let sw = n.switch("sw", 0);
    n.link(h0, sw, GBPS, 0);
    let l = n.link(sw, h1, GBPS, 0);
    n.links[l].a_end.drop_packets = drops;
    let mut spec = n.spec(1);
    spec.messages.push(msg("m", h0, h1, 10_000, 1000, 0));
    spec.retransmit = Some(RetransmitSpec { rto_ps: 5 * T, max_retries });
    run(&spec)
}

const T: u64 = 8 * US;

/// (lost, timeouts, re-sent packets, re-sent bytes, abandoned)
fn counts(r: &RunRecord) -> (u64, u64, u64, u64, u64) {
    let s = r.retransmit.expect("a message lost packets");
    (s.lost_packets, s.timeouts, s.packets, s.bytes, s.abandoned)
}

#[test]
fn a_loss_free_run_has_no_retransmission_record() {
    // The last packet (k = 9) reaches h1 at 11 T.
    let rec = lossy(vec![], 7);
    assert_eq!(rec.completion_ps, Some(11 * T));
    assert_eq!(rec.retransmit, None);
}

#[test]
fn two_drops_are_resent_together_at_one_timeout() {
    // Packets 3 and 5 are dropped. The last packet started at 9 T: the timer is due at 9 T + 5 T = 14 T, and the
    // two re-sent packets start at 14 T and 15 T and reach h1 at 16 T and 17 T.
    let rec = lossy(vec![3, 5], 7);
    assert_eq!(counts(&rec), (2, 1, 2, 2000, 0));
    assert_eq!(rec.completion_ps, Some(17 * T));
    assert_eq!(rec.flows.tx_packets[0], 12);
    assert_eq!(rec.flows.rx_packets[0], 10);
}

#[test]
fn a_resent_packet_lost_again_waits_another_timeout() {
    // Drops 3, 5 and arrival 10 (packet 3 re-sent at 14 T). Packet 5's re-send arrives at 17 T, progress, so the
    // wait stays 5 T: due 15 T (last send) + 5 T = 20 T; packet 3 again starts at 20 T and arrives at 22 T.
    let rec = lossy(vec![3, 5, 10], 7);
    assert_eq!(counts(&rec), (3, 2, 3, 3000, 0));
    assert_eq!(rec.completion_ps, Some(22 * T));
}

#[test]
fn a_timeout_without_progress_doubles_the_wait() {
    // Drops 3 and arrival 10 (its re-send at 14 T): nothing arrives after that, so the second wait is 2 × 5 T
    // from the last send at 14 T: due 24 T; the packet arrives at 26 T.
    let rec = lossy(vec![3, 10], 7);
    assert_eq!(counts(&rec), (2, 2, 2, 2000, 0));
    assert_eq!(rec.completion_ps, Some(26 * T));
}

#[test]
fn the_message_is_abandoned_after_max_retries_without_progress() {
    // As above with one retry: the timeout at 24 T finds one timeout without progress already, and gives up.
    let rec = lossy(vec![3, 10], 1);
    assert_eq!(counts(&rec), (2, 1, 1, 1000, 1));
    assert_eq!(rec.completion_ps, None);
    assert_eq!(rec.flows.complete_ps[0], None);
    assert_eq!(rec.end_ps, 24 * T);
}
