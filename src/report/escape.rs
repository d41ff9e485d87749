//! Escaping of untrusted text (names from the config or a results file) for the
//! markdown renderers: GitHub-flavoured markdown text and table cells, code
//! blocks of a program's output, and mermaid chart labels.
//!
//! Rules (issue 4, point 7):
//! - markdown-significant ASCII punctuation is backslash-escaped (CommonMark
//!   §2.4: any ASCII punctuation may be escaped), which disarms links, images,
//!   emphasis, code spans, headings, raw HTML (`<`), tables (`|`) and math (`$`);
//! - `@` is followed by a zero-width joiner, so `@org/team` mentions nobody,
//!   and `://` gets one too, so a URL in a name is not auto-linked;
//! - control characters (newline included) and bidi overrides are shown as
//!   visible `\u{..}` escapes, so a name cannot start a new line or reorder text;
//! - overly long names are cut (on a character boundary) with an ellipsis;
//! - a program's output (a failure reason's tail) keeps its lines in a fenced
//!   code block that it cannot close, bounded, with the same mention and
//!   control-character rules and no workflow command ([`code_block`]).
//!
//! And for the log (issue 30, point 3): every print of untrusted text to
//! stdout or stderr, by the CLI and the action alike, goes through [`fence`],
//! which under GitHub Actions leaves no line the runner takes for a workflow
//! command ([`disarm`]); a message's control characters are escaped first, by
//! the one print path for untrusted text ([`super::untrusted`]).

use std::borrow::Cow;
use std::sync::OnceLock;

/// Longest name shown, in characters; longer names end in `…`.
pub const MAX_NAME_CHARS: usize = 120;

/// Zero-width joiner: breaks `@mention` and URL auto-linking, invisible to readers.
const ZWJ: char = '\u{200D}';

/// Characters backslash-escaped in markdown text and table cells.
const MD_SPECIAL: &[char] = &[
    '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '!', '|', '<', '>', '~', '$', '&',
    '"', '\'', '=',
];

/// Whether a character must be shown as a visible escape instead of itself:
/// a control (C0, DEL, C1: U+0080-U+009F), a bidi control (embeddings,
/// overrides, isolates, marks), a line or paragraph separator.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
        || c == '\u{2028}'
        || c == '\u{2029}'
}

/// Cuts `s` to at most `max` characters, ending with `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() <= max {
        return s.into();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out.into()
}

/// Whether this process prints into a GitHub Actions log: decided once, at
/// the binary's entry ([`set_actions_log`], from `GITHUB_ACTIONS=true`, which
/// the runner sets for every step), for the whole process.
static ACTIONS_LOG: OnceLock<bool> = OnceLock::new();

/// Decides [`actions_log`] for this process; the first call wins.
pub fn set_actions_log(yes: bool) {
    let _ = ACTIONS_LOG.set(yes);
}

/// Whether this process prints into a GitHub Actions log ([`set_actions_log`]);
/// undecided (a library caller that skipped the entry) counts as yes, so that
/// untrusted text is never printed unfenced.
pub fn actions_log() -> bool {
    ACTIONS_LOG.get().copied().unwrap_or(true)
}

/// Text for stdout or stderr that may hold untrusted text: in a GitHub
/// Actions log ([`actions_log`]) [`disarm`]ed, so that no line of it is a
/// workflow command; elsewhere unchanged, since only the runner reads commands
/// in a log. A message goes through [`super::untrusted::for_log`], which
/// escapes its control characters, then here; a rendering whose untrusted
/// parts its renderer escaped (a report's table, with its own colours) comes
/// here directly. Lines that are meant as commands (annotations,
/// `::add-mask::`) are printed beside it.
pub fn fence(s: &str) -> Cow<'_, str> {
    if actions_log() {
        disarm(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// `s` with no line that the runner takes for a workflow command, and
/// otherwise as it was. The runner (`ActionCommand` in actions/runner) reads
/// its output line by line (a line ends at `\n` or `\r`) and takes a line
///
/// - whose first characters after leading whitespace are `::` for a command
///   (`::error title=x::boom`): a space goes between the two colons
///   (`: :error title=x::boom`);
/// - that holds `##[` anywhere for a command in its legacy form
///   (`##[warning]x`): a space goes before the bracket (`## [warning]x`).
///
/// The break is a visible space because the runner matches both forms with
/// .NET's culture-aware `StartsWith`/`IndexOf`, which on ICU skip characters
/// without collation weight (controls, zero-width and other format
/// characters): a zero-width space between the colons would not break the
/// match, and such characters in the text could hide one from a plain search.
/// So, when looking for the two forms, controls and every character outside
/// ASCII count as possibly weightless and are looked through (a superset of
/// the weightless ones: at worst an extra space where no command was).
pub fn disarm(s: &str) -> Cow<'_, str> {
    if !s.contains(':') && !s.contains('[') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for line in s.split_inclusive(['\n', '\r']) {
        disarm_line(line, &mut out);
    }
    if out == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(out)
    }
}

/// Whether the runner's culture-aware matching may skip `c` ([`disarm`]).
fn maybe_weightless(c: char) -> bool {
    c.is_control() || !c.is_ascii()
}

/// One line of [`disarm`] (with its line end, if any), appended to `out`.
fn disarm_line(line: &str, out: &mut String) {
    let chars: Vec<char> = line.chars().collect();
    // The colon after which a space goes: the first significant character,
    // when the next one (whitespace counts here) is a colon too.
    let significant = |from: usize, skip_space: bool| {
        chars[from..]
            .iter()
            .position(|&c| !(maybe_weightless(c) || skip_space && c.is_whitespace()))
            .map(|i| from + i)
    };
    let split_colons = significant(0, true)
        .filter(|&i| chars[i] == ':')
        .filter(|&i| significant(i + 1, false).is_some_and(|j| chars[j] == ':'));
    // The last two significant characters before this one.
    let mut last = ['\0'; 2];
    for (i, &c) in chars.iter().enumerate() {
        if c == '[' && last == ['#', '#'] {
            out.push(' ');
        }
        out.push(c);
        if split_colons == Some(i) {
            out.push(' ');
        }
        if !maybe_weightless(c) {
            last = [last[1], c];
        }
    }
}

/// Escapes untrusted text for markdown: safe in running text, headings and
/// table cells alike.
pub fn md(s: &str) -> String {
    md_n(s, MAX_NAME_CHARS)
}

/// A cell's client for markdown, `client @ server` with a server under test:
/// both names escaped, the ` @ ` between them ours (it mentions nobody).
pub fn md_who(client: &str, server: Option<&str>) -> String {
    match server {
        Some(s) => format!("{} @ {}", md(client), md(s)),
        None => md(client),
    }
}

/// [`md`] with a different length limit (for sentences such as reasons).
pub fn md_n(s: &str, max_chars: usize) -> String {
    let s = truncate_chars(s, max_chars);
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev = '\0';
    let mut prev2 = '\0';
    for c in s.chars() {
        if is_hidden(c) {
            let code = match c {
                '\n' => "\\\\n".to_string(),
                '\r' => "\\\\r".to_string(),
                '\t' => "\\\\t".to_string(),
                _ => format!("\\\\u\\{{{:x}\\}}", c as u32),
            };
            out.push_str(&code);
        } else if MD_SPECIAL.contains(&c) {
            out.push('\\');
            out.push(c);
        } else if c == '@' {
            out.push('@');
            out.push(ZWJ);
        } else if c == '/' && prev == '/' && prev2 == ':' {
            out.push(ZWJ);
            out.push('/');
        } else {
            out.push(c);
        }
        prev2 = prev;
        prev = c;
    }
    out
}

/// Longest code block of a program's output ([`code_block`]), in characters
/// of its lines (before the fences).
pub const MAX_BLOCK_CHARS: usize = 2_000;
/// Most lines of a code block ([`code_block`]).
pub const MAX_BLOCK_LINES: usize = 30;
/// Longest line of a code block, in characters; longer lines end in `…`.
pub const MAX_BLOCK_LINE_CHARS: usize = 200;

/// Untrusted text that may quote a program's output (a failure reason:
/// `the program failed (exit status: 1)` then `stdout tail:` and its lines)
/// split into its first line and the rest, `None` when there is no more.
pub fn split_first_line(s: &str) -> (&str, Option<&str>) {
    match s.find(['\n', '\r']) {
        None => (s, None),
        Some(i) => {
            let rest = s[i..].trim_start_matches(['\n', '\r']);
            (&s[..i], (!rest.trim().is_empty()).then_some(rest))
        }
    }
}

/// Untrusted text (a program's output) as a fenced code block with its real
/// line breaks, inert and bounded:
/// - the fence is longer than any run of backticks in the text (at least
///   three), so no line of it can close the block, and its info string is
///   ours (`text`);
/// - at most [`MAX_BLOCK_LINES`] lines of at most [`MAX_BLOCK_LINE_CHARS`]
///   characters and [`MAX_BLOCK_CHARS`] in all: the first lines and the last
///   (where a program's error usually is), the middle left out with a line
///   that says how much;
/// - control characters other than tabs and line breaks, and bidi overrides,
///   are shown as visible `\u{..}`; carriage returns end lines;
/// - as in [`md`], `@` is followed by a zero-width joiner (no mention), and
///   every line is [`disarm`]ed, whatever the environment: the markdown may
///   be printed in a job's log later (`cat benchgate-report.md`).
///
/// Ends with a newline; put it at the start of a line, outside any list or
/// quote.
pub fn code_block(s: &str) -> String {
    let text = s.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<String> = text.trim_matches('\n').split('\n').map(code_line).collect();
    let body = bounded_lines(&lines).join("\n");
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}text\n{body}\n{fence}\n")
}

/// One line of a code block, made inert (see [`code_block`]).
fn code_line(line: &str) -> String {
    let line = truncate_chars(line, MAX_BLOCK_LINE_CHARS);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if c == '\t' {
            out.push(c);
        } else if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else if c == '@' {
            out.push('@');
            out.push(ZWJ);
        } else {
            out.push(c);
        }
    }
    disarm(&out).into_owned()
}

/// At most [`MAX_BLOCK_LINES`] lines and [`MAX_BLOCK_CHARS`] characters:
/// the first third of the room from the start, the rest from the end, and a
/// line saying how many were left out between.
fn bounded_lines(lines: &[String]) -> Vec<String> {
    let size = |l: &String| l.chars().count() + 1;
    if lines.len() <= MAX_BLOCK_LINES && lines.iter().map(size).sum::<usize>() <= MAX_BLOCK_CHARS {
        return lines.to_vec();
    }
    // Room for the note on what was left out.
    let (room_lines, room_chars) = (MAX_BLOCK_LINES - 1, MAX_BLOCK_CHARS - 40);
    let mut head = 0;
    let mut used = 0;
    while head < lines.len() && head < room_lines / 3 && used + size(&lines[head]) <= room_chars / 3
    {
        used += size(&lines[head]);
        head += 1;
    }
    let mut tail = lines.len();
    while tail > head
        && head + (lines.len() - tail) < room_lines
        && used + size(&lines[tail - 1]) <= room_chars
    {
        used += size(&lines[tail - 1]);
        tail -= 1;
    }
    let mut out = lines[..head].to_vec();
    if tail > head {
        out.push(format!("[… {} lines left out …]", tail - head));
    }
    out.extend_from_slice(&lines[tail..]);
    out
}

/// Escapes untrusted text for a quoted mermaid label (`"..."`): only letters,
/// digits and a few harmless punctuation marks survive; anything else (quotes,
/// brackets, `%` directives, `;`, `#` entities, newlines) becomes `_`.
pub fn mermaid(s: &str) -> String {
    truncate_chars(s, 40)
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, ' ' | '-' | '.' | '/' | '+' | ':' | '_' | '…') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A git sha for display: shortened to 12 characters when it is hex, otherwise
/// escaped like any other untrusted text.
pub fn sha(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit()) {
        format!("`{}`", &s[..s.len().min(12)])
    } else {
        md(s)
    }
}

// Workflow commands benchgate writes itself (annotations): their message and
// properties escaped as the runner reads them.

/// Escapes a workflow command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Annotation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Notice,
}

/// `::error title=..::message` (and `::warning`, `::notice`), escaped: the
/// message keeps its lines, every other control character of either is shown
/// escaped ([`super::untrusted::visible`]).
pub fn annotation(level: Level, title: &str, message: &str) -> String {
    use super::untrusted::visible;
    let cmd = match level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Notice => "notice",
    };
    format!(
        "::{cmd} title={}::{}",
        escape_property(&visible(title)),
        escape_data(&visible(message))
    )
}

/// A warning on stderr ([`super::untrusted::for_log`]), and under Actions
/// also as a warning annotation titled `title`, so it shows on the run's
/// summary page.
pub fn warn(title: &str, message: &str) {
    let line = format!("benchgate: warning: {message}");
    crate::stderrln!("{}", super::untrusted::for_log(&line));
    if actions_log() {
        crate::stderrln!("{}", annotation(Level::Warning, title, message));
    }
}

/// [`warn`] for every histogram of `run` that does not decode
/// (`results::histograms`); `what` names the file. Returns how many.
pub fn warn_refused_histograms(run: &crate::results::RunResults, what: &str) -> usize {
    let refused = run.refused_histograms();
    for r in &refused {
        warn(
            "benchgate: latency histogram refused",
            &format!(
                "{what}: {}; its merged percentiles are not shown",
                r.describe()
            ),
        );
    }
    refused.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_inert() {
        assert_eq!(md("a|b"), "a\\|b");
        assert_eq!(md("![x](http://e)"), "\\!\\[x\\]\\(http:/\u{200D}/e\\)");
        assert_eq!(md("@org/team"), "@\u{200D}org/team");
        assert_eq!(md("</details>"), "\\</details\\>");
        assert_eq!(md("a\nb`c"), "a\\\\nb\\`c");
        assert_eq!(md("get-22b"), "get-22b");
        assert_eq!(md("x\u{202E}y"), "x\\\\u\\{202e\\}y");
    }

    #[test]
    fn long_names_are_cut_on_char_boundaries() {
        let long = "é".repeat(500);
        let cut = md(&long);
        assert_eq!(cut.chars().count(), MAX_NAME_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn first_line_and_the_rest() {
        assert_eq!(split_first_line("one line"), ("one line", None));
        assert_eq!(
            split_first_line("failed (1)\r\nstdout tail:\nx"),
            ("failed (1)", Some("stdout tail:\nx"))
        );
        assert_eq!(split_first_line("failed\n\n  \n"), ("failed", None));
    }

    #[test]
    fn code_blocks_cannot_be_left_and_stay_bounded() {
        let hostile = "a\n```\n````` x\n</details>\n@org/team\n::add-mask::x\n  ::stop-commands::t\n##[error]y\r\u{1b}[2Jz";
        let block = code_block(hostile);
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines[0], "``````text", "{block}");
        assert_eq!(lines.last(), Some(&"``````"));
        assert!(lines[1..lines.len() - 1]
            .iter()
            .all(|l| !l.trim_start().starts_with("``````")));
        assert!(block.contains("\n</details>\n"), "{block}");
        assert!(block.contains("@\u{200D}org/team"));
        assert!(
            !block.lines().any(|l| l.trim_start().starts_with("::")),
            "{block}"
        );
        assert!(!block.contains("##["), "{block}");
        assert!(block.contains("\n\\u{1b}[2Jz\n"), "{block}");
        assert!(!block.contains('\r') && !block.contains('\u{1b}'));
        assert_eq!(code_block("plain"), "```text\nplain\n```\n");

        let long: String = (0..500)
            .map(|i| format!("line {i} {}\n", "x".repeat(i % 300)))
            .collect();
        let block = code_block(&long);
        let inner: Vec<&str> = block.lines().skip(1).collect();
        let inner = &inner[..inner.len() - 1];
        assert!(inner.len() <= MAX_BLOCK_LINES, "{}", inner.len());
        assert!(inner.iter().map(|l| l.chars().count() + 1).sum::<usize>() <= MAX_BLOCK_CHARS);
        assert!(inner[0].starts_with("line 0 "), "the start is kept");
        assert!(
            inner.last().unwrap().starts_with("line 499 "),
            "the end is kept"
        );
        assert!(
            inner.iter().any(|l| l.ends_with("lines left out …]")),
            "{block}"
        );
    }

    #[test]
    fn disarm_breaks_both_command_forms_on_every_line() {
        assert_eq!(disarm("::error title=x::boom"), ": :error title=x::boom");
        assert_eq!(disarm("  \t::add-mask::x"), "  \t: :add-mask::x");
        assert_eq!(disarm("ok ##[warning]x"), "ok ## [warning]x");
        assert_eq!(disarm("###[a]##[b]"), "### [a]## [b]");
        // Carriage returns end lines for the runner too; line ends are kept.
        assert_eq!(
            disarm("a\r\n::error::x\r ::warning::y\n##[group]z"),
            "a\r\n: :error::x\r : :warning::y\n## [group]z"
        );
        // Characters the runner's culture-aware match skips hide nothing.
        assert_eq!(disarm(":\u{200B}:error::x"), ": \u{200B}:error::x");
        assert_eq!(disarm("\u{0}\u{FEFF}::x::y"), "\u{0}\u{FEFF}: :x::y");
        assert_eq!(disarm("#\u{200D}#\u{7}[x]"), "#\u{200D}#\u{7} [x]");
    }

    #[test]
    fn disarm_leaves_other_text_as_it_is() {
        for text in [
            "get-22b / hyper: 1200 req/s, p50 80us",
            "a::b and x: :y",
            "name ::error::not at the start",
            "#[derive(Debug)] and # #[x]",
            ": x",
            "",
        ] {
            assert!(
                matches!(disarm(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn mermaid_labels_keep_only_safe_chars() {
        assert_eq!(mermaid("a\"b[c]%%{init}"), "a_b_c____init_");
        assert_eq!(mermaid("get-22b / hyper"), "get-22b / hyper");
    }

    #[test]
    fn sha_is_shortened_or_escaped() {
        assert_eq!(sha("0123456789abcdef0123"), "`0123456789ab`");
        assert_eq!(sha("not|hex"), "not\\|hex");
    }
}
