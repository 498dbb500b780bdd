//! fabricsim._core: the private native module; thin functions over the Rust engines, numpy columns in and out, GIL released while simulating.

mod error;
mod fast;

use fabricsim_core::compile::{compile, Compiled};
use fabricsim_core::control::{Control, Halt, Observer, Progress};
use fabricsim_core::record::RunRecord;
use fabricsim_core::record_schema::{self as schema, Source, Table, Values, FIELDS};
use fabricsim_core::spec::RunSpec;
use fabricsim_core::workload::collectives::{expand, Base, CollectiveSpec};
use fabricsim_core::workload::Workload;
use numpy::{Element, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Run `f` without the GIL, converting core errors and panics to the package's Python exceptions.
fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> fabricsim_core::Result<T> + Send) -> PyResult<T> {
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(error::to_py(py, e)),
        Err(payload) => Err(error::panic_to_py(py, payload)),
    }
}

fn spec_err(py: Python<'_>, field: impl Into<String>, reason: impl Into<String>) -> PyErr {
    error::to_py(py, fabricsim_core::Error::spec(field, reason))
}

/// Which engine: the discrete-event engine ("packet"), max-min fluid flows ("flow"), or the packet engine with
/// steady-state jumps ("hybrid").
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    Packet,
    Flow,
    Hybrid,
}

impl Engine {
    /// Run a compiled scenario on this engine.
    pub(crate) fn run(self, c: Compiled, ctl: Control) -> fabricsim_core::Result<RunRecord> {
        match self {
            Engine::Packet => fabricsim_des::run_compiled_with(c, ctl),
            Engine::Flow => fabricsim_flow::run_compiled_with(c, ctl),
            Engine::Hybrid => fabricsim_des::run_compiled_hybrid_with(c, ctl),
        }
    }
}

fn engine_of(py: Python<'_>, fidelity: &str) -> PyResult<Engine> {
    match fidelity {
        "packet" => Ok(Engine::Packet),
        "flow" => Ok(Engine::Flow),
        "hybrid" => Ok(Engine::Hybrid),
        other => Err(spec_err(py, "fidelity", format!("must be 'packet', 'flow' or 'hybrid', not '{other}'"))),
    }
}

/// Column `key` of `cols` as a Vec (empty if absent); the field name in errors is `label`.
fn column<T: Element + Copy>(py: Python<'_>, cols: &Bound<'_, PyDict>, key: &str, label: &str) -> PyResult<Vec<T>> {
    let Some(obj) = cols.get_item(key)? else { return Ok(Vec::new()) };
    let arr: PyReadonlyArray1<T> = obj.extract().map_err(|_| {
        let got = obj.getattr("dtype").map(|d| d.to_string()).unwrap_or_else(|_| obj.get_type().to_string());
        spec_err(py, label, format!("expected a 1-D {} array, got {got}", std::any::type_name::<T>()))
    })?;
    Ok(match arr.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => arr.as_array().iter().copied().collect(),
    })
}

/// The workload columns handed over by `fabricsim.Workload` (numpy arrays; see `_core.pyi`).
fn workload(py: Python<'_>, cols: Option<&Bound<'_, PyDict>>) -> PyResult<Workload> {
    let Some(c) = cols else { return Ok(Workload::default()) };
    let hosts: Vec<u32> = column(py, c, "streams_host", "streams.host")?;
    let counts: Vec<u32> = column(py, c, "streams_count", "streams.streams")?;
    if hosts.len() != counts.len() {
        return Err(spec_err(py, "streams", "host and count columns differ in length"));
    }
    let names: Vec<String> = match c.get_item("names")? {
        Some(v) => v.extract().map_err(|_| spec_err(py, "workload.names", "expected a list of str"))?,
        None => Vec::new(),
    };
    let n_barriers: u32 = match c.get_item("n_barriers")? {
        Some(v) => v.extract().map_err(|_| spec_err(py, "workload.n_barriers", "expected a count"))?,
        None => 0,
    };
    Ok(Workload {
        src: column(py, c, "src", "messages.src")?,
        src_nic: column(py, c, "src_nic", "messages.src_nic")?,
        dst: column(py, c, "dst", "messages.dst")?,
        dst_nic: column(py, c, "dst_nic", "messages.dst_nic")?,
        size: column(py, c, "size", "messages.size")?,
        packet: column(py, c, "packet", "messages.packet_size")?,
        header: column(py, c, "header", "messages.header")?,
        start_ps: column(py, c, "start_ps", "messages.start")?,
        delay_ps: column(py, c, "delay_ps", "messages.delay")?,
        path: column(py, c, "path", "messages.path")?,
        n_barriers,
        compute_host: column(py, c, "compute_host", "compute.host")?,
        compute_ps: column(py, c, "compute_ps", "compute.duration")?,
        streams: hosts.into_iter().zip(counts).collect(),
        pred_start: column(py, c, "pred_start", "workload.pred_start")?,
        pred: column(py, c, "pred", "workload.pred")?,
        path_start: column(py, c, "path_start", "workload.path_start")?,
        path_nodes: column(py, c, "path_nodes", "workload.path_nodes")?,
        names,
        msg_name: column(py, c, "msg_name", "workload.msg_name")?,
        barrier_name: column(py, c, "barrier_name", "workload.barrier_name")?,
        compute_name: column(py, c, "compute_name", "workload.compute_name")?,
    })
}

/// Parse the header and compile it with the workload columns (the one validator).
/// The header and workload compiled for `engine`: what the flow model cannot represent is refused first (the
/// fidelity is the user's first choice to change), then everything else is checked by `compile`.
fn compiled(header_json: &str, wl: Workload, engine: Option<Engine>) -> fabricsim_core::Result<Compiled> {
    let spec: RunSpec = serde_json::from_str(header_json).map_err(|e| fabricsim_core::Error::spec("spec", e.to_string()))?;
    if engine == Some(Engine::Flow) {
        fabricsim_flow::check_supported(&spec)?;
    }
    compile(spec, wl)
}

const MISSING: u64 = schema::MISSING;

fn arr<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_vec(py, v)
}

/// A schema column as a numpy array.
fn values_to_py<'py>(py: Python<'py>, v: Values<'_>) -> Bound<'py, PyAny> {
    match v {
        Values::U8(v) => arr(py, v.into_owned()).into_any(),
        Values::U32(v) => arr(py, v.into_owned()).into_any(),
        Values::U64(v) => arr(py, v.into_owned()).into_any(),
        Values::Bool(v) => arr(py, v.into_owned()).into_any(),
        Values::F64(v) => arr(py, v).into_any(),
    }
}

/// The record as (scalars, columns): scalars is a dict of plain values, columns a dict of numpy arrays, one
/// per stored field of the record's schema the run has (`record_schema::FIELDS`; missing times are 2^64 − 1).
fn record_to_py<'py>(py: Python<'py>, r: RunRecord) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let c = PyDict::new(py);
    for f in FIELDS {
        if let Source::Stored(get) = f.source {
            if let Some(v) = get(&r) {
                c.set_item(f.name, values_to_py(py, v))?;
            }
        }
    }
    let s = PyDict::new(py);
    s.set_item("fidelity", r.fidelity)?;
    s.set_item("seed", r.seed)?;
    s.set_item("end_ps", r.end_ps)?;
    s.set_item("completion_ps", r.completion_ps)?;
    s.set_item("events", r.events)?;
    let p = PyDict::new(py);
    p.set_item("tx", r.packets.tx)?;
    p.set_item("rx", r.packets.rx)?;
    p.set_item("dropped", r.packets.dropped)?;
    p.set_item("in_flight", r.packets.in_flight)?;
    s.set_item("packets", p)?;
    s.set_item("hops", PyList::new(py, r.hops)?)?;
    s.set_item("wall_s", r.wall_s)?;
    s.set_item("halted", r.halted.map(Halt::as_str))?;
    s.set_item("reached_stop", r.reached_stop)?;
    s.set_item("bin_ps", r.bin_ps)?;
    s.set_item("node_names", PyList::new(py, r.node_names)?)?;
    s.set_item("flow_names", PyList::new(py, r.flow_names)?)?;
    s.set_item("queue_names", PyList::new(py, r.queues.name)?)?;
    s.set_item("deadlock", r.deadlock)?;
    if let Some(ff) = r.fast_forward {
        let d = PyDict::new(py);
        d.set_item("window_ps", ff.window_ps)?;
        d.set_item("jumps", ff.jumps)?;
        d.set_item("skipped_ps", ff.skipped_ps)?;
        d.set_item("skipped_packets", ff.skipped_packets)?;
        d.set_item("note", ff.note)?;
        s.set_item("fast_forward", d)?;
    }
    if let Some(x) = r.roce {
        s.set_item("cnps", x.cnps)?;
    }
    if let Some(x) = r.retransmit {
        let d = PyDict::new(py);
        d.set_item("lost_packets", x.lost_packets)?;
        d.set_item("timeouts", x.timeouts)?;
        d.set_item("packets", x.packets)?;
        d.set_item("bytes", x.bytes)?;
        d.set_item("abandoned", x.abandoned)?;
        s.set_item("retransmit", d)?;
    }
    if let Some(u) = &r.uec {
        let x = u.stats;
        let d = PyDict::new(py);
        for (k, v) in [
            ("data_packets", x.data_packets),
            ("trims", x.trims),
            ("trimmed_received", x.trimmed_received),
            ("nacks", x.nacks),
            ("acks", x.acks),
            ("ecn_echoes", x.ecn_echoes),
            ("timeouts", x.timeouts),
            ("retransmits", x.retransmits),
            ("duplicates", x.duplicates),
            ("out_of_order", x.out_of_order),
            ("pulls", x.pulls),
            ("timer_acks", x.timer_acks),
        ] {
            d.set_item(k, v)?;
        }
        s.set_item("uec", d)?;
    }
    if !r.net_events.is_empty() {
        let rows = PyList::empty(py);
        for e in r.net_events {
            let d = PyDict::new(py);
            d.set_item("t_ps", e.t_ps)?;
            d.set_item("kind", &e.kind)?;
            d.set_item("links", PyList::new(py, e.links)?)?;
            d.set_item("ber", e.ber)?;
            if e.kind == "link_rate" {
                d.set_item("rate_bps", e.rate_bps)?; // only here: other kinds' rows stay as they were
            }
            rows.append(d)?;
        }
        s.set_item("net_events", rows)?;
    }
    Ok((s, c))
}

/// Watches a run from inside the engine (which runs without the GIL): about every 50 ms of wall time it
/// takes the GIL, runs Python's pending signal handlers (Ctrl-C raises KeyboardInterrupt there) and calls the
/// optional progress callable. An exception from either stops the run; it is kept in `raised`.
pub(crate) struct PyObserver {
    pub(crate) progress: Option<Py<PyAny>>,
    pub(crate) raised: Arc<Mutex<Option<PyErr>>>,
}

impl Observer for PyObserver {
    fn poll(&mut self, p: &Progress) -> bool {
        Python::attach(|py| {
            let polled = py.check_signals().and_then(|_| match &self.progress {
                Some(cb) => {
                    let args = (p.now_ps, p.stop_ps, p.events, p.msgs_done, p.msgs_total, p.wall_s);
                    // A callable with a true `progress_bytes` attribute also takes the messages' bytes as keywords.
                    let bytes = cb.getattr(py, "progress_bytes").and_then(|a| a.is_truthy(py)).unwrap_or(false);
                    if bytes {
                        let kw = pyo3::types::PyDict::new(py);
                        kw.set_item("bytes_done", p.bytes_done)
                            .and_then(|_| kw.set_item("bytes_total", p.bytes_total))
                            .and_then(|_| cb.call(py, args, Some(&kw)).map(drop))
                    } else {
                        cb.call1(py, args).map(drop)
                    }
                }
                None => Ok(()),
            });
            match polled {
                Ok(()) => false,
                Err(e) => {
                    *self.raised.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    true
                }
            }
        })
    }
}

/// Simulate a scenario: `header_json` is the wire RunSpec header (network, routing, sources, TCP,
/// collectives, measurement; messages/barriers rows optional), `columns` the workload as numpy arrays.
/// `max_events` and `max_wall_s` stop the run early; `progress(now_ps, stop_ps, events, msgs_done,
/// msgs_total, wall_s)` is called about every 50 ms (with keywords `bytes_done` and `bytes_total`, the messages'
/// payload delivered and in all, when the callable has a true `progress_bytes` attribute). Ctrl-C stops the run: the record so far comes back with
/// `halted = "interrupted"` (as do the limits, with "max_events" / "max_wall"); any other exception raised by
/// a signal handler or `progress` propagates. Returns (scalars dict, columns dict of numpy arrays).
#[pyfunction]
#[pyo3(signature = (header_json, columns = None, fidelity = "packet", max_events = None, max_wall_s = None, progress = None))]
fn run<'py>(
    py: Python<'py>,
    header_json: &str,
    columns: Option<&Bound<'py, PyDict>>,
    fidelity: &str,
    max_events: Option<u64>,
    max_wall_s: Option<f64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let engine = engine_of(py, fidelity)?;
    let max_wall = match max_wall_s {
        Some(w) if !(w.is_finite() && w > 0.0) => return Err(spec_err(py, "max_wall_s", format!("must be > 0 seconds, not {w}"))),
        Some(w) => Some(Duration::from_secs_f64(w)),
        None => None,
    };
    if max_events == Some(0) {
        return Err(spec_err(py, "max_events", "must be > 0"));
    }
    let wl = workload(py, columns)?;
    let header = header_json.to_owned();
    let raised = Arc::new(Mutex::new(None));
    let observer = PyObserver { progress, raised: Arc::clone(&raised) };
    let ctl = Control::new(max_events, max_wall, Some(Box::new(observer)));
    let record = guarded(py, move || engine.run(compiled(&header, wl, Some(engine))?, ctl))?;
    let stopped_by = raised.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(e) = stopped_by {
        // A Ctrl-C that stopped the run comes back as the partial record; one that arrived as the run ended
        // (or any other exception) is raised.
        if record.halted != Some(Halt::Interrupted) || !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
            return Err(e);
        }
    }
    record_to_py(py, record)
}

/// Validate a scenario (fields, workload, topology, reachability, paths, what the fidelity can model)
/// without simulating. Returns the number of messages after collectives are expanded.
#[pyfunction]
#[pyo3(signature = (header_json, columns = None, fidelity = "packet"))]
fn validate<'py>(py: Python<'py>, header_json: &str, columns: Option<&Bound<'py, PyDict>>, fidelity: &str) -> PyResult<usize> {
    let engine = engine_of(py, fidelity)?;
    let wl = workload(py, columns)?;
    let header = header_json.to_owned();
    guarded(py, move || Ok(compiled(&header, wl, Some(engine))?.wl.n_msgs()))
}

/// A memory size as `--memory-limit` and FABRICSIM_MEMORY_LIMIT take it ("8GiB", "500MB", bytes): its bytes,
/// or SpecError(field, why) naming `field`.
#[pyfunction]
#[pyo3(signature = (text, field = "--memory-limit"))]
fn parse_memory_limit(py: Python<'_>, text: &str, field: &str) -> PyResult<u64> {
    fabricsim_core::budget::parse_limit(text).map_err(|why| spec_err(py, field, why))
}

/// The memory budget in force (`limit` bytes if given, else FABRICSIM_MEMORY_LIMIT, else the available memory,
/// else 8 GiB): (bytes, how it was set: "given", "env", "available" or "fallback").
#[pyfunction]
#[pyo3(signature = (limit = None))]
fn memory_budget(py: Python<'_>, limit: Option<u64>) -> PyResult<(u64, &'static str)> {
    use fabricsim_core::budget::{self, Source};
    let lim = budget::with_limit(limit, budget::limit).map_err(|e| error::to_py(py, e))?;
    let how = match lim.source {
        Source::Given => "given",
        Source::Env => "env",
        Source::Available => "available",
        Source::Fallback => "fallback",
    };
    Ok((lim.bytes, how))
}

/// The memory a run of the wire header and workload columns is estimated to take, before anything is
/// compiled (`fabricsim_core::budget::estimate`): ([(key, what, bytes)], lower bound of the run's length in ps).
#[pyfunction]
#[pyo3(signature = (header_json, columns = None))]
#[allow(clippy::type_complexity)]
fn memory_estimate<'py>(py: Python<'py>, header_json: &str, columns: Option<&Bound<'py, PyDict>>) -> PyResult<(Vec<(String, String, u64)>, u64)> {
    let wl = workload(py, columns)?;
    let header = header_json.to_owned();
    guarded(py, move || {
        let spec: RunSpec = serde_json::from_str(&header).map_err(|e| fabricsim_core::Error::spec("spec", e.to_string()))?;
        let est = fabricsim_core::budget::estimate(&spec, &wl)?;
        Ok((est.items, est.min_length_ps))
    })
}

/// Compile a scenario as `validate` does and report what that cost (benchmarks): `compile_s` (header JSON and
/// workload columns → compiled scenario, wall seconds), the forwarding tables' `fib_bytes`, `fib_groups`
/// (attachment switches) and `fib_classes` (base tables shared by groups).
#[pyfunction]
#[pyo3(signature = (header_json, columns = None))]
fn compile_stats<'py>(py: Python<'py>, header_json: &str, columns: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyDict>> {
    let wl = workload(py, columns)?;
    let header = header_json.to_owned();
    let (secs, bytes, groups, classes) = guarded(py, move || {
        let t = std::time::Instant::now();
        let c = compiled(&header, wl, None)?;
        let secs = t.elapsed().as_secs_f64();
        Ok((secs, c.fib.bytes(), c.fib.n_groups(), c.fib.n_classes()))
    })?;
    let d = PyDict::new(py);
    d.set_item("compile_s", secs)?;
    d.set_item("fib_bytes", bytes)?;
    d.set_item("fib_groups", groups)?;
    d.set_item("fib_classes", classes)?;
    Ok(d)
}

/// Max-min fair rates: `capacity[r]` per resource, `uses[f]` the (resource, weight) pairs of flow f, and
/// `caps[f]` its own rate cap (None = uncapped). Returns one rate per flow.
/// The schema of the scenario tables declared in the engine (`[pfc]`, `[ecn]`, `[[ecn.rate]]`, `[rdma]`,
/// `[hybrid]`, `[retransmit]`, `[uec]`) as JSON: each table's meaning and keys (name, JSON Schema with unit, meaning, default).
/// `fabricsim.spec.generated` makes Python's models from it.
#[pyfunction]
fn scenario_schema() -> String {
    let mut all = fabricsim_core::scenario::roce::schema();
    all["hybrid"] = fabricsim_core::scenario::hybrid::schema();
    all["retransmit"] = fabricsim_core::scenario::retransmit::schema();
    all["uec"] = fabricsim_core::scenario::uec::schema();
    all.to_string()
}

/// Check a parsed scenario (JSON text, as Python holds it; `base` the folder a `graph` file is relative to)
/// with the engine's reader, the one validator. Returns (verdict, file, text): ("ok", None, ""), ("invalid",
/// file, "field: reason") with the field as the user wrote it (`file` None for the scenario itself, else the
/// file the error is in: a graph file), ("warning", None, the warning: a value Python's models warn about) or
/// ("unsupported", None, why: valid input the reader leaves to Python). The GIL is released.
#[pyfunction]
#[pyo3(signature = (doc_json, base = None))]
fn scenario_check(py: Python<'_>, doc_json: &str, base: Option<String>) -> (&'static str, Option<String>, String) {
    use fabricsim_core::scenario::DeclineKind;
    let text = doc_json.to_owned();
    let got = py.detach(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            fabricsim_core::scenario::cli::check_json(&text, base.as_deref().map(std::path::Path::new))
        }))
    });
    match got {
        Ok(Ok(())) => ("ok", None, String::new()),
        Ok(Err(d)) => match d.kind {
            DeclineKind::Invalid => ("invalid", d.file, d.text),
            DeclineKind::Warning => ("warning", d.file, d.text),
            DeclineKind::Unsupported => ("unsupported", None, d.text),
        },
        Err(_) => ("unsupported", None, "the reader failed".into()),
    }
}

/// The engine's reading of a scenario document (JSON text, as Python holds it; `base` the folder a `graph`
/// file is relative to): `what` = "header" (the wire header), "rows" (the row-form wire, messages and barriers
/// included), "network" (the document is a `[topology]` table: its built network with node names, as Python's
/// `Network` dumps it) or "warnings" (the document's implausible values: `{"said": [{"file", "text"}, ...]` (the
/// first three)`, "total": n}`). Returns ("ok", None, the JSON text), ("invalid", file, "field: reason") with
/// the field as the user wrote it (`file` None for the document itself, else the graph file the error is in), or,
/// unless `quiet` (implausible values taken as written), ("warning", file, the first implausible value: "field =
/// value means ..."). The GIL is released.
#[pyfunction]
#[pyo3(signature = (doc_json, what, base = None, quiet = true))]
fn scenario_read(py: Python<'_>, doc_json: &str, what: &str, base: Option<String>, quiet: bool) -> PyResult<(&'static str, Option<String>, String)> {
    use fabricsim_core::scenario::cli;
    let text = doc_json.to_owned();
    let what = match what {
        "header" | "rows" | "network" | "warnings" => what.to_owned(),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("what must be 'header', 'rows', 'network' or 'warnings', not {other:?}")))
        }
    };
    let got = py.detach(move || {
        let base = base.as_deref().map(std::path::Path::new);
        match what.as_str() {
            "network" => cli::network_json(&text, base, quiet),
            "warnings" => cli::warnings_json(&text, base),
            w => cli::wire_json(&text, base, w == "rows", quiet),
        }
    });
    Ok(match got {
        Ok(json) => ("ok", None, json),
        Err(d) if d.kind == fabricsim_core::scenario::DeclineKind::Warning => ("warning", d.file, d.text),
        Err(d) => ("invalid", d.file, d.text),
    })
}

/// An ASTRA-sim network configuration (the text of its YAML file, or of a JSON one when `fmt` is "json") read as a
/// fabric document: ("ok", its JSON text: a `multi_dim` [topology] and unlimited queues) or ("invalid", "key:
/// reason") with the configuration's own key (`npus_count[1]`, `line 3`; no key for the whole file).
#[pyfunction]
fn astra_network(py: Python<'_>, text: &str, fmt: &str) -> (&'static str, String) {
    let (text, json) = (text.to_owned(), fmt == "json");
    match py.detach(move || fabricsim_core::scenario::cli::astra_json(&text, json)) {
        Ok(doc) => ("ok", doc),
        Err(d) => ("invalid", d.text),
    }
}

/// The message columns of `w` (src … path, as `Workload.columns()` keys them) into `d`, moved out of `w`.
fn message_columns<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, w: &mut Workload) -> PyResult<()> {
    use std::mem::take;
    d.set_item("src", arr(py, take(&mut w.src)))?;
    d.set_item("src_nic", arr(py, take(&mut w.src_nic)))?;
    d.set_item("dst", arr(py, take(&mut w.dst)))?;
    d.set_item("dst_nic", arr(py, take(&mut w.dst_nic)))?;
    d.set_item("size", arr(py, take(&mut w.size)))?;
    d.set_item("packet", arr(py, take(&mut w.packet)))?;
    d.set_item("header", arr(py, take(&mut w.header)))?;
    d.set_item("start_ps", arr(py, take(&mut w.start_ps)))?;
    d.set_item("delay_ps", arr(py, take(&mut w.delay_ps)))?;
    d.set_item("path", arr(py, take(&mut w.path)))?;
    Ok(())
}

/// A reading's verdict ("ok" or "invalid"), the file an error is in, its text ("field: reason"), and what was read.
type Verdict<T> = (&'static str, Option<String>, String, T);

/// The workload columns of a scenario document (JSON text; `base` as for `scenario_read`): the scenario's own
/// rows lowered by the engine's reader, as numpy arrays keyed as `Workload.columns()` keys them (plus
/// `n_messages`, `n_compute`), or None when it has no rows. Returns ("ok", None, "", columns) or ("invalid",
/// file, "field: reason", None). The GIL is released while reading.
#[pyfunction]
#[pyo3(signature = (doc_json, base = None))]
fn scenario_columns<'py>(py: Python<'py>, doc_json: &str, base: Option<String>) -> PyResult<Verdict<Option<Bound<'py, PyDict>>>> {
    let text = doc_json.to_owned();
    let got = py.detach(move || fabricsim_core::scenario::cli::columns_json(&text, base.as_deref().map(std::path::Path::new)));
    let mut w = match got {
        Ok(Some(w)) => w,
        Ok(None) => return Ok(("ok", None, String::new(), None)),
        Err(d) => return Ok(("invalid", d.file, d.text, None)),
    };
    let d = PyDict::new(py);
    d.set_item("n_messages", w.n_msgs())?;
    d.set_item("n_barriers", w.n_barriers)?;
    d.set_item("n_compute", w.compute_host.len())?;
    let (streams_host, streams_count): (Vec<u32>, Vec<u32>) = w.streams.iter().copied().unzip();
    message_columns(py, &d, &mut w)?;
    d.set_item("compute_host", arr(py, w.compute_host))?;
    d.set_item("compute_ps", arr(py, w.compute_ps))?;
    d.set_item("streams_host", arr(py, streams_host))?;
    d.set_item("streams_count", arr(py, streams_count))?;
    d.set_item("pred_start", arr(py, w.pred_start))?;
    d.set_item("pred", arr(py, w.pred))?;
    d.set_item("path_start", arr(py, w.path_start))?;
    d.set_item("path_nodes", arr(py, w.path_nodes))?;
    d.set_item("names", w.names)?;
    d.set_item("msg_name", arr(py, w.msg_name))?;
    d.set_item("barrier_name", arr(py, w.barrier_name))?;
    d.set_item("compute_name", arr(py, w.compute_name))?;
    Ok(("ok", None, String::new(), Some(d)))
}

/// The RoCE presets as JSON: `{"pfc": {...}, "ecn": {"hpcc": {...}, ...}, "rdma": {"hpcc": {"dcqcn": {...}, ...}, ...}}`
/// (wire form: bytes, ps, bits/s), so Python fills defaults from the one table in fabricsim-core.
#[pyfunction]
fn roce_presets() -> PyResult<String> {
    use fabricsim_core::roce::{EcnSpec, PfcSpec, RdmaCc, RdmaSpec, PRESETS};
    let mut ecn = serde_json::Map::new();
    let mut rdma = serde_json::Map::new();
    for name in PRESETS {
        ecn.insert(name.into(), serde_json::to_value(EcnSpec::preset(name)).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?);
        let mut by_cc = serde_json::Map::new();
        for (k, cc) in [("none", RdmaCc::None), ("dcqcn", RdmaCc::Dcqcn), ("hpcc", RdmaCc::Hpcc)] {
            by_cc.insert(
                k.into(),
                serde_json::to_value(RdmaSpec::preset(name, cc)).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?,
            );
        }
        rdma.insert(name.into(), by_cc.into());
    }
    let all = serde_json::json!({"pfc": PfcSpec::hpcc(), "ecn": ecn, "rdma": rdma});
    Ok(all.to_string())
}

#[pyfunction]
fn maxmin(py: Python<'_>, capacity: Vec<f64>, uses: Vec<Vec<(u32, f64)>>, caps: Vec<Option<f64>>) -> PyResult<Vec<f64>> {
    guarded(py, move || {
        let bad = |what: String| fabricsim_core::Error::spec("maxmin", what);
        if caps.len() != uses.len() {
            return Err(bad(format!("{} caps for {} flows", caps.len(), uses.len())));
        }
        if let Some(c) = capacity.iter().find(|c| !(c.is_finite() && **c > 0.0)) {
            return Err(bad(format!("capacities must be finite and > 0, got {c}")));
        }
        let mut mm = fabricsim_flow::maxmin::MaxMin::new(capacity.clone(), uses.len());
        let mut all = Vec::new();
        for (f, (u, cap)) in uses.into_iter().zip(caps).enumerate() {
            if u.is_empty() || u.iter().any(|&(r, w)| r as usize >= capacity.len() || w.is_nan() || w <= 0.0) {
                return Err(bad(format!("flow {f} needs resources in range with weights > 0")));
            }
            mm.add(f as u32, u, cap);
            all.push(f as u32);
        }
        mm.component(&all, &[]);
        mm.solve();
        Ok(mm.rate.clone())
    })
}

/// Expand one collective (the JSON of a `CollectiveSpec`) appended to a workload that already has
/// `msgs` messages, `barriers` barriers and `compute` compute steps; returns its columns (references
/// absolute), as `Workload.collective` appends them.
#[pyfunction]
fn expand_collective<'py>(py: Python<'py>, spec_json: &str, msgs: u32, barriers: u32, compute: u32) -> PyResult<Bound<'py, PyDict>> {
    let spec_json = spec_json.to_owned();
    let mut w = guarded(py, move || {
        let c: CollectiveSpec = serde_json::from_str(&spec_json).map_err(|e| fabricsim_core::Error::spec("collectives[0]", e.to_string()))?;
        expand(&c, 0, Base { msgs, barriers, compute })
    })?;
    let n = w.n_nodes();
    let d = PyDict::new(py);
    message_columns(py, &d, &mut w)?;
    d.set_item("n_barriers", w.n_barriers)?;
    let ps = if w.pred_start.is_empty() { vec![0u32; n + 1] } else { w.pred_start };
    d.set_item("pred_start", arr(py, ps))?;
    d.set_item("pred", arr(py, w.pred))?;
    Ok(d)
}

/// The record's schema (`record_schema::FIELDS`), one tuple per field: (name, dtype, unit, missing, labels,
/// json key, json form, when, description, source), the absent ones None; source is "stored", "derived" or
/// "row_name".
#[pyfunction]
#[allow(clippy::type_complexity)]
fn record_schema() -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    bool,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
    &'static str,
    &'static str,
)> {
    FIELDS
        .iter()
        .map(|f| {
            let source = match f.source {
                Source::Stored(_) => "stored",
                Source::Derived(_) => "derived",
                Source::RowName => "row_name",
            };
            (
                f.name,
                f.dtype.as_str(),
                f.unit,
                f.missing,
                f.labels.map(|l| l.as_str()),
                f.json.map(|j| j.0),
                f.json.map(|j| j.1.as_str()),
                f.when,
                f.description,
                source,
            )
        })
        .collect()
}

/// The stored columns of `table` read from `columns` (numpy arrays keyed by full name, as `run` returns them),
/// checked against the schema.
fn table_of<'a>(py: Python<'_>, table: &str, columns: &Bound<'_, PyDict>) -> PyResult<Table<'a>> {
    let Some(t) = FIELDS.iter().map(|f| f.table()).find(|t| *t == table) else {
        return Err(spec_err(py, "table", format!("no table '{table}' in the record's schema")));
    };
    let mut err = None;
    let got = Table::from_columns(t, |f| {
        if err.is_some() || !columns.contains(f.name).unwrap_or(false) {
            return None;
        }
        let v = match f.dtype {
            schema::Dtype::U8 => column::<u8>(py, columns, f.name, f.name).map(|v| Values::U8(v.into())),
            schema::Dtype::U32 => column::<u32>(py, columns, f.name, f.name).map(|v| Values::U32(v.into())),
            schema::Dtype::Bool => column::<bool>(py, columns, f.name, f.name).map(|v| Values::Bool(v.into())),
            _ => column::<u64>(py, columns, f.name, f.name).map(|v| Values::U64(v.into())),
        };
        v.map_err(|e| err = Some(e)).ok()
    });
    if let Some(e) = err {
        return Err(e);
    }
    got.map_err(|why| spec_err(py, table.to_string(), why))
}

/// A name list of `names` (the record's scalars) by key, empty when absent.
fn names_of(names: &Bound<'_, PyDict>, key: &str) -> PyResult<Vec<String>> {
    Ok(match names.get_item(key)? {
        Some(v) => v.extract()?,
        None => Vec::new(),
    })
}

/// The `--json` rows of `table` ("flows", "queues"), as the record's schema writes them, as one JSON array:
/// `columns` keyed by full name as `run` returns them, `names` holding the record's node_names, flow_names and
/// queue_names (its scalars), `rows` the row indices to write (all by default). O(rows).
#[pyfunction]
#[pyo3(signature = (table, columns, names, rows = None))]
fn rows_json(py: Python<'_>, table: &str, columns: &Bound<'_, PyDict>, names: &Bound<'_, PyDict>, rows: Option<Vec<usize>>) -> PyResult<String> {
    let t = table_of(py, table, columns)?;
    if let Some(bad) = rows.as_ref().and_then(|r| r.iter().find(|&&i| i >= t.rows)) {
        return Err(spec_err(py, "rows", format!("row {bad} of {} rows", t.rows)));
    }
    let (node_names, flow_names, queue_names) = (names_of(names, "node_names")?, names_of(names, "flow_names")?, names_of(names, "queue_names")?);
    let n = schema::Names { node_names: &node_names, flow_names: &flow_names, queue_names: &queue_names };
    Ok(py.detach(|| schema::rows_json(&t, &n, rows.as_deref())))
}

/// The record's `--json` object (the CLI's, the one writer: `record_json::record_json`) from the record as Python
/// holds it: `scalars` (as `run` returns them) and `columns`; the flow rows left out (null) with `flows` false.
#[pyfunction]
#[pyo3(signature = (scalars, columns, flows = true))]
fn record_json(py: Python<'_>, scalars: &Bound<'_, PyDict>, columns: &Bound<'_, PyDict>, flows: bool) -> PyResult<String> {
    use fabricsim_core::record_json::{FastForward, Head, Tables, JSON_TABLES};
    fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
        match d.get_item(key)? {
            Some(v) if !v.is_none() => Ok(Some(v.extract().map_err(Into::into)?)),
            _ => Ok(None),
        }
    }
    let mut tables = Vec::with_capacity(JSON_TABLES.len());
    for t in JSON_TABLES {
        tables.push(if FIELDS.iter().any(|f| f.table() == t && columns.contains(f.name).unwrap_or(false)) {
            table_of(py, t, columns)?
        } else {
            Default::default()
        });
    }
    let mut it = tables.into_iter();
    let tables = Tables::of(|_| it.next().unwrap_or_default());
    let fidelity: String = get(scalars, "fidelity")?.unwrap_or_default();
    let halted: Option<String> = get(scalars, "halted")?;
    let deadlock: Option<String> = get(scalars, "deadlock")?;
    let hops: Vec<u64> = get(scalars, "hops")?.unwrap_or_default();
    let packets: Option<Bound<'_, PyDict>> = get(scalars, "packets")?;
    let packet = |k: &str| -> PyResult<u64> {
        Ok(match &packets {
            Some(p) => get(p, k)?.unwrap_or(0),
            None => 0,
        })
    };
    let ff: Option<Bound<'_, PyDict>> = get(scalars, "fast_forward")?;
    let note: Option<String> = match &ff {
        Some(f) => get(f, "note")?,
        None => None,
    };
    let fast_forward = match &ff {
        Some(f) => Some(FastForward {
            window_ps: get(f, "window_ps")?.unwrap_or(0),
            jumps: get(f, "jumps")?.unwrap_or(0),
            skipped_ps: get(f, "skipped_ps")?.unwrap_or(0),
            skipped_packets: get(f, "skipped_packets")?.unwrap_or(0),
            note: note.as_deref(),
        }),
        None => None,
    };
    let mut net_events = Vec::new();
    if let Some(rows) = get::<Bound<'_, PyList>>(scalars, "net_events")? {
        for row in rows.iter() {
            let d = row.cast_into::<PyDict>()?;
            net_events.push(fabricsim_core::record::NetEventRow {
                t_ps: get(&d, "t_ps")?.unwrap_or(0),
                kind: get(&d, "kind")?.unwrap_or_default(),
                links: get(&d, "links")?.unwrap_or_default(),
                ber: get(&d, "ber")?.unwrap_or(0.0),
                rate_bps: get(&d, "rate_bps")?.unwrap_or(0),
            });
        }
    }
    let rx: Option<Bound<'_, PyDict>> = get(scalars, "retransmit")?;
    let retransmit = match &rx {
        Some(d) => Some(fabricsim_core::record::RetransmitStats {
            lost_packets: get(d, "lost_packets")?.unwrap_or(0),
            timeouts: get(d, "timeouts")?.unwrap_or(0),
            packets: get(d, "packets")?.unwrap_or(0),
            bytes: get(d, "bytes")?.unwrap_or(0),
            abandoned: get(d, "abandoned")?.unwrap_or(0),
        }),
        None => None,
    };
    let ux: Option<Bound<'_, PyDict>> = get(scalars, "uec")?;
    let uec = match &ux {
        Some(d) => Some(fabricsim_core::record::UecStats {
            data_packets: get(d, "data_packets")?.unwrap_or(0),
            trims: get(d, "trims")?.unwrap_or(0),
            trimmed_received: get(d, "trimmed_received")?.unwrap_or(0),
            nacks: get(d, "nacks")?.unwrap_or(0),
            acks: get(d, "acks")?.unwrap_or(0),
            ecn_echoes: get(d, "ecn_echoes")?.unwrap_or(0),
            timeouts: get(d, "timeouts")?.unwrap_or(0),
            retransmits: get(d, "retransmits")?.unwrap_or(0),
            duplicates: get(d, "duplicates")?.unwrap_or(0),
            out_of_order: get(d, "out_of_order")?.unwrap_or(0),
            pulls: get(d, "pulls")?.unwrap_or(0),
            timer_acks: get(d, "timer_acks")?.unwrap_or(0),
        }),
        None => None,
    };
    let head = Head {
        fidelity: &fidelity,
        seed: get(scalars, "seed")?.unwrap_or(0),
        completion_ps: get(scalars, "completion_ps")?,
        end_ps: get(scalars, "end_ps")?.unwrap_or(0),
        packets: [packet("tx")?, packet("rx")?, packet("dropped")?, packet("in_flight")?],
        hops: &hops,
        events: get(scalars, "events")?.unwrap_or(0),
        wall_s: get(scalars, "wall_s")?.unwrap_or(0.0),
        halted: halted.as_deref(),
        deadlock: deadlock.as_deref(),
        bin_ps: get(scalars, "bin_ps")?,
        cnps: get(scalars, "cnps")?,
        fast_forward,
        retransmit,
        net_events: &net_events,
        uec,
    };
    let (node_names, flow_names, queue_names) =
        (names_of(scalars, "node_names")?, names_of(scalars, "flow_names")?, names_of(scalars, "queue_names")?);
    let n = schema::Names { node_names: &node_names, flow_names: &flow_names, queue_names: &queue_names };
    Ok(fabricsim_core::record_json::record_json(&head, &tables, &n, flows))
}

/// The derived fields of `table` (the record's schema: e.g. `flows.throughput_bps`) computed from `columns`:
/// a dict of float64 arrays by full name (NaN where undefined).
#[pyfunction]
fn derive<'py>(py: Python<'py>, table: &str, columns: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let t = table_of(py, table, columns)?;
    let d = PyDict::new(py);
    for (name, v) in py.detach(|| schema::derive(&t)) {
        d.set_item(name, arr(py, v))?;
    }
    Ok(d)
}

// ---------------------------------------------------------------------------------------------------------
// Chakra execution traces (fabricsim_core::chakra): one rank's file as numpy columns, and back.

/// Read one Chakra ET file (gzip or not) into a dict: "version" (str), "names" (list of str), "meta_extra"
/// (bytes: the raw GlobalMetadata attributes) and one numpy array per `chakra::Trace` column. The GIL is
/// released while reading and decoding; I/O and decode errors raise SpecError with the path as field.
#[pyfunction]
fn read_chakra<'py>(py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyDict>> {
    let p = path.to_owned();
    let t = guarded(py, move || {
        let bytes = std::fs::read(&p).map_err(|e| fabricsim_core::Error::spec(p.as_str(), format!("cannot read: {e}")))?;
        fabricsim_core::chakra::read_trace(&bytes, &p)
    })?;
    let d = PyDict::new(py);
    d.set_item("version", t.version)?;
    d.set_item("names", PyList::new(py, t.names)?)?;
    d.set_item("meta_extra", pyo3::types::PyBytes::new(py, &t.meta_extra))?;
    d.set_item("id", arr(py, t.id))?;
    d.set_item("name", arr(py, t.name))?;
    d.set_item("node_type", arr(py, t.node_type))?;
    d.set_item("duration_micros", arr(py, t.duration_micros))?;
    d.set_item("comm_type", arr(py, t.comm_type))?;
    d.set_item("comm_size", arr(py, t.comm_size))?;
    d.set_item("comm_src", arr(py, t.comm_src))?;
    d.set_item("comm_dst", arr(py, t.comm_dst))?;
    d.set_item("comm_tag", arr(py, t.comm_tag))?;
    d.set_item("pg_name", arr(py, t.pg_name))?;
    d.set_item("num_ops", arr(py, t.num_ops))?;
    d.set_item("tensor_size", arr(py, t.tensor_size))?;
    d.set_item("is_cpu_op", arr(py, t.is_cpu_op))?;
    d.set_item("data_dep_start", arr(py, t.data_dep_start))?;
    d.set_item("data_deps", arr(py, t.data_deps))?;
    d.set_item("ctrl_dep_start", arr(py, t.ctrl_dep_start))?;
    d.set_item("ctrl_deps", arr(py, t.ctrl_deps))?;
    d.set_item("extra_start", arr(py, t.extra_start))?;
    d.set_item("extra", arr(py, t.extra))?;
    Ok(d)
}

/// Column `key` of a Chakra dict, or `n` copies of `absent` if the key is missing (or the array empty).
fn chakra_column<T: Element + Copy>(py: Python<'_>, cols: &Bound<'_, PyDict>, key: &str, n: usize, absent: T) -> PyResult<Vec<T>> {
    let v = column::<T>(py, cols, key, key)?;
    Ok(if v.is_empty() { vec![absent; n] } else { v })
}

/// Write a dict shaped as `read_chakra` returns to `path` as a Chakra ET file (gzip-compressed if the path
/// ends with ".gz"). "id", "name", "names" and "node_type" are required; a missing attribute column means
/// absent everywhere, missing CSR starts mean no dependencies (no extra fields). The columns are checked
/// (`Trace::check`) before anything is written; errors raise SpecError naming the path and the column.
#[pyfunction]
fn write_chakra(py: Python<'_>, path: &str, columns: &Bound<'_, PyDict>) -> PyResult<()> {
    use fabricsim_core::chakra::{Trace, ABSENT, NO_BOOL, NO_NAME};
    for key in ["id", "name", "names", "node_type"] {
        if !columns.contains(key)? {
            return Err(spec_err(py, format!("{path}: {key}"), "required column is missing"));
        }
    }
    let id: Vec<u64> = column(py, columns, "id", "id")?;
    let n = id.len();
    let text = |key: &str| -> PyResult<String> {
        match columns.get_item(key)? {
            Some(v) => v.extract().map_err(|_| spec_err(py, format!("{path}: {key}"), "expected a str")),
            None => Ok(String::new()),
        }
    };
    let meta_extra: Vec<u8> = match columns.get_item("meta_extra")? {
        Some(v) => v.extract().map_err(|_| spec_err(py, format!("{path}: meta_extra"), "expected bytes"))?,
        None => Vec::new(),
    };
    let names: Vec<String> = columns
        .get_item("names")?
        .map(|v| v.extract())
        .transpose()
        .map_err(|_| spec_err(py, format!("{path}: names"), "expected a list of str"))?
        .unwrap_or_default();
    let t = Trace {
        version: text("version")?,
        meta_extra,
        names,
        name: column(py, columns, "name", "name")?,
        node_type: column(py, columns, "node_type", "node_type")?,
        duration_micros: chakra_column(py, columns, "duration_micros", n, 0)?,
        comm_type: chakra_column(py, columns, "comm_type", n, ABSENT as i32)?,
        comm_size: chakra_column(py, columns, "comm_size", n, 0)?,
        comm_src: chakra_column(py, columns, "comm_src", n, ABSENT)?,
        comm_dst: chakra_column(py, columns, "comm_dst", n, ABSENT)?,
        comm_tag: chakra_column(py, columns, "comm_tag", n, ABSENT)?,
        pg_name: chakra_column(py, columns, "pg_name", n, NO_NAME)?,
        num_ops: chakra_column(py, columns, "num_ops", n, 0)?,
        tensor_size: chakra_column(py, columns, "tensor_size", n, 0)?,
        is_cpu_op: chakra_column(py, columns, "is_cpu_op", n, NO_BOOL)?,
        data_dep_start: chakra_column(py, columns, "data_dep_start", n + 1, 0)?,
        data_deps: column(py, columns, "data_deps", "data_deps")?,
        ctrl_dep_start: chakra_column(py, columns, "ctrl_dep_start", n + 1, 0)?,
        ctrl_deps: column(py, columns, "ctrl_deps", "ctrl_deps")?,
        extra_start: chakra_column(py, columns, "extra_start", n + 1, 0)?,
        extra: column(py, columns, "extra", "extra")?,
        id,
    };
    let p = path.to_owned();
    guarded(py, move || {
        t.check().map_err(|e| match e {
            fabricsim_core::Error::Spec { field, reason } => fabricsim_core::Error::spec(format!("{p}: {field}"), reason),
            other => other,
        })?;
        let mut bytes = fabricsim_core::chakra::write_trace(&t);
        if p.ends_with(".gz") {
            bytes = fabricsim_core::chakra::gzip(&bytes);
        }
        std::fs::write(&p, bytes).map_err(|e| fabricsim_core::Error::spec(p.as_str(), format!("cannot write: {e}")))
    })
}

/// Version of the native engine.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(compile_stats, m)?)?;
    m.add_function(wrap_pyfunction!(parse_memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(memory_budget, m)?)?;
    m.add_function(wrap_pyfunction!(memory_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(maxmin, m)?)?;
    m.add_function(wrap_pyfunction!(roce_presets, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(record_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_check, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_read, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_columns, m)?)?;
    m.add_function(wrap_pyfunction!(astra_network, m)?)?;
    m.add_function(wrap_pyfunction!(expand_collective, m)?)?;
    m.add_function(wrap_pyfunction!(record_schema, m)?)?;
    m.add_function(wrap_pyfunction!(rows_json, m)?)?;
    m.add_function(wrap_pyfunction!(derive, m)?)?;
    m.add_function(wrap_pyfunction!(read_chakra, m)?)?;
    m.add_function(wrap_pyfunction!(write_chakra, m)?)?;
    m.add_function(wrap_pyfunction!(fast::fast_cli, m)?)?;
    m.add_function(wrap_pyfunction!(fast::native_scenario, m)?)?;
    let errors = m.py().import("fabricsim.errors")?;
    for name in ["SpecError", "ConservationError", "SimulationError"] {
        m.add(name, errors.getattr(name)?)?;
    }
    m.add("MISSING", MISSING)?;
    m.add("FLOW_KINDS", pyo3::types::PyTuple::new(m.py(), schema::FLOW_KINDS)?)?;
    Ok(())
}
