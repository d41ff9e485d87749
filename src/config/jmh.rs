//! `[jmh]`: how JMH result files (`-rf json`) are read (issue 31).
//!
//! ```toml
//! [jmh]
//! iterations_as_trials = true   # default false: a trial is a fork
//! ```
//!
//! A JMH trial is a fork: its measurement iterations share one JVM's JIT
//! and GC state and are not independent (`results::jmh`). A team whose JMH
//! runs use 1 fork (`-f 1`) can take every iteration as a trial instead;
//! the comparison then decides, and every report calls it optimistic.
//!
//! A config of a JMH-only team has no HTTP clients: a file with `[jmh]` or
//! `[gate]` and no `[[client]]`, `[[scenario]]` or `[[server]]` loads as a
//! suite that gates JMH result files and runs nothing ([`super::Suite::gates_only`]).

use serde::{Deserialize, Serialize};

use super::error::Problem;
use super::raw::{spec, Fields, Spec};
use super::tree::{Node, Value};

/// `[jmh]`, validated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JmhSettings {
    /// Each measurement iteration of a JMH file is a trial (optimistic:
    /// iterations of one fork are not independent). Default: each fork.
    #[serde(default)]
    pub iterations_as_trials: bool,
}

impl JmhSettings {
    /// Whether this is the default (kept out of results files).
    pub fn is_default(&self) -> bool {
        *self == JmhSettings::default()
    }
}

const JMH: &[Spec] = &[spec(
    "iterations_as_trials",
    "a boolean",
    "iterations_as_trials = true",
)];

/// `[jmh]` from the spanned tree (absent: the defaults).
pub(super) fn build(node: Option<&Node>) -> Result<JmhSettings, Problem> {
    let Some(node) = node else {
        return Ok(JmhSettings::default());
    };
    let Value::Table(entries) = &node.value else {
        return Err(Problem::new(
            node.span.clone(),
            "jmh",
            format!("expected a table, found {}", node.value.describe()),
            "write a single [jmh] table (single brackets) with iterations_as_trials = true or false",
        ));
    };
    let f = Fields {
        label: "jmh".into(),
        section: "[jmh]",
        entries,
        specs: JMH,
    };
    f.check_keys()?;
    Ok(JmhSettings {
        iterations_as_trials: f.boolean("iterations_as_trials")?.is_some_and(|b| b.value),
    })
}

#[cfg(test)]
mod tests {
    use super::super::Suite;

    #[test]
    fn iterations_as_trials_is_read_and_off_by_default() {
        let s = Suite::from_toml("[jmh]\niterations_as_trials = true\n", "b.toml").unwrap();
        assert!(s.jmh.iterations_as_trials);
        assert!(s.gates_only());
        let s = Suite::from_toml("[jmh]\n", "b.toml").unwrap();
        assert!(!s.jmh.iterations_as_trials);
    }

    #[test]
    fn a_wrong_value_or_field_is_a_located_error() {
        let e = Suite::from_toml("[jmh]\niterations_as_trials = \"yes\"\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.toml:2:"), "{e}");
        assert!(e.contains("jmh.iterations_as_trials"), "{e}");
        assert!(e.contains("iterations_as_trials = true"), "{e}");
        let e = Suite::from_toml("[jmh]\niteration_as_trials = true\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `iterations_as_trials`"), "{e}");
        let e = Suite::from_toml("jmh = 1\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("write a single [jmh] table"), "{e}");
    }

    #[test]
    fn a_config_without_clients_needs_jmh_or_gate_to_load() {
        let s = Suite::from_toml("[gate]\n\"jmh.avgt_ns\" = \"+10%\"\n", "b.toml").unwrap();
        assert!(s.gates_only() && s.clients.is_empty() && s.scenarios.is_empty());
        let e = Suite::from_toml("[run]\nrounds = 3\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no clients are defined"), "{e}");
        // Clients without scenarios are still an error: a half-written suite.
        let e = Suite::from_toml(
            "[jmh]\n[[client]]\nname = \"h\"\nkind = \"hyper\"\n",
            "b.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no scenarios are defined"), "{e}");
    }
}
