//! The action's inputs: `INPUT_*` environment variables -> validated [`Inputs`].
//!
//! GitHub passes input `github-token` as `INPUT_GITHUB-TOKEN` (upper case,
//! dashes kept); other runners and hand-written `docker run -e` lines use
//! `INPUT_GITHUB_TOKEN`. Both spellings, in any case, are accepted; an empty
//! value means "not set" (GitHub sets every declared input, empty when unset).
//! Every error names the input and the fix. The token is held in a [`Secret`]
//! that never prints.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::github::target::Secret;
use crate::orchestrate::shard::Shard;

/// `mode`: what to do; `auto` decides from the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeInput {
    Auto,
    PullRequest,
    Push,
    Schedule,
    Measure,
    Report,
    /// Run one shard of the suite (input `shard`) for a later merge job: like
    /// `measure`, the results (and the meta file) for upload, nothing else.
    Shard,
    /// Merge the downloaded shards (input `shards`) instead of running the
    /// suite, then what `auto` does for the event: compare, comment once,
    /// gate, store the baseline on push.
    Merge,
}

/// `comment`: when to write the sticky pull-request comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentMode {
    Always,
    /// Create a comment only when the gating metrics are not a clean pass
    /// (`Comparison::clean_pass`: regressed, inconclusive, missing, invalid
    /// trials, failed, or improved); informative metrics never count. An
    /// existing comment is always updated.
    OnChange,
    Never,
}

/// `baseline-store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// The data branch, through the GitHub API.
    Branch,
    /// A local directory (relative to the working directory).
    Local(PathBuf),
}

/// Validated inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// `config`; `None`: `benchgate.toml` if it exists, else the default suite.
    pub config: Option<PathBuf>,
    pub token: Option<Secret>,
    pub mode: ModeInput,
    pub comment: CommentMode,
    pub fail_on_regression: bool,
    /// `None`: the repository's default branch from the event, else `main`.
    pub baseline_branch: Option<String>,
    pub baseline_store: StoreSpec,
    pub data_branch: String,
    pub cloudwatch: bool,
    pub results_path: Option<PathBuf>,
    pub working_directory: Option<PathBuf>,
    /// `github-timeout`: the time this process's GitHub calls (lookup, store,
    /// comment, pull-request resolution) may take together.
    pub github_timeout: Duration,
    /// `shard`: run only this shard of the suite (`K/N`).
    pub shard: Option<Shard>,
    /// `shards`: the directory the shard jobs' results were downloaded to
    /// (merge mode; report mode of a sharded measure).
    pub shards: Option<PathBuf>,
    /// `drift-issue`: the nightly run keeps one issue open while a series of
    /// the stored history drifts, and closes it when none does.
    pub drift_issue: bool,
    /// `fail-on-drift`: drift in the nightly run fails the step.
    pub fail_on_drift: bool,
}

/// `github-timeout` when unset.
pub const DEFAULT_GITHUB_TIMEOUT: Duration = Duration::from_secs(300);

/// The input names this action declares (`action.yml`).
#[cfg(test)]
const NAMES: [&str; 16] = [
    "config",
    "github-token",
    "mode",
    "comment",
    "fail-on-regression",
    "baseline-branch",
    "baseline-store",
    "data-branch",
    "cloudwatch",
    "results-path",
    "working-directory",
    "github-timeout",
    "shard",
    "shards",
    "drift-issue",
    "fail-on-drift",
];

/// Reads the inputs from an environment (`std::env::vars()` in production).
pub fn from_env(env: &BTreeMap<String, String>) -> anyhow::Result<Inputs> {
    let raw = RawInputs::collect(env)?;
    let token = match raw.get("github-token") {
        Some(t) => Some(t.to_string()),
        None => env.get("GITHUB_TOKEN").filter(|t| !t.is_empty()).cloned(),
    };
    if let Some(t) = &token {
        anyhow::ensure!(
            !t.chars().any(|c| c.is_whitespace() || c.is_control()),
            "input `github-token` (or GITHUB_TOKEN) contains whitespace or control characters: pass the token itself, e.g. `github-token: ${{{{ secrets.GITHUB_TOKEN }}}}`"
        );
    }
    let mode = match raw.get("mode").unwrap_or("auto") {
        "auto" => ModeInput::Auto,
        "pull_request" | "pull-request" => ModeInput::PullRequest,
        "push" => ModeInput::Push,
        "schedule" | "workflow_dispatch" => ModeInput::Schedule,
        "measure" => ModeInput::Measure,
        "report" => ModeInput::Report,
        "shard" => ModeInput::Shard,
        "merge" => ModeInput::Merge,
        other => {
            return Err(bad(
                "mode",
                other,
                "auto, pull_request, push, schedule, measure, report, shard, merge",
            ))
        }
    };
    let shard = match raw.get("shard") {
        Some(text) => Some(text.parse::<Shard>().map_err(|_| {
            anyhow::anyhow!(
                "input `shard`: {:?} is not K/N; give shard K of N, 1 <= K <= N, e.g. `shard: ${{{{ matrix.shard }}}}/3`",
                crate::report::escape::truncate_chars(text, 80)
            )
        })?),
        None => None,
    };
    let shards = raw.get("shards").map(PathBuf::from);
    match mode {
        ModeInput::Shard => anyhow::ensure!(
            shard.is_some(),
            "input `mode: shard` needs input `shard` (K/N, e.g. `${{{{ matrix.shard }}}}/3`): which shard this job runs"
        ),
        ModeInput::Merge => anyhow::ensure!(
            shards.is_some(),
            "input `mode: merge` needs input `shards`: the directory the shard jobs' results were downloaded to (actions/download-artifact with `path:`)"
        ),
        _ => {}
    }
    anyhow::ensure!(
        shard.is_none() || matches!(mode, ModeInput::Shard | ModeInput::Measure),
        "input `shard` is for `mode: shard` (or `measure`, the fork-safe split); a job that runs one shard cannot gate or store the whole suite: add a merge job with `mode: merge`"
    );
    anyhow::ensure!(
        shards.is_none() || matches!(mode, ModeInput::Merge | ModeInput::Report),
        "input `shards` is for `mode: merge` (or `report`, the fork-safe split); remove it or set `mode: merge`"
    );
    let comment = match raw.get("comment").unwrap_or("always") {
        "always" => CommentMode::Always,
        "on-change" | "on_change" => CommentMode::OnChange,
        "never" => CommentMode::Never,
        other => return Err(bad("comment", other, "always, on-change, never")),
    };
    let baseline_store = match raw.get("baseline-store").unwrap_or("branch") {
        "branch" => StoreSpec::Branch,
        s => match s.strip_prefix("local:") {
            Some(dir) if !dir.trim().is_empty() => StoreSpec::Local(PathBuf::from(dir.trim())),
            _ => return Err(bad("baseline-store", s, "branch, local:<directory>")),
        },
    };
    let data_branch = raw
        .get("data-branch")
        .unwrap_or("benchgate-data")
        .to_string();
    check_branch("data-branch", &data_branch)?;
    let baseline_branch = raw.get("baseline-branch").map(str::to_string);
    if let Some(b) = &baseline_branch {
        check_branch("baseline-branch", b)?;
    }
    Ok(Inputs {
        config: raw.get("config").map(PathBuf::from),
        token: token.map(Secret::new),
        mode,
        comment,
        fail_on_regression: boolean(&raw, "fail-on-regression", true)?,
        baseline_branch,
        baseline_store,
        data_branch,
        cloudwatch: boolean(&raw, "cloudwatch", false)?,
        results_path: raw.get("results-path").map(PathBuf::from),
        working_directory: raw.get("working-directory").map(PathBuf::from),
        github_timeout: github_timeout(&raw)?,
        shard,
        shards,
        drift_issue: boolean(&raw, "drift-issue", false)?,
        fail_on_drift: boolean(&raw, "fail-on-drift", false)?,
    })
}

/// `github-timeout`: a duration of the config's form, from 1 s to 6 h (the
/// longest a job may run).
fn github_timeout(raw: &RawInputs) -> anyhow::Result<Duration> {
    let Some(text) = raw.get("github-timeout") else {
        return Ok(DEFAULT_GITHUB_TIMEOUT);
    };
    let shown = crate::report::escape::truncate_chars(text, 80);
    let d = crate::config::units::parse_duration(text).map_err(|e| {
        anyhow::anyhow!(
            "input `github-timeout`: {e}; give how long the GitHub calls of a step may take together, e.g. `5m` or `90s` (or remove it for the default, 5m)"
        )
    })?;
    anyhow::ensure!(
        (Duration::from_secs(1)..=Duration::from_secs(6 * 3600)).contains(&d),
        "input `github-timeout`: {shown:?} is out of range; give a duration from `1s` to `6h`, e.g. `5m` (or remove it for the default, 5m)"
    );
    Ok(d)
}

/// Inputs by canonical name (lower case, dashes).
struct RawInputs(BTreeMap<String, String>);

impl RawInputs {
    fn collect(env: &BTreeMap<String, String>) -> anyhow::Result<RawInputs> {
        let mut found: BTreeMap<String, (String, String)> = BTreeMap::new();
        for (key, value) in env {
            let Some(name) = key
                .get(..6)
                .filter(|p| p.eq_ignore_ascii_case("INPUT_"))
                .map(|_| &key[6..])
            else {
                continue;
            };
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let canon = name.to_ascii_lowercase().replace('_', "-");
            if let Some((other_key, other)) = found.get(&canon) {
                // Never echo the values: one of them may be the token.
                anyhow::ensure!(
                    other == value,
                    "input `{canon}` is set twice with different values ({other_key} and {key}): set only one of them"
                );
                continue;
            }
            found.insert(canon, (key.clone(), value.to_string()));
        }
        Ok(RawInputs(
            found.into_iter().map(|(k, (_, v))| (k, v)).collect(),
        ))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

fn bad(input: &str, value: &str, allowed: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "input `{input}`: {:?} is not one of {allowed}; set it to one of them (or remove it for the default)",
        crate::report::escape::truncate_chars(value, 80)
    )
}

/// YAML 1.2 core schema booleans, as `core.getBooleanInput` accepts them.
fn boolean(raw: &RawInputs, input: &str, default: bool) -> anyhow::Result<bool> {
    match raw.get(input) {
        None => Ok(default),
        Some("true" | "True" | "TRUE") => Ok(true),
        Some("false" | "False" | "FALSE") => Ok(false),
        Some(other) => Err(bad(input, other, "true, false")),
    }
}

/// A plausible git branch name (no refs/heads/ prefix, no spaces or `..`).
fn check_branch(input: &str, b: &str) -> anyhow::Result<()> {
    let ok = !b.starts_with("refs/")
        && !b.contains("..")
        && !b.starts_with('/')
        && !b.ends_with('/')
        && b.len() <= 255
        && !b
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    anyhow::ensure!(
        ok,
        "input `{input}`: {:?} is not a branch name; give the short name, e.g. `main` (not refs/heads/main)",
        crate::report::escape::truncate_chars(b, 80)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The top-level keys under `inputs:` of an action file.
    fn declared(file: &str) -> Vec<String> {
        let text = std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut inputs = text.lines().skip_while(|l| *l != "inputs:").skip(1);
        let mut names = Vec::new();
        for line in inputs.by_ref() {
            if !line.starts_with(' ') && !line.is_empty() {
                break;
            }
            if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':')) {
                if !name.starts_with(' ') {
                    names.push(name.to_string());
                }
            }
        }
        names
    }

    #[test]
    fn both_action_files_declare_exactly_the_inputs_benchgate_reads() {
        let mut expected: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
        expected.sort();
        for file in ["action.yml", "container/action.yml"] {
            let mut got = declared(file);
            got.sort();
            assert_eq!(got, expected, "{file}");
        }
    }

    #[test]
    fn the_composite_passes_every_input_to_each_benchgate_step_and_the_token_never_to_measure() {
        let text =
            std::fs::read_to_string(format!("{}/action.yml", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let steps: Vec<&str> = text.split("\n    - name: ").skip(1).collect();
        for step in ["lookup", "measure", "publish"] {
            let body = steps
                .iter()
                .find(|s| s.contains(&format!("action --step {step}")))
                .unwrap_or_else(|| panic!("action.yml runs no `benchgate action --step {step}`"));
            for name in NAMES {
                let line = format!(
                    "INPUT_{}: ${{{{ inputs.{name} }}}}",
                    name.to_ascii_uppercase().replace('-', "_")
                );
                let wanted = !(step == "measure" && name == "github-token");
                assert_eq!(body.contains(&line), wanted, "step {step}: {line}");
            }
            if step == "measure" {
                assert!(
                    !body.contains("TOKEN")
                        && !body.contains("github-token")
                        && !body.contains("secrets."),
                    "{body}"
                );
            }
        }
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        let i = from_env(&env(&[("INPUT_MODE", ""), ("PATH", "/bin")])).unwrap();
        assert_eq!(i.mode, ModeInput::Auto);
        assert_eq!(i.comment, CommentMode::Always);
        assert!(i.fail_on_regression && !i.cloudwatch);
        assert!(!i.drift_issue && !i.fail_on_drift);
        assert_eq!(i.baseline_store, StoreSpec::Branch);
        assert_eq!(i.data_branch, "benchgate-data");
        assert_eq!(i.github_timeout, Duration::from_secs(300));
        assert_eq!((i.config, i.token, i.baseline_branch), (None, None, None));
    }

    #[test]
    fn dash_and_underscore_spellings_in_any_case() {
        let i = from_env(&env(&[
            ("INPUT_GITHUB-TOKEN", "tok1"),
            ("INPUT_FAIL_ON_REGRESSION", "false"),
            ("input_baseline-store", "local:/tmp/b"),
            ("INPUT_COMMENT", "on-change"),
            ("INPUT_MODE", "pull_request"),
        ]))
        .unwrap();
        assert_eq!(i.token.unwrap().expose(), "tok1");
        assert!(!i.fail_on_regression);
        assert_eq!(i.baseline_store, StoreSpec::Local("/tmp/b".into()));
        assert_eq!(i.comment, CommentMode::OnChange);
        assert_eq!(i.mode, ModeInput::PullRequest);
        let i = from_env(&env(&[
            ("INPUT_DRIFT-ISSUE", "true"),
            ("INPUT_FAIL_ON_DRIFT", "True"),
        ]))
        .unwrap();
        assert!(i.drift_issue && i.fail_on_drift);
        let i = from_env(&env(&[("INPUT_GITHUB_TOKEN", "tok2")])).unwrap();
        assert_eq!(i.token.unwrap().expose(), "tok2");
    }

    #[test]
    fn the_token_falls_back_to_github_token_and_never_prints() {
        let i = from_env(&env(&[("GITHUB_TOKEN", "ghs_secret")])).unwrap();
        let t = i.token.clone().unwrap();
        assert_eq!(t.expose(), "ghs_secret");
        assert_eq!(format!("{t} {t:?}"), "*** ***");
        assert!(!format!("{i:?}").contains("ghs_secret"));
        let err = from_env(&env(&[
            ("INPUT_GITHUB-TOKEN", "ghs_a"),
            ("INPUT_GITHUB_TOKEN", "ghs_b"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("github-token") && !err.contains("ghs_"),
            "{err}"
        );
        let err = from_env(&env(&[("INPUT_GITHUB-TOKEN", "ghs_x\u{7}y")]))
            .unwrap_err()
            .to_string();
        assert!(!err.contains("ghs_"), "{err}");
    }

    #[test]
    fn github_timeout_takes_the_configs_durations() {
        let i = from_env(&env(&[("INPUT_GITHUB_TIMEOUT", "90s")])).unwrap();
        assert_eq!(i.github_timeout, Duration::from_secs(90));
        let i = from_env(&env(&[("INPUT_GITHUB-TIMEOUT", "1.5m")])).unwrap();
        assert_eq!(i.github_timeout, Duration::from_secs(90));
    }

    #[test]
    fn bad_values_name_the_input_and_the_choices() {
        for (k, v, want) in [
            ("INPUT_MODE", "nightly", "input `mode`"),
            ("INPUT_COMMENT", "sometimes", "always, on-change, never"),
            (
                "INPUT_FAIL-ON-REGRESSION",
                "yes",
                "input `fail-on-regression`",
            ),
            ("INPUT_CLOUDWATCH", "1", "input `cloudwatch`"),
            ("INPUT_DRIFT-ISSUE", "yes", "input `drift-issue`"),
            ("INPUT_FAIL-ON-DRIFT", "on", "input `fail-on-drift`"),
            ("INPUT_BASELINE-STORE", "s3://x", "local:<directory>"),
            ("INPUT_BASELINE-STORE", "local:", "input `baseline-store`"),
            ("INPUT_BASELINE-BRANCH", "refs/heads/main", "short name"),
            ("INPUT_DATA-BRANCH", "a b", "input `data-branch`"),
            (
                "INPUT_GITHUB-TIMEOUT",
                "300",
                "input `github-timeout`: `300` has no unit",
            ),
            ("INPUT_GITHUB-TIMEOUT", "soon", "input `github-timeout`"),
            ("INPUT_GITHUB-TIMEOUT", "0s", "from `1s` to `6h`"),
            ("INPUT_GITHUB-TIMEOUT", "7h", "from `1s` to `6h`"),
        ] {
            let err = from_env(&env(&[(k, v)])).unwrap_err().to_string();
            assert!(err.contains(want), "{k}={v}: {err}");
        }
    }
}
