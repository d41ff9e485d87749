#!/usr/bin/env python3
"""Issue 53, point 1: times `benchgate merge F --out M` (and `compare --baseline F --current F` up to
10k) on JMH files of N entries (avgt, 4 forks of 2 iterations, one benchmark each)."""
import json, os, subprocess, sys, time, resource

if len(sys.argv) < 2:
    sys.exit('usage: scripts/jmh-scale.py BENCHGATE [N ...]   (default N: 10000 20000 40000)')
exe = sys.argv[1]
sizes = [int(n) for n in sys.argv[2:]] or [10_000, 20_000, 40_000]
import tempfile
d = tempfile.mkdtemp(prefix='benchgate-jmh-scale.')
for n in sizes:
    path = f'{d}/jmh-{n}.json'
    entries = [{"jmhVersion": "1.37", "benchmark": f"org.example.B.m{i}", "mode": "avgt",
                "params": {"size": str(i % 7)},
                "primaryMetric": {"score": 1.0, "scoreUnit": "us/op",
                                  "rawData": [[1.0 + i % 5, 1.1], [1.2, 1.3], [1.0, 1.1], [1.2, 1.3]]}}
               for i in range(n)]
    with open(path, 'w') as f:
        json.dump(entries, f)
    runs = [["merge", path, "--out", f"{d}/m.json"]]
    if n <= 10_000:
        runs.append(["compare", "--baseline", path, "--current", path])
    for args in runs:
        t = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=900)
        took = time.monotonic() - t
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (ru.ru_utime - before.ru_utime) + (ru.ru_stime - before.ru_stime)
        err = p.stderr.strip().splitlines()
        print(f"{n:>6} entries ({os.path.getsize(path)/1e6:.1f} MB) {args[0]:<8} exit {p.returncode} "
              f"{took:7.2f} s wall {cpu:7.2f} s CPU, peak RSS {ru.ru_maxrss // 1024} MiB (max so far)  {(err[-1][:160] if err and p.returncode else '')}", flush=True)
import shutil; shutil.rmtree(d)
