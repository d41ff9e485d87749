#!/usr/bin/env python3
"""Issue 30's acceptance check: untrusted input bounded, loud and fenced, child output capped.

Drives a benchgate binary (the release one by default) from the outside. Its
inputs come from a real, short `benchgate run` on loopback: two scenarios (one
named `::error title=x::boom`) of two built-in clients, run as two shards and
merged. Then, each with what it measured:

1. a results file with three 80 MB free-text fields (`run_id`, `git.ref`,
   `environment.cpu_model`) compares (with the real run as the baseline, and
   side by side) with a peak RSS under 1 GB (the child's own peak, from wait4);
2. a FIFO as `--current` makes `compare` return non-zero within 10 s;
3. crafted histograms (a bad cookie, a 2 GiB payload claim, a zlib bomb,
   counts adding up past 2^64, each made from a real one) make `compare` exit
   2 or warn about the histogram on stderr, and make `merge` refuse the shard;
4. with `GITHUB_ACTIONS=true`, `compare` of the run with the scenario named
   `::error title=x::boom` prints no line starting with `::error` (after
   optional whitespace, as the runner reads them), on stdout or stderr;
5. a command client flooding stdout for 3 s leaves benchgate's scratch space
   (the disk blocks under its `TMPDIR`, sampled every 10 ms) below 64 MiB at
   its peak.

Prints PASS or FAIL per check with the figure, and exits 0 when all pass, 1
when one fails, 2 on an error (the run that makes the inputs failed). Loopback
only; every child is bounded in time and killed with its process group.

Usage: scripts/acceptance-hardening.py
  env: BENCHGATE=path/to/benchgate (default target/release/benchgate of this
       checkout), KEEP=1 keeps the work directory, CHECKS=1,5 runs only those
"""

import base64
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.environ.get("BENCHGATE") or os.path.join(ROOT, "target/release/benchgate")
BIG_TEXT = 80_000_000
RSS_LIMIT = 1_000_000_000
FIFO_LIMIT_S = 10
SCRATCH_LIMIT = 64 << 20
FLOOD_S = 3
HOSTILE = "::error title=x::boom"
ONLY = os.environ.get("CHECKS", "1,2,3,4,5").split(",")

CONFIG = f"""
[run]
rounds = 2
warmup = "100ms"
duration = "300ms"
pin = false

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "hyper-twin"
kind = "hyper"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 2

[[scenario]]
name = {json.dumps(HOSTILE)}
path = "/bytes/22"
concurrency = 2
"""

# A command client: it marks its window (the markers, each acknowledged on
# stdin), sends requests on one keep-alive connection inside it for 300 ms,
# then floods stdout with 1 MiB blocks as fast as it goes for FLOOD_S seconds
# and exits 0, keeping the count of bytes written in the file named by its
# argument. (Flooding inside the window, it is stopped once benchgate's watch
# for markers falls 16 MiB behind.)
FLOOD_CLIENT = f"""
import http.client, os, sys, time, urllib.parse
u = urllib.parse.urlparse(os.environ["BENCHGATE_URL"])
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
out = sys.stdout.buffer
def get():
    conn.request("GET", u.path or "/")
    conn.getresponse().read()
def mark(line):
    out.write(line)
    out.flush()
    sys.stdin.readline()
get()
mark(b"BENCHGATE-WINDOW-OPEN\\n")
start = time.monotonic()
while time.monotonic() - start < 0.3:
    get()
mark(b"BENCHGATE-WINDOW-CLOSE\\n")
block = b"".join(b"flood line %09d\\n" % i for i in range(65536))
count = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
written, start = 0, time.monotonic()
while time.monotonic() - start < {FLOOD_S}:
    out.write(block)
    out.flush()
    written += len(block)
    os.pwrite(count, b"%20d" % written, 0)
"""

FLOOD_CONFIG = f"""
[run]
rounds = 1
warmup = "100ms"
duration = "300ms"
pin = false

[[client]]
name = "flood"
kind = "command"
command = ["python3", "flood.py", "written.txt"]
timeout = "60s"

[[scenario]]
name = "get-22b"
path = "/bytes/22"
concurrency = 1
"""


def run(args, work, timeout, env=None, cwd=None, sample=None):
    """Runs benchgate `args` in its own process group, stdout and stderr to
    files, without GITHUB_ACTIONS unless `env` sets it (`env` adds to the
    environment; a None value removes the variable);
    kills the group at `timeout`. Calls `sample()` every 10 ms while it
    runs. Returns its exit code (None when killed at the timeout), seconds,
    peak RSS in bytes (wait4), stdout's size and head, and stderr."""
    out_path, err_path = os.path.join(work, "stdout"), os.path.join(work, "stderr")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(
            [EXE, *args],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            cwd=cwd or work,
            env={k: v for k, v in {**os.environ, "GITHUB_ACTIONS": None, **(env or {})}.items() if v is not None},
            start_new_session=True,
        )
    started, killed = time.monotonic(), False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if sample:
            sample()
        if not killed and time.monotonic() - started > timeout:
            os.killpg(p.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.01)
    took = time.monotonic() - started
    p.returncode = os.waitstatus_to_exitcode(status)
    try:
        os.killpg(p.pid, signal.SIGKILL)  # anything it left behind
    except ProcessLookupError:
        pass
    with open(out_path, "rb") as f:
        head = f.read(1 << 20).decode(errors="replace")
    with open(err_path, "rb") as f:
        stderr = f.read(1 << 20).decode(errors="replace")
    return {
        "code": None if killed else p.returncode,
        "secs": took,
        "rss": usage.ru_maxrss * 1024,
        "stdout_bytes": os.path.getsize(out_path),
        "stdout": head,
        "stderr": stderr,
    }


def first_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return (lines[0] if lines else "")[:160]


def mib(n):
    return f"{n / (1 << 20):.1f} MiB"


def make_run(work):
    """The real inputs: shard 1, shard 2 and their merge, from a short run."""
    config = os.path.join(work, "benchgate.toml")
    open(config, "w").write(CONFIG)
    shards = []
    for k in (1, 2):
        path = os.path.join(work, f"shard{k}.json")
        r = run(["run", "--config", config, "--out", path, "--shard", f"{k}/2", "--quiet"],
                work, 300, cwd=ROOT)
        if r["code"] not in (0, 1) or not os.path.exists(path):
            raise SystemExit(f"acceptance: benchgate run --shard {k}/2 failed (exit {r['code']}):\n{r['stderr']}")
        shards.append(path)
    merged = os.path.join(work, "run.json")
    r = run(["merge", "--out", merged, *shards], work, 120)
    if r["code"] != 0:
        raise SystemExit(f"acceptance: merging the real shards failed (exit {r['code']}):\n{r['stderr']}")
    return shards, merged


def check_big_text(work, merged):
    """1. Three 80 MB free-text fields: the peak RSS of `compare`."""
    doc = json.load(open(merged))
    missing = [f for f, v in (("git", doc.get("git")), ("environment", doc.get("environment"))) if not v]
    if missing:
        raise SystemExit(f"acceptance: the real run has no {missing}: run it inside a git checkout")
    doc["run_id"] = "@@BIG0@@"
    doc["git"]["ref"] = "@@BIG1@@"
    doc["environment"]["cpu_model"] = "@@BIG2@@"
    text = json.dumps(doc, indent=1)
    big = os.path.join(work, "big.json")
    filler = (b"free text from an untrusted artifact " * (BIG_TEXT // 37 + 1))[:BIG_TEXT]
    with open(big, "wb") as f:
        rest = text
        for i in range(3):
            before, rest = rest.split(f"@@BIG{i}@@", 1)
            f.write(before.encode())
            f.write(filler)
        f.write(rest.encode())
    ok, shown = True, [f"file {mib(os.path.getsize(big))}"]
    # Against the real run as the baseline, and side by side (the attack).
    for how in (["--baseline", merged], ["--side-by-side", "hyper"]):
        r = run(["compare", "--current", big, *how], work, 300)
        ok = ok and r["code"] is not None and r["rss"] < RSS_LIMIT
        shown.append(
            f"{how[0]}: peak RSS {mib(r['rss'])}, exit {r['code']}, {r['secs']:.1f}s, "
            f"stdout {r['stdout_bytes']} bytes"
        )
    return ok, f"{'; '.join(shown)} (limit {RSS_LIMIT / 1e9:.0f} GB); {first_line(r['stderr'])}"


def check_fifo(work, merged):
    """2. A FIFO as --current returns non-zero within 10 s."""
    fifo = os.path.join(work, "results.fifo")
    os.mkfifo(fifo)
    r = run(["compare", "--current", fifo, "--baseline", merged], work, FIFO_LIMIT_S)
    ok = r["code"] not in (None, 0) and r["secs"] < FIFO_LIMIT_S
    shown = "still running, killed" if r["code"] is None else f"exit {r['code']}"
    return ok, f"{shown} after {r['secs']:.2f}s (limit {FIFO_LIMIT_S}s); {first_line(r['stderr'])}"


def leb128_zigzag(v):
    v = (v << 1) ^ (v >> 63)
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def crafted(real):
    """Crafted HdrHistogram V2 blobs (base64), each from the real one."""
    raw = base64.b64decode(real)
    cookie, _ = struct.unpack(">II", raw[:8])
    inner = zlib.decompress(raw[8:])
    if cookie != 0x1C849314 or struct.unpack(">I", inner[:4])[0] != 0x1C849313:
        raise SystemExit("acceptance: the run's histogram is not a compressed HdrHistogram V2 blob")
    header = inner[:40]

    def pack(inner):
        z = zlib.compress(inner, 9)
        return base64.b64encode(struct.pack(">II", 0x1C849314, len(z)) + z).decode()

    bomb = b"\0" * (64 << 20)
    overflow = leb128_zigzag(1 << 62) * 8
    return {
        "bad cookie": base64.b64encode(struct.pack(">I", 0x0BADC0DE) + raw[4:]).decode(),
        "2 GiB payload claim": pack(header[:4] + struct.pack(">I", 0x7FFFFFFF) + inner[8:]),
        "zlib bomb (64 MiB of zero counts)": pack(header[:4] + struct.pack(">I", len(bomb)) + header[8:] + bomb),
        "counts past 2^64": pack(header[:4] + struct.pack(">I", len(overflow)) + header[8:] + overflow),
    }


def with_histogram(src, dst, blob):
    doc = json.load(open(src))
    cell = doc["results"][0]
    cell["histogram"] = blob
    json.dump(doc, open(dst, "w"))
    return cell["scenario"]


def check_histograms(work, shards, merged):
    """3. Crafted histograms: compare exits 2 or warns; merge refuses."""
    doc = json.load(open(merged))
    real = doc["results"][0].get("histogram")
    if not real:
        raise SystemExit("acceptance: the real run's first cell has no histogram")
    control = run(["compare", "--current", merged, "--baseline", merged], work, 120)
    if control["code"] not in (0, 1) or "histogram" in control["stderr"].lower():
        raise SystemExit(f"acceptance: compare of the real run: exit {control['code']}, {control['stderr']}")
    results, ok = [], True
    for name, blob in crafted(real).items():
        path = os.path.join(work, "crafted.json")
        with_histogram(merged, path, blob)
        c = run(["compare", "--current", path, "--baseline", merged], work, 120)
        warned = "histogram" in c["stderr"].lower()
        compare_ok = c["code"] == 2 or (c["code"] is not None and warned)
        bad_shard = os.path.join(work, "crafted-shard.json")
        with_histogram(shards[0], bad_shard, blob)
        out = os.path.join(work, "crafted-merged.json")
        m = run(["merge", "--out", out, bad_shard, shards[1]], work, 120)
        merge_ok = m["code"] not in (None, 0) and not os.path.exists(out)
        ok = ok and compare_ok and merge_ok
        results.append(
            f"    {name} ({len(blob)} chars): compare exit {c['code']}, "
            f"{'warns' if warned else 'no warning'} on stderr -> {'ok' if compare_ok else 'SILENT'}; "
            f"merge exit {m['code']} -> {'refused' if merge_ok else 'ACCEPTED'}; {first_line(m['stderr'])}"
        )
    return ok, "compare of the real run: exit %d, no histogram warning\n%s" % (control["code"], "\n".join(results))


def check_fence(work, merged):
    """4. Under Actions, no line of compare's output starts with ::error."""
    r = run(["compare", "--current", merged, "--baseline", merged], work, 120, env={"GITHUB_ACTIONS": "true"})
    lines = (r["stdout"] + "\n" + r["stderr"]).splitlines()
    commands = [l for l in lines if l.lstrip().startswith("::error")]
    shown = [l for l in lines if "title=x" in l]
    ok = r["code"] in (0, 1) and not commands and shown
    return ok, (
        f"exit {r['code']}; {len(shown)} line(s) show the name, {len(commands)} start with ::error"
        + (f": {commands[0][:120]!r}" if commands else (f", e.g. {shown[0].strip()[:80]!r}" if shown else ""))
    )


def disk_usage(top):
    total = 0
    for d, _, files in os.walk(top):
        for name in files:
            try:
                total += os.lstat(os.path.join(d, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def check_flood(work):
    """5. A command client flooding stdout for 3 s: the scratch space's peak."""
    flood = os.path.join(work, "flood")
    scratch = os.path.join(flood, "tmp")
    os.makedirs(scratch)
    open(os.path.join(flood, "flood.py"), "w").write(FLOOD_CLIENT)
    open(os.path.join(flood, "benchgate.toml"), "w").write(FLOOD_CONFIG)
    peak = [0, 0]

    def sample():
        peak[0] = max(peak[0], disk_usage(scratch))
        peak[1] += 1

    r = run(["run", "--config", "benchgate.toml", "--out", "results.json", "--quiet"],
            flood, 300, env={"TMPDIR": scratch}, cwd=flood, sample=sample)
    try:
        written = int(open(os.path.join(flood, "written.txt")).read().strip())
    except (OSError, ValueError):
        written = 0
    # Below 4x the limit the client did not flood: the check would not test the cap.
    ok = peak[0] < SCRATCH_LIMIT and written >= 4 * SCRATCH_LIMIT and r["code"] is not None
    return ok, (
        f"the client wrote {mib(written)} to stdout in {FLOOD_S}s; scratch space peak {mib(peak[0])} "
        f"(limit {mib(SCRATCH_LIMIT)}, {peak[1]} samples); run exit {r['code']}, {r['secs']:.1f}s"
    )


def main():
    if not os.access(EXE, os.X_OK):
        print(f"acceptance: no benchgate at {EXE}; build it (cargo build --release) or set BENCHGATE", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="benchgate-hardening-")
    print(f"acceptance (issue 30): {EXE}, work {work}")
    failed = 0
    try:
        shards, merged = make_run(work)
        checks = [
            ("three 80 MB free-text fields, compare's peak RSS", lambda: check_big_text(work, merged)),
            ("a FIFO as --current", lambda: check_fifo(work, merged)),
            ("crafted histograms: compare loud, merge refuses", lambda: check_histograms(work, shards, merged)),
            (f"GITHUB_ACTIONS=true compare, scenario {HOSTILE!r}", lambda: check_fence(work, merged)),
            ("a command client flooding stdout: scratch space", lambda: check_flood(work)),
        ]
        for n, (name, check) in enumerate(checks, 1):
            if str(n) not in ONLY:
                print(f"skip {n}. {name} (CHECKS={','.join(ONLY)})")
                continue
            ok, figure = check()
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {n}. {name}: {figure}", flush=True)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    finally:
        if os.environ.get("KEEP") == "1":
            print(f"  kept {work}")
        else:
            subprocess.run(["rm", "-rf", work])
    ran = sum(1 for n in range(1, 6) if str(n) in ONLY)
    print("acceptance:", "PASS" if not failed else f"FAIL ({failed} of {ran} checks)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
