//! MLCommons Chakra execution traces (`et_def.proto`, package ChakraProtoMsg): a streaming reader into columns and its inverse writer.
//!
//! A trace file is a sequence of varint-length-delimited protobuf records, a `GlobalMetadata` first and
//! then one `Node` per record, optionally gzip-compressed as a whole. The reader walks each record field by
//! field and pushes straight into the columns of [`Trace`]; no per-node object survives decoding. The
//! typed attributes a simulator needs (`comm_type`, `comm_size`, ...) become columns, whichever integer
//! variant of the `AttributeProto.value` oneof carries them; every other field of a node (start time,
//! inputs/outputs, storage, the other attributes, unknown fields) is kept verbatim as raw protobuf bytes,
//! so writing a trace back loses nothing.

use crate::{Error, Result};
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
use prost::Message;
use std::collections::HashMap;
use std::io::Read;

/// `pg_name` of a node without that attribute.
pub const NO_NAME: u32 = u32::MAX;
/// `is_cpu_op` of a node without that attribute.
pub const NO_BOOL: u8 = 2;
/// `comm_type`, `comm_src`, `comm_dst` and `comm_tag` of a node without that attribute.
pub const ABSENT: i64 = -1;

/// The `NodeType` enum of `et_def.proto`.
pub mod node_type {
    pub const INVALID_NODE: u8 = 0;
    pub const METADATA_NODE: u8 = 1;
    pub const MEM_LOAD_NODE: u8 = 2;
    pub const MEM_STORE_NODE: u8 = 3;
    pub const COMP_NODE: u8 = 4;
    pub const COMM_SEND_NODE: u8 = 5;
    pub const COMM_RECV_NODE: u8 = 6;
    pub const COMM_COLL_NODE: u8 = 7;
    pub const STORAGE_NODE: u8 = 8;
    pub const BATCH_NODE: u8 = 9;
    pub const CHECKPOINT_NODE: u8 = 10;
}

/// The `CollectiveCommType` enum of `et_def.proto` (the usual values of `comm_type`).
pub mod comm_type {
    pub const ALL_REDUCE: i32 = 0;
    pub const REDUCE: i32 = 1;
    pub const ALL_GATHER: i32 = 2;
    pub const GATHER: i32 = 3;
    pub const SCATTER: i32 = 4;
    pub const BROADCAST: i32 = 5;
    pub const ALL_TO_ALL: i32 = 6;
    pub const REDUCE_SCATTER: i32 = 7;
    pub const REDUCE_SCATTER_BLOCK: i32 = 8;
    pub const BARRIER: i32 = 9;
}

/// One rank's trace as columns, one row per `Node` in file order.
///
/// Invariants (what [`Trace::check`] verifies and [`read_trace`] guarantees): every per-node column has
/// `n = id.len()` entries; ids are distinct; `name[i] < names.len()`; `pg_name[i] < names.len()` or
/// [`NO_NAME`]; the CSR columns `*_start` have `n + 1` non-decreasing entries from 0 to the length of their
/// list, node i's data dependencies being `data_deps[data_dep_start[i]..data_dep_start[i + 1]]` (ids, which
/// need not exist in this file); `extra[extra_start[i]..extra_start[i + 1]]` is a well-formed sequence of
/// protobuf `Node` fields other than those held in columns. An absent attribute reads as its sentinel
/// (`comm_type`/`comm_src`/`comm_dst`/`comm_tag` −1, `comm_size`/`num_ops`/`tensor_size` 0, `pg_name`
/// [`NO_NAME`], `is_cpu_op` [`NO_BOOL`]), and a sentinel is written as an absent attribute.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// `GlobalMetadata.version` ("" when unset, as in traces that carry a `schema` attribute instead).
    pub version: String,
    /// The other `GlobalMetadata` fields (its attributes) as raw protobuf bytes, written back verbatim.
    pub meta_extra: Vec<u8>,
    /// Interned strings: node names and `pg_name` values, each once, in order of first use.
    pub names: Vec<String>,
    pub id: Vec<u64>,
    /// Index into `names`.
    pub name: Vec<u32>,
    /// The `NodeType` value (see [`node_type`]).
    pub node_type: Vec<u8>,
    pub duration_micros: Vec<u64>,
    pub comm_type: Vec<i32>,
    pub comm_size: Vec<u64>,
    pub comm_src: Vec<i64>,
    pub comm_dst: Vec<i64>,
    pub comm_tag: Vec<i64>,
    /// Index into `names`, or [`NO_NAME`].
    pub pg_name: Vec<u32>,
    pub num_ops: Vec<u64>,
    pub tensor_size: Vec<u64>,
    /// 0 or 1, [`NO_BOOL`] if absent.
    pub is_cpu_op: Vec<u8>,
    pub data_dep_start: Vec<u32>,
    pub data_deps: Vec<u64>,
    pub ctrl_dep_start: Vec<u32>,
    pub ctrl_deps: Vec<u64>,
    pub extra_start: Vec<u64>,
    /// Raw protobuf fields of each node not held in columns (see the struct invariants).
    pub extra: Vec<u8>,
}

// ---------------------------------------------------------------------------------------------------------
// AttributeProto, decoded with prost for the typed attributes.

macro_rules! list {
    ($name:ident, $kind:ident, $ty:ty) => {
        #[derive(Clone, PartialEq, Message)]
        struct $name {
            #[prost($kind, repeated, tag = "1")]
            values: Vec<$ty>,
        }
    };
}
list!(DoubleList, double, f64);
list!(FloatList, float, f32);
list!(Int32List, int32, i32);
list!(Int64List, int64, i64);
list!(Uint32List, uint32, u32);
list!(Uint64List, uint64, u64);
list!(Sint32List, sint32, i32);
list!(Sint64List, sint64, i64);
list!(Fixed32List, fixed32, u32);
list!(Fixed64List, fixed64, u64);
list!(Sfixed32List, sfixed32, i32);
list!(Sfixed64List, sfixed64, i64);
list!(BoolList, bool, bool);
list!(StringList, string, String);

#[derive(Clone, PartialEq, Message)]
struct BytesList {
    #[prost(bytes = "vec", repeated, tag = "1")]
    values: Vec<Vec<u8>>,
}

/// `ChakraProtoMsg.AttributeProto`.
#[derive(Clone, PartialEq, Message)]
struct AttributeProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    doc_string: String,
    #[prost(
        oneof = "Value",
        tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
    )]
    value: Option<Value>,
}

/// `AttributeProto.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
enum Value {
    #[prost(double, tag = "3")]
    DoubleVal(f64),
    #[prost(message, tag = "4")]
    DoubleList(DoubleList),
    #[prost(float, tag = "5")]
    FloatVal(f32),
    #[prost(message, tag = "6")]
    FloatList(FloatList),
    #[prost(int32, tag = "7")]
    Int32Val(i32),
    #[prost(message, tag = "8")]
    Int32List(Int32List),
    #[prost(int64, tag = "9")]
    Int64Val(i64),
    #[prost(message, tag = "10")]
    Int64List(Int64List),
    #[prost(uint32, tag = "11")]
    Uint32Val(u32),
    #[prost(message, tag = "12")]
    Uint32List(Uint32List),
    #[prost(uint64, tag = "13")]
    Uint64Val(u64),
    #[prost(message, tag = "14")]
    Uint64List(Uint64List),
    #[prost(sint32, tag = "15")]
    Sint32Val(i32),
    #[prost(message, tag = "16")]
    Sint32List(Sint32List),
    #[prost(sint64, tag = "17")]
    Sint64Val(i64),
    #[prost(message, tag = "18")]
    Sint64List(Sint64List),
    #[prost(fixed32, tag = "19")]
    Fixed32Val(u32),
    #[prost(message, tag = "20")]
    Fixed32List(Fixed32List),
    #[prost(fixed64, tag = "21")]
    Fixed64Val(u64),
    #[prost(message, tag = "22")]
    Fixed64List(Fixed64List),
    #[prost(sfixed32, tag = "23")]
    Sfixed32Val(i32),
    #[prost(message, tag = "24")]
    Sfixed32List(Sfixed32List),
    #[prost(sfixed64, tag = "25")]
    Sfixed64Val(i64),
    #[prost(message, tag = "26")]
    Sfixed64List(Sfixed64List),
    #[prost(bool, tag = "27")]
    BoolVal(bool),
    #[prost(message, tag = "28")]
    BoolList(BoolList),
    #[prost(string, tag = "29")]
    StringVal(String),
    #[prost(message, tag = "30")]
    StringList(StringList),
    #[prost(bytes = "vec", tag = "31")]
    BytesVal(Vec<u8>),
    #[prost(message, tag = "32")]
    BytesList(BytesList),
}

impl Value {
    /// The integer carried by a scalar integer or bool variant, None for the others (the oracle of
    /// `scalar_int` in the tests).
    #[cfg(test)]
    fn integer(&self) -> Option<i128> {
        Some(match *self {
            Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => v.into(),
            Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => v.into(),
            Value::Uint32Val(v) | Value::Fixed32Val(v) => v.into(),
            Value::Uint64Val(v) | Value::Fixed64Val(v) => v.into(),
            Value::BoolVal(v) => u8::from(v).into(),
            _ => return None,
        })
    }

    /// The variant's name as in the schema (`string_val`, ...), for error messages.
    fn kind(&self) -> String {
        let debug = format!("{self:?}");
        let camel = debug.split('(').next().unwrap_or_default();
        let mut out = String::new();
        for (k, c) in camel.chars().enumerate() {
            if c.is_ascii_uppercase() && k > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------------------
// Field-level protobuf walking.

/// `AttributeProto.string_val`.
const STRING_VAL: u32 = 29;
const NODE_ID: u32 = 1;
const NODE_NAME: u32 = 2;
const NODE_TYPE: u32 = 3;
const NODE_CTRL_DEPS: u32 = 4;
const NODE_DATA_DEPS: u32 = 5;
const NODE_DURATION: u32 = 7;
const NODE_ATTR: u32 = 10;
const META_VERSION: u32 = 1;
const META_ATTR: u32 = 2;

/// A field's payload.
#[derive(Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Len(&'a [u8]),
    Fixed32(u32),
}

impl Wire<'_> {
    fn name(&self) -> &'static str {
        match self {
            Wire::Varint(_) => "varint",
            Wire::Fixed64(_) => "64-bit",
            Wire::Len(_) => "length-delimited",
            Wire::Fixed32(_) => "32-bit",
        }
    }
}

/// Decode a varint at `*pos`, advancing it. O(1).
#[inline]
fn varint(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, &'static str> {
    if let Some(&b) = buf.get(*pos) {
        if b < 0x80 {
            *pos += 1;
            return Ok(b.into());
        }
    }
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let Some(&b) = buf.get(*pos) else { return Err("truncated varint") };
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift.min(63);
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes")
}

/// One field: its number, its payload and the raw bytes of the whole field (key included).
type Field<'a> = (u32, Wire<'a>, &'a [u8]);

/// Walks the fields of one message in order, checking the wire structure as it goes.
struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Fields { buf, pos: 0 }
    }

    #[inline]
    fn next_field(&mut self) -> std::result::Result<Option<Field<'a>>, String> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let start = self.pos;
        let key = varint(self.buf, &mut self.pos)?;
        let (field, wt) = (key >> 3, key & 7);
        if field == 0 || field > (1 << 29) - 1 {
            return Err(format!("bad protobuf: field number {field}"));
        }
        let wire = match wt {
            0 => Wire::Varint(varint(self.buf, &mut self.pos)?),
            1 => {
                let b = self.buf.get(self.pos..self.pos + 8).ok_or_else(|| format!("truncated field {field}"))?;
                self.pos += 8;
                Wire::Fixed64(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            5 => {
                let b = self.buf.get(self.pos..self.pos + 4).ok_or_else(|| format!("truncated field {field}"))?;
                self.pos += 4;
                Wire::Fixed32(u32::from_le_bytes(b.try_into().expect("4 bytes")))
            }
            2 => {
                let len = varint(self.buf, &mut self.pos)?;
                if len > (self.buf.len() - self.pos) as u64 {
                    return Err(format!("truncated field {field}: {len} bytes announced, {} left", self.buf.len() - self.pos));
                }
                let s = &self.buf[self.pos..self.pos + len as usize];
                self.pos += len as usize;
                Wire::Len(s)
            }
            _ => return Err(format!("bad protobuf: field {field} has wire type {wt}")),
        };
        Ok(Some((field as u32, wire, &self.buf[start..self.pos])))
    }

    /// Walk every field to the end, checking the wire structure only.
    fn check(mut self) -> std::result::Result<(), String> {
        while self.next_field()?.is_some() {}
        Ok(())
    }
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> std::result::Result<&'a str, String> {
    std::str::from_utf8(bytes).map_err(|_| format!("{what} is not valid UTF-8"))
}

/// Append a repeated uint64 field (packed or not) to `out`.
fn push_ids(out: &mut Vec<u64>, wire: Wire<'_>, what: &str) -> std::result::Result<(), String> {
    match wire {
        Wire::Varint(v) => out.push(v),
        Wire::Len(packed) => {
            let mut pos = 0;
            while pos < packed.len() {
                out.push(varint(packed, &mut pos).map_err(|e| format!("{what}: {e}"))?);
            }
        }
        w => return Err(format!("{what}: unexpected {} field", w.name())),
    }
    Ok(())
}

/// The typed attributes, in the order the writer emits them (Chakra's converters' order).
const TYPED: [&str; 9] = ["is_cpu_op", "num_ops", "tensor_size", "comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag", "pg_name"];
const PG_NAME: usize = 8;

/// The value field of an attribute: its number in the oneof and its payload.
type ValueField<'a> = Option<(u32, Wire<'a>)>;

/// An attribute message walked once: which typed attribute it is (None for the others) and its value
/// field (the last of the oneof, as protobuf decoding has it).
fn typed_attr(msg: &[u8]) -> std::result::Result<(Option<usize>, ValueField<'_>), String> {
    let mut f = Fields::new(msg);
    let mut name: &[u8] = &[];
    let mut value = None;
    while let Some((field, wire, _)) = f.next_field()? {
        match (field, wire) {
            (1, Wire::Len(s)) => name = s,
            (1, w) => return Err(format!("attribute name: unexpected {} field", w.name())),
            (3..=32, w) => value = Some((field, w)),
            _ => {}
        }
    }
    Ok((TYPED.iter().position(|t| t.as_bytes() == name), value))
}

/// The integer of a scalar integer or bool `AttributeProto.value` field, decoded as protobuf does (int32
/// and uint32 keep the low 32 bits, sint* are zigzag-encoded); None for every other variant or wire type.
fn scalar_int(field: u32, wire: Wire<'_>) -> Option<i128> {
    Some(match (field, wire) {
        (7, Wire::Varint(v)) => (v as i32).into(),
        (9, Wire::Varint(v)) => (v as i64).into(),
        (11, Wire::Varint(v)) => (v as u32).into(),
        (13, Wire::Varint(v)) => v.into(),
        (15, Wire::Varint(v)) => {
            let n = v as u32;
            (((n >> 1) as i32) ^ -((n & 1) as i32)).into()
        }
        (17, Wire::Varint(v)) => (((v >> 1) as i64) ^ -((v & 1) as i64)).into(),
        (19, Wire::Fixed32(v)) => v.into(),
        (21, Wire::Fixed64(v)) => v.into(),
        (23, Wire::Fixed32(v)) => (v as i32).into(),
        (25, Wire::Fixed64(v)) => (v as i64).into(),
        (27, Wire::Varint(v)) => i128::from(v != 0),
        _ => return None,
    })
}

/// The typed attributes of the node being decoded (`None` = absent).
#[derive(Default)]
struct Typed<'a> {
    int: [Option<i128>; PG_NAME],
    pg_name: Option<&'a str>,
}

impl<'a> Typed<'a> {
    /// Record typed attribute `k` whose whole message is `msg` and value field `value`. O(1) on success;
    /// on failure the message is decoded with prost to name what it holds instead.
    fn set(&mut self, k: usize, msg: &'a [u8], value: ValueField<'a>) -> std::result::Result<(), String> {
        let name = TYPED[k];
        let duplicate = if k == PG_NAME { self.pg_name.is_some() } else { self.int[k].is_some() };
        if duplicate {
            return Err(format!("duplicate attribute {name}"));
        }
        let wrong = |expected: &str| {
            let found = match AttributeProto::decode(msg) {
                Ok(a) => a.value.map_or_else(|| "no value".into(), |v| v.kind()),
                Err(e) => format!("bad protobuf ({e})"),
            };
            format!("attribute {name}: expected {expected}, found {found}")
        };
        if k == PG_NAME {
            let Some((STRING_VAL, Wire::Len(s))) = value else { return Err(wrong("a string_val")) };
            self.pg_name = Some(utf8(s, "attribute pg_name")?);
            return Ok(());
        }
        let Some(v) = value.and_then(|(field, wire)| scalar_int(field, wire)) else { return Err(wrong("an integer")) };
        let (lo, hi): (i128, i128) = match name {
            "is_cpu_op" => (0, 1),
            "comm_type" => (0, i32::MAX.into()),
            "comm_src" | "comm_dst" | "comm_tag" => (i64::MIN.into(), i64::MAX.into()),
            _ => (0, u64::MAX.into()),
        };
        if v < lo || v > hi {
            return Err(format!("attribute {name}: value {v} out of range {lo}..={hi}"));
        }
        self.int[k] = Some(v);
        Ok(())
    }
}

/// Strings interned into `names`, borrowed from the decoded buffer while reading.
struct Interner<'a> {
    index: HashMap<&'a str, u32>,
}

impl<'a> Interner<'a> {
    fn get(&mut self, names: &mut Vec<String>, s: &'a str) -> u32 {
        *self.index.entry(s).or_insert_with(|| {
            names.push(s.to_owned());
            (names.len() - 1) as u32
        })
    }
}

// ---------------------------------------------------------------------------------------------------------
// Reader.

/// Decode one rank's trace file (`bytes` as read from disk, gzip-compressed or not; `file` names it in
/// errors). O(file size) time; memory is the columns plus, for gzip input, the decompressed bytes.
///
/// Errors are `Error::Spec` whose field is `"{file}: record {k}"` (record 0 is the GlobalMetadata) or, once
/// a node's id is known, `"{file}: node {id}"`: a truncated varint or record, bad protobuf, a missing
/// GlobalMetadata, a duplicate node id, a typed attribute that is not an integer in range (or, for
/// `pg_name`, a string).
pub fn read_trace(bytes: &[u8], file: &str) -> Result<Trace> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::with_capacity(bytes.len() * 4);
        flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut plain).map_err(|e| Error::spec(file, format!("bad gzip stream: {e}")))?;
        return decode(&plain, file);
    }
    decode(bytes, file)
}

fn decode(buf: &[u8], file: &str) -> Result<Trace> {
    let at = |k: usize| format!("{file}: record {k}");
    let mut t = Trace::default();
    let mut pos = 0usize;
    let mut records = 0usize;
    let mut interner = Interner { index: HashMap::new() };
    t.data_dep_start.push(0);
    t.ctrl_dep_start.push(0);
    t.extra_start.push(0);
    if buf.is_empty() {
        return Err(Error::spec(at(0), "missing GlobalMetadata: the file is empty"));
    }
    while pos < buf.len() {
        let k = records;
        let len = varint(buf, &mut pos).map_err(|e| Error::spec(at(k), format!("record length: {e}")))?;
        let left = buf.len() - pos;
        if len > left as u64 {
            return Err(Error::spec(at(k), format!("truncated record: {len} bytes announced, {left} left")));
        }
        let msg = &buf[pos..pos + len as usize];
        pos += len as usize;
        records += 1;
        if k == 0 {
            read_metadata(msg, &mut t).map_err(|r| Error::spec(at(k), format!("missing or bad GlobalMetadata: {r}")))?;
            continue;
        }
        let mut id = None;
        read_node(msg, &mut t, &mut interner, &mut id).map_err(|r| match id {
            Some(id) => Error::spec(format!("{file}: node {id}"), r),
            None => Error::spec(at(k), r),
        })?;
    }
    if let Some((a, b)) = first_duplicate(&t.id) {
        let id = t.id[a];
        return Err(Error::spec(format!("{file}: node {id}"), format!("duplicate node id (records {} and {})", a + 1, b + 1)));
    }
    Ok(t)
}

/// The positions of the first two equal ids, if any: O(n) when ids increase (the usual case), else
/// O(n log n).
fn first_duplicate(ids: &[u64]) -> Option<(usize, usize)> {
    if ids.windows(2).all(|w| w[0] < w[1]) {
        return None;
    }
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let dup = sorted.windows(2).find(|w| w[0] == w[1])?[0];
    let mut at = ids.iter().enumerate().filter(|&(_, &x)| x == dup).map(|(i, _)| i);
    Some((at.next()?, at.next()?))
}

/// Decode the GlobalMetadata record into `t.version` and `t.meta_extra`.
fn read_metadata(msg: &[u8], t: &mut Trace) -> std::result::Result<(), String> {
    let mut f = Fields::new(msg);
    while let Some((field, wire, raw)) = f.next_field()? {
        match (field, wire) {
            (META_VERSION, Wire::Len(s)) => t.version = utf8(s, "GlobalMetadata.version")?.to_owned(),
            (META_ATTR, Wire::Len(s)) => {
                Fields::new(s).check().map_err(|e| format!("GlobalMetadata.attr: {e}"))?;
                t.meta_extra.extend_from_slice(raw);
            }
            (_, w) => return Err(format!("the first record has a {} field {field}, which GlobalMetadata does not define (a Node?)", w.name())),
        }
    }
    Ok(())
}

/// Decode one Node record, pushing one row into every column of `t`; `id` is set as soon as it is known.
fn read_node<'a>(msg: &'a [u8], t: &mut Trace, interner: &mut Interner<'a>, id: &mut Option<u64>) -> std::result::Result<(), String> {
    let mut f = Fields::new(msg);
    let (mut name, mut ty, mut duration) = ("", 0u64, 0u64);
    let mut typed = Typed::default();
    while let Some((field, wire, raw)) = f.next_field()? {
        let unexpected = |what: &str| format!("{what}: unexpected {} field", wire.name());
        match field {
            NODE_ID => match wire {
                Wire::Varint(v) => *id = Some(v),
                _ => return Err(unexpected("id")),
            },
            NODE_NAME => match wire {
                Wire::Len(s) => name = utf8(s, "name")?,
                _ => return Err(unexpected("name")),
            },
            NODE_TYPE => match wire {
                Wire::Varint(v) => ty = v,
                _ => return Err(unexpected("type")),
            },
            NODE_CTRL_DEPS => push_ids(&mut t.ctrl_deps, wire, "ctrl_deps")?,
            NODE_DATA_DEPS => push_ids(&mut t.data_deps, wire, "data_deps")?,
            NODE_DURATION => match wire {
                Wire::Varint(v) => duration = v,
                _ => return Err(unexpected("duration_micros")),
            },
            NODE_ATTR => {
                let Wire::Len(a) = wire else { return Err(unexpected("attr")) };
                match typed_attr(a).map_err(|e| format!("attr: {e}"))? {
                    (Some(k), value) => typed.set(k, a, value)?,
                    (None, _) => t.extra.extend_from_slice(raw),
                }
            }
            _ => t.extra.extend_from_slice(raw),
        }
    }
    let node_type = u8::try_from(ty).map_err(|_| format!("type {ty} is not a NodeType"))?;
    let name = interner.get(&mut t.names, name);
    let pg_name = typed.pg_name.map_or(NO_NAME, |s| interner.get(&mut t.names, s));
    let csr = |v: &Vec<u64>, what: &str| u32::try_from(v.len()).map_err(|_| format!("more than 2^32 {what} in the file"));
    let (data_end, ctrl_end) = (csr(&t.data_deps, "data_deps")?, csr(&t.ctrl_deps, "ctrl_deps")?);
    let [is_cpu_op, num_ops, tensor_size, comm_type, comm_size, comm_src, comm_dst, comm_tag] = typed.int;
    t.id.push(id.unwrap_or(0));
    t.name.push(name);
    t.node_type.push(node_type);
    t.duration_micros.push(duration);
    t.is_cpu_op.push(is_cpu_op.map_or(NO_BOOL, |v| v as u8));
    t.num_ops.push(num_ops.map_or(0, |v| v as u64));
    t.tensor_size.push(tensor_size.map_or(0, |v| v as u64));
    t.comm_type.push(comm_type.map_or(ABSENT as i32, |v| v as i32));
    t.comm_size.push(comm_size.map_or(0, |v| v as u64));
    t.comm_src.push(comm_src.map_or(ABSENT, |v| v as i64));
    t.comm_dst.push(comm_dst.map_or(ABSENT, |v| v as i64));
    t.comm_tag.push(comm_tag.map_or(ABSENT, |v| v as i64));
    t.pg_name.push(pg_name);
    t.data_dep_start.push(data_end);
    t.ctrl_dep_start.push(ctrl_end);
    t.extra_start.push(t.extra.len() as u64);
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Writer.

fn put_len(buf: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    encode_key(field, WireType::LengthDelimited, buf);
    encode_varint(bytes.len() as u64, buf);
    buf.extend_from_slice(bytes);
}

fn put_varint(buf: &mut Vec<u8>, field: u32, v: u64) {
    encode_key(field, WireType::Varint, buf);
    encode_varint(v, buf);
}

fn put_packed(buf: &mut Vec<u8>, field: u32, ids: &[u64]) {
    if ids.is_empty() {
        return;
    }
    encode_key(field, WireType::LengthDelimited, buf);
    encode_varint(ids.iter().map(|&v| encoded_len_varint(v) as u64).sum(), buf);
    for &v in ids {
        encode_varint(v, buf);
    }
}

/// Encoded length of a length-delimited field of `n` bytes.
fn len_field_len(field: u32, n: usize) -> usize {
    encoded_len_varint(u64::from(field << 3)) + encoded_len_varint(n as u64) + n
}

/// Append `attr { name: name, <variant>: v }` for a varint-encoded variant (int32/int64/uint64/bool_val).
fn put_attr_int(buf: &mut Vec<u8>, name: &str, variant: u32, v: u64) {
    let inner = len_field_len(1, name.len()) + encoded_len_varint(u64::from(variant << 3)) + encoded_len_varint(v);
    encode_key(NODE_ATTR, WireType::LengthDelimited, buf);
    encode_varint(inner as u64, buf);
    put_len(buf, 1, name.as_bytes());
    put_varint(buf, variant, v);
}

/// Append `attr { name: name, string_val: s }`.
fn put_attr_str(buf: &mut Vec<u8>, name: &str, s: &str) {
    let inner = len_field_len(1, name.len()) + len_field_len(STRING_VAL, s.len());
    encode_key(NODE_ATTR, WireType::LengthDelimited, buf);
    encode_varint(inner as u64, buf);
    put_len(buf, 1, name.as_bytes());
    put_len(buf, STRING_VAL, s.as_bytes());
}

/// `AttributeProto.value` field numbers the writer uses.
const INT32_VAL: u32 = 7;
const INT64_VAL: u32 = 9;
const UINT64_VAL: u32 = 13;
const BOOL_VAL: u32 = 27;

/// Encode a trace (uncompressed), the inverse of [`read_trace`]: `read_trace(&write_trace(&t))` equals `t`
/// for any trace `read_trace` returned, and writing that again gives the same bytes. O(size of the output).
///
/// Node fields are written in field-number order (id, name, type, ctrl_deps and data_deps packed,
/// duration_micros; zero values omitted as proto3 does), then the typed attributes in the variants
/// Chakra's converters and ASTRA-sim's examples use — is_cpu_op bool_val, num_ops int64_val, tensor_size
/// uint64_val, comm_type and comm_size int64_val, comm_src/comm_dst/comm_tag int32_val (int64_val beyond
/// 32 bits), pg_name string_val — then the node's raw extra fields. Expects [`Trace::check`] to hold.
pub fn write_trace(t: &Trace) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * t.id.len() + t.extra.len() + t.meta_extra.len() + 64);
    let mut body = Vec::with_capacity(256);
    if !t.version.is_empty() {
        put_len(&mut body, META_VERSION, t.version.as_bytes());
    }
    body.extend_from_slice(&t.meta_extra);
    encode_varint(body.len() as u64, &mut out);
    out.extend_from_slice(&body);
    for i in 0..t.id.len() {
        body.clear();
        if t.id[i] != 0 {
            put_varint(&mut body, NODE_ID, t.id[i]);
        }
        let name = &t.names[t.name[i] as usize];
        if !name.is_empty() {
            put_len(&mut body, NODE_NAME, name.as_bytes());
        }
        if t.node_type[i] != 0 {
            put_varint(&mut body, NODE_TYPE, t.node_type[i].into());
        }
        put_packed(&mut body, NODE_CTRL_DEPS, &t.ctrl_deps[t.ctrl_dep_start[i] as usize..t.ctrl_dep_start[i + 1] as usize]);
        put_packed(&mut body, NODE_DATA_DEPS, &t.data_deps[t.data_dep_start[i] as usize..t.data_dep_start[i + 1] as usize]);
        if t.duration_micros[i] != 0 {
            put_varint(&mut body, NODE_DURATION, t.duration_micros[i]);
        }
        if t.is_cpu_op[i] != NO_BOOL {
            put_attr_int(&mut body, "is_cpu_op", BOOL_VAL, t.is_cpu_op[i].into());
        }
        let unsigned = |body: &mut Vec<u8>, name: &str, v: u64, small: u32| {
            if v != 0 {
                put_attr_int(body, name, if v <= i64::MAX as u64 { small } else { UINT64_VAL }, v);
            }
        };
        unsigned(&mut body, "num_ops", t.num_ops[i], INT64_VAL);
        unsigned(&mut body, "tensor_size", t.tensor_size[i], UINT64_VAL);
        if t.comm_type[i] != ABSENT as i32 {
            put_attr_int(&mut body, "comm_type", INT64_VAL, t.comm_type[i] as u64);
        }
        unsigned(&mut body, "comm_size", t.comm_size[i], INT64_VAL);
        for (name, v) in [("comm_src", t.comm_src[i]), ("comm_dst", t.comm_dst[i]), ("comm_tag", t.comm_tag[i])] {
            if v != ABSENT {
                put_attr_int(&mut body, name, if i32::try_from(v).is_ok() { INT32_VAL } else { INT64_VAL }, v as u64);
            }
        }
        if t.pg_name[i] != NO_NAME {
            put_attr_str(&mut body, "pg_name", &t.names[t.pg_name[i] as usize]);
        }
        body.extend_from_slice(&t.extra[t.extra_start[i] as usize..t.extra_start[i + 1] as usize]);
        encode_varint(body.len() as u64, &mut out);
        out.extend_from_slice(&body);
    }
    out
}

/// Gzip-compress `bytes` (a written trace) at the default level; [`read_trace`] reads the result. O(len).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 4 + 64), flate2::Compression::default());
    gz.write_all(bytes).expect("writing to a Vec cannot fail");
    gz.finish().expect("writing to a Vec cannot fail")
}

impl Trace {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// Verify the struct invariants (see [`Trace`]), so that [`write_trace`] cannot panic and its output
    /// reads back; errors are `Error::Spec` naming the column (and row). O(n + deps + extra bytes).
    pub fn check(&self) -> Result<()> {
        let n = self.id.len();
        let lens = [
            ("name", self.name.len()),
            ("node_type", self.node_type.len()),
            ("duration_micros", self.duration_micros.len()),
            ("comm_type", self.comm_type.len()),
            ("comm_size", self.comm_size.len()),
            ("comm_src", self.comm_src.len()),
            ("comm_dst", self.comm_dst.len()),
            ("comm_tag", self.comm_tag.len()),
            ("pg_name", self.pg_name.len()),
            ("num_ops", self.num_ops.len()),
            ("tensor_size", self.tensor_size.len()),
            ("is_cpu_op", self.is_cpu_op.len()),
        ];
        for (col, len) in lens {
            if len != n {
                return Err(Error::spec(col, format!("{len} entries for {n} nodes")));
            }
        }
        let starts = [
            ("data_dep_start", self.data_dep_start.iter().map(|&s| u64::from(s)).collect::<Vec<u64>>(), self.data_deps.len()),
            ("ctrl_dep_start", self.ctrl_dep_start.iter().map(|&s| u64::from(s)).collect(), self.ctrl_deps.len()),
            ("extra_start", self.extra_start.clone(), self.extra.len()),
        ];
        for (col, s, total) in &starts {
            if s.len() != n + 1 || s[0] != 0 || s[n] != *total as u64 || s.windows(2).any(|w| w[0] > w[1]) {
                return Err(Error::spec(*col, format!("must be {} non-decreasing offsets from 0 to {total}", n + 1)));
            }
        }
        let names = self.names.len();
        if let Some(i) = self.name.iter().position(|&x| x as usize >= names) {
            return Err(Error::spec(format!("name[{i}]"), format!("{} is not an index into {names} names", self.name[i])));
        }
        if let Some(i) = self.pg_name.iter().position(|&x| x != NO_NAME && x as usize >= names) {
            return Err(Error::spec(format!("pg_name[{i}]"), format!("{} is not an index into {names} names (nor {NO_NAME})", self.pg_name[i])));
        }
        if let Some(i) = self.is_cpu_op.iter().position(|&x| x > NO_BOOL) {
            return Err(Error::spec(format!("is_cpu_op[{i}]"), format!("{} is not 0, 1 or {NO_BOOL}", self.is_cpu_op[i])));
        }
        if let Some(i) = self.comm_type.iter().position(|&x| x < -1) {
            return Err(Error::spec(format!("comm_type[{i}]"), format!("{} is negative (−1 = absent)", self.comm_type[i])));
        }
        if let Some((a, b)) = first_duplicate(&self.id) {
            return Err(Error::spec(format!("id[{b}]"), format!("duplicate node id {} (also id[{a}])", self.id[b])));
        }
        let mut meta = Fields::new(&self.meta_extra);
        while let Some((field, wire, _)) = meta.next_field().map_err(|e| Error::spec("meta_extra", e))? {
            if field != META_ATTR || !matches!(wire, Wire::Len(_)) {
                return Err(Error::spec("meta_extra", format!("field {field} is not a GlobalMetadata attr")));
            }
        }
        for i in 0..n {
            let raw = &self.extra[self.extra_start[i] as usize..self.extra_start[i + 1] as usize];
            let bad = |r: String| Error::spec(format!("extra[{i}]"), r);
            let mut f = Fields::new(raw);
            while let Some((field, wire, _)) = f.next_field().map_err(bad)? {
                match (field, wire) {
                    (NODE_ID | NODE_NAME | NODE_TYPE | NODE_CTRL_DEPS | NODE_DATA_DEPS | NODE_DURATION, _) => {
                        return Err(bad(format!("field {field} belongs in a column")))
                    }
                    (NODE_ATTR, Wire::Len(a)) => {
                        if let (Some(k), _) = typed_attr(a).map_err(bad)? {
                            return Err(bad(format!("attribute {} belongs in a column", TYPED[k])));
                        }
                    }
                    (NODE_ATTR, w) => return Err(bad(format!("attr: unexpected {} field", w.name()))),
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand decoding of integer attributes agrees with prost's on every scalar variant.
    #[test]
    fn scalar_int_matches_prost() {
        let values: [i64; 9] = [0, 1, -1, 127, -128, i32::MAX as i64, i32::MIN as i64, i64::MAX, i64::MIN];
        for &x in &values {
            let variants = [
                Value::Int32Val(x as i32),
                Value::Int64Val(x),
                Value::Uint32Val(x as u32),
                Value::Uint64Val(x as u64),
                Value::Sint32Val(x as i32),
                Value::Sint64Val(x),
                Value::Fixed32Val(x as u32),
                Value::Fixed64Val(x as u64),
                Value::Sfixed32Val(x as i32),
                Value::Sfixed64Val(x),
                Value::BoolVal(x != 0),
                Value::StringVal(x.to_string()),
                Value::Int64List(Int64List { values: vec![x] }),
            ];
            for v in variants {
                let msg = AttributeProto { name: "comm_size".into(), doc_string: "d".into(), value: Some(v.clone()) }.encode_to_vec();
                let (k, field) = typed_attr(&msg).unwrap();
                assert_eq!(k, Some(4));
                let decoded = AttributeProto::decode(msg.as_slice()).unwrap().value.unwrap();
                assert_eq!(field.and_then(|(f, w)| scalar_int(f, w)), decoded.integer(), "{v:?}");
            }
        }
        assert_eq!(Value::StringList(StringList::default()).kind(), "string_list");
    }
}
