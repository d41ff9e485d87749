//! wrk-style closed loop with thousands of connections: 2,000 workers of the
//! built-in hyper client against the reference server, one short trial. The
//! driver and the server raise their open-file limits to the hard limit; the
//! test is skipped (saying so) when the hard limit cannot hold the sockets.

mod common;

use common::run_config;

const CONNECTIONS: u64 = 2_000;

/// The hard RLIMIT_NOFILE of this process (children inherit it).
fn hard_nofile_limit() -> u64 {
    // SAFETY: getrlimit fills the zeroed struct we own.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_max as u64
    }
}

#[test]
fn two_thousand_connections_all_succeed() {
    // Each side holds one socket per connection, plus a few hundred others.
    let need = CONNECTIONS + 500;
    if hard_nofile_limit() < need {
        eprintln!(
            "skipped: the hard open-file limit is {}, below the {need} 2,000 connections need (raise it with ulimit -Hn)",
            hard_nofile_limit()
        );
        return;
    }
    // A long warmup: 2,000 simultaneous connects can overflow the listen
    // backlog, and a dropped SYN is retried after 1 s.
    let toml = format!(
        "[run]\nrounds = 1\nwarmup = \"1500ms\"\nduration = \"500ms\"\ntimeout = \"10s\"\n\
         [[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\
         [[scenario]]\nname = \"c2000\"\npath = \"/bytes/22\"\nconcurrency = {CONNECTIONS}\n"
    );
    let run = run_config(&toml, &[]);
    let results = run.results();
    let trial = &results.results[0].trials[0];
    assert_eq!(trial.failure, None);
    let m = trial.metrics.as_ref().unwrap();
    assert_eq!(m.errors.total(), 0, "{:?}", m.errors);
    assert!(m.ok >= CONNECTIONS, "only {} requests in the window", m.ok);
    // One connection per worker: the pool allows as many, and all 2,000
    // workers send their first request at once.
    let opened = m.connections_opened.unwrap();
    assert!(opened >= CONNECTIONS, "{opened} connections opened");
    let server = trial.server.as_ref().unwrap();
    assert!(
        server.connections_used >= CONNECTIONS * 9 / 10,
        "{} connections served requests in the window",
        server.connections_used
    );
}
