//! The warm run on tokio's paused clock, with the mock driver: exact counts,
//! not timed.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::client::mock::MockClient;
use crate::config::{Load, MockScript};
use crate::measure::Counts;

/// A warm run of one worker whose requests take 10 ms each.
fn warm() -> Warm {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let client = Arc::new(AsyncClient::Mock(MockClient::new(MockScript {
        latencies_us: vec![10_000],
        error_every: 0,
        response_bytes: 22,
        fail: None,
    })));
    let plan = TrialPlan {
        load: Load::Closed { concurrency: 1 },
        warmup: Duration::ZERO,
        stop: StopRule::Duration(FAR),
        timeout: Duration::from_secs(10),
        precise_timer: false,
    };
    Warm::start_async(runtime, client, plan)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What the phase current now (between windows: unmeasured) counted.
fn unmeasured(w: &Warm) -> Counts {
    let phase = w.shared.load().phase;
    phase
        .shards
        .into_outcome(ms(0), CpuTimes::default())
        .recorder
        .counts
}

#[test]
fn the_workers_keep_sending_between_windows_and_only_windows_count() {
    let mut w = warm();
    // Completions at 10, ..., 90 ms: unmeasured; one in flight until 100.
    w.sleep(ms(95));
    assert_eq!(unmeasured(&w).warmup_requests, 9);
    w.open();
    assert!(w.first_response_ns().is_some(), "the start-up is known");
    w.sleep(ms(1000));
    let first = w.close().unwrap();
    // 100, ..., 1090 in the window (the one in flight at the open counts);
    // the one sent at 1090 is in flight at the close: counted, not recorded.
    assert_eq!(first.recorder.counts.ok, 100);
    assert_eq!(first.recorder.counts.warmup_requests, 0);
    assert_eq!(first.recorder.counts.in_flight_at_deadline, 1);
    assert_eq!(first.recorder.latency.len(), 100);
    assert_eq!(first.elapsed, ms(1000));
    // Between windows the same worker keeps sending, unmeasured: 1100, ..., 1190.
    w.sleep(ms(100));
    assert_eq!(unmeasured(&w).warmup_requests, 10);
    assert_eq!(unmeasured(&w).ok, 0);
    assert!(w.close().is_none(), "no window open");
    w.open();
    w.sleep(ms(500));
    let second = w.close().unwrap();
    // 1200, ..., 1690: nothing of the first window or of the gap.
    assert_eq!(second.recorder.counts.ok, 50);
    assert_eq!(second.recorder.latency.len(), 50);
    assert_eq!(second.recorder.counts.in_flight_at_deadline, 1);
}

#[test]
fn a_pause_finishes_what_is_in_flight_and_sends_nothing_until_the_resume() {
    let mut w = warm();
    w.sleep(ms(95));
    w.pause();
    // The request in flight at the pause (done at 100) completed.
    assert_eq!(unmeasured(&w).warmup_requests, 10);
    assert!(w.shared.busy.iter().all(|b| !b.load(SeqCst)));
    w.sleep(ms(200));
    assert_eq!(
        unmeasured(&w).warmup_requests,
        10,
        "nothing sent while paused"
    );
    w.resume();
    w.sleep(ms(105));
    assert_eq!(unmeasured(&w).warmup_requests, 20);
}
