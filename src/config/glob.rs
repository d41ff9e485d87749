//! The names a `[[gate.override]]` applies to: a scenario name, or a glob on
//! it with `*` (any run of characters, none included) and `?` (one
//! character), so a JMH team can set a threshold per package or class
//! (`scenario = "org.openjdk.*"`) without listing every benchmark.
//!
//! No other glob syntax: `[`, `]`, `{`, `}` and `\` are refused at load, so a
//! pattern written for a shell never silently means something else here. A
//! pattern that matches no scenario of the config is fine (the benchmarks of
//! a JMH file are known only when it is read).

/// Whether `text` is a pattern (holds `*` or `?`), not a plain name.
pub fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?'])
}

/// Why `pattern` cannot be an override's scenario, if it cannot: empty, or
/// glob syntax this matcher does not have.
pub fn problem(pattern: &str) -> Option<String> {
    if pattern.trim().is_empty() {
        return Some("the scenario of an override cannot be empty".into());
    }
    if let Some(c) = pattern.chars().find(|c| "[]{}\\".contains(*c)) {
        return Some(format!(
            "{pattern:?} holds {c:?}: a scenario pattern knows only * (any characters) and ? (one character)"
        ));
    }
    if pattern.chars().any(char::is_control) {
        return Some(format!("{pattern:?} holds a control character"));
    }
    None
}

/// Whether `name` matches `pattern` (`*`, `?`; a pattern without them matches
/// only itself). Linear backtracking over the last `*`: O(len x len) at worst.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0, 0);
    // The last `*` seen and the name position it is tried from.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                // Let the last `*` take one more character.
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_and_question_mark_match_as_in_a_shell() {
        let cases = [
            ("org.openjdk.*", "org.openjdk.jmh.Bench.get", true),
            ("org.openjdk.*", "org.openjdk.", true),
            ("org.openjdk.*", "org.openjdk", false),
            ("org.openjdk.*", "com.example.Bench", false),
            ("*.get", "org.example.Bench.get", true),
            ("*.get", "org.example.Bench.get (size=10)", false),
            ("*.get*", "org.example.Bench.get (size=10)", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("*", "", true),
            ("get-22b", "get-22b", true),
            ("get-22b", "get-22", false),
            ("é?", "éé", true),
        ];
        for (p, n, want) in cases {
            assert_eq!(matches(p, n), want, "{p:?} on {n:?}");
        }
    }

    #[test]
    fn empty_and_other_glob_syntax_are_refused() {
        assert!(problem("").is_some());
        assert!(problem("  ").is_some());
        assert!(problem("org.[ab]*").unwrap().contains("'['"));
        assert!(problem("{a,b}").is_some());
        assert!(problem("a\\*").is_some());
        assert_eq!(problem("org.openjdk.*"), None);
        assert!(is_pattern("a?") && is_pattern("*") && !is_pattern("get-22b"));
    }
}
