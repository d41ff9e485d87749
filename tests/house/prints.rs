//! How benchgate prints (issue 54, point 4): only through the print macros
//! of `src/interrupt.rs` (`stdoutln!`, `stderrln!`, `stdout!`, `stderr!`),
//! which end benchgate quietly when the reader of stdout or stderr went
//! away. The standard ones panic there (`benchgate run … 2>&1 | head -2`
//! exited 101), so this test fails on any of them in src/, outside unit
//! tests, naming the file and line.

use std::path::Path;

use super::{rust_files, ROOT};

const STD_PRINTS: &[&str] = &["println!(", "eprintln!(", "print!(", "eprint!("];

#[test]
fn src_prints_only_through_the_macros_that_survive_a_closed_pipe() {
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            // A file's unit tests come last, after `#[cfg(test)]`.
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            // `eprintln!(` holds no `print!(`; `stdoutln!(` holds none of them.
            let std_print = STD_PRINTS.iter().any(|p| {
                code.match_indices(p)
                    .any(|(at, _)| !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if std_print {
                found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a standard print macro panics when stdout or stderr is a closed pipe: use crate::stdoutln!, stderrln!, stdout! or stderr! (src/interrupt.rs):\n{}",
        found.join("\n")
    );
}
