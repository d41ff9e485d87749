# Sourced by the gate-quality scripts after they set GQ_NAME (the log prefix
# and work-directory name), BIN (the benchgate binary) and TARGET (its cargo
# target directory): logging, a work directory removed on exit unless KEEP=1,
# the tools both need, the release build when BIN is missing, the bounded
# wait for a quiet machine below, and NOISE=1's noisy neighbour (noise_start).
log() { printf '[%s] %s\n' "$GQ_NAME" "$*" >&2; }
die() { log "error: $*"; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/$GQ_NAME.XXXXXX")
cleanup() {
    [ -z "${NOISE_PID:-}" ] || noise_stop
    if [ "${KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v jq >/dev/null || die "jq is needed (apt-get install jq)"
command -v python3 >/dev/null || die "python3 (>= 3.11, for tomllib) is needed"
if [ ! -x "$BIN" ]; then
    log "building benchgate (release) into $TARGET"
    nice cargo build --release --quiet --bin benchgate
fi
[ -x "$BIN" ] || die "no benchgate at $BIN"

# Before a measured run (wait_quiet), wait until other
# processes leave the machine quiet, within a bound, and count the runs that had
# to start busy anyway (the reports state it).
#   QUIET_WAIT=20 QUIET_PCT=15 QUIET_BUDGET=240: wait up to QUIET_WAIT s per run
#   for the busy share of all CPUs (from /proc/stat, over 0.5 s) to drop under
#   QUIET_PCT %, at most QUIET_BUDGET s in all.
# Only what this (guest) kernel sees: a noisy neighbour on the host is invisible
# here, which is why the gate's statistics must survive it anyway.
QUIET_WAIT=${QUIET_WAIT:-20}
QUIET_PCT=${QUIET_PCT:-15}
QUIET_BUDGET=${QUIET_BUDGET:-240}
# Busy share (percent) of all CPUs over half a second, from /proc/stat.
busy_pct() {
    local a b
    a=$(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    sleep 0.5
    b=$(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN {split(a, x, " "); split(b, y, " "); d = y[2] - x[2]; printf "%d", (d > 0) ? 100 * (y[1] - x[1]) / d : 0}'
}
NOISY_RUNS=0
WAITED=0
wait_quiet() {
    # Under NOISE=1 the machine is busy on purpose: no wait.
    if [ "${NOISE:-0}" = 1 ]; then return 0; fi
    local start=$SECONDS busy
    while busy=$(busy_pct); [ "$busy" -gt "$QUIET_PCT" ]; do
        if [ $((SECONDS - start)) -ge "$QUIET_WAIT" ] || [ $((WAITED + SECONDS - start)) -ge "$QUIET_BUDGET" ]; then
            log "  machine still ${busy}% busy (waited $((SECONDS - start))s); measuring anyway"
            NOISY_RUNS=$((NOISY_RUNS + 1))
            break
        fi
        sleep 2
    done
    WAITED=$((WAITED + SECONDS - start))
}

# NOISE=1 (issue 29, point 6): measure under a noisy neighbour rather than on
# a quiet machine. Each script calls noise_start once, before its first
# measured run; with NOISE=1 it starts scripts/noisy-neighbour in the
# background: one worker per allowed CPU, pinned, alternating seeded random
# busy and idle spells of 5-100 ms (NOISE_SEED, default 1), about NOISE_LOAD
# cores busy in all (default 1), for at most NOISE_DURATION s (default 21600,
# longer than any of these measurements; it also stops when this script is
# gone, SIGKILL included). wait_quiet then waits for nothing, and the EXIT
# trap stops the neighbour and appends to the report ($OUT, when it was
# written meanwhile) a note of what ran: seed, workers, the busy share each
# measured. Without NOISE=1 noise_start does nothing. NOISE_KIND=memory runs
# the memory neighbour instead (`--memory`: one streaming copy per CPU over a
# buffer 4x the last-level cache, under SCHED_IDLE: a co-tenant VM's noise).
#   NOISE=1 NOISE_SEED=1 NOISE_LOAD=1 NOISE_DURATION=21600 NOISE_KIND=per-cpu|memory
NOISE=${NOISE:-0}
NOISE_SEED=${NOISE_SEED:-1}
NOISE_LOAD=${NOISE_LOAD:-1}
NOISE_DURATION=${NOISE_DURATION:-21600}
NOISE_KIND=${NOISE_KIND:-per-cpu}
case "$NOISE_KIND" in per-cpu | memory) ;; *) echo "NOISE_KIND must be per-cpu or memory, got $NOISE_KIND" >&2; exit 2 ;; esac
NOISE_PID=
noise_start() {
    [ "$NOISE" = 1 ] && [ -z "$NOISE_PID" ] || return 0
    : >"$WORK/noisy-neighbour.log"
    touch "$WORK/noise-started"
    "$ROOT/scripts/noisy-neighbour" --duration "$NOISE_DURATION" --seed "$NOISE_SEED" \
        --load "$NOISE_LOAD" --parent "$$" $([ "$NOISE_KIND" = memory ] && echo --memory) 2>>"$WORK/noisy-neighbour.log" &
    NOISE_PID=$!
    NOISE_FROM=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    log "NOISE=1: noisy neighbour started (pid $NOISE_PID, $NOISE_KIND, seed $NOISE_SEED, at most ${NOISE_DURATION}s); no wait for quiet"
}
noise_stop() {
    [ -n "$NOISE_PID" ] || return 0
    kill -TERM "$NOISE_PID" 2>/dev/null || true
    wait "$NOISE_PID" 2>/dev/null || true
    NOISE_PID=
    local until shares note
    until=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    shares=$(sed -n 's/^noisy-neighbour: worker [0-9]* (\(.*\)): busy .* (\([0-9]*%\)).*/\1 \2/p' "$WORK/noisy-neighbour.log" | paste -sd, - | sed 's/,/, /g')
    if [ "$NOISE_KIND" = memory ]; then
        note="- Measured under the memory neighbour (NOISE=1 NOISE_KIND=memory): scripts/noisy-neighbour --memory from $NOISE_FROM to $until, one streaming copy per CPU ($(nproc)) over a buffer 4x the last-level cache, under SCHED_IDLE. No wait for quiet: the count of runs that started busy above does not apply."
    else
        note="- Measured under a noisy neighbour (NOISE=1): scripts/noisy-neighbour from $NOISE_FROM to $until, seed $NOISE_SEED, one worker per CPU ($(nproc)), busy/idle spells of 5-100 ms, about $NOISE_LOAD core(s) busy in all; busy share measured: ${shares:-n/a}. No wait for quiet: the count of runs that started busy above does not apply."
    fi
    log "$note"
    if [ -n "${OUT:-}" ] && [ -f "$OUT" ] && [ "$OUT" -nt "$WORK/noise-started" ]; then
        printf '\n%s\n' "$note" >>"$OUT"
    fi
}

# The injected slowdown, for the measurement scripts.
# inject_ns CPU_US PCT: PCT% of CPU_US microseconds (a measured CPU per
# request) in whole nanoseconds, at least 1: the value of `inject_cpu`.
inject_ns() { awk -v c="$1" -v p="$2" 'BEGIN { n = int(c * p * 10 + 0.5); print (n < 1) ? 1 : n }'; }

# caused_change NOMINAL_JSON: what an injection actually changed, as markdown
# lines. NOMINAL_JSON is {"<injected client>": {"ns": N, "base_us": CPU}} (the
# amount and the measured CPU per request it was computed from). Reads lines
# "REF_FILES REF_CLIENT INJ_FILE INJ_CLIENT" on stdin, one per comparison
# (REF_FILES: one results file, or several joined by commas); per comparison
# and scenario, the injected cell's CPU per request and throughput (medians
# over its trials) against the reference cell's (the mean over REF_FILES of
# those medians: runs before and after an injected one); prints per
# (scenario, injected client) the nominal change and the medians over the
# comparisons of the change caused.
caused_change() {
    python3 -c '
import json, statistics, sys
nominal = json.loads(sys.argv[1])
def cells(path, client):
    d = json.load(open(path))
    # A scenario split in two (SCHEDULE in gate-quality-paired.sh): SCENARIO--aa / --inj.
    return {c["scenario"].split("--")[0]: c["summary"] for c in d["results"] if c["client"] == client and not c.get("server")}
found = {}
for line in sys.stdin:
    if not line.strip(): continue
    ref_files, ref_client, inj_file, inj_client = line.split()
    refs = [cells(f, ref_client) for f in ref_files.split(",")]
    for scenario, i in cells(inj_file, inj_client).items():
        try:
            rc = statistics.mean(r[scenario]["cpu_us_per_request"]["median"] for r in refs)
            rt = statistics.mean(r[scenario]["throughput_rps"]["median"] for r in refs)
            ic, it = i["cpu_us_per_request"]["median"], i["throughput_rps"]["median"]
        except (KeyError, TypeError):
            continue
        if rc > 0 and rt > 0:
            found.setdefault((scenario, inj_client, ref_client), []).append((ic - rc, ic / rc - 1, it / rt - 1))
if not found:
    print("- Change caused by the injection: not measured (no comparable cells)")
for (scenario, client, ref_client), rows in sorted(found.items()):
    n = nominal.get(client, {})
    ns, base = n.get("ns"), n.get("base_us")
    amount = f"inject_cpu = \"{ns}ns\", nominal +{100 * ns / (1000 * base):.1f}% of {base:.2f} µs" if ns and base else "amount unknown"
    med = lambda k: statistics.median(r[k] for r in rows)
    other = ref_client if ref_client != client else "the uninjected runs"
    print(f"- Change caused, {scenario} / {client} ({amount}): CPU per request {med(0):+.2f} µs ({100 * med(1):+.1f}%), throughput {100 * med(2):+.1f}% (medians over {len(rows)} comparisons with {other})")
' "$1"
}

# The run outcome per arm (issue 28: a run passes only when every gating metric
# is within threshold or improved), and rounds and time per run.
# gated_outcome CMP_JSON CLIENT [METRIC]: fail, inconclusive or pass, judged on
# the metric rows of CLIENT (every client when empty; METRIC only, when given)
# of a comparison (`compare --json`): fail when one is at tier fail (the rows
# the scripts count as a failed gate); else pass when there are gating ones and
# every one is within threshold (verdict unchanged) or improved; else
# inconclusive (a gating verdict inconclusive or missing, or any other).
gated_outcome() {
    jq -r --arg c "$2" --arg m "${3:-}" '
        [.metrics[] | select($c == "" or .client == $c) | select($m == "" or .metric == $m)] as $rows
        | [$rows[] | select(.gating)] as $gated
        | if any($rows[]; .tier == "fail") then "fail"
          elif ($gated | length) > 0 and all($gated[]; .verdict == "unchanged" or .verdict == "improved") then "pass"
          else "inconclusive" end' "$1"
}
# rounds_used RESULTS_JSON CLIENT: the rounds CLIENT's cells ran (their
# trials' highest round; [run] max_rounds extends a run while undecided).
rounds_used() {
    jq -r --arg c "$2" '[.results[] | select(.client == $c) | .trials[] | .round] | max // 0' "$1"
}
# BUDGET_S: [run] budget in seconds from BUDGET ("5m", "90s" or "1h"; empty
# without one): an inconclusive run's time to the decision.
BUDGET_S=$(awk -v b="${BUDGET:-}" 'BEGIN { if (b ~ /^[0-9.]+m$/) print b * 60; else if (b ~ /^[0-9.]+s$/) print b + 0; else if (b ~ /^[0-9.]+h$/) print b * 3600 }')
# now_ms: the wall clock in milliseconds (for the time per run).
now_ms() { date +%s%3N; }
# median_p90 FORMAT: "MEDIAN / P90" of the numbers on stdin (nearest-rank
# 90th percentile), each printed with the printf FORMAT; "n/a" when none.
median_p90() {
    sort -g | awk -v f="$1" '{ v[NR] = $1 }
        END { if (NR == 0) { print "n/a"; exit }
              m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf f " / " f "\n", m, v[int((9 * NR + 9) / 10)] }'
}
