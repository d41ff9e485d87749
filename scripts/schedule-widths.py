#!/usr/bin/env python3
"""Issue 51's side-by-side table: the paired schedules' interval half-widths
at equal time, under each noisy neighbour.

For each neighbour (scripts/noisy-neighbour per CPU, then --memory) and
each schedule (sequential with one window a fork, interleaved and duet with
WINDOWS windows), REPS runs in rotating order of one config: hyper against
its twin (A/A, scenario get-22b--aa) and against a copy that spends INJECT
more CPU per request (get-22b--inj), side by side, a fixed number of rounds
(no budget: every run is a sample of the same length in rounds). From each
run's comparison (`benchgate run --json`): the gate's interval of
throughput and CPU per request, and the seconds a round took. Half-widths
are projected to TWO_MIN seconds a scenario (x sqrt(rounds / rounds in that
time)), so schedules whose rounds differ in length compare at equal time.

Usage: scripts/schedule-widths.py [--reps 3] [--out FILE]
env: BENCHGATE (default target/release/benchgate), NOISE_LOAD (1),
     INJECT (5us), WINDOWS (4), TWO_MIN (120)
Loopback only; every run and neighbour is bounded in rounds and time.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = os.environ.get("BENCHGATE", str(ROOT / "target/release/benchgate"))
INJECT = os.environ.get("INJECT", "5us")
WINDOWS = int(os.environ.get("WINDOWS", "4"))
TWO_MIN = float(os.environ.get("TWO_MIN", "120"))
# (schedule, windows a fork, rounds): about a minute a scenario each.
SCHEDULES = [
    ("sequential", 1, 60),
    ("interleaved", WINDOWS, 30),
    ("duet", WINDOWS, 50),
]
NEIGHBOURS = {
    "per-CPU": ["--load", os.environ.get("NOISE_LOAD", "1")],
    "memory": ["--memory"],
}
METRICS = ("throughput_rps", "cpu_us_per_request")


def config(schedule: str, windows: int, rounds: int) -> str:
    clients = "".join(
        f'\n[[client]]\nname = "{n}"\nkind = "hyper"\n{extra}'
        for n, extra in [("hyper", ""), ("hyper-twin", ""), ("hyper-inj", f'inject_cpu = "{INJECT}"\n')]
    )
    scenarios = "".join(
        f'\n[[scenario]]\nname = "get-22b--{s}"\npath = "/bytes/22"\nconcurrency = 4\n'
        f'clients = ["hyper", "{c}"]\n'
        for s, c in [("aa", "hyper-twin"), ("inj", "hyper-inj")]
    )
    return (
        f'[run]\nrounds = {rounds}\nwarmup = "100ms"\nduration = "150ms"\n'
        f'windows = {windows}\nschedule = "{schedule}"\n{clients}{scenarios}'
        '\n[compare]\nbaseline_client = "hyper"\n'
        '\n[gate]\nthroughput_rps = { fail = "-5%" }\ncpu_us_per_request = { fail = "+3%" }\n'
    )


def one_run(work: Path, schedule: str, windows: int, rounds: int, tag: str) -> dict:
    cfg = work / f"{tag}.toml"
    cfg.write_text(config(schedule, windows, rounds))
    out, cmp = work / f"{tag}.json", work / f"{tag}-cmp.json"
    started = time.monotonic()
    p = subprocess.run(
        [BIN, "run", "--config", str(cfg), "--out", str(out), "--json", str(cmp), "--quiet"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    elapsed = time.monotonic() - started
    if p.returncode not in (0, 1) or not cmp.exists():
        sys.exit(f"{tag}: benchgate exited {p.returncode}:\n{p.stderr[-3000:]}")
    doc = json.loads(cmp.read_text())
    row = {"elapsed": elapsed, "outcome": doc["outcome"]}
    for m in doc["metrics"]:
        if m["metric"] in METRICS and m.get("ci_low") is not None:
            kind = m["scenario"].rsplit("--", 1)[-1]
            n = len(m["current"])
            row[(kind, m["metric"])] = (m["change"], m["ci_low"], m["ci_high"], n, m["verdict"])
    return row


def fmt_pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "target/schedule-widths.md"))
    ap.add_argument("--neighbours", default="per-CPU,memory")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="schedule-widths."))
    rows: dict = {}
    for hood in args.neighbours.split(","):
        budget = int(args.reps * len(SCHEDULES) * 200 + 60)
        noise = subprocess.Popen(
            [str(ROOT / "scripts/noisy-neighbour"), "--duration", str(budget), *NEIGHBOURS[hood]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(2)
            for rep in range(args.reps):
                # Rotate the schedules' order, so drift over the block lands on each.
                order = SCHEDULES[rep % 3 :] + SCHEDULES[: rep % 3]
                for schedule, windows, rounds in order:
                    tag = f"{hood}-{schedule}-{rep + 1}"
                    row = one_run(work, schedule, windows, rounds, tag)
                    rows.setdefault((hood, schedule), []).append(row)
                    print(f"schedule-widths: {tag}: {row['outcome']} in {row['elapsed']:.0f} s", file=sys.stderr)
        finally:
            noise.terminate()
            noise.wait(timeout=30)
    lines = [
        f"Half-widths of the gate's interval projected to {TWO_MIN:.0f} s a scenario (median over {args.reps} runs);",
        f"hyper vs its twin (A/A) and vs inject_cpu = {INJECT}; windows of 150 ms after a 100 ms warmup;",
        f"binary {BIN}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
        "| neighbour | schedule | s / round | throughput ± (A/A) | CPU/req ± (A/A) | A/A CPU/req change | injected CPU/req change [interval] | injected verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (hood, schedule), runs in rows.items():
        def proj(kind, metric):
            hws = []
            for r in runs:
                if (kind, metric) not in r:
                    continue
                _, lo, hi, n, _ = r[(kind, metric)]
                per_round = r["elapsed"] / 2 / n
                hws.append((hi - lo) / 2 * (n / (TWO_MIN / per_round)) ** 0.5)
            return f"±{statistics.median(hws) * 100:.1f}%" if hws else "n/a"

        sec = statistics.median(r["elapsed"] / 2 / r[("aa", "throughput_rps")][3] for r in runs)
        aa = ", ".join(fmt_pct(r[("aa", "cpu_us_per_request")][0]) for r in runs)
        inj = "; ".join(
            f"{fmt_pct(c)} [{fmt_pct(lo)}, {fmt_pct(hi)}]" for c, lo, hi, _, _ in (r[("inj", "cpu_us_per_request")] for r in runs)
        )
        verdicts = ", ".join(r[("inj", "cpu_us_per_request")][4] for r in runs)
        lines.append(
            f"| {hood} | {schedule} | {sec:.2f} | {proj('aa', 'throughput_rps')} | {proj('aa', 'cpu_us_per_request')} "
            f"| {aa} | {inj} | {verdicts} |"
        )
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)
    print(f"schedule-widths: runs kept in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
