//! Engine throughput on the fixed benchmark scenario (the same one `make bench` runs through Python), for profiling.
//!
//! 64 flows x 100 000 packets x 4 hops: leaf-spine with 2 leaves, 8 spines, 64 hosts per leaf (100 Gb/s),
//! leaf-spine links 800 Gb/s, per-flow ECMP, DropTail FIFOs, every host on leaf 0 sends one message of
//! 100 000 x 1 KiB packets to its peer on leaf 1. Then, in the same process, a bare event loop: the engine's
//! event queue alone, popping as many events and scheduling each one again one serialisation or one link delay
//! later, with as many pending as the engine keeps (one per port and pipe), and no queues, packets or statistics;
//! and the same loop on a binary heap of (time, sequence). Issue 29 compares the engine's link crossings per
//! second (a delivered packet crosses switches + 1 links) with the bare binary-heap loop's pops per second.
//! Usage: `cargo run --release --example bench_engine [packets]`.

mod common;

use fabricsim_core::spec::*;
use fabricsim_core::Time;
use fabricsim_des::events::{Ev, EventQueue};
use std::collections::BinaryHeap;
use std::time::Instant;

/// The bare loop on the engine's queue: `pending` events, each popped and scheduled again `delays[i % 2]` later
/// (a serialisation of 1,088 B at 100 Gb/s, or a 1 us link), `n` pops in all. Returns events per second.
fn bare_radix(pending: u32, n: u64) -> f64 {
    let mut q = EventQueue::default();
    let delays = [87_040u64, 1_000_000];
    for i in 0..pending {
        q.schedule(Time(i as u64 * 997), Ev::Port(i));
    }
    let t = Instant::now();
    for _ in 0..n {
        let (at, ev) = q.pop().expect("pending events");
        let Ev::Port(i) = ev else { unreachable!() };
        q.schedule(Time(at.0 + delays[i as usize % 2]), ev);
    }
    n as f64 / t.elapsed().as_secs_f64()
}

/// An entry of the binary heap the engine used before issue 21: (time, sequence, id), 24 bytes, popped earliest
/// (time, sequence) first.
#[derive(PartialEq, Eq)]
struct HeapEntry {
    time: u64,
    seq: u64,
    id: u32,
}

impl Ord for HeapEntry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The same loop on that binary heap.
fn bare_heap(pending: u32, n: u64) -> f64 {
    let mut q = BinaryHeap::new();
    let delays = [87_040u64, 1_000_000];
    let mut seq = 0u64;
    for id in 0..pending {
        q.push(HeapEntry { time: id as u64 * 997, seq, id });
        seq += 1;
    }
    let t = Instant::now();
    for _ in 0..n {
        let e = q.pop().expect("pending events");
        q.push(HeapEntry { time: e.time + delays[e.id as usize % 2], seq, id: e.id });
        seq += 1;
    }
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let packets: u64 = std::env::args().nth(1).map(|s| s.parse().expect("packets per flow")).unwrap_or(100_000);
    let (hosts, spines) = (64u32, 8u32);
    let mut nodes = vec![];
    let mut links = vec![];
    let sw = |name: String| NodeSpec::new(name, NodeKind::Switch, 0);
    nodes.push(sw("leaf0".into()));
    nodes.push(sw("leaf1".into()));
    for s in 0..spines {
        nodes.push(sw(format!("spine{s}")));
    }
    let link = |a, b, rate_bps| common::link(a, b, rate_bps, 1_000_000);
    for s in 0..spines {
        links.push(link(0, 2 + s, 800_000_000_000));
        links.push(link(1, 2 + s, 800_000_000_000));
    }
    let first_host = nodes.len() as u32;
    for h in 0..2 * hosts {
        nodes.push(NodeSpec::new(format!("h{h}"), NodeKind::Host, 0));
        links.push(link(first_host + h, h / hosts, 100_000_000_000));
    }
    let messages = (0..hosts).map(|i| MessageSpec::new(format!("m{i}"), first_host + i, first_host + hosts + i, packets * 1024, 1024, 64)).collect();
    let spec = common::spec(nodes, links, messages);
    let r = fabricsim_des::run(&spec).expect("benchmark run");
    // Link crossings: every delivered packet crossed (switches + 1) links.
    let crossings: u64 = r.hops.iter().enumerate().map(|(s, &n)| (s as u64 + 1) * n).sum();
    println!(
        "events {} in {:.3} s = {:.2} M events/s; {} link crossings = {:.2} M crossings/s, {:.2} events per packet-hop; \
         packets rx {} dropped {}; completion {:.3} ms",
        r.events,
        r.wall_s,
        r.events as f64 / r.wall_s / 1e6,
        crossings,
        crossings as f64 / r.wall_s / 1e6,
        r.events as f64 / crossings as f64,
        r.packets.rx,
        r.packets.dropped,
        r.completion_ps.unwrap_or(0) as f64 / 1e9
    );
    // One pending event per port transmitter and per pipe, as in the engine: 2 x (2 x 64 + 2 x 2 x 8) ports.
    let pending = 2 * (2 * hosts + 2 * 2 * spines);
    let engine = r.events as f64 / r.wall_s;
    let cross = crossings as f64 / r.wall_s;
    let (radix, heap) = (bare_radix(pending, crossings), bare_heap(pending, crossings));
    println!(
        "bare loop, {pending} pending, {crossings} pops: radix heap {:.2} M events/s, binary heap {:.2} M events/s; \
         engine events/s = {:.2}x the bare radix loop and {:.2}x the bare binary-heap loop; link crossings/s = \
         {:.2}x the bare binary-heap loop's pops/s (issue 29's target: >= 1.4x)",
        radix / 1e6,
        heap / 1e6,
        engine / radix,
        engine / heap,
        cross / heap
    );
}
