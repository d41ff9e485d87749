//! The hidden marker at the top of a sticky comment:
//! `<!-- benchgate:suite=<escaped suite> head=<sha> run=<run id> -->`.
//! The suite name and run id are percent-escaped (only `[A-Za-z0-9._~-]` stay), so
//! neither can end the HTML comment or fake another field.

use super::encode_component;

const PREFIX: &str = "<!-- benchgate:";
const SUFFIX: &str = " -->";

/// What a marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub suite: String,
    pub head: String,
    pub run: String,
}

impl Marker {
    /// The marker line (no newline).
    pub fn render(&self) -> String {
        format!(
            "{PREFIX}suite={} head={} run={}{SUFFIX}",
            encode_component(&self.suite),
            encode_component(&self.head),
            encode_component(&self.run)
        )
    }

    /// The marker on the first line of `body`, and the rest of the body after
    /// that line; `None` when the body does not start with a marker.
    pub fn parse(body: &str) -> Option<(Marker, &str)> {
        let (first, rest) = match body.split_once('\n') {
            Some((first, rest)) => (first.trim_end_matches('\r'), rest),
            None => (body, ""),
        };
        let inner = first.trim().strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
        let mut fields = inner.split(' ');
        let mut field = |name: &str| {
            fields
                .next()?
                .strip_prefix(name)?
                .strip_prefix('=')
                .and_then(decode_component)
        };
        let marker = Marker {
            suite: field("suite")?,
            head: field("head")?,
            run: field("run")?,
        };
        fields.next().is_none().then_some((marker, rest))
    }

    /// Whether this marker's run is newer than `other`'s: run ids compared as
    /// numbers (GitHub's run ids grow); `false` when either is not a number.
    pub fn run_is_newer_than(&self, other: &Marker) -> bool {
        match (self.run.parse::<u64>(), other.run.parse::<u64>()) {
            (Ok(a), Ok(b)) => a > b,
            _ => false,
        }
    }
}

/// Full comment text: marker line, then `body`.
pub fn compose(marker: &Marker, body: &str) -> String {
    format!("{}\n{}", marker.render(), body)
}

fn decode_component(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') => {
                out.push(b);
                i += 1;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(suite: &str, run: &str) -> Marker {
        Marker {
            suite: suite.into(),
            head: "0123abcd".into(),
            run: run.into(),
        }
    }

    #[test]
    fn round_trips_awkward_suite_names() {
        for suite in ["default", "http clients --> x", "a=b run=9", "ünï/cödé"] {
            let m = marker(suite, "42");
            let text = compose(&m, "| table |\nmore");
            assert!(!m.render()[4..m.render().len() - 3].contains("-->"));
            let (parsed, rest) = Marker::parse(&text).unwrap();
            assert_eq!(parsed, m);
            assert_eq!(rest, "| table |\nmore");
        }
    }

    #[test]
    fn marker_only_counts_on_the_first_line() {
        let text = format!("hello\n{}", marker("s", "1").render());
        assert!(Marker::parse(&text).is_none());
        assert!(Marker::parse("<!-- benchgate:suite=s head=h -->").is_none());
        assert!(Marker::parse("<!-- benchgate:suite=s head=h run=1 extra=2 -->").is_none());
    }

    #[test]
    fn run_ids_compare_as_numbers() {
        assert!(marker("s", "100").run_is_newer_than(&marker("s", "99")));
        assert!(!marker("s", "99").run_is_newer_than(&marker("s", "100")));
        assert!(!marker("s", "x").run_is_newer_than(&marker("s", "1")));
    }
}
