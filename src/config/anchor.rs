//! `[run] anchor = true`: a fixed in-run anchor, measured in every round of
//! every scenario, whose speed normalizes the run's figures
//! (`results::anchor`) so a comparison with a stored run from another job
//! cancels the machine's drift between the two (`compare::anchor`).
//!
//! The anchor is one fixed workload, the same in every run and every suite so
//! two runs' anchors measure the same thing: the built-in `hyper` client,
//! keep-alive `GET /bytes/22` at 16 workers (the default suite's `get-22b`)
//! against the reference server, in trials of 100 ms warmup + 150 ms (the
//! default suite's length: short, so a round stays inside one block of the
//! machine's speed). The results file records it (`[run] anchor` in the
//! resolved config); two runs whose anchors differ are compared raw.
//!
//! It costs one such trial (~0.35 s with the process start) per round and
//! scenario. It needs the reference server, so a suite of servers under test
//! (`[[server]]`) cannot have it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::Problem;
use super::raw::{At, RawConfig};
use super::{ClientKind, ClientSpec, HttpVersion, Load, Method, Scenario, StopRule};

/// The name the anchor's cells and trials carry (`client` of its cells): no
/// `[[client]]` of an anchored suite may use it.
pub const NAME: &str = "anchor";

/// The anchor's workload, as the results file records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// The built-in client, named [`NAME`].
    pub client: ClientSpec,
    /// The fixed scenario; each trial runs it under the name of the scenario
    /// whose round it belongs to ([`Anchor::scenario_in`]).
    pub scenario: Scenario,
}

impl Anchor {
    /// The one anchor (see the module docs for why this workload).
    pub fn fixed() -> Anchor {
        Anchor {
            client: ClientSpec {
                name: NAME.into(),
                kind: ClientKind::Hyper,
                pool: None,
                http: HttpVersion::Http1,
                tls: false,
                inject_cpu_ns: 0,
                inject_tail: None,
            },
            scenario: Scenario {
                name: NAME.into(),
                method: Method::Get,
                path: "/bytes/22".into(),
                body: 0,
                load: Load::Closed { concurrency: 16 },
                warmup: Duration::from_millis(100),
                stop: StopRule::Duration(Duration::from_millis(150)),
                timeout: Duration::from_secs(10),
                clients: vec![NAME.into()],
            },
        }
    }

    /// The anchor's scenario in the rounds of `scenario` (its name, for the
    /// progress line and the failure logs; the workload stays the anchor's).
    pub fn scenario_in(&self, scenario: &str) -> Scenario {
        Scenario {
            name: scenario.to_string(),
            ..self.scenario.clone()
        }
    }

    /// Whether two runs' anchors measured the same workload: the same
    /// scenario and client, whatever driver replaced the client's (a test's
    /// hidden `--mock` replaces every driver alike).
    pub fn same_workload(&self, other: &Anchor) -> bool {
        self.scenario == other.scenario
            && ClientSpec {
                kind: other.client.kind.clone(),
                ..self.client.clone()
            } == other.client
    }
}

/// `[run] anchor`, validated against the rest of the config: `Some` when it
/// is `true`; an error when the suite cannot have an anchor.
pub(super) fn build(anchor: Option<&At<bool>>, raw: &RawConfig) -> Result<Option<Anchor>, Problem> {
    let Some(at) = anchor.filter(|a| a.value) else {
        return Ok(None);
    };
    if !raw.servers.is_empty() {
        return Err(Problem::new(
            at.span.clone(),
            "run.anchor",
            "the anchor runs against the reference server, which a suite of servers under test ([[server]]) does not start",
            "remove anchor = true (servers under test are compared side by side: [compare] baseline_server)",
        ));
    }
    if let Some(c) = raw
        .clients
        .iter()
        .find(|c| c.name.as_ref().is_some_and(|n| n.value == NAME))
    {
        let span = c.name.as_ref().map_or(c.span.clone(), |n| n.span.clone());
        return Err(Problem::new(
            span,
            format!("{}.name", c.label),
            format!("the client name {NAME:?} is the anchor's ([run] anchor = true)"),
            format!(
                "rename the client (for example name = \"{NAME}-client\"), or remove anchor = true"
            ),
        ));
    }
    Ok(Some(Anchor::fixed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_workload_whatever_the_driver() {
        let a = Anchor::fixed();
        let mut mocked = a.clone();
        mocked.client.kind = ClientKind::Reqwest;
        assert!(a.same_workload(&mocked));
        let mut other = a.clone();
        other.scenario.load = Load::Closed { concurrency: 8 };
        assert!(!a.same_workload(&other));
        let mut pooled = a.clone();
        pooled.client.pool = Some(1);
        assert!(!a.same_workload(&pooled));
    }

    #[test]
    fn runs_under_the_name_of_its_round_s_scenario() {
        let s = Anchor::fixed().scenario_in("put-1mib");
        assert_eq!(s.name, "put-1mib");
        assert_eq!(s.path, "/bytes/22");
    }
}
