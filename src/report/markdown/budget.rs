//! Fitting a markdown document into a size limit without breaking it.
//!
//! The document is built from whole blocks: a mandatory head and footer (plain
//! text and lists, no fences or HTML), one table per scenario whose rows carry a
//! global importance, and self-contained sections (each `<details>` closed,
//! each code fence closed inside it). Fitting only ever removes whole blocks or
//! whole rows, so the result stays balanced and no character is split:
//! 1. everything, if it fits;
//! 2. drop sections, least important first, until it fits;
//! 3. keep the `k` most important table rows, the largest `k` that fits
//!    (binary search; scenarios left without rows are omitted whole);
//! 4. last resort (a limit smaller than the head): whole lines of the head.
//!
//! Whenever something is left out, a note says what and where to find it.

use std::fmt::Write as _;

/// How a limit is counted.
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    /// Unicode scalar values (GitHub's comment limit).
    Chars(usize),
    /// UTF-8 bytes (the job summary limit).
    Bytes(usize),
}

impl Measure {
    fn limit(self) -> usize {
        match self {
            Measure::Chars(n) | Measure::Bytes(n) => n,
        }
    }

    fn size(self, s: &str) -> usize {
        match self {
            Measure::Chars(_) => s.chars().count(),
            Measure::Bytes(_) => s.len(),
        }
    }

    fn fits(self, s: &str) -> bool {
        self.size(s) <= self.limit()
    }
}

/// One scenario's table.
pub struct Table {
    /// Heading and blank line.
    pub heading: String,
    /// Header and delimiter rows.
    pub header: String,
    /// `(importance, line)`: importance 0 is the most important row overall.
    pub rows: Vec<(usize, String)>,
}

/// A droppable, self-contained section.
pub struct Section {
    /// Drop order: lower is dropped first.
    pub drop: u8,
    pub name: &'static str,
    pub text: String,
}

/// A document in blocks.
pub struct Doc {
    pub head: String,
    pub tables: Vec<Table>,
    pub total_rows: usize,
    pub sections: Vec<Section>,
    pub footer: String,
}

/// Sizes of the blocks, measured once, so that fitting adds numbers instead of
/// rendering candidate documents.
struct Sizes {
    fixed: usize,
    /// Per table: heading + header + closing newline, and each row's
    /// `(importance, size)`.
    tables: Vec<(usize, Vec<(usize, usize)>)>,
    sections: Vec<usize>,
}

impl Doc {
    fn sizes(&self, m: Measure) -> Sizes {
        Sizes {
            fixed: m.size(&self.head) + m.size(&self.footer),
            tables: self
                .tables
                .iter()
                .map(|t| {
                    let rows = t.rows.iter().map(|(i, l)| (*i, m.size(l))).collect();
                    (m.size(&t.heading) + m.size(&t.header) + 1, rows)
                })
                .collect(),
            sections: self.sections.iter().map(|s| m.size(&s.text)).collect(),
        }
    }

    /// The note on what was left out (empty when nothing was).
    fn note(
        &self,
        keep_sections: &[bool],
        omitted_rows: usize,
        hidden: usize,
        hint: &str,
    ) -> String {
        let dropped: Vec<&str> = self
            .sections
            .iter()
            .zip(keep_sections)
            .filter(|(_, keep)| !**keep)
            .map(|(s, _)| s.name)
            .collect();
        if omitted_rows == 0 && dropped.is_empty() {
            return String::new();
        }
        let mut out = String::from("> ✂️ Left out to fit the size limit:");
        if !dropped.is_empty() {
            let _ = write!(out, " details ({})", dropped.join(", "));
            if omitted_rows > 0 {
                out.push(';');
            }
        }
        if omitted_rows > 0 {
            let _ = write!(
                out,
                " … {omitted_rows} rows omitted ({hidden} scenarios not shown)"
            );
        }
        let _ = writeln!(out, "; {hint}.\n");
        out
    }

    /// `(omitted rows, hidden tables)` when keeping the `keep_rows` most important rows.
    fn omitted(&self, keep_rows: usize) -> (usize, usize) {
        let hidden = self
            .tables
            .iter()
            .filter(|t| !t.rows.is_empty() && t.rows.iter().all(|(i, _)| *i >= keep_rows))
            .count();
        (self.total_rows - keep_rows.min(self.total_rows), hidden)
    }

    /// The size [`Doc::render`] would produce, from measured blocks.
    fn size(&self, z: &Sizes, m: Measure, keep: &[bool], keep_rows: usize, hint: &str) -> usize {
        let mut total = z.fixed;
        let mut hidden = 0;
        for (fixed, rows) in &z.tables {
            let kept: usize = rows
                .iter()
                .filter(|(i, _)| *i < keep_rows)
                .map(|(_, s)| s)
                .sum();
            if kept == 0 && !rows.is_empty() {
                hidden += 1;
            } else {
                total += fixed + kept;
            }
        }
        total += z
            .sections
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(s, _)| s)
            .sum::<usize>();
        let omitted = self.total_rows - keep_rows.min(self.total_rows);
        total + m.size(&self.note(keep, omitted, hidden, hint))
    }

    /// Renders with the given sections and the `keep_rows` most important rows.
    fn render(&self, keep_sections: &[bool], keep_rows: usize, hint: &str) -> String {
        let mut out = self.head.clone();
        for t in &self.tables {
            let rows: Vec<&str> = t
                .rows
                .iter()
                .filter(|(imp, _)| *imp < keep_rows)
                .map(|(_, l)| l.as_str())
                .collect();
            if rows.is_empty() && !t.rows.is_empty() {
                continue;
            }
            out.push_str(&t.heading);
            out.push_str(&t.header);
            for r in rows {
                out.push_str(r);
            }
            out.push('\n');
        }
        for (s, keep) in self.sections.iter().zip(keep_sections) {
            if *keep {
                out.push_str(&s.text);
            }
        }
        let (omitted, hidden) = self.omitted(keep_rows);
        out.push_str(&self.note(keep_sections, omitted, hidden, hint));
        out.push_str(&self.footer);
        out
    }

    /// Renders the largest document that fits `measure` (see the module doc).
    pub fn fit(&self, measure: Measure, hint: &str) -> String {
        let z = self.sizes(measure);
        let limit = measure.limit();
        let fits = |keep: &[bool], k: usize| self.size(&z, measure, keep, k, hint) <= limit;
        let mut keep = vec![true; self.sections.len()];
        let mut order: Vec<usize> = (0..self.sections.len()).collect();
        order.sort_by_key(|&i| self.sections[i].drop);
        let mut order = order.into_iter();
        while !fits(&keep, self.total_rows) {
            match order.next() {
                Some(i) => keep[i] = false,
                None => break,
            }
        }
        let mut k = self.total_rows;
        if !fits(&keep, k) {
            if !fits(&keep, 0) {
                return self.last_resort(measure, hint);
            }
            // Largest k such that the k most important rows fit.
            let (mut lo, mut hi) = (0usize, self.total_rows);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if fits(&keep, mid) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            k = lo;
        }
        let out = self.render(&keep, k, hint);
        debug_assert_eq!(measure.size(&out), self.size(&z, measure, &keep, k, hint));
        out
    }

    /// Whole lines of the head, then the note, within the limit.
    fn last_resort(&self, measure: Measure, hint: &str) -> String {
        let note = format!("\n> ✂️ Truncated to fit the size limit; {hint}.\n");
        let room = measure.limit().saturating_sub(measure.size(&note));
        let mut out = String::new();
        for line in self.head.split_inclusive('\n') {
            if measure.size(&out) + measure.size(line) > room {
                break;
            }
            out.push_str(line);
        }
        out.push_str(&note);
        if measure.fits(&out) {
            out
        } else {
            // A limit smaller than the note itself: whole characters of it.
            let mut s = String::new();
            for c in note.chars() {
                let mut next = s.clone();
                next.push(c);
                if !measure.fits(&next) {
                    break;
                }
                s = next;
            }
            s
        }
    }
}
