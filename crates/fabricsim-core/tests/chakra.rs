//! The Chakra trace reader and writer on ASTRA-sim's example traces and on hand-made and corrupt inputs.

use fabricsim_core::chakra::{comm_type, gzip, node_type, read_trace, write_trace, Trace, NO_BOOL, NO_NAME};
use fabricsim_core::Error;
use prost::encoding::{encode_key, encode_varint, WireType};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// ASTRA-sim's example traces in the project's shared/ folder: beside the checkout (as in CI), or where
/// FABRICSIM_SHARED says (the Makefile sets it for a clone elsewhere).
fn examples() -> std::path::PathBuf {
    let shared = std::env::var_os("FABRICSIM_SHARED")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    shared.join("data/chakra/astra-sim-examples")
}

/// Return from the test, saying so on stderr, when the shared/ folder with ASTRA-sim's traces is absent (a clone
/// with no shared/ beside it): the reader's own tests below still run on traces built here.
macro_rules! needs_shared_traces {
    () => {
        if !examples().is_dir() {
            eprintln!("skipped: ASTRA-sim's example traces are not at {} (set FABRICSIM_SHARED to the shared/ folder)", examples().display());
            return;
        }
    };
}

const COLLECTIVES: [(&str, i32); 4] = [
    ("all_reduce", comm_type::ALL_REDUCE),
    ("all_gather", comm_type::ALL_GATHER),
    ("reduce_scatter", comm_type::REDUCE_SCATTER),
    ("all_to_all", comm_type::ALL_TO_ALL),
];

fn file(coll: &str, npus: usize, rank: usize) -> PathBuf {
    examples().join(format!("{coll}/{npus}npus_1MB/{coll}.{rank}.et"))
}

fn ring(rank: usize) -> PathBuf {
    examples().join(format!("custom_ring_allreduce/8npus_1MB/custom_allreduce.{rank}.et"))
}

/// Every example file (the 4 collectives on 4 and 8 ranks, then the custom ring).
fn all_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for (coll, _) in COLLECTIVES {
        for npus in [4, 8] {
            v.extend((0..npus).map(|r| file(coll, npus, r)));
        }
    }
    v.extend((0..8).map(ring));
    v
}

fn read(path: &Path) -> (Vec<u8>, Trace) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let t = read_trace(&bytes, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
    (bytes, t)
}

fn spec_err(r: fabricsim_core::Result<Trace>) -> (String, String) {
    match r {
        Err(Error::Spec { field, reason }) => (field, reason),
        other => panic!("expected a Spec error, got {other:?}"),
    }
}

#[test]
fn first_file_matches_the_readme() {
    needs_shared_traces!();
    let (_, t) = read(&file("all_reduce", 4, 0));
    assert_eq!(t.version, "0.0.4");
    assert_eq!(t.len(), 1);
    assert_eq!(t.names[t.name[0] as usize], "all_reduce_4npus_1MB");
    assert_eq!(t.id, [0]);
    assert_eq!(t.node_type, [node_type::COMM_COLL_NODE]);
    assert_eq!(t.is_cpu_op, [0]);
    assert_eq!(t.comm_type, [comm_type::ALL_REDUCE]);
    assert_eq!(t.comm_size, [1_048_576]);
    assert_eq!((t.comm_src[0], t.comm_dst[0], t.comm_tag[0], t.pg_name[0]), (-1, -1, -1, NO_NAME));
    assert_eq!((t.num_ops[0], t.tensor_size[0], t.duration_micros[0]), (0, 0, 0));
    assert_eq!((t.data_dep_start.as_slice(), t.ctrl_dep_start.as_slice()), (&[0, 0][..], &[0, 0][..]));
    assert!(t.extra.is_empty() && t.meta_extra.is_empty());
}

#[test]
fn every_collective_example_parses() {
    needs_shared_traces!();
    for (coll, ct) in COLLECTIVES {
        for npus in [4usize, 8] {
            for rank in 0..npus {
                let (_, t) = read(&file(coll, npus, rank));
                assert_eq!(t.version, "0.0.4");
                assert_eq!(t.len(), 1, "{coll} {npus} {rank}");
                assert_eq!(t.names[t.name[0] as usize], format!("{coll}_{npus}npus_1MB"));
                assert_eq!(t.node_type, [node_type::COMM_COLL_NODE]);
                assert_eq!((t.comm_type[0], t.comm_size[0], t.is_cpu_op[0]), (ct, 1_048_576, 0));
            }
        }
    }
}

#[test]
fn custom_ring_has_sends_receives_and_consistent_deps() {
    needs_shared_traces!();
    for rank in 0..8 {
        let (_, t) = read(&ring(rank));
        assert_eq!(t.version, "", "the ring traces carry their version in a `schema` attribute");
        assert!(t.meta_extra.windows(6).any(|w| w == b"schema"));
        assert_eq!(t.len(), 35);
        let count = |ty: u8| t.node_type.iter().filter(|&&x| x == ty).count();
        assert_eq!((count(node_type::COMM_SEND_NODE), count(node_type::COMM_RECV_NODE), count(node_type::COMP_NODE)), (14, 14, 7));
        let ids: HashSet<u64> = t.id.iter().copied().collect();
        assert_eq!(ids.len(), t.len());
        assert_eq!(t.data_dep_start.len(), t.len() + 1);
        assert_eq!(*t.data_dep_start.last().unwrap() as usize, t.data_deps.len());
        assert!(!t.data_deps.is_empty());
        assert!(t.data_deps.iter().chain(&t.ctrl_deps).all(|d| ids.contains(d)));
        for i in 0..t.len() {
            let (src, dst) = (t.comm_src[i], t.comm_dst[i]);
            match t.node_type[i] {
                node_type::COMM_SEND_NODE => assert!(src == -1 && dst == (rank as i64 + 1) % 8 && t.comm_size[i] == 131_072 && t.comm_tag[i] >= 0),
                node_type::COMM_RECV_NODE => assert!(dst == -1 && src == (rank as i64 + 7) % 8 && t.comm_size[i] == 131_072 && t.comm_tag[i] >= 0),
                _ => assert!(src == -1 && dst == -1 && t.comm_size[i] == 0 && t.duration_micros[i] > 0),
            }
            assert_eq!(t.is_cpu_op[i], NO_BOOL);
        }
    }
}

#[test]
fn round_trip_is_exact() {
    needs_shared_traces!();
    for path in all_files() {
        let (bytes, t) = read(&path);
        let w1 = write_trace(&t);
        t.check().unwrap();
        let t2 = read_trace(&w1, "w1").unwrap();
        assert_eq!(t2, t, "{}", path.display());
        assert_eq!(write_trace(&t2), w1, "{}", path.display());
        assert_eq!(w1, bytes, "{}: the writer mirrors Chakra's own encoding", path.display());
    }
}

#[test]
fn gzip_input_reads_the_same() {
    needs_shared_traces!();
    for path in [file("all_to_all", 8, 3), ring(5)] {
        let (bytes, t) = read(&path);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&bytes).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b]);
        assert_eq!(read_trace(&gz, "x.et.gz").unwrap(), t);
        assert_eq!(read_trace(&gzip(&write_trace(&t)), "w.et.gz").unwrap(), t);
        let (field, reason) = spec_err(read_trace(&gz[..gz.len() / 2], "half.et.gz"));
        assert!(field.contains("half.et.gz") && reason.contains("gzip"), "{field}: {reason}");
    }
}

#[test]
fn truncated_and_garbage_files_are_spec_errors_naming_the_file() {
    needs_shared_traces!();
    let path = ring(0);
    let (bytes, _) = read(&path);
    let name = path.display().to_string();
    for cut in [1, 2, 5, 100, bytes.len() - 1] {
        let (field, reason) = spec_err(read_trace(&bytes[..cut], &name));
        assert!(field.starts_with(&name), "{field}");
        assert!(reason.contains("truncated"), "{cut}: {field}: {reason}");
    }
    let (field, reason) = spec_err(read_trace(&bytes[..bytes.len() - 1], &name));
    assert!(field.ends_with("record 35"), "{field}: {reason}");

    let (field, reason) = spec_err(read_trace(b"this is not a chakra trace, just text", "garbage.et"));
    assert!(field.starts_with("garbage.et") && reason.contains("truncated"), "{field}: {reason}");
    let (field, reason) = spec_err(read_trace(&[4, 0xff, 0xff, 0xff, 0xff], "garbage.et"));
    assert!(field.starts_with("garbage.et") && reason.contains("varint"), "{field}: {reason}");
    let (field, reason) = spec_err(read_trace(&[3, 0x0f, 0, 0], "garbage.et"));
    assert!(field == "garbage.et: record 0" && reason.contains("wire type 7"), "{field}: {reason}");
    let (field, reason) = spec_err(read_trace(b"", "empty.et"));
    assert!(field.starts_with("empty.et") && reason.contains("missing GlobalMetadata"), "{field}: {reason}");
}

#[test]
fn a_file_without_global_metadata_is_named_as_such() {
    needs_shared_traces!();
    let (bytes, _) = read(&ring(0));
    let meta_len = prost::encoding::decode_varint(&mut &bytes[..]).unwrap() as usize;
    let pos = prost::encoding::encoded_len_varint(meta_len as u64) + meta_len;
    let (field, reason) = spec_err(read_trace(&bytes[pos..], "nodes_only.et"));
    assert!(field == "nodes_only.et: record 0" && reason.contains("missing or bad GlobalMetadata"), "{field}: {reason}");
}

/// Append one length-delimited record.
fn record(out: &mut Vec<u8>, body: &[u8]) {
    encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

fn len_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// An attribute message with the given name and one raw value field (key + payload).
fn attr(name: &str, value: &[u8]) -> Vec<u8> {
    let mut a = Vec::new();
    len_field(&mut a, 1, name.as_bytes());
    a.extend_from_slice(value);
    a
}

fn varint_field(field: u32, v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    encode_key(field, WireType::Varint, &mut b);
    encode_varint(v, &mut b);
    b
}

#[test]
fn attributes_in_any_integer_variant_and_other_fields_survive() {
    let mut node = varint_field(1, 42);
    len_field(&mut node, 2, b"send");
    node.extend(varint_field(3, node_type::COMM_SEND_NODE as u64));
    node.extend(varint_field(4, 7)); // an unpacked ctrl dep
    node.extend(varint_field(6, 1234)); // start_time_micros, kept raw
    let mut fixed64 = Vec::new();
    encode_key(21, WireType::SixtyFourBit, &mut fixed64);
    fixed64.extend_from_slice(&(1u64 << 40).to_le_bytes());
    let mut sint = Vec::new();
    encode_key(17, WireType::Varint, &mut sint);
    encode_varint(((-3i64) << 1 ^ (-3i64 >> 63)) as u64, &mut sint);
    let mut string = Vec::new();
    len_field(&mut string, 29, b"pg7");
    let mut other = Vec::new();
    len_field(&mut other, 29, b"aten::mm");
    for a in [
        attr("comm_size", &fixed64),
        attr("comm_dst", &sint),
        attr("comm_type", &varint_field(11, 6)),
        attr("comm_tag", &varint_field(13, 9)),
        attr("num_ops", &varint_field(7, 5)),
        attr("is_cpu_op", &varint_field(9, 1)),
        attr("op_schema", &other),
        attr("pg_name", &string),
    ] {
        len_field(&mut node, 10, &a);
    }
    let mut meta = Vec::new();
    len_field(&mut meta, 1, b"0.0.4");
    let mut file = Vec::new();
    record(&mut file, &meta);
    record(&mut file, &node);
    let t = read_trace(&file, "hand.et").unwrap();
    assert_eq!(t.id, [42]);
    assert_eq!(t.names, ["send", "pg7"]);
    assert_eq!((t.comm_size[0], t.comm_dst[0], t.comm_type[0], t.comm_tag[0]), (1 << 40, -3, 6, 9));
    assert_eq!((t.num_ops[0], t.is_cpu_op[0], t.pg_name[0]), (5, 1, 1));
    assert_eq!(t.ctrl_deps, [7]);
    assert!(t.extra.windows(8).any(|w| w == b"aten::mm"));
    let w = write_trace(&t);
    let t2 = read_trace(&w, "w").unwrap();
    assert_eq!(t2, t);
    assert_eq!(write_trace(&t2), w);

    let mut bad = node.clone();
    len_field(&mut bad, 10, &attr("comm_size", &other));
    let mut f = Vec::new();
    record(&mut f, &meta);
    record(&mut f, &bad);
    let (field, reason) = spec_err(read_trace(&f, "bad.et"));
    assert!(field == "bad.et: node 42" && reason.contains("duplicate attribute comm_size"), "{field}: {reason}");
    let mut bad = varint_field(1, 3);
    len_field(&mut bad, 10, &attr("comm_size", &other));
    let mut f = Vec::new();
    record(&mut f, &meta);
    record(&mut f, &bad);
    let (field, reason) = spec_err(read_trace(&f, "bad.et"));
    assert!(field == "bad.et: node 3" && reason.contains("expected an integer, found string_val"), "{field}: {reason}");
    let mut bad = varint_field(1, 3);
    len_field(&mut bad, 10, &attr("comm_size", &varint_field(9, -5i64 as u64)));
    let mut f = Vec::new();
    record(&mut f, &meta);
    record(&mut f, &bad);
    let (_, reason) = spec_err(read_trace(&f, "bad.et"));
    assert!(reason.contains("out of range"), "{reason}");
}

#[test]
fn duplicate_node_ids_are_rejected() {
    needs_shared_traces!();
    let (bytes, _) = read(&ring(2));
    let meta_len = prost::encoding::decode_varint(&mut &bytes[..]).unwrap() as usize;
    let first_node = prost::encoding::encoded_len_varint(meta_len as u64) + meta_len;
    let mut dup = bytes.clone();
    dup.extend_from_slice(&bytes[first_node..]);
    let (field, reason) = spec_err(read_trace(&dup, "dup.et"));
    assert!(field == "dup.et: node 0" && reason.contains("duplicate node id"), "{field}: {reason}");
}

#[test]
fn built_traces_round_trip_and_check_rejects_broken_ones() {
    let t = Trace {
        version: "0.0.4".into(),
        names: vec!["a".into(), "".into(), "pg".into()],
        id: vec![0, 1, u64::MAX],
        name: vec![0, 1, 0],
        node_type: vec![node_type::COMP_NODE, node_type::COMM_COLL_NODE, node_type::COMM_RECV_NODE],
        duration_micros: vec![5, 0, u64::MAX],
        comm_type: vec![-1, comm_type::BARRIER, i32::MAX],
        comm_size: vec![0, u64::MAX, 1],
        comm_src: vec![-1, i64::MIN, 1 << 40],
        comm_dst: vec![-1, -2, 3],
        comm_tag: vec![-1, 0, i64::MAX],
        pg_name: vec![NO_NAME, 2, 2],
        num_ops: vec![u64::MAX, 0, 1],
        tensor_size: vec![u64::MAX, 3, 0],
        is_cpu_op: vec![1, 0, NO_BOOL],
        data_dep_start: vec![0, 0, 1, 3],
        data_deps: vec![0, 0, 1],
        ctrl_dep_start: vec![0, 0, 0, 1],
        ctrl_deps: vec![99],
        ..Trace::default()
    };
    let t = Trace { extra_start: vec![0; 4], ..t };
    t.check().unwrap();
    let w = write_trace(&t);
    assert_eq!(read_trace(&w, "built").unwrap(), t);

    let broken = |f: &dyn Fn(&mut Trace)| {
        let mut b = t.clone();
        f(&mut b);
        match b.check() {
            Err(Error::Spec { field, .. }) => field,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(broken(&|b| b.comm_size.truncate(2)), "comm_size");
    assert_eq!(broken(&|b| b.data_dep_start[3] = 2), "data_dep_start");
    assert_eq!(broken(&|b| b.name[1] = 3), "name[1]");
    assert_eq!(broken(&|b| b.id[2] = 1), "id[2]");
    assert_eq!(broken(&|b| b.is_cpu_op[0] = 3), "is_cpu_op[0]");
    assert_eq!(
        broken(&|b| {
            let mut a = Vec::new();
            len_field(&mut a, 10, &attr("comm_tag", &varint_field(9, 1)));
            b.extra = a;
            b.extra_start = vec![0, 0, 0, b.extra.len() as u64];
        }),
        "extra[2]"
    );
    assert_eq!(broken(&|b| b.meta_extra = vec![0x0a, 1, b'x']), "meta_extra");
}
