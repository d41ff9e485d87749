//! The environment of the programs benchgate starts: command clients, their
//! `setup`, servers under test, and its own driver and reference-server
//! processes. They inherit benchgate's environment minus what
//! [`withheld`] names:
//!
//! - credentials, by name ([`is_secret_name`]): the action's token in every
//!   spelling (`GITHUB_TOKEN`, `INPUT_GITHUB-TOKEN`), cloud credentials
//!   (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//!   `AWS_WEB_IDENTITY_TOKEN_FILE`, `GOOGLE_APPLICATION_CREDENTIALS`,
//!   `GOOGLE_GHA_CREDS_PATH`, `SSH_AUTH_SOCK`) and any name containing
//!   `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, `API_KEY`,
//!   `ACCESS_KEY` or `PRIVATE_KEY`;
//! - credentials by value ([`secret_vars`]): any variable whose value equals
//!   the value of one of those (`MY_PAT=<the token>`), values of at least
//!   [`MIN_SECRET_LEN`] characters;
//! - the Actions runtime: every `ACTIONS_*` variable (runtime, cache, results
//!   and OIDC request URLs and tokens);
//! - the runner's file commands ([`FILE_COMMANDS`]: `GITHUB_ENV`,
//!   `GITHUB_PATH`, `GITHUB_OUTPUT`, `GITHUB_STATE`, `GITHUB_STEP_SUMMARY`),
//!   through which a program could change the job's later steps.
//!
//! A client's or server's `pass_env` names variables to pass through anyway,
//! and its `env` table sets variables of its own (both kept). Removing
//! variables from the children does not hide what benchgate itself holds (a
//! child can read `/proc/<benchgate>/environ`): the action's measure step
//! never holds the token ([`crate::action::steps::scrub_secrets`], which
//! uses [`secret_vars`] too).

use std::ffi::{OsStr, OsString};
use std::process::Command;

/// The runner's file-command variables: paths of files whose contents change
/// the job's environment, PATH, outputs, state and summary.
pub const FILE_COMMANDS: [&str; 5] = [
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
];

/// The shortest value compared for aliases of a secret: shorter ones (`1`,
/// `true`) would match ordinary variables, and no credential is that short.
pub const MIN_SECRET_LEN: usize = 8;

/// Whether an environment variable may carry a credential: the action's
/// token in every spelling, GitHub's runtime and OIDC request tokens, cloud
/// credentials, and any name that says TOKEN, SECRET, PASSWORD, PASSWD,
/// CREDENTIAL, API_KEY, ACCESS_KEY or PRIVATE_KEY.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const EXACT: [&str; 8] = [
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_GHA_CREDS_PATH",
        "SSH_AUTH_SOCK",
    ];
    const WORDS: [&str; 8] = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "API_KEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
    ];
    EXACT.contains(&upper.as_str()) || WORDS.iter().any(|w| upper.contains(w))
}

/// Whether a variable is withheld from child programs by its name alone:
/// [`is_secret_name`], `ACTIONS_*`, or one of [`FILE_COMMANDS`].
pub fn is_withheld_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    is_secret_name(name) || upper.starts_with("ACTIONS_") || FILE_COMMANDS.contains(&upper.as_str())
}

/// The names in `vars` that may hold a credential: those [`is_secret_name`]
/// matches, and those whose value equals one of theirs (of at least
/// [`MIN_SECRET_LEN`] bytes), so an alias of the token goes too. In `vars`
/// order.
pub fn secret_vars(vars: &[(OsString, OsString)]) -> Vec<OsString> {
    let secret = |k: &OsStr| is_secret_name(&k.to_string_lossy());
    let values: Vec<&OsStr> = vars
        .iter()
        .filter(|(k, v)| secret(k) && v.len() >= MIN_SECRET_LEN)
        .map(|(_, v)| v.as_os_str())
        .collect();
    vars.iter()
        .filter(|(k, v)| secret(k) || values.contains(&v.as_os_str()))
        .map(|(k, _)| k.clone())
        .collect()
}

/// The names in `vars` a child program does not get: [`secret_vars`], and
/// those [`is_withheld_name`] matches; minus `pass` (the config's
/// `pass_env`, compared exactly).
pub fn withheld(vars: &[(OsString, OsString)], pass: &[String]) -> Vec<OsString> {
    let mut out = secret_vars(vars);
    out.extend(
        vars.iter()
            .filter(|(k, _)| is_withheld_name(&k.to_string_lossy()))
            .map(|(k, _)| k.clone()),
    );
    out.sort();
    out.dedup();
    out.retain(|k| !pass.iter().any(|p| OsStr::new(p) == k));
    out
}

/// Removes from `cmd`'s environment what [`withheld`] names in benchgate's
/// own environment, except `pass`. Call it before setting the program's own
/// variables (`env = {...}`, `BENCHGATE_*`): those are kept.
pub fn scrub(cmd: &mut Command, pass: &[String]) {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for name in withheld(&vars, pass) {
        cmd.env_remove(name);
    }
}

/// The `PATH` a started program gets: its own `env`'s `PATH` (`own`), else
/// benchgate's (never withheld).
pub fn program_path(own: Option<&str>) -> OsString {
    match own {
        Some(p) => OsString::from(p),
        None => std::env::var_os("PATH").unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn credentials_are_recognised_and_ordinary_variables_are_not() {
        for name in [
            "GITHUB_TOKEN",
            "INPUT_GITHUB-TOKEN",
            "input_github_token",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "NPM_TOKEN",
            "DB_PASSWORD",
            "OPENAI_API_KEY",
            "SSH_AUTH_SOCK",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "JAVA_HOME",
            "GITHUB_WORKSPACE",
            "GITHUB_OUTPUT",
            "INPUT_CONFIG",
            "AWS_REGION",
            "RUNNER_TEMP",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn children_lose_credentials_their_aliases_the_runtime_and_file_commands() {
        let token = "ghs_0123456789abcdef";
        let env = vars(&[
            ("PATH", "/usr/bin"),
            ("JAVA_HOME", "/opt/jdk"),
            ("GITHUB_TOKEN", token),
            ("MY_PAT", token),
            ("ACTIONS_RUNTIME_URL", "https://pipelines.example/"),
            ("ACTIONS_CACHE_URL", "https://cache.example/"),
            ("GITHUB_OUTPUT", "/home/runner/_temp/out"),
            ("GITHUB_STEP_SUMMARY", "/home/runner/_temp/sum"),
            ("GITHUB_WORKSPACE", "/w"),
            ("NPM_TOKEN", "npm_abcdefgh"),
            // Short secret values are not compared: `1` is everywhere.
            ("SOME_SECRET", "1"),
            ("VERBOSE", "1"),
        ]);
        let names = |v: Vec<OsString>| -> Vec<String> {
            v.into_iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(withheld(&env, &[])),
            [
                "ACTIONS_CACHE_URL",
                "ACTIONS_RUNTIME_URL",
                "GITHUB_OUTPUT",
                "GITHUB_STEP_SUMMARY",
                "GITHUB_TOKEN",
                "MY_PAT",
                "NPM_TOKEN",
                "SOME_SECRET",
            ]
        );
        let passed = names(withheld(&env, &["NPM_TOKEN".to_string()]));
        assert!(!passed.contains(&"NPM_TOKEN".to_string()), "{passed:?}");
        // The measure step's re-exec keeps the file commands (it writes
        // outputs) and drops the token's alias.
        assert_eq!(
            names(secret_vars(&env)),
            ["GITHUB_TOKEN", "MY_PAT", "NPM_TOKEN", "SOME_SECRET"]
        );
    }
}
