//! The `date` header's value, formatted once per second (as hyper does).

use std::time::{SystemTime, UNIX_EPOCH};

/// `Wed, 02 Dec 2026 01:37:44 GMT`: always 29 bytes.
pub(super) struct DateCache {
    second: u64,
    text: String,
}

impl DateCache {
    pub(super) fn new() -> Self {
        let mut d = DateCache {
            second: u64::MAX,
            text: String::new(),
        };
        d.refresh();
        d
    }

    /// Re-formats the date when the second changed (one clock read).
    pub(super) fn refresh(&mut self) {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if second != self.second {
            self.second = second;
            self.text = httpdate::fmt_http_date(now);
        }
    }

    pub(super) fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_is_an_imf_fixdate() {
        let d = DateCache::new();
        let text = std::str::from_utf8(d.as_bytes()).unwrap();
        assert_eq!(text.len(), 29, "{text}");
        assert!(text.ends_with(" GMT"), "{text}");
        assert!(httpdate::parse_http_date(text).is_ok(), "{text}");
    }
}
