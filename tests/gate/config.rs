//! Config loading end to end: every error path names the file, the line, the field
//! and the fix; happy paths apply defaults and overrides; fixtures validate.

use crate::common;

use std::path::Path;
use std::time::Duration;

use benchgate::config::{ClientKind, ConfigError, HttpVersion, Load, Method, StopRule, Suite};

const FILE: &str = "bench.toml";

const CLIENT: &str = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n";
const SCENARIO: &str = "[[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\n";

fn load(text: &str) -> Result<Suite, ConfigError> {
    Suite::from_toml(text, FILE)
}

/// Asserts an `Invalid` error at `line` on `field` whose text contains `what` and `fix`.
#[track_caller]
fn invalid(text: &str, line: usize, field: &str, what: &str, fix: &str) -> String {
    let shown = common::config_errors::invalid(load(text), FILE, line, field, what, fix);
    assert!(shown.contains(field) && shown.contains(fix), "{shown}");
    shown
}

#[track_caller]
fn syntax(text: &str, line: usize, what: &str) -> String {
    let err = load(text).expect_err("config should be rejected");
    let shown = err.to_string();
    match &err {
        ConfigError::Syntax {
            source_name,
            line: l,
            message,
            ..
        } => {
            assert_eq!(source_name, FILE);
            assert_eq!(*l, line, "{shown}");
            assert!(message.contains(what), "{shown}");
        }
        other => panic!("expected Syntax, got {other:?}"),
    }
    assert!(shown.starts_with(&format!("{FILE}:{line}:")), "{shown}");
    shown
}

fn with_scenario(body: &str) -> String {
    // CLIENT takes lines 1-3, the scenario header is line 4, name line 5.
    format!("{CLIENT}[[scenario]]\nname = \"s\"\n{body}")
}

// ---- syntax -------------------------------------------------------------------

#[test]
fn toml_syntax_error_names_the_line() {
    let shown = syntax("[run]\nrounds = 3\nwarmup = \"1s\n", 3, "");
    assert!(shown.contains("TOML syntax error"), "{shown}");
    assert!(shown.contains("https://toml.io"), "{shown}");
}

#[test]
fn duplicate_key_is_a_syntax_error_with_a_fix() {
    let shown = syntax("[run]\nrounds = 3\nrounds = 4\n", 3, "duplicate key");
    assert!(shown.contains("remove or rename the second one"), "{shown}");
}

#[test]
fn datetime_values_are_explained() {
    let shown = syntax("[run]\nwarmup = 1979-05-27\n", 2, "date/time");
    assert!(shown.contains("quoted strings like \"3s\""), "{shown}");
}

// ---- shape: unknown fields and types -------------------------------------------

#[test]
fn unknown_top_level_table_lists_the_allowed_ones() {
    let text = format!("{CLIENT}{SCENARIO}[report]\nformat = \"json\"\n");
    invalid(
        &text,
        7,
        "report",
        "unknown field `report` in the top level",
        "allowed fields are: run, client, scenario, gate, compare",
    );
}

#[test]
fn unknown_client_field_lists_allowed_fields() {
    let text = "[[client]]\nname = \"h\"\nkind = \"hyper\"\nconnections = 4\n";
    invalid(
        text,
        4,
        "client \"h\".connections",
        "unknown field `connections`",
        "name, kind, pool, http, tls",
    );
}

#[test]
fn unknown_scenario_field_suggests_a_spelling() {
    let text = with_scenario("path = \"/\"\nconcurency = 4\n");
    invalid(
        &text,
        7,
        "scenario \"s\".concurency",
        "unknown field",
        "did you mean `concurrency`?",
    );
}

#[test]
fn unknown_run_field() {
    invalid(
        "[run]\nround = 3\n",
        2,
        "run.round",
        "unknown field `round` in [run]",
        "did you mean `rounds`?",
    );
}

#[test]
fn wrong_type_integer_as_string() {
    invalid(
        "[run]\nrounds = \"5\"\n",
        2,
        "run.rounds",
        "expected an integer, found a string \"5\"",
        "rounds = 5",
    );
}

#[test]
fn wrong_type_duration_as_number() {
    let text = with_scenario("path = \"/\"\nwarmup = 1\n");
    invalid(
        &text,
        7,
        "scenario \"s\".warmup",
        "expected a duration string, found an integer 1",
        "warmup = \"1s\"",
    );
}

#[test]
fn wrong_type_http_version_as_number() {
    let text = "[[client]]\nname = \"h\"\nkind = \"hyper\"\nhttp = 2\n";
    invalid(
        text,
        4,
        "client \"h\".http",
        "found an integer 2",
        "http = \"2\"",
    );
}

#[test]
fn wrong_type_clients_not_a_list() {
    let text = with_scenario("path = \"/\"\nclients = \"hyper\"\n");
    invalid(
        &text,
        7,
        "scenario \"s\".clients",
        "expected an array of client names",
        "clients = [\"hyper\"",
    );
}

#[test]
fn wrong_type_client_list_item() {
    let text = with_scenario("path = \"/\"\nclients = [\"hyper\", 3]\n");
    invalid(
        &text,
        7,
        "scenario \"s\".clients[1]",
        "found an integer 3",
        "clients = [",
    );
}

#[test]
fn single_bracket_client_table_asks_for_double_brackets() {
    let text = format!("[client]\nname = \"h\"\nkind = \"hyper\"\n{SCENARIO}");
    invalid(
        &text,
        1,
        "client",
        "expected an array of tables, found a table",
        "double brackets",
    );
}

#[test]
fn double_bracket_run_asks_for_single_brackets() {
    let text = format!("[[run]]\nrounds = 3\n{CLIENT}{SCENARIO}");
    invalid(
        &text,
        1,
        "run",
        "expected a table, found an array",
        "single brackets",
    );
}

// ---- required fields and names --------------------------------------------------

#[test]
fn missing_client_name_points_at_the_table() {
    let text = format!("{CLIENT}\n[[client]]\nkind = \"reqwest\"\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client[1].name",
        "missing required field `name`",
        "add name = \"hyper\"",
    );
}

#[test]
fn missing_client_kind() {
    let text = format!("[[client]]\nname = \"h\"\n{SCENARIO}");
    let shown = invalid(
        &text,
        1,
        "client \"h\".kind",
        "missing required field `kind`",
        "kind = \"hyper\"",
    );
    names_every_built_in_kind(&shown);
}

#[test]
fn missing_scenario_name() {
    let text = format!("{CLIENT}[[scenario]]\npath = \"/\"\n");
    invalid(
        &text,
        4,
        "scenario[0].name",
        "missing required field `name`",
        "name = \"get-22b\"",
    );
}

#[test]
fn missing_scenario_path() {
    invalid(
        &with_scenario("concurrency = 2\n"),
        4,
        "scenario \"s\".path",
        "missing required field `path`",
        "path = \"/bytes/22\"",
    );
}

#[test]
fn duplicate_client_name_points_at_the_second() {
    let text = format!("{CLIENT}\n[[client]]\nname = \"hyper\"\nkind = \"reqwest\"\n{SCENARIO}");
    invalid(
        &text,
        6,
        "client[1].name",
        "\"hyper\" is already used on line 2",
        "unique name",
    );
}

#[test]
fn duplicate_scenario_name_points_at_the_second() {
    let text = format!("{CLIENT}{SCENARIO}{SCENARIO}");
    invalid(
        &text,
        8,
        "scenario[1].name",
        "\"s\" is already used on line 5",
        "unique name",
    );
}

#[test]
fn empty_name() {
    let text = format!("[[client]]\nname = \"\"\nkind = \"hyper\"\n{SCENARIO}");
    invalid(
        &text,
        2,
        "client[0].name",
        "cannot be empty",
        "1 to 64 characters",
    );
}

#[test]
fn name_too_long() {
    let long = "x".repeat(65);
    let text = format!("{CLIENT}[[scenario]]\npath = \"/\"\nname = \"{long}\"\n");
    invalid(
        &text,
        6,
        "scenario[0].name",
        "65 characters long",
        "1 to 64 characters",
    );
}

#[test]
fn name_with_control_character_is_shown_escaped() {
    let text = format!("[[client]]\nname = \"a\\u0007b\"\nkind = \"hyper\"\n{SCENARIO}");
    let shown = invalid(
        &text,
        2,
        "client[0].name",
        "control character",
        "without control characters",
    );
    assert!(shown.contains("a\\u{7}b"), "{shown}");
    assert!(!shown.contains('\u{7}'), "{shown}");
}

#[test]
fn no_clients() {
    let shown = invalid(
        SCENARIO,
        4,
        "client",
        "no clients are defined",
        "add at least one [[client]]",
    );
    names_every_built_in_kind(&shown);
}

/// The message lists every built-in client kind (`ClientKind::BUILT_IN`).
#[track_caller]
fn names_every_built_in_kind(shown: &str) {
    for kind in ClientKind::BUILT_IN {
        assert!(shown.contains(&format!("{:?}", kind.name())), "{shown}");
    }
}

#[test]
fn empty_client_array() {
    invalid(
        &format!("client = []\n{SCENARIO}"),
        1,
        "client",
        "no clients are defined",
        "[[client]]",
    );
}

#[test]
fn no_scenarios() {
    invalid(
        CLIENT,
        4,
        "scenario",
        "no scenarios are defined",
        "add at least one [[scenario]]",
    );
}

// ---- clients ---------------------------------------------------------------------

#[test]
fn unknown_kind_lists_the_kinds() {
    let text = format!("[[client]]\nname = \"h\"\nkind = \"curl\"\n{SCENARIO}");
    let shown = invalid(
        &text,
        3,
        "client \"h\".kind",
        "unknown client kind \"curl\"",
        "\"hyper\", \"reqwest\", \"reqwest-blocking\"",
    );
    names_every_built_in_kind(&shown);
    assert!(shown.contains("\"command\""), "{shown}");
}

#[test]
fn command_client_is_validated_and_resolves_cwd_against_the_config_file() {
    let text = format!(
        "[[client]]\nname = \"java\"\nkind = \"command\"\ncommand = [\"java\", \"-jar\", \"b.jar\"]\nsetup = [\"sh\", \"build.sh\"]\ncwd = \"clients\"\nenv = {{ JAVA_OPTS = \"-Xmx64m\" }}\ntimeout = \"45s\"\ntls = true\n{SCENARIO}"
    );
    let suite = Suite::from_toml(&text, "/etc/bench/bench.toml").unwrap();
    let ClientKind::Command(c) = &suite.clients[0].kind else {
        panic!("not a command client: {:?}", suite.clients[0].kind)
    };
    assert_eq!(c.command, ["java", "-jar", "b.jar"]);
    assert_eq!(
        c.setup.as_deref(),
        Some(&["sh".to_string(), "build.sh".to_string()][..])
    );
    assert_eq!(c.cwd, "/etc/bench/clients");
    assert_eq!(c.env.get("JAVA_OPTS").map(String::as_str), Some("-Xmx64m"));
    assert_eq!(c.timeout, Some(std::time::Duration::from_secs(45)));
    assert!(suite.clients[0].tls);
}

#[test]
fn command_client_needs_a_command() {
    let text = format!("[[client]]\nname = \"x\"\nkind = \"command\"\n{SCENARIO}");
    invalid(
        &text,
        1,
        "client \"x\".command",
        "missing required field `command`",
        "command = [",
    );
    let text = format!("[[client]]\nname = \"x\"\nkind = \"command\"\ncommand = []\n{SCENARIO}");
    invalid(
        &text,
        4,
        "client \"x\".command",
        "the command is empty",
        "give the program",
    );
}

#[test]
fn command_client_rejects_pool_and_reserved_env() {
    let text = format!(
        "[[client]]\nname = \"x\"\nkind = \"command\"\ncommand = [\"a\"]\npool = 4\n{SCENARIO}"
    );
    invalid(
        &text,
        5,
        "client \"x\".pool",
        "built-in clients only",
        "BENCHGATE_CONCURRENCY",
    );
    let text = format!("[[client]]\nname = \"x\"\nkind = \"command\"\ncommand = [\"a\"]\nenv = {{ BENCHGATE_URL = \"x\" }}\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client \"x\".env.BENCHGATE_URL",
        "set by benchgate",
        "reserved",
    );
    let text = format!("[[client]]\nname = \"x\"\nkind = \"command\"\ncommand = [\"a\"]\nenv = {{ A = 1 }}\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client \"x\".env.A",
        "expected a string, found an integer 1",
        "env = {",
    );
}

/// Issue 28, point 5: benchgate replaces nothing in a command client's
/// arguments or env values; `{url}`, `{port}` and `{host}` there are errors
/// that name BENCHGATE_URL. A shell's `${url}` stays.
#[test]
fn command_client_target_placeholders_are_refused() {
    let head = "[[client]]\nname = \"x\"\nkind = \"command\"\n";
    let text = format!("{head}command = [\"curl\", \"{{url}}\"]\n{SCENARIO}");
    let shown = invalid(
        &text,
        4,
        "client \"x\".command[1]",
        "{url} is not replaced",
        "read BENCHGATE_URL in the program",
    );
    assert!(shown.starts_with("bench.toml:4:20: "), "{shown}");
    assert!(shown.contains("BENCHGATE_BASE_URL"), "{shown}");
    let text = format!("{head}command = [\"client\", \"--to=http://{{HOST}}:8080/\"]\n{SCENARIO}");
    invalid(
        &text,
        4,
        "client \"x\".command[1]",
        "{HOST} is not replaced",
        "BENCHGATE_URL",
    );
    let text =
        format!("{head}command = [\"a\"]\nenv = {{ TARGET = \"127.0.0.1:{{port}}\" }}\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client \"x\".env.TARGET",
        "{port} is not replaced: env values are passed as written",
        "TARGET=\\\"$BENCHGATE_URL\\\"",
    );
    // A shell's variables and other braces are the program's business.
    let text = format!(
        "{head}command = [\"sh\", \"-c\", \"curl ${{url}} ${{port}}; echo '{{\\\"a\\\": 1}}' {{jmh}}\"]\nenv = {{ A = \"${{host}}\", B = \"{{ url }}\" }}\n{SCENARIO}"
    );
    let suite = load(&text).unwrap();
    let ClientKind::Command(c) = &suite.clients[0].kind else {
        panic!("not a command client")
    };
    assert_eq!(c.command[2], "curl ${url} ${port}; echo '{\"a\": 1}' {jmh}");
    assert_eq!(c.env["A"], "${host}");
}

#[test]
fn command_fields_on_a_built_in_client_are_errors() {
    let text = format!("[[client]]\nname = \"h\"\nkind = \"hyper\"\ncommand = [\"a\"]\n{SCENARIO}");
    invalid(
        &text,
        4,
        "client \"h\".command",
        "applies to kind = \"command\" clients only",
        "remove command",
    );
}

#[test]
fn pass_env_names_variables_to_pass_through() {
    let head = "[[client]]\nname = \"x\"\nkind = \"command\"\ncommand = [\"a\"]\n";
    let text = format!("{head}pass_env = [\"NPM_TOKEN\", \"NPM_TOKEN\", \"MY-VAR\"]\n{SCENARIO}");
    let suite = load(&text).unwrap();
    let ClientKind::Command(c) = &suite.clients[0].kind else {
        panic!("not a command client")
    };
    assert_eq!(c.pass_env, ["NPM_TOKEN", "MY-VAR"], "duplicates dropped");
    let text = format!("{head}pass_env = [\"A\", \"NPM_TOKEN=x\"]\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client \"x\".pass_env[1]",
        "is not an environment variable name",
        "the value comes from benchgate's environment",
    );
    let text = format!("{head}pass_env = [\"BENCHGATE_URL\"]\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client \"x\".pass_env[0]",
        "set by benchgate",
        "reserved",
    );
    for name in [
        "GITHUB_TOKEN",
        "input_github-token",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    ] {
        let text = format!("{head}pass_env = [\"{name}\"]\n{SCENARIO}");
        invalid(
            &text,
            5,
            "client \"x\".pass_env[0]",
            "the workflow's own credential",
            "under another name",
        );
    }
    let text =
        format!("{head}env = {{ NPM_TOKEN = \"x\" }}\npass_env = [\"NPM_TOKEN\"]\n{SCENARIO}");
    invalid(
        &text,
        6,
        "client \"x\".pass_env[0]",
        "also set in env",
        "keep one",
    );
    let text = format!("{head}pass_env = \"NPM_TOKEN\"\n{SCENARIO}");
    invalid(
        &text,
        5,
        "client \"x\".pass_env",
        "expected an array of variable names",
        "pass_env = [\"NPM_TOKEN\"]",
    );
    let text = format!("{CLIENT}pass_env = [\"NPM_TOKEN\"]\n{SCENARIO}");
    invalid(
        &text,
        4,
        "client \"hyper\".pass_env",
        "applies to kind = \"command\" clients only",
        "remove pass_env",
    );
}

#[test]
fn unknown_http_version() {
    let text = format!("[[client]]\nname = \"h\"\nkind = \"hyper\"\nhttp = \"3\"\n{SCENARIO}");
    invalid(
        &text,
        4,
        "client \"h\".http",
        "unknown HTTP version \"3\"",
        "http = \"1.1\" or http = \"2\"",
    );
}

#[test]
fn pool_zero() {
    let text = format!("[[client]]\nname = \"h\"\nkind = \"hyper\"\npool = 0\n{SCENARIO}");
    invalid(
        &text,
        4,
        "client \"h\".pool",
        "must be from 1 to 100000, got 0",
        "pool = 10",
    );
}

// ---- run and stop rules ------------------------------------------------------------

#[test]
fn rounds_out_of_range() {
    invalid(
        "[run]\nrounds = 0\n",
        2,
        "run.rounds",
        "must be from 1 to 100, got 0",
        "rounds = 5",
    );
    invalid(
        "[run]\n\nrounds = 101\n",
        3,
        "run.rounds",
        "got 101",
        "rounds = 5",
    );
}

#[test]
fn max_rounds_is_at_least_rounds_and_defaults_to_it() {
    invalid(
        "[run]\nrounds = 10\nmax_rounds = 6\n",
        3,
        "run.max_rounds",
        "must be from 10 to 300, got 6",
        "max_rounds = 30 (at least rounds = 10)",
    );
    let suite = load("[run]\nrounds = 7\n[[client]]\nname = \"h\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n").unwrap();
    assert_eq!((suite.run.rounds, suite.run.max_rounds), (7, 7));
}

#[test]
fn a_budget_lets_max_rounds_default_to_300_and_is_bounded() {
    let body =
        "[[client]]\nname = \"h\"\nkind = \"hyper\"\n[[scenario]]\nname = \"s\"\npath = \"/\"\n";
    let suite = load(&format!("[run]\nrounds = 7\nbudget = \"5m\"\n{body}")).unwrap();
    assert_eq!(
        (suite.run.rounds, suite.run.max_rounds, suite.run.budget),
        (7, 300, Some(std::time::Duration::from_secs(300)))
    );
    // An explicit max_rounds stays.
    let suite = load(&format!(
        "[run]\nrounds = 7\nmax_rounds = 20\nbudget = \"5m\"\n{body}"
    ))
    .unwrap();
    assert_eq!(suite.run.max_rounds, 20);
    invalid(
        "[run]\nbudget = \"7h\"\n",
        2,
        "run.budget",
        "is 7h, longer than the 6h a run may take",
        "budget = \"5m\"",
    );
    invalid(
        "[run]\nbudget = \"0s\"\n",
        2,
        "run.budget",
        "must be longer than 0",
        "budget = \"3s\"",
    );
}

#[test]
fn invalid_duration_uses_the_unit_parser_message() {
    invalid(
        "[run]\nwarmup = \"3\"\n",
        2,
        "run.warmup",
        "`3` has no unit",
        "write it like \"500ms\"",
    );
    let text = with_scenario("path = \"/\"\ntimeout = \"5 parsecs\"\n");
    invalid(
        &text,
        7,
        "scenario \"s\".timeout",
        "unknown unit `parsecs`",
        "ns, us, ms, s, m, h",
    );
}

#[test]
fn zero_duration_and_timeout() {
    invalid(
        "[run]\nduration = \"0s\"\n",
        2,
        "run.duration",
        "must be longer than 0",
        "duration = \"3s\"",
    );
    let text = with_scenario("path = \"/\"\ntimeout = \"0ms\"\n");
    invalid(
        &text,
        7,
        "scenario \"s\".timeout",
        "must be longer than 0",
        "timeout = \"3s\"",
    );
}

#[test]
fn both_duration_and_requests_in_run() {
    invalid(
        "[run]\nduration = \"3s\"\nrequests = 100\n",
        3,
        "run.requests",
        "duration and requests are both set in [run]",
        "remove duration to stop after a request count",
    );
}

#[test]
fn both_duration_and_requests_in_scenario() {
    let text = with_scenario("path = \"/\"\nduration = \"3s\"\nrequests = 100\n");
    invalid(
        &text,
        8,
        "scenario \"s\".requests",
        "both set",
        "or remove requests",
    );
}

#[test]
fn requests_zero_or_negative() {
    invalid(
        "[run]\nrequests = 0\n",
        2,
        "run.requests",
        "must be from 1",
        "requests = 200000",
    );
    let text = with_scenario("path = \"/\"\nrequests = -5\n");
    invalid(
        &text,
        7,
        "scenario \"s\".requests",
        "got -5",
        "requests = 200000",
    );
}

// ---- scenarios -----------------------------------------------------------------------

#[test]
fn body_with_get_matches_the_documented_message() {
    let text =
        format!("{CLIENT}[[scenario]]\nname = \"put-1mib\"\npath = \"/upload\"\nbody = \"1MiB\"\n");
    let shown = invalid(
        &text,
        7,
        "scenario \"put-1mib\".body",
        "a body needs method PUT or POST, but method is GET",
        "set method = \"PUT\" or remove body",
    );
    assert_eq!(
        shown,
        "bench.toml:7:8: scenario \"put-1mib\".body: a body needs method PUT or POST, but method is GET; set method = \"PUT\" or remove body"
    );
}

#[test]
fn body_with_delete() {
    let text = with_scenario("path = \"/\"\nmethod = \"DELETE\"\nbody = 10\n");
    invalid(
        &text,
        8,
        "scenario \"s\".body",
        "but method is DELETE",
        "remove body",
    );
}

#[test]
fn invalid_body_size() {
    let text = with_scenario("path = \"/upload\"\nmethod = \"PUT\"\nbody = \"1XB\"\n");
    invalid(
        &text,
        8,
        "scenario \"s\".body",
        "unknown size unit `XB`",
        "use B, KB, MB",
    );
    let text = with_scenario("path = \"/upload\"\nmethod = \"PUT\"\nbody = -1\n");
    invalid(
        &text,
        8,
        "scenario \"s\".body",
        "cannot be negative",
        "body = \"1MiB\"",
    );
}

/// Issue 30, point 6: a body over 256 MiB measures the loopback interface,
/// not the client, and the driver would hold it in memory.
#[test]
fn a_body_over_256_mib_is_refused() {
    let text = with_scenario("path = \"/upload\"\nmethod = \"PUT\"\nbody = \"300MiB\"\n");
    invalid(
        &text,
        8,
        "scenario \"s\".body",
        "the body is 314572800 bytes (300.0 MiB), over the limit of 268435456 bytes (256 MiB): a larger upload measures copying through the loopback interface, not the client",
        "use body = \"256MiB\" or less",
    );
    let text = with_scenario("path = \"/upload\"\nmethod = \"PUT\"\nbody = 268435457\n");
    invalid(&text, 8, "scenario \"s\".body", "over the limit", "256MiB");
    let text = with_scenario("path = \"/upload\"\nmethod = \"PUT\"\nbody = \"256MiB\"\n");
    assert_eq!(load(&text).unwrap().scenarios[0].body, 256 << 20);
}

/// Issue 30, point 6: a suite whose cells a results file could not hold is
/// refused at load, naming the count and the limit, before anything runs.
#[test]
fn a_suite_of_more_cells_than_a_results_file_holds_is_refused() {
    let text = many_cells(101, 100);
    invalid(
        &text,
        301,
        "scenario",
        "the suite makes 10100 cells (101 scenarios with 10100 (scenario, client) pairs), over the limit of 10000 a results file holds",
        "split the suite into several configs",
    );
    // 10,000 cells are within the count, but not what their trials take
    // (issue 53, below).
    let e = load(&many_cells(100, 100)).unwrap_err().to_string();
    assert!(e.contains("10000 cells of up to 5 rounds"), "{e}");
    // `benchgate run` stops at load: no server, no trial, no results file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bench.toml"), &text).unwrap();
    let started = std::time::Instant::now();
    let out = std::process::Command::new(common::exe())
        .current_dir(dir.path())
        .args(["run", "--config", "bench.toml", "--out", "results.json"])
        .env("CI", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "benchgate: error: bench.toml:301:1: scenario: the suite makes 10100 cells"
        ),
        "{stderr}"
    );
    assert!(!dir.path().join("results.json").exists());
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Issue 53: a suite whose results file no reader would take (its cells x
/// max_rounds over what the reader lets a file take in memory: `compare`,
/// `merge` and the stores refused it after hours of measuring) is refused
/// at load, naming the key and the most rounds that fit, which load.
#[test]
fn a_suite_whose_results_file_no_reader_takes_is_refused_at_load() {
    use benchgate::config::limits::rounds_that_fit;
    // 10,000 cells of one round: not even one round fits.
    let text = format!("[run]\nrounds = 1\n{}", many_cells(100, 100));
    invalid(
        &text,
        303,
        "scenario",
        "10000 cells of up to 1 round make a results file that takes about",
        "give scenarios fewer clients (clients = [...]): at most",
    );
    // 1,500 cells of up to 20 rounds; of 10 rounds.
    let fit = rounds_that_fit(1_500, 1);
    let text = format!("[run]\nrounds = 3\nmax_rounds = 20\n{}", many_cells(30, 50));
    let shown = invalid(
        &text,
        3,
        "run.max_rounds",
        "1500 cells of up to 20 rounds make a results file that takes about",
        &format!("set max_rounds = {fit}, the most that fit"),
    );
    assert!(
        shown.contains("over the limit of 64 MiB every reader"),
        "{shown}"
    );
    let text = format!("[run]\nrounds = 10\n{}", many_cells(30, 50));
    invalid(
        &text,
        2,
        "run.rounds",
        "1500 cells of up to 10 rounds",
        &format!("set rounds = {fit}"),
    );
    // 600 cells of up to 60 rounds; the most that fit load.
    let fit = rounds_that_fit(600, 1);
    let text = |max: u32| format!("[run]\nmax_rounds = {max}\n{}", many_cells(20, 30));
    invalid(
        &text(60),
        2,
        "run.max_rounds",
        "600 cells of up to 60 rounds",
        &format!("set max_rounds = {fit}"),
    );
    assert_eq!(load(&text(fit)).unwrap().run.max_rounds, fit);
    invalid(
        &text(fit + 1),
        2,
        "run.max_rounds",
        "600 cells",
        &format!("max_rounds = {fit}"),
    );
    // A budget's default max_rounds (300) is what fits, when fewer do.
    let text = format!("[run]\nbudget = \"5m\"\n{}", many_cells(20, 30));
    assert_eq!(load(&text).unwrap().run.max_rounds, fit);
    let small = format!("[run]\nbudget = \"5m\"\n{}", many_cells(2, 3));
    assert_eq!(load(&small).unwrap().run.max_rounds, 300);
    // --rounds is held to it too, with a budget's max_rounds as without.
    let rounds = |n: u32| benchgate::config::Overrides {
        rounds: Some(n),
        ..Default::default()
    };
    for suite in [load(&many_cells(20, 30)).unwrap(), load(&text).unwrap()] {
        let fits = suite.clone().with_overrides(&rounds(fit)).unwrap();
        assert_eq!(fits.run.rounds, fit);
        let e = suite
            .with_overrides(&rounds(fit + 1))
            .unwrap_err()
            .to_string();
        let over = fit + 1;
        assert!(
            e.starts_with(&format!(
                "--rounds {over}: bench.toml: 600 cells of up to {over} rounds make"
            )) && e.ends_with(&format!("give --rounds {fit} or fewer")),
            "{e}"
        );
    }
}

/// A config of `scenarios` scenarios, each run by all of `clients` clients
/// (3 lines per client: the first scenario starts on line `3 * clients + 1`).
fn many_cells(scenarios: usize, clients: usize) -> String {
    let mut text = String::new();
    for c in 0..clients {
        text.push_str(&format!("[[client]]\nname = \"c{c}\"\nkind = \"hyper\"\n"));
    }
    for s in 0..scenarios {
        text.push_str(&format!("[[scenario]]\nname = \"s{s}\"\npath = \"/\"\n"));
    }
    text
}

#[test]
fn unknown_method() {
    let text = with_scenario("path = \"/\"\nmethod = \"PATCH\"\n");
    invalid(
        &text,
        7,
        "scenario \"s\".method",
        "unknown method \"PATCH\"",
        "GET, HEAD, POST, PUT, DELETE",
    );
}

#[test]
fn path_must_start_with_a_slash() {
    let text = with_scenario("path = \"bytes/22\"\n");
    invalid(
        &text,
        6,
        "scenario \"s\".path",
        "does not start with \"/\"",
        "path = \"/bytes/22\"",
    );
}

#[test]
fn path_without_whitespace_and_not_too_long() {
    invalid(
        &with_scenario("path = \"/a b\"\n"),
        6,
        "scenario \"s\".path",
        "whitespace",
        "%20",
    );
    let long = format!("/{}", "a".repeat(2048));
    invalid(
        &with_scenario(&format!("path = \"{long}\"\n")),
        6,
        "scenario \"s\".path",
        "longer than 2048",
        "shorter path",
    );
    invalid(
        &with_scenario("path = \"/caf\u{e9}\"\n"),
        6,
        "scenario \"s\".path",
        "not a valid HTTP request path",
        "percent-encode",
    );
}

#[test]
fn both_concurrency_and_rate() {
    let text = with_scenario("path = \"/\"\nconcurrency = 10\nrate = 2000\n");
    invalid(
        &text,
        8,
        "scenario \"s\".rate",
        "concurrency and rate are both set",
        "remove rate for a closed loop",
    );
}

#[test]
fn concurrency_out_of_range() {
    invalid(
        &with_scenario("path = \"/\"\nconcurrency = 0\n"),
        7,
        "scenario \"s\".concurrency",
        "got 0",
        "concurrency = 10",
    );
    invalid(
        &with_scenario("path = \"/\"\nconcurrency = -3\n"),
        7,
        "scenario \"s\".concurrency",
        "from 1 to 50000, got -3",
        "concurrency = 10",
    );
    invalid(
        &with_scenario("path = \"/\"\nconcurrency = 50001\n"),
        7,
        "scenario \"s\".concurrency",
        "50001 connections is more than benchgate drives in one trial (50000 at most",
        "set at most 50000, like concurrency = 10",
    );
}

#[test]
fn rate_must_be_positive_finite_and_bounded() {
    for rate in ["0", "-1", "0.0", "nan", "inf", "1000001"] {
        let text = with_scenario(&format!("path = \"/\"\nrate = {rate}\n"));
        invalid(
            &text,
            7,
            "scenario \"s\".rate",
            "rate must be above 0 and at most 1000000",
            "rate = 2000",
        );
    }
}

#[test]
fn max_in_flight_needs_an_open_loop_and_a_range() {
    let text = with_scenario("path = \"/\"\nconcurrency = 4\nmax_in_flight = 8\n");
    invalid(
        &text,
        8,
        "scenario \"s\".max_in_flight",
        "only applies to an open loop",
        "remove max_in_flight",
    );
    let text = with_scenario("path = \"/\"\nrate = 10\nmax_in_flight = 0\n");
    invalid(
        &text,
        8,
        "scenario \"s\".max_in_flight",
        "got 0",
        "max_in_flight = 256",
    );
}

#[test]
fn unknown_client_in_scenario_clients() {
    let text = with_scenario("path = \"/\"\nclients = [\"hyper\", \"okhttp\"]\n");
    let shown = invalid(
        &text,
        7,
        "scenario \"s\".clients[1]",
        "no client is named \"okhttp\"; defined clients: \"hyper\"",
        "add a [[client]] with name = \"okhttp\"",
    );
    // The column points at the unknown name, not at the list.
    assert!(shown.starts_with("bench.toml:7:21:"), "{shown}");
}

#[test]
fn client_listed_twice() {
    let text = with_scenario("path = \"/\"\nclients = [\"hyper\", \"hyper\"]\n");
    invalid(
        &text,
        7,
        "scenario \"s\".clients[1]",
        "listed twice",
        "list each client once",
    );
}

#[test]
fn empty_client_list() {
    let text = with_scenario("path = \"/\"\nclients = []\n");
    invalid(
        &text,
        7,
        "scenario \"s\".clients",
        "the client list is empty",
        "remove clients to run every client",
    );
}

// ---- happy paths -----------------------------------------------------------------------

#[test]
fn minimal_fixture_gets_every_default() {
    let suite = Suite::from_file(Path::new("fixtures/configs/minimal.toml")).unwrap();
    assert_eq!(suite.source, "fixtures/configs/minimal.toml");
    assert_eq!(suite.run.rounds, 5);
    assert!(suite.run.pin);
    let c = &suite.clients[0];
    assert_eq!(
        (c.kind.clone(), c.pool, c.http, c.tls),
        (ClientKind::Hyper, None, HttpVersion::Http1, false)
    );
    let s = &suite.scenarios[0];
    assert_eq!(s.method, Method::Get);
    assert_eq!(s.body, 0);
    assert_eq!(s.load, Load::Closed { concurrency: 1 });
    assert_eq!(s.warmup, Duration::from_secs(1));
    assert_eq!(s.stop, StopRule::Duration(Duration::from_secs(3)));
    assert_eq!(s.timeout, Duration::from_secs(10));
    assert_eq!(s.clients, vec!["hyper".to_string()]);
}

#[test]
fn default_fixture_is_the_default_suite() {
    let from_file = Suite::from_file(Path::new("fixtures/configs/default.toml")).unwrap();
    let mut builtin = Suite::default_suite();
    assert_eq!(builtin.source, "built-in default suite");
    builtin.source = from_file.source.clone();
    assert_eq!(from_file, builtin);
}

#[test]
fn scenario_values_override_run() {
    let text = "[run]\nrounds = 2\nwarmup = \"2s\"\nduration = \"5s\"\ntimeout = \"1s\"\npin = false\n\
                [[client]]\nname = \"a\"\nkind = \"reqwest\"\n\
                [[scenario]]\nname = \"inherits\"\npath = \"/\"\n\
                [[scenario]]\nname = \"overrides\"\npath = \"/\"\nwarmup = \"0s\"\nrequests = 1000\ntimeout = \"250ms\"\n";
    let suite = load(text).unwrap();
    assert_eq!(suite.run.rounds, 2);
    assert!(!suite.run.pin);
    let [inherits, overrides] = &suite.scenarios[..] else {
        panic!("two scenarios")
    };
    assert_eq!(inherits.warmup, Duration::from_secs(2));
    assert_eq!(inherits.stop, StopRule::Duration(Duration::from_secs(5)));
    assert_eq!(inherits.timeout, Duration::from_secs(1));
    assert_eq!(overrides.warmup, Duration::ZERO);
    assert_eq!(overrides.stop, StopRule::Requests(1000));
    assert_eq!(overrides.timeout, Duration::from_millis(250));
}

#[test]
fn run_requests_are_inherited_and_scenario_duration_wins() {
    let text = format!("[run]\nrequests = 200000\n{CLIENT}{SCENARIO}[[scenario]]\nname = \"timed\"\npath = \"/\"\nduration = \"2s\"\n");
    let suite = load(&text).unwrap();
    assert_eq!(suite.scenarios[0].stop, StopRule::Requests(200_000));
    assert_eq!(
        suite.scenarios[1].stop,
        StopRule::Duration(Duration::from_secs(2))
    );
}

#[test]
fn open_loop_with_default_and_explicit_max_in_flight() {
    let text = format!(
        "{CLIENT}[[scenario]]\nname = \"a\"\npath = \"/\"\nrate = 2000\n[[scenario]]\nname = \"b\"\npath = \"/\"\nrate = 12.5\nmax_in_flight = 8\n"
    );
    let suite = load(&text).unwrap();
    assert_eq!(
        suite.scenarios[0].load,
        Load::Open {
            rate: 2000.0,
            max_in_flight: 256
        }
    );
    assert_eq!(
        suite.scenarios[1].load,
        Load::Open {
            rate: 12.5,
            max_in_flight: 8
        }
    );
    assert_eq!(suite.scenarios[1].load.workers(), 8);
}

#[test]
fn clients_resolve_to_all_in_config_order_or_the_listed_ones() {
    let text = "[[client]]\nname = \"b\"\nkind = \"hyper\"\n[[client]]\nname = \"a\"\nkind = \"reqwest-blocking\"\n\
                [[client]]\nname = \"c\"\nkind = \"reqwest\"\n\
                [[scenario]]\nname = \"all\"\npath = \"/\"\n\
                [[scenario]]\nname = \"some\"\npath = \"/\"\nclients = [\"c\", \"b\"]\n";
    let suite = load(text).unwrap();
    assert_eq!(suite.scenarios[0].clients, ["b", "a", "c"]);
    assert_eq!(suite.scenarios[1].clients, ["c", "b"]);
    assert_eq!(suite.client("a").unwrap().kind, ClientKind::ReqwestBlocking);
}

#[test]
fn client_options_and_method_case() {
    let text = "[[client]]\nname = \"h2\"\nkind = \"hyper\"\npool = 4\nhttp = \"2\"\ntls = true\n\
                [[scenario]]\nname = \"p\"\nmethod = \"post\"\npath = \"/upload?x=1\"\nbody = \"20KB\"\nconcurrency = 10000\n";
    let suite = load(text).unwrap();
    let c = &suite.clients[0];
    assert_eq!((c.pool, c.http, c.tls), (Some(4), HttpVersion::Http2, true));
    let s = &suite.scenarios[0];
    assert_eq!(
        (s.method, s.body, s.path.as_str()),
        (Method::Post, 20_000, "/upload?x=1")
    );
    assert_eq!(
        s.load,
        Load::Closed {
            concurrency: 10_000
        }
    );
}

#[test]
fn inline_tables_work_too() {
    let text = "client = [{ name = \"h\", kind = \"hyper\" }]\nscenario = [{ name = \"s\", path = \"/\" }]\n";
    assert_eq!(load(text).unwrap().scenarios[0].clients, ["h"]);
}

#[test]
fn names_are_free_text() {
    let text = "[[client]]\nname = \"hyper <pool=1> \\\"x\\\"\"\nkind = \"hyper\"\n[[scenario]]\nname = \"GET 22 B | c=16\"\npath = \"/\"\n";
    let suite = load(text).unwrap();
    assert_eq!(suite.clients[0].name, "hyper <pool=1> \"x\"");
    assert_eq!(suite.scenarios[0].name, "GET 22 B | c=16");
}

#[test]
fn missing_file_is_a_read_error() {
    let err = Suite::from_file(Path::new("fixtures/configs/does-not-exist.toml")).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("does-not-exist.toml"));
    assert_eq!(common::config_errors::location(&err), None);
}

#[test]
fn validated_suite_round_trips_through_json() {
    let suite = Suite::default_suite();
    let json = serde_json::to_string(&suite).unwrap();
    assert!(json.contains("\"warmup\":\"100ms\""), "{json}");
    let back: Suite = serde_json::from_str(&json).unwrap();
    assert_eq!(back, suite);
}

/// A client with `extra` lines (after kind), then the scenario; the extra lines
/// start on line 4.
fn client_with(kind: &str, extra: &str) -> String {
    format!("[[client]]\nname = \"c\"\nkind = \"{kind}\"\n{extra}{SCENARIO}")
}

fn injected_ns(extra: &str) -> u64 {
    load(&client_with("hyper", extra)).unwrap().clients[0].inject_cpu_ns
}

#[test]
fn inject_cpu_takes_a_duration_with_nanosecond_resolution() {
    assert_eq!(injected_ns("inject_cpu = \"1300ns\"\n"), 1_300);
    assert_eq!(injected_ns("inject_cpu = \"1.3us\"\n"), 1_300);
    assert_eq!(injected_ns("inject_cpu = \"1.299µs\"\n"), 1_299);
    assert_eq!(injected_ns("inject_cpu = \"2ms\"\n"), 2_000_000);
    assert_eq!(injected_ns("inject_cpu = \"0ns\"\n"), 0);
    assert_eq!(injected_ns("inject_cpu = \"1s\"\n"), 1_000_000_000);
    assert_eq!(injected_ns(""), 0);
    // The deprecated spelling: whole microseconds, the same field.
    assert_eq!(injected_ns("inject_cpu_us = 13\n"), 13_000);
    assert_eq!(
        load(&client_with("reqwest-blocking", "inject_cpu = \"700ns\"\n"))
            .unwrap()
            .clients[0]
            .inject_cpu_ns,
        700
    );
}

#[test]
fn inject_cpu_errors_name_the_line_field_and_fix() {
    let field = "client \"c\".inject_cpu";
    invalid(
        &client_with("hyper", "inject_cpu = \"1300\"\n"),
        4,
        field,
        "`1300` has no unit",
        "inject_cpu = \"1300ns\"",
    );
    invalid(
        &client_with("hyper", "inject_cpu = \"3 cycles\"\n"),
        4,
        field,
        "unknown unit `cycles`",
        "in ns, us, ms or s",
    );
    invalid(
        &client_with("hyper", "inject_cpu = \"-5ns\"\n"),
        4,
        field,
        "does not start with a number",
        "inject_cpu = \"1300ns\"",
    );
    invalid(
        &client_with("hyper", "inject_cpu = 1300\n"),
        4,
        field,
        "expected a duration string, found an integer",
        "inject_cpu = \"1300ns\"",
    );
    invalid(
        &client_with("hyper", "inject_cpu = \"2s\"\n"),
        4,
        field,
        "must be at most 1s per request, got 2s",
        "a smaller amount",
    );
    invalid(
        &client_with("hyper", "inject_cpu_us = 2000000\n"),
        4,
        "client \"c\".inject_cpu_us",
        "must be from 0 to 1000000, got 2000000",
        "inject_cpu = \"50us\"",
    );
    // Both spellings: the error points at the older one.
    invalid(
        &client_with("hyper", "inject_cpu = \"1us\"\ninject_cpu_us = 1\n"),
        5,
        "client \"c\".inject_cpu_us",
        "inject_cpu and inject_cpu_us are both set",
        "remove inject_cpu_us",
    );
    // Built-in clients only.
    let command = "[[client]]\nname = \"c\"\nkind = \"command\"\ncommand = [\"true\"]\ninject_cpu = \"1us\"\n";
    invalid(
        &format!("{command}{SCENARIO}"),
        5,
        field,
        "inject_cpu applies to the built-in clients only",
        "inside your program",
    );
    let command = command.replace("inject_cpu = \"1us\"", "inject_cpu_us = 1");
    invalid(
        &format!("{command}{SCENARIO}"),
        5,
        "client \"c\".inject_cpu_us",
        "inject_cpu_us applies to the built-in clients only",
        "inside your program",
    );
}

#[test]
fn inject_cpu_round_trips_and_old_results_spelling_still_reads() {
    let suite = load(&client_with("hyper", "inject_cpu = \"1299ns\"\n")).unwrap();
    let json = serde_json::to_value(&suite.clients[0]).unwrap();
    assert_eq!(json["inject_cpu_ns"], 1299, "{json}");
    assert!(json.get("inject_cpu_us").is_none(), "{json}");
    let back: benchgate::config::ClientSpec = serde_json::from_value(json).unwrap();
    assert_eq!(back, suite.clients[0]);
    // Without injection the field is left out: files stay readable by versions
    // that predate it.
    let plain = serde_json::to_value(&load(&client_with("hyper", "")).unwrap().clients[0]).unwrap();
    assert!(plain.get("inject_cpu_ns").is_none(), "{plain}");
    // Results files written before inject_cpu_ns carry inject_cpu_us (µs).
    let old = |extra: &str| {
        serde_json::from_str::<benchgate::config::ClientSpec>(&format!(
            r#"{{"name": "c", "kind": "hyper", "pool": null, "http": "http1", "tls": false{extra}}}"#
        ))
    };
    assert_eq!(old(r#", "inject_cpu_us": 4"#).unwrap().inject_cpu_ns, 4_000);
    assert_eq!(old(r#", "inject_cpu_us": 0"#).unwrap().inject_cpu_ns, 0);
    assert_eq!(old("").unwrap().inject_cpu_ns, 0);
    let both = old(r#", "inject_cpu_us": 4, "inject_cpu_ns": 4000"#).unwrap_err();
    assert!(
        both.to_string()
            .contains("both inject_cpu_ns and inject_cpu_us"),
        "{both}"
    );
    let unknown = old(r#", "inject_cpu_ms": 4"#).unwrap_err();
    assert!(unknown.to_string().contains("unknown field"), "{unknown}");
}
