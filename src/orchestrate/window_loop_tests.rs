use super::*;
use crate::measure::ErrorCounts;

#[test]
fn commands_round_trip_and_bad_ones_are_quoted() {
    for c in [
        Command::Open(1),
        Command::Close(12),
        Command::Pause,
        Command::Resume,
        Command::Exit,
    ] {
        assert_eq!(Command::parse(&c.line()), Ok(c));
    }
    assert_eq!(
        Command::parse("BENCHGATE-WINDOW-OPEN 3\r\n"),
        Ok(Command::Open(3))
    );
    for bad in [
        "BENCHGATE-WINDOW-OPEN",
        "BENCHGATE-WINDOW-CLOSE 0",
        "BENCHGATE-PAUSE now",
        "x",
    ] {
        let e = Command::parse(bad).unwrap_err();
        assert!(e.contains(&format!("{bad:?}")), "{e}");
    }
}

#[test]
fn replies_are_recognised_and_malformed_ones_quoted() {
    assert_eq!(
        parse_reply("BENCHGATE-WINDOWS-LOOP\n"),
        Some(Ok(Reply::Declare))
    );
    assert_eq!(parse_reply("BENCHGATE-READY"), Some(Ok(Reply::Ready)));
    assert_eq!(parse_reply("BENCHGATE-PAUSED\r"), Some(Ok(Reply::Paused)));
    let r = parse_reply(r#"BENCHGATE-WINDOW-RESULT {"window": 2, "requests": 5}"#);
    assert_eq!(
        r,
        Some(Ok(Reply::Result {
            window: 2,
            json: r#"{"window": 2, "requests": 5}"#.into()
        }))
    );
    // The client's own output, and the one-window markers, are no replies.
    for other in [
        "hello",
        "BENCHGATE-WINDOW-OPEN",
        "BENCHGATE-WINDOW-CLOSE",
        "",
    ] {
        assert_eq!(parse_reply(other), None, "{other}");
    }
    for bad in [
        "BENCHGATE-WINDOW-RESULT",
        "BENCHGATE-WINDOW-RESULT {\"window\": 2",
        "BENCHGATE-WINDOW-RESULT {\"requests\": 2}",
        "BENCHGATE-WINDOW-RESULT {\"window\": 0}",
        "BENCHGATE-READY now\u{1b}[2J",
    ] {
        let e = parse_reply(bad).unwrap().unwrap_err();
        assert!(e.contains(&quote(bad)), "{e}");
        assert!(!e.contains('\u{1b}'), "escaped: {e}");
    }
    assert_eq!(
        strip_window(r#"{"window":2,"ok":1}"#).unwrap(),
        br#"{"ok":1}"#.to_vec()
    );
}

fn window(
    k: u32,
    ok: u64,
    timeouts: u64,
    elapsed_s: f64,
    cpu_us: u64,
    latency_us: u64,
) -> WindowRecord {
    let mut latency = LatencyHistogram::new();
    latency.record_us(latency_us);
    WindowRecord {
        window: k,
        counts: Counts {
            ok,
            errors: ErrorCounts {
                timeout: timeouts,
                ..ErrorCounts::default()
            },
            ..Counts::default()
        },
        elapsed_s,
        cpu: Some(CpuTimes {
            user_us: cpu_us,
            sys_us: 0,
        }),
        group_cpu: Some(CpuTimes {
            user_us: cpu_us,
            sys_us: cpu_us,
        }),
        latency: Some(latency),
        ..WindowRecord::default()
    }
}

#[test]
fn a_forks_value_is_the_sum_of_its_windows() {
    let windows = [
        window(1, 100, 1, 0.2, 1_000, 100),
        window(2, 300, 0, 0.2, 2_000, 300),
        window(3, 200, 2, 0.1, 1_500, 200),
    ];
    let fork = fork_value(&windows).unwrap();
    assert_eq!(fork.window, 3, "the count of windows");
    assert_eq!((fork.counts.ok, fork.counts.errors.timeout), (600, 3));
    assert!((fork.elapsed_s - 0.5).abs() < 1e-12);
    assert_eq!(fork.cpu.unwrap().total_us(), 4_500);
    // Both readings summed, each apart: the group's is never the gated one's.
    assert_eq!(fork.group_cpu.unwrap().total_us(), 9_000);
    assert_eq!(fork.latency.as_ref().unwrap().len(), 3, "histograms merged");
    // Throughput is requests over the summed time, not a mean of rates.
    let rate = fork.counts.ok as f64 / fork.elapsed_s;
    assert!((rate - 1200.0).abs() < 1e-9, "{rate}");
    // A window without a CPU reading leaves the fork without one.
    let mut unread = windows.to_vec();
    unread[1].cpu = None;
    assert_eq!(fork_value(&unread).unwrap().cpu, None);
    assert!(fork_value(&[]).is_none());
}
