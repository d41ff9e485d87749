//! Whether two measurements can be compared at all: the environment fingerprint
//! of the two runs, and the load profile of a (scenario, client) in both runs'
//! recorded configs. `compare` asks before it compares a cell. Each difference
//! is one short sentence naming the field and both values.

use crate::config::{ClientSpec, RunSettings, Scenario, ServerSpec, ServerTarget};
use crate::files::{shortened, SHOWN_CHARS};

use super::{CellResult, Environment, RunResults};

/// Differences that make two runs' environments not comparable: CPU model, core
/// count and whether pinning was on. (Kernel, OS and versions are reported by the
/// renderers but do not block a comparison.)
pub fn environment_differences(baseline: &Environment, current: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    if baseline.cpu_model != current.cpu_model {
        out.push(format!(
            "cpu_model differs ({:?} vs {:?})",
            shortened(&baseline.cpu_model, SHOWN_CHARS),
            shortened(&current.cpu_model, SHOWN_CHARS)
        ));
    }
    if baseline.cores != current.cores {
        out.push(format!(
            "cores differ ({} vs {})",
            baseline.cores, current.cores
        ));
    }
    if baseline.pinning.enabled != current.pinning.enabled {
        out.push(format!(
            "pinning.enabled differs ({} vs {})",
            baseline.pinning.enabled, current.pinning.enabled
        ));
    }
    out
}

/// What else differs in the environment between two runs, said so that a
/// change across them is not read as the code's alone: kernel, OS, runner
/// image, CPU governor, architecture, benchgate's and rustc's versions (the
/// fields [`environment_differences`] does not already refuse). A field a
/// side did not record (`None`, a file written before it existed) is not
/// counted as a change.
pub fn environment_changes(baseline: &Environment, current: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |field: &str, a: Option<&str>, b: Option<&str>| {
        if let (Some(a), Some(b)) = (a, b) {
            if a != b {
                out.push(format!(
                    "{field} differs ({:?} vs {:?})",
                    shortened(a, SHOWN_CHARS),
                    shortened(b, SHOWN_CHARS)
                ));
            }
        }
    };
    let (b, c) = (baseline, current);
    check("kernel", Some(&b.kernel), Some(&c.kernel));
    check("os", Some(&b.os), Some(&c.os));
    check(
        "runner_image",
        b.runner_image.as_deref(),
        c.runner_image.as_deref(),
    );
    check("governor", b.governor.as_deref(), c.governor.as_deref());
    check("arch", Some(&b.arch), Some(&c.arch));
    check(
        "benchgate_version",
        Some(&b.benchgate_version),
        Some(&c.benchgate_version),
    );
    check(
        "rustc_version",
        Some(&b.rustc_version),
        Some(&c.rustc_version),
    );
    out
}

/// Every difference in the environment fingerprint between two runs:
/// [`environment_differences`] then [`environment_changes`]. Empty: the
/// fingerprint did not move.
pub fn fingerprint_moves(baseline: &Environment, current: &Environment) -> Vec<String> {
    let mut out = environment_differences(baseline, current);
    out.extend(environment_changes(baseline, current));
    out
}

/// Differences in how the two runs measured their forks, which make them not
/// comparable as an environment difference does: the schedule (`[run]
/// schedule`) and the windows per fork (`[run] windows`); a file from before
/// either existed measured sequentially, one window per fork.
pub fn protocol_differences(baseline: &RunSettings, current: &RunSettings) -> Vec<String> {
    let mut out = Vec::new();
    if baseline.schedule != current.schedule {
        out.push(format!(
            "schedule differs ({:?} vs {:?})",
            baseline.schedule.as_str(),
            current.schedule.as_str()
        ));
    }
    if baseline.windows != current.windows {
        out.push(format!(
            "windows per fork differ ({} vs {})",
            baseline.windows, current.windows
        ));
    }
    out
}

/// [`environment_differences`] of the cells of `scenario`, each side on
/// the runner that measured it ([`RunResults::environment_of`]: a merged
/// file's shards ran on several). A difference on a shard's runner other
/// than shard 1's names that shard, so the report says it per cell.
pub fn cell_environment_differences(
    baseline: &RunResults,
    current: &RunResults,
    scenario: &str,
) -> Vec<String> {
    let diffs = environment_differences(
        baseline.environment_of(scenario),
        current.environment_of(scenario),
    );
    let mut diffs: Vec<String> = match current.other_runner_shard(scenario) {
        Some(k) => diffs
            .into_iter()
            .map(|d| format!("measured on shard {k}'s runner: {d}"))
            .collect(),
        None => diffs,
    };
    diffs.extend(protocol_differences(
        &baseline.config.run,
        &current.config.run,
    ));
    diffs
}

/// Differences in what a (scenario, client) asked for: method, path, body, load,
/// stop rule, warmup, and the client's kind, pool, HTTP version and TLS.
///
/// Deliberately not compared: the per-request timeout (it bounds failures, not
/// the load), a mock client's script and `inject_cpu_ns` (`inject_cpu`: both
/// stand for the code under test, which is what a comparison is meant to judge;
/// scripts/gate-quality.sh compares an injected run with a plain one).
pub fn load_profile_differences(
    baseline: (&Scenario, &ClientSpec),
    current: (&Scenario, &ClientSpec),
) -> Vec<String> {
    let (bs, bc) = baseline;
    let (cs, cc) = current;
    let mut out = Vec::new();
    // A recorded config's text (a path) may be long: shown shortened.
    let mut check = |field: &str, a: String, b: String| {
        if a != b {
            let (a, b) = (shortened(&a, SHOWN_CHARS), shortened(&b, SHOWN_CHARS));
            out.push(format!("{field} differs ({a} vs {b})"));
        }
    };
    check(
        "method",
        bs.method.as_str().into(),
        cs.method.as_str().into(),
    );
    check("path", format!("{:?}", bs.path), format!("{:?}", cs.path));
    check("body", format!("{} B", bs.body), format!("{} B", cs.body));
    check("load", format!("{:?}", bs.load), format!("{:?}", cs.load));
    check("stop", format!("{:?}", bs.stop), format!("{:?}", cs.stop));
    check(
        "warmup",
        format!("{:?}", bs.warmup),
        format!("{:?}", cs.warmup),
    );
    // A command's program may change between runs: that is what is measured.
    check("client kind", bc.kind.name().into(), cc.kind.name().into());
    check(
        "client pool",
        format!("{:?}", bc.pool),
        format!("{:?}", cc.pool),
    );
    check(
        "client http",
        format!("{:?}", bc.http),
        format!("{:?}", cc.http),
    );
    check("client tls", bc.tls.to_string(), cc.tls.to_string());
    out
}

/// Differences in how a server under test is started (argv, before `{port}`
/// is filled in) or reached (url). Working directory and environment are
/// deliberately not compared: checkouts and runners differ in paths.
pub fn server_differences(
    baseline: Option<&ServerSpec>,
    current: Option<&ServerSpec>,
) -> Vec<String> {
    let describe = |s: Option<&ServerSpec>| match s.map(|s| &s.target) {
        None => "none".to_string(),
        Some(ServerTarget::Command(c)) => format!("command {:?}", c.command),
        Some(ServerTarget::Url(u)) => format!("url {u:?}"),
    };
    let (b, c) = (describe(baseline), describe(current));
    if b == c {
        Vec::new()
    } else {
        let (b, c) = (shortened(&b, SHOWN_CHARS), shortened(&c, SHOWN_CHARS));
        vec![format!("server differs ({b} vs {c})")]
    }
}

/// Load-profile differences of a cell between the two runs' resolved configs
/// (empty when either config lacks the scenario or client: nothing to check),
/// and differences in how its server under test is started or reached.
pub fn profile_differences(
    baseline: &RunResults,
    current: &RunResults,
    cell: &CellResult,
) -> Vec<String> {
    fn find<'r>(r: &'r RunResults, cell: &CellResult) -> Option<(&'r Scenario, &'r ClientSpec)> {
        let scenario = r
            .config
            .scenarios
            .iter()
            .find(|s| s.name == cell.scenario)?;
        Some((scenario, r.config.client(&cell.client)?))
    }
    let mut out = match (find(baseline, cell), find(current, cell)) {
        (Some(b), Some(c)) => load_profile_differences(b, c),
        _ => Vec::new(),
    };
    if let Some(base_cell) = baseline.cell_at(&cell.scenario, &cell.client, cell.server.as_deref())
    {
        out.extend(super::jmh::differences(
            (baseline, base_cell),
            (current, cell),
        ));
    }
    if let Some(name) = &cell.server {
        out.extend(server_differences(
            baseline.config.server(name),
            current.config.server(name),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ClientKind, Load, MockScript, Suite};
    use crate::results::environment::Pinning;

    fn env(cpu: &str, cores: u32, pin: bool) -> Environment {
        Environment {
            cpu_model: cpu.into(),
            cores,
            kernel: "6.1".into(),
            os: "Linux".into(),
            arch: "x86_64".into(),
            benchgate_version: "0.1.0".into(),
            rustc_version: "rustc".into(),
            pinning: Pinning {
                enabled: pin,
                server_cpus: vec![],
                client_cpus: vec![],
            },
            runner_image: Some("ubuntu24 20250105.1.0".into()),
            governor: None,
        }
    }

    #[test]
    fn environment_fingerprint() {
        let a = env("EPYC", 2, true);
        assert!(environment_differences(&a, &a).is_empty());
        let mut other_kernel = a.clone();
        other_kernel.kernel = "6.8".into();
        assert!(environment_differences(&a, &other_kernel).is_empty());
        let d = environment_differences(&a, &env("Xeon", 4, false));
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("\"EPYC\" vs \"Xeon\""));
        // A results file's 4 KiB CPU model, shortened in the sentence.
        let d = environment_differences(&a, &env(&"X".repeat(4096), 2, true));
        let shown = format!("\"{}…\"", "X".repeat(crate::files::SHOWN_CHARS - 1));
        assert_eq!(d, [format!("cpu_model differs (\"EPYC\" vs {shown})")]);
    }

    #[test]
    fn environment_changes_name_what_else_moved() {
        let a = env("EPYC", 2, true);
        assert!(environment_changes(&a, &a).is_empty());
        let mut b = a.clone();
        b.kernel = "6.8".into();
        b.runner_image = Some("ubuntu24 20250112.1.0".into());
        b.benchgate_version = "0.2.0".into();
        assert_eq!(
            environment_changes(&a, &b),
            [
                "kernel differs (\"6.1\" vs \"6.8\")",
                "runner_image differs (\"ubuntu24 20250105.1.0\" vs \"ubuntu24 20250112.1.0\")",
                "benchgate_version differs (\"0.1.0\" vs \"0.2.0\")",
            ]
        );
        // Not recorded on one side (an older file): not a change.
        b.runner_image = None;
        b.governor = Some("performance".into());
        assert_eq!(environment_changes(&a, &b).len(), 2);
        // The refused fields are not said twice; the moves hold both.
        let c = env("Xeon", 2, true);
        assert!(environment_changes(&a, &c).is_empty());
        assert_eq!(fingerprint_moves(&a, &c).len(), 1);
    }

    #[test]
    fn load_profile() {
        let suite = Suite::default_suite();
        let s = &suite.scenarios[0];
        let c = suite.client("hyper").unwrap();
        assert!(load_profile_differences((s, c), (s, c)).is_empty());
        let mut s2 = s.clone();
        s2.load = Load::Closed { concurrency: 32 };
        s2.timeout = std::time::Duration::from_secs(1);
        let mut c2 = c.clone();
        c2.pool = Some(3);
        let d = load_profile_differences((s, c), (&s2, &c2));
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("load differs"));
        assert!(d[1].contains("None vs Some(3)"));
        // Mock scripts are the code under test.
        let mock = |l: u64| ClientSpec {
            kind: ClientKind::Mock(MockScript {
                latencies_us: vec![l],
                error_every: 0,
                response_bytes: 0,
                fail: None,
            }),
            ..c.clone()
        };
        assert!(load_profile_differences((s, &mock(1)), (s, &mock(2))).is_empty());
        // So is an injected CPU cost.
        let injected = ClientSpec {
            inject_cpu_ns: 1_299,
            inject_tail: None,
            ..c.clone()
        };
        assert!(load_profile_differences((s, c), (s, &injected)).is_empty());
    }

    #[test]
    fn server_command_or_url() {
        let url = |u: &str| ServerSpec {
            name: "a".into(),
            target: ServerTarget::Url(u.into()),
        };
        let (a, b) = (url("http://127.0.0.1:1"), url("http://127.0.0.1:2"));
        assert!(server_differences(Some(&a), Some(&a)).is_empty());
        let d = server_differences(Some(&a), Some(&b));
        assert_eq!(d.len(), 1);
        assert!(
            d[0].starts_with("server differs (url \"http://127.0.0.1:1\""),
            "{d:?}"
        );
        assert!(server_differences(None, Some(&a))[0].contains("none vs url"));
    }
}
