//! A results file as report mode reads a fork's artifact: its bytes parsed
//! and checked (`RunResults::parse_bytes`: UTF-8, the limits of
//! `files::json::scan` before anything is built, the typed parse), then
//! compared (with itself as the baseline, with none, side by side) under a
//! trusted gate and rendered the way the comment, the job summary and the
//! terminal show it, which decodes its histograms.
#![no_main]

use benchgate::compare::{compare, compare_side_by_side};
use benchgate::config::Suite;
use benchgate::measure::LatencyHistogram;
use benchgate::report::run_table::Width;
use benchgate::report::{json, markdown, terminal};
use benchgate::results::RunResults;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(run) = RunResults::parse_bytes(data, "fork/benchgate-results.json") else {
        return;
    };
    for cell in &run.results {
        for h in [&cell.histogram, &cell.histogram_uncorrected]
            .into_iter()
            .flatten()
        {
            let _ = LatencyHistogram::decode(h).map(|h| h.summary());
        }
    }
    // The gate comes from the trusted checkout, never from the artifact.
    let gate = Suite::default_suite().gate;
    let opts = markdown::MarkdownOptions::default();
    let mut comparisons = vec![compare(Some(&run), &run, &gate), compare(None, &run, &gate)];
    if let Some(first) = run.results.first() {
        comparisons.push(compare_side_by_side(&run, &first.client, &gate));
    }
    for cmp in &comparisons {
        let _ = markdown::render(cmp, &run, Some(&run), &opts);
        let _ = markdown::render_job_summary(cmp, &run, None, &opts);
        let _ = json::render(cmp);
    }
    for width in [Width::narrow(), Width::Wide] {
        let _ = terminal::render(&run, false, width);
        for cmp in &comparisons {
            let _ = terminal::render_comparison(cmp, false, width);
        }
    }
});
