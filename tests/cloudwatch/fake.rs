//! Throttling, failures and request limits against a fake CloudWatch on loopback
//! that answers what each test scripts.

use std::time::Duration;

use benchgate::results::RunResults;

use super::support::*;

fn results(dir: &std::path::Path) -> std::path::PathBuf {
    mock_results(dir, "")
}

const FAST: &[&str] = &["--branch", "main", "--retry-base-ms", "50"];

#[test]
fn throttling_is_retried_with_backoff_until_it_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let throttled = error_answer(400, "Sender", "Throttling", "Rate exceeded");
    let fake = Fake::start(vec![throttled.clone(); 3], ok_answer());

    let (out, took) = publish(&path, &fake.url, FAST);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(fake.received().len(), 4, "3 throttled + 1 accepted");
    assert_eq!(
        stderr.matches("throttled: HTTP 400 Throttling").count(),
        3,
        "{stderr}"
    );
    assert!(stderr.contains("retrying in"), "{stderr}");
    assert!(stdout.contains("published 12 of 12"), "{stdout}");
    assert!(stdout.contains("3 retries"), "{stdout}");
    // Backoffs of at most 50, 100 and 200 ms.
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Every attempt sends the same request.
    let bodies: Vec<String> = fake.received().into_iter().map(|r| r.body).collect();
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
    assert!(bodies[0].contains("Action=PutMetricData"), "{}", bodies[0]);
}

#[test]
fn http_429_counts_as_throttling() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let fake = Fake::start(vec![(429, String::new())], ok_answer());
    let (out, _) = publish(&path, &fake.url, FAST);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fake.received().len(), 2);
}

#[test]
fn a_server_that_keeps_failing_gives_up_after_the_attempt_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let fake = Fake::start(
        vec![],
        error_answer(500, "Receiver", "InternalFailure", "boom"),
    );
    let mut args = FAST.to_vec();
    args.extend(["--max-attempts", "4"]);
    let (out, took) = publish(&path, &fake.url, &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert_eq!(fake.received().len(), 4);
    assert!(
        stderr.contains("benchgate: warning: publishing to CloudWatch failed"),
        "{stderr}"
    );
    assert!(stderr.contains("InternalFailure"), "{stderr}");
    assert!(stderr.contains("after 4 attempts"), "{stderr}");
    assert!(
        stdout.contains("cloudwatch: FAILED, published 0 of 12 metric data in 0 of 1 requests"),
        "{stdout}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn the_retry_deadline_bounds_the_time_spent() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let fake = Fake::start(vec![], (503, String::new()));
    let (out, took) = publish(
        &path,
        &fake.url,
        &[
            "--branch",
            "main",
            "--retry-base-ms",
            "400",
            "--max-attempts",
            "20",
            "--retry-deadline",
            "1s",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert!(fake.received().len() < 20);
}

#[test]
fn access_denied_fails_at_once_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let fake = Fake::start(
        vec![],
        error_answer(
            403,
            "Sender",
            "AccessDenied",
            "User is not authorized to perform: cloudwatch:PutMetricData",
        ),
    );
    let (out, _) = publish(&path, &fake.url, FAST);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(fake.received().len(), 1, "a 403 is not retried");
    assert!(
        stderr.contains("rejected: HTTP 403 AccessDenied"),
        "{stderr}"
    );
    assert!(stderr.contains("cloudwatch:PutMetricData"), "{stderr}");
    assert!(stderr.contains("after 1 attempt)"), "{stderr}");
    assert!(
        !stderr.contains("testing-secret"),
        "never print secrets: {stderr}"
    );
}

#[test]
fn requests_stay_within_1000_data_and_1_mb() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    // 40 cells with 150 trials of distinct values: 240 data of 150 values each,
    // several megabytes in all.
    let mut r = widen(&RunResults::read(&path).unwrap(), 40);
    for cell in &mut r.results {
        let template = cell.trials[0].clone();
        cell.trials = (1..=150)
            .map(|i| {
                let mut t = template.clone();
                t.round = i;
                let m = t.metrics.as_mut().unwrap();
                let f = i as f64;
                m.throughput_rps = Some(1000.0 + f);
                m.latency_p50_us = Some(100.0 + f);
                m.latency_p99_us = Some(900.0 + f);
                m.error_rate = f / 1e4;
                m.cpu_us_per_request = Some(10.0 + f);
                m.peak_rss_bytes = 1_000_000 + i as u64;
                t
            })
            .collect();
    }
    let big = dir.path().join("big.json");
    r.write_atomic(&big).unwrap();

    let fake = Fake::start(vec![], ok_answer());
    let (out, _) = publish(&big, &fake.url, FAST);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = fake.received();
    assert!(got.len() >= 4, "{} requests", got.len());
    for req in &got {
        assert!(req.body.len() <= 1_000_000, "{} bytes", req.body.len());
        assert!(req.data() <= 1000);
        assert!(req.body.matches("Values.member.151=").count() == 0);
    }
    assert_eq!(got.iter().map(Received::data).sum::<usize>(), 240);
    assert_eq!(
        got.iter()
            .map(|r| r.body.matches("Counts.member.").count())
            .sum::<usize>(),
        240 * 150
    );
    assert!(stdout.contains("published 240 of 240"), "{stdout}");
}

#[test]
fn results_too_old_for_cloudwatch_are_refused_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let mut r = RunResults::read(&path).unwrap();
    r.started_at = "2020-01-01T00:00:00Z".into();
    r.write_atomic(&path).unwrap();
    let fake = Fake::start(vec![], ok_answer());
    let (out, _) = publish(&path, &fake.url, FAST);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("two weeks"), "{stderr}");
    assert!(fake.received().is_empty());
}

#[test]
fn branch_comes_from_the_results_file_or_must_be_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let mut r = RunResults::read(&path).unwrap();
    r.git.ref_name = Some("refs/heads/release/1.2".into());
    r.write_atomic(&path).unwrap();
    let fake = Fake::start(vec![], ok_answer());
    let (out, _) = publish(&path, &fake.url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let body = &fake.received()[0].body;
    assert!(body.contains("Value=release%2F1.2"), "{body}");

    r.git.ref_name = None;
    r.write_atomic(&path).unwrap();
    let (out, _) = publish(&path, &fake.url, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("pass --branch"));
}

#[test]
fn a_missing_region_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path());
    let out = std::process::Command::new(exe())
        .args(["publish", "cloudwatch", "--branch", "main", "--results"])
        .arg(&path)
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing-secret")
        .env("AWS_CONFIG_FILE", "/nonexistent/benchgate-test")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/benchgate-test")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env_remove("AWS_PROFILE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no AWS region"), "{stderr}");
}
