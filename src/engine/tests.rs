//! Engine tests with the mock driver on tokio's paused clock: exact, not timed.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::client::mock::MockClient;
use crate::config::MockScript;

fn mock(latencies_us: Vec<u64>, error_every: u64) -> Arc<AsyncClient> {
    Arc::new(AsyncClient::Mock(MockClient::new(MockScript {
        latencies_us,
        error_every,
        response_bytes: 22,
        fail: None,
    })))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn plan(load: Load, warmup: Duration, stop: StopRule) -> TrialPlan {
    TrialPlan {
        load,
        warmup,
        stop,
        timeout: Duration::from_secs(10),
        precise_timer: false,
    }
}

#[tokio::test(start_paused = true)]
async fn closed_loop_counts_only_the_window() {
    let out = run_async(
        mock(vec![10_000], 0),
        plan(
            Load::Closed { concurrency: 1 },
            ms(100),
            StopRule::Duration(ms(1000)),
        ),
        &mut NoHooks,
    )
    .await;
    let r = &out.recorder;
    // Completions at 10, 20, ... ms: 100..=1090 are in [100, 1100); 1100 is late.
    assert_eq!(r.counts.ok, 100);
    assert_eq!(r.counts.warmup_requests, 9);
    assert_eq!(r.counts.in_flight_at_deadline, 1);
    assert_eq!(out.elapsed, ms(1000));
    let s = r.latency.summary().unwrap();
    // HDR at 3 significant digits reports the top of 10 ms's bucket.
    assert!((10_000..=10_010).contains(&s.p50_us), "{s:?}");
    assert_eq!(s.p50_us, s.max_us);
    assert_eq!(r.counts.bytes_received, 100 * 22);
    assert!(r.latency_uncorrected.is_none());
}

#[tokio::test(start_paused = true)]
async fn requests_in_flight_at_the_deadline_are_counted_not_recorded() {
    let out = run_async(
        mock(vec![300_000], 0),
        plan(
            Load::Closed { concurrency: 4 },
            ms(0),
            StopRule::Duration(ms(1000)),
        ),
        &mut NoHooks,
    )
    .await;
    assert_eq!(out.recorder.counts.ok, 12);
    assert_eq!(out.recorder.counts.in_flight_at_deadline, 4);
    assert_eq!(out.recorder.latency.len(), 12);
}

#[tokio::test(start_paused = true)]
async fn request_count_stop_measures_exactly_n() {
    let out = run_async(
        mock(vec![1_000, 3_000], 0),
        plan(
            Load::Closed { concurrency: 5 },
            ms(50),
            StopRule::Requests(50),
        ),
        &mut NoHooks,
    )
    .await;
    assert_eq!(out.recorder.counts.ok, 50);
    assert!(out.recorder.counts.warmup_requests > 0);
    assert!(
        out.elapsed > Duration::ZERO && out.elapsed < ms(100),
        "{:?}",
        out.elapsed
    );
}

#[tokio::test(start_paused = true)]
async fn errors_are_classified_and_excluded_from_latency() {
    let out = run_async(
        mock(vec![1_000], 4),
        plan(
            Load::Closed { concurrency: 1 },
            ms(0),
            StopRule::Requests(100),
        ),
        &mut NoHooks,
    )
    .await;
    assert_eq!(out.recorder.counts.errors.status_5xx, 25);
    assert_eq!(out.recorder.counts.ok, 75);
    assert_eq!(out.recorder.latency.len(), 75);
}

#[tokio::test(start_paused = true)]
async fn open_loop_keeps_rate_and_corrects_coordinated_omission() {
    // 100 req/s for 2 s through one worker; request #50 stalls for 500 ms.
    let mut script = vec![1_000; 200];
    script[49] = 500_000;
    let out = run_async(
        mock(script, 0),
        plan(
            Load::Open {
                rate: 100.0,
                max_in_flight: 1,
            },
            ms(0),
            StopRule::Duration(ms(2000)),
        ),
        &mut NoHooks,
    )
    .await;
    let r = &out.recorder;
    assert_eq!(
        r.counts.ok + r.counts.in_flight_at_deadline,
        200,
        "one intended start every 10 ms"
    );
    let corrected = r.latency.summary().unwrap();
    let uncorrected = r.latency_uncorrected.as_ref().unwrap().summary().unwrap();
    // Without correction the stall is one slow request among 200.
    assert!(
        (1_000..=1_001).contains(&uncorrected.p90_us),
        "{uncorrected:?}"
    );
    assert!(uncorrected.max_us >= 500_000);
    // With correction, the ~50 requests queued behind it carry their wait.
    assert!(
        corrected.p90_us > 100_000,
        "corrected p90 {}",
        corrected.p90_us
    );
    assert!(corrected.p50_us < corrected.p90_us);
    assert!(corrected.mean_us > 10.0 * uncorrected.mean_us / 2.0);
}

#[tokio::test(start_paused = true)]
async fn hooks_fire_at_window_edges() {
    let t0 = Instant::now();
    let mut seen = Seen(vec![]);
    run_async(
        mock(vec![1_000], 0),
        plan(
            Load::Closed { concurrency: 2 },
            ms(200),
            StopRule::Duration(ms(300)),
        ),
        &mut seen,
    )
    .await;
    assert_eq!(seen.0.len(), 2);
    assert_eq!(seen.0[0], ("open", t0 + ms(200)));
    assert_eq!(seen.0[1], ("close", t0 + ms(500)));
}

/// Records when the hooks fired.
struct Seen(Vec<(&'static str, Instant)>);
impl WindowHooks for Seen {
    fn opened(&mut self) {
        self.0.push(("open", Instant::now()));
    }
    fn closed(&mut self) {
        self.0.push(("close", Instant::now()));
    }
}

/// Runs `plan` while the whole driver is stopped 50 ms into its warmup for
/// 500 ms (the clock jumps: every timer fires late at once, as after SIGCONT),
/// past its planned window [100 ms, 400 ms).
async fn stopped_in_warmup(
    client: Arc<AsyncClient>,
    load: Load,
) -> (Outcome, Vec<(&'static str, Instant)>) {
    let mut seen = Seen(vec![]);
    let (out, ()) = tokio::join!(
        run_async(
            client,
            plan(load, ms(100), StopRule::Duration(ms(300))),
            &mut seen
        ),
        async {
            tokio::time::sleep(ms(50)).await;
            tokio::time::advance(ms(500)).await;
        }
    );
    (out, seen.0)
}

#[tokio::test(start_paused = true)]
async fn a_window_opened_late_lasts_its_duration_from_the_opening() {
    let t0 = Instant::now();
    let (out, seen) =
        stopped_in_warmup(mock(vec![10_000], 0), Load::Closed { concurrency: 1 }).await;
    assert_eq!(seen, [("open", t0 + ms(550)), ("close", t0 + ms(850))]);
    assert_eq!(out.elapsed, ms(300));
    // One 10 ms request after another for 300 ms from the opening (the
    // request in flight across the stop may complete in it too).
    let r = &out.recorder;
    let sent = r.counts.ok + r.counts.in_flight_at_deadline;
    assert!(
        (30..=31).contains(&sent) && r.counts.ok >= 29,
        "{} ok, {sent} sent",
        r.counts.ok
    );
}

#[tokio::test(start_paused = true)]
async fn an_open_loop_opened_late_is_charged_no_backlog_from_before_it() {
    let t0 = Instant::now();
    let load = Load::Open {
        rate: 100.0,
        max_in_flight: 2,
    };
    let (out, seen) = stopped_in_warmup(mock(vec![1_000], 0), load).await;
    assert_eq!(seen[0], ("open", t0 + ms(550)));
    let r = &out.recorder;
    // The window's arrivals: one every 10 ms from its opening, none of the
    // 50 intended while the driver was stopped; the two tickets the workers
    // held across the stop may complete in it too.
    let sent = r.counts.ok + r.counts.in_flight_at_deadline;
    assert!((30..=32).contains(&sent), "{sent} requests");
    // And none charged the 500 ms stop: the two held across it count from
    // the opening, not from when they were intended.
    let corrected = r.latency.summary().unwrap();
    assert!(corrected.max_us < 10_000, "{corrected:?}");
}
