//! fabricsim-des: the packet-level discrete-event engine (event queue, queues, ports, sources, messages).

pub mod codel;
pub mod events;
mod hybrid;
mod measure;
mod net;
mod packet;
pub mod queues;
mod roce;
pub mod sim;
mod transport;

pub use measure::MAX_SAMPLE_ROWS;

use fabricsim_core::compile::Compiled;
use fabricsim_core::control::Control;
use fabricsim_core::record::RunRecord;
use fabricsim_core::spec::RunSpec;
use fabricsim_core::Result;

pub use sim::Sim;

/// Simulate `spec` to the end (or its stop time) and return the record.
pub fn run(spec: &RunSpec) -> Result<RunRecord> {
    Sim::new(spec)?.run()
}

/// Simulate a compiled scenario (see `fabricsim_core::compile`).
pub fn run_compiled(c: Compiled) -> Result<RunRecord> {
    Sim::new_compiled(c)?.run()
}

/// Simulate a compiled scenario under `ctl`'s limits and observer (see `fabricsim_core::control`).
pub fn run_compiled_with(c: Compiled, ctl: Control) -> Result<RunRecord> {
    Sim::new_compiled(c)?.run_with(ctl)
}

/// Simulate a compiled scenario at hybrid fidelity (the packet engine with steady-state jumps, `hybrid.rs`; the
/// knobs are the spec's `hybrid`) under `ctl`. The record's `fast_forward` says what the jumps skipped, and its
/// `note` why a run went packet by packet.
pub fn run_compiled_hybrid_with(c: Compiled, ctl: Control) -> Result<RunRecord> {
    if c.spec.uec.is_some() {
        return Err(fabricsim_core::Error::spec(
            "fidelity",
            "transport = \"uec\" runs at packet fidelity (hybrid's steady-state jumps do not model its windows); use fidelity = \"packet\"",
        ));
    }
    let knobs = c.spec.hybrid.clone();
    let mut sim = Sim::new_compiled(c)?;
    sim.enable_hybrid(knobs.as_ref());
    sim.run_with(ctl)
}

/// Validate `spec` completely (fields, topology, reachability, paths) without simulating.
pub fn validate(spec: &RunSpec) -> Result<()> {
    Sim::new(spec).map(|_| ())
}
