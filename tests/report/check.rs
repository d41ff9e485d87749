//! Structural checks of rendered markdown: balanced `<details>` and code
//! fences, the only HTML being ours, table rows with the header's cell count.

/// `<details>` blocks and code fences open and close in order, never nested
/// wrongly, and all are closed at the end.
pub fn assert_balanced(md: &str) {
    let mut details = 0i32;
    let mut in_fence = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        details += line.matches("<details>").count() as i32;
        details -= line.matches("</details>").count() as i32;
        assert!(details >= 0, "</details> without <details> at: {line}");
    }
    assert!(!in_fence, "unclosed code fence");
    assert_eq!(details, 0, "unclosed <details>");
}

/// Every `<` outside code fences starts one of our tags; every table row has
/// as many unescaped `|` as its header row.
pub fn assert_inert(md: &str) {
    let mut in_fence = false;
    let mut pipes: Option<usize> = None;
    for line in md.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            assert!(!line.contains("%%"), "mermaid directive in: {line}");
            if line.trim_start().starts_with("x-axis") {
                assert_eq!(line.matches('"').count() % 2, 0, "{line}");
                assert_eq!(line.matches('[').count(), 1, "{line}");
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
