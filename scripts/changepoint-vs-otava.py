#!/usr/bin/env python3
"""Change-point detection, measured side by side with Apache Otava (issue 18).

On SERIES synthetic series of LENGTH runs (half flat, half with one planted
shift of 3-15% at a random position), whose noise is resampled from REAL
values: the per-run medians of real A/A runs (`--noise`, a CSV like
fixtures/noise/aa-runs.csv: each run's value over its client's median), or
the per-trial values of a benchgate results file (`--results`: each trial's
value over its cell's median), this runs benchgate's detector (`benchgate changepoints`,
src/compare/changepoint.rs: E-divisive means, permutation test at alpha 0.05)
and Otava's (`otava.analysis.compute_change_points`, Hunter's split/merge E-divisive,
at its default max_pvalue 0.001 and at 0.05) on the same series, and reports
precision and recall: a detection is true when it lies within TOLERANCE runs
of the planted shift; every other detection (all of them on flat series) is
false.

Usage:
  scripts/changepoint-vs-otava.py (--noise CSV | --results FILE) [--metric cpu_us_per_request]
      [--series 200] [--length 60] [--tolerance 2] [--seed 1]
      [--benchgate target/debug/benchgate] [--out target/changepoint-vs-otava.md]
Needs `apache-otava` importable (pip install apache-otava; in a venv).
Exit 0 when benchgate's recall is at least Otava's (default settings) at no
lower precision, 1 otherwise, 2 on an error.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time


def noise_pool(results_path, metric):
    """Each successful trial's value of `metric` over its cell's median."""
    with open(results_path, encoding="utf-8") as f:
        doc = json.load(f)
    pool = []
    for cell in doc["results"]:
        values = [
            t["metrics"][metric]
            for t in cell["trials"]
            if t.get("metrics") and isinstance(t["metrics"].get(metric), (int, float))
        ]
        if len(values) < 5:
            continue
        med = statistics.median(values)
        if med > 0:
            pool.extend(v / med for v in values)
    if len(pool) < 20:
        sys.exit(f"{results_path}: fewer than 20 trials of {metric} in cells of 5 or more trials; run more rounds")
    return pool


def noise_pool_csv(csv_path, metric):
    """Each run's value of `metric` over its client's median (a CSV with
    `client` and `metric` columns, one row per run and client)."""
    import csv

    by_client = {}
    with open(csv_path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            if metric not in row:
                sys.exit(f"{csv_path}: no column {metric!r}; its columns: {', '.join(row)}")
            by_client.setdefault(row["client"], []).append(float(row[metric]))
    pool = []
    for values in by_client.values():
        med = statistics.median(values)
        if med > 0:
            pool.extend(v / med for v in values)
    if len(pool) < 20:
        sys.exit(f"{csv_path}: fewer than 20 runs of {metric}")
    return pool


def make_series(n_series, length, pool, rng):
    """(series, planted index or None) pairs: half flat, half one shift."""
    out = []
    for k in range(n_series):
        values = [100.0 * rng.choice(pool) for _ in range(length)]
        if k % 2 == 1:
            at = rng.randint(10, length - 10)
            shift = rng.uniform(0.03, 0.15) * rng.choice([-1, 1])
            values = [v * (1 + shift) if i >= at else v for i, v in enumerate(values)]
            out.append((values, at, shift))
        else:
            out.append((values, None, 0.0))
    return out


def run_benchgate(binary, series):
    text = "\n".join(json.dumps(s) for s, _, _ in series) + "\n"
    started = time.monotonic()
    out = subprocess.run(
        [binary, "changepoints"], input=text, capture_output=True, text=True, check=True
    ).stdout
    took = time.monotonic() - started
    found = [[c["index"] for c in json.loads(line)["change_points"]] for line in out.splitlines()]
    return found, took


def run_otava(series, max_pvalue):
    from otava.analysis import compute_change_points

    started = time.monotonic()
    found = []
    for s, _, _ in series:
        cps, _ = compute_change_points(s, max_pvalue=max_pvalue)
        found.append([int(c.index) for c in cps])
    return found, time.monotonic() - started


def score(series, found, tolerance):
    tp = fp = recalled = 0
    missed_small = []
    for (_, at, shift), cps in zip(series, found):
        hit = False
        for c in cps:
            if at is not None and abs(c - at) <= tolerance and not hit:
                tp += 1
                hit = True
            else:
                fp += 1
        if at is not None:
            recalled += hit
            if not hit:
                missed_small.append(abs(shift))
    planted = sum(1 for _, at, _ in series if at is not None)
    flat_alarms = sum(1 for (_, at, _), cps in zip(series, found) if at is None and cps)
    precision = tp / (tp + fp) if tp + fp else 1.0
    return {
        "recall": recalled / planted if planted else 0.0,
        "precision": precision,
        "tp": tp,
        "fp": fp,
        "recalled": recalled,
        "planted": planted,
        "flat_alarms": flat_alarms,
        "flat": len(series) - planted,
        "missed_median_shift": statistics.median(missed_small) if missed_small else None,
    }


def differences(series, ours, theirs, tolerance):
    """Where benchgate and Otava (default max_pvalue) disagree, series by series."""

    def hit(at, cps):
        return at is not None and any(abs(c - at) <= tolerance for c in cps)

    only_ours, only_theirs, alarms_ours, alarms_theirs = [], [], 0, 0
    for (_, at, shift), a, b in zip(series, ours, theirs):
        if at is None:
            alarms_ours += bool(a) and not b
            alarms_theirs += bool(b) and not a
        elif hit(at, a) != hit(at, b):
            (only_ours if hit(at, a) else only_theirs).append(abs(shift))

    def sizes(v):
        return ", ".join(f"{x:.1%}" for x in sorted(v)) if v else "none"

    return [
        "Where they differ (benchgate vs Otava at max_pvalue 0.001):",
        f"- planted shifts found by benchgate only: {len(only_ours)} ({sizes(only_ours)});",
        f"- found by Otava only: {len(only_theirs)} ({sizes(only_theirs)});",
        f"- flat series with an alarm from benchgate only: {alarms_ours}; from Otava only: {alarms_theirs}.",
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--noise", help="CSV of per-run medians (fixtures/noise/aa-runs.csv)")
    src.add_argument("--results", help="a benchgate results file (per-trial values)")
    p.add_argument("--metric", default="cpu_us_per_request")
    p.add_argument("--series", type=int, default=200)
    p.add_argument("--length", type=int, default=60)
    p.add_argument("--tolerance", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--benchgate", default=os.path.join("target", "debug", "benchgate"))
    p.add_argument("--out", default=os.path.join("target", "changepoint-vs-otava.md"))
    a = p.parse_args()
    rng = random.Random(a.seed)
    pool = noise_pool_csv(a.noise, a.metric) if a.noise else noise_pool(a.results, a.metric)
    source = a.noise or a.results
    unit = "runs" if a.noise else "trials"
    series = make_series(a.series, a.length, pool, rng)
    rows = []
    found, took = run_benchgate(a.benchgate, series)
    rows.append(("benchgate (E-divisive, permutations, alpha 0.05)", score(series, found, a.tolerance), took))
    founds = [found]
    for pv in (0.001, 0.05):
        found, took = run_otava(series, pv)
        founds.append(found)
        rows.append((f"Apache Otava (compute_change_points, max_pvalue {pv})", score(series, found, a.tolerance), took))
    spread = statistics.pstdev(pool)
    lines = [
        f"Change points on {a.series} series of {a.length} runs ({a.series // 2} flat, {a.series - a.series // 2} with one shift of 3-15% up or down at run 10..{a.length - 10}),",
        f"noise resampled from {len(pool)} real {unit} of `{a.metric}` in {source} (relative spread {spread:.1%}), seed {a.seed};",
        f"a detection is true within {a.tolerance} runs of the planted shift.",
        "",
        "| detector | recall | precision | true / false detections | flat series with an alarm | median missed shift | time |",
        "|:--|--:|--:|--:|--:|--:|--:|",
    ]
    for name, s, took in rows:
        missed = f"{s['missed_median_shift']:.1%}" if s["missed_median_shift"] is not None else "-"
        lines.append(
            f"| {name} | {s['recall']:.0%} ({s['recalled']}/{s['planted']}) | {s['precision']:.0%} | {s['tp']} / {s['fp']} | {s['flat_alarms']}/{s['flat']} | {missed} | {took:.1f} s |"
        )
    lines += ["", *differences(series, founds[0], founds[1], a.tolerance)]
    report = "\n".join(lines) + "\n"
    print(report)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(report)
    ours, otava = rows[0][1], rows[1][1]
    return 0 if ours["recall"] >= otava["recall"] and ours["precision"] >= otava["precision"] else 1


if __name__ == "__main__":
    sys.exit(main())
