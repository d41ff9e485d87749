#!/usr/bin/env python3
"""Issue 53, point 3: times `benchgate compare --baseline F --current F` on benchgate results files of N tiny
cells (fixtures/results/two-clients.json with its cells replaced), refused by the scan over 10,000 cells: the
time of a refusal shown by a script, not by a timed test (tests/untrusted_input.rs checks the work instead)."""
import json, os, resource, subprocess, sys, tempfile, time

if len(sys.argv) < 2:
    sys.exit('usage: scripts/results-scale.py BENCHGATE [N ...]   (default N: 10000 100000 1000000)')
exe = sys.argv[1]
sizes = [int(n) for n in sys.argv[2:]] or [10_000, 100_000, 1_000_000]
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, '..', 'fixtures', 'results', 'two-clients.json')) as f:
    doc = json.load(f)
cell = {"scenario": "s", "client": "c", "trials": [], "summary": {},
        "histogram": None, "histogram_uncorrected": None}
d = tempfile.mkdtemp(prefix='benchgate-results-scale.')
for n in sizes:
    path = f'{d}/cells-{n}.json'
    doc["results"] = [cell] * n
    with open(path, 'w') as f:
        json.dump(doc, f)
    t = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([exe, "compare", "--baseline", path, "--current", path],
                       capture_output=True, text=True, timeout=900)
    took = time.monotonic() - t
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru.ru_utime - before.ru_utime) + (ru.ru_stime - before.ru_stime)
    err = p.stderr.strip().splitlines()
    print(f"{n:>8} cells ({os.path.getsize(path)/1e6:.1f} MB) exit {p.returncode} {took:7.2f} s wall "
          f"{cpu:7.2f} s CPU, peak RSS {ru.ru_maxrss // 1024} MiB (max so far)  "
          f"{(err[-1][:120] if err and p.returncode else '')}", flush=True)
    os.unlink(path)
os.rmdir(d)
