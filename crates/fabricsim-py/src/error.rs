//! The one mapping from core errors (and caught panics) to the package's typed Python exceptions.
//!
//! The exception classes live in `fabricsim.errors` (pure Python, deriving from `FabricsimError`); a spec
//! error carries `field` and `reason` attributes, so no caller splits message strings.

use fabricsim_core::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::PyErr;

/// Instantiate `fabricsim.errors.<class>(*args)` as a PyErr (a RuntimeError if the package is unimportable).
fn raise<'py, A>(py: Python<'py>, class: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let made = py.import("fabricsim.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1(args));
    match made {
        Ok(v) => PyErr::from_value(v),
        Err(e) => PyRuntimeError::new_err(format!("cannot raise fabricsim.errors.{class}: {e}")),
    }
}

pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Spec { field, reason } => raise(py, "SpecError", (field, reason)),
        Error::Conservation(m) => raise(py, "ConservationError", (m,)),
        Error::Sim(m) => raise(py, "SimulationError", (m,)),
    }
}

/// Turn a caught panic payload into a SimulationError; no panic ever crosses into Python.
pub fn panic_to_py(py: Python<'_>, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    raise(py, "SimulationError", (format!("internal error: {msg}"),))
}
