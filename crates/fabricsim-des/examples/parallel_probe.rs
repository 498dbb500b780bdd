//! Measures what a conservative parallel packet engine would gain on k-ary fat-trees (benchmarks/PARALLEL.md).
//!
//! For each fat-tree it (1) runs the serial engine for its mean cost per event, (2) steps the same run event by
//! event and files every event under the partition of the node it changes, (3) cuts simulated time into
//! YAWNS windows of one lookahead (the smallest propagation delay between partitions) and counts, per window,
//! each partition's events and the packets crossing partitions, (4) measures on this machine the cost of a
//! two-thread barrier and of handing an event to the other thread, and (5) replays the windows on two threads:
//! each event's work is a calibrated busy-wait of the measured mean cost, with real barriers and real
//! cross-thread hand-offs. The replay's speedup is the measured 2-core figure; the window counts with the
//! measured costs give the model for 2-64 partitions.
//! Usage: `cargo run --release --example parallel_probe -p fabricsim-des [packets_per_flow] [link_delay_ns ...]`
//! (defaults: 500 packets; link delays of 1000, 100 and 20 ns).

mod common;

use fabricsim_core::spec::*;
use fabricsim_des::Sim;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One outbox per thread: (window or time, index, sender) triples handed to the other thread.
type Outboxes = Arc<[Mutex<Vec<(u64, u64, u64)>>; 2]>;

/// A k-ary fat-tree (k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores, k^3/4 hosts), 100 Gb/s
/// links of `delay_ps`, per-flow ECMP, every host sending `packets` 1 KiB packets to the host half the fabric away
/// (a permutation in which every flow crosses the core). Returns the spec and each node's "unit": the edge
/// switch (with its hosts) it belongs to, or for aggregation and core switches the unit they are grouped with.
fn fat_tree(k: u32, packets: u64, delay_ps: u64) -> (RunSpec, Vec<u32>) {
    let h = k / 2;
    let (mut nodes, mut links, mut unit) = (vec![], vec![], vec![]);
    let sw = |name: String| NodeSpec::new(name, NodeKind::Switch, 0);
    let link = |a, b| common::link(a, b, 100_000_000_000, delay_ps);
    let n_edge = k * h;
    for c in 0..h * h {
        nodes.push(sw(format!("core{c}")));
        unit.push(c * n_edge / (h * h)); // cores spread evenly over the units
    }
    let core0 = 0;
    let mut hosts = vec![];
    for pod in 0..k {
        let agg0 = nodes.len() as u32;
        for a in 0..h {
            nodes.push(sw(format!("agg{pod}_{a}")));
            unit.push(pod * h + a); // aggregation switch a of a pod goes with the pod's edge a
            for c in 0..h {
                links.push(link(agg0 + a, core0 + a * h + c));
            }
        }
        for e in 0..h {
            let edge = nodes.len() as u32;
            nodes.push(sw(format!("edge{pod}_{e}")));
            unit.push(pod * h + e);
            for a in 0..h {
                links.push(link(edge, agg0 + a));
            }
            for i in 0..h {
                let host = nodes.len() as u32;
                nodes.push(NodeSpec::new(format!("h{pod}_{e}_{i}"), NodeKind::Host, 0));
                unit.push(pod * h + e);
                links.push(link(host, edge));
                hosts.push(host);
            }
        }
    }
    let n = hosts.len();
    let messages = (0..n).map(|i| MessageSpec::new(format!("m{i}"), hosts[i], hosts[(i + n / 2) % n], packets * 1024, 1024, 64)).collect();
    let spec = common::spec(nodes, links, messages);
    (spec, unit)
}

/// Per window: each partition's events, and the packets it hands to another partition.
struct Windows {
    parts: usize,
    events: Vec<u32>,
    sent: Vec<u32>,
}

impl Windows {
    fn n(&self) -> usize {
        self.events.len() / self.parts
    }
    /// Σ over windows of the busiest partition's events: the critical path in events.
    fn critical(&self) -> u64 {
        self.events.chunks(self.parts).map(|w| *w.iter().max().unwrap() as u64).sum()
    }
    fn crossing(&self) -> u64 {
        self.sent.iter().map(|&x| x as u64).sum()
    }
}

/// Cut a time-ordered trace of (time ps, partition, crosses?) into windows [T, T + lookahead), each starting at
/// the first event not in the previous one (YAWNS: the next window opens at the global minimum pending time).
fn windows(trace: &[(u64, u16, bool)], parts: usize, lookahead: u64) -> Windows {
    let mut w = Windows { parts, events: vec![], sent: vec![] };
    let mut end = 0u64;
    for &(t, p, x) in trace {
        if w.events.is_empty() || t >= end {
            end = t + lookahead;
            w.events.extend(std::iter::repeat_n(0, parts));
            w.sent.extend(std::iter::repeat_n(0, parts));
        }
        let base = w.events.len() - parts;
        w.events[base + p as usize] += 1;
        if x {
            w.sent[base + p as usize] += 1;
        }
    }
    w
}

/// The share of events that happen at the same picosecond as an event of another partition: the ties whose
/// order a partitioned engine must settle without the serial engine's global insertion sequence.
fn cross_ties(trace: &[(u64, u16, bool)]) -> f64 {
    let mut tied = 0usize;
    let mut i = 0;
    while i < trace.len() {
        let j = i + trace[i..].iter().take_while(|e| e.0 == trace[i].0).count();
        if trace[i..j].iter().any(|e| e.1 != trace[i].1) {
            tied += j - i;
        }
        i = j;
    }
    tied as f64 / trace.len() as f64
}

/// A sense-reversing spin barrier for two or more threads.
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    sense: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        SpinBarrier { n, count: AtomicUsize::new(0), sense: AtomicUsize::new(0) }
    }
    fn wait(&self, local: &mut usize) {
        *local ^= 1;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.sense.store(*local, Ordering::Release);
        } else {
            while self.sense.load(Ordering::Acquire) != *local {
                std::hint::spin_loop();
            }
        }
    }
}

/// Busy work of about `ns` nanoseconds (`per_ns` loop turns per nanosecond, calibrated once).
#[inline]
fn work(turns: u64) {
    let mut x = 0u64;
    for i in 0..turns {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    black_box(x);
}

fn calibrate() -> f64 {
    let turns = 50_000_000;
    let t = Instant::now();
    work(turns);
    turns as f64 / (t.elapsed().as_nanos() as f64)
}

/// Nanoseconds per two-thread barrier round (spin barrier), and per event handed to the other thread in
/// batches of `batch` (a Vec outbox per direction, swapped at the barrier and drained into a Vec inbox).
fn sync_costs(rounds: usize, batch: usize) -> (f64, f64) {
    let run = |batch: usize| -> f64 {
        let bar = Arc::new(SpinBarrier::new(2));
        let boxes: Outboxes = Arc::new([Mutex::new(vec![]), Mutex::new(vec![])]);
        let t = Instant::now();
        let hs: Vec<_> = (0..2)
            .map(|me| {
                let (bar, boxes) = (bar.clone(), boxes.clone());
                std::thread::spawn(move || {
                    let (mut sense, mut inbox) = (0, Vec::with_capacity(batch));
                    for r in 0..rounds {
                        {
                            let mut out = boxes[1 - me].lock().unwrap();
                            out.extend((0..batch as u64).map(|i| (r as u64, i, me as u64)));
                        }
                        bar.wait(&mut sense);
                        inbox.extend(boxes[me].lock().unwrap().drain(..));
                        black_box(&inbox);
                        inbox.clear();
                        bar.wait(&mut sense);
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
        t.elapsed().as_nanos() as f64 / rounds as f64
    };
    let bare = run(0) / 2.0;
    let with = run(batch) / 2.0;
    (bare, ((with - bare) * 2.0 / batch as f64).max(0.0))
}

/// Replay the windows of a 2-partition cut on two threads (and serially on one): per window each thread busy-
/// waits its events × `ns_per_event`, hands its crossing packets to the other thread, and meets it at a barrier.
/// The window sequence is replayed `reps` times over, so that short runs still last long enough to time.
/// Returns (serial seconds, parallel seconds).
fn replay(w: &Windows, ns_per_event: f64, per_ns: f64, reps: usize) -> (f64, f64) {
    assert_eq!(w.parts, 2);
    let turns = move |events: u32| (events as f64 * ns_per_event * per_ns) as u64;
    let t = Instant::now();
    for _ in 0..reps {
        for win in w.events.chunks(2) {
            work(turns(win[0] + win[1]));
        }
    }
    let serial = t.elapsed().as_secs_f64();
    let events = Arc::new(w.events.clone());
    let sent = Arc::new(w.sent.clone());
    let bar = Arc::new(SpinBarrier::new(2));
    let boxes: Outboxes = Arc::new([Mutex::new(vec![]), Mutex::new(vec![])]);
    let t = Instant::now();
    let hs: Vec<_> = (0..2)
        .map(|me| {
            let (events, sent, bar, boxes) = (events.clone(), sent.clone(), bar.clone(), boxes.clone());
            std::thread::spawn(move || {
                let (mut sense, mut inbox) = (0, Vec::new());
                for (win, out) in (0..reps).flat_map(|_| events.chunks(2).zip(sent.chunks(2))) {
                    work(turns(win[me]));
                    if out[me] > 0 {
                        boxes[1 - me].lock().unwrap().extend((0..out[me] as u64).map(|i| (i, i, i)));
                    }
                    bar.wait(&mut sense);
                    inbox.extend(boxes[me].lock().unwrap().drain(..));
                    black_box(&inbox);
                    inbox.clear();
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    (serial, t.elapsed().as_secs_f64())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let packets: u64 = args.first().map(|s| s.parse().expect("packets per flow")).unwrap_or(500);
    let delays: Vec<u64> = match args.get(1..) {
        Some(d) if !d.is_empty() => d.iter().map(|s| s.parse().expect("link delay in ns")).collect(),
        _ => vec![1000, 100, 20],
    };
    let per_ns = calibrate();
    // The median of 5 measurements: this machine is a noisy virtual one.
    let mut costs: Vec<(f64, f64)> = (0..5).map(|_| sync_costs(200_000, 64)).collect();
    costs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sync_ns = costs[2].0;
    costs.sort_by(|a, b| a.1.total_cmp(&b.1));
    let msg_ns = costs[2].1;
    println!("machine: {} cores available", std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!(
        "two-thread spin barrier: {sync_ns:.0} ns per round; hand-off: {msg_ns:.1} ns per event (batches of 64); \
         medians of 5"
    );
    for (k, delay_ns) in [8u32, 16].into_iter().flat_map(|k| delays.iter().map(move |&d| (k, d))) {
        let (spec, unit) = fat_tree(k, packets, delay_ns * 1000);
        let rec = fabricsim_des::run(&spec).expect("serial run");
        let ns_ev = rec.wall_s * 1e9 / rec.events as f64;
        let mut sim = Sim::new(&spec).expect("spec");
        let (n_nodes, ports) = sim.port_links();
        let mut raw: Vec<(u64, u32, i64)> = Vec::with_capacity(rec.events as usize);
        while let Some((t, ev)) = sim.step() {
            let node = sim.event_node(ev).unwrap_or(0);
            // A pipe event is a packet arriving from the port's node; remember the sender for the crossing count.
            let from = match ev {
                fabricsim_des::events::Ev::Pipe(p) => ports[p as usize].0 as i64,
                _ => -1,
            };
            raw.push((t.0, node, from));
        }
        let n_units = unit.iter().max().unwrap() + 1;
        println!(
            "\nk = {k}, links of {delay_ns} ns: {} nodes, {} hosts x {packets} packets, {} events, serial {:.2} s = \
             {ns_ev:.1} ns/event",
            n_nodes,
            k * k * k / 4,
            rec.events,
            rec.wall_s
        );
        println!("partitions  windows  events/window  critical-path share  crossing/event  modelled speedup  (replayed on 2 threads)");
        for parts in [2usize, 4, 8, 16, 32, 64] {
            if parts > n_units as usize {
                break;
            }
            let part = |v: u32| (unit[v as usize] as usize * parts / n_units as usize) as u16;
            let lookahead = ports.iter().filter(|&&(a, b, _)| part(a) != part(b)).map(|&(_, _, d)| d).min().unwrap();
            // The partition that does the work, and whether the packet came from another partition (the sender
            // counted it as a hand-off).
            let trace: Vec<(u64, u16, bool)> =
                raw.iter().map(|&(t, node, from)| (t, part(node), from >= 0 && part(from as u32) != part(node))).collect();
            let w = windows(&trace, parts, lookahead);
            if parts == 2 {
                println!("  events at the same picosecond as an event of the other partition: {:.1}%", 100.0 * cross_ties(&trace));
            }
            let total = rec.events as f64;
            let crit = w.critical() as f64;
            let barrier = sync_ns * (parts as f64).log2().ceil();
            let t_par = crit * ns_ev + w.n() as f64 * barrier + w.crossing() as f64 * msg_ns / parts as f64;
            let model = total * ns_ev / t_par;
            let replayed = if parts == 2 {
                let reps = (0.5 / rec.wall_s).ceil().max(1.0) as usize;
                let (s, p) = replay(&w, ns_ev, per_ns, reps);
                format!("{:.2}x ({s:.2} s -> {p:.2} s)", s / p)
            } else {
                String::new()
            };
            println!(
                "{parts:>10}  {:>7}  {:>13.0}  {:>19.3}  {:>14.3}  {:>16.2}  {replayed}",
                w.n(),
                total / w.n() as f64,
                crit / total,
                w.crossing() as f64 / total,
                model
            );
        }
    }
}
