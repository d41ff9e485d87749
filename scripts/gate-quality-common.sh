# Sourced by the gate-quality scripts after they set GQ_NAME (the log prefix
# and work-directory name), BIN (the benchgate binary) and TARGET (its cargo
# target directory): logging, a work directory removed on exit unless KEEP=1,
# the tools both need, the release build when BIN is missing, and the bounded
# wait for a quiet machine below.
log() { printf '[%s] %s\n' "$GQ_NAME" "$*" >&2; }
die() { log "error: $*"; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/$GQ_NAME.XXXXXX")
cleanup() { if [ "${KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi; }
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
