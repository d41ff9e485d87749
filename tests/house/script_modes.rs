//! Every script a workflow or an action runs as a program is executable in git
//! (issue 54): committed as 100644, `scripts/release-manifest.sh` stopped the
//! release with "Permission denied". This test reads the `run:` scripts of
//! .github/workflows/*.yml and of every action.yml, finds each command that is
//! a file of the repository (`scripts/x.sh`, `./scripts/x`,
//! `"$GITHUB_ACTION_PATH/install.sh"` relative to its action.yml), and fails on
//! any whose mode in the index (`git ls-files -s`) is not 100755. A script
//! handed to an interpreter (`bash setup/install.sh`) needs no mode.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::ROOT;

/// The text of every `run:` of a workflow or action.yml: the one-line value, or
/// the block (`run: |`) below it, with its line number.
fn run_scripts(yaml: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let body = line.trim_start().trim_start_matches("- ");
        let Some(value) = body.strip_prefix("run:") else {
            i += 1;
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let value = value.trim();
        if value.starts_with('|') || value.starts_with('>') {
            let mut block = String::new();
            let mut j = i + 1;
            while j < lines.len() {
                let l = lines[j];
                if !l.trim().is_empty() && l.len() - l.trim_start().len() <= indent {
                    break;
                }
                block.push_str(l.trim());
                block.push('\n');
                j += 1;
            }
            out.push((i + 1, block));
            i = j;
        } else {
            out.push((i + 1, value.to_string()));
            i += 1;
        }
    }
    out
}

/// The first word of each simple command of a shell script (quotes dropped):
/// at the start, after a newline, `;`, `&`, `|`, `(`, `)` or a backquote
/// outside quotes, and inside `$( )` (in double quotes too); past keywords,
/// `!`, `exec` and variable assignments. Comments are skipped, a backslash
/// escapes the next character (so continued lines stay one command).
fn commands(script: &str) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    const SKIP: &[&str] = &[
        "if", "then", "else", "elif", "do", "while", "until", "!", "exec", "time", "{",
    ];
    let mut out = Vec::new();
    // Quote states: the innermost last; `$(` in double quotes pushes None.
    let mut stack = vec![Quote::None];
    let (mut word, mut quoted) = (String::new(), false);
    let mut at_command = true;
    let mut end_word = |word: &mut String, quoted: &mut bool, at_command: &mut bool| {
        if word.is_empty() && !*quoted {
            return;
        }
        let assignment = word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
        });
        if *at_command && !SKIP.contains(&word.as_str()) && !assignment {
            out.push(std::mem::take(word));
            *at_command = false;
        }
        word.clear();
        *quoted = false;
    };
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let state = *stack.last().unwrap();
        match state {
            Quote::Single => {
                if c == '\'' {
                    stack.pop();
                } else {
                    word.push(c);
                }
            }
            Quote::Double => match c {
                '"' => {
                    stack.pop();
                }
                '\\' => {
                    word.extend(next);
                    i += 1;
                }
                '$' if next == Some('(') => {
                    end_word(&mut word, &mut quoted, &mut at_command);
                    stack.push(Quote::None);
                    at_command = true;
                    i += 1;
                }
                _ => word.push(c),
            },
            Quote::None => match c {
                '\'' => {
                    quoted = true;
                    stack.push(Quote::Single);
                }
                '"' => {
                    quoted = true;
                    stack.push(Quote::Double);
                }
                '\\' => {
                    if next != Some('\n') {
                        word.extend(next);
                    }
                    i += 1;
                }
                '#' if word.is_empty() && !quoted => {
                    while i + 1 < chars.len() && chars[i + 1] != '\n' {
                        i += 1;
                    }
                }
                '$' if next == Some('(') => {
                    end_word(&mut word, &mut quoted, &mut at_command);
                    at_command = true;
                    i += 1;
                }
                ')' if stack.len() > 1 => {
                    end_word(&mut word, &mut quoted, &mut at_command);
                    stack.pop();
                }
                '\n' | ';' | '&' | '|' | '(' | ')' | '`' => {
                    end_word(&mut word, &mut quoted, &mut at_command);
                    at_command = true;
                }
                c if c.is_whitespace() || c == '<' || c == '>' => {
                    end_word(&mut word, &mut quoted, &mut at_command)
                }
                _ => word.push(c),
            },
        }
        i += 1;
    }
    end_word(&mut word, &mut quoted, &mut at_command);
    out
}

/// A command as a path of the repository, relative to its root, when it names
/// one: `./x` and `x/y` from the root (a workflow's working directory is the
/// checkout), `$GITHUB_ACTION_PATH/x` from the action.yml's directory.
fn repo_path(command: &str, action_dir: &str) -> Option<String> {
    let from_action = ["$GITHUB_ACTION_PATH/", "${GITHUB_ACTION_PATH}/"]
        .iter()
        .find_map(|p| command.strip_prefix(p));
    let rel = match from_action {
        Some(rest) if action_dir.is_empty() => rest.to_string(),
        Some(rest) => format!("{action_dir}/{rest}"),
        None if command.contains('/') && !command.starts_with(['/', '$', '~']) => {
            command.trim_start_matches("./").to_string()
        }
        None => return None,
    };
    Path::new(ROOT).join(&rel).is_file().then_some(rel)
}

/// Every tracked file with its mode (`git ls-files -s`).
fn git_modes() -> BTreeMap<String, String> {
    let out = Command::new("git")
        .args(["ls-files", "-s"])
        .current_dir(ROOT)
        .output()
        .expect("git ls-files -s (this test reads the modes of a git checkout)");
    assert!(out.status.success(), "git ls-files -s failed in {ROOT}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (meta, path) = l.split_once('\t')?;
            Some((path.to_string(), meta.split(' ').next()?.to_string()))
        })
        .collect()
}

#[test]
fn the_parser_finds_commands_not_arguments() {
    let yaml = "steps:\n  - run: ./scripts/lint.sh\n  - name: x\n    run: |\n      set -e\n      \
                FOO=1 scripts/a.sh \"$X\" && bash scripts/b.sh\n      if ! scripts/c.sh; then exit 1; fi\n      \
                x=$(scripts/d.sh --flag \\\n        scripts/e.sh)\n      exec \"$GITHUB_ACTION_PATH/f.sh\"\n      \
                sed -i \"s|a|b|\" scripts/g.sh; v=\"$(scripts/h.sh \\\"x\\\")\" # scripts/i.sh\n  \
                - uses: y\n";
    let scripts = run_scripts(yaml);
    assert_eq!(scripts.len(), 2, "{scripts:?}");
    let all: Vec<String> = scripts.iter().flat_map(|(_, s)| commands(s)).collect();
    for want in [
        "./scripts/lint.sh",
        "scripts/a.sh",
        "bash",
        "scripts/c.sh",
        "scripts/d.sh",
        "$GITHUB_ACTION_PATH/f.sh",
        "sed",
        "scripts/h.sh",
    ] {
        assert!(all.iter().any(|c| c == want), "{want} not in {all:?}");
    }
    for not in [
        "scripts/b.sh",
        "scripts/e.sh",
        "FOO=1",
        "scripts/g.sh",
        "scripts/i.sh",
    ] {
        assert!(
            !all.iter().any(|c| c == not),
            "{not} taken for a command: {all:?}"
        );
    }
}

#[test]
fn every_script_a_workflow_or_action_runs_is_executable_in_git() {
    let modes = git_modes();
    let mut files: Vec<String> = modes
        .keys()
        .filter(|p| {
            (p.starts_with(".github/workflows/") && p.ends_with(".yml"))
                || *p == "action.yml"
                || p.ends_with("/action.yml")
        })
        .cloned()
        .collect();
    files.sort();
    assert!(
        files.iter().any(|f| f == "action.yml") && files.iter().any(|f| f.contains("workflows")),
        "no workflow or action.yml found among the tracked files: {files:?}"
    );
    let mut checked = Vec::new();
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        let action_dir = file
            .strip_suffix("action.yml")
            .filter(|_| !file.starts_with(".github/"))
            .unwrap_or("")
            .trim_end_matches('/');
        for (line, script) in run_scripts(&text) {
            for command in commands(&script) {
                let Some(path) = repo_path(&command, action_dir) else {
                    continue;
                };
                let mode = modes.get(&path).map_or("untracked", String::as_str);
                if mode != "100755" {
                    bad.push(format!(
                        "{file}:{line} runs {path}, whose mode in git is {mode}: \
                         git update-index --chmod=+x {path}"
                    ));
                }
                checked.push(path);
            }
        }
    }
    assert!(
        !checked.is_empty(),
        "no workflow or action.yml runs a repository script: the parser found nothing"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
