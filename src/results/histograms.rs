//! Latency histograms a results file carries but that do not decode (issue
//! 30, point 2). A results file is untrusted input, and a crafted or
//! corrupt histogram is bounded when decoded (`measure::histogram`), but
//! it must not pass silently either: `compare` and report mode name every
//! refused one on stderr (and as a warning annotation under Actions),
//! `merge` refuses a shard that carries one, and the baseline store never
//! stores one.

use super::RunResults;
use crate::measure::LatencyHistogram;

/// One histogram of a cell that does not decode.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// `scenario / client[ @ server]`.
    pub cell: String,
    /// `histogram` or `histogram_uncorrected`.
    pub field: &'static str,
    /// Why it was refused.
    pub reason: String,
}

impl Refused {
    /// One line naming the cell, the field and the reason.
    pub fn describe(&self) -> String {
        format!(
            "the latency histogram of {} ({}) was refused: {}",
            self.cell, self.field, self.reason
        )
    }
}

impl RunResults {
    /// Every histogram of every cell that does not decode, in cell order.
    pub fn refused_histograms(&self) -> Vec<Refused> {
        let mut out = Vec::new();
        for c in &self.results {
            for (field, text) in [
                ("histogram", &c.histogram),
                ("histogram_uncorrected", &c.histogram_uncorrected),
            ] {
                let Some(text) = text else { continue };
                if let Err(reason) = LatencyHistogram::decode(text) {
                    out.push(Refused {
                        cell: format!("{} / {}", c.scenario, c.label()),
                        field,
                        reason,
                    });
                }
            }
        }
        out
    }

    /// An error naming the first refused histogram (and how many there
    /// are), for the paths that must not pass one on: `merge` and the
    /// baseline store. `what` names the file.
    pub fn refuse_bad_histograms(&self, what: &str) -> anyhow::Result<()> {
        let refused = self.refused_histograms();
        let Some(first) = refused.first() else {
            return Ok(());
        };
        let more = match refused.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        anyhow::bail!(
            "{what}: {}{more}; the file is corrupt or was not written by benchgate: re-run the benchmark to regenerate it",
            first.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::synthetic;

    #[test]
    fn a_histogram_that_does_not_decode_is_named() {
        let mut r = synthetic::run(crate::config::Suite::default_suite(), 2, |_, _, _| {
            Some(synthetic::metrics(100.0, 50.0, 10.0))
        });
        let mut h = LatencyHistogram::new();
        h.record_us(100);
        r.results[0].histogram = Some(h.encode());
        assert!(r.refused_histograms().is_empty());
        assert!(r.refuse_bad_histograms("f.json").is_ok());
        r.results[1].histogram = Some("AAAA".into());
        r.results[2].histogram_uncorrected = Some("not base64 !!".into());
        let refused = r.refused_histograms();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert_eq!(refused[0].field, "histogram");
        assert_eq!(refused[1].field, "histogram_uncorrected");
        let e = r.refuse_bad_histograms("f.json").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "f.json: the latency histogram of {} / {} (histogram) was refused: ",
                r.results[1].scenario, r.results[1].client
            )),
            "{e}"
        );
        assert!(e.contains("(and 1 more)"), "{e}");
    }
}
