//! `[[client]] kind = "command"`: an external program as a client. Validates
//! its argv, setup, working directory (resolved against the config file's
//! directory), environment, time limit and result format (benchgate's own,
//! or JMH's with the benchmark method it runs).

use std::collections::BTreeMap;
use std::path::Path;

use super::error::Problem;
use super::raw::{At, RawClient, StringTable};
use super::validate::opt_duration;
use super::{CommandSpec, ResultFormat};

/// Fields only a command client may set, for the error on other kinds.
const COMMAND_ONLY: [&str; 8] = [
    "command",
    "setup",
    "cwd",
    "env",
    "pass_env",
    "timeout",
    "result",
    "benchmark",
];

/// The first command-only field set on a built-in client, if any.
pub(super) fn stray_field(c: &RawClient) -> Option<(&'static str, std::ops::Range<usize>)> {
    let spans = [
        c.command.as_ref().map(|v| v.span.clone()),
        c.setup.as_ref().map(|v| v.span.clone()),
        c.cwd.as_ref().map(|v| v.span.clone()),
        c.env.as_ref().map(|v| v.span.clone()),
        c.pass_env.as_ref().map(|v| v.span.clone()),
        c.timeout.as_ref().map(|v| v.span.clone()),
        c.result.as_ref().map(|v| v.span.clone()),
        c.benchmark.as_ref().map(|v| v.span.clone()),
    ];
    COMMAND_ONLY
        .iter()
        .zip(spans)
        .find_map(|(name, span)| span.map(|s| (*name, s)))
}

/// A non-empty argv without NUL characters; `field` names it in errors.
pub(super) fn argv(
    v: &At<Vec<At<String>>>,
    field: &str,
    example: &str,
) -> Result<Vec<String>, Problem> {
    let Some(first) = v.value.first() else {
        return Err(Problem::new(
            v.span.clone(),
            field,
            "the command is empty",
            format!("give the program and its arguments, like {example}"),
        ));
    };
    if first.value.trim().is_empty() {
        return Err(Problem::new(
            first.span.clone(),
            format!("{field}[0]"),
            "the program name is empty",
            format!("name the program first, like {example}"),
        ));
    }
    for (i, a) in v.value.iter().enumerate() {
        if a.value.contains('\0') {
            return Err(Problem::new(
                a.span.clone(),
                format!("{field}[{i}]"),
                "an argument contains a NUL character",
                "remove it: arguments are C strings",
            ));
        }
    }
    Ok(v.value.iter().map(|a| a.value.clone()).collect())
}

/// The `{name}` tokens of `s` (a name: ASCII letters, digits and
/// underscores, not starting with a digit) not preceded by `$`: `${name}` is a
/// shell's variable, left alone.
pub(super) fn placeholders(s: &str) -> impl Iterator<Item = &str> {
    s.match_indices('{').filter_map(move |(i, _)| {
        if s[..i].ends_with('$') {
            return None;
        }
        let rest = &s[i + 1..];
        let name = &rest[..rest.find('}')?];
        let ok = name.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
            && name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
        ok.then_some(name)
    })
}

/// The first `{url}`, `{port}` or `{host}` (any case) in `s` not preceded by
/// `$`: what a command client's author may expect benchgate to replace, which
/// it never does (the target is in `BENCHGATE_URL`).
fn target_token(s: &str) -> Option<&str> {
    placeholders(s).find(|name| {
        ["url", "port", "host"]
            .iter()
            .any(|t| name.eq_ignore_ascii_case(t))
    })
}

/// A command client's argv holds no `{url}`, `{port}` or `{host}`.
fn no_target_token_in_command(v: &At<Vec<At<String>>>, field: &str) -> Result<(), Problem> {
    for (i, a) in v.value.iter().enumerate() {
        if let Some(token) = target_token(&a.value) {
            return Err(Problem::new(
                a.span.clone(),
                format!("{field}[{i}]"),
                format!("{{{token}}} is not replaced: the arguments are passed as written, and the program reads the target from the environment variable BENCHGATE_URL"),
                "read BENCHGATE_URL in the program (BENCHGATE_BASE_URL holds the scheme, host and port alone), or pass it through a shell, like command = [\"sh\", \"-c\", \"exec ./client \\\"$BENCHGATE_URL\\\"\"]",
            ));
        }
    }
    Ok(())
}

/// A command client's `env` values hold no `{url}`, `{port}` or `{host}`.
fn no_target_token_in_env(table: Option<&At<StringTable>>, field: &str) -> Result<(), Problem> {
    for (k, v) in table.map(|t| t.value.as_slice()).unwrap_or_default() {
        if let Some(token) = target_token(&v.value) {
            let name = &k.value;
            return Err(Problem::new(
                v.span.clone(),
                format!("{field}.{name}"),
                format!("{{{token}}} is not replaced: env values are passed as written, and the program reads the target from the environment variable BENCHGATE_URL"),
                format!("read BENCHGATE_URL in the program (BENCHGATE_BASE_URL holds the scheme, host and port alone), or set {name} from it in a shell, like command = [\"sh\", \"-c\", \"{name}=\\\"$BENCHGATE_URL\\\" exec ./client\"]"),
            ));
        }
    }
    Ok(())
}

/// Builds the command spec of a `kind = "command"` client. `config_dir` is the
/// directory relative paths (cwd) are resolved against.
pub(super) fn build(c: &RawClient, config_dir: &Path) -> Result<CommandSpec, Problem> {
    let path = |field: &str| format!("{}.{field}", c.label);
    let example = "command = [\"java\", \"-jar\", \"bench.jar\"]";
    let command = match &c.command {
        Some(v) => {
            let command = argv(v, &path("command"), example)?;
            no_target_token_in_command(v, &path("command"))?;
            command
        }
        None => {
            return Err(super::validate::missing(
                &c.span,
                &path("command"),
                "command",
                example,
                "[[client]]",
            ))
        }
    };
    let setup = match &c.setup {
        Some(v) => Some(argv(v, &path("setup"), "setup = [\"sh\", \"build.sh\"]")?),
        None => None,
    };
    for (field, value) in [("pool", c.pool.as_ref().map(|p| p.span.clone()))] {
        if let Some(span) = value {
            return Err(Problem::new(
                span,
                path(field),
                "pool applies to the built-in clients only",
                "configure the pool in your program (BENCHGATE_CONCURRENCY gives the worker count), and remove pool here",
            ));
        }
    }
    let cwd = working_dir(c.cwd.as_ref(), config_dir, &path("cwd"))?;
    let env = env_table(c.env.as_ref(), &path("env"))?;
    no_target_token_in_env(c.env.as_ref(), &path("env"))?;
    let pass_env = pass_env(c.pass_env.as_ref(), &env, &path("pass_env"))?;
    let timeout = opt_duration(c.timeout.as_ref(), &path("timeout"), true)?;
    let result = result_format(c, &command)?;
    Ok(CommandSpec {
        command,
        setup,
        cwd: cwd.display().to_string(),
        env,
        pass_env,
        timeout,
        result,
    })
}

/// `result` and `benchmark`: benchgate's result file (the default), or JMH's
/// for one benchmark method, whose options reach the program through the
/// `{jmh_args}` element of `command` (which only a JMH client may use).
fn result_format(c: &RawClient, command: &[String]) -> Result<ResultFormat, Problem> {
    let path = |field: &str| format!("{}.{field}", c.label);
    let placeholder = ResultFormat::JMH_ARGS;
    let jmh = match &c.result {
        None => false,
        Some(r) if r.value == "benchgate" => false,
        Some(r) if r.value == "jmh" => true,
        Some(r) => {
            return Err(Problem::new(
                r.span.clone(),
                path("result"),
                format!("{:?} is not a result format", r.value),
                "write result = \"jmh\" for a JMH benchmark, or remove result for benchgate's own result file",
            ))
        }
    };
    let placed = command.iter().any(|a| a == placeholder);
    if !jmh {
        if let Some(b) = &c.benchmark {
            return Err(Problem::new(
                b.span.clone(),
                path("benchmark"),
                "benchmark names a JMH method, but this client does not say it writes JMH's result",
                "add result = \"jmh\", or remove benchmark",
            ));
        }
        if let Some(i) = command.iter().position(|a| a.contains(placeholder)) {
            return Err(Problem::new(
                c.command
                    .as_ref()
                    .map_or(c.span.clone(), |v| v.span.clone()),
                format!("{}[{i}]", path("command")),
                format!("{placeholder} is only replaced for JMH clients"),
                "add result = \"jmh\" and benchmark = \"package.Class.method\", or remove it",
            ));
        }
        return Ok(ResultFormat::Benchgate);
    }
    let Some(benchmark) = &c.benchmark else {
        return Err(super::validate::missing(
            &c.span,
            &path("benchmark"),
            "benchmark",
            "benchmark = \"org.example.HttpBench.get\" (the JMH method this client runs)",
            "[[client]]",
        ));
    };
    let name = &benchmark.value;
    let part_ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with(|ch: char| ch.is_ascii_digit())
            && p.chars()
                .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '$')
    };
    if !name.contains('.') || !name.split('.').all(part_ok) {
        return Err(Problem::new(
            benchmark.span.clone(),
            path("benchmark"),
            format!("{name:?} is not a benchmark method's full name"),
            "name one method as JMH lists it (java -jar benchmarks.jar -l), like benchmark = \"org.example.HttpBench.get\"; each method is a client of its own",
        ));
    }
    if let Some(i) = command
        .iter()
        .position(|a| a != placeholder && a.contains(placeholder))
    {
        return Err(Problem::new(
            c.command
                .as_ref()
                .map_or(c.span.clone(), |v| v.span.clone()),
            format!("{}[{i}]", path("command")),
            format!("{placeholder} is replaced only as a whole argument (it becomes several)"),
            format!("give it as an argument of its own: \"{placeholder}\""),
        ));
    }
    if !placed {
        return Err(Problem::new(
            c.command.as_ref().map_or(c.span.clone(), |v| v.span.clone()),
            path("command"),
            format!("a JMH client's command needs a {placeholder} argument, where benchgate puts the benchmark, its threads, fork, times, result file and URL"),
            format!("add it after the JMH jar, like command = [\"java\", \"-jar\", \"target/benchmarks.jar\", \"{placeholder}\"]"),
        ));
    }
    Ok(ResultFormat::Jmh {
        benchmark: name.clone(),
    })
}

/// `cwd`, resolved against the config file's directory (`config_dir` when
/// absent); an empty one is an error.
pub(super) fn working_dir(
    cwd: Option<&At<String>>,
    config_dir: &Path,
    field: &str,
) -> Result<std::path::PathBuf, Problem> {
    match cwd {
        Some(d) if d.value.trim().is_empty() => Err(Problem::new(
            d.span.clone(),
            field,
            "cwd is empty",
            "remove cwd to run in the config file's directory, or name a directory",
        )),
        Some(d) => Ok(config_dir.join(&d.value)),
        None => Ok(config_dir.to_path_buf()),
    }
}

/// Extra environment variables (`env = { NAME = "value" }`): valid names, not
/// `BENCHGATE_*` (benchgate sets those), no NUL in values. `field` names the
/// table in errors.
pub(super) fn env_table(
    table: Option<&At<StringTable>>,
    field: &str,
) -> Result<BTreeMap<String, String>, Problem> {
    let mut env = BTreeMap::new();
    if let Some(table) = table {
        for (k, v) in &table.value {
            let valid = !k.value.is_empty()
                && !k.value.contains('=')
                && k.value
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && !k.value.starts_with(|ch: char| ch.is_ascii_digit());
            if !valid {
                return Err(Problem::new(
                    k.span.clone(),
                    format!("{}.{}", field, k.value),
                    format!("{:?} is not an environment variable name", k.value),
                    "use letters, digits and underscores, not starting with a digit",
                ));
            }
            if k.value.starts_with("BENCHGATE_") {
                return Err(Problem::new(
                    k.span.clone(),
                    format!("{}.{}", field, k.value),
                    format!("{} is set by benchgate for every trial", k.value),
                    "pick another name: BENCHGATE_* variables are reserved",
                ));
            }
            if v.value.contains('\0') {
                return Err(Problem::new(
                    v.span.clone(),
                    format!("{}.{}", field, k.value),
                    "the value contains a NUL character",
                    "remove it",
                ));
            }
            env.insert(k.value.clone(), v.value.clone());
        }
    }
    Ok(env)
}

/// The workflow's own credentials, which no config may pass to a program:
/// GitHub's token in every spelling and the Actions runtime and OIDC
/// variables.
fn is_workflow_credential(name: &str) -> bool {
    let n = name.to_ascii_uppercase().replace('-', "_");
    matches!(
        n.as_str(),
        "GITHUB_TOKEN" | "GH_TOKEN" | "INPUT_GITHUB_TOKEN"
    ) || n.starts_with("ACTIONS_")
}

/// Variables passed from benchgate's environment although child programs do
/// not get them by default (`pass_env = ["NPM_TOKEN"]`): names only (no `=`,
/// no NUL, not empty), not `BENCHGATE_*`, not also set in `env` (which
/// would win). Duplicates are dropped. `field` names the list in errors.
pub(super) fn pass_env(
    list: Option<&At<Vec<At<String>>>>,
    env: &BTreeMap<String, String>,
    field: &str,
) -> Result<Vec<String>, Problem> {
    let mut out: Vec<String> = Vec::new();
    for (i, name) in list
        .map(|l| l.value.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let at = |msg: String, fix: &str| {
            Problem::new(name.span.clone(), format!("{field}[{i}]"), msg, fix)
        };
        let n = &name.value;
        if n.is_empty() || n.contains('=') || n.contains('\0') {
            return Err(at(
                format!("{n:?} is not an environment variable name"),
                "give the name alone, like pass_env = [\"NPM_TOKEN\"]: the value comes from benchgate's environment",
            ));
        }
        if n.starts_with("BENCHGATE_") {
            return Err(at(
                format!("{n} is set by benchgate"),
                "remove it: BENCHGATE_* variables are reserved",
            ));
        }
        if is_workflow_credential(n) {
            return Err(at(
                format!("{n} is the workflow's own credential, which benchmarked programs never get (a pull request's config could otherwise hand it to its own code)"),
                "remove it; a program that needs a token of its own gets one under another name (a repository secret mapped in the workflow, e.g. NPM_TOKEN)",
            ));
        }
        if env.contains_key(n) {
            return Err(at(
                format!("{n} is also set in env, whose value would be used"),
                "keep one: remove it from pass_env to use the value in env, or from env to pass benchgate's own",
            ));
        }
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    Ok(out)
}
