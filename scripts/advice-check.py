#!/usr/bin/env python3
"""Checks the advice against what the rounds did (issue 51, "the advice checked").

For each kept side-by-side results file (`benchgate run` with a budget, as
scripts/gate-quality-paired.sh KEEP=1 leaves them), each scenario and each
gating metric of each compared client: the run is re-judged at each of its
looks but the last, on the rounds up to the look, at the alpha of the run's
final look, with `benchgate compare` on a copy of the file holding only those
rounds. Where that comparison left the metric undecided and advised that `rounds_needed`
rounds (at most max_rounds) would decide it, every longer prefix the run
measured is re-judged the same way, and the first round count at which the
metric is decided (its verdict no longer inconclusive) is the answer. The
advice holds when that count is within 2x of rounds_needed (from half to
twice). A metric the run's rounds never decided counts as missed when the
run measured more than twice the advice, and as unknown otherwise. A metric
the look called "not at this threshold" (its estimate within one standard
error of the threshold) is counted apart: how often a longer prefix decided
it all the same.

Usage: scripts/advice-check.py [--bin target/release/benchgate] RUN.json ...
Prints one line per advised metric, then the share within 2x (the issue's
target: >= 80%). Exit 0 when the target is met, 1 when missed, 2 on an error.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile


def judge(bin_path, data, rounds, alpha, tmp):
    """The comparison of `data` on its first `rounds` rounds at `alpha`:
    {(scenario, client, metric): row} of the gating rows."""
    d = copy.deepcopy(data)
    d.pop("budget", None)
    d["config"]["gate"]["alpha"] = alpha
    for cell in d["results"]:
        cell["trials"] = [t for t in cell["trials"] if t["round"] <= rounds]
    cur, out = os.path.join(tmp, "prefix.json"), os.path.join(tmp, "cmp.json")
    with open(cur, "w") as f:
        json.dump(d, f)
    p = subprocess.run([bin_path, "compare", "--current", cur, "--json", out],
                       capture_output=True, text=True)
    if p.returncode > 1:
        sys.exit(f"benchgate compare on the first {rounds} rounds failed: {p.stderr.strip()}")
    rows = json.load(open(out))["metrics"]
    return {(r["scenario"], r["client"], r["metric"]): r for r in rows if r.get("gating")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/benchgate")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    held = missed = unknown = 0
    said_hopeless = [0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.runs:
            data = json.load(open(path))
            for spent in data.get("budget") or []:
                looks = spent.get("looks") or []
                if not looks:
                    continue
                alpha, measured = looks[-1]["alpha"], spent["rounds"]
                cache = {}

                def at(n):
                    if n not in cache:
                        cache[n] = judge(args.bin, data, n, alpha, tmp)
                    return cache[n]

                # Each look before the last: what it advised, then the first
                # longer prefix that decides each advised metric.
                for look in looks[:-1]:
                    first = look["round"]
                    advised, hopeless = {}, set()
                    for key, row in at(first).items():
                        a = row.get("advice") or {}
                        if key[0] != spent["scenario"] or row["verdict"] != "inconclusive":
                            continue
                        if a.get("rounds_needed") is not None and a["rounds_needed"] <= a["max_rounds"]:
                            advised[key] = a["rounds_needed"]
                        elif a.get("at_threshold"):
                            hopeless.add(key)
                    # "Not at this threshold": did a longer prefix decide it anyway?
                    for key in sorted(hopeless):
                        got = next((n for n in range(first + 1, measured + 1)
                                    if at(n).get(key, {}).get("verdict", "inconclusive") != "inconclusive"), None)
                        said_hopeless[got is not None] += 1
                        print(f"{os.path.basename(path)} {key[0]} {key[1]} {key[2]}: not at this threshold at {first}, "
                              f"decided at {got if got else '-'} (the run measured {measured})")
                    found = {}
                    for n in range(first + 1, measured + 1):
                        if len(found) == len(advised):
                            break
                        rows = at(n)
                        for key in advised:
                            if key not in found and key in rows and rows[key]["verdict"] != "inconclusive":
                                found[key] = n
                    for key, need in sorted(advised.items()):
                        got = found.get(key)
                        if got is not None:
                            ok = need / 2 <= got <= need * 2
                            held += ok
                            missed += not ok
                            what = "within 2x" if ok else "OFF"
                        elif measured > 2 * need:
                            missed += 1
                            what = f"OFF (undecided after {measured})"
                        else:
                            unknown += 1
                            what = f"unknown (the run stopped at {measured})"
                        print(f"{os.path.basename(path)} {key[0]} {key[1]} {key[2]}: advised {need} at {first} "
                              f"(alpha {alpha:g}), decided at {got if got else '-'}: {what}")
    judged = held + missed
    share = held / judged if judged else 0.0
    print(f"advice within 2x: {held} of {judged} ({100 * share:.0f}%; target >= 80%), {unknown} unknown")
    print(f"'not at this threshold' at a look: {sum(said_hopeless)}, decided later in the run all the same: {said_hopeless[1]}")
    return 0 if judged and share >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main())
