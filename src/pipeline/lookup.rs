//! The first stage: what a run is compared with, and the stored runs that
//! takes ([`lookup`] -> [`Lookup`]), recorded in a file for the action's
//! later steps ([`Lookup::record`], [`Baseline::Recorded`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::baseline::{BaselineKey, BaselineStore, FoundBaseline};
use crate::config::Suite;
use crate::files::json::{self, Limits};
use crate::files::read_untrusted;
use crate::plan::{Asked, ComparisonPlan};
use crate::report::markdown::MetricHistory;
use crate::results::RunResults;

use super::history::{trend, TREND_RUNS};

/// The first stage's record.
#[derive(Debug, Clone)]
pub struct Lookup {
    pub plan: ComparisonPlan,
    /// The stored run the plan compares with, with its key.
    pub found: Option<FoundBaseline>,
    /// Base vs head: the base branch's stored run, compared with beside the
    /// verdict, never gated ([`super::judge`]).
    pub informative: Option<FoundBaseline>,
    /// Whether git history was there to find the nearest older baseline.
    pub history: bool,
    /// What the store said about the lookup (a missing data branch, ...).
    pub notes: Vec<String>,
    /// The base branch's last stored values, for the trend charts.
    pub trend: Vec<MetricHistory>,
}

/// Where the stored run comes from, when the plan wants one.
pub enum Baseline<'a> {
    /// Nowhere: a stored plan compares with nothing stored.
    None,
    /// A results file (`--baseline FILE`).
    File(&'a Path),
    /// A baseline store.
    Store(Where<'a>),
    /// What [`Lookup::record`] wrote beside `results` for `flow`.
    Recorded {
        results: &'a Path,
        flow: &'a str,
        informative: bool,
    },
}

/// Where in a store a flow's baseline is looked up.
pub struct Where<'a> {
    /// Opens the store (asked only when the plan needs it).
    pub store: &'a dyn Fn() -> anyhow::Result<Box<dyn BaselineStore>>,
    pub branch: &'a str,
    /// The commit whose baseline is wanted ("" for the newest).
    pub sha: &'a str,
    /// Walk `sha`'s ancestors for the nearest older baseline.
    pub ancestors: bool,
    /// Base vs head: also the stored baseline, shown beside the verdict (an
    /// unreadable store costs only that); and the trend.
    pub informative: bool,
}

/// Whether `plan` reads a store.
fn consults(plan: &ComparisonPlan, informative: bool) -> bool {
    plan.wants_stored() || (informative && plan.base_ref().is_some())
}

/// Decides what `suite` is compared with, as an edge `asked`: once, by
/// [`ComparisonPlan::resolve`] from the suite's own `[compare]` and gate;
/// under base vs head the gate is then the base commit's version of the
/// suite's file `config` (`orchestrate::base_gate`). Then finds the stored
/// run that takes in `baseline`.
pub fn lookup(
    suite: &Suite,
    asked: Asked,
    config: Option<&Path>,
    baseline: Baseline<'_>,
) -> anyhow::Result<Lookup> {
    // A file given is read before anything else.
    let file = match baseline {
        Baseline::File(path) => Some(RunResults::read(path)?),
        _ => None,
    };
    let plan = ComparisonPlan::resolve(asked, suite, suite, &suite.source)?;
    let plan = crate::orchestrate::base_gate::from_base(plan, suite, config)?;
    // A duet's figures are measured beside the other side, each on half the
    // CPUs: they compare with that side's, never with a stored run's. (One
    // client a scenario runs sequential forks, `config::schedule`.)
    if suite.run.schedule.on_lanes()
        && plan.wants_stored()
        && suite.scenarios.iter().any(|s| s.clients.len() > 1)
    {
        anyhow::bail!(
            "{}: run.schedule: [run] schedule = \"duet\" measures a scenario's two clients at once, each on half \
             the CPUs, so their figures compare only with each other, and this run compares them with a stored run; \
             set [compare] baseline_client (side by side), run base vs head (--compare-base), or set \
             schedule = \"sequential\"",
            suite.source
        );
    }
    let mut lookup = Lookup::new(plan, None);
    let informative = match &baseline {
        Baseline::Store(w) => w.informative,
        Baseline::Recorded { informative, .. } => *informative,
        Baseline::None | Baseline::File(_) => false,
    };
    if !consults(&lookup.plan, informative) {
        return Ok(lookup);
    }
    let found = match baseline {
        Baseline::None => return Ok(lookup),
        Baseline::File(_) => return Ok(Lookup::new(lookup.plan, file)),
        Baseline::Store(w) => match look(&w, &mut lookup) {
            // Informative only: a store that cannot be read costs the
            // section, never the gate.
            Err(e) if w.informative && !lookup.plan.wants_stored() => {
                lookup.notes = vec![format!("the stored baseline could not be read: {e:#}")];
                None
            }
            r => r?,
        },
        Baseline::Recorded { results, flow, .. } => read_record(results, flow, &mut lookup)?,
    };
    if lookup.plan.wants_stored() {
        let stored = found.as_ref().map(|f| f.results.clone());
        lookup.plan = lookup.plan.with_stored(stored);
        lookup.found = found;
    } else {
        lookup.informative = found;
    }
    Ok(lookup)
}

impl Lookup {
    /// `plan` with `stored` handed over, nothing else looked up.
    pub fn new(plan: ComparisonPlan, stored: Option<RunResults>) -> Lookup {
        Lookup {
            plan: plan.with_stored(stored),
            found: None,
            informative: None,
            history: false,
            notes: Vec::new(),
            trend: Vec::new(),
        }
    }

    /// Records this lookup beside `results` for `flow` when its plan read a
    /// store (`false`: nothing written); the stored run in its own file, read
    /// back checked: the measure step between may rewrite both.
    pub fn record(&self, results: &Path, flow: &str, informative: bool) -> anyhow::Result<bool> {
        if !consults(&self.plan, informative) {
            return Ok(false);
        }
        let found = self.found.as_ref().or(self.informative.as_ref());
        let file = LookupFile {
            schema: LOOKUP_SCHEMA.into(),
            plan: flow.into(),
            history: self.history,
            notes: self.notes.clone(),
            trend: self.trend.clone(),
            found: match found {
                Some(f) => {
                    f.results.write_atomic(&baseline_path(results))?;
                    Some(FoundFile {
                        key: f.key.clone(),
                        exact: f.exact,
                    })
                }
                None => None,
            },
        };
        let path = lookup_path(results);
        // Replaces a stale file of an earlier run of this job.
        std::fs::write(&path, serde_json::to_vec(&file)?)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(true)
    }
}

/// Looks `w` up in its store: the stored run found, and in `lookup` what
/// the store said and the trend.
fn look(w: &Where<'_>, lookup: &mut Lookup) -> anyhow::Result<Option<FoundBaseline>> {
    let store = (w.store)()?;
    let ancestors = match w.ancestors {
        true => ancestors(w.sha),
        false => Vec::new(),
    };
    let found = store.lookup(w.branch, w.sha, &ancestors)?;
    lookup.history = !ancestors.is_empty();
    lookup.notes = store.notes();
    if w.informative {
        match store.load_history(w.branch, TREND_RUNS) {
            Ok(runs) => lookup.trend = trend(&runs, &lookup.plan.gate),
            // Informative only: the charts, never the gate.
            Err(e) => (lookup.notes).push(format!("the trend charts are left out: {e:#}")),
        }
    }
    Ok(found)
}

/// The lookup file; the baseline's results beside it ([`baseline_path`]).
#[derive(Serialize, Deserialize)]
struct LookupFile {
    schema: String,
    /// The flow it was looked up for; a later step refuses another.
    plan: String,
    history: bool,
    found: Option<FoundFile>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    trend: Vec<MetricHistory>,
}

#[derive(Serialize, Deserialize)]
struct FoundFile {
    key: BaselineKey,
    exact: bool,
}

/// Version 2 keeps the baseline's results in their own file.
const LOOKUP_SCHEMA: &str = "benchgate-lookup/2";

/// Largest lookup file read (the notes and trend points of one lookup).
const MAX_LOOKUP_BYTES: u64 = 16 << 20;

/// The limits of the lookup file's JSON: a trend point, `(String, f64)`,
/// takes 32 bytes twice (a growing `Vec`).
const LOOKUP_LIMITS: Limits = Limits {
    depth: 8,
    values: 1_000_000,
    key_bytes: 256,
    text_bytes: 4096,
    items: 100_000,
    item_bytes: 64,
    member_bytes: 0,
    extra_bytes: 64 << 20,
    rules: &[],
};

fn lookup_path(results: &Path) -> PathBuf {
    beside(results, "lookup")
}

fn baseline_path(results: &Path) -> PathBuf {
    beside(results, "lookup-baseline")
}

fn beside(results: &Path, what: &str) -> PathBuf {
    let stem = results
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("benchgate-results");
    results.with_file_name(format!("{stem}.{what}.json"))
}

/// Reads back what [`Lookup::record`] wrote beside `results` for `flow`
/// into `lookup`; the stored run found.
fn read_record(
    results: &Path,
    flow: &str,
    lookup: &mut Lookup,
) -> anyhow::Result<Option<FoundBaseline>> {
    let path = lookup_path(results);
    let bytes = read_untrusted(&path, "lookup file", MAX_LOOKUP_BYTES).with_context(|| {
        format!(
            "reading {} (written by `benchgate action --step lookup`, which runs before this step)",
            path.display()
        )
    })?;
    let not_lookup = || format!("{} is not a lookup file", path.display());
    if let Err(breach) = json::scan(&bytes, &LOOKUP_LIMITS) {
        return Err(anyhow::anyhow!("{breach}").context(not_lookup()));
    }
    let file: LookupFile = serde_json::from_slice(&bytes).with_context(not_lookup)?;
    anyhow::ensure!(
        file.schema == LOOKUP_SCHEMA && file.plan == flow,
        "{} was written for {:?} ({}), not for this step's plan {flow:?}: run the three steps with the same inputs",
        path.display(),
        file.plan,
        file.schema
    );
    (lookup.history, lookup.notes, lookup.trend) = (file.history, file.notes, file.trend);
    Ok(match file.found {
        Some(f) => Some(FoundBaseline {
            key: f.key,
            exact: f.exact,
            results: RunResults::read(&baseline_path(results))?,
        }),
        None => None,
    })
}

/// Most ancestors of the base commit looked up for the nearest older baseline.
const MAX_ANCESTORS: usize = 200;

/// The base commit's ancestors, newest first, from `git` (none from a
/// shallow checkout, no git, or an unknown commit).
fn ancestors(base_sha: &str) -> Vec<String> {
    let out = Command::new("git")
        .args(["rev-list", "--first-parent"])
        .arg(format!("--max-count={}", MAX_ANCESTORS + 1))
        .arg(base_sha)
        .arg("--")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookup_file_sits_next_to_the_results() {
        assert_eq!(
            lookup_path(Path::new("/w/out/bench.json")),
            PathBuf::from("/w/out/bench.lookup.json")
        );
        assert_eq!(
            baseline_path(Path::new("/w/out/bench.json")),
            PathBuf::from("/w/out/bench.lookup-baseline.json")
        );
    }
}
