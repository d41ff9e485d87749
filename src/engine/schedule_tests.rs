//! Schedule and window, on explicit instants: the window opens when
//! [`Schedule::open`] says, however late, and lasts its duration from then.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn open_loop(rate: f64, warmup: Duration, duration: Duration, t0: Instant) -> Schedule {
    let load = Load::Open {
        rate,
        max_in_flight: 4,
    };
    Schedule::new(load, warmup, StopRule::Duration(duration), t0)
}

#[test]
fn closed_loop_goes_now_until_deadline() {
    let t0 = Instant::now();
    let s = Schedule::new(
        Load::Closed { concurrency: 2 },
        ms(100),
        StopRule::Duration(ms(200)),
        t0,
    );
    assert_eq!(s.next(t0 + ms(5)), Ticket::Go(t0 + ms(5)));
    s.open(t0 + ms(100));
    assert_eq!(s.next(t0 + ms(299)), Ticket::Go(t0 + ms(299)));
    assert_eq!(s.next(t0 + ms(300)), Ticket::Stop);
}

#[test]
fn open_loop_spaces_intended_starts_by_rate() {
    let t0 = Instant::now();
    let s = open_loop(1000.0, ms(0), ms(3), t0);
    s.open(t0);
    // Intended times ignore "now": they are t0 + i ms.
    assert_eq!(s.next(t0 + ms(50)), Ticket::Go(t0));
    assert_eq!(s.next(t0), Ticket::Go(t0 + ms(1)));
    assert_eq!(s.next(t0), Ticket::Go(t0 + ms(2)));
    assert_eq!(s.next(t0), Ticket::Stop);
}

#[test]
fn window_classifies_warmup_measured_late() {
    let t0 = Instant::now();
    let s = Schedule::new(
        Load::Closed { concurrency: 1 },
        ms(10),
        StopRule::Duration(ms(10)),
        t0,
    );
    let w = s.window();
    assert_eq!(w.complete(t0 + ms(5)).0, Slot::Warmup);
    s.open(t0 + ms(10));
    assert_eq!(w.complete(t0 + ms(15)).0, Slot::Measured);
    assert_eq!(w.complete(t0 + ms(20)).0, Slot::Late);
    assert_eq!(w.elapsed(), ms(10));
}

#[test]
fn request_count_closes_on_nth_completion() {
    let t0 = Instant::now();
    let s = Schedule::new(
        Load::Closed { concurrency: 1 },
        ms(0),
        StopRule::Requests(3),
        t0,
    );
    let w = s.window();
    s.open(t0);
    assert_eq!(w.deadline(), None, "a request count has no deadline");
    assert_eq!(w.complete(t0 + ms(1)), (Slot::Measured, false));
    assert_eq!(w.complete(t0 + ms(2)), (Slot::Measured, false));
    assert_eq!(w.complete(t0 + ms(4)), (Slot::Measured, true));
    assert!(w.is_closed());
    assert_eq!(w.complete(t0 + ms(5)).0, Slot::Late);
    assert_eq!(s.next(t0 + ms(5)), Ticket::Stop);
    assert_eq!(w.elapsed(), ms(4));
}

#[test]
fn request_count_opened_late_times_its_window_from_the_opening() {
    let t0 = Instant::now();
    let s = Schedule::new(
        Load::Closed { concurrency: 1 },
        ms(10),
        StopRule::Requests(2),
        t0,
    );
    let w = s.window();
    s.open(t0 + ms(50));
    assert_eq!(w.complete(t0 + ms(30)).0, Slot::Warmup);
    assert_eq!(w.complete(t0 + ms(51)), (Slot::Measured, false));
    assert_eq!(w.complete(t0 + ms(53)), (Slot::Measured, true));
    assert_eq!(w.elapsed(), ms(3));
}

#[test]
fn a_window_opened_late_lasts_its_duration_from_its_actual_opening() {
    let t0 = Instant::now();
    let s = Schedule::new(
        Load::Closed { concurrency: 1 },
        ms(100),
        StopRule::Duration(ms(200)),
        t0,
    );
    let w = s.window();
    assert_eq!(w.planned_open(), t0 + ms(100));
    assert_eq!(w.deadline(), None, "no deadline before the window opens");
    // Descheduled from before the planned opening to past the planned end.
    s.open(t0 + ms(550));
    assert_eq!(w.deadline(), Some(t0 + ms(750)));
    // A second opening changes nothing.
    s.open(t0 + ms(600));
    assert_eq!(w.deadline(), Some(t0 + ms(750)));
    // Completions between the planned and the actual opening are warmup.
    assert_eq!(w.complete(t0 + ms(400)).0, Slot::Warmup);
    assert_eq!(w.complete(t0 + ms(551)).0, Slot::Measured);
    assert_eq!(w.complete(t0 + ms(749)).0, Slot::Measured);
    assert_eq!(w.complete(t0 + ms(750)).0, Slot::Late);
    assert_eq!(s.next(t0 + ms(749)), Ticket::Go(t0 + ms(749)));
    assert_eq!(s.next(t0 + ms(750)), Ticket::Stop);
    assert_eq!(w.elapsed(), ms(200));
}

#[test]
fn an_open_loop_opened_late_starts_its_arrivals_at_the_opening_without_backlog() {
    let t0 = Instant::now();
    // 1 ms between arrivals; the window is planned for [10 ms, 15 ms).
    let s = open_loop(1000.0, ms(10), ms(5), t0);
    // Four warmup tickets issued, then the driver is stopped until 30 ms.
    for i in 0..4 {
        assert_eq!(s.next(t0), Ticket::Go(t0 + ms(i)));
    }
    s.open(t0 + ms(30));
    // Warmup tickets 4..9 (intended while stopped) are never issued; the
    // window's five arrivals are at its opening, at the rate.
    for i in 30..35 {
        assert_eq!(s.next(t0 + ms(30)), Ticket::Go(t0 + ms(i)));
    }
    assert_eq!(s.next(t0 + ms(30)), Ticket::Stop);
    // A warmup ticket held across the stop is not charged the stop: from the
    // opening if sent after it, from its send if sent before.
    let w = s.window();
    assert_eq!(w.latency_from(t0 + ms(3), t0 + ms(31)), t0 + ms(30));
    assert_eq!(w.latency_from(t0 + ms(3), t0 + ms(29)), t0 + ms(29));
    // The window's own requests count from their intended start, which
    // carries any delay inside the window (coordinated omission).
    assert_eq!(w.latency_from(t0 + ms(31), t0 + ms(33)), t0 + ms(31));
}

#[test]
fn an_open_loop_opened_on_time_keeps_its_arrivals_after_those_issued_ahead() {
    let t0 = Instant::now();
    // Planned window [2 ms, 5 ms); four workers each took a ticket ahead.
    let s = open_loop(1000.0, ms(2), ms(3), t0);
    for i in 0..4 {
        assert_eq!(s.next(t0), Ticket::Go(t0 + ms(i)));
    }
    // The opening's wake-up came 50 µs after the planned instant: later
    // arrivals follow the grid shifted by those 50 µs, never before the
    // tickets already out, and the window still holds three arrivals.
    s.open(t0 + ms(2) + us(50));
    assert_eq!(s.next(t0), Ticket::Go(t0 + ms(4) + us(50)));
    assert_eq!(s.next(t0), Ticket::Stop);
    // A request intended 50 µs before the opening and sent at it: the wait
    // before the opening is not the window's.
    let w = s.window();
    assert_eq!(
        w.latency_from(t0 + ms(2), t0 + ms(2) + us(60)),
        t0 + ms(2) + us(50)
    );
}
