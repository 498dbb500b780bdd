//! The Rust collective generators reproduce the Python ones they replaced exactly: every fixture case (the
//! DAGs of the former Python generators, lowered by `Scenario.to_wire`, frozen since the engine became the only
//! generator; tests/test_collectives_rust.py checks that the Python API's named rows lower to them too)
//! expands to the same messages, barriers and predecessor CSR.

use fabricsim_core::spec::{BarrierSpec, MessageSpec};
use fabricsim_core::workload::collectives::{expand, Base, CollectiveSpec};
use fabricsim_core::workload::{Dep, Workload};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

/// [src, src_nic, dst, dst_nic, size_bytes, deps, sent_deps, barriers].
type MessageRow = (u32, u32, u32, u32, u64, Vec<u32>, Vec<u32>, Vec<u32>);
/// [deps, barriers].
type BarrierRow = (Vec<u32>, Vec<u32>);

#[derive(Deserialize)]
struct Case {
    label: String,
    python: String,
    spec: CollectiveSpec,
    messages: Vec<MessageRow>,
    barriers: Vec<BarrierRow>,
}

/// The fixture's rows as columns, through the same lowering as the JSON row form.
fn expected(c: &Case) -> Workload {
    let messages: Vec<MessageSpec> = c
        .messages
        .iter()
        .map(|(src, src_nic, dst, dst_nic, size, deps, sent, bars)| MessageSpec {
            name: String::new(),
            src: *src,
            src_nic: *src_nic,
            dst: *dst,
            dst_nic: *dst_nic,
            size_bytes: *size,
            packet_bytes: c.spec.packet_bytes,
            header_bytes: c.spec.header_bytes,
            start_ps: 0,
            deps: deps.clone(),
            sent_deps: sent.clone(),
            barriers: bars.clone(),
            delay_ps: 0,
            path: None,
        })
        .collect();
    let barriers: Vec<BarrierSpec> =
        c.barriers.iter().map(|(d, b)| BarrierSpec { name: String::new(), deps: d.clone(), barriers: b.clone() }).collect();
    Workload::from_rows(&messages, &barriers)
}

fn fixtures() -> Vec<(String, Fixture)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/collectives");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        })
        .collect()
}

/// The first node whose row differs, for a readable failure.
fn first_difference(got: &Workload, want: &Workload) -> String {
    let m = want.n_msgs().min(got.n_msgs());
    for i in 0..m {
        let row = |w: &Workload| {
            (w.src[i], w.src_nic[i], w.dst[i], w.dst_nic[i], w.size[i], w.packet[i], w.header[i], w.start_ps[i], w.delay_ps[i], w.path[i])
        };
        if row(got) != row(want) {
            return format!("messages[{i}]: got {:?}, want {:?}", row(got), row(want));
        }
    }
    for x in 0..want.n_nodes().min(got.n_nodes()) {
        let preds = |w: &Workload| w.preds(x).iter().map(|&d| Dep::decode(d)).collect::<Vec<_>>();
        if preds(got) != preds(want) {
            return format!("{}: preds {:?}, want {:?}", want.node_label(x), preds(got), preds(want));
        }
    }
    format!("messages {} / {}, barriers {} / {}", got.n_msgs(), want.n_msgs(), got.n_barriers, want.n_barriers)
}

#[test]
fn expand_reproduces_the_python_generators() {
    let (mut cases, mut msgs) = (0, 0);
    for (file, fx) in fixtures() {
        for c in &fx.cases {
            let got = expand(&c.spec, 0, Base::default()).unwrap_or_else(|e| panic!("{file}: {} ({}): {e}", c.label, c.python));
            let want = expected(c);
            assert!(got == want, "{file}: {} ({}): {}", c.label, c.python, first_difference(&got, &want));
            cases += 1;
            msgs += want.n_msgs();
        }
    }
    // The fixtures hold 208 cases with 5,630 messages.
    assert_eq!((cases, msgs), (208, 5630));
}

/// Appended at a base, the fragment's references move by exactly that base, and `after` adds one entry
/// barrier ahead of the collective's own.
#[test]
fn fragments_at_a_base_are_absolute() {
    let base = Base { msgs: 1000, barriers: 20, compute: 5 };
    for (file, fx) in fixtures() {
        for c in fx.cases.iter().step_by(7) {
            let plain = expand(&c.spec, 0, Base::default()).unwrap();
            let mut spec = c.spec.clone();
            spec.after = vec![Dep::Compute(4).encode()];
            let got = expand(&spec, 3, base).unwrap();
            let (m, b) = (plain.n_msgs(), plain.n_barriers as usize);
            assert_eq!((got.n_msgs(), got.n_barriers as usize), (m, b + 1), "{file}: {}", c.label);
            assert_eq!(got.preds(m), &[Dep::Compute(4).encode()]);
            let shift = |d: u32| match Dep::decode(d) {
                Dep::Msg(i) => Dep::Msg(i + base.msgs),
                Dep::Sent(i) => Dep::Sent(i + base.msgs),
                Dep::Barrier(i) => Dep::Barrier(i + base.barriers + 1),
                Dep::Compute(i) => Dep::Compute(i),
            };
            let entry = Dep::Barrier(base.barriers);
            for x in 0..m {
                let mut want: Vec<Dep> = plain.preds(x).iter().map(|&d| shift(d)).collect();
                if want.is_empty() {
                    want.push(entry);
                }
                let got: Vec<Dep> = got.preds(x).iter().map(|&d| Dep::decode(d)).collect();
                assert_eq!(got, want, "{file}: {}: messages[{x}]", c.label);
            }
            for j in 0..b {
                let want: Vec<Dep> = plain.preds(m + j).iter().map(|&d| shift(d)).collect();
                let got: Vec<Dep> = got.preds(m + 1 + j).iter().map(|&d| Dep::decode(d)).collect();
                assert_eq!(got, want, "{file}: {}: barriers[{j}]", c.label);
            }
        }
    }
}
