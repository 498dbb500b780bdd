//! `[hybrid]`: the steady-state detector of `fidelity = "hybrid"`, declared once (`HYBRID`) and read into the
//! engine's `HybridSpec` (defaults and validation are the engine's; errors name the user's key).

use super::keys::{defaulted, defaulted_schema, key, Key, Kind};
use super::Decline;
use crate::spec::HybridSpec;
use serde_json::Value as J;
use toml::Value;

/// `[hybrid]`'s keys.
pub const HYBRID: &[Key] = &[
    key(
        "window",
        Kind::PosDuration,
        "window_ps",
        "Detector window (a duration such as \"20us\", at least 1 ns); unset: 4 × the longest base round trip of the workload's routes, at least 1 us (with DCQCN at least twice its alpha-update and rate-decrease periods).",
    ),
    key("tolerance", Kind::Real, "tolerance", "Relative tolerance of \"held steady\", a fraction in (0, 1)."),
    key("windows", Kind::Count32, "windows", "Consecutive steady windows before a jump, 2 to 64."),
];

const DOC: &str = "The steady-state detector of `fidelity = \"hybrid\"` (docs/guide/hybrid.md). The network is steady when, over `windows` consecutive windows, the same flows were active, each flow's packets per window stayed within `tolerance` of their mean (or 2 packets), and every queue stayed within `tolerance` of its largest value plus two packets; the run then jumps whole windows to just before the next change.";

/// The schema of `[hybrid]` (defaults: `HybridSpec::default()`'s).
pub fn schema() -> J {
    defaulted_schema::<HybridSpec>(DOC, HYBRID)
}

/// `[hybrid]` as the engine's wire object (every field, defaults filled), validated.
pub fn hybrid(v: &Value) -> Result<J, Decline> {
    defaulted(v, "hybrid", HYBRID, HybridSpec::validate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_errors_are_the_engines() {
        let empty = Value::Table(toml::Table::new());
        assert_eq!(hybrid(&empty).unwrap(), json!({"window_ps": null, "tolerance": 0.02, "windows": 3}));
        let bad: Value = Value::Table("tolerance = 1.5".parse().unwrap());
        assert_eq!(hybrid(&bad).unwrap_err().text, "hybrid.tolerance: must be in (0, 1), not 1.5");
        let bad: Value = Value::Table("window = \"10ps\"".parse().unwrap());
        assert_eq!(hybrid(&bad).unwrap_err().text, "hybrid.window: must be at least 1 ns");
    }
}
