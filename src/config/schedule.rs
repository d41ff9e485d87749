//! `[run] schedule = "interleaved"` or `"duet"`, validated against the rest
//! of the config: both forks of a round alive at once (their windows taking
//! turns, or open together, `orchestrate::rounds`) needs what that round is
//! made of: every scenario's two cells (no anchor, against the reference
//! server), forks of windows (2 or more to take turns; a duration stop rule)
//! and clients that speak the window loop: built-in ones (h1-lean has none)
//! and command clients but JMH ones (a command client that does not declare
//! the loop fails its round, `orchestrate::command`). Anything else is
//! refused at load, never run as sequential under another name.

use super::error::Problem;
use super::raw::RawConfig;
use super::{ClientKind, Driver, ResultFormat, Schedule, StopRule, Suite};

/// Refuses a paired schedule the run cannot keep.
pub(super) fn check(suite: &Suite, raw: &RawConfig) -> Result<(), Problem> {
    let Some(at) = &raw.run.schedule else {
        return Ok(());
    };
    // What a round does with its two live forks' windows.
    let windows = match suite.run.schedule {
        Schedule::Sequential => return Ok(()),
        Schedule::Interleaved => "alternates the windows of two live forks",
        Schedule::Duet => "opens the windows of two live forks together",
    };
    let name = suite.run.schedule.as_str();
    let problem = |what: String, fix: &str| {
        Problem::new(
            at.span.clone(),
            "run.schedule",
            format!("[run] schedule = \"{name}\" {what}"),
            format!("{fix}, or schedule = \"sequential\""),
        )
    };
    // A fork of one window has no window loop: nothing would hold its
    // window to the other side's.
    if suite.run.windows < 2 {
        return Err(problem(
            format!("{windows}, and [run] windows is {}", suite.run.windows),
            "set windows = 4 (2 or more)",
        ));
    }
    if suite.run.schedule.on_lanes() && !suite.run.pin {
        return Err(problem(
            "pins each side and its reference server to a lane of CPUs of its own, and [run] pin = false".into(),
            "remove pin = false",
        ));
    }
    if suite.run.anchor.is_some() {
        return Err(problem(
            "runs a round's two forks side by side, and [run] anchor = true adds a third".into(),
            "remove anchor = true",
        ));
    }
    if !suite.servers.is_empty() {
        return Err(problem(
            "runs against the reference server, and this config has servers under test ([[server]])".into(),
            "remove the [[server]] tables",
        ));
    }
    for s in &suite.scenarios {
        // One client may still be two cells: base vs head twins a command
        // client in the repository ([`settle_cells`], as the run starts).
        if s.clients.len() > 2 {
            return Err(problem(
                format!(
                    "needs exactly two clients in each scenario, and scenario {:?} has {}",
                    s.name,
                    s.clients.len()
                ),
                "give each scenario two clients (clients = [\"a\", \"b\"])",
            ));
        }
        if let StopRule::Requests(_) = s.stop {
            return Err(problem(
                format!(
                    "needs windows of a duration, and scenario {:?} stops after a request count",
                    s.name
                ),
                "set duration = \"500ms\" instead of requests",
            ));
        }
    }
    for c in &suite.clients {
        let why = match c.kind.driver() {
            Driver::Async | Driver::Blocking => continue,
            Driver::Program => match &c.kind {
                ClientKind::Command(cmd) if matches!(cmd.result, ResultFormat::Jmh { .. }) => {
                    format!("cannot run JMH client {:?}: JMH has no window loop", c.name)
                }
                _ => continue,
            },
            Driver::Lean => format!(
                "cannot run client {:?}: {} has no window loop",
                c.name,
                c.kind.name()
            ),
        };
        return Err(problem(why, &format!("use kind = {}", looped_kinds())));
    }
    Ok(())
}

/// As the run starts, with base vs head's twins in `suite`: a paired
/// schedule's round needs each scenario's two cells, two clients side by side or one
/// client measured at both commits. A run of one cell in every scenario (a
/// base-vs-head config run at one commit: on main, nightly) has no second
/// fork to run beside: it runs sequential forks of the same windows,
/// recorded as such (a stored run of the other schedule is not comparable),
/// and the returned note says so. Some scenarios of one cell and some of
/// two are refused: one schedule per run.
pub fn settle_cells(suite: &mut Suite) -> anyhow::Result<Option<String>> {
    let name = suite.run.schedule.as_str();
    match suite.run.schedule {
        Schedule::Sequential => return Ok(None),
        Schedule::Interleaved | Schedule::Duet => {}
    }
    if suite.scenarios.iter().all(|s| s.clients.len() == 1) {
        suite.run.schedule = Schedule::Sequential;
        return Ok(Some(format!(
            "{}: [run] schedule = \"{name}\" runs two clients in a scenario side by side, and this run \
             measures one in each (one commit, no base side): its forks run one after another, {} windows each, \
             recorded as schedule \"sequential\"",
            suite.source, suite.run.windows
        )));
    }
    for s in &suite.scenarios {
        anyhow::ensure!(
            s.clients.len() == 2,
            "{}: [run] schedule = \"{name}\" needs two clients in each scenario (two side by side, \
             or one in the repository measured at both commits, base vs head), and scenario {:?} runs {}: {}; \
             give it two clients, or schedule = \"sequential\"",
            suite.source,
            s.name,
            s.clients.len(),
            s.clients.join(", ")
        );
    }
    Ok(None)
}

/// The built-in kinds whose driver speaks the window loop, as a message
/// lists them (from [`ClientKind::BUILT_IN`]).
fn looped_kinds() -> String {
    let names: Vec<String> = ClientKind::BUILT_IN
        .iter()
        .filter(|k| k.driver().window_loop())
        .map(|k| format!("{:?}", k.name()))
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{ConfigError, Schedule, Suite};

    const CLIENTS: &str = "[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                           \n[[client]]\nname = \"b\"\nkind = \"reqwest\"\n";
    const SCENARIO: &str =
        "[[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\nduration = \"100ms\"\n";

    fn load(run: &str, rest: &str) -> Result<Suite, ConfigError> {
        Suite::from_toml(
            &format!("[run]\nschedule = \"interleaved\"\n{run}\n{rest}"),
            "bench.toml",
        )
    }

    /// The message of a config refused, which names the key and the way out.
    #[track_caller]
    fn refused(run: &str, rest: &str, what: &str) {
        let e = load(run, rest).expect_err("refused").to_string();
        assert!(e.contains("bench.toml:2:"), "at the schedule: {e}");
        assert!(
            e.contains("run.schedule: [run] schedule = \"interleaved\""),
            "{e}"
        );
        assert!(e.contains(what), "{e}");
        assert!(e.contains("or schedule = \"sequential\""), "{e}");
    }

    #[test]
    fn two_built_in_clients_over_windows_run_interleaved() {
        let suite = load("windows = 3", &format!("{CLIENTS}\n{SCENARIO}")).unwrap();
        assert_eq!(suite.run.schedule, Schedule::Interleaved);
    }

    #[test]
    fn a_duet_opens_the_windows_of_forks_together_so_it_needs_forks_of_windows() {
        let duet = |run: &str, rest: &str| {
            Suite::from_toml(
                &format!("[run]\nschedule = \"duet\"\n{run}\n{rest}"),
                "bench.toml",
            )
        };
        let two = format!("{CLIENTS}\n{SCENARIO}");
        let suite = duet("windows = 2", &two).unwrap();
        assert_eq!(suite.run.schedule, Schedule::Duet);
        // One window a process has no window loop to hold it to the other's.
        let e = duet("", &two).unwrap_err().to_string();
        assert!(
            e.contains("opens the windows of two live forks together, and [run] windows is 1"),
            "{e}"
        );
        assert!(e.contains("set windows = 4 (2 or more)"), "{e}");
        // It pins each side to its lane.
        let e = duet("windows = 2\npin = false", &two)
            .unwrap_err()
            .to_string();
        assert!(e.contains("[run] pin = false"), "{e}");
        assert!(e.contains("remove pin = false"), "{e}");
        // Its other needs are an interleaved round's, said under its name.
        let e = duet("windows = 2\nanchor = true", &two)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "run.schedule: [run] schedule = \"duet\" runs a round's two forks side by side"
            ),
            "{e}"
        );
        let e = duet(
            "windows = 2",
            &format!("{CLIENTS}\n[[client]]\nname = \"c\"\nkind = \"hyper\"\n\n{SCENARIO}"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("scenario \"s\" has 3"), "{e}");
    }

    #[test]
    fn command_clients_run_interleaved_beside_any_client() {
        let java =
            "[[client]]\nname = \"java\"\nkind = \"command\"\ncommand = [\"java\", \"Main\"]\n";
        let suite = load(
            "windows = 3",
            &format!("{java}\n[[client]]\nname = \"a\"\nkind = \"hyper\"\n\n{SCENARIO}"),
        )
        .unwrap();
        assert_eq!(suite.run.schedule, Schedule::Interleaved);
    }

    #[test]
    fn what_an_interleaved_round_cannot_hold_is_refused_naming_the_key() {
        let two = format!("{CLIENTS}\n{SCENARIO}");
        refused("windows = 1", &two, "[run] windows is 1");
        refused("", &two, "[run] windows is 1");
        refused(
            "windows = 3\nanchor = true",
            &two,
            "[run] anchor = true adds a third",
        );
        // One client in every scenario: sequential forks as the run starts,
        // said; two once base vs head twins it; one and two: refused.
        let one = load(
            "windows = 3",
            &format!("{CLIENTS}\n{SCENARIO}clients = [\"a\"]\n"),
        )
        .unwrap();
        let mut alone = one.clone();
        let note = super::settle_cells(&mut alone).unwrap().unwrap();
        assert_eq!(alone.run.schedule, Schedule::Sequential);
        assert!(note.contains("one after another, 3 windows each"), "{note}");
        let mut twinned = one.clone();
        twinned.scenarios[0].clients.push("a@base".into());
        assert_eq!(super::settle_cells(&mut twinned).unwrap(), None);
        assert_eq!(twinned.run.schedule, Schedule::Interleaved);
        let mut mixed = twinned.clone();
        let mut lone = mixed.scenarios[0].clone();
        lone.name = "lone".into();
        lone.clients.truncate(1);
        mixed.scenarios.push(lone);
        let e = super::settle_cells(&mut mixed).unwrap_err().to_string();
        assert!(e.contains("scenario \"lone\" runs 1: a;"), "{e}");
        assert!(e.contains("or schedule = \"sequential\""), "{e}");
        refused(
            "windows = 3",
            &format!("{CLIENTS}\n[[client]]\nname = \"c\"\nkind = \"hyper\"\n\n{SCENARIO}"),
            "scenario \"s\" has 3",
        );
        refused(
            "windows = 3",
            &format!("{CLIENTS}\n[[scenario]]\nname = \"s\"\npath = \"/\"\nrequests = 100\n"),
            "stops after a request count",
        );
        refused(
            "windows = 3",
            &format!(
                "[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                 \n[[client]]\nname = \"jmh\"\nkind = \"command\"\ncommand = [\"java\", \"-jar\", \"b.jar\", \"{{jmh_args}}\"]\nresult = \"jmh\"\nbenchmark = \"a.B.c\"\n\n{SCENARIO}"
            ),
            "JMH client \"jmh\": JMH has no window loop",
        );
        refused(
            "windows = 3",
            &format!(
                "[[client]]\nname = \"a\"\nkind = \"hyper\"\n\
                 \n[[client]]\nname = \"lean\"\nkind = \"h1-lean\"\n\n{SCENARIO}"
            ),
            "h1-lean has no window loop",
        );
        refused(
            "windows = 3",
            &format!(
                "{CLIENTS}\n[[server]]\nname = \"sut\"\nurl = \"http://127.0.0.1:1\"\n\n{SCENARIO}"
            ),
            "servers under test",
        );
    }
}
