#!/usr/bin/env python3
"""Builds the test binaries with cargo, then runs their units JOBS at a time.

A unit is what runs in one process: a test binary built from a folder
(tests/NAME/main.rs: tests/ci, tests/run, tests/gate, tests/house) runs once
per top-level module, `EXE --exact TEST...` with that module's tests (from
`EXE --list`), named by the module (each module was a test binary of its own:
cargo links the crate once per binary, so fewer binaries build faster); any
other binary (the unit tests, tests/NAME.rs) is one unit, named by its target.
`cargo test` runs its test binaries one after another; this can run the units
JOBS at a time (default 1: on a 2-core machine two at a time failed
load-sensitive tests). What stays as cargo does it: every test of every binary runs, each unit with
its own tests in parallel threads as cargo runs a binary, from the package root, with
cargo's environment (CARGO_MANIFEST_DIR, CARGO_PKG_*). What differs: a failing
unit does not stop the others (like `cargo test --no-fail-fast`), each
unit's output is printed whole when it ends (never interleaved), and a
table of every unit's time and CPU (with the processes it started and waited
for, from wait4) ends the run.

Usage: scripts/test-binaries.py [--jobs N] [--alone NAME ...] [--only NAME ...] [--skip NAME ...]
                                [--clippy] [--no-run] [--] CARGO_ARGS...
  CARGO_ARGS go to `cargo test --no-run --message-format=json-render-diagnostics`
  (e.g. --all-targets --locked). --clippy: the build is also clippy's check with
  warnings as errors (`cargo clippy CARGO_ARGS -- -D warnings`): clippy-driver
  compiles the package's own crates (RUSTC_WORKSPACE_WRAPPER, as `cargo clippy`
  sets it), so the crate is linted and built in one pass instead of two; a
  canary with a known lint first proves that this clippy still takes its
  arguments that way (CLIPPY_ARGS) and fails the run if not. --no-run: build
  and stop (a later run with the same arguments builds nothing). --alone NAME: run that unit by itself, after
  the others (for a test that must not share the machine; none by default).
  NAME: a unit's name (`memory`), or a binary's for all its units (`run`).
  --only NAME: run only the named units; --skip NAME: run all but these
  (scripts/test.sh runs the units that tolerate a neighbour beside its
  background builds, then the others alone: the same build, two calls).
  --again-alone FILE: a unit that fails is not counted failed here: its name
  is added to FILE (its output stays in the log, marked so), for a later call
  with --only-file FILE to run it again by itself; --only-file FILE: also run
  the units FILE names (scripts/test.sh: a unit that failed beside a
  neighbour on a loaded 2-core machine passes only if it passes alone, and the
  end of the run names it). JOBS: --jobs, else BENCHGATE_TEST_JOBS, else 1. --timeout S (BENCHGATE_TEST_TIMEOUT,
  default 1200): a unit still running after S seconds is killed with what it
  started and counted failed.
Order: longest first, from the times of the previous run on this checkout
(target/test-binary-times.json); units without a time start first.
Exit: 0 every unit passed, 1 one failed, 2 the build failed.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Arguments for clippy-driver, as `cargo clippy -- -D warnings` passes them.
CLIPPY_ARGS = "__CLIPPY_HACKERY__".join(["-D", "warnings", ""])
# A program clippy rejects under -D warnings and rustc accepts.
CANARY = "fn main() {\n    let v = vec![1];\n    if v.len() == 0 {}\n}\n"


def clippy_env():
    """The environment under which cargo's build is also clippy's check."""
    try:
        driver = subprocess.run(["rustup", "which", "clippy-driver"], capture_output=True, text=True,
                                check=True).stdout.strip()
        rustc = subprocess.run(["rustup", "which", "rustc"], capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("test-binaries: --clippy needs rustup's clippy-driver (rustup component add clippy)")
    env = dict(os.environ, RUSTC_WORKSPACE_WRAPPER=driver, CLIPPY_ARGS=CLIPPY_ARGS)
    with tempfile.TemporaryDirectory(prefix="benchgate-clippy-canary.") as tmp:
        src = os.path.join(tmp, "canary.rs")
        with open(src, "w") as f:
            f.write(CANARY)
        canary = subprocess.run([driver, rustc, "--edition", "2021", "--crate-type", "bin", "--emit=metadata",
                                 "-o", os.path.join(tmp, "canary.rmeta"), src], env=env, capture_output=True,
                                text=True)
    if canary.returncode == 0 or "len_zero" not in canary.stderr:
        sys.exit(f"test-binaries: --clippy: {driver} did not fail on a known lint with CLIPPY_ARGS={CLIPPY_ARGS!r} "
                 f"(exit {canary.returncode}): this clippy takes its arguments otherwise; "
                 "run `cargo clippy --all-targets --locked -- -D warnings` instead")
    return env


def build(cargo_args, env=None):
    """`cargo test --no-run`: [(name, kind, executable, manifest, source)] of the test binaries."""
    cmd = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
    bins = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["profile"]["test"]:
            target = msg["target"]
            bins.append((target["name"], target["kind"][0], msg["executable"], msg.get("manifest_path"),
                         target.get("src_path", "")))
    if proc.wait() != 0:
        sys.exit(f"test-binaries: `{' '.join(cmd)}` failed (exit {proc.returncode})")
    return bins


def units(bins):
    """What runs, each in a process of its own: [(name, kind, binary, executable, manifest, filters)].

    A test binary built from a folder (tests/NAME/main.rs) holds one module
    per former test binary: each of its top-level modules is a unit named by
    the module, run as `EXE --exact TEST...` with that module's tests (from
    `EXE --list`); tests at its root form a unit named by the binary. Any other
    binary (the unit tests, tests/NAME.rs) is one unit, named by its target.
    """
    out = []
    for name, kind, exe, manifest, src in bins:
        rel = os.path.relpath(src, ROOT) if src else ""
        parts = rel.split(os.sep)
        if kind != "test" or len(parts) != 3 or parts[0] != "tests" or parts[2] != "main.rs":
            out.append((name, kind, name, exe, manifest, []))
            continue
        listed = subprocess.run([exe, "--list", "--format", "terse"], cwd=ROOT, env=cargo_env(manifest),
                                capture_output=True, text=True)
        if listed.returncode != 0:
            sys.exit(f"test-binaries: `{exe} --list` failed (exit {listed.returncode}):\n{listed.stderr}")
        modules = {}
        for line in listed.stdout.splitlines():
            test, sep, what = line.rpartition(": ")
            if sep and what in ("test", "bench"):
                modules.setdefault(test.split("::")[0] if "::" in test else name, []).append(test)
        for module, tests in sorted(modules.items()):
            out.append((module, kind, name, exe, manifest, ["--exact", *tests]))
    seen = {}
    for u in out:
        if seen.setdefault((u[0], u[1]), u[2]) != u[2]:
            sys.exit(f"test-binaries: two test binaries ({seen[(u[0], u[1])]}, {u[2]}) hold a unit named {u[0]}: "
                     "rename one module")
    return out


def cargo_env(manifest_path):
    """What cargo sets for a test binary it runs (the ones a test may read)."""
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = os.path.dirname(manifest_path) if manifest_path else ROOT
    env.setdefault("CARGO", "cargo")
    meta = {}
    try:
        import tomllib

        with open(os.path.join(env["CARGO_MANIFEST_DIR"], "Cargo.toml"), "rb") as f:
            meta = tomllib.load(f).get("package", {})
    except (OSError, ValueError):
        pass
    if "name" in meta:
        env["CARGO_PKG_NAME"] = meta["name"]
    if "version" in meta:
        env["CARGO_PKG_VERSION"] = meta["version"]
    return env


def label(name, kind, binary):
    if kind in ("lib", "bin"):
        return f"{name} (unit tests)"
    return f"{name} ({kind})" if binary == name else f"{name} ({kind}, in tests/{binary}/)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("BENCHGATE_TEST_JOBS", "1")))
    ap.add_argument("--alone", action="append", default=[], metavar="NAME")
    ap.add_argument("--only", action="append", default=[], metavar="NAME")
    ap.add_argument("--skip", action="append", default=[], metavar="NAME")
    ap.add_argument("--again-alone", metavar="FILE",
                    help="a failing unit is named in FILE to run again alone, not counted failed here")
    ap.add_argument("--only-file", metavar="FILE", help="also run the units FILE names (one per line)")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("BENCHGATE_TEST_TIMEOUT", "1200")),
                    help="seconds a unit may run before it is killed and counted failed")
    ap.add_argument("--clippy", action="store_true",
                    help="build with clippy's lints as errors (the build is `cargo clippy -- -D warnings` too)")
    ap.add_argument("--no-run", action="store_true", help="build the test binaries and stop")
    ap.add_argument("cargo_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cargo_args = [a for a in args.cargo_args if a != "--"]
    if args.jobs < 1:
        sys.exit("test-binaries: --jobs must be at least 1")

    again_alone = []
    if args.only_file:
        try:
            with open(args.only_file) as f:
                again_alone = sorted({line.strip() for line in f if line.strip()})
        except FileNotFoundError:
            pass
        args.only = args.only + again_alone
        if not args.only:
            print(f"test-binaries: nothing to run (no --only, and {args.only_file} names no unit)")
            return 0

    t0 = time.monotonic()
    bins = build(cargo_args, clippy_env() if args.clippy else None)
    if args.no_run:
        print(f"test-binaries: built {len(bins)} test binaries in {time.monotonic() - t0:.0f}s", flush=True)
        return 0
    todo = units(bins)
    print(f"test-binaries: built {len(bins)} test binaries in {time.monotonic() - t0:.0f}s; "
          f"running their {len(todo)} units {args.jobs} at a time", flush=True)
    # A name is a unit's, or a binary's (all its units).
    picks = lambda u, names: u[0] in names or u[2] in names
    for flag, names in (("--alone", args.alone), ("--only", args.only), ("--skip", args.skip)):
        unknown = {n for n in names if not any(picks(u, [n]) for u in todo)}
        if unknown:
            sys.exit(f"test-binaries: {flag} names no test binary or unit: {', '.join(sorted(unknown))}")
    if args.only and args.skip:
        sys.exit("test-binaries: --only and --skip together: give one of them")
    todo = [u for u in todo if (not args.only or picks(u, args.only)) and not picks(u, args.skip)]

    times_path = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                              "test-binary-times.json")
    try:
        with open(times_path) as f:
            previous = json.load(f)
    except (OSError, ValueError):
        previous = {}
    key = lambda b: f"{b[0]}:{b[1]}"
    # Longest first (no time yet counts as longest): the pool ends together.
    ordered = sorted(todo, key=lambda u: -previous.get(key(u), float("inf")))
    shared = [u for u in ordered if not picks(u, args.alone)]
    alone = [u for u in ordered if picks(u, args.alone)]

    lock = threading.Lock()
    results = {}

    def run(u):
        name, kind, binary, exe, manifest, filters = u
        start = time.monotonic()
        proc = subprocess.Popen([exe, *filters], cwd=ROOT, env=cargo_env(manifest), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace",
                                start_new_session=True)
        # Its output is read beside the wait, which is wait4's: the unit's
        # CPU with that of every process it started and waited for (the
        # benchgate runs, their drivers, the clients), for the table below.
        chunks = []
        reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()))
        reader.start()
        hung = threading.Event()

        def kill():
            # A hung unit (or what it left holding its output open): stop
            # it and whatever it started, say so, go on. Its output at an end,
            # it finished in time, whatever the clock says now.
            if reader.is_alive():
                hung.set()
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(args.timeout, kill)
        timer.start()
        # Exited but not reaped (WNOWAIT) until its output has ended: its
        # pid, and so its process group's id, cannot be reused while the
        # timer may still kill that group.
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        reader.join()
        timer.cancel()
        _, wait_status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(wait_status)
        out = "".join(chunks)
        if hung.is_set():
            code, status = -1, f"killed after {args.timeout}s (BENCHGATE_TEST_TIMEOUT)"
        else:
            code, status = proc.returncode, f"exit {proc.returncode}"
        took = time.monotonic() - start
        cpu = usage.ru_utime + usage.ru_stime
        with lock:
            results[key(u)] = (label(name, kind, binary), code, took, cpu)
            if code == 0:
                status = "ok"
            elif args.again_alone:
                status = f"FAILED beside a neighbour ({status}), to run again alone"
            else:
                status = f"FAILED ({status})"
            print(f"\n---- {label(name, kind, binary)}: {status} in {took:.1f}s, {cpu:.1f} CPU-s "
                  f"(load average {os.getloadavg()[0]:.1f})\n{out.rstrip()}", flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run, shared))
    for b in alone:
        run(b)

    # Merged with the previous times: a call with --only/--skip keeps the others'.
    previous.update({k: round(v[2], 1) for k, v in results.items()})
    with open(times_path, "w") as f:
        json.dump(previous, f, indent=1, sort_keys=True)
    failed = sorted(v[0] for v in results.values() if v[1] != 0)
    if args.again_alone:
        names = sorted({k.split(":")[0] for k, v in results.items() if v[1] != 0})
        with open(args.again_alone, "a") as f:
            f.writelines(f"{n}\n" for n in names)
    total_cpu = sum(v[3] for v in results.values())
    print(f"\n== test units, {len(results)} in {time.monotonic() - t0:.0f}s and {total_cpu:.0f} CPU-s, "
          f"{args.jobs} at a time (time and CPU each, with what they started; longest first):")
    for lbl, code, took, cpu in sorted(results.values(), key=lambda v: -v[2]):
        print(f"{took:7.1f}s {cpu:7.1f} CPU-s  {lbl}{'' if code == 0 else '  FAILED'}")
    if again_alone:
        print(f"\ntest-binaries: failed beside a neighbour, run again alone: {', '.join(again_alone)}")
    if failed and args.again_alone:
        print(f"\ntest-binaries: {len(failed)} failed beside a neighbour, to run again alone "
              f"(their output above is marked so): {', '.join(failed)}", flush=True)
        return 0
    if failed:
        print(f"\ntest-binaries: {len(failed)} failed: {', '.join(failed)}", flush=True)
        return 1
    print("test-binaries: every test unit passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
