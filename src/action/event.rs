//! The run's context: `GITHUB_*` variables and the event payload at
//! `GITHUB_EVENT_PATH`, parsed into the few facts the modes need. A missing or
//! malformed payload is an error naming the file, the field and the fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

/// Largest event payload read: GitHub caps a webhook payload at 25 MB.
pub const MAX_EVENT_BYTES: u64 = 32 << 20;

/// The fields [`parse_event`] reads, as JSON pointers. Of a payload only
/// these are built ([`parse_payload`]); the rest (commit messages, file
/// lists, a pull request's body: text of any length) is read past unbuilt.
const TAKEN: &[&str] = &[
    "/ref",
    "/after",
    "/deleted",
    "/number",
    "/repository/default_branch",
    "/repository/full_name",
    "/pull_request/number",
    "/pull_request/base/sha",
    "/pull_request/base/ref",
    "/pull_request/base/repo/full_name",
    "/pull_request/head/sha",
    "/pull_request/head/ref",
    "/pull_request/head/repo/full_name",
    "/workflow_run/id",
    "/workflow_run/event",
    "/workflow_run/head_sha",
    "/workflow_run/head_branch",
    "/workflow_run/head_repository/full_name",
    "/workflow_run/conclusion",
];

/// The facts taken from a `pull_request` (or `pull_request_target`) payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    pub base_sha: String,
    /// Branch name, e.g. `main`.
    pub base_ref: String,
    pub head_sha: String,
    pub head_ref: String,
    /// `owner/name` of the head repository (`None`: the fork was deleted).
    pub head_repo: Option<String>,
    /// The head repository is not the base repository.
    pub fork: bool,
}

/// The facts taken from a `workflow_run` payload (report mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRun {
    pub id: u64,
    /// The event that started the measured run (`pull_request`, ...).
    pub event: String,
    pub head_sha: String,
    pub head_branch: Option<String>,
    pub head_repo: Option<String>,
    pub conclusion: Option<String>,
}

/// The event, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    PullRequest(PullRequest),
    /// `pull_request_target`: same payload, but runs with a write token on the
    /// base branch's workflow.
    PullRequestTarget(PullRequest),
    Push {
        /// Full ref, e.g. `refs/heads/main`.
        ref_name: String,
        after: String,
        deleted: bool,
    },
    Schedule,
    WorkflowDispatch,
    WorkflowRun(WorkflowRun),
    Other(String),
}

/// Everything the action reads from `GITHUB_*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub event_name: String,
    pub event: Event,
    /// `owner/name`.
    pub repository: String,
    /// From the payload's `repository.default_branch`, when it has one.
    pub default_branch: Option<String>,
    pub ref_name: Option<String>,
    pub sha: Option<String>,
    pub run_id: String,
    /// `GITHUB_API_URL` (GitHub Enterprise, or a local fake in tests).
    pub api_url: String,
    pub output_path: Option<PathBuf>,
    pub summary_path: Option<PathBuf>,
    pub workspace: Option<PathBuf>,
    /// The hosted runner's image (`ImageOS`, `ImageVersion`), for the
    /// environment fingerprint.
    pub runner_image: Option<String>,
}

impl Context {
    /// The branch of `GITHUB_REF` (`refs/heads/x` -> `x`).
    pub fn ref_branch(&self) -> Option<&str> {
        self.ref_name.as_deref()?.strip_prefix("refs/heads/")
    }
}

/// Reads the context from an environment (`std::env::vars()` in production).
pub fn from_env(env: &BTreeMap<String, String>) -> anyhow::Result<Context> {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).cloned();
    let event_name = get("GITHUB_EVENT_NAME").ok_or_else(|| {
        anyhow::anyhow!(
            "GITHUB_EVENT_NAME is not set: `benchgate action` runs inside GitHub Actions; locally use `benchgate run` / `benchgate compare`"
        )
    })?;
    let path = get("GITHUB_EVENT_PATH").ok_or_else(|| {
        anyhow::anyhow!(
            "GITHUB_EVENT_PATH is not set: the runner sets it to the event payload file"
        )
    })?;
    let bytes = crate::files::read_untrusted(Path::new(&path), "event payload", MAX_EVENT_BYTES)
        .with_context(|| format!("GITHUB_EVENT_PATH={path} names the runner's event file"))?;
    let text = String::from_utf8(bytes)
        .with_context(|| format!("the event payload GITHUB_EVENT_PATH={path} is not UTF-8"))?;
    let (event, default_branch) = parse_payload(&event_name, &text, &path)?;
    Ok(Context {
        event_name,
        event,
        repository: get("GITHUB_REPOSITORY").unwrap_or_default(),
        default_branch,
        ref_name: get("GITHUB_REF"),
        sha: get("GITHUB_SHA"),
        run_id: get("GITHUB_RUN_ID").unwrap_or_else(|| "local".to_string()),
        api_url: get("GITHUB_API_URL")
            .map(|u| u.trim_end_matches('/').to_string())
            .unwrap_or_else(|| "https://api.github.com".to_string()),
        output_path: get("GITHUB_OUTPUT").map(PathBuf::from),
        summary_path: get("GITHUB_STEP_SUMMARY").map(PathBuf::from),
        workspace: get("GITHUB_WORKSPACE").map(PathBuf::from),
        runner_image: crate::results::environment::runner_image(get),
    })
}

/// Parses the text of the event payload file `path` (named in errors) of
/// event `name`; returns the event and the repository's default branch.
/// Only the [`TAKEN`] fields are built, so a payload takes no more memory
/// than its text and those fields, whatever it holds.
pub fn parse_payload(
    name: &str,
    text: &str,
    path: &str,
) -> anyhow::Result<(Event, Option<String>)> {
    let not_json = || {
        format!("the event payload {path} is not valid JSON; is GITHUB_EVENT_PATH the runner's event file?")
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let payload = serde::de::DeserializeSeed::deserialize(Pick(""), &mut de)
        .and_then(|p| de.end().map(|()| p))
        .with_context(not_json)?;
    parse_event(name, &payload).with_context(|| format!("the {name} event payload {path}"))
}

/// A payload's value at a JSON pointer, built only where a [`TAKEN`] field
/// is or lies below: any other member is skipped as it is read (by
/// serde_json, without allocating), and so is an array, which no taken
/// field is inside (it reads as `[]`). A duplicated key keeps its last
/// value, as a `Value` does.
struct Pick<'a>(&'a str);

impl<'de> serde::de::DeserializeSeed<'de> for Pick<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Pick<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Value::Array(Vec::new()))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut taken = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = format!("{}/{key}", self.0);
            let taken_here = TAKEN.iter().any(|t| {
                t.strip_prefix(at.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            });
            if taken_here {
                let value = map.next_value_seed(Pick(&at))?;
                taken.insert(key, value);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Value::Object(taken))
    }
}

/// Parses a payload; returns the event and the repository's default branch.
pub fn parse_event(name: &str, p: &Value) -> anyhow::Result<(Event, Option<String>)> {
    anyhow::ensure!(p.is_object(), "is not a JSON object");
    let default_branch = opt_str(p, "/repository/default_branch");
    let event = match name {
        "pull_request" => Event::PullRequest(pull_request(p)?),
        "pull_request_target" => Event::PullRequestTarget(pull_request(p)?),
        "push" => Event::Push {
            ref_name: req_str(p, "/ref")?,
            after: req_str(p, "/after")?,
            deleted: p
                .pointer("/deleted")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        "schedule" => Event::Schedule,
        "workflow_dispatch" => Event::WorkflowDispatch,
        "workflow_run" => Event::WorkflowRun(WorkflowRun {
            id: req_u64(p, "/workflow_run/id")?,
            event: req_str(p, "/workflow_run/event")?,
            head_sha: req_sha(p, "/workflow_run/head_sha")?,
            head_branch: opt_str(p, "/workflow_run/head_branch"),
            head_repo: opt_str(p, "/workflow_run/head_repository/full_name"),
            conclusion: opt_str(p, "/workflow_run/conclusion"),
        }),
        other => Event::Other(other.to_string()),
    };
    Ok((event, default_branch))
}

fn pull_request(p: &Value) -> anyhow::Result<PullRequest> {
    let head_repo = opt_str(p, "/pull_request/head/repo/full_name");
    let base_repo = opt_str(p, "/pull_request/base/repo/full_name")
        .or_else(|| opt_str(p, "/repository/full_name"));
    Ok(PullRequest {
        number: req_u64(p, "/pull_request/number").or_else(|_| req_u64(p, "/number"))?,
        base_sha: req_sha(p, "/pull_request/base/sha")?,
        base_ref: req_str(p, "/pull_request/base/ref")?,
        head_sha: req_sha(p, "/pull_request/head/sha")?,
        head_ref: req_str(p, "/pull_request/head/ref")?,
        fork: head_repo.is_none() || head_repo != base_repo,
        head_repo,
    })
}

fn field(ptr: &str) -> String {
    ptr.trim_start_matches('/').replace('/', ".")
}

fn opt_str(p: &Value, ptr: &str) -> Option<String> {
    p.pointer(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn req_str(p: &Value, ptr: &str) -> anyhow::Result<String> {
    opt_str(p, ptr).ok_or_else(|| {
        anyhow::anyhow!(
            "has no string `{}`: pass the runner's own event file (GITHUB_EVENT_PATH), unmodified",
            field(ptr)
        )
    })
}

fn req_u64(p: &Value, ptr: &str) -> anyhow::Result<u64> {
    p.pointer(ptr).and_then(Value::as_u64).ok_or_else(|| {
        anyhow::anyhow!(
            "has no number `{}`: pass the runner's own event file (GITHUB_EVENT_PATH), unmodified",
            field(ptr)
        )
    })
}

fn req_sha(p: &Value, ptr: &str) -> anyhow::Result<String> {
    let s = req_str(p, ptr)?;
    anyhow::ensure!(
        (7..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "`{}` is not a commit sha: pass the runner's own event file (GITHUB_EVENT_PATH), unmodified",
        field(ptr)
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!("{}/fixtures/events/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn pull_request_payloads() {
        let (e, default) = parse_event("pull_request", &fixture("pull_request.json")).unwrap();
        let Event::PullRequest(pr) = e else {
            panic!("{e:?}")
        };
        assert_eq!(default.as_deref(), Some("main"));
        assert_eq!(
            (pr.number, pr.base_ref.as_str(), pr.fork),
            (42, "main", false)
        );
        assert_eq!(pr.head_repo.as_deref(), Some("octo/app"));
        let (e, _) = parse_event("pull_request", &fixture("pull_request_fork.json")).unwrap();
        let Event::PullRequest(pr) = e else {
            panic!("{e:?}")
        };
        assert!(pr.fork);
        assert_eq!(pr.head_repo.as_deref(), Some("stranger/app"));
    }

    #[test]
    fn push_schedule_and_workflow_run_payloads() {
        let (e, default) = parse_event("push", &fixture("push_main.json")).unwrap();
        assert!(
            matches!(e, Event::Push { ref ref_name, deleted: false, .. } if ref_name == "refs/heads/main")
        );
        assert_eq!(default.as_deref(), Some("main"));
        let (e, default) = parse_event("schedule", &fixture("schedule.json")).unwrap();
        assert_eq!((e, default), (Event::Schedule, None));
        let (e, _) = parse_event("workflow_run", &fixture("workflow_run.json")).unwrap();
        let Event::WorkflowRun(w) = e else {
            panic!("{e:?}")
        };
        assert_eq!(
            (w.event.as_str(), w.head_repo.as_deref()),
            ("pull_request", Some("stranger/app"))
        );
    }

    #[test]
    fn malformed_payloads_name_the_field() {
        let mut p = fixture("pull_request.json");
        p["pull_request"]["base"]["sha"] = Value::from("not a sha");
        let err = parse_event("pull_request", &p).unwrap_err().to_string();
        assert!(err.contains("pull_request.base.sha"), "{err}");
        p["pull_request"]["base"]["sha"] = Value::from("1".repeat(40));
        p["pull_request"]["base"]
            .as_object_mut()
            .unwrap()
            .remove("ref");
        let err = parse_event("pull_request", &p).unwrap_err().to_string();
        assert!(err.contains("pull_request.base.ref"), "{err}");
        let err = parse_event("push", &Value::from(3))
            .unwrap_err()
            .to_string();
        assert!(err.contains("JSON object"), "{err}");
        assert!(parse_event("push", &serde_json::json!({"ref": "refs/heads/x"})).is_err());
    }

    #[test]
    fn the_payload_file_is_read_bounded_and_never_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("event.json");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let env: BTreeMap<String, String> = [
            ("GITHUB_EVENT_NAME", "push"),
            ("GITHUB_EVENT_PATH", path.to_str().unwrap()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let e = format!("{:#}", from_env(&env).unwrap_err());
        assert!(
            e.contains("event payload") && e.contains("is a FIFO, not a file"),
            "{e}"
        );
    }

    /// What is built of a payload is what [`parse_event`] reads of it.
    #[test]
    fn a_payload_reads_as_its_taken_fields() {
        let fixtures = [
            "pull_request.json",
            "pull_request_fork.json",
            "push_main.json",
        ];
        let names = [
            "pull_request",
            "pull_request_target",
            "push",
            "workflow_run",
        ];
        for f in fixtures
            .into_iter()
            .chain(["workflow_run.json", "schedule.json"])
        {
            let full = fixture(f);
            for name in names {
                let whole = parse_event(name, &full).map_err(|e| format!("{e:#}"));
                let taken = parse_payload(name, &full.to_string(), "e.json")
                    .map_err(|e| format!("{:#}", e.root_cause()));
                assert_eq!(whole, taken, "{f} as {name}");
            }
        }
        // Nesting skipped unbuilt, however deep; a payload that is no object.
        let deep = format!("{}{}", "[".repeat(1 << 20), "]".repeat(1 << 20));
        let text = format!(
            r#"{{"ref": "refs/heads/x", "after": "{}", "commits": {deep}}}"#,
            "3".repeat(40)
        );
        assert!(matches!(
            parse_payload("push", &text, "e.json").unwrap().0,
            Event::Push { .. }
        ));
        let e = parse_payload("push", &deep, "e.json").unwrap_err();
        assert!(format!("{e:#}").contains("is not a JSON object"), "{e:#}");
        let e = parse_payload("push", "{\"ref\": 1} x", "e.json").unwrap_err();
        assert!(
            format!("{e:#}").starts_with("the event payload e.json is not valid JSON"),
            "{e:#}"
        );
    }

    /// Issue 53: GitHub sends payloads up to 25 MB; what benchgate does not
    /// take (commit messages, file lists, a pull request's body) is read
    /// past, whatever its size.
    #[test]
    fn large_payloads_up_to_githubs_cap_are_read() {
        let read = |name: &str, p: &Value| {
            let text = p.to_string();
            assert!(text.len() as u64 <= MAX_EVENT_BYTES);
            parse_payload(name, &text, "e.json").unwrap()
        };
        // A push whose commit message is 2 MiB.
        let mut push = fixture("push_main.json");
        let message = "m".repeat(2 << 20);
        push["head_commit"]["message"] = message.clone().into();
        push["commits"] = serde_json::json!([{"id": "1".repeat(40), "message": message}]);
        let (e, default) = read("push", &push);
        assert!(matches!(e, Event::Push { ref after, .. } if after == &"1".repeat(40)));
        assert_eq!(default.as_deref(), Some("main"));
        // A push of 2,048 commits, each listing 350 files: 16.8 MB of small values.
        let files: Vec<String> = (0..350)
            .map(|i| format!("src/module{i:03}/file.rs"))
            .collect();
        let commit = serde_json::json!({"id": "2".repeat(40), "message": "fix", "modified": files});
        push["head_commit"]["message"] = "fix".into();
        push["commits"] = Value::Array(vec![commit; 2048]);
        assert!(push.to_string().len() > 16_800_000);
        assert!(matches!(read("push", &push).0, Event::Push { .. }));
        // A pull request whose body is 2 MiB.
        let mut pr = fixture("pull_request.json");
        pr["pull_request"]["body"] = "b".repeat(2 << 20).into();
        let Event::PullRequest(pr) = read("pull_request", &pr).0 else {
            panic!()
        };
        assert_eq!(pr.number, 42);
    }
}
