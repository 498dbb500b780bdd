//! The one error type of every engine; the binding crate maps each variant to a Python exception.

use thiserror::Error;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// The spec is malformed or impossible; `field` is a dotted path such as `messages[3].dst`.
    #[error("{field}: {reason}")]
    Spec { field: String, reason: String },
    /// Packet accounting does not balance at the end of a run (an engine bug, never a user error).
    #[error("conservation violated: {0}")]
    Conservation(String),
    /// Any other failure inside an engine.
    #[error("simulation failed: {0}")]
    Sim(String),
}

impl Error {
    pub fn spec(field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Spec { field: field.into(), reason: reason.into() }
    }
}
