//! Structural checks of rendered markdown: balanced `<details>` and code
//! fences, the only HTML being ours, table rows with the header's cell count.

/// Code fences as CommonMark reads them (at a line's start, as ours are): a
/// line of three or more backticks opens a block, which only a line of at
/// least as many backticks and nothing else closes.
#[derive(Default)]
pub struct Fences {
    /// The open fence's length and info string.
    open: Option<(usize, String)>,
}

impl Fences {
    /// Feeds one line; `true` when the line is a fence or inside a block.
    pub fn code(&mut self, line: &str) -> bool {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match &self.open {
            Some((n, _)) => {
                if ticks >= *n && line[ticks..].trim().is_empty() {
                    self.open = None;
                }
                true
            }
            None if ticks >= 3 => {
                self.open = Some((ticks, line[ticks..].trim().to_string()));
                true
            }
            None => false,
        }
    }

    /// The open block's info string (`mermaid`, `text`), if a block is open.
    pub fn info(&self) -> Option<&str> {
        self.open.as_ref().map(|(_, info)| info.as_str())
    }
}

/// `<details>` blocks and code fences open and close in order, never nested
/// wrongly, and all are closed at the end.
pub fn assert_balanced(md: &str) {
    let mut details = 0i32;
    let mut fences = Fences::default();
    for line in md.lines() {
        if fences.code(line) {
            continue;
        }
        details += line.matches("<details>").count() as i32;
        details -= line.matches("</details>").count() as i32;
        assert!(details >= 0, "</details> without <details> at: {line}");
    }
    assert!(fences.info().is_none(), "unclosed code fence");
    assert_eq!(details, 0, "unclosed <details>");
}

/// Every `<` outside code fences starts one of our tags; every table row has
/// as many unescaped `|` as its header row.
pub fn assert_inert(md: &str) {
    let mut fences = Fences::default();
    let mut pipes: Option<usize> = None;
    for line in md.lines() {
        let was_open = fences.info().is_some();
        if fences.code(line) {
            pipes = None;
            match (was_open, fences.info()) {
                // Opened: only our own info strings.
                (false, info) => assert!(
                    matches!(info, Some("mermaid" | "text")),
                    "fence info in: {line}"
                ),
                (true, None) => {}
                (true, Some("mermaid")) => {
                    assert!(!line.contains("%%"), "mermaid directive in: {line}");
                    if line.trim_start().starts_with("x-axis") {
                        assert_eq!(line.matches('"').count() % 2, 0, "{line}");
                        assert_eq!(line.matches('[').count(), 1, "{line}");
                    }
                }
                // A program's output: no line of it is a workflow command
                // or a mention.
                (true, Some(_)) => {
                    assert!(!line.trim_start().starts_with("::"), "command in: {line}");
                    assert!(!line.contains("##["), "legacy command in: {line}");
                    assert!(
                        line.match_indices('@')
                            .all(|(i, _)| line[i + 1..].starts_with('\u{200D}')),
                        "bare @ in: {line}"
                    );
                }
            }
            continue;
        }
        let stripped = line
            .replace("<details>", "")
            .replace("</details>", "")
            .replace("<summary>", "")
            .replace("</summary>", "");
        for (i, _) in stripped.match_indices('<') {
            assert!(
                i > 0 && stripped.as_bytes()[i - 1] == b'\\',
                "raw '<' in: {line}"
            );
        }
        for bad in ["](", "!["] {
            assert!(!stripped.contains(bad), "{bad} in: {line}");
        }
        let at = stripped
            .match_indices('@')
            .all(|(i, _)| stripped[i + 1..].starts_with('\u{200D}'));
        assert!(at, "bare @ in: {line}");
        if line.starts_with('|') {
            let n = unescaped_pipes(line);
            match pipes {
                None => pipes = Some(n),
                Some(p) => assert_eq!(n, p, "row has another cell count: {line}"),
            }
        } else {
            pipes = None;
        }
    }
}

fn unescaped_pipes(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
        .count()
}
