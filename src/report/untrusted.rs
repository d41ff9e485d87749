//! The one print path for untrusted text to a terminal or a log (issue 53,
//! point 5): a program's output relayed in a failure (a failing client's,
//! a setup step's, a server's tail), a name from a config or a results file
//! (a JMH benchmark's included), an error that quotes any of them.
//!
//! A line feed ends a line (a carriage return right before it goes with it),
//! and each line after the first is quoted behind `    | `, so that it reads
//! as the program's, not benchgate's. Every other C0 control (carriage
//! return, tab, ESC, BEL, ...), DEL, every C1 control (U+0080-U+009F) and
//! every bidi control ([`escape::is_hidden`]) is shown escaped, the first
//! line's too: `\r`, `\t`, `\u{1b}`, `\u{9b}`, `\u{202e}`. So no byte of it
//! can move the cursor, clear the screen, set a hyperlink (OSC 8) or the
//! clipboard (OSC 52), retitle the window, ring the bell, overwrite a line
//! or reorder its text. In a GitHub Actions log it is then fenced
//! ([`escape::fence`]): no line of it is a workflow command.
//!
//! [`for_log`] is what every print of such text goes through; renderers
//! whose whole output their printer fences use [`quoted`], and workflow
//! commands' messages (one message over several lines) [`visible`].

use std::fmt::Write as _;

use super::escape;

/// How a continuation line of untrusted text is quoted.
pub const QUOTE: &str = "\n    | ";

/// `s` for a terminal or a log, escaped and quoted ([`quoted`]), and fenced
/// in a GitHub Actions log: the string any print of untrusted text prints.
pub fn for_log(s: &str) -> String {
    escape::fence(&quoted(s)).into_owned()
}

/// `s` escaped and quoted line by line (module docs), not fenced: for text
/// inside a rendering that its printer fences (the terminal report). Trailing
/// whitespace and empty lines are dropped.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for (i, line) in s.trim_end().split('\n').enumerate() {
        if i > 0 {
            out.push_str(QUOTE);
        }
        push_visible(line.strip_suffix('\r').unwrap_or(line), &mut out);
    }
    out
}

/// `s` on one line: every hidden character shown escaped, line feeds too
/// (`\n`).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_visible(s, &mut out);
    out
}

/// `s` with every hidden character but the line feed shown escaped (a
/// carriage return right before a line feed dropped): a message that keeps
/// its lines in a form of its own (a workflow command's `%0A`).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_visible(line.strip_suffix('\r').unwrap_or(line), &mut out);
    }
    out
}

/// `text` onto `out`, each hidden character ([`escape::is_hidden`]) as a
/// visible escape.
fn push_visible(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escape::is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ESC sequences (a screen clear, OSC 8 hyperlink, OSC 52 clipboard
    /// write, OSC 0 title), CR, BEL, tab, DEL, C1 CSI (U+009B) and a bidi
    /// override (U+202E), on the first line and a quoted one.
    const HOSTILE: &str = "a\x1b[2Jb \x1b]8;;http://e.example\x1b\\link\x1b]8;;\x1b\\ \
        \x1b]52;c;ZXZpbA==\x07 \x1b]0;t\x07 x\ry\tz\x7f \u{9b}31m \u{202e}exe.txt";
    const SHOWN: &str =
        "a\\u{1b}[2Jb \\u{1b}]8;;http://e.example\\u{1b}\\link\\u{1b}]8;;\\u{1b}\\ \
        \\u{1b}]52;c;ZXZpbA==\\u{7} \\u{1b}]0;t\\u{7} x\\ry\\tz\\u{7f} \\u{9b}31m \\u{202e}exe.txt";

    #[test]
    fn every_control_but_the_line_feed_is_shown_escaped_on_every_line() {
        let s = format!("{HOSTILE}\r\n{HOSTILE}\n\n");
        assert_eq!(quoted(&s), format!("{SHOWN}{QUOTE}{SHOWN}"));
        assert_eq!(one_line("a\nb\r"), "a\\nb\\r");
        assert_eq!(visible(&format!("{HOSTILE}\r\nb")), format!("{SHOWN}\nb"));
        assert_eq!(quoted("plain text"), "plain text");
        // Every C0 control but LF, DEL, every C1 control, the bidi controls.
        for c in (0..0x20u32)
            .chain([0x7f])
            .chain(0x80..0xa0)
            .chain([0x61c, 0x200e, 0x200f, 0x2066, 0x2069, 0x202a, 0x202e])
            .filter_map(char::from_u32)
            .filter(|&c| c != '\n')
        {
            let shown = quoted(&format!("x{c}y"));
            assert!(
                shown.starts_with("x\\") && !shown.contains(c),
                "{c:?} -> {shown:?}"
            );
        }
    }

    #[test]
    fn in_a_log_no_line_is_a_workflow_command() {
        escape::set_actions_log(true);
        let out = for_log("::error::x\n::add-mask::y\r::warning::z");
        for line in out.lines() {
            assert!(!line.trim_start().starts_with("::"), "{out}");
        }
        assert!(out.contains("\\r::warning::z"), "{out}");
    }
}
