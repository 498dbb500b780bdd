//! `[retransmit]`: the message transport's retransmission timeout and retry limit, declared once (`RETRANSMIT`)
//! and read into the engine's `RetransmitSpec` (defaults and validation are the engine's; errors name the user's
//! key).

use super::keys::{defaulted, defaulted_schema, key, Key, Kind};
use super::Decline;
use crate::spec::RetransmitSpec;
use serde_json::Value as J;
use toml::Value;

/// `[retransmit]`'s keys.
pub const RETRANSMIT: &[Key] = &[
    key(
        "rto",
        Kind::PosDuration,
        "rto_ps",
        "Retransmission timeout (a duration such as \"100us\", 1 ns to 1 s): a message that lost packets re-sends them this long after its last transmission, the wait doubling after each timeout that brought no progress.",
    ),
    key(
        "max_retries",
        Kind::Count32,
        "max_retries",
        "Consecutive timeouts without progress before a message is abandoned and the run ends incomplete, 0 to 16 (0: retransmission off, a message is abandoned at its first lost packet).",
    ),
];

const DOC: &str = "Retransmission of the message transport (`transport = \"message\"`, the default; docs/guide/route-around-failures.md): selective repeat on a timeout. A message that lost packets (a full queue, a failed link, a bit error) re-sends exactly the lost packets `rto` after its last transmission, on the routes of that moment. Loss-free runs never arm the timer. The record counts the timeouts and the re-sent packets and bytes (`retransmit`).";

/// The schema of `[retransmit]` (defaults: `RetransmitSpec::default()`'s).
pub fn schema() -> J {
    defaulted_schema::<RetransmitSpec>(DOC, RETRANSMIT)
}

/// `[retransmit]` as the engine's wire object (every field, defaults filled), validated.
pub fn retransmit(v: &Value) -> Result<J, Decline> {
    defaulted(v, "retransmit", RETRANSMIT, RetransmitSpec::validate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_errors_are_the_engines() {
        let empty = Value::Table(toml::Table::new());
        assert_eq!(retransmit(&empty).unwrap(), json!({"rto_ps": 100_000_000u64, "max_retries": 7}));
        let set: Value = Value::Table("rto = \"20us\"\nmax_retries = 3".parse().unwrap());
        assert_eq!(retransmit(&set).unwrap(), json!({"rto_ps": 20_000_000u64, "max_retries": 3}));
        let bad: Value = Value::Table("rto = \"10ps\"".parse().unwrap());
        assert_eq!(retransmit(&bad).unwrap_err().text, "retransmit.rto: must be 1 ns to 1 s, not 10 ps");
        let bad: Value = Value::Table("max_retries = 17".parse().unwrap());
        assert_eq!(retransmit(&bad).unwrap_err().text, "retransmit.max_retries: must be 0 to 16, not 17");
    }
}
