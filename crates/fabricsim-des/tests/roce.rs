//! RoCE checks from hand calculations: the RDMA transport at line rate and its go-back-N, PFC on incasts (no
//! loss, a busy bottleneck, the 2-to-1 pause cycle and peak occupancy), head-of-line blocking and DCQCN's
//! relief of it, a PFC deadlock named and stopped, and conservation with pauses in flight.

mod common;
use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;

/// Serialisation of a 1048 B data packet (1000 B payload + 48 B headers) at 100 Gb/s: 83.84 ns.
const T_PKT: u64 = 83_840;

fn rdma(cc: RdmaCc) -> RdmaSpec {
    RdmaSpec::preset("hpcc", cc).expect("preset")
}

/// Incast messages of `size` bytes from every sender to rx (1000 B payload, 48 B headers).
fn incast(senders: &[u32], rx: u32, size: u64) -> Vec<MessageSpec> {
    senders.iter().map(|&s| msg(&format!("m{s}"), s, rx, size, 1000, 48)).collect()
}

fn row(r: &RunRecord, name: &str) -> usize {
    r.queues.name.iter().position(|n| n == name).unwrap_or_else(|| panic!("no port {name}: {:?}", r.queues.name))
}

/// One 1 MB RDMA message alone: the QP paces at line rate, so its 1000 packets leave back to back.
/// The last starts at 999·T, reaches the switch at 1000·T + d, leaves it at 1001·T + d and arrives at
/// 1001·T + 2d = 83,923,840 + 2,000,000 ps (T = 1048·8 b / 100 Gb/s = 83.84 ns, d = 1 µs). One ACK per packet.
#[test]
fn one_qp_runs_at_line_rate() {
    for cc in [RdmaCc::None, RdmaCc::Dcqcn] {
        let (net, s, rx) = star(1, SwitchModel::SharedBuffer);
        let mut spec = net.spec(1);
        spec.pfc = Some(PfcSpec::hpcc());
        spec.ecn = EcnSpec::preset("hpcc");
        spec.rdma = Some(rdma(cc));
        spec.messages = incast(&s, rx, 1_000_000);
        let r = run(&spec);
        assert_eq!(r.flows.complete_ps[0], Some(1001 * T_PKT + 2 * US), "{cc:?}");
        assert_eq!(r.flows.rx_packets[1], 1000, "one ACK per packet");
        assert_eq!(r.flows.tx_bytes[0], 1000 * 1048);
        let roce = r.roce.expect("roce record");
        assert_eq!((roce.cnps, roce.pause_tx.iter().sum::<u64>()), (0, 0));
    }
}

/// Go-back-N without PFC: the switch drops data packet k = 100 of N = 1000. Packet k+1 arrives out of order
/// at (k+3)·T + 2d and is NACKed; the NACK (60 B, 4.8 ns per hop) reaches the sender at
/// t_n = (k+3)·T + 4d + 9.6 ns = (k + 50.82)·T. By then packets k+1 ..= k+50 have started (j·T < t_n), and the
/// QP's next slot is (k+51)·T, where it resends k; the last packet then starts at (N+50)·T and arrives at
/// (N+52)·T + 2d. Sent: N + 51 (k twice, k+1..=k+50 twice); received N + 50; lost 1. Later out-of-order
/// packets are discarded without a second NACK (one per hole per 500 µs).
#[test]
fn go_back_n_recovers_a_drop_at_the_closed_form_time() {
    let (n, k) = (1000u64, 100u64);
    let (mut net, s, rx) = star(1, SwitchModel::OutputQueued);
    net.links[1].b_end.drop_packets = vec![k]; // the switch's port toward rx (link 1, switch is its b end)
    let mut spec = net.spec(1);
    spec.rdma = Some(rdma(RdmaCc::None));
    spec.messages = incast(&s, rx, n * 1000);
    let r = run(&spec);
    assert_eq!(r.flows.complete_ps[0], Some((n + 52) * T_PKT + 2 * US));
    assert_eq!(r.flows.tx_packets[0], n + 51);
    assert_eq!(r.flows.rx_packets[0], n + 50);
    assert_eq!(r.flows.lost_packets[0], 1);
    assert_eq!(r.flows.rx_payload_bytes[0], (n + 50) * 1000, "every arrival counts; the transport discards");
}

/// PFC alone (no congestion control) on a 16-to-1 incast at line rate: nothing is dropped, PAUSE frames
/// flow, and the bottleneck is busy ≥ 99% of [first arrival, last departure].
#[test]
fn pfc_incast_is_lossless_and_keeps_the_bottleneck_busy() {
    let (net, s, rx) = star(16, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.rdma = Some(rdma(RdmaCc::None));
    spec.messages = incast(&s, rx, 4_000_000);
    let r = run(&spec);
    assert_eq!(r.packets.dropped, 0);
    let roce = r.roce.as_ref().expect("roce");
    assert!(roce.pause_tx.iter().sum::<u64>() > 0, "the buffer fills: PFC must act");
    let b = row(&r, "sw->rx");
    let last = r.flows.complete_ps[..16].iter().map(|c| c.expect("complete")).max().expect("flows");
    // Busy from the first packet's arrival at the switch (T + d) to the last departure (last arrival − d).
    let window = (last - US) - (T_PKT + US);
    let busy = r.queues.tx_bytes[b] as f64 * 8.0 / 100e9 * 1e12 / window as f64;
    assert!(busy >= 0.99, "bottleneck busy {busy:.4}");
}

/// PFC 2-to-1 (HPCC's switch: 32 MiB, 3 ports with 37,500 B headroom (3·100 Gb/s·1 µs/8) and 4 KiB reserve
/// each, so the pool is P = 33,554,432 − 112,500 − 12,288 = 33,429,644 B; α = 1/8; resume offset 3,072 B).
/// Each ingress fills at 100 − 50 Gb/s. Pause when its shared use s reaches (P − 2s)/8: s_p = P/10 =
/// 3,342,964 B. After the decision the sender still delivers what is on the wire and what it sends before
/// the PAUSE (43 B frame, 3.44 ns, plus d) reaches it: 2d + 3.44 ns at 100 Gb/s in, 50 out, so the peak
/// ingress is reserve + s_p + 6.25 B/ns · 2,003.44 ns = 4,096 + 3,342,964 + 12,521 = 3,359,581 B.
/// Resume at s_r = (P − 8·3,072)/10 = s_p − 2,457.6. One cycle (pause decision to the next) is half on, half
/// off (50 Gb/s out of 100 in); off lasts until the 25,043 B still arriving after the decision (12.5 B/ns ·
/// (2d + 3.44 ns)) and the 2,457.6 B to s_r have drained at 6.25 B/ns: 4,400.1 ns, so a cycle is 8.80 µs.
/// The first pause comes when s_p + reserve has built at 6.25 B/ns after the first arrival (T + d):
/// t_1 = 536.61 µs; the sender has then sent 12.5 B/ns · (t_1 + d) = 6.72 MB of its 10.48 MB (10,000 ×
/// 1048 B) and sends the remaining 3.76 MB at half duty: 601.5 µs, 68.35 cycles, so 1 + 68 = 69 PAUSEs per
/// sender port (HPCC's ns-3 fork: 67; ours: see the assertion). The peer's measured peak queue 6.72 MB is
/// twice this peak ingress less the reserves and ACKs.
#[test]
fn pfc_two_to_one_pauses_and_peak_occupancy_match_the_hand_computation() {
    let (net, s, rx) = star(2, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec { frame_bytes: 43, ..PfcSpec::hpcc() });
    spec.rdma = Some(rdma(RdmaCc::None));
    spec.messages = incast(&s, rx, 10_000_000);
    let r = run(&spec);
    assert_eq!(r.packets.dropped, 0);
    let roce = r.roce.as_ref().expect("roce");
    for name in ["sw->s0", "sw->s1"] {
        let p = row(&r, name);
        let peak = roce.peak_ingress_bytes[p] as f64;
        assert!((peak - 3_359_581.0).abs() <= 1048.0, "{name}: peak ingress {peak} B vs 3,359,581 B (± 1 packet)");
        let pauses = roce.pause_tx[p];
        assert!((67..=71).contains(&pauses), "{name}: {pauses} PAUSEs vs 69 by hand (± 2)");
    }
}

/// Head-of-line blocking. Switch X has the incast sender a and the victim sender v; switch Y has the second
/// incast sender b, the incast receiver r and the victim's receiver w; X–Y (and w's NIC) are 200 Gb/s, the
/// rest 100 Gb/s.
/// a and b share Y→r: 50 Gb/s each. Without PFC pressure the victim would get its NIC's 100 Gb/s (X→Y
/// carries 150). With PFC alone Y pauses X→Y whenever a's packets pile up at Y; X's egress toward Y is one
/// FIFO fed by a and v, whose ingress ports X pauses alike, so v gets what a gets through it: 50 Gb/s.
/// With DCQCN a slows to its 50 Gb/s share, the pauses stop, and v regains most of its 100 Gb/s.
#[test]
fn pfc_head_of_line_blocking_costs_the_victim_half_and_dcqcn_gives_it_back() {
    let victim_gbps = |cc: RdmaCc| {
        let mut net = Net::new();
        let x = net.switch("X", 0);
        let y = net.switch("Y", 0);
        for sw in [x, y] {
            net.nodes[sw as usize].model = SwitchModel::SharedBuffer;
        }
        let (a, v, b, r, w) = (net.host("a"), net.host("v"), net.host("b"), net.host("r"), net.host("w"));
        net.link(x, y, 200 * GBPS, US);
        for (h, sw) in [(a, x), (v, x), (b, y), (r, y)] {
            net.link(h, sw, 100 * GBPS, US);
        }
        // w's 200 Gb/s NIC makes 200 Gb/s the NIC rate, so every port keeps α = 1/8 (no doubling for X–Y).
        net.link(w, y, 200 * GBPS, US);
        let mut spec = net.spec(1);
        // A 1 MB buffer so that PFC engages within tens of µs and the victim's whole run is in that regime.
        // ECN marks below the PFC threshold (≈ 90 KB here), as deployments set them: 5 KB / 40 KB / 0.2.
        spec.pfc = Some(PfcSpec { buffer_bytes: 1_000_000, ..PfcSpec::hpcc() });
        spec.ecn = Some(EcnSpec { thresholds: vec![EcnThreshold { rate_bps: 100 * GBPS, kmin_bytes: 5_000, kmax_bytes: 40_000, pmax: 0.2 }] });
        spec.rdma = Some(RdmaSpec { rp_timer_ps: 55 * US, ..rdma(cc) });
        let size = 40_000_000;
        spec.messages = vec![msg("a", a, r, size, 1000, 48), msg("b", b, r, size, 1000, 48), msg("v", v, w, size / 2, 1000, 48)];
        let run = run(&spec);
        let roce = run.roce.as_ref().expect("roce");
        let pauses: u64 = roce.pause_tx.iter().sum();
        let t = run.flows.complete_ps[2].expect("victim completes") as f64 / 1e12;
        ((size / 2) as f64 * 1048.0 / 1000.0 * 8.0 / t / 1e9, pauses)
    };
    let (pfc_only, pauses) = victim_gbps(RdmaCc::None);
    assert!(pauses > 0);
    eprintln!("victim: PFC alone {pfc_only:.1} Gb/s ({pauses} pauses)");
    assert!((pfc_only - 50.0).abs() <= 5.0, "victim under PFC alone: {pfc_only:.1} Gb/s vs 50 by hand");
    let (with_dcqcn, _) = victim_gbps(RdmaCc::Dcqcn);
    eprintln!("victim: DCQCN {with_dcqcn:.1} Gb/s");
    assert!(with_dcqcn >= 80.0, "victim with DCQCN: {with_dcqcn:.1} Gb/s (regains most of 100)");
}

/// A cyclic buffer dependency: three shared-buffer switches in a ring, each with one host sending a large
/// message two switches clockwise (explicit clockwise paths). With a small buffer and PFC, each ring link's
/// ingress fills with traffic that waits on the next ring link: the run stops with the cycle of paused
/// ports named, partial results kept, instead of hanging.
#[test]
fn pfc_deadlock_is_named_and_stops_the_run() {
    let mut net = Net::new();
    let sw: Vec<u32> = (0..3).map(|i| net.switch(&format!("sw{i}"), 0)).collect();
    for &v in &sw {
        net.nodes[v as usize].model = SwitchModel::SharedBuffer;
    }
    let h: Vec<u32> = (0..3).map(|i| net.host(&format!("h{i}"))).collect();
    for i in 0..3 {
        net.link(sw[i], sw[(i + 1) % 3], 100 * GBPS, US);
        net.link(h[i], sw[i], 100 * GBPS, US);
    }
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec { buffer_bytes: 300_000, headroom_bytes: Some(40_000), ..PfcSpec::hpcc() });
    spec.rdma = Some(rdma(RdmaCc::None));
    spec.messages = (0..3)
        .map(|i| {
            let mut m = msg(&format!("m{i}"), h[i], h[(i + 2) % 3], 50_000_000, 1000, 48);
            m.path = Some(vec![h[i], sw[i], sw[(i + 1) % 3], sw[(i + 2) % 3], h[(i + 2) % 3]]);
            m
        })
        .collect();
    let r = run(&spec);
    let cycle = r.deadlock.as_deref().expect("a deadlock is reported");
    for i in 0..3 {
        assert!(cycle.contains(&format!("sw{i}->sw{}", (i + 1) % 3)), "ring link {i} in the cycle: {cycle}");
    }
    assert!(r.flows.complete_ps[..3].iter().all(|c| c.is_none()), "nothing completes");
    assert!(r.packets.in_flight > 0 && r.packets.rx > 0, "partial results kept");
}

/// Conservation (checked inside every run) holds when the run is cut while frames, pauses and
/// retransmissions are in flight: the 2-to-1 PFC incast stopped at 600 µs, and go-back-N stopped mid-recovery.
#[test]
fn conservation_holds_with_pauses_and_retransmissions_in_flight() {
    let (net, s, rx) = star(2, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.rdma = Some(rdma(RdmaCc::None));
    spec.messages = incast(&s, rx, 10_000_000);
    spec.stop_ps = Some(600 * US);
    let r = run(&spec);
    assert!(r.packets.in_flight > 0 && r.roce.as_ref().expect("roce").pause_tx.iter().sum::<u64>() > 0);
    assert_eq!(r.packets.tx, r.packets.rx + r.packets.dropped + r.packets.in_flight);
    let (mut net, s, rx) = star(1, SwitchModel::OutputQueued);
    net.links[1].b_end.drop_packets = vec![10, 500];
    let mut spec = net.spec(1);
    spec.rdma = Some(rdma(RdmaCc::None));
    spec.messages = incast(&s, rx, 1_000_000);
    spec.stop_ps = Some(50 * US);
    let r = run(&spec);
    assert!(r.packets.in_flight > 0 && r.packets.dropped >= 1);
    assert_eq!(r.packets.tx, r.packets.rx + r.packets.dropped + r.packets.in_flight);
}

/// HPCC keeps the bottleneck queue near zero (Li et al. 2019): with η = 0.95 the senders aim at 95% of the
/// link, so after the first RTTs (the line-rate start fills ≈ 7 × BDP) the 8-to-1 incast's queue averages
/// under 5% of one BDP (52,000 B = 4.16 µs × 100 Gb/s), i.e. about two packets. HPCC's ns-3 fork: 2.3 KB
/// averaged over the whole incast (benchmarks/HPCC_NS3.md).
#[test]
fn hpcc_keeps_the_incast_queue_near_zero() {
    let (net, s, rx) = star(8, SwitchModel::SharedBuffer);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.ecn = EcnSpec::preset("hpcc");
    spec.rdma = Some(rdma(RdmaCc::Hpcc));
    spec.messages = s.iter().map(|&h| msg(&format!("m{h}"), h, rx, 10_000_000, 1000, 90)).collect();
    spec.measure.queue_sample_ps = Some(US);
    spec.measure.sample_ports = Some(vec![(0, 8)]);
    let r = run(&spec);
    assert!(r.flows.complete_ps[..8].iter().all(|c| c.is_some()));
    let end = r.flows.complete_ps[..8].iter().map(|c| c.expect("complete")).min().expect("flows");
    let steady: Vec<u64> = r.samples.t_ps.iter().zip(&r.samples.bytes).filter(|&(&t, _)| t > 50 * US && t < end).map(|(_, &b)| b).collect();
    let mean = steady.iter().sum::<u64>() as f64 / steady.len() as f64;
    assert!(mean <= 0.05 * 52_000.0, "mean queue {mean:.0} B after 50 µs");
    assert_eq!(r.roce.expect("roce").pause_tx.iter().sum::<u64>(), 0);
}
