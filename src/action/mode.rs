//! What the action does, decided from the `mode` input and the event. Pure.

use super::event::{Context, Event, PullRequest, WorkflowRun};
use super::inputs::{Inputs, ModeInput};

/// The decided plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Run, compare with the base commit's baseline, comment, gate. Never writes.
    PullRequest(PullRequest),
    /// Run and store the result as the baseline of (`branch`, `sha`).
    StoreBaseline { branch: String, sha: String },
    /// Run and compare with the newest baseline of `branch` (`sha`: the commit
    /// measured, when it is on that branch). Schedules, dispatches, pushes to
    /// other branches. `drift`: then look for drift in the stored history of
    /// `branch` (the nightly run: schedules, dispatches, `mode: schedule`).
    CompareLatest {
        branch: String,
        sha: Option<String>,
        drift: bool,
    },
    /// Fork-safe first half: run, write results and meta for upload.
    Measure(Option<PullRequest>),
    /// Fork-safe second half: read the downloaded results, compare, comment.
    Report(WorkflowRun),
    /// Nothing to do (exit 0), and why.
    Skip(String),
}

/// The baseline branch: the input, else the repository's default branch from
/// the payload, else (schedules carry no repository) the branch of
/// `GITHUB_REF` of a schedule, else `main`.
pub fn baseline_branch(inputs: &Inputs, ctx: &Context) -> String {
    inputs
        .baseline_branch
        .clone()
        .or_else(|| ctx.default_branch.clone())
        .or_else(|| match ctx.event {
            Event::Schedule => ctx.ref_branch().map(str::to_string),
            _ => None,
        })
        .unwrap_or_else(|| "main".to_string())
}

const SPLIT: &str = "use the fork-safe split: `mode: measure` on pull_request and `mode: report` on workflow_run (docs/action.md)";

/// Decides the plan.
pub fn decide(mode: ModeInput, ctx: &Context, baseline: &str) -> anyhow::Result<Plan> {
    let on_baseline = ctx.ref_branch() == Some(baseline);
    let latest = |drift: bool| Plan::CompareLatest {
        branch: baseline.to_string(),
        sha: ctx.sha.clone().filter(|_| on_baseline),
        drift,
    };
    let pr_event = match &ctx.event {
        Event::PullRequest(pr) | Event::PullRequestTarget(pr) => Some(pr.clone()),
        _ => None,
    };
    let event = &ctx.event_name;
    Ok(match mode {
        ModeInput::Auto => match &ctx.event {
            Event::PullRequest(pr) => Plan::PullRequest(pr.clone()),
            Event::PullRequestTarget(_) => anyhow::bail!(
                "event pull_request_target with `mode: auto`: benchgate does not benchmark pull-request code with a write token; {SPLIT}"
            ),
            Event::Push { deleted: true, .. } => {
                Plan::Skip("the push deleted the branch: nothing to measure".into())
            }
            Event::Push { ref_name, after, .. } => {
                match ref_name.strip_prefix("refs/heads/") {
                    Some(b) if b == baseline => Plan::StoreBaseline {
                        branch: b.to_string(),
                        sha: after.clone(),
                    },
                    _ => latest(false),
                }
            }
            Event::Schedule | Event::WorkflowDispatch => latest(true),
            Event::WorkflowRun(run) => Plan::Report(run.clone()),
            Event::Other(name) => anyhow::bail!(
                "event {name:?} has no automatic mode: set input `mode` to pull_request, push, schedule, measure or report"
            ),
        },
        ModeInput::PullRequest => match pr_event {
            Some(pr) => Plan::PullRequest(pr),
            None => anyhow::bail!(
                "input `mode: pull_request` needs a pull_request event, but this is {event:?}: run the step `on: pull_request`, or set `mode` to auto"
            ),
        },
        ModeInput::Push => {
            anyhow::ensure!(
                pr_event.is_none(),
                "input `mode: push` on a {event} event: pull-request runs never write the baseline; use `mode: pull_request` (or auto)"
            );
            let (branch, sha) = match &ctx.event {
                Event::Push { ref_name, after, .. } => (
                    ref_name.strip_prefix("refs/heads/").map(str::to_string),
                    Some(after.clone()),
                ),
                _ => (ctx.ref_branch().map(str::to_string), ctx.sha.clone()),
            };
            match (branch, sha) {
                (Some(branch), Some(sha)) => Plan::StoreBaseline { branch, sha },
                _ => anyhow::bail!(
                    "input `mode: push`: GITHUB_REF ({:?}) is not a branch or GITHUB_SHA is not set; run it on a branch push",
                    ctx.ref_name.as_deref().unwrap_or("")
                ),
            }
        }
        ModeInput::Schedule => latest(true),
        // One shard of a matrix: measured like the fork-safe split's first
        // half (results for upload); the merge job compares.
        ModeInput::Measure | ModeInput::Shard => Plan::Measure(pr_event),
        // The merge job does what `auto` does for its event, on the merged
        // shards (`Action::measured`).
        ModeInput::Merge => return decide(ModeInput::Auto, ctx, baseline),
        ModeInput::Report => match &ctx.event {
            Event::WorkflowRun(run) => Plan::Report(run.clone()),
            _ => anyhow::bail!(
                "input `mode: report` needs a workflow_run event, but this is {event:?}; {SPLIT}"
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::event::parse_event;

    fn ctx(name: &str, fixture: &str, git_ref: &str) -> Context {
        let path = format!("{}/fixtures/events/{fixture}", env!("CARGO_MANIFEST_DIR"));
        let p = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (event, default_branch) = parse_event(name, &p).unwrap();
        Context {
            event_name: name.into(),
            event,
            repository: "octo/app".into(),
            default_branch,
            ref_name: Some(git_ref.into()),
            sha: Some("a".repeat(40)),
            run_id: "1".into(),
            api_url: "https://api.github.com".into(),
            output_path: None,
            summary_path: None,
            workspace: None,
            runner_image: None,
        }
    }

    #[test]
    fn auto_follows_the_event() {
        let pr = ctx("pull_request", "pull_request.json", "refs/pull/42/merge");
        assert!(
            matches!(decide(ModeInput::Auto, &pr, "main").unwrap(), Plan::PullRequest(p) if p.number == 42)
        );
        let push = ctx("push", "push_main.json", "refs/heads/main");
        assert!(
            matches!(decide(ModeInput::Auto, &push, "main").unwrap(), Plan::StoreBaseline { branch, .. } if branch == "main")
        );
        assert!(matches!(
            decide(ModeInput::Auto, &push, "trunk").unwrap(),
            Plan::CompareLatest {
                sha: None,
                drift: false,
                ..
            }
        ));
        let cron = ctx("schedule", "schedule.json", "refs/heads/main");
        assert!(matches!(
            decide(ModeInput::Auto, &cron, "main").unwrap(),
            Plan::CompareLatest {
                sha: Some(_),
                drift: true,
                ..
            }
        ));
        let wr = ctx("workflow_run", "workflow_run.json", "refs/heads/main");
        assert!(matches!(
            decide(ModeInput::Auto, &wr, "main").unwrap(),
            Plan::Report(_)
        ));
    }

    #[test]
    fn pull_requests_never_write_and_modes_need_their_event() {
        let pr = ctx("pull_request", "pull_request.json", "refs/pull/42/merge");
        let err = decide(ModeInput::Push, &pr, "main")
            .unwrap_err()
            .to_string();
        assert!(err.contains("never write the baseline"), "{err}");
        let cron = ctx("schedule", "schedule.json", "refs/heads/main");
        assert!(decide(ModeInput::PullRequest, &cron, "main").is_err());
        assert!(decide(ModeInput::Report, &pr, "main").is_err());
        assert_eq!(
            decide(ModeInput::Measure, &cron, "main").unwrap(),
            Plan::Measure(None)
        );
        let mut target = pr.clone();
        target.event = match pr.event {
            Event::PullRequest(p) => Event::PullRequestTarget(p),
            e => e,
        };
        let err = decide(ModeInput::Auto, &target, "main")
            .unwrap_err()
            .to_string();
        assert!(err.contains("fork-safe split"), "{err}");
    }

    #[test]
    fn shard_jobs_measure_and_the_merge_job_follows_the_event() {
        let pr = ctx("pull_request", "pull_request.json", "refs/pull/42/merge");
        assert!(matches!(
            decide(ModeInput::Shard, &pr, "main").unwrap(),
            Plan::Measure(Some(p)) if p.number == 42
        ));
        assert!(matches!(
            decide(ModeInput::Merge, &pr, "main").unwrap(),
            Plan::PullRequest(p) if p.number == 42
        ));
        let push = ctx("push", "push_main.json", "refs/heads/main");
        assert!(matches!(
            decide(ModeInput::Merge, &push, "main").unwrap(),
            Plan::StoreBaseline { branch, .. } if branch == "main"
        ));
        let wr = ctx("workflow_run", "workflow_run.json", "refs/heads/main");
        assert!(matches!(
            decide(ModeInput::Merge, &wr, "main").unwrap(),
            Plan::Report(_)
        ));
    }

    #[test]
    fn the_baseline_branch_defaults_from_the_event() {
        let mut inputs = crate::action::inputs::from_env(&Default::default()).unwrap();
        let mut cron = ctx("schedule", "schedule.json", "refs/heads/trunk");
        assert_eq!(baseline_branch(&inputs, &cron), "trunk");
        cron.ref_name = None;
        assert_eq!(baseline_branch(&inputs, &cron), "main");
        let push = ctx("push", "push_main.json", "refs/heads/main");
        assert_eq!(baseline_branch(&inputs, &push), "main");
        inputs.baseline_branch = Some("release".into());
        assert_eq!(baseline_branch(&inputs, &push), "release");
    }
}
