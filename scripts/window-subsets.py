#!/usr/bin/env python3
"""Would a longer warmup narrow a windowed comparison? Re-reads the kept windows
of base-vs-head (or side-by-side) results files and prints, per scenario and
metric, the spread (standard deviation) of the per-round paired log-ratio of the
two forks' values, computed from every window and from subsets of each fork's
windows: without its first window, its last two, its last one, its first two. A
spread that falls when the first windows are dropped says the warmup is too
short for the comparison; one that does not says a round's two forks warm alike.

A fork's value from a subset is as benchgate computes it from all of them: CPU
per request the windows' CPU over the server's count in them, throughput their
count (every window has the planned length). Nothing is run.

Usage: scripts/window-subsets.py RESULTS.json...
       (each scenario of two cells; the log-ratio is the first cell's value over
       the second's, in the file's order)
"""

import math
import statistics
import sys

from paired_rounds import paired_rounds


def fork_value(trial, keep, metric):
    values = trial["windows"]["values"]
    chosen = [values[i] for i in keep if i < len(values)]
    requests = sum(v["server_requests"] for v in chosen)
    if metric == "cpu_us_per_request":
        return sum(v["cpu_us_per_request"] * v["server_requests"] for v in chosen) / requests
    return requests


def main(argv):
    files = [a for a in argv if a.endswith(".json")]
    for path in files:
        for scenario, _, rounds, kept in paired_rounds(path):
            rounds = [r for r in rounds if kept[0][r].get("windows") and kept[1][r].get("windows")]
            count = min(kept[0][r]["windows"]["count"] for r in rounds) if rounds else 0
            if len(rounds) < 3 or count < 2:
                continue
            subsets = [
                ("all", range(count)),
                ("no first", range(1, count)),
                ("last 2", range(count - 2, count)),
                ("last 1", range(count - 1, count)),
                ("first 2", range(0, 2)),
            ]
            for metric in ("cpu_us_per_request", "throughput_rps"):
                cols = []
                for name, keep in subsets:
                    d = [
                        math.log(fork_value(kept[0][r], keep, metric) / fork_value(kept[1][r], keep, metric))
                        for r in rounds
                    ]
                    cols.append(f"{name} {statistics.stdev(d) * 100:.1f}%")
                print(f"{path} {scenario} {metric}, {len(rounds)} rounds: " + " | ".join(cols))


if __name__ == "__main__":
    main(sys.argv[1:])
