//! The comparison as JSON: the serde form of [`Comparison`], described by
//! `schema/comparison.schema.json` (JSON Schema draft 2020-12). Field names and
//! enum spellings are those of `compare::model` and `ComparisonMode`, the contract.

use crate::compare::Comparison;

/// Pretty JSON of the comparison, newline-terminated. Non-finite numbers
/// (which `compare` never produces) would be written as `null`.
pub fn render(cmp: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(cmp).expect("a Comparison always serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{GateOutcome, RunRef};

    #[test]
    fn round_trips() {
        let cmp = Comparison {
            schema_version: 1,
            mode: crate::compare::ComparisonMode::Baseline,
            method: "m".into(),
            baseline_run: None,
            current_run: RunRef {
                run_id: "r".into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                git_sha: None,
                git_ref: None,
            },
            environment_differences: vec![],
            environment_changes: vec!["kernel differs (\"6.1\" vs \"6.8\")".into()],
            outcome: GateOutcome::NoBaseline,
            exit_code: 0,
            regressions: 0,
            improvements: 0,
            warnings: 0,
            anchoring: None,
            inconclusive_policy: Default::default(),
            optimistic: false,
            metrics: vec![],
        };
        let back: Comparison = serde_json::from_str(&render(&cmp)).unwrap();
        assert_eq!(back, cmp);
    }
}
