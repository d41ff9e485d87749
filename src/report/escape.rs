//! Escaping of untrusted text (names from the config or a results file) for the
//! markdown renderers: GitHub-flavoured markdown text and table cells, and
//! mermaid chart labels.
//!
//! Rules (issue 4, point 7):
//! - markdown-significant ASCII punctuation is backslash-escaped (CommonMark
//!   §2.4: any ASCII punctuation may be escaped), which disarms links, images,
//!   emphasis, code spans, headings, raw HTML (`<`), tables (`|`) and math (`$`);
//! - `@` is followed by a zero-width joiner, so `@org/team` mentions nobody,
//!   and `://` gets one too, so a URL in a name is not auto-linked;
//! - control characters (newline included) and bidi overrides are shown as
//!   visible `\u{..}` escapes, so a name cannot start a new line or reorder text;
//! - overly long names are cut (on a character boundary) with an ellipsis.

/// Longest name shown, in characters; longer names end in `…`.
pub const MAX_NAME_CHARS: usize = 120;

/// Zero-width joiner: breaks `@mention` and URL auto-linking, invisible to readers.
const ZWJ: char = '\u{200D}';

/// Characters backslash-escaped in markdown text and table cells.
const MD_SPECIAL: &[char] = &[
    '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '!', '|', '<', '>', '~', '$', '&',
    '"', '\'', '=',
];

/// Whether a character must be shown as a visible escape instead of itself.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
        || c == '\u{2028}'
        || c == '\u{2029}'
}

/// Cuts `s` to at most `max` characters, ending with `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.chars().count() <= max {
        return s.into();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out.into()
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
