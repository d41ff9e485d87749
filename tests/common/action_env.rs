//! A fake runner for `benchgate action`, run exactly as the container runs it:
//! the environment only (`GITHUB_*` pointing at temporary files, a
//! `/github/workspace`-like directory), a recorded event payload, and what the
//! run wrote to `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::exe;

/// A temporary directory standing in for the runner: the event payload, the
/// output and summary files, and the workspace below it.
pub struct ActionEnv {
    pub dir: tempfile::TempDir,
    workspace: PathBuf,
}

impl ActionEnv {
    /// A fresh runner directory whose workspace, `workspace` below it, exists.
    pub fn new(workspace: &str) -> ActionEnv {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join(workspace);
        std::fs::create_dir_all(&workspace).unwrap();
        ActionEnv { dir, workspace }
    }

    /// `GITHUB_WORKSPACE`.
    pub fn workspace(&self) -> PathBuf {
        self.workspace.clone()
    }

    /// A file directly in the runner's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `benchgate action` for `event` with `payload` (written to `event.json`) in
    /// `repository`, with an environment of nothing but `PATH`, `GITHUB_ACTIONS`,
    /// the event, the repository, `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` (the
    /// runner's files `files`, emptied) and `GITHUB_WORKSPACE`; run in the
    /// runner's directory. The caller adds the rest and runs it with [`run`].
    pub fn command(
        &self,
        event: &str,
        payload: &str,
        repository: &str,
        files: &ActionFiles,
    ) -> Command {
        let event_path = self.file("event.json");
        std::fs::write(&event_path, payload).unwrap();
        for f in [&files.output, &files.summary] {
            std::fs::write(f, "").unwrap();
        }
        let mut cmd = Command::new(exe());
        cmd.arg("action")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", event)
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_REPOSITORY", repository)
            .env("GITHUB_OUTPUT", &files.output)
            .env("GITHUB_STEP_SUMMARY", &files.summary)
            .env("GITHUB_WORKSPACE", self.workspace())
            .current_dir(self.dir.path());
        cmd
    }
}

/// Where one `benchgate action` writes its outputs and its step summary.
pub struct ActionFiles {
    pub output: PathBuf,
    pub summary: PathBuf,
}

impl ActionFiles {
    /// `output` and `summary` in the runner's directory.
    pub fn new(env: &ActionEnv, output: &str, summary: &str) -> ActionFiles {
        ActionFiles {
            output: env.file(output),
            summary: env.file(summary),
        }
    }
}

/// `cmd.output()`, tried again for up to a second while the executable is
/// busy. A binary this test process has just copied (the container step's
/// test copies benchgate) can still be open for writing in a child that
/// another test's thread forked during the copy, until that child execs: exec
/// then fails with ETXTBSY ("Text file busy"; seen beside a neighbour that
/// stretched that moment). Any other error fails at once.
pub fn output_when_not_busy(cmd: &mut Command) -> std::process::Output {
    let mut tries = 0;
    loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
}

/// Runs `cmd` with `env` added (after, so it overrides) and reads back `files`.
pub fn run(mut cmd: Command, env: &[(&str, &str)], files: &ActionFiles) -> ActionRun {
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = output_when_not_busy(&mut cmd);
    ActionRun {
        output,
        outputs: std::fs::read_to_string(&files.output).unwrap(),
        summary: std::fs::read_to_string(&files.summary).unwrap(),
    }
}

/// A finished `benchgate action`: the process's output, and the text of its
/// `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` files.
pub struct ActionRun {
    pub output: Output,
    pub outputs: String,
    pub summary: String,
}

impl ActionRun {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub fn log(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.output.status.code(),
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }

    /// Output `name`, checking every entry's heredoc form and delimiter.
    pub fn output(&self, name: &str) -> Option<String> {
        super::outputs::output(&self.outputs, name)
    }

    /// Output `name`, which must be there.
    pub fn expect_output(&self, name: &str) -> String {
        self.output(name)
            .unwrap_or_else(|| panic!("no output {name} in:\n{}\n{}", self.outputs, self.log()))
    }

    /// The lines of stdout and of stderr that the runner would execute as
    /// one of [`INJECTED`] ([`injected_commands`]), each named by its stream.
    pub fn injected(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (name, bytes) in [
            ("stdout", &self.output.stdout),
            ("stderr", &self.output.stderr),
        ] {
            let text = String::from_utf8_lossy(bytes);
            for line in injected_commands(&text, &INJECTED) {
                found.push(format!("{name}: {line}"));
            }
        }
        found
    }

    /// `secret` is only ever on the `::add-mask::` line of stdout, and not on
    /// stderr.
    pub fn assert_only_masked(&self, secret: &str) {
        let stdout = String::from_utf8_lossy(&self.output.stdout);
        for line in stdout.lines().filter(|l| l.contains(secret)) {
            assert_eq!(
                line,
                format!("::add-mask::{secret}"),
                "token leaked: {}",
                self.log()
            );
        }
        assert!(
            !String::from_utf8_lossy(&self.output.stderr).contains(secret),
            "{}",
            self.log()
        );
    }
}

/// Untrusted text that holds workflow commands: a newline and a carriage
/// return before them, one indented, and the runner's legacy `##[name]` form,
/// which it recognises anywhere in a line. Each command is one of
/// [`INJECTED`].
pub const HOSTILE: &str = "x\n::set-output name=verdict::pwned\n  ::add-mask::pwned\r::error::pwned\nsee ##[add-mask]pwned";

/// The workflow commands in [`HOSTILE`].
pub const INJECTED: [&str; 4] = [
    "::set-output name=verdict::pwned",
    "::add-mask::pwned",
    "::error::pwned",
    "##[add-mask]pwned",
];

/// The lines of one output stream that GitHub's runner would execute as one
/// of the `injected` commands. Lines end at LF or CR (as the runner reads
/// them). Outside a `::stop-commands::TOKEN` fence whose token is random
/// (`benchgate-` and 32 hex digits) and that a later `::TOKEN::` line closes,
/// the runner takes a line that starts with `::` after whitespace as a
/// command (so escaped text after benchgate's own `::error title=..::` is
/// data), and any other line that holds `##[name]` as one in the legacy form.
pub fn injected_commands(text: &str, injected: &[&str]) -> Vec<String> {
    let lines: Vec<&str> = text.split(['\n', '\r']).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let fence = line
            .strip_prefix("::stop-commands::")
            .filter(|token| {
                token.strip_prefix("benchgate-").is_some_and(|random| {
                    random.len() >= 32 && random.chars().all(|c| c.is_ascii_hexdigit())
                })
            })
            .and_then(|token| {
                let close = format!("::{token}::");
                lines[i + 1..]
                    .iter()
                    .position(|l| l.trim_start().starts_with(&close))
            });
        if let Some(len) = fence {
            i += len + 2;
            continue;
        }
        let command = injected.iter().any(|c| match c.strip_prefix("##[") {
            Some(_) => !is_v2_command(line) && line.contains(c),
            None => line.starts_with(c),
        });
        if command {
            found.push(lines[i].to_string());
        }
        i += 1;
    }
    found
}

/// Whether the runner parses `line` (trimmed) as a `::name ...::data`
/// command: its name is one the runner knows; otherwise it tries the legacy
/// `##[name]` form on the same line.
fn is_v2_command(line: &str) -> bool {
    const KNOWN: [&str; 15] = [
        "add-mask",
        "add-matcher",
        "add-path",
        "debug",
        "echo",
        "endgroup",
        "error",
        "group",
        "notice",
        "remove-matcher",
        "save-state",
        "set-env",
        "set-output",
        "stop-commands",
        "warning",
    ];
    let Some(rest) = line.strip_prefix("::") else {
        return false;
    };
    let Some(end) = rest.find("::") else {
        return false;
    };
    let name = rest[..end].split(' ').next().unwrap_or("");
    KNOWN.iter().any(|k| k.eq_ignore_ascii_case(name))
}

/// A recorded event payload from `fixtures/events/`.
pub fn event_fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/events")
            .join(name),
    )
    .unwrap()
}
