//! A pass over untrusted JSON that checks its limits before serde_json
//! builds anything from it.
//!
//! Deserializing first and checking after lets the file decide how much
//! memory the parse takes: three 80 MB strings, or 134 million tiny values
//! under a key the schema refuses only once they are all in memory. This
//! scanner walks the bytes token by token with one frame per open array or
//! object (no allocation per value) and refuses, naming where: nesting
//! deeper than [`Limits::depth`], more than [`Limits::values`] values, a key
//! or a string over its cap, a container with more items than its cap, and
//! a document whose items would take more than [`Limits::extra_bytes`] of
//! memory once deserialized. String contents are the file's own bytes, so
//! with that allowance a typed parse of an accepted file stays within twice
//! the file's size plus the allowance, whatever its shape.
//!
//! Caps differ by place (a histogram may be 2 MiB, a run id 4 KiB): a
//! [`Rule`] gives the cap of the values at a path.

use std::fmt;

/// The limits of one kind of document.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deepest nesting of arrays and objects.
    pub depth: usize,
    /// Most values (scalars, strings, arrays and objects) in all.
    pub values: u64,
    /// Longest object key, in bytes once unescaped.
    pub key_bytes: usize,
    /// Longest string where no rule says otherwise, in bytes once unescaped.
    pub text_bytes: usize,
    /// Most items of an array or members of an object where no rule says otherwise.
    pub items: usize,
    /// Memory an array item takes once deserialized, where no rule says
    /// otherwise: its slot in a `Vec`, twice for the slack of a growing one.
    pub item_bytes: u64,
    /// Memory an object member takes where no rule says otherwise: 0 for a
    /// struct's field (inside the struct), a map entry's size for a map
    /// ([`map_entry_bytes`]). A map's key is counted too (its bytes and
    /// [`STRING_BYTES`]), and its first entry counts five times: a map
    /// allocates a whole node for it.
    pub member_bytes: u64,
    /// Memory the deserialized items and strings may take beyond the bytes
    /// of the file itself.
    pub extra_bytes: u64,
    pub rules: &'static [Rule],
}

/// The cap of the values at `path`: object keys from the root, `*` for any
/// key or index, and a last `**` for anything below.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub path: &'static [&'static str],
    pub cap: Cap,
}

#[derive(Debug, Clone, Copy)]
pub enum Cap {
    /// A string here has at most this many bytes.
    Text(usize),
    /// An array (object) here has at most `max` items (members), called
    /// `unit` in errors, each taking `bytes` of memory once deserialized.
    Items {
        max: usize,
        unit: &'static str,
        bytes: u64,
    },
}

/// Memory a string takes beyond its bytes: the allocation's header and its
/// rounding (glibc's smallest chunk is 32 bytes).
pub const STRING_BYTES: u64 = 32;

/// Memory one entry of a `BTreeMap` with keys of `key` and values of `value`
/// bytes takes at most, its share of a node: a node holds 11 entries and 12
/// edges, and at least 5 entries except the root, so `n` entries take at
/// most `n + 4` of these (the scanner counts a map's first member five
/// times). The key's and the value's heap are counted where they are.
pub const fn map_entry_bytes(key: usize, value: usize) -> u64 {
    // Entries, edges, the parent pointer and lengths, the allocation's header.
    let node = 11 * (key + value) + 12 * 8 + 16 + 16;
    node.div_ceil(5) as u64
}

/// Memory a member or item takes where serde buffers a value before it
/// knows its type (an internally tagged enum, `#[serde(tag = ...)]`): a
/// key and a value of 32 bytes each, with a growing `Vec`'s slack.
pub const BUFFERED_BYTES: u64 = 2 * 2 * 32;

/// What a document broke; shown as `<where> has N <unit>, over the limit of M`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breach {
    /// Not JSON: serde_json's own message (line and column).
    Syntax(String),
    Depth {
        path: String,
        limit: usize,
    },
    Values {
        limit: u64,
    },
    /// A key too long: its first 32 characters.
    Key {
        start: String,
        bytes: usize,
        limit: usize,
    },
    Text {
        path: String,
        bytes: usize,
        limit: usize,
    },
    Items {
        path: String,
        n: usize,
        unit: &'static str,
        limit: usize,
    },
    /// The estimate of memory beyond the file's bytes, and its limit, in MiB.
    Memory {
        mib: u64,
        limit_mib: u64,
    },
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Breach::Syntax(e) => write!(f, "is not valid JSON: {e}"),
            Breach::Depth { path, limit } => {
                write!(f, "{path} nests more than {limit} levels deep, over the limit of {limit}")
            }
            Breach::Values { limit } => {
                write!(f, "the document has more than {limit} values, over the limit of {limit}")
            }
            Breach::Key { start, bytes, limit } => write!(
                f,
                "the key starting {start:?} has {bytes} bytes, over the limit of {limit}"
            ),
            Breach::Text { path, bytes, limit } => {
                write!(f, "{path} has {bytes} bytes, over the limit of {limit}")
            }
            Breach::Items { path, n, unit, limit } => {
                write!(f, "{path} has {n} {unit}, over the limit of {limit}")
            }
            Breach::Memory { mib, limit_mib } => write!(
                f,
                "its items would take about {mib} MiB of memory beyond the file's own size, over the limit of {limit_mib} MiB"
            ),
        }
    }
}

/// Checks `bytes` against `limits`; reads nothing into memory.
pub fn scan(bytes: &[u8], limits: &Limits) -> Result<(), Breach> {
    estimate(bytes, limits).map(|_| ())
}

/// [`scan`], and the memory the document's items and strings would take
/// once deserialized, beyond the bytes of the file itself: what it checks
/// against [`Limits::extra_bytes`].
pub fn estimate(bytes: &[u8], limits: &Limits) -> Result<u64, Breach> {
    let mut s = Scanner {
        b: bytes,
        pos: 0,
        limits,
        stack: Vec::new(),
        values: 0,
        extra: 0,
    };
    match s.document() {
        Err(Breach::Syntax(e)) if e.is_empty() => Err(Breach::Syntax(syntax_error(bytes, s.pos))),
        Err(e) => Err(e),
        Ok(()) if s.extra > limits.extra_bytes => Err(Breach::Memory {
            mib: s.extra.div_ceil(1 << 20),
            limit_mib: limits.extra_bytes >> 20,
        }),
        Ok(()) => Ok(s.extra),
    }
}

/// serde_json's message for a document the scanner found malformed (it
/// allocates nothing for [`serde::de::IgnoredAny`]), so errors read as
/// before; the scanner's position when serde_json accepts it after all.
fn syntax_error(bytes: &[u8], at: usize) -> String {
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Err(e) => e.to_string(),
        Ok(_) => format!("unexpected input at byte {at}"),
    }
}

/// One open array or object.
struct Frame {
    object: bool,
    /// Items or members so far.
    count: usize,
    /// The current member's key: its span between the quotes, and whether
    /// it has escapes.
    key: (usize, usize),
    escaped: bool,
    max: usize,
    unit: &'static str,
    bytes: u64,
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    limits: &'a Limits,
    stack: Vec<Frame>,
    values: u64,
    extra: u64,
}

/// A syntax error; [`scan`] replaces it with serde_json's message.
fn bad<T>() -> Result<T, Breach> {
    Err(Breach::Syntax(String::new()))
}

impl Scanner<'_> {
    /// The document: one value, then only whitespace. Iterative, so depth
    /// costs no stack.
    fn document(&mut self) -> Result<(), Breach> {
        'value: loop {
            self.ws();
            self.values += 1;
            if self.values > self.limits.values {
                return Err(Breach::Values {
                    limit: self.limits.values,
                });
            }
            match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    self.pos += 1;
                    if self.open(open == b'{')? {
                        continue 'value;
                    }
                }
                Some(b'"') => self.text()?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return bad(),
            }
            // After a value: the next item, or the end of containers.
            loop {
                self.ws();
                let Some(top) = self.stack.last() else {
                    return if self.pos == self.b.len() {
                        Ok(())
                    } else {
                        bad()
                    };
                };
                let close = if top.object { b'}' } else { b']' };
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.item()?;
                        continue 'value;
                    }
                    Some(c) if c == close => {
                        self.pos += 1;
                        self.close()?;
                    }
                    _ => return bad(),
                }
            }
        }
    }

    /// Opens an array or object (just past its bracket); `true` when a
    /// first item follows, `false` when it closed at once.
    fn open(&mut self, object: bool) -> Result<bool, Breach> {
        if self.stack.len() >= self.limits.depth {
            return Err(Breach::Depth {
                path: self.path(self.stack.len()),
                limit: self.limits.depth,
            });
        }
        let default = if object {
            self.limits.member_bytes
        } else {
            self.limits.item_bytes
        };
        let (max, unit, bytes) = self
            .rules()
            .find_map(|cap| match cap {
                Cap::Items { max, unit, bytes } => Some((max, unit, bytes)),
                Cap::Text(_) => None,
            })
            .unwrap_or((self.limits.items, "items", default));
        self.stack.push(Frame {
            object,
            count: 0,
            key: (0, 0),
            escaped: false,
            max,
            unit,
            bytes,
        });
        self.ws();
        if self.peek() == Some(if object { b'}' } else { b']' }) {
            self.pos += 1;
            self.stack.pop();
            return Ok(false);
        }
        self.item()?;
        Ok(true)
    }

    /// Starts the next item of the innermost container: counts it and, in
    /// an object, reads the member's key and colon.
    fn item(&mut self) -> Result<(), Breach> {
        let Some(top) = self.stack.last_mut() else {
            return bad();
        };
        top.count += 1;
        // A map's first entry brings its first node ([`map_entry_bytes`]).
        let map = top.object && top.bytes > 0;
        let first = if map && top.count == 1 { 4 } else { 0 };
        self.extra = self.extra.saturating_add((1 + first) * top.bytes);
        if !top.object {
            return Ok(());
        }
        self.ws();
        if self.peek() != Some(b'"') {
            return bad();
        }
        let start = self.pos + 1;
        let (bytes, escaped) = self.string()?;
        if bytes > self.limits.key_bytes {
            let shown = String::from_utf8_lossy(&self.b[start..(start + 128).min(self.pos)]);
            return Err(Breach::Key {
                start: shown.chars().take(32).collect(),
                bytes,
                limit: self.limits.key_bytes,
            });
        }
        if let Some(top) = self.stack.last_mut() {
            top.key = (start, self.pos - 1);
            top.escaped = escaped;
        }
        // A map's key is a string of its own; a struct's field name is not kept.
        if map {
            self.extra = self.extra.saturating_add(bytes as u64 + STRING_BYTES);
        }
        self.ws();
        if self.peek() != Some(b':') {
            return bad();
        }
        self.pos += 1;
        Ok(())
    }

    /// Closes the innermost container (just past its bracket), checking
    /// its count.
    fn close(&mut self) -> Result<(), Breach> {
        let depth = self.stack.len();
        let Some(top) = self.stack.last() else {
            return bad();
        };
        if top.count > top.max {
            return Err(Breach::Items {
                path: self.path(depth - 1),
                n: top.count,
                unit: top.unit,
                limit: top.max,
            });
        }
        self.stack.pop();
        Ok(())
    }

    /// A string value, against the cap of its place.
    fn text(&mut self) -> Result<(), Breach> {
        let cap = self
            .rules()
            .find_map(|cap| match cap {
                Cap::Text(n) => Some(n),
                Cap::Items { .. } => None,
            })
            .unwrap_or(self.limits.text_bytes);
        let (bytes, _) = self.string()?;
        if bytes > cap {
            return Err(Breach::Text {
                path: self.path(self.stack.len()),
                bytes,
                limit: cap,
            });
        }
        self.extra = self.extra.saturating_add(bytes as u64 + STRING_BYTES);
        Ok(())
    }

    /// A string from its opening quote to just past its closing one: its
    /// length once unescaped, and whether it had escapes.
    fn string(&mut self) -> Result<(usize, bool), Breach> {
        self.pos += 1;
        let (mut bytes, mut escaped) = (0usize, false);
        loop {
            let run = self.pos;
            while self.pos < self.b.len() && !matches!(self.b[self.pos], b'"' | b'\\' | 0..=0x1f) {
                self.pos += 1;
            }
            bytes += self.pos - run;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok((bytes, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    bytes += self.escape()?;
                }
                _ => return bad(),
            }
        }
    }

    /// One escape (at its backslash): the bytes it stands for. A `\u`
    /// high surrogate counts the 4 bytes of its pair, the low one none.
    fn escape(&mut self) -> Result<usize, Breach> {
        let e = self.b.get(self.pos + 1).copied();
        self.pos += 2;
        match e {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(1),
            Some(b'u') => {
                let hex = self.b.get(self.pos..self.pos + 4).unwrap_or_default();
                let code = std::str::from_utf8(hex)
                    .ok()
                    // Hex digits only: `from_str_radix` takes a sign too (`\u+0e9`).
                    .filter(|h| h.len() == 4 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|h| u32::from_str_radix(h, 16).ok());
                let Some(code) = code else { return bad() };
                self.pos += 4;
                Ok(match code {
                    0..=0x7f => 1,
                    0x80..=0x7ff => 2,
                    0xd800..=0xdbff => 4,
                    0xdc00..=0xdfff => 0,
                    _ => 3,
                })
            }
            _ => bad(),
        }
    }

    /// A number; out of `f64`'s range is an error, as serde_json has it.
    fn number(&mut self) -> Result<(), Breach> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return bad(),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.some_digits()?;
        }
        // Only a long number or one with an exponent can be out of range.
        let text = &self.b[start..self.pos];
        if text.len() > 15 || text.iter().any(|c| matches!(c, b'e' | b'E')) {
            let finite = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_finite);
            if !finite {
                let line = 1 + self.b[..self.pos].iter().filter(|&&c| c == b'\n').count();
                let column = self.pos
                    - self.b[..self.pos]
                        .iter()
                        .rposition(|&c| c == b'\n')
                        .map_or(0, |i| i + 1);
                return Err(Breach::Syntax(format!(
                    "number out of range at line {line} column {column}"
                )));
            }
        }
        Ok(())
    }

    fn some_digits(&mut self) -> Result<(), Breach> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return bad();
        }
        self.digits();
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Breach> {
        if !self.b[self.pos..].starts_with(word) {
            return bad();
        }
        self.pos += word.len();
        Ok(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// The caps of the rules whose path is where the scanner stands (the
    /// value after the innermost container's current key or index).
    fn rules(&self) -> impl Iterator<Item = Cap> + '_ {
        self.limits
            .rules
            .iter()
            .filter(|r| self.at(r.path))
            .map(|r| r.cap)
    }

    fn at(&self, path: &[&str]) -> bool {
        let mut frames = self.stack.iter();
        for want in path {
            if *want == "**" {
                return true;
            }
            match frames.next() {
                Some(f) if *want == "*" || self.key_is(f, want) => {}
                _ => return false,
            }
        }
        frames.next().is_none()
    }

    fn key_is(&self, f: &Frame, want: &str) -> bool {
        if !f.object {
            return false;
        }
        if !f.escaped {
            return &self.b[f.key.0..f.key.1] == want.as_bytes();
        }
        // Rare, and keys are short: unescape it to compare.
        serde_json::from_slice::<String>(&self.b[f.key.0 - 1..=f.key.1]).is_ok_and(|k| k == want)
    }

    /// Where the value inside the first `depth` frames is, as errors name
    /// it: `results[1].trials`; `the document` for the root.
    fn path(&self, depth: usize) -> String {
        let mut out = String::new();
        for f in &self.stack[..depth] {
            if f.object {
                if !out.is_empty() {
                    out.push('.');
                }
                let raw = &self.b[f.key.0..f.key.1];
                let key = match f.escaped {
                    true => serde_json::from_slice::<String>(&self.b[f.key.0 - 1..=f.key.1])
                        .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned()),
                    false => String::from_utf8_lossy(raw).into_owned(),
                };
                out.extend(key.chars().take(64));
            } else {
                out.push_str(&format!("[{}]", f.count.saturating_sub(1)));
            }
        }
        if out.is_empty() {
            out.push_str("the document");
        }
        out
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
