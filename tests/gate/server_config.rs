//! `[[server]]` config: servers under test parse with their defaults, and every
//! error names the file, line, field and fix. The example config validates.

use crate::common;

use std::path::Path;
use std::time::Duration;

use benchgate::config::{ClientKind, ConfigError, ServerTarget, Suite};

const FILE: &str = "conf/bench.toml";

const HEAD: &str = "[[client]]\nname = \"hyper\"\nkind = \"hyper\"\n\
                    [[scenario]]\nname = \"s\"\npath = \"/bytes/22\"\n";

fn load(text: &str) -> Result<Suite, ConfigError> {
    Suite::from_toml(text, FILE)
}

/// Asserts an `Invalid` error at `line` on `field` whose text contains `what` and `fix`.
#[track_caller]
fn invalid(text: &str, line: usize, field: &str, what: &str, fix: &str) -> String {
    common::config_errors::invalid(load(text), FILE, line, field, what, fix)
}

/// HEAD (6 lines) then `servers`: errors in `servers` are on line 7 and later.
fn with(servers: &str) -> String {
    format!("{HEAD}{servers}")
}

#[test]
fn two_servers_with_defaults() {
    let text = with(
        "[[server]]\nname = \"fast\"\ncommand = [\"./srv\", \"--port\", \"{port}\"]\n\
         ready = \"http://127.0.0.1:{port}/health\"\ncwd = \"bin\"\nenv = { MODE = \"x\" }\npass_env = [\"NPM_TOKEN\"]\n\
         [[server]]\nname = \"running\"\nurl = \"http://127.0.0.1:8080/\"\n",
    );
    let suite = load(&text).unwrap();
    assert_eq!(suite.servers.len(), 2);
    let ServerTarget::Command(c) = &suite.servers[0].target else {
        panic!("command server expected")
    };
    assert_eq!(c.argv(4242), ["./srv", "--port", "4242"]);
    assert_eq!(
        c.ready_url(4242).as_deref(),
        Some("http://127.0.0.1:4242/health")
    );
    assert_eq!(Path::new(&c.cwd), Path::new("conf/bin"));
    assert_eq!(c.env["MODE"], "x");
    assert_eq!(c.pass_env, ["NPM_TOKEN"]);
    assert_eq!(c.ready_timeout, Duration::from_secs(30));
    assert_eq!(c.stop_timeout, Duration::from_secs(5));
    assert_eq!(
        suite.servers[1].target,
        ServerTarget::Url("http://127.0.0.1:8080".into())
    );
    // The resolved config round-trips (it is recorded in the results file).
    let back: Suite = serde_json::from_str(&serde_json::to_string(&suite).unwrap()).unwrap();
    assert_eq!(back, suite);
}

#[test]
fn a_single_server_table_needs_no_name() {
    let text = with("[server]\ncommand = [\"./srv\"]\nready_timeout = \"2s\"\n");
    let suite = load(&text).unwrap();
    assert_eq!(suite.servers[0].name, "server");
    let ServerTarget::Command(c) = &suite.servers[0].target else {
        panic!("command server expected")
    };
    assert_eq!(c.ready, None);
    assert_eq!(c.ready_timeout, Duration::from_secs(2));
}

#[test]
fn unknown_field_suggests_a_spelling() {
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\nredy = \"http://127.0.0.1:{port}/\"\n"),
        9,
        "server[0].redy",
        "unknown field `redy` in [[server]]",
        "did you mean `ready`?",
    );
}

#[test]
fn command_and_url_exclude_each_other() {
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\nurl = \"http://127.0.0.1:1\"\n"),
        9,
        "server[0].url",
        "command and url are both set",
        "keep one",
    );
    invalid(
        &with("[[server]]\nname = \"x\"\n"),
        7,
        "server \"x\".command",
        "a server needs either command or url",
        "add command = [",
    );
}

#[test]
fn names_are_required_with_two_servers_and_unique() {
    invalid(
        &with("[[server]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n[[server]]\nurl = \"http://127.0.0.1:2\"\n"),
        10,
        "server[1].name",
        "missing required field `name`",
        "name = \"fast\"",
    );
    invalid(
        &with("[[server]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n[[server]]\nname = \"a\"\nurl = \"http://127.0.0.1:2\"\n"),
        11,
        "server[1].name",
        "the server name \"a\" is already used on line 8",
        "give each server a unique name",
    );
}

#[test]
fn urls_are_plain_http_on_loopback() {
    invalid(
        &with("[[server]]\nurl = \"http://10.1.2.3:8080\"\n"),
        8,
        "server[0].url",
        "host \"10.1.2.3\" is not a loopback address",
        "use 127.0.0.1",
    );
    invalid(
        &with("[[server]]\nurl = \"https://127.0.0.1:8443\"\n"),
        8,
        "server[0].url",
        "is HTTPS; servers under test are driven over plain HTTP",
        "serve plain HTTP",
    );
    invalid(
        &with("[[server]]\nurl = \"http://127.0.0.1\"\n"),
        8,
        "server[0].url",
        "has no port",
        "give the port",
    );
    invalid(
        &with("[[server]]\nurl = \"http://127.0.0.1:80/api\"\n"),
        8,
        "server[0].url",
        "the url has a path (\"/api\")",
        "url = \"http://127.0.0.1:80\"",
    );
    invalid(
        &with("[[server]]\nurl = \"http://127.0.0.1:80\"\nready = \"http://127.0.0.1:80/\"\n"),
        9,
        "server[0].ready",
        "ready applies to servers benchgate starts",
        "remove ready",
    );
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\nready = \"http://example.com:{port}/\"\n"),
        9,
        "server[0].ready",
        "not a loopback address",
        "use 127.0.0.1",
    );
}

#[test]
fn command_fields_are_checked() {
    invalid(
        &with("[[server]]\ncommand = []\n"),
        8,
        "server[0].command",
        "the command is empty",
        "give the program and its arguments",
    );
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\nenv = { BENCHGATE_SERVER_PORT = \"1\" }\n"),
        9,
        "server[0].env.BENCHGATE_SERVER_PORT",
        "is set by benchgate",
        "reserved",
    );
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\nstop_timeout = \"0s\"\n"),
        9,
        "server[0].stop_timeout",
        "must be longer than 0",
        "stop_timeout = \"3s\"",
    );
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\npass_env = [\"\"]\n"),
        9,
        "server[0].pass_env[0]",
        "is not an environment variable name",
        "pass_env = [\"NPM_TOKEN\"]",
    );
    invalid(
        &with("[[server]]\nurl = \"http://127.0.0.1:8080\"\nsetup = [\"make\"]\n"),
        9,
        "server[0].setup",
        "setup applies to servers benchgate starts",
        "remove setup",
    );
    invalid(
        &with("[[server]]\ncommand = [\"./srv\"]\nsetup = []\n"),
        9,
        "server[0].setup",
        "the command is empty",
        "setup = [\"make\", \"server\"]",
    );
    invalid(
        &with("[[server]]\nurl = \"http://127.0.0.1:8080\"\npass_env = [\"NPM_TOKEN\"]\n"),
        9,
        "server[0].pass_env",
        "applies to servers benchgate starts",
        "remove pass_env",
    );
    invalid(
        &with("[[server]]\ncommand = \"./srv\"\n"),
        8,
        "server[0].command",
        "expected an array of strings (argv)",
        "command = [\"./server\", \"--port\", \"{port}\"]",
    );
}

/// Issue 28, point 5: `{port}` is the only placeholder of a server's
/// command; any other `{name}` is an error naming it. A shell's `${name}`
/// stays.
#[test]
fn a_server_command_has_only_the_port_placeholder() {
    let text = with("[[server]]\ncommand = [\"./srv\", \"--listen\", \"{host}:{port}\"]\n");
    let shown = common::config_errors::invalid(
        load(&text),
        FILE,
        8,
        "server[0].command[2]",
        "{host} is not replaced: {port} is the only placeholder",
        "use {port}",
    );
    assert!(shown.starts_with("conf/bench.toml:8:33: "), "{shown}");
    invalid(
        &with("[[server]]\ncommand = [\"./srv\", \"--port={PORT}\"]\n"),
        8,
        "server[0].command[1]",
        "{PORT} is not replaced",
        "BENCHGATE_SERVER_PORT",
    );
    let text = with(
        "[[server]]\ncommand = [\"sh\", \"-c\", \"exec ./srv --port ${BENCHGATE_SERVER_PORT} --also {port}\"]\n",
    );
    let suite = load(&text).unwrap();
    let ServerTarget::Command(c) = &suite.servers[0].target else {
        panic!("not a command server")
    };
    assert_eq!(
        c.argv(8080)[2],
        "exec ./srv --port ${BENCHGATE_SERVER_PORT} --also 8080"
    );
}

#[test]
fn tls_and_command_clients_cannot_drive_a_server_under_test() {
    let tls = "[[client]]\nname = \"h\"\nkind = \"hyper\"\ntls = true\n\
               [[scenario]]\nname = \"s\"\npath = \"/\"\n\
               [[server]]\nurl = \"http://127.0.0.1:1\"\n";
    invalid(
        tls,
        4,
        "client \"h\".tls",
        "tls = true is not supported with a server under test",
        "remove tls = true",
    );
    let command = "[[client]]\nname = \"curl\"\nkind = \"command\"\ncommand = [\"curl\"]\n\
                   [[scenario]]\nname = \"s\"\npath = \"/\"\n\
                   [[server]]\nurl = \"http://127.0.0.1:1\"\n";
    let shown = invalid(
        command,
        3,
        "client \"curl\".kind",
        "kind = \"command\" clients cannot drive a server under test",
        "drive the server with a built-in client",
    );
    for kind in ClientKind::BUILT_IN {
        assert!(shown.contains(&format!("{:?}", kind.name())), "{shown}");
    }
}

#[test]
fn compare_baseline_server_names_a_server() {
    let servers = "[[server]]\nname = \"fast\"\nurl = \"http://127.0.0.1:1\"\n\
                   [[server]]\nname = \"slow\"\nurl = \"http://127.0.0.1:2\"\n";
    let ok = with(&format!("{servers}[compare]\nbaseline_server = \"fast\"\n"));
    let c = load(&ok).unwrap().compare.unwrap();
    assert_eq!(c.baseline_server.as_deref(), Some("fast"));
    assert_eq!(c.baseline_client, None);
    invalid(
        &with(&format!(
            "{servers}[compare]\nbaseline_server = \"quick\"\n"
        )),
        14,
        "compare.baseline_server",
        "no server is named \"quick\"; defined servers: \"fast\", \"slow\"",
        "use one of the defined names",
    );
    invalid(
        &with("[compare]\nbaseline_server = \"fast\"\n"),
        8,
        "compare.baseline_server",
        "the config has no [[server]] tables",
        "add [[server]] tables",
    );
    invalid(
        &with("[compare]\n"),
        7,
        "compare.baseline_client",
        "missing required field `baseline_client` (or `baseline_server`, or `base`)",
        "baseline_server = ",
    );
}

#[test]
fn the_example_config_validates() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/configs/server-under-test.toml"
    ));
    let suite = Suite::from_file(path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(suite.servers.len(), 2);
    assert!(suite
        .servers
        .iter()
        .all(|s| matches!(s.target, ServerTarget::Command(_))));
    assert_eq!(
        suite.compare.unwrap().baseline_server.as_deref(),
        Some(suite.servers[0].name.as_str())
    );
}
