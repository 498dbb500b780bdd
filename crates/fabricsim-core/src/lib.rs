//! fabricsim-core: the shared vocabulary of every engine (units, ids, specs, topology, routing, records, errors); no PyO3.

pub mod budget;
pub mod chakra;
pub mod compile;
pub mod control;
pub mod dag;
pub mod error;
pub mod policy;
pub mod record;
pub mod record_json;
pub mod record_schema;
pub mod roce;
pub mod routing;
pub mod scenario;
pub mod spec;
pub mod topology;
pub mod uec;
pub mod units;
pub mod workload;

pub use error::{Error, Result};
pub use units::{Bps, Bytes, Time};
