//! Base vs head takes its gate from the base commit: the config file as the
//! base commit has it (`git show`, never the pull request's tree), so a pull
//! request cannot loosen its own gate. When the base commit has no such file,
//! or one this benchgate cannot read, the gate is head's and the report says
//! so. Thresholds that head's config sets differently are listed, not
//! applied.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;

use super::base_tree::{git, repo_of, resolve_base};
use crate::config::gate::MetricGate;
use crate::config::gate_edit::threshold_text;
use crate::config::{GateConfig, Suite};
use crate::plan::ComparisonPlan;
use crate::report::escape::{md, sha};

/// `plan` with the base commit's gate when it compares base vs head (`head`:
/// the suite as read from `config`, the config file of this checkout);
/// unchanged otherwise.
pub fn from_base(
    plan: ComparisonPlan,
    head: &Suite,
    config: Option<&Path>,
) -> anyhow::Result<ComparisonPlan> {
    let (Some(base_ref), Some(config)) = (plan.base_ref(), config) else {
        return Ok(plan);
    };
    let file = std::fs::canonicalize(config)
        .with_context(|| format!("resolving the config {}", config.display()))?;
    let dir = file.parent().unwrap_or(Path::new("/"));
    let repo = repo_of(dir)?;
    let rel = file
        .strip_prefix(&repo)
        .map(|r| r.to_string_lossy().into_owned())
        .map_err(|_| {
            anyhow::anyhow!(
                "base vs head: the config {} is outside the repository {}",
                config.display(),
                repo.display()
            )
        })?;
    let base_sha = resolve_base(&repo, base_ref)?;
    let at_base = git(&repo, &["show", &format!("{base_sha}:{rel}")]);
    let (gate, mut note) = match at_base {
        Err(_) => (
            head.gate.clone(),
            format!(
                "> **Gate:** the base commit {} has no `{}`, so the gate is this pull request's own.\n",
                sha(&base_sha),
                md(&rel)
            ),
        ),
        Ok(text) => match Suite::from_toml(&text, &format!("{rel} at {}", &base_sha[..12])) {
            Err(e) => (
                head.gate.clone(),
                format!(
                    "> **Gate:** the base commit's `{}` does not parse ({}), so the gate is this pull request's own.\n",
                    md(&rel),
                    md(&first_line(&e.to_string()))
                ),
            ),
            Ok(base) => (
                base.gate,
                format!(
                    "> **Gate:** from `{}` as of the base commit {}: a pull request does not loosen its own gate.\n",
                    md(&rel),
                    sha(&base_sha)
                ),
            ),
        },
    };
    let differences = differences(&gate, &head.gate);
    if !differences.is_empty() {
        let _ = writeln!(
            note,
            "> This pull request's config sets other gate values, not applied here: {}.",
            differences.join("; ")
        );
    }
    note.push('\n');
    Ok(ComparisonPlan {
        gate,
        gate_note: Some(note),
        ..plan
    })
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

/// What `head` sets differently from `applied`, as markdown fragments.
pub fn differences(applied: &GateConfig, head: &GateConfig) -> Vec<String> {
    let mut out = Vec::new();
    if applied.alpha != head.alpha {
        out.push(format!("alpha {} (applied: {})", head.alpha, applied.alpha));
    }
    for h in &head.metrics {
        let a = applied.metrics.iter().find(|a| a.metric == h.metric);
        if a != Some(h) {
            // Metric names are the registry's (validated): safe in a code span.
            out.push(format!(
                "`{}` {} (applied: {})",
                h.metric,
                describe(Some(h)),
                describe(a)
            ));
        }
    }
    if applied.overrides != head.overrides {
        out.push("other `[[gate.override]]` tables".to_string());
    }
    if applied.missing_baseline != head.missing_baseline
        || applied.not_comparable != head.not_comparable
    {
        out.push("other missing-baseline or not-comparable policies".to_string());
    }
    // A policy is a name each side spells: one line per policy that differs.
    let mut policy = |key: &str, head: &str, applied: &str| {
        if head != applied {
            out.push(format!("{key} {head} (applied: {applied})"));
        }
    };
    policy(
        "inconclusive",
        head.inconclusive.name(),
        applied.inconclusive.name(),
    );
    policy(
        "missing_cell",
        head.missing_cell.name(),
        applied.missing_cell.name(),
    );
    policy("invalid", head.invalid.name(), applied.invalid.name());
    policy(
        "paired_test",
        head.paired_test.name(),
        applied.paired_test.name(),
    );
    policy(
        "strict",
        &head.strict.to_string(),
        &applied.strict.to_string(),
    );
    out
}

fn describe(g: Option<&MetricGate>) -> String {
    let Some(g) = g else {
        return "none".to_string();
    };
    let t = |t: &Option<crate::config::gate::Threshold>| {
        t.as_ref().map_or("none".to_string(), |t| {
            threshold_text(&g.metric, t).replace('"', "")
        })
    };
    format!(
        "fail {}, warn {}{}",
        t(&g.fail),
        t(&g.warn),
        if g.gating { "" } else { ", not gating" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_each_changed_value() {
        let base = Suite::default_suite().gate;
        assert!(differences(&base, &base).is_empty());
        let mut head = base.clone();
        head.alpha = 0.1;
        let tp = head
            .metrics
            .iter_mut()
            .find(|m| m.metric == "throughput_rps")
            .unwrap();
        tp.fail.as_mut().unwrap().relative = 0.5;
        let d = differences(&base, &head);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0], "alpha 0.1 (applied: 0.05)");
        assert!(d[1].starts_with("`throughput_rps` fail -50%"), "{d:?}");
        assert!(d[1].contains("(applied: fail -"), "{d:?}");
        // The test of pairs, the validity policy and strictness count too.
        let mut head = base.clone();
        head.paired_test = crate::config::gate::PairedTest::Sign;
        head.invalid = crate::config::gate::InvalidPolicy::Fail;
        head.strict = true;
        head.inconclusive = crate::config::gate::InconclusivePolicy::Fail;
        head.missing_cell = crate::config::gate::MissingCellPolicy::Fail;
        assert_eq!(
            differences(&base, &head),
            [
                "inconclusive fail (applied: neutral)",
                "missing_cell fail (applied: warn)",
                "invalid fail (applied: warn)",
                "paired_test sign (applied: signed-rank)",
                "strict true (applied: false)"
            ]
        );
    }
}
