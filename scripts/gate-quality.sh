#!/usr/bin/env bash
# Gate quality, measured: how often the gate cries wolf (A/A) and how often it
# catches a real 10% client-side slowdown, on this machine, with the default
# suite's settings (rounds, warmup, duration, alpha from fixtures/configs/default.toml,
# which a test keeps equal to the built-in suite).
#
# 1. Calibration: CAL_RUNS A/A runs of the scenarios; `benchgate calibrate
#    --results ... --write` turns them into the gate's thresholds (written to
#    $WORK/gate-quality.toml, shown below and copied into the report). The same
#    runs give each client's baseline cpu_us_per_request.
# 2. The knob: inject_cpu = INJECT_PCT% of that client's median
#    cpu_us_per_request, in nanoseconds, on the built-in clients (a busy-spin
#    of that much CPU per request). The report states it, the nominal change
#    and the change it caused (each injected run against the mean of the A
#    runs either side of it: median CPU per request and throughput change).
# 3. PAIRS rounds of three runs, interleaved A, I, A so drift hits both arms:
#    A/A comparison i = A(2i-1) vs A(2i) (independent pairs: no run is used in
#    two A/A comparisons, so the 20 outcomes are independent; 21 runs compared
#    consecutively would share a run between neighbours);
#    injected comparison i = A(2i-1) vs I(i).
#    Each is `benchgate compare` with the calibrated gate: exit 1 = gate failed.
#    The report also counts each comparison's run outcome (pass, inconclusive,
#    fail: gated_outcome in scripts/gate-quality-common.sh).
#
# ANCHOR=1 (issue 16, point 1): every run measures the anchor (`[run] anchor =
# true`: hyper, GET /bytes/22 at 16 workers, one short trial first in every
# round), and every comparison is judged twice from the same runs: with the
# anchored gate (the anchored figures gate in place of CPU per request and
# throughput, thresholds calibrated on them) and with the raw gate (`[gate]
# anchored = false`, thresholds calibrated on the raw figures of the same
# calibration runs). The report has a row of each, and the anchor's own
# change between the runs of every A/A pair (the machine's drift).
#
# KNOB=tail (issue 16, point 6, across runs): the injected runs delay a share
# (TAIL_SHARE, default 2%) of every built-in client's requests by a fixed wait
# (`inject_tail`) instead of burning CPU: wait = (1 + P99_PCT/100) * p99 - p50
# of the calibration runs (medians over their trials), then CALIBRATE (default
# 2) probe runs with the knob on correct it by the gap between the p99 rise
# they caused (against the calibration runs) and the aim: wait += aim - caused.
# The gate's latency_p99_us is set to fail at P99_FAIL_PCT (default 10%), warn
# at half, with the floor P99_FLOOR (default 20us) in place of what calibrate
# wrote, and only latency_p99_us failures count, in the A/A and the injected
# comparisons alike (the wait is off the CPU; what else it moves is reported
# as the change caused).
#
# Why a subset of scenarios (default get-22b, both its clients): time. One run of
# one scenario with two clients is 2 x rounds trials of warmup + duration + ~0.1 s
# start (about 12 s at 10 rounds of 0.15 s + 0.3 s); the whole default suite is 8x
# that, and 65 runs of it would take well over an hour.
#
# Usage: scripts/gate-quality.sh
#   env: SCENARIOS="get-22b" (space separated)  PAIRS=20  CAL_RUNS=5  INJECT_PCT=10
#        ANCHOR=1 (anchored runs; both gates judged, see above)
#        KNOB=cpu|tail TAIL_SHARE=2% P99_PCT=20 P99_FAIL_PCT=10 P99_FLOOR=20us
#        CALIBRATE=2 (KNOB=tail, see above)
#        ROUNDS / WARMUP / DURATION / ALPHA (default: fixtures/configs/default.toml)
#        BUDGET=5m ([run] budget: A(2i) and I(i) run with `--baseline A(2i-1)`
#        and go on while a gating metric is undecided, within it; planned looks)
#        NOISE=1 (under scripts/noisy-neighbour, no wait for quiet)
#        BENCHGATE=path/to/benchgate (default: $CARGO_TARGET_DIR/release/benchgate,
#        built if missing)  QUIET_WAIT=20 QUIET_PCT=15 QUIET_BUDGET=240 (before each
#        run wait up to QUIET_WAIT s for the machine's busy share to drop under
#        QUIET_PCT %, at most QUIET_BUDGET s in all, so the script stays bounded;
#        the report counts the runs that started busy)  KEEP=1 (keep the work
#        directory)  OUT=target/gate-quality.md
# Exit: 0 when both targets are met (A/A <= 1 failure of 20 scaled to PAIRS,
# injected >= 19 of 20; with ANCHOR=1 by the anchored gate), 1 when a target
# is missed, 2 on an error.
# Loopback only (benchgate's reference server on 127.0.0.1); removes its work
# directory on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=${BENCHGATE:-$TARGET/release/benchgate}
SCENARIOS=${SCENARIOS:-get-22b}
PAIRS=${PAIRS:-20}
CAL_RUNS=${CAL_RUNS:-5}
INJECT_PCT=${INJECT_PCT:-10}
ANCHOR=${ANCHOR:-0}
KNOB=${KNOB:-cpu}
TAIL_SHARE=${TAIL_SHARE:-2%}
P99_PCT=${P99_PCT:-20}
P99_FAIL_PCT=${P99_FAIL_PCT:-10}
P99_FLOOR=${P99_FLOOR:-20us}
CALIBRATE=${CALIBRATE:-2}
case "$KNOB" in cpu | tail) ;; *) echo "KNOB must be cpu or tail, got $KNOB" >&2; exit 2 ;; esac
OUT=${OUT:-$ROOT/target/gate-quality.md}
DEFAULTS=$ROOT/fixtures/configs/default.toml
if [ "$KNOB" = tail ]; then
    COMMAND="KNOB=tail TAIL_SHARE=$TAIL_SHARE P99_PCT=$P99_PCT P99_FAIL_PCT=$P99_FAIL_PCT P99_FLOOR=$P99_FLOOR ANCHOR=$ANCHOR scripts/gate-quality.sh"
    KNOB_LABEL="tail (p99 +${P99_PCT}% aimed)"
else
    COMMAND="INJECT_PCT=$INJECT_PCT ANCHOR=$ANCHOR scripts/gate-quality.sh"
    KNOB_LABEL="${INJECT_PCT}% client-side CPU"
fi
COMMAND="${NOISE:+NOISE=$NOISE }${BUDGET:+BUDGET=$BUDGET }PAIRS=$PAIRS $COMMAND${SCENARIOS:+ (SCENARIOS=\"$SCENARIOS\")}"

GQ_NAME=gate-quality
# log, die, WORK, the tool checks, the build, wait_quiet: scripts/gate-quality-common.sh.
# shellcheck source=scripts/gate-quality-common.sh
. "$ROOT/scripts/gate-quality-common.sh"
# NOISE=1: measure under scripts/noisy-neighbour, no wait for quiet (scripts/gate-quality-common.sh).
noise_start

START=$SECONDS

# ------------------------------------------------------------------ settings
read -r D_ROUNDS D_WARMUP D_DURATION D_ALPHA < <(python3 - "$DEFAULTS" <<'EOF'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
r = d.get("run", {})
print(r.get("rounds", 3), r.get("warmup", "300ms"), r.get("duration", "1s"),
      d.get("gate", {}).get("alpha", 0.05))
EOF
)
ROUNDS=${ROUNDS:-$D_ROUNDS}
WARMUP=${WARMUP:-$D_WARMUP}
DURATION=${DURATION:-$D_DURATION}
ALPHA=${ALPHA:-$D_ALPHA}

# Writes a config with the selected scenarios and their clients; $1 = output,
# $2 = JSON {client: ns} (or {}): inject_cpu, or with KNOB=tail the wait of
# inject_tail; [run] anchor = true with ANCHOR=1.
make_config() {
    python3 - "$DEFAULTS" "$1" "$2" "$ROUNDS" "$WARMUP" "$DURATION" "$ALPHA" "$SCENARIOS" "$ANCHOR" "$KNOB" "$TAIL_SHARE" <<'EOF'
import json, sys, tomllib
src, out, inject, rounds, warmup, duration, alpha, scenarios, anchor, knob, share = sys.argv[1:]
d = tomllib.load(open(src, "rb"))
inject = json.loads(inject)
wanted = scenarios.split()
scen = [s for s in d["scenario"] if s["name"] in wanted]
missing = set(wanted) - {s["name"] for s in scen}
if missing:
    sys.exit(f"no scenario {sorted(missing)} in {src}")
used = {c for s in scen for c in s["clients"]}
def val(v):
    if isinstance(v, bool): return "true" if v else "false"
    if isinstance(v, (int, float)): return repr(v)
    if isinstance(v, list): return "[" + ", ".join(val(x) for x in v) + "]"
    return json.dumps(v)
lines = ["# generated by scripts/gate-quality.sh from " + src.split("/")[-1], "[run]"]
run = dict(d.get("run", {}))
run.update(rounds=int(rounds), warmup=warmup, duration=duration)
if anchor == "1": run["anchor"] = True
import os
if os.environ.get("BUDGET"):
    # [run] budget (issue 29): a run with a baseline to compare with goes on
    # while a gating metric is undecided, within it (max_rounds 300).
    run["budget"] = os.environ["BUDGET"]
    run.pop("max_rounds", None)
lines += [f"{k} = {val(v)}" for k, v in run.items()]
for c in d["client"]:
    if c["name"] not in used: continue
    lines += ["", "[[client]]"] + [f"{k} = {val(v)}" for k, v in c.items()]
    ns = int(inject.get(c["name"], 0))
    if ns and knob == "cpu": lines.append(f"inject_cpu = \"{ns}ns\"")
    if ns and knob == "tail": lines.append(f"inject_tail = {{ share = {json.dumps(share)}, delay = \"{ns}ns\" }}")
for s in scen:
    lines += ["", "[[scenario]]"] + [f"{k} = {val(v)}" for k, v in s.items()]
g = d.get("gate", {})
lines += ["", "[gate]", f"alpha = {float(alpha)}"]
for k in ("missing_baseline", "not_comparable"):
    if k in g: lines.append(f"{k} = {val(g[k])}")
open(out, "w").write("\n".join(lines) + "\n")
EOF
}


TOTAL_RUNS=$((CAL_RUNS + 3 * PAIRS))
if [ "$KNOB" = tail ]; then TOTAL_RUNS=$((TOTAL_RUNS + CALIBRATE)); fi
RUNS_DONE=0
RUN_SECONDS=0
# bg_run NAME CONFIG [BASELINE]: one `benchgate run` of the scenarios, results
# in $WORK/NAME.json; with BUDGET, `--baseline $WORK/BASELINE.json` so the run
# compares during it (exit 1, a failed gate, is an outcome, not an error).
bg_run() {
    local name=$1 config=$2 baseline=${3:-} t0 eta="" code=0 args=()
    if [ -n "$baseline" ] && [ -n "${BUDGET:-}" ]; then args=(--baseline "$WORK/$baseline.json"); fi
    wait_quiet
    if [ "$RUNS_DONE" -gt 0 ]; then
        eta=$(( RUN_SECONDS / RUNS_DONE * (TOTAL_RUNS - RUNS_DONE) ))
        eta=", ETA $((eta / 60))m$((eta % 60))s"
    fi
    log "run $((RUNS_DONE + 1))/$TOTAL_RUNS: $name$eta"
    t0=$SECONDS
    "$BIN" run --config "$config" "${args[@]}" --out "$WORK/$name.json" --quiet >"$WORK/$name.log" 2>&1 || code=$?
    if [ "$code" -gt "$([ ${#args[@]} -gt 0 ] && echo 1 || echo 0)" ] || [ ! -s "$WORK/$name.json" ]; then
        cat "$WORK/$name.log" >&2; die "benchgate run $name failed"
    fi
    # Rounds its cells ran (the most of any) and its wall-clock seconds: the
    # time to a decision of the runs compared during them (BUDGET).
    echo "$name $(jq -r '[.results[].trials[].round] | max // 0' "$WORK/$name.json") $((SECONDS - t0))" >>"$WORK/runs.txt"
    RUN_SECONDS=$((RUN_SECONDS + SECONDS - t0))
    RUNS_DONE=$((RUNS_DONE + 1))
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# ------------------------------------------------------------------ 1. calibration
BASE=$WORK/base.toml
GATE=$WORK/gate-quality.toml
make_config "$BASE" '{}'
log "settings: scenarios [$SCENARIOS], rounds $ROUNDS, warmup $WARMUP, duration $DURATION, alpha $ALPHA"
log "$TOTAL_RUNS runs: $CAL_RUNS calibration + $PAIRS x (A, injected, A)"
CAL_FILES=()
for i in $(seq 1 "$CAL_RUNS"); do
    bg_run "cal-$i" "$BASE"
    CAL_FILES+=(--results "$WORK/cal-$i.json")
done
cp "$BASE" "$GATE"
"$BIN" calibrate --config "$GATE" "${CAL_FILES[@]}" --write >"$WORK/calibrate.txt" 2>&1 ||
    { cat "$WORK/calibrate.txt" >&2; die "benchgate calibrate failed"; }
cat "$WORK/calibrate.txt" >&2
# tail_gate FILE: KNOB=tail's latency_p99_us threshold in place of the calibrated one.
tail_gate() {
    local warn line
    warn=$(awk -v p="$P99_FAIL_PCT" 'BEGIN { print p / 2 }')
    line="latency_p99_us = { fail = \"+${P99_FAIL_PCT}%\", warn = \"+${warn}%\", floor = \"$P99_FLOOR\" }"
    if grep -q '^latency_p99_us = ' "$1"; then
        sed -i "s/^latency_p99_us = .*/$line/" "$1"
    else
        echo "$line" >>"$1"
    fi
    grep -qF "$line" "$1" || die "could not set the tail gate in $1"
}
if [ "$KNOB" = tail ]; then tail_gate "$GATE"; fi
log "gate config ($GATE):"
sed 's/^/    /' "$GATE" >&2
# ANCHOR=1: the raw gate of the same runs, calibrated on their raw figures.
GATES=(main)
if [ "$ANCHOR" = 1 ]; then
    GATES=(main raw)
    GATE_RAW=$WORK/gate-quality-raw.toml
    sed 's/^\[gate\]$/[gate]\nanchored = false/' "$BASE" >"$GATE_RAW"
    grep -q '^anchored = false$' "$GATE_RAW" || die "no [gate] table in $BASE"
    "$BIN" calibrate --config "$GATE_RAW" "${CAL_FILES[@]}" --write >"$WORK/calibrate-raw.txt" 2>&1 ||
        { cat "$WORK/calibrate-raw.txt" >&2; die "benchgate calibrate (raw) failed"; }
    if [ "$KNOB" = tail ]; then tail_gate "$GATE_RAW"; fi
    log "raw gate config ($GATE_RAW):"
    sed 's/^/    /' "$GATE_RAW" >&2
fi
# gate_file GATE_NAME: the config of one of GATES.
gate_file() { if [ "$1" = raw ]; then echo "$GATE_RAW"; else echo "$GATE"; fi; }

# ------------------------------------------------------------------ 2. the knob
# Per client, medians over the calibration trials of CPU per request, p50 and p99.
BASE_JSON=$(jq -s '
    def med: sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
    [.[].results[] | select(.anchor != true) | {client, t: [.trials[] | select(.failure == null) | .metrics]}]
    | group_by(.client)
    | map({key: .[0].client, value: ([.[].t[]] | {cpu: (map(.cpu_us_per_request | select(. != null)) | med),
        p50: (map(.latency_p50_us | select(. != null)) | med), p99: (map(.latency_p99_us | select(. != null)) | med)})})
    | from_entries' "$WORK"/cal-*.json)
if [ "$KNOB" = cpu ]; then
    INJECT_JSON=$(jq -c --argjson pct "$INJECT_PCT" '{cpu: map_values(.cpu), inject: map_values(.cpu * $pct * 10 | round | if . < 1 then 1 else . end)}' <<<"$BASE_JSON")
    INJECT=$(jq -c .inject <<<"$INJECT_JSON")
    log "baseline cpu_us_per_request (median of the calibration trials): $(jq -c .cpu <<<"$INJECT_JSON")"
    log "inject_cpu (ns, nominal +${INJECT_PCT}%): $INJECT"
else
    # The wait for p99 +P99_PCT%, then CALIBRATE probe runs correct it by what
    # it caused against the calibration runs: wait += aim - caused (µs).
    INJECT=$(jq -c --argjson pct "$P99_PCT" 'map_values(((1 + $pct / 100) * .p99 - .p50) * 1000 | round | if . < 1000 then 1000 else . end)' <<<"$BASE_JSON")
    log "baseline p50 / p99 (µs, medians of the calibration trials): $(jq -c 'map_values([.p50, .p99])' <<<"$BASE_JSON")"
    for c in $(seq 1 "$CALIBRATE"); do
        make_config "$WORK/probe-$c.toml" "$INJECT"
        bg_run "probe-$c" "$WORK/probe-$c.toml"
        NEXT=$(jq -c --argjson base "$BASE_JSON" --argjson ns "$INJECT" --argjson pct "$P99_PCT" '
            def med: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
            [.results[] | select(.anchor != true) | {client, p99: ([.trials[] | select(.failure == null) | .metrics.latency_p99_us | select(. != null)] | med)}]
            | map(select(.p99 != null and $base[.client] != null and $ns[.client] != null)
                  | (.p99 - $base[.client].p99) as $rise
                  | {key: .client, value: {caused: ($rise / $base[.client].p99 * 100 | round),
                     next: ($ns[.client] + ($pct / 100 * $base[.client].p99 - $rise) * 1000 | round | if . < 1000 then 1000 else . end)}})
            | from_entries' "$WORK/probe-$c.json")
        [ "$(jq 'length' <<<"$NEXT")" -gt 0 ] || die "calibration run $c measured no p99 ($WORK/probe-$c.json)"
        log "calibration $c/$CALIBRATE: wait (ns) $INJECT caused p99 (%) $(jq -c 'map_values(.caused)' <<<"$NEXT") (aim +${P99_PCT}%); next wait $(jq -c 'map_values(.next)' <<<"$NEXT")"
        CALIB_TEXT="${CALIB_TEXT:+$CALIB_TEXT; }$INJECT caused $(jq -c 'map_values(.caused)' <<<"$NEXT")"
        INJECT=$(jq -c 'map_values(.next)' <<<"$NEXT")
    done
    log "inject_tail (share $TAIL_SHARE, wait in ns): $INJECT"
fi
INJ_CFG=$WORK/injected.toml
make_config "$INJ_CFG" "$INJECT"
# BUDGET: the runs compared during them (A(2i), I(i) against A(2i-1)) use the
# calibrated gate, so their looks test the thresholds the comparisons below use.
A_CFG=$BASE
if [ -n "${BUDGET:-}" ]; then
    gated() { sed '/^\[gate\]$/,$d' "$1" >"$2"; sed -n '/^\[gate\]$/,$p' "$GATE" >>"$2"; }
    A_CFG=$WORK/a-gated.toml
    gated "$BASE" "$A_CFG"
    gated "$INJ_CFG" "$WORK/injected-gated.toml"
    INJ_CFG=$WORK/injected-gated.toml
fi

# ------------------------------------------------------------------ 3. the comparisons
# compare GATE KIND I BASE CURRENT: records "KIND I EXIT failed-metrics OUTCOME"
# in results-GATE.txt (GATE: one of GATES; OUTCOME: pass, inconclusive or fail
# on the rows counted, gated_outcome in scripts/gate-quality-common.sh).
compare() {
    local g=$1 kind=$2 i=$3 base=$4 cur=$5 code=0 cmp
    cmp="$WORK/cmp-$g-$kind-$i"
    "$BIN" compare --baseline "$WORK/$base.json" --current "$WORK/$cur.json" --config "$(gate_file "$g")" \
        --json "$cmp.json" >"$cmp.txt" 2>&1 || code=$?
    [ "$code" -le 1 ] || { cat "$cmp.txt" >&2; die "compare $g $kind $i: error"; }
    local failed
    failed=$(jq -r --arg knob "$KNOB" '[.metrics[] | select(.tier == "fail") | select($knob == "cpu" or .metric == "latency_p99_us") | "\(.client)/\(.metric)"] | join(",")' "$cmp.json")
    # KNOB=tail counts latency_p99_us failures only.
    if [ "$KNOB" = tail ]; then code=$([ -n "$failed" ] && echo 1 || echo 0); fi
    local outcome
    outcome=$(gated_outcome "$cmp.json" "" "$([ "$KNOB" = tail ] && echo latency_p99_us)")
    echo "$kind $i $code ${failed:--} $outcome" >>"$WORK/results-$g.txt"
    log "  $g gate, $kind $i: $([ "$code" = 1 ] && echo "FAILED ($failed)" || echo "passed"); outcome $outcome"
}
for g in "${GATES[@]}"; do : >"$WORK/results-$g.txt"; done
for i in $(seq 1 "$PAIRS"); do
    bg_run "a-$((2 * i - 1))" "$BASE"
    bg_run "i-$i" "$INJ_CFG" "a-$((2 * i - 1))"
    bg_run "a-$((2 * i))" "$A_CFG" "a-$((2 * i - 1))"
    for g in "${GATES[@]}"; do
        compare "$g" aa "$i" "a-$((2 * i - 1))" "a-$((2 * i))"
        compare "$g" inj "$i" "a-$((2 * i - 1))" "i-$i"
    done
done

# ------------------------------------------------------------------ report
# The change each injection caused: I(i) against the A runs either side of it.
if [ "$KNOB" = cpu ]; then
    CAUSED=$(for i in $(seq 1 "$PAIRS"); do
            for c in $(jq -r '.inject | keys[]' <<<"$INJECT_JSON"); do
                echo "$WORK/a-$((2 * i - 1)).json,$WORK/a-$((2 * i)).json $c $WORK/i-$i.json $c"
            done
        done | caused_change "$(jq -c '.cpu as $cpu | .inject | with_entries(.value = {ns: .value, base_us: $cpu[.key]})' <<<"$INJECT_JSON")")
else
    # The tail: per pair and client, the median over I(i)'s trials of p99 (p50,
    # CPU per request) against the mean of the A runs' medians either side.
    CAUSED=$(python3 - "$WORK" "$PAIRS" <<'EOF'
import json, statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
def cells(name):
    d = json.load(open(f"{work}/{name}.json"))
    return {c["client"]: c["summary"] for c in d["results"] if not c.get("anchor") and not c.get("server")}
ch = {}
for i in range(1, pairs + 1):
    a1, a2, inj = cells(f"a-{2 * i - 1}"), cells(f"a-{2 * i}"), cells(f"i-{i}")
    for client, summary in inj.items():
        for m in ("latency_p99_us", "latency_p50_us", "cpu_us_per_request"):
            try:
                ref = statistics.mean((a1[client][m]["median"], a2[client][m]["median"]))
                ch.setdefault(client, {}).setdefault(m, []).append(summary[m]["median"] / ref - 1)
            except (KeyError, TypeError, ZeroDivisionError):
                pass
if not ch:
    print("- Change caused by the injection: not measured (no comparable cells)")
for client, ms in sorted(ch.items()):
    med = {m: 100 * statistics.median(v) for m, v in ms.items()}
    n = len(ms.get("latency_p99_us", []))
    print(f"- Change caused, {client} (vs the A runs either side, medians over {n} pairs): p99 {med.get('latency_p99_us', float('nan')):+.1f}%, p50 {med.get('latency_p50_us', float('nan')):+.1f}%, CPU per request {med.get('cpu_us_per_request', float('nan')):+.1f}%")
EOF
)
fi
log "$CAUSED"
# failures GATE KIND: the comparisons of KIND that failed GATE.
failures() { awk -v k="$2" '$1 == k && $3 == 1' "$WORK/results-$1.txt" | wc -l; }
# outcomes GATE KIND: "pass / inconclusive / fail" counts of KIND's comparisons.
outcomes() { awk -v k="$2" '$1 == k { n[$5]++ } END { printf "%d / %d / %d\n", n["pass"], n["inconclusive"], n["fail"] }' "$WORK/results-$1.txt"; }
AA_FAIL=$(failures main aa)
INJ_FAIL=$(failures main inj)
AA_MAX=$(( (PAIRS + 19) / 20 ))          # 1 of 20
INJ_MIN=$(( PAIRS - AA_MAX ))            # 19 of 20
# gate_label GATE: how the report names it.
gate_label() {
    case "$1:$ANCHOR" in
        raw:*) echo "raw (same runs, [gate] anchored = false)" ;;
        main:1) echo "anchored" ;;
        *) echo "raw" ;;
    esac
}
ELAPSED=$((SECONDS - START))
CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
SHA=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)

# Per (client, metric): median MDE and median change over the A/A comparisons,
# median change over the injected ones, and failures in each; $1 = GATE.
per_metric() {
    jq -rs '
      def med: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
      def pct: if . == null then "n/a" else (. * 1000 | round / 10 | tostring) + "%" end;
      [.[] | .kind as $k | .c.metrics[] | select(.gating) | {k: $k, key: "\(.client) | \(.metric)", change, mde, fail: (.tier == "fail"), verdict}]
      | group_by(.key)[]
      | (map(select(.k == "aa"))) as $aa | (map(select(.k == "inj"))) as $inj
      | "| \(.[0].key) | \([$aa[].mde | select(. != null)] | med | pct) | \([$aa[].change | select(. != null)] | med | pct) | \([$aa[] | select(.fail)] | length)/\($aa | length) | \([$inj[].change | select(. != null)] | med | pct) | \([$inj[] | select(.fail)] | length)/\($inj | length) | \([$inj[].verdict] | group_by(.) | map("\(.[0]) \(length)") | join(", ")) |"
    ' <(for f in "$WORK/cmp-$1-aa-"*.json; do jq -c '{kind: "aa", c: .}' "$f"; done
        for f in "$WORK/cmp-$1-inj-"*.json; do jq -c '{kind: "inj", c: .}' "$f"; done)
}

# ANCHOR=1: the anchor's own change in every A/A pair (CPU per request, its
# median over the pair's anchor cells), from the anchored comparisons.
anchor_drift() {
    jq -rs '
      def pct: if . == null then "n/a" else (. * 1000 | round / 10 | tostring) + "%" end;
      [.[] | [.metrics[] | select(.client == "anchor" and .metric == "cpu_us_per_request") | .change | select(. != null)]
       | sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end]
      | "- The anchor'"'"'s own change of CPU per request between the two runs of each A/A pair (the machine'"'"'s drift, in pair order): \(map(pct) | join(", "))"
    ' "$WORK"/cmp-main-aa-*.json
}

mkdir -p "$(dirname "$OUT")"
{
    echo "# Gate quality, measured"
    echo
    echo "Command: \`$COMMAND\` (benchgate $SHA, $(date -u +%Y-%m-%dT%H:%MZ))."
    echo
    echo "- Machine: $(nproc) CPUs, $CPU_MODEL, $(uname -r)"
    echo "- Settings (default suite): rounds $ROUNDS, warmup $WARMUP, duration $DURATION, alpha $ALPHA; scenarios: $SCENARIOS"
    if [ "$ANCHOR" = 1 ]; then echo "- Every run anchored ([run] anchor = true: hyper, GET /bytes/22 at 16 workers, one 100 ms + 150 ms trial first in every round); both gates judged from the same runs"; fi
    echo "- $PAIRS A/A comparisons (independent pairs of runs) and $PAIRS comparisons with an injected $KNOB_LABEL; thresholds from $CAL_RUNS calibration runs"
    if [ "$KNOB" = cpu ]; then
        echo "- Baseline cpu_us_per_request: $(jq -c .cpu <<<"$INJECT_JSON"); inject_cpu (ns): $INJECT"
    else
        echo "- Baseline p50 / p99 (µs): $(jq -c 'map_values([.p50, .p99])' <<<"$BASE_JSON"); inject_tail share $TAIL_SHARE, wait (ns): $INJECT; calibration runs: $CALIB_TEXT"
        echo "- Only latency_p99_us failures count (fail +${P99_FAIL_PCT}%, floor $P99_FLOOR, in place of the calibrated threshold)"
    fi
    echo "$CAUSED"
    echo "- Runs started while other processes kept the machine over ${QUIET_PCT}% busy: $NOISY_RUNS of $TOTAL_RUNS (waited ${WAITED}s in all for quiet)"
    echo "- Total time: $((ELAPSED / 60)) min $((ELAPSED % 60)) s"
    if [ -n "${BUDGET:-}" ]; then
        # per_run PREFIX FIELD: median / p90 over the runs named PREFIX-* of runs.txt's FIELD (2: rounds, 3: seconds).
        per_run() { awk -v p="$1-" -v f="$2" 'index($1, p) == 1 {print $f}' "$WORK/runs.txt" | median_p90 "%d"; }
        even_a() { awk '$1 ~ /^a-/ { split($1, n, "-"); if (n[2] % 2 == 0) print }' "$WORK/runs.txt"; }
        echo "- Budget $BUDGET: A(2i) and I(i) ran with \`--baseline A(2i-1)\` and the calibrated gate, going on while a gating metric was undecided (planned looks). Rounds used, median / p90: A/A $(even_a | awk '{print $2}' | median_p90 "%d"), injected $(per_run i 2); time per run (s): A/A $(even_a | awk '{print $3}' | median_p90 "%d"), injected $(per_run i 3)"
    fi
    if [ "${NOISE:-0}" = 1 ]; then echo "- Under scripts/noisy-neighbour (NOISE=1, seed ${NOISE_SEED:-1}, about ${NOISE_LOAD:-1} core busy), no wait for quiet; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"; fi
    if [ "$ANCHOR" = 1 ]; then anchor_drift; fi
    echo
    echo "| gate | A/A false alarms (target <= $AA_MAX) | injected $KNOB_LABEL detected (target >= $INJ_MIN) | A/A outcomes: pass / inconclusive / fail | injected outcomes: pass / inconclusive / fail |"
    echo "|---|---|---|---|---|"
    for g in "${GATES[@]}"; do
        aa=$(failures "$g" aa); inj=$(failures "$g" inj)
        echo "| $(gate_label "$g") | **$aa / $PAIRS** ($([ "$aa" -le "$AA_MAX" ] && echo met || echo MISSED)) | **$inj / $PAIRS** ($([ "$inj" -ge "$INJ_MIN" ] && echo met || echo MISSED)) | $(outcomes "$g" aa) | $(outcomes "$g" inj) |"
    done
    echo
    echo "Run outcome of a comparison, on $([ "$KNOB" = cpu ] && echo "every client's gating metrics" || echo "latency_p99_us"): fail when one is at tier fail; pass (within threshold) when every one is within threshold or improved; otherwise inconclusive."
    for g in "${GATES[@]}"; do
        echo
        echo "### $(gate_label "$g") gate"
        echo
        echo "Per gating metric (medians over the comparisons; MDE = minimum detectable effect at the A/A noise):"
        echo
        echo "| client | metric | MDE | A/A change | A/A failed | injected change | injected failed | injected verdicts |"
        echo "|---|---|---|---|---|---|---|---|"
        per_metric "$g"
        echo
        echo "Thresholds used (\`benchgate calibrate --write\` on the generated config):"
        echo
        echo '```toml'
        sed -n '/^\[gate\]/,$p' "$(gate_file "$g")"
        echo '```'
        echo
        echo "Calibration (\`benchgate calibrate\` on the $CAL_RUNS calibration runs):"
        echo
        echo '```'
        sed -n '1,/^\[gate\]/p' "$WORK/calibrate$([ "$g" = raw ] && echo -raw).txt" | sed '$d'
        echo '```'
        echo
        echo "Every comparison (kind, index, exit code, failing metrics, run outcome):"
        echo
        echo '```'
        cat "$WORK/results-$g.txt"
        echo '```'
    done
} >"$OUT"

log "$(gate_label main) gate: A/A: $AA_FAIL/$PAIRS gates failed (target <= $AA_MAX); injected: $INJ_FAIL/$PAIRS failed (target >= $INJ_MIN)"
log "report: $OUT ($((ELAPSED / 60)) min $((ELAPSED % 60)) s)"
cat "$OUT"
[ "$AA_FAIL" -le "$AA_MAX" ] && [ "$INJ_FAIL" -ge "$INJ_MIN" ]
