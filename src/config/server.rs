//! `[[server]]` (or a single `[server]` table): servers under test. Instead of the
//! reference server, the suite's clients drive these: each started fresh per
//! round from a `command` (argv with `{port}` placeholders, a readiness probe),
//! or one already running at a loopback `url`. See docs/server-under-test.md.
//!
//! This file holds the raw shape (`read`), the validated types and their
//! validation (`build`), with located errors like the rest of the config.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::Problem;
use super::raw::{self, At, Fields, Spec, StringTable, DURATION};
use super::tree::{Key, Node};
use super::units;
use super::validate::{opt_duration, required_name, unique};

/// `ready_timeout` when absent.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);
/// `stop_timeout` when absent.
pub const DEFAULT_STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// The name of a lone server without `name`.
pub const DEFAULT_SERVER_NAME: &str = "server";
/// The placeholder replaced by the port benchgate picked, in argv and `ready`.
pub const PORT_PLACEHOLDER: &str = "{port}";

/// Why command clients cannot drive a server under test (yet).
pub const NO_COMMAND_CLIENTS: &str = "kind = \"command\" clients cannot drive a server under test: benchgate measures a program from the reference server's counters (its window, throughput of a black box, bytes), which a server under test does not have";

/// A server under test, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Unique among the servers; labels its cells (`client @ server`).
    pub name: String,
    pub target: ServerTarget,
}

/// How benchgate reaches a server under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerTarget {
    /// benchgate starts it, once per (scenario, round).
    Command(ServerCommand),
    /// Already running: `http://HOST:PORT` on a loopback address.
    Url(String),
}

/// A server program benchgate starts and stops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerCommand {
    /// argv; `{port}` in any argument is replaced by the port benchgate picked.
    pub command: Vec<String>,
    /// Run once before the rounds, in `cwd` (e.g. the server's build); argv.
    /// A failed setup fails every round on this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Vec<String>>,
    /// Working directory, resolved against the config file's directory.
    pub cwd: String,
    /// Extra environment (`BENCHGATE_SERVER_PORT` is set too).
    pub env: BTreeMap<String, String>,
    /// Variables of benchgate's environment passed through although they
    /// are withheld from child programs by default (`orchestrate::child_env`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Readiness probe URL (with `{port}`): any HTTP response means ready.
    /// `None`: ready when the port accepts a TCP connection.
    pub ready: Option<String>,
    /// How long the server may take to become ready.
    #[serde(with = "units::serde_duration")]
    pub ready_timeout: Duration,
    /// How long after SIGTERM before the process group is killed.
    #[serde(with = "units::serde_duration")]
    pub stop_timeout: Duration,
}

impl ServerCommand {
    /// argv with `{port}` replaced.
    pub fn argv(&self, port: u16) -> Vec<String> {
        self.command
            .iter()
            .map(|a| a.replace(PORT_PLACEHOLDER, &port.to_string()))
            .collect()
    }

    /// The readiness probe URL with `{port}` replaced, if one is set.
    pub fn ready_url(&self, port: u16) -> Option<String> {
        self.ready
            .as_ref()
            .map(|r| r.replace(PORT_PLACEHOLDER, &port.to_string()))
    }
}

/// One `[[server]]` as written.
#[derive(Debug, Clone, PartialEq)]
pub struct RawServer {
    /// How errors name this entry: `server "fast"` or `server[1]`.
    pub label: String,
    pub span: Range<usize>,
    pub name: Option<At<String>>,
    pub command: Option<At<Vec<At<String>>>>,
    pub setup: Option<At<Vec<At<String>>>>,
    pub cwd: Option<At<String>>,
    pub env: Option<At<StringTable>>,
    pub pass_env: Option<At<Vec<At<String>>>>,
    pub ready: Option<At<String>>,
    pub ready_timeout: Option<At<String>>,
    pub stop_timeout: Option<At<String>>,
    pub url: Option<At<String>>,
}

const SERVER: &[Spec] = &[
    raw::spec("name", "a string", "name = \"fast\""),
    raw::spec(
        "command",
        "an array of strings (argv)",
        "command = [\"./server\", \"--port\", \"{port}\"]",
    ),
    raw::spec(
        "setup",
        "an array of strings (argv)",
        "setup = [\"make\", \"server\"]",
    ),
    raw::spec("cwd", "a string", "cwd = \".\""),
    raw::spec(
        "env",
        "a table of strings",
        "env = { JAVA_OPTS = \"-Xmx1g\" }",
    ),
    raw::spec(
        "pass_env",
        "an array of variable names",
        "pass_env = [\"NPM_TOKEN\"]",
    ),
    raw::spec(
        "ready",
        "a URL string",
        "ready = \"http://127.0.0.1:{port}/health\"",
    ),
    raw::spec("ready_timeout", DURATION, "ready_timeout = \"30s\""),
    raw::spec("stop_timeout", DURATION, "stop_timeout = \"5s\""),
    raw::spec("url", "a URL string", "url = \"http://127.0.0.1:8080\""),
];

/// Reads one `[[server]]` table, rejecting unknown fields and wrong types.
pub(super) fn read(
    index: usize,
    span: Range<usize>,
    entries: &[(Key, Node)],
) -> Result<RawServer, Problem> {
    let f = Fields {
        label: raw::label("server", index, entries),
        section: "[[server]]",
        entries,
        specs: SERVER,
    };
    f.check_keys()?;
    Ok(RawServer {
        span,
        name: f.string("name")?,
        command: f.strings_of("command", "an argument")?,
        setup: f.strings_of("setup", "an argument")?,
        cwd: f.string("cwd")?,
        env: f.string_table("env")?,
        pass_env: f.strings_of("pass_env", "a variable name")?,
        ready: f.string("ready")?,
        ready_timeout: f.string("ready_timeout")?,
        stop_timeout: f.string("stop_timeout")?,
        url: f.string("url")?,
        label: f.label,
    })
}

/// Validates every server: names (required when there are several, unique),
/// exactly one of `command` and `url`, loopback URLs, durations.
pub(super) fn build(
    servers: &[RawServer],
    config_dir: &Path,
    text: &str,
) -> Result<Vec<ServerSpec>, Problem> {
    let mut out = Vec::with_capacity(servers.len());
    let mut seen = std::collections::HashMap::new();
    for (i, s) in servers.iter().enumerate() {
        let name = match (&s.name, servers.len()) {
            (None, 1) => DEFAULT_SERVER_NAME.to_string(),
            (name, _) => required_name(
                name.as_ref(),
                &s.span,
                &s.label,
                "server",
                "name = \"fast\"",
            )?,
        };
        unique("server", i, &name, s.name.as_ref(), &mut seen, text)?;
        let target = match (&s.command, &s.url) {
            (Some(_), Some(url)) => {
                return Err(Problem::new(
                    url.span.clone(),
                    format!("{}.url", s.label),
                    "command and url are both set; command starts the server, url names one already running",
                    "keep one: remove url to let benchgate start the server, or remove command to use the running one",
                ))
            }
            (None, None) => {
                return Err(Problem::new(
                    s.span.start..s.span.start,
                    format!("{}.command", s.label),
                    "a server needs either command or url",
                    "add command = [\"./server\", \"--port\", \"{port}\"] (benchgate starts it) or url = \"http://127.0.0.1:8080\" (already running) to this [[server]] table",
                ))
            }
            (None, Some(url)) => ServerTarget::Url(build_url(s, url)?),
            (Some(argv), None) => ServerTarget::Command(build_command(s, argv, config_dir)?),
        };
        out.push(ServerSpec { name, target });
    }
    Ok(out)
}

fn build_url(s: &RawServer, url: &At<String>) -> Result<String, Problem> {
    let field = format!("{}.url", s.label);
    let fields = [
        ("setup", s.setup.as_ref().map(|v| v.span.clone())),
        ("cwd", s.cwd.as_ref().map(|v| v.span.clone())),
        ("env", s.env.as_ref().map(|v| v.span.clone())),
        ("pass_env", s.pass_env.as_ref().map(|v| v.span.clone())),
        ("ready", s.ready.as_ref().map(|v| v.span.clone())),
        (
            "ready_timeout",
            s.ready_timeout.as_ref().map(|v| v.span.clone()),
        ),
        (
            "stop_timeout",
            s.stop_timeout.as_ref().map(|v| v.span.clone()),
        ),
    ];
    if let Some((key, span)) = fields.into_iter().find_map(|(k, s)| s.map(|s| (k, s))) {
        return Err(Problem::new(
            span,
            format!("{}.{key}", s.label),
            format!("{key} applies to servers benchgate starts (command = [...]) only"),
            format!("remove {key}: a url server is already running and benchgate neither starts nor stops it"),
        ));
    }
    let (origin, path) = loopback_url(&url.value)
        .map_err(|(msg, fix)| Problem::new(url.span.clone(), &field, msg, fix))?;
    if !path.is_empty() && path != "/" {
        return Err(Problem::new(
            url.span.clone(),
            field,
            format!(
                "the url has a path ({path:?}); it names the server, the scenarios give the paths"
            ),
            format!("write the scheme, host and port only, like url = \"{origin}\""),
        ));
    }
    Ok(origin)
}

fn build_command(
    s: &RawServer,
    argv: &At<Vec<At<String>>>,
    config_dir: &Path,
) -> Result<ServerCommand, Problem> {
    let path = |field: &str| format!("{}.{field}", s.label);
    let command = super::command::argv(
        argv,
        &path("command"),
        "command = [\"./server\", \"--port\", \"{port}\"]",
    )?;
    for (i, a) in argv.value.iter().enumerate() {
        if let Some(name) = super::command::placeholders(&a.value).find(|n| *n != "port") {
            return Err(Problem::new(
                a.span.clone(),
                format!("{}[{i}]", path("command")),
                format!("{{{name}}} is not replaced: {PORT_PLACEHOLDER} is the only placeholder of a server's command"),
                format!("use {PORT_PLACEHOLDER} (the free port benchgate picked; the server listens on 127.0.0.1, and BENCHGATE_SERVER_PORT holds the port too), or remove {{{name}}}; a shell's ${{{name}}} stays as written"),
            ));
        }
    }
    let setup = match &s.setup {
        Some(v) => Some(super::command::argv(
            v,
            &path("setup"),
            "setup = [\"make\", \"server\"]",
        )?),
        None => None,
    };
    let cwd = super::command::working_dir(s.cwd.as_ref(), config_dir, &path("cwd"))?;
    let env = super::command::env_table(s.env.as_ref(), &path("env"))?;
    let pass_env = super::command::pass_env(s.pass_env.as_ref(), &env, &path("pass_env"))?;
    let ready = match &s.ready {
        None => None,
        Some(r) => {
            let probe = r.value.replace(PORT_PLACEHOLDER, "1");
            loopback_url(&probe)
                .map_err(|(msg, fix)| Problem::new(r.span.clone(), path("ready"), msg, fix))?;
            Some(r.value.clone())
        }
    };
    let ready_timeout = opt_duration(s.ready_timeout.as_ref(), &path("ready_timeout"), true)?
        .unwrap_or(DEFAULT_READY_TIMEOUT);
    let stop_timeout = opt_duration(s.stop_timeout.as_ref(), &path("stop_timeout"), true)?
        .unwrap_or(DEFAULT_STOP_TIMEOUT);
    Ok(ServerCommand {
        command,
        setup,
        cwd: cwd.display().to_string(),
        env,
        pass_env,
        ready,
        ready_timeout,
        stop_timeout,
    })
}

/// Splits `http://HOST:PORT/path` into its origin and path, accepting loopback
/// hosts only (`127.x.x.x`, `localhost`, `[::1]`); errors are (message, fix).
pub fn loopback_url(url: &str) -> Result<(String, String), (String, String)> {
    let example = "http://127.0.0.1:8080";
    let Some(rest) = url.strip_prefix("http://") else {
        let (msg, fix) = if url.starts_with("https://") {
            (
                format!("{url:?} is HTTPS; servers under test are driven over plain HTTP"),
                format!("serve plain HTTP on a loopback port and write it like \"{example}\""),
            )
        } else {
            (
                format!("{url:?} is not an http:// URL"),
                format!("write it like \"{example}\""),
            )
        };
        return Err((msg, fix));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (h, p),
        _ => {
            return Err((
                format!("{url:?} has no port"),
                format!("give the port, like \"{example}\""),
            ))
        }
    };
    let loopback = host == "localhost"
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err((
            format!("host {host:?} is not a loopback address; benchgate only drives servers on this machine"),
            "use 127.0.0.1 (or localhost, [::1]) and run the server on this machine".to_string(),
        ));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => {}
        _ => {
            return Err((
                format!("{port:?} is not a port number (1 to 65535)"),
                format!("write it like \"{example}\""),
            ))
        }
    }
    Ok((format!("http://{host}:{port}"), path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_only() {
        assert_eq!(
            loopback_url("http://127.0.0.1:8080/").unwrap(),
            ("http://127.0.0.1:8080".into(), "/".into())
        );
        assert_eq!(loopback_url("http://[::1]:81/health").unwrap().1, "/health");
        assert!(loopback_url("http://localhost:9").is_ok());
        assert!(loopback_url("http://10.0.0.1:80")
            .unwrap_err()
            .0
            .contains("not a loopback"));
        assert!(loopback_url("https://127.0.0.1:80")
            .unwrap_err()
            .0
            .contains("HTTPS"));
        assert!(loopback_url("http://127.0.0.1")
            .unwrap_err()
            .0
            .contains("no port"));
        assert!(loopback_url("http://127.0.0.1:0")
            .unwrap_err()
            .0
            .contains("port number"));
        assert!(loopback_url("ftp://x")
            .unwrap_err()
            .0
            .contains("not an http://"));
    }

    #[test]
    fn placeholders_are_replaced() {
        let c = ServerCommand {
            command: vec!["srv".into(), "--listen=127.0.0.1:{port}".into()],
            setup: None,
            cwd: ".".into(),
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            ready: Some("http://127.0.0.1:{port}/health".into()),
            ready_timeout: DEFAULT_READY_TIMEOUT,
            stop_timeout: DEFAULT_STOP_TIMEOUT,
        };
        assert_eq!(c.argv(4242)[1], "--listen=127.0.0.1:4242");
        assert_eq!(c.ready_url(4242).unwrap(), "http://127.0.0.1:4242/health");
    }
}
