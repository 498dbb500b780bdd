//! Flow-engine benchmark as a whole process: FT(2;M0,M1) with one synchronized all-to-all phase (shift or
//! random permutation) or the full phased all-to-all (every ordered pair, barrier between phases).
//!
//! cargo run --release -p fabricsim-flow --example bench_flow -- shift 100 100
//! cargo run --release -p fabricsim-flow --example bench_flow -- random 100 100
//! cargo run --release -p fabricsim-flow --example bench_flow -- a2a 20 18

use fabricsim_core::spec::{BarrierSpec, LinkSpec, MessageSpec, NetworkSpec, NodeKind, NodeSpec, RunSpec};

/// FT(2;M0,M1): M1 leaves with M0 servers each, M0 spines, every leaf linked to every spine; hosts first.
fn fat_tree(m0: u32, m1: u32, rate: u64) -> NetworkSpec {
    let hosts = m0 * m1;
    let mut nodes: Vec<NodeSpec> = (0..hosts).map(|i| NodeSpec::new(format!("h{i}"), NodeKind::Host, 0)).collect();
    nodes.extend((0..m1).map(|l| NodeSpec::new(format!("leaf{l}"), NodeKind::Switch, 0)));
    nodes.extend((0..m0).map(|s| NodeSpec::new(format!("spine{s}"), NodeKind::Switch, 0)));
    let link = |a, b| LinkSpec { a, b, rate_bps: rate, delay_ps: 0, weight: 1, a_end: Default::default(), b_end: Default::default() };
    let mut links: Vec<LinkSpec> = (0..hosts).map(|h| link(h, hosts + h / m0)).collect();
    for l in 0..m1 {
        for s in 0..m0 {
            links.push(link(hosts + l, hosts + m1 + s));
        }
    }
    NetworkSpec { nodes, links, default_queue: Default::default(), topology: None }
}

fn message(name: String, src: u32, dst: u32, size: u64, barriers: Vec<u32>) -> MessageSpec {
    MessageSpec {
        name,
        src,
        src_nic: 0,
        dst,
        dst_nic: 0,
        size_bytes: size,
        packet_bytes: 1024,
        header_bytes: 0,
        start_ps: 0,
        deps: vec![],
        sent_deps: vec![],
        barriers,
        delay_ps: 0,
        path: None,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("shift");
    let m0: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let m1: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100);
    let size = 1_000_000;
    let t0 = std::time::Instant::now();
    let n = m0 * m1;
    let mut messages = Vec::new();
    let mut barriers = Vec::new();
    match mode {
        "shift" => messages.extend((0..n).map(|i| message(format!("m{i}"), i, (i + m0) % n, size, vec![]))),
        "random" => {
            // A random derangement (splitmix-driven Fisher-Yates, re-drawn until no fixed point).
            let mut state = 0x5EED_u64;
            let mut next = || {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                fabricsim_core::routing::mix64(state)
            };
            let mut perm: Vec<u32> = (0..n).collect();
            loop {
                for i in (1..n as usize).rev() {
                    perm.swap(i, (next() % (i as u64 + 1)) as usize);
                }
                if perm.iter().enumerate().all(|(i, &p)| p != i as u32) {
                    break;
                }
            }
            messages.extend((0..n).map(|i| message(format!("m{i}"), i, perm[i as usize], size, vec![])));
        }
        "a2a" => {
            for p in 1..n {
                let wait = if p > 1 { vec![p - 2] } else { vec![] };
                let first = messages.len() as u32;
                messages.extend((0..n).map(|i| message(format!("p{p}.{i}"), i, (i + p) % n, size, wait.clone())));
                barriers.push(BarrierSpec { name: format!("phase{p}"), deps: (first..first + n).collect(), barriers: vec![] });
            }
        }
        other => panic!("mode must be shift, random or a2a, not {other}"),
    }
    let spec = RunSpec { messages, barriers, ..RunSpec::new(1, fat_tree(m0, m1, 100_000_000_000)) };
    let built = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    let compiled = fabricsim_core::compile::compile(spec, Default::default()).expect("the benchmark spec is valid");
    let compile_s = t1.elapsed().as_secs_f64();
    let t2 = std::time::Instant::now();
    let sim = fabricsim_flow::FlowSim::new_compiled(compiled).expect("the flow engine models it");
    let new_s = t2.elapsed().as_secs_f64();
    let t3 = std::time::Instant::now();
    let rec = sim.run().expect("the run completes");
    let run_s = t3.elapsed().as_secs_f64();
    println!(
        "{mode} FT(2;{m0},{m1}): {} flows, completion {:.3} ms, events {}, build {built:.3} s, compile {compile_s:.3} s, \
         engine set-up {new_s:.3} s, event loop {:.3} s, record {:.3} s, total {:.3} s",
        rec.flows.name.len(),
        rec.completion_ps.unwrap_or(0) as f64 / 1e9,
        rec.events,
        rec.wall_s,
        run_s - rec.wall_s,
        t0.elapsed().as_secs_f64()
    );
}
