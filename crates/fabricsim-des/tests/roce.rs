//! RoCE closed-form and peer-derived checks: PFC (no loss, busy bottleneck, head-of-line blocking, deadlock),
//! the RDMA transport (line rate, go-back-N), DCQCN and HPCC on incasts.

mod common;
use common::*;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::*;

/// A star: senders 0..n, then the receiver, all on switch `sw` (shared buffer), every link `gbps` with 1 µs delay.
fn star(n: u32, gbps: u64) -> (Net, u32, Vec<u32>, u32) {
    let mut net = Net::new();
    let sw = net.switch("sw", 0);
    net.nodes[sw as usize].model = SwitchModel::SharedBuffer;
    let senders: Vec<u32> = (0..n).map(|i| net.host(&format!("s{i}"))).collect();
    let rx = net.host("rx");
    for &h in senders.iter().chain([rx].iter()) {
        net.link(h, sw, gbps * GBPS, US);
    }
    (net, sw, senders, rx)
}

fn rdma(cc: RdmaCc) -> RdmaSpec {
    RdmaSpec::preset("hpcc", cc).expect("preset")
}

/// The bottleneck: the switch's port toward `rx` (its record row).
fn port_row(r: &RunRecord, node: u32, peer_name: &str) -> usize {
    (0..r.queues.node.len())
        .find(|&i| r.queues.node[i] == node && r.queues.name[i].contains(peer_name))
        .expect("port")
}

#[test]
fn probe() {
    let (net, _sw, senders, rx) = star(8, 100);
    let mut spec = net.spec(1);
    spec.pfc = Some(PfcSpec::hpcc());
    spec.ecn = EcnSpec::preset("hpcc");
    spec.rdma = Some(rdma(RdmaCc::Dcqcn));
    spec.messages = senders.iter().map(|&s| msg(&format!("m{s}"), s, rx, 10_000_000, 1000, 48)).collect();
    spec.measure.queue_sample_ps = Some(US);
    let r = fabricsim_des::run(&spec).expect("run");
    let roce = r.roce.as_ref().unwrap();
    println!("events {} wall {:.3} end {} ps", r.events, r.wall_s, r.end_ps);
    println!("complete {:?}", r.flows.complete_ps);
    println!("pauses {} marks {} cnps {}", roce.pause_tx.iter().sum::<u64>(), roce.ecn_marks.iter().sum::<u64>(), roce.cnps);
    println!("drops {}", r.packets.dropped);
    let qs: Vec<u64> = r.samples.bytes.clone();
    println!("max sample {:?}", qs.iter().max());
}
