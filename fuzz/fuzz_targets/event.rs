//! The event payload file (`GITHUB_EVENT_PATH`) as the action reads it, and
//! the mode decided from it for every `mode` input. The first byte picks the
//! event name (`GITHUB_EVENT_NAME`), the rest is the file.
#![no_main]

use benchgate::action::event::{parse_payload, Context, Event};
use benchgate::action::inputs::ModeInput;
use benchgate::action::mode::decide;
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 8] = [
    "pull_request",
    "pull_request_target",
    "push",
    "workflow_run",
    "schedule",
    "workflow_dispatch",
    "merge_group",
    "",
];

const MODES: [ModeInput; 8] = [
    ModeInput::Auto,
    ModeInput::PullRequest,
    ModeInput::Push,
    ModeInput::Schedule,
    ModeInput::Measure,
    ModeInput::Report,
    ModeInput::Shard,
    ModeInput::Merge,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(file) else {
        return;
    };
    let name = NAMES[usize::from(pick) % NAMES.len()];
    let Ok((event, default_branch)) = parse_payload(name, text, "/github/workflow/event.json")
    else {
        return;
    };
    if let Event::PullRequest(pr) | Event::PullRequestTarget(pr) = &event {
        for sha in [&pr.base_sha, &pr.head_sha] {
            assert!(sha.len() >= 7 && sha.bytes().all(|b| b.is_ascii_hexdigit()));
        }
    }
    let ctx = Context {
        event_name: name.to_string(),
        event,
        repository: "o/r".into(),
        default_branch: default_branch.clone(),
        ref_name: Some("refs/heads/main".into()),
        sha: Some("1111111".into()),
        run_id: "1".into(),
        api_url: "http://127.0.0.1:1".into(),
        output_path: None,
        summary_path: None,
        workspace: None,
        runner_image: None,
    };
    let baseline = default_branch.unwrap_or_else(|| "main".into());
    for mode in MODES {
        let _ = decide(mode, &ctx, &baseline);
    }
});
