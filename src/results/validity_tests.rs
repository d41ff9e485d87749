use super::*;
use crate::results::synthetic;

fn open(rate: f64) -> Load {
    Load::Open {
        rate,
        max_in_flight: 8,
    }
}

/// A 2 s window with `requests` completed, the client using `client_us` of CPU
/// and the server `server_us`.
fn trial(requests: u64, client_us: u64, server_us: Option<u64>) -> TrialMetrics {
    let mut m = synthetic::metrics(requests as f64 / 2.0, 100.0, 10.0);
    m.requests = requests;
    m.elapsed_s = 2.0;
    m.cpu_user_us = client_us;
    m.cpu_sys_us = 0;
    m.server_cpu_us_per_request = server_us.map(|s| s as f64 / requests as f64);
    m
}

#[test]
fn open_loop_is_marked_just_below_95_percent_of_its_rate() {
    // 1000 req/s target over 2 s: 1900 requests is exactly 95%, 1899 is under.
    let at = trial(1900, 0, None);
    assert_eq!(rate_shortfall(&open(1000.0), &at), None);
    let under = trial(1899, 0, None);
    assert_eq!(
        rate_shortfall(&open(1000.0), &under),
        Some(InvalidMark::RateShortfall {
            target_rps: 1000.0,
            achieved_rps: 949.5
        })
    );
}

#[test]
fn closed_loop_is_never_rate_marked() {
    let closed = Load::Closed { concurrency: 4 };
    assert_eq!(rate_shortfall(&closed, &trial(1, 0, None)), None);
}

#[test]
fn client_bound_at_the_90_percent_boundaries() {
    // Window 2 s, 1 client core: 1.8 s of CPU is exactly 90%, saturated.
    let m = trial(1000, 1_800_000, Some(1_799_999));
    let mark = client_bound(&m, 1, 1).expect("client at 90%, server under");
    let InvalidMark::ClientBound {
        client_cpu_share,
        server_cpu_share,
        ..
    } = mark
    else {
        panic!("{mark:?}")
    };
    assert!((client_cpu_share - 0.9).abs() < 1e-9);
    assert!(server_cpu_share < 0.9);
    // Just under 90% on the client: not saturated.
    assert_eq!(client_bound(&trial(1000, 1_799_999, Some(0)), 1, 1), None);
    // The server saturated too (90%): the server is (also) the bottleneck.
    assert_eq!(
        client_bound(&trial(1000, 2_000_000, Some(1_800_000)), 1, 1),
        None
    );
    // Cores scale the capacity: 1.8 s on 2 client cores is 45%.
    assert_eq!(client_bound(&trial(1000, 1_800_000, Some(0)), 2, 1), None);
}

#[test]
fn client_bound_needs_a_measured_server() {
    assert_eq!(client_bound(&trial(1000, 2_000_000, None), 1, 1), None);
}

#[test]
fn assess_marks_client_bound_only_with_a_server_under_test() {
    let m = trial(1000, 2_000_000, Some(100_000));
    let closed = Load::Closed { concurrency: 4 };
    let reference = Placement {
        server_under_test: false,
        client_cores: 1,
        server_cores: 1,
    };
    assert!(assess(&closed, &m, reference).is_empty());
    let sut = Placement {
        server_under_test: true,
        ..reference
    };
    assert_eq!(assess(&closed, &m, sut).len(), 1);
}

#[test]
fn marks_round_trip_through_json_with_their_kind() {
    let mark = InvalidMark::RateShortfall {
        target_rps: 1000.0,
        achieved_rps: 500.0,
    };
    let json = serde_json::to_value(&mark).unwrap();
    assert_eq!(json["kind"], "rate_shortfall");
    assert_eq!(serde_json::from_value::<InvalidMark>(json).unwrap(), mark);
    assert!(mark.describe().contains("500 of 1000 req/s (50%"));
}

#[test]
fn a_trial_is_starved_by_no_request_or_a_window_more_than_10_percent_off() {
    let m = trial(300, 0, None);
    let planned = Some(0.150);
    let reason = |m: &TrialMetrics, server: Option<f64>| {
        starved(m, planned, server).map(|mark| mark.describe())
    };
    // Within 10% at the server: not starved.
    assert_eq!(reason(&m, Some(0.150)), None);
    assert_eq!(reason(&m, Some(0.1649)), None);
    assert_eq!(reason(&m, Some(0.1351)), None);
    assert!(reason(&m, Some(0.1651)).is_some());
    // Opened late at the server, against the driver's window.
    let late = reason(&m, Some(0.0004)).unwrap();
    assert!(
        late.contains("0.4 ms at the server where 150.0 ms"),
        "{late}"
    );
    assert!(late.contains("opened late"), "{late}");
    // Stalled inside.
    let stalled = reason(&m, Some(0.430)).unwrap();
    assert!(stalled.contains("430.0 ms at the server"), "{stalled}");
    assert!(stalled.contains("stalled inside"), "{stalled}");
    // No request in the window, whatever its length.
    let idle = trial(0, 0, None);
    let none = reason(&idle, Some(0.150)).unwrap();
    assert!(none.contains("completed no request"), "{none}");
    // A rate without a request count (a JMH client) measured something.
    let mut jmh = trial(0, 0, None);
    jmh.throughput_rps = Some(1234.0);
    assert_eq!(reason(&jmh, None), None);
    // A request-count stop has no planned window: only the count is read.
    assert!(starved(&m, None, Some(9.0)).is_none());
    assert!(starved(&idle, None, None).is_some());
    // No server window (a server under test): only the count.
    assert_eq!(reason(&m, None), None);
}

#[test]
fn a_starved_mark_round_trips_and_keeps_a_trial_out() {
    let mark = starved(&trial(0, 0, None), Some(0.15), None).unwrap();
    assert!(mark.is_starved());
    let json = serde_json::to_string(&mark).unwrap();
    assert!(json.contains(r#""kind":"starved""#), "{json}");
    assert_eq!(serde_json::from_str::<InvalidMark>(&json).unwrap(), mark);
    let t = crate::results::Trial {
        invalid: vec![mark],
        ..Default::default()
    };
    assert!(t.starved());
    assert!(!crate::results::Trial::default().starved());
}
