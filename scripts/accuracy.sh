#!/usr/bin/env bash
# Accuracy of benchgate's latency against a known reference: /delay/10 at
# concurrency 1 should report a p50 within 2% of 10 ms plus the idle loopback
# round trip. The round trip is measured the same way the delay's response
# arrives: one request every 10 ms (open loop, rate 100), so both cores wake
# from idle in both cases. Runs RUNS times (default 3) and prints each error.
#
# Usage: scripts/accuracy.sh   (env: RUNS=3, BENCHGATE=path/to/benchgate)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
if [ -z "${BENCHGATE:-}" ]; then
    cargo build --release --quiet
    BENCHGATE=${CARGO_TARGET_DIR:-target}/release/benchgate
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/benchgate-accuracy.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/accuracy.toml" <<'TOML'
[run]
rounds = 5
warmup = "200ms"
duration = "1s"

[[client]]
name = "hyper"
kind = "hyper"

[[scenario]]
name = "rtt"
path = "/bytes/0"
rate = 100
max_in_flight = 1

[[scenario]]
name = "delay-10ms"
path = "/delay/10"
concurrency = 1
TOML
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$RUNS"); do
    "$BENCHGATE" run -q -c "$WORK/accuracy.toml" -o "$WORK/r$i.json" >/dev/null
    python3 - "$WORK/r$i.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = {c["scenario"]: c["summary"]["latency_p50_us"]["median"] for c in d["results"]}
expected = 10_000 + s["rtt"]
err = (s["delay-10ms"] - expected) / expected * 100
print(f"p50 {s['delay-10ms']:.0f} us, idle round trip {s['rtt']:.0f} us, expected {expected:.0f} us: error {err:+.2f}% ({'within' if abs(err) <= 2 else 'OUTSIDE'} 2%)")
PY
done
