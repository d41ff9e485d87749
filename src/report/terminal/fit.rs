//! A terminal table in its width (issue 54, point 4): within 120 columns,
//! or the terminal's width when wider ([`Width`]); `--wide` keeps every
//! column and every name whole. A table past its width gives way in steps,
//! each only while it is still too wide: the long headers' short forms,
//! then the columns a reader needs least (in their order), then long names
//! cut with `…` (never below a few characters: a name of a hundred
//! characters beside a narrow terminal may still overflow it).

use crate::report::run_table::Width;

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub header: &'static str,
    /// The header when the table is too wide (the same when it has none).
    pub short: &'static str,
    /// Figures are right-aligned, names left.
    pub right: bool,
    pub give: Give,
}

impl Column {
    pub const fn new(header: &'static str, right: bool, give: Give) -> Column {
        Column {
            header,
            short: header,
            right,
            give,
        }
    }
}

/// What a column gives when its table is too wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Give {
    /// Nothing: shown whole.
    Keep,
    /// Left out, lower ranks first.
    Drop(u8),
    /// Its cells cut to this many characters at the least.
    Cut(usize),
}

/// The columns shown and their widths.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// Indices into the table's columns, in order.
    pub shown: Vec<usize>,
    pub headers: Vec<&'static str>,
    pub widths: Vec<usize>,
    right: Vec<bool>,
    /// Whether a column was left out or a name cut (the legend says how to
    /// see the whole table).
    pub gave: bool,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Fits `rows` (a cell per column, in order) of `columns` into `width`.
pub fn fit(columns: &[Column], rows: &[Vec<String>], width: Width) -> Fitted {
    let natural = |i: usize, header: &str| {
        rows.iter()
            .map(|r| chars(&r[i]))
            .fold(chars(header), usize::max)
    };
    let mut shown: Vec<usize> = (0..columns.len()).collect();
    let mut headers: Vec<&'static str> = columns.iter().map(|c| c.header).collect();
    let mut widths: Vec<usize> = (0..columns.len())
        .map(|i| natural(i, columns[i].header))
        .collect();
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    let mut gave = false;
    if let Width::Narrow(limit) = width {
        if total(&widths) > limit {
            headers = columns.iter().map(|c| c.short).collect();
            widths = (0..columns.len())
                .map(|i| natural(i, columns[i].short))
                .collect();
        }
        let mut drops: Vec<(u8, usize)> = columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c.give {
                Give::Drop(rank) => Some((rank, i)),
                _ => None,
            })
            .collect();
        drops.sort_unstable();
        for (_, i) in drops {
            if total(&widths) <= limit {
                break;
            }
            let at = shown.iter().position(|s| *s == i).expect("shown");
            shown.remove(at);
            headers.remove(at);
            widths.remove(at);
            gave = true;
        }
        while total(&widths) > limit {
            // The widest column that may still be cut loses a character.
            let widest = shown
                .iter()
                .enumerate()
                .filter_map(|(at, i)| match columns[*i].give {
                    Give::Cut(min) if widths[at] > min.max(chars(headers[at])) => Some(at),
                    _ => None,
                })
                .max_by_key(|at| (widths[*at], usize::MAX - at));
            let Some(at) = widest else {
                break;
            };
            widths[at] -= 1;
            gave = true;
        }
    }
    Fitted {
        right: shown.iter().map(|i| columns[*i].right).collect(),
        shown,
        headers,
        widths,
        gave,
    }
}

impl Fitted {
    /// The header line.
    pub fn header(&self) -> String {
        let cells: Vec<String> = self.headers.iter().map(|h| h.to_string()).collect();
        self.join(&cells)
    }

    /// A row of all the table's cells: the shown ones, aligned, cut to
    /// their width.
    pub fn row(&self, cells: &[String]) -> String {
        let shown: Vec<String> = self.shown.iter().map(|i| cells[*i].clone()).collect();
        self.join(&shown)
    }

    fn join(&self, cells: &[String]) -> String {
        let mut s = String::new();
        for (at, v) in cells.iter().enumerate() {
            let w = self.widths[at];
            let v = match chars(v) > w {
                true => format!("{}…", v.chars().take(w - 1).collect::<String>()),
                false => v.clone(),
            };
            let pad = " ".repeat(w - chars(&v));
            match self.right[at] {
                true => s.push_str(&format!("{pad}{v}")),
                false => s.push_str(&format!("{v}{pad}")),
            }
            if at + 1 < cells.len() {
                s.push_str("  ");
            }
        }
        s.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols() -> [Column; 4] {
        [
            Column::new("name", false, Give::Cut(6)),
            Column {
                short: "base",
                ..Column::new("baseline median", true, Give::Drop(2))
            },
            Column::new("mde", true, Give::Drop(1)),
            Column::new("verdict", false, Give::Keep),
        ]
    }

    fn rows() -> Vec<Vec<String>> {
        vec![["a-long-scenario-name", "12.3k", "±3%", "regressed"]
            .map(String::from)
            .to_vec()]
    }

    #[test]
    fn a_table_gives_way_in_steps_only_while_too_wide() {
        let whole = fit(&cols(), &rows(), Width::Wide);
        assert!(!whole.gave);
        let line = whole.row(&rows()[0]);
        assert_eq!(
            line,
            "a-long-scenario-name            12.3k  ±3%  regressed"
        );
        assert_eq!(
            whole.header(),
            "name                  baseline median  mde  verdict"
        );
        // Short headers are enough.
        let short = fit(&cols(), &rows(), Width::Narrow(44));
        assert_eq!(short.header(), "name                   base  mde  verdict");
        assert!(!short.gave);
        // Then the MDE goes, then the median.
        let f = fit(&cols(), &rows(), Width::Narrow(38));
        assert_eq!(f.shown, [0, 1, 3]);
        assert!(f.gave);
        let f = fit(&cols(), &rows(), Width::Narrow(31));
        assert_eq!(f.row(&rows()[0]), "a-long-scenario-name  regressed");
        // Then the name is cut, to its least.
        let f = fit(&cols(), &rows(), Width::Narrow(20));
        assert_eq!(f.row(&rows()[0]), "a-long-s…  regressed");
        let f = fit(&cols(), &rows(), Width::Narrow(5));
        assert_eq!(f.row(&rows()[0]), "a-lon…  regressed", "never below 6");
    }
}
