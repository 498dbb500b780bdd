//! fabricsim-flow: the flow-level engine (max-min fair fluid flows on the packet engine's routes, same specs in, same records out).

mod engine;
pub mod maxmin;

use fabricsim_core::compile::Compiled;
use fabricsim_core::control::Control;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::RunSpec;
use fabricsim_core::Result;

pub use engine::{check_supported, FlowSim};

/// Simulate `spec` at flow fidelity to the end (or its stop time) and return the record.
pub fn run(spec: &RunSpec) -> Result<RunRecord> {
    FlowSim::new(spec)?.run()
}

/// Simulate a compiled scenario at flow fidelity.
pub fn run_compiled(c: Compiled) -> Result<RunRecord> {
    FlowSim::new_compiled(c)?.run()
}

/// Simulate a compiled scenario at flow fidelity under `ctl`'s limits and observer.
pub fn run_compiled_with(c: Compiled, ctl: Control) -> Result<RunRecord> {
    FlowSim::new_compiled(c)?.run_with(ctl)
}

/// Validate `spec` for the flow engine (everything the packet engine checks, plus what flows cannot model).
pub fn validate(spec: &RunSpec) -> Result<()> {
    FlowSim::new(spec).map(|_| ())
}
