//! `[gate] paired_test` end to end through `benchgate compare --side-by-side`
//! on a synthetic results file (no benchmark runs): per-round CPU ratios near
//! +10% with a few rounds far out on both sides (single trials jumping in a
//! noisy stretch). The sign test's interval skips the far rounds and fails the
//! gate; the signed-rank test's Hodges-Lehmann interval spreads with them.

use crate::common;

use std::process::Command;

use crate::common::synthetic;
use benchgate::compare::{Comparison, Verdict};
use benchgate::config::gate::{PairedTest, Threshold};
use benchgate::config::Suite;
use common::exe;

/// Per-round ln(reqwest / hyper) of cpu_us_per_request: 12 rounds between
/// +8% and +12%, 8 far out (4 up, 4 down), interleaved.
fn log_ratio(round: u32) -> f64 {
    const FAR: [f64; 8] = [0.5, -0.4, 0.6, -0.5, 0.7, -0.6, 0.8, -0.7];
    let r = (round - 1) as usize;
    if r % 5 == 2 || r % 5 == 4 {
        FAR[(r / 5) * 2 + usize::from(r % 5 == 4)]
    } else {
        let core = r - 2 * (r / 5) - usize::from(r % 5 > 2);
        0.08 + 0.04 * core as f64 / 11.0
    }
}

/// `benchgate compare --side-by-side hyper` on a 20-round run gated with
/// `paired_test`: its exit code and comparison.
fn judge(paired_test: PairedTest) -> (i32, Comparison) {
    let mut suite = Suite::default_suite();
    suite.scenarios.truncate(1);
    suite.gate.paired_test = paired_test;
    let cpu = suite
        .gate
        .metrics
        .iter_mut()
        .find(|m| m.metric == "cpu_us_per_request")
        .unwrap();
    cpu.fail = Some(Threshold {
        relative: 0.05,
        absolute: None,
    });
    cpu.warn = None;
    cpu.gating = true;
    let run = synthetic::run(suite, 20, |_, client, round| {
        let k = if client == "hyper" {
            1.0
        } else {
            log_ratio(round).exp()
        };
        Some(synthetic::metrics(10_000.0, 2000.0, 50.0 * k))
    });
    let dir = tempfile::tempdir().unwrap();
    let (current, json) = (dir.path().join("cur.json"), dir.path().join("cmp.json"));
    run.write_atomic(&current).unwrap();
    let o = Command::new(exe())
        .args(["compare", "--current", current.to_str().unwrap()])
        .args(["--side-by-side", "hyper", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let code = o.status.code().unwrap();
    assert!(code <= 1, "{shown}");
    let cmp = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (code, cmp)
}

/// The verdict of reqwest's cpu_us_per_request and its reason.
fn cpu_row(c: &Comparison) -> (Verdict, &str) {
    let row = c
        .metrics
        .iter()
        .find(|m| m.metric == "cpu_us_per_request" && m.client == "reqwest")
        .unwrap();
    (row.verdict, &row.reason)
}

#[test]
fn the_sign_test_catches_a_shift_that_far_rounds_hide_from_the_signed_rank_test() {
    let (code, cmp) = judge(PairedTest::Sign);
    let (verdict, reason) = cpu_row(&cmp);
    assert_eq!((code, verdict), (1, Verdict::Regressed), "{reason}");
    assert!(
        cmp.method.starts_with("sign test on per-round differences"),
        "{}",
        cmp.method
    );
    let (code, cmp) = judge(PairedTest::SignedRank);
    let (verdict, reason) = cpu_row(&cmp);
    assert_eq!((code, verdict), (0, Verdict::Inconclusive), "{reason}");
    assert!(
        cmp.method
            .starts_with("Wilcoxon signed-rank test on per-round"),
        "{}",
        cmp.method
    );
}
