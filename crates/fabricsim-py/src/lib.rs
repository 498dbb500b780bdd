//! fabricsim._core: the private native module; thin functions over the Rust engines, numpy columns in and out, GIL released while simulating.

mod error;
mod fast;

use fabricsim_core::compile::{compile, Compiled};
use fabricsim_core::control::{Control, Halt, Observer, Progress};
use fabricsim_core::record::RunRecord;
use fabricsim_core::record_json::{flow_rows, FlowRowColumns};
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

const MISSING: u64 = u64::MAX;

fn opt(v: Vec<Option<u64>>) -> Vec<u64> {
    v.into_iter().map(|x| x.unwrap_or(MISSING)).collect()
}

fn arr<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_vec(py, v)
}

/// The record as (scalars, columns): scalars is a dict of plain values, columns a dict of numpy arrays
/// (`flows.*`, `queues.*`, `samples.*`, `compute.*`, `hosts.*`; missing times are 2^64 − 1).
fn record_to_py<'py>(py: Python<'py>, r: RunRecord) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
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
    let q = r.queues;
    s.set_item("queue_names", PyList::new(py, q.name)?)?;
    let c = PyDict::new(py);
    let f = r.flows;
    c.set_item("flows.name", arr(py, f.name))?;
    c.set_item("flows.kind", arr(py, f.kind.iter().map(|k| *k as u8).collect::<Vec<u8>>()))?;
    c.set_item("flows.src", arr(py, f.src))?;
    c.set_item("flows.dst", arr(py, f.dst))?;
    c.set_item("flows.tx_packets", arr(py, f.tx_packets))?;
    c.set_item("flows.rx_packets", arr(py, f.rx_packets))?;
    c.set_item("flows.lost_packets", arr(py, f.lost_packets))?;
    c.set_item("flows.tx_bytes", arr(py, f.tx_bytes))?;
    c.set_item("flows.rx_bytes", arr(py, f.rx_bytes))?;
    c.set_item("flows.rx_payload_bytes", arr(py, f.rx_payload_bytes))?;
    c.set_item("flows.first_tx_ps", arr(py, opt(f.first_tx_ps)))?;
    c.set_item("flows.last_tx_ps", arr(py, opt(f.last_tx_ps)))?;
    c.set_item("flows.first_rx_ps", arr(py, opt(f.first_rx_ps)))?;
    c.set_item("flows.last_rx_ps", arr(py, opt(f.last_rx_ps)))?;
    c.set_item("flows.delay_sum_ps", arr(py, f.delay_sum_ps))?;
    c.set_item("flows.max_delay_ps", arr(py, f.max_delay_ps))?;
    c.set_item("flows.complete_ps", arr(py, opt(f.complete_ps)))?;
    c.set_item("flows.start_ps", arr(py, opt(f.start_ps)))?;
    c.set_item("queues.node", arr(py, q.node))?;
    c.set_item("queues.port", arr(py, q.port))?;
    c.set_item("queues.tx_packets", arr(py, q.tx_packets))?;
    c.set_item("queues.tx_bytes", arr(py, q.tx_bytes))?;
    c.set_item("queues.drops", arr(py, q.drops))?;
    c.set_item("queues.peak_packets", arr(py, q.peak_packets))?;
    c.set_item("queues.peak_bytes", arr(py, q.peak_bytes))?;
    let sm = r.samples;
    c.set_item("samples.t_ps", arr(py, sm.t_ps))?;
    c.set_item("samples.port", arr(py, sm.port))?;
    c.set_item("samples.packets", arr(py, sm.packets))?;
    c.set_item("samples.bytes", arr(py, sm.bytes))?;
    c.set_item("compute.host", arr(py, r.compute.host))?;
    c.set_item("compute.start_ps", arr(py, opt(r.compute.start_ps)))?;
    c.set_item("compute.end_ps", arr(py, opt(r.compute.end_ps)))?;
    c.set_item("timeline.rx_payload_bytes", arr(py, r.rx_bins))?;
    c.set_item("hosts.node", arr(py, r.hosts.node))?;
    c.set_item("hosts.compute_ps", arr(py, r.hosts.compute_ps))?;
    c.set_item("hosts.comm_ps", arr(py, r.hosts.comm_ps))?;
    c.set_item("hosts.exposed_comm_ps", arr(py, r.hosts.exposed_comm_ps))?;
    s.set_item("deadlock", r.deadlock)?;
    if let Some(ff) = r.fast_forward {
        let d = PyDict::new(py);
        d.set_item("window_ps", ff.window_ps)?;
        d.set_item("jumps", ff.jumps)?;
        d.set_item("skipped_ps", ff.skipped_ps)?;
        d.set_item("skipped_packets", ff.skipped_packets)?;
        d.set_item("note", ff.note)?;
        s.set_item("fast_forward", d)?;
        c.set_item("flows.skipped_packets", arr(py, ff.flow_skipped_packets))?;
    }
    if let Some(x) = r.roce {
        s.set_item("cnps", x.cnps)?;
        c.set_item("roce.pause_tx", arr(py, x.pause_tx))?;
        c.set_item("roce.pause_rx", arr(py, x.pause_rx))?;
        c.set_item("roce.paused_ps", arr(py, x.paused_ps))?;
        c.set_item("roce.ecn_marks", arr(py, x.ecn_marks))?;
        c.set_item("roce.peak_ingress_bytes", arr(py, x.peak_ingress_bytes))?;
        c.set_item("rates.t_ps", arr(py, x.rate_t_ps))?;
        c.set_item("rates.flow", arr(py, x.rate_flow))?;
        c.set_item("rates.rate_bps", arr(py, x.rate_bps))?;
        c.set_item("pfc.t_ps", arr(py, x.pfc_t_ps))?;
        c.set_item("pfc.port", arr(py, x.pfc_port))?;
        c.set_item("pfc.pause", arr(py, x.pfc_pause))?;
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
                Some(cb) => cb.call1(py, (p.now_ps, p.stop_ps, p.events, p.msgs_done, p.msgs_total, p.wall_s)).map(drop),
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
/// msgs_total, wall_s)` is called about every 50 ms. Ctrl-C stops the run: the record so far comes back with
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
/// The schema of the RoCE tables (`[pfc]`, `[ecn]`, `[[ecn.rate]]`, `[rdma]`) as JSON: each table's meaning and
/// keys (name, JSON Schema with unit, meaning). `fabricsim.spec.roce` generates its models from it.
#[pyfunction]
fn roce_schema() -> String {
    fabricsim_core::scenario::roce::schema().to_string()
}

/// The RoCE wire objects of a JSON document with `transport`, `pfc`, `ecn` and `rdma` as a scenario gives them:
/// read, defaulted from the presets and validated by the one reader; errors raise SpecError with the user's key.
#[pyfunction]
fn roce_tables(py: Python<'_>, doc_json: &str) -> PyResult<String> {
    fabricsim_core::scenario::roce::tables_json(doc_json).map_err(|d| error::to_py(py, d.into_error()))
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
    let w = guarded(py, move || {
        let c: CollectiveSpec = serde_json::from_str(&spec_json).map_err(|e| fabricsim_core::Error::spec("collectives[0]", e.to_string()))?;
        expand(&c, 0, Base { msgs, barriers, compute })
    })?;
    let n = w.n_nodes();
    let d = PyDict::new(py);
    d.set_item("src", arr(py, w.src))?;
    d.set_item("src_nic", arr(py, w.src_nic))?;
    d.set_item("dst", arr(py, w.dst))?;
    d.set_item("dst_nic", arr(py, w.dst_nic))?;
    d.set_item("size", arr(py, w.size))?;
    d.set_item("packet", arr(py, w.packet))?;
    d.set_item("header", arr(py, w.header))?;
    d.set_item("start_ps", arr(py, w.start_ps))?;
    d.set_item("delay_ps", arr(py, w.delay_ps))?;
    d.set_item("path", arr(py, w.path))?;
    d.set_item("n_barriers", w.n_barriers)?;
    let ps = if w.pred_start.is_empty() { vec![0u32; n + 1] } else { w.pred_start };
    d.set_item("pred_start", arr(py, ps))?;
    d.set_item("pred", arr(py, w.pred))?;
    Ok(d)
}

/// The `flows` rows of the CLI's `--json` (as `RunRecord.flows()` builds them, SI units) written as one JSON
/// array: the record's flow columns (numpy arrays keyed as `run` returns them, without the `flows.`
/// prefix), the node names and the flow names. O(flows); numbers in Rust's shortest round-trip form.
#[pyfunction]
fn flow_rows_json(py: Python<'_>, cols: &Bound<'_, PyDict>, node_names: Vec<String>, flow_names: Vec<String>) -> PyResult<String> {
    let u32c = |k: &str| column::<u32>(py, cols, k, k);
    let u64c = |k: &str| column::<u64>(py, cols, k, k);
    let (name, src, dst) = (u32c("name")?, u32c("src")?, u32c("dst")?);
    let kind = column::<u8>(py, cols, "kind", "kind")?;
    let (txp, rxp, lost, txb, rxb) = (u64c("tx_packets")?, u64c("rx_packets")?, u64c("lost_packets")?, u64c("tx_bytes")?, u64c("rx_bytes")?);
    let (dsum, dmax, ftx, lrx, st, done) =
        (u64c("delay_sum_ps")?, u64c("max_delay_ps")?, u64c("first_tx_ps")?, u64c("last_rx_ps")?, u64c("start_ps")?, u64c("complete_ps")?);
    let n = name.len();
    for (k, len) in [
        ("src", src.len()),
        ("dst", dst.len()),
        ("kind", kind.len()),
        ("tx_packets", txp.len()),
        ("rx_packets", rxp.len()),
        ("lost_packets", lost.len()),
        ("tx_bytes", txb.len()),
        ("rx_bytes", rxb.len()),
        ("delay_sum_ps", dsum.len()),
        ("max_delay_ps", dmax.len()),
        ("first_tx_ps", ftx.len()),
        ("last_rx_ps", lrx.len()),
        ("start_ps", st.len()),
        ("complete_ps", done.len()),
    ] {
        if len != n {
            return Err(spec_err(py, k, "flow columns differ in length"));
        }
    }
    let cols = FlowRowColumns {
        name: &name,
        kind: &kind,
        src: &src,
        dst: &dst,
        tx_packets: &txp,
        rx_packets: &rxp,
        lost_packets: &lost,
        tx_bytes: &txb,
        rx_bytes: &rxb,
        delay_sum_ps: &dsum,
        max_delay_ps: &dmax,
        first_tx_ps: &ftx,
        last_rx_ps: &lrx,
        start_ps: &st,
        complete_ps: &done,
    };
    Ok(flow_rows(&cols, &node_names, &flow_names))
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
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(maxmin, m)?)?;
    m.add_function(wrap_pyfunction!(roce_presets, m)?)?;
    m.add_function(wrap_pyfunction!(roce_schema, m)?)?;
    m.add_function(wrap_pyfunction!(roce_tables, m)?)?;
    m.add_function(wrap_pyfunction!(expand_collective, m)?)?;
    m.add_function(wrap_pyfunction!(flow_rows_json, m)?)?;
    m.add_function(wrap_pyfunction!(read_chakra, m)?)?;
    m.add_function(wrap_pyfunction!(write_chakra, m)?)?;
    m.add_function(wrap_pyfunction!(fast::fast_cli, m)?)?;
    m.add_function(wrap_pyfunction!(fast::native_scenario, m)?)?;
    let errors = m.py().import("fabricsim.errors")?;
    for name in ["SpecError", "ConservationError", "SimulationError"] {
        m.add(name, errors.getattr(name)?)?;
    }
    m.add("MISSING", MISSING)?;
    Ok(())
}
