//! The one mapping from core errors (and caught panics) to Python exceptions.

use fabricsim_core::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

create_exception!(_core, SpecError, PyValueError, "The spec is malformed or impossible; the message is 'field: reason'.");
create_exception!(_core, ConservationError, PyRuntimeError, "Packet accounting did not balance at the end of a run.");
create_exception!(_core, SimulationError, PyRuntimeError, "The engine failed (including a caught internal panic).");

pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Spec { field, reason } => SpecError::new_err(format!("{field}: {reason}")),
        Error::Conservation(m) => ConservationError::new_err(m),
        Error::Sim(m) => SimulationError::new_err(m),
    }
}

/// Turn a caught panic payload into a SimulationError; no panic ever crosses into Python.
pub fn panic_to_py(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    SimulationError::new_err(format!("internal error: {msg}"))
}
