#!/usr/bin/env python3
"""Should a run-delay threshold re-run a trial? (issue 29, point 3) -- from data.

Reads benchgate results files (e.g. the runs a gate-quality script kept with
KEEP=1) and asks, for every counted trial with a run-delay share
(`metrics.run_delay_share`, the client's time runnable but waiting for a CPU
over its window, summed over threads):

- how the share is distributed, per client (a multi-threaded client waits in
  several threads at once: its share runs higher at the same load);
- whether trials with a high share are the ones that distort a comparison: the
  deviation of the trial's throughput and CPU per request from its cell's median
  (|log(value / median)|), by share quartile, and the rank correlation between
  share and deviation;
- what a threshold at the 90th and 95th percentile would re-run, and which
  clients it would hit;
- paired by round (two cells of a scenario, the first the baseline): how much
  of the spread of the per-round log-ratio of throughput and CPU per request
  the difference of the two trials' run-delay shares explains (R^2 of a
  least-squares line), and the spread left once it is regressed out, as a
  covariate adjustment (CUPED-like, centred: the mean change is kept) would
  leave it.

Usage: scripts/run-delay-analysis.py RESULTS.json [RESULTS.json ...]
Prints a markdown report on stdout.
"""

import json
import math
import statistics
import sys
from collections import defaultdict

from paired_rounds import paired_rounds


def rank(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    if len(xs) < 3:
        return float("nan")
    rx, ry = rank(xs), rank(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else float("nan")


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def main(paths):
    rows = []  # (client, share, dev_rps, dev_cpu)
    server = []  # (server run delay share of the window, dev_rps)
    for p in paths:
        r = json.load(open(p))
        for cell in r["results"]:
            trials = [
                t for t in cell["trials"]
                if t.get("metrics") and not t.get("failure") and not t.get("invalid")
            ]
            rps = [t["metrics"].get("throughput_rps") for t in trials]
            cpu = [t["metrics"].get("cpu_us_per_request") for t in trials]
            med_rps = statistics.median([v for v in rps if v]) if any(rps) else None
            med_cpu = statistics.median([v for v in cpu if v]) if any(cpu) else None
            for t, a, c in zip(trials, rps, cpu):
                share = t["metrics"].get("run_delay_share")
                if share is None or not a or not c or not med_rps or not med_cpu:
                    continue
                rows.append(
                    (cell["client"], share, abs(math.log(a / med_rps)), abs(math.log(c / med_cpu)))
                )
                srv = t["metrics"].get("server_run_delay_ms")
                window = t.get("window_planned_s")
                if srv is not None and window:
                    server.append((srv / 1000 / window, abs(math.log(a / med_rps))))
    if not rows:
        print("no trial with a run-delay share in these files")
        return 1
    print(f"# Run delay and trial deviation: {len(rows)} counted trials from {len(paths)} files\n")
    print("| client | trials | share p50 | p90 | p99 | max |")
    print("|:--|--:|--:|--:|--:|--:|")
    by_client = defaultdict(list)
    for c, s, _, _ in rows:
        by_client[c].append(s)
    for c, ss in sorted(by_client.items()):
        print(
            f"| {c} | {len(ss)} | {quantile(ss, .5):.1%} | {quantile(ss, .9):.1%} | "
            f"{quantile(ss, .99):.1%} | {max(ss):.1%} |"
        )
    shares = [s for _, s, _, _ in rows]
    q = [quantile(shares, x) for x in (0.25, 0.5, 0.75)]
    print("\n| share quartile | trials | median dev. throughput | p90 | median dev. CPU/request | p90 |")
    print("|:--|--:|--:|--:|--:|--:|")
    bounds = [(-1, q[0]), (q[0], q[1]), (q[1], q[2]), (q[2], float("inf"))]
    for i, (lo, hi) in enumerate(bounds):
        sel = [r for r in rows if lo < r[1] <= hi]
        if not sel:
            continue
        dr = [r[2] for r in sel]
        dc = [r[3] for r in sel]
        print(
            f"| Q{i + 1} ({lo if lo >= 0 else 0:.1%}-{hi:.1%}) | {len(sel)} | {statistics.median(dr):.2%} | "
            f"{quantile(dr, .9):.2%} | {statistics.median(dc):.2%} | {quantile(dc, .9):.2%} |"
        )
    print(
        f"\nSpearman rank correlation, share vs deviation: throughput {spearman(shares, [r[2] for r in rows]):+.2f}, "
        f"CPU/request {spearman(shares, [r[3] for r in rows]):+.2f}"
    )
    if server:
        print(
            f"\nThe server's run delay over the planned window: median {statistics.median([x for x, _ in server]):.1%}, "
            f"p90 {quantile([x for x, _ in server], .9):.1%}; rank correlation with the trial's throughput deviation "
            f"{spearman([x for x, _ in server], [d for _, d in server]):+.2f}"
        )
    for p in (0.90, 0.95):
        t = quantile(shares, p)
        hit = defaultdict(int)
        for c, s, _, _ in rows:
            if s > t:
                hit[c] += 1
        who = ", ".join(f"{c} {n}" for c, n in sorted(hit.items())) or "none"
        print(f"\nA threshold at the p{int(p * 100)} share ({t:.1%}) would re-run {sum(hit.values())} trials: {who}.")
    paired(paths)
    return 0


def paired(paths):
    """The paired section: per scenario of two cells, log(current / baseline)
    per round against the difference of their run-delay shares."""
    lines = []
    for p in paths:
        for scenario, pair, rounds, trials in paired_rounds(p):
            for metric in ("cpu_us_per_request", "throughput_rps"):
                xy = []
                for r in rounds:
                    b, c = trials[0][r]["metrics"], trials[1][r]["metrics"]
                    if b.get(metric) and c.get(metric) and None not in (b.get("run_delay_share"), c.get("run_delay_share")):
                        xy.append((c["run_delay_share"] - b["run_delay_share"], math.log(c[metric] / b[metric])))
                if len(xy) < 8:
                    continue
                xs, ys = [x for x, _ in xy], [y for _, y in xy]
                mx, my = statistics.fmean(xs), statistics.fmean(ys)
                sxx = sum((x - mx) ** 2 for x in xs)
                slope = sum((x - mx) * (y - my) for x, y in xy) / sxx if sxx else 0.0
                resid = [y - my - slope * (x - mx) for x, y in xy]
                sd = statistics.stdev(ys)
                left = math.sqrt(sum(e * e for e in resid) / (len(xy) - 2))
                r2 = 1 - sum(e * e for e in resid) / sum((y - my) ** 2 for y in ys)
                lines.append(
                    f"| {p} | {scenario} | {pair[1]['client']} vs {pair[0]['client']} | {metric} | {len(xy)} | "
                    f"{sd:.2%} | {r2:.2f} | {left:.2%} (x{left / sd:.2f}) |"
                )
    if lines:
        print("\nPaired by round: the spread (standard deviation) of the per-round log-ratio, the share of it the")
        print("difference of the two trials' run-delay shares explains (R^2), and the spread left once it is regressed out.\n")
        print("| file | scenario | cells | metric | rounds | spread | R^2 | left |")
        print("|:--|:--|:--|:--|--:|--:|--:|--:|")
        print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
