//! fabricsim._core: the private native module; thin functions over the Rust engines, GIL released while simulating.

mod error;

use fabricsim_core::spec::RunSpec;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `f` without the GIL, converting core errors and panics to Python exceptions.
fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> fabricsim_core::Result<T> + Send) -> PyResult<T> {
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(error::to_py(e)),
        Err(payload) => Err(error::panic_to_py(payload)),
    }
}

/// Which engine: "packet" (the discrete-event engine) or "flow" (max-min fluid flows).
fn flow_fidelity(fidelity: &str) -> PyResult<bool> {
    match fidelity {
        "packet" => Ok(false),
        "flow" => Ok(true),
        other => Err(error::to_py(fabricsim_core::Error::spec("fidelity", format!("must be 'packet' or 'flow', not '{other}'")))),
    }
}

/// Simulate a wire RunSpec (JSON) at the given fidelity; returns the RunRecord as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, fidelity = "packet"))]
fn run(py: Python<'_>, spec_json: &str, fidelity: &str) -> PyResult<String> {
    let flow = flow_fidelity(fidelity)?;
    let spec_json = spec_json.to_owned();
    guarded(py, move || {
        let spec = RunSpec::from_json(&spec_json)?;
        let record = if flow { fabricsim_flow::run(&spec)? } else { fabricsim_des::run(&spec)? };
        serde_json::to_string(&record).map_err(|e| fabricsim_core::Error::Sim(e.to_string()))
    })
}

/// Validate a wire RunSpec (fields, topology, reachability, paths, what the fidelity can model) without simulating.
#[pyfunction]
#[pyo3(signature = (spec_json, fidelity = "packet"))]
fn validate(py: Python<'_>, spec_json: &str, fidelity: &str) -> PyResult<()> {
    let flow = flow_fidelity(fidelity)?;
    let spec_json = spec_json.to_owned();
    guarded(py, move || {
        let spec = RunSpec::from_json(&spec_json)?;
        if flow {
            fabricsim_flow::validate(&spec)
        } else {
            fabricsim_des::validate(&spec)
        }
    })
}

/// Max-min fair rates: `capacity[r]` per resource, `uses[f]` the (resource, weight) pairs of flow f, and
/// `caps[f]` its own rate cap (None = uncapped). Returns one rate per flow.
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
            if u.is_empty() || u.iter().any(|&(r, w)| r as usize >= capacity.len() || !(w > 0.0)) {
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

/// Version of the native engine.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(maxmin, m)?)?;
    m.add("SpecError", py.get_type::<error::SpecError>())?;
    m.add("ConservationError", py.get_type::<error::ConservationError>())?;
    m.add("SimulationError", py.get_type::<error::SimulationError>())?;
    Ok(())
}
