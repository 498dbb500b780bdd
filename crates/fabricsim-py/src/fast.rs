//! The native start: `_core.fast_cli(argv)` runs `fabricsim run FILE [--seed N] [--fidelity F] --json` and `fabricsim validate FILE` without the Python front door, or returns None to hand the command to it.
//!
//! Invariant: a non-None answer is (exit code, stdout, stderr) exactly as the Python CLI would produce them;
//! any decline, engine error or panic before the record exists returns None (Python then redoes the work
//! and reports it in its own words). Ctrl-C reaches the engine through the same observer as `_core.run`.

use crate::PyObserver;
use fabricsim_core::budget::with_limit;
use fabricsim_core::control::{Control, Halt};
use fabricsim_core::record_json::{incomplete_reason, py_g6, run_json, thousands};
use fabricsim_core::scenario::cli::{parse_argv, prepare_run, prepare_validate, wire_of, Command};
use fabricsim_core::scenario::Decline;
use fabricsim_core::workload::Workload;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// Run `f` without the GIL; None for a decline or a panic.
fn quietly<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Decline> + Send) -> Option<T> {
    py.detach(move || catch_unwind(AssertUnwindSafe(f)).ok().and_then(Result::ok))
}

/// `argv` (without the program name) run natively: (exit code, stdout, stderr), or None when the Python
/// front door must take the command. `progress(now_ps, stop_ps, events, msgs_done, msgs_total, wall_s)` is
/// called about every 50 ms of a run, as `_core.run` calls it; Ctrl-C stops the run (exit 130).
#[pyfunction]
#[pyo3(signature = (argv, progress = None))]
pub fn fast_cli(py: Python<'_>, argv: Vec<String>, progress: Option<Py<PyAny>>) -> PyResult<Option<(i32, String, String)>> {
    let Some(cmd) = parse_argv(&argv) else { return Ok(None) };
    let limit = cmd.memory_limit();
    let (path, seed, fidelity, quiet) = match &cmd {
        Command::Validate { path, .. } => {
            let p = path.clone();
            let ok = quietly(py, move || {
                let prepared = with_limit(limit, || prepare_validate(&p))?;
                if prepared.flow {
                    fabricsim_flow::check_supported(&prepared.compiled.spec).map_err(|e| Decline::new(format!("flow: {e}")))?;
                }
                Ok(())
            });
            return Ok(ok.map(|()| (0, format!("{path}: ok\n"), String::new())));
        }
        Command::Run { path, seed, fidelity, quiet, .. } => (path.clone(), *seed, *fidelity, *quiet),
    };
    let progress = if quiet { None } else { progress };
    let p = path.clone();
    // The memory budget is checked as the scenario is read and compiled (`fabricsim_core::budget`): a refusal
    // is a decline, which the click CLI then says in its words.
    let Some(prepared) = quietly(py, move || with_limit(limit, || prepare_run(&p, seed, fidelity))) else { return Ok(None) };
    let raised = Arc::new(Mutex::new(None));
    let observer = PyObserver { progress, raised: Arc::clone(&raised) };
    let ctl = Control::new(None, None, Some(Box::new(observer)));
    let (flow, stop_ps) = (prepared.flow, prepared.stop_ps);
    let compiled = prepared.compiled;
    let record = py.detach(move || {
        catch_unwind(AssertUnwindSafe(move || {
            if flow {
                fabricsim_flow::run_compiled_with(compiled, ctl)
            } else {
                fabricsim_des::run_compiled_with(compiled, ctl)
            }
        }))
    });
    let stopped_by = raised.lock().unwrap_or_else(|e| e.into_inner()).take();
    let record = match record {
        Ok(Ok(r)) => r,
        _ if stopped_by.as_ref().is_some_and(|e| e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)) => {
            return Ok(Some((130, String::new(), "fabricsim: interrupted\n".into())));
        }
        _ => return Ok(None),
    };
    if let Some(e) = stopped_by {
        if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
            return Err(e);
        }
        // As the Python CLI: a Ctrl-C that stopped the run says where; one that came as it ended, just that.
        let line = if record.halted == Some(Halt::Interrupted) {
            format!(
                "fabricsim: interrupted at simulated time {} s after {} events (--partial prints the record so far)\n",
                py_g6(record.end_ps as f64 * 1e-12),
                thousands(record.events)
            )
        } else {
            "fabricsim: interrupted\n".into()
        };
        return Ok(Some((130, String::new(), line)));
    }
    let out = run_json(&record) + "\n";
    Ok(Some(match incomplete_reason(&record, stop_ps.map(|s| s as f64 * 1e-12)) {
        Some(why) => (3, out, format!("fabricsim: {path}: {why}\n")),
        None => (0, out, String::new()),
    }))
}

fn columns_json(w: &Workload) -> serde_json::Value {
    serde_json::json!({
        "src": w.src, "src_nic": w.src_nic, "dst": w.dst, "dst_nic": w.dst_nic, "size": w.size, "packet": w.packet,
        "header": w.header, "start_ps": w.start_ps, "delay_ps": w.delay_ps, "path": w.path, "n_barriers": w.n_barriers,
        "compute_host": w.compute_host, "compute_ps": w.compute_ps,
        "streams_host": w.streams.iter().map(|s| s.0).collect::<Vec<_>>(), "streams_count": w.streams.iter().map(|s| s.1).collect::<Vec<_>>(),
        "pred_start": w.pred_start, "pred": w.pred, "path_start": w.path_start, "path_nodes": w.path_nodes, "names": w.names,
        "msg_name": w.msg_name, "barrier_name": w.barrier_name, "compute_name": w.compute_name,
    })
}

/// What the native front door makes of a scenario file, for tests: (True, JSON text of {"header": the wire
/// header, "rows": the row-form wire or null, "columns": the workload columns as lists or null}) or (False,
/// why it declines): "field: reason" when the file is invalid (the field and reason as Python's front door
/// names them; a bare reason for the whole file, as "line 3: TOML syntax error: ..." or "cannot read: ..."),
/// "warning: field = value means ..." when Python would warn about a value, "unsupported: why" when the file
/// may be valid but this port does not read it (a graph topology, a very large fabric, fidelity = "hybrid").
#[pyfunction]
pub fn native_scenario(py: Python<'_>, path: String) -> (bool, String) {
    let got = py.detach(move || {
        catch_unwind(AssertUnwindSafe(move || {
            let sc = fabricsim_core::scenario::cli::load(&path)?;
            let w = wire_of(&sc)?;
            Ok::<_, Decline>(serde_json::json!({"header": w.header, "rows": w.rows, "columns": w.workload.as_ref().map(columns_json)}).to_string())
        }))
    });
    match got {
        Ok(Ok(text)) => (true, text),
        Ok(Err(d)) => (false, d.report()),
        Err(_) => (false, "panic".into()),
    }
}
