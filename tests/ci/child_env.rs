//! The programs benchgate starts do not get its credentials (src/orchestrate/child_env.rs):
//! a command client, its setup and a server under test each dump their
//! environment to a file while `benchgate run` holds a token in every
//! spelling, an alias of it, cloud credentials, the Actions runtime and the
//! runner's file commands. None of those reach them; a `pass_env` variable, a
//! variable of their own `env` table and an unrelated variable do.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::exe;

const TOKEN: &str = "ghs_childenvtest0123456789abcdef";

/// What benchgate's environment holds that no child may see (name, value).
fn withheld(dir: &Path) -> Vec<(String, String)> {
    let file = |n: &str| dir.join(n).display().to_string();
    [
        ("GITHUB_TOKEN", TOKEN.to_string()),
        ("INPUT_GITHUB-TOKEN", TOKEN.to_string()),
        ("MY_ALIAS", TOKEN.to_string()),
        ("ACTIONS_RUNTIME_TOKEN", "runtime-token-value".into()),
        ("ACTIONS_RUNTIME_URL", "https://pipelines.example/".into()),
        (
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "oidc-request-token".into(),
        ),
        (
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "https://oidc.example/".into(),
        ),
        ("AWS_ACCESS_KEY_ID", "ASIACHILDENVTEST".into()),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-value".into()),
        ("AWS_SESSION_TOKEN", "aws-session-value".into()),
        ("GITHUB_ENV", file("github_env")),
        ("GITHUB_PATH", file("github_path")),
        ("GITHUB_OUTPUT", file("github_output")),
        ("GITHUB_STEP_SUMMARY", file("github_step_summary")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// `benchgate run` on `toml` (written to `dir`) with the withheld variables,
/// `NPM_TOKEN` (passed by the config) and `CHILD_ENV_JAVA_HOME` (unrelated).
fn run(dir: &Path, toml: &str) -> Output {
    let config = dir.join("benchgate.toml");
    std::fs::write(&config, toml).unwrap();
    let out = Command::new(exe())
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(dir.join("results.json"))
        .env("CI", "true")
        .envs(withheld(dir))
        .env("NPM_TOKEN", "npm_passed_through")
        .env("CHILD_ENV_JAVA_HOME", "/opt/jdk")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "benchgate run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Checks one dump of `env -0`: nothing withheld (by name or by the token's
/// value), the passed, own and unrelated variables present.
fn check(dir: &Path, dump: &str) {
    let bytes = std::fs::read(dir.join(dump)).unwrap_or_else(|e| panic!("{dump}: {e}"));
    let vars: Vec<(String, String)> = bytes
        .split(|b| *b == 0)
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            let (k, v) = kv.split_once('=').unwrap_or((&kv, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    let get = |name: &str| {
        vars.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    for (name, _) in withheld(dir) {
        assert_eq!(get(&name), None, "{dump}: {name} reached the program");
    }
    let leaked: Vec<&String> = vars
        .iter()
        .filter(|(_, v)| v.contains(TOKEN))
        .map(|(k, _)| k)
        .collect();
    assert!(leaked.is_empty(), "{dump}: the token's value in {leaked:?}");
    assert_eq!(
        get("NPM_TOKEN"),
        Some("npm_passed_through"),
        "{dump}: pass_env"
    );
    assert_eq!(get("DEPLOY_TOKEN"), Some("its-own"), "{dump}: env table");
    assert_eq!(get("CHILD_ENV_JAVA_HOME"), Some("/opt/jdk"), "{dump}");
    assert!(get("PATH").is_some(), "{dump}: PATH");
    for file in ["github_env", "github_path", "github_output"] {
        assert!(!dir.join(file).exists(), "{file} was written");
    }
}

#[test]
fn a_command_client_and_its_setup_get_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let toml = format!(
        r#"[run]
rounds = 1
warmup = "100ms"
duration = "300ms"

[[client]]
name = "dumper"
kind = "command"
cwd = {d:?}
setup = ["sh", "-c", "env -0 > setup.env"]
command = ["sh", "-c", "env -0 > client.env; end=$(( $(date +%s) + 2 )); while [ $(date +%s) -lt $end ]; do curl -s -o /dev/null \"$BENCHGATE_URL\"; done"]
env = {{ DEPLOY_TOKEN = "its-own" }}
pass_env = ["NPM_TOKEN"]

[[scenario]]
name = "get"
path = "/bytes/22"
"#
    );
    run(dir.path(), &toml);
    check(dir.path(), "setup.env");
    check(dir.path(), "client.env");
}

#[test]
fn a_server_under_test_gets_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let toml = format!(
        r#"[run]
rounds = 1
warmup = "100ms"
duration = "300ms"

[[client]]
name = "hyper"
kind = "hyper"

[[server]]
name = "dumper"
cwd = {d:?}
command = ["sh", "-c", "env -0 > server.env; exec \"$0\" serve --no-tls --listen 127.0.0.1:{{port}}", "{exe}"]
ready = "http://127.0.0.1:{{port}}/bytes/1"
ready_timeout = "10s"
env = {{ DEPLOY_TOKEN = "its-own" }}
pass_env = ["NPM_TOKEN"]

[[scenario]]
name = "get"
path = "/bytes/22"
"#,
        exe = exe()
    );
    run(dir.path(), &toml);
    check(dir.path(), "server.env");
}
