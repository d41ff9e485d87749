//! Reading what `benchgate action` wrote to `GITHUB_OUTPUT`.

/// The value of output `name` in a `GITHUB_OUTPUT` file's text. Checks on the
/// way that every entry is in heredoc form with its own random delimiter.
pub fn output(text: &str, name: &str) -> Option<String> {
    let mut lines = text.lines();
    let mut delimiters: Vec<String> = Vec::new();
    let mut found = None;
    while let Some(line) = lines.next() {
        let (key, delim) = line
            .split_once("<<")
            .unwrap_or_else(|| panic!("GITHUB_OUTPUT line {line:?} is not `name<<DELIMITER`"));
        assert!(
            delim.starts_with("ghadelimiter_") && delim.len() >= 40,
            "delimiter {delim:?} is not random enough"
        );
        assert!(
            !delimiters.iter().any(|d| d == delim),
            "delimiter {delim} reused"
        );
        delimiters.push(delim.to_string());
        let mut value = Vec::new();
        let mut closed = false;
        for l in lines.by_ref() {
            if l == delim {
                closed = true;
                break;
            }
            value.push(l);
        }
        assert!(closed, "output {key} is not closed by its delimiter");
        if key == name {
            found = Some(value.join("\n"));
        }
    }
    found
}
