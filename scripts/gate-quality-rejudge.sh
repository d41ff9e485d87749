#!/usr/bin/env bash
# Re-judges the kept runs of a gate-quality measurement (`KEEP=1
# scripts/gate-quality.sh` prints the work directory) without running anything:
#   1. the same 20 A/A and 20 injected comparisons (as many rounds a side as measured)
#      under fixed fail thresholds of 2-8% (throughput and CPU per request), to see
#      whether any threshold meets both targets;
#   2. 8 trials a side, made by merging two runs per side (A/A: a1+a3 vs a2+a4;
#      injected: a1+a3 vs i1+i2), to see what more trials would buy.
# Usage: scripts/gate-quality-rejudge.sh WORKDIR [BENCHGATE]
set -euo pipefail
W=$1
BIN=${2:-${CARGO_TARGET_DIR:-$(dirname "$0")/../target}/release/benchgate}
PAIRS=$(find "$W" -name 'i-*.json' | wc -l)
gate() { # $1 out, $2 fail % for throughput and CPU per request
    sed '/^\[gate\]/,$d' "$W/base.toml" >"$1"
    printf '[gate]\nalpha = 0.05\nthroughput_rps = { fail = "-%s%%" }\ncpu_us_per_request = { fail = "+%s%%" }\nlatency_p99_us = { fail = "+10%%", floor = "2ms" }\nerror_rate = { fail = "+0.01" }\n' "$2" "$2" >>"$1"
}
judge() { # config baseline current -> prints the exit code (1 = gate failed)
    local code=0
    "$BIN" compare --baseline "$2" --current "$3" --config "$1" >/dev/null 2>&1 || code=$?
    [ "$code" -le 1 ] || { echo "compare $2 $3: error" >&2; exit 2; }
    echo "$code"
}
merge() { # out a b: the trials of b appended to a's cells (rounds renumbered)
    jq -s '.[0] as $a | .[1] as $b | $a | .results |= [.[] as $c | $c | .trials += ([$b.results[] | select(.scenario == $c.scenario and .client == $c.client) | .trials[] | .round += 100])]' "$2" "$3" >"$1"
}
for t in 2 3 4 5 6 8; do
    gate "$W/rejudge-$t.toml" "$t"
    aa=0 inj=0
    for i in $(seq 1 "$PAIRS"); do
        [ "$(judge "$W/rejudge-$t.toml" "$W/a-$((2 * i - 1)).json" "$W/a-$((2 * i)).json")" = 1 ] && aa=$((aa + 1))
        [ "$(judge "$W/rejudge-$t.toml" "$W/a-$((2 * i - 1)).json" "$W/i-$i.json")" = 1 ] && inj=$((inj + 1))
    done
    echo "4 trials a side, fail at ${t}%: A/A $aa/$PAIRS failed, injected $inj/$PAIRS failed"
done
n=$((PAIRS / 2))
for k in $(seq 0 $((n - 1))); do
    merge "$W/m-b-$k.json" "$W/a-$((4 * k + 1)).json" "$W/a-$((4 * k + 3)).json"
    merge "$W/m-a-$k.json" "$W/a-$((4 * k + 2)).json" "$W/a-$((4 * k + 4)).json"
    merge "$W/m-i-$k.json" "$W/i-$((2 * k + 1)).json" "$W/i-$((2 * k + 2)).json"
done
for t in 3 4 5 6; do
    aa=0 inj=0
    for k in $(seq 0 $((n - 1))); do
        [ "$(judge "$W/rejudge-$t.toml" "$W/m-b-$k.json" "$W/m-a-$k.json")" = 1 ] && aa=$((aa + 1))
        [ "$(judge "$W/rejudge-$t.toml" "$W/m-b-$k.json" "$W/m-i-$k.json")" = 1 ] && inj=$((inj + 1))
    done
    echo "8 trials a side (two runs merged), fail at ${t}%: A/A $aa/$n failed, injected $inj/$n failed"
done
