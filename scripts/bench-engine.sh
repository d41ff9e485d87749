#!/usr/bin/env bash
# Engine overhead and server headroom, measured in one run with one pinning:
# load generators on CPU 0 (taskset -c 0), servers on CPU 1 (taskset -c 1).
#
# 1. Client cost: CPU µs per request for a keep-alive GET /bytes/22 at 16
#    connections against the reference server, for benchgate's hyper driver
#    and its lean generator (`benchgate run`, kind = "hyper" / "h1-lean"), oha,
#    wrk and examples/bare_hyper_loop.rs (the floor of a hyper-util client loop
#    with no harness). Targets: benchgate (hyper) <= 1.1x bare, <= 1.0x oha;
#    h1-lean <= 1.0x wrk.
# 2. Server headroom: `wrk -t1 -c16` against `benchgate serve`, nginx (one
#    worker, same 22-byte body) and the floor (scripts/bench-engine/floor_server.c:
#    one epoll thread writing a prepared response, no extra read per request; the
#    least any server spends here, so the kernel's share of the others), and
#    `benchgate serve --hyper-only` (no lean HTTP/1.1 loop: what it saves).
#    Target: reference server CPU per request <= 0.8x nginx's.
# 3. Connections: a closed loop of 10,000 and 20,000 connections (CONNECTION_COUNTS)
#    for the hyper, reqwest and h1-lean drivers, one trial each (`benchgate run`):
#    the driver's peak RSS, its memory per connection (memory_per_connection_bytes:
#    peak RSS until the window closed minus RSS before the first connection, over
#    the connections the server saw open at once) and the server's count of
#    connections open at once. A count the open-file limit cannot hold is reported
#    as not measured, with benchgate's reason.
# 4. Memory over time: every built-in driver (MEMORY_DRIVERS) in one open loop
#    (GET /bytes/22 at MEMORY_RATE req/s) for 5 s and for 60 s, one trial each:
#    the driver's peak RSS. Target: 60 s <= 1.1x 5 s (fixed-size histograms, no
#    per-request samples kept), for every driver.
#
# Every tool runs RUNS times, interleaved (A B C D A B C D ...); the table shows
# medians. Idempotent: installs what is missing (apt: wrk nginx jq; cargo: oha),
# builds benchgate and the example in release, stops every process it started.
#
# Usage: scripts/bench-engine.sh        (env: RUNS=3 DURATION=5 CONCURRENCY=16
#        PARTS="cost server connections memory" CONNECTION_COUNTS="10000 20000"
#        MEMORY_RATE=2000 MEMORY_DRIVERS="hyper reqwest reqwest-blocking h1-lean"
#        CARGO_TARGET_DIR=... BENCHGATE_TOOLS=~/.cache/benchgate/tools)
#        PARTS=connections runs part 3 only (no wrk, nginx or oha needed).
# Output: a summary on stdout and in target/bench-engine.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
TOOLS=${BENCHGATE_TOOLS:-$HOME/.cache/benchgate/tools}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5}      # seconds measured per run
WARMUP=${WARMUP:-1}          # seconds (benchgate and the bare loop; oha/wrk have none)
CONCURRENCY=${CONCURRENCY:-16}
PARTS=${PARTS:-cost server connections memory}
CONNECTION_COUNTS=${CONNECTION_COUNTS:-10000 20000}
CONNECTION_DRIVERS=(hyper reqwest h1-lean)
MEMORY_RATE=${MEMORY_RATE:-2000}
read -r -a MEMORY_DRIVERS <<<"${MEMORY_DRIVERS:-hyper reqwest reqwest-blocking h1-lean}"
has_part() { [[ " $PARTS " == *" $1 "* ]]; }
# oha's tokio worker threads. 1 like every other client here (wrk -t1, current-thread
# runtimes); oha's default is one per physical core, which pinned to one CPU only
# adds context switches.
OHA_THREADS=${OHA_THREADS:-1}
BODY_PATH=/bytes/22
# Before each run, wait up to QUIET_WAIT seconds for the machine to be idle (busy
# share of all CPUs under QUIET_PCT percent): a shared machine's builds skew CPU/request.
QUIET_WAIT=${QUIET_WAIT:-120}
QUIET_PCT=${QUIET_PCT:-10}
CLIENT_CPU=0
SERVER_CPU=1
REPORT=$ROOT/target/bench-engine.md

log() { printf '[bench-engine] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

# ---------------------------------------------------------------- processes
PIDS=()
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-engine.XXXXXX")
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- installs
[ "$(nproc)" -ge 2 ] || die "needs at least 2 CPUs (client on CPU $CLIENT_CPU, server on CPU $SERVER_CPU)"
missing=()
if has_part cost || has_part server; then
    command -v wrk >/dev/null || missing+=(wrk)
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
fi
has_part server && { command -v "${CC:-cc}" >/dev/null || missing+=(gcc); }
command -v jq >/dev/null || missing+=(jq)
command -v taskset >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
OHA=$TOOLS/bin/oha
if has_part cost && [ ! -x "$OHA" ]; then
    log "installing oha into $TOOLS (cargo install, takes a few minutes)"
    nice -n 10 cargo install oha --locked --root "$TOOLS" >&2
fi

if has_part cost; then
    log "building benchgate and examples/bare_hyper_loop (release)"
    nice -n 10 cargo build --release --quiet --bin benchgate --example bare_hyper_loop >&2
else
    log "building benchgate (release)"
    nice -n 10 cargo build --release --quiet --bin benchgate >&2
fi
BG=$TARGET/release/benchgate
# oha >= 1.5 spells JSON output `--output-format json`; older ones `--json`.
if has_part cost; then
    if [[ $("$OHA" --help) == *--output-format* ]]; then OHA_JSON="--output-format json"; else OHA_JSON=--json; fi
fi
BARE=$TARGET/release/examples/bare_hyper_loop

# ---------------------------------------------------------------- helpers
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a !~ /^[0-9.e+-]+$/ || b !~ /^[0-9.e+-]+$/ || b+0 == 0) print "n/a"; else printf "%.2f", a/b}'; }

# CPU seconds (user+sys) of a process and its live children, from /proc (10 ms ticks).
proc_cpu_s() {
    local pid total=0 hz
    hz=$(getconf CLK_TCK)
    for pid in "$@" $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        [ -r /proc/"$pid"/stat ] || continue
        total=$((total + $(awk '{sub(/^.*\) /, ""); print $12 + $13}' /proc/"$pid"/stat)))
    done
    awk -v t="$total" -v hz="$hz" 'BEGIN {printf "%.3f", t / hz}'
}

# Runs a command on the client CPU; prints "user_s sys_s" of it (and its children)
# to the file $1 (bash's `time`: getrusage of the waited children, ms resolution).
timed() {
    local out=$1; shift
    local TIMEFORMAT='%3U %3S'
    { time taskset -c "$CLIENT_CPU" "$@" >"$WORK/timed.stdout" 2>"$WORK/timed.stderr"; } 2>"$out"
}

# Busy share (percent) of all CPUs over half a second, from /proc/stat.
busy_pct() {
    local a b
    a=$(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    sleep 0.5
    b=$(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN {split(a, x, " "); split(b, y, " "); d = y[2] - x[2]; printf "%d", (d > 0) ? 100 * (y[1] - x[1]) / d : 0}'
}

NOISY_RUNS=0
# Waits for an idle machine; counts the runs that had to start on a busy one.
wait_quiet() {
    local start=$SECONDS busy
    while busy=$(busy_pct); [ "$busy" -gt "$QUIET_PCT" ]; do
        if [ $((SECONDS - start)) -ge "$QUIET_WAIT" ]; then
            log "  machine still ${busy}% busy after ${QUIET_WAIT}s; measuring anyway"
            NOISY_RUNS=$((NOISY_RUNS + 1))
            return
        fi
        sleep 2
    done
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_port() {
    local port=$1 i
    for i in $(seq 100); do
        (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
        sleep 0.05
    done
    die "nothing listens on 127.0.0.1:$port"
}

# ---------------------------------------------------------------- servers
SERVER_LOG=$WORK/server.out
taskset -c "$SERVER_CPU" "$BG" serve --listen 127.0.0.1:0 --no-tls >"$SERVER_LOG" 2>"$WORK/server.err" &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
for _ in $(seq 100); do
    [ -s "$SERVER_LOG" ] && break
    sleep 0.05
done
SERVER_URL=$(head -n1 "$SERVER_LOG" | tr -d '\r')
case $SERVER_URL in http://127.0.0.1:*) ;; *) die "benchgate serve printed '$SERVER_URL'" ;; esac
URL=$SERVER_URL$BODY_PATH
BODY=$(curl -sf "$URL") || die "GET $URL failed"
BODY_TYPE=$(curl -sf -o /dev/null -w '%{content_type}' "$URL")
[ ${#BODY} -eq 22 ] || die "$URL returned ${#BODY} bytes, expected 22"
log "reference server $SERVER_URL (pid $SERVER_PID, CPU $SERVER_CPU); /bytes/22 = '$BODY' ($BODY_TYPE)"

if has_part server; then
NGINX_DIR=$WORK/nginx
NGINX_PORT=$(free_port)
mkdir -p "$NGINX_DIR/tmp"
cat >"$NGINX_DIR/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 65s;
    client_body_temp_path $NGINX_DIR/tmp/body;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / {
            default_type ${BODY_TYPE:-application/octet-stream};
            return 200 "$BODY";
        }
    }
}
EOF
# `start_server NAME PORT STDERR COMMAND...`: COMMAND on the server CPU, in the
# background of this shell (so cleanup stops it); waits for PORT and checks that
# it serves the reference server's body. Sets STARTED_PID and STARTED_URL.
start_server() {
    local name=$1 port=$2 err=$3
    shift 3
    taskset -c "$SERVER_CPU" "$@" 2>"$err" &
    STARTED_PID=$!
    PIDS+=("$STARTED_PID")
    wait_port "$port"
    STARTED_URL=http://127.0.0.1:$port$BODY_PATH
    [ "$(curl -sf "$STARTED_URL")" = "$BODY" ] || die "$name does not return the same body as $URL"
    log "$name $STARTED_URL (pid $STARTED_PID, CPU $SERVER_CPU)"
}

start_server nginx "$NGINX_PORT" "$NGINX_DIR/stderr" \
    "$NGINX" -p "$NGINX_DIR" -e "$NGINX_DIR/error.log" -c "$NGINX_DIR/nginx.conf"
NGINX_PID=$STARTED_PID NGINX_URL=$STARTED_URL

"${CC:-cc}" -O2 -o "$WORK/floor_server" "$ROOT/scripts/bench-engine/floor_server.c"
FLOOR_PORT=$(free_port)
start_server "the floor server" "$FLOOR_PORT" "$WORK/floor.stderr" \
    "$WORK/floor_server" "$FLOOR_PORT" "$BODY" "${BODY_TYPE:-application/octet-stream}"
FLOOR_PID=$STARTED_PID FLOOR_URL=$STARTED_URL

# The reference server without its lean HTTP/1.1 loop (all of it through
# hyper): what the lean loop saves.
HYPER_PORT=$(free_port)
start_server "benchgate serve --hyper-only" "$HYPER_PORT" "$WORK/serve-hyper.stderr" \
    "$BG" serve --listen "127.0.0.1:$HYPER_PORT" --no-tls --hyper-only
HYPER_PID=$STARTED_PID HYPER_URL=$STARTED_URL
fi

# ---------------------------------------------------------------- one run of each tool
# Each prints "req_per_s cpu_us_per_request" on stdout; raw output stays in $WORK.

# One config per built-in driver measured: $WORK/<kind>.toml.
for kind in hyper h1-lean; do
    cat >"$WORK/$kind.toml" <<EOF
[run]
rounds = 3
warmup = "${WARMUP}s"
duration = "${DURATION}s"

[[client]]
name = "$kind"
kind = "$kind"

[[scenario]]
name = "get-22b"
method = "GET"
path = "$BODY_PATH"
concurrency = $CONCURRENCY
EOF
done

# `run_benchgate RUN KIND`: three trials of the built-in driver KIND.
run_benchgate() {
    local out=$WORK/$2-$1.json
    # Restricted to CPUs 0,1, `benchgate run` puts its server on the last allowed CPU
    # (1) and its driver processes on the others (0): the same placement as the rest.
    taskset -c "$CLIENT_CPU,$SERVER_CPU" "$BG" run --config "$WORK/$2.toml" --out "$out" --quiet \
        >"$WORK/$2-$1.log" 2>&1 || { cat "$WORK/$2-$1.log" >&2; die "benchgate run ($2) failed"; }
    local rps cpu
    rps=$(jq '[.results[].trials[].metrics.throughput_rps] | .[]' "$out" | median)
    cpu=$(jq '[.results[].trials[].metrics.cpu_us_per_request] | .[]' "$out" | median)
    jq -r '.results[].trials[].metrics | "    trial: \(.throughput_rps|floor) req/s, \(.cpu_us_per_request*100|round/100) us/req, errors \(.error_rate)"' "$out" >&2
    echo "$rps $cpu"
}

run_oha() {
    local t=$WORK/oha-$1.time
    timed "$t" "$OHA" -z "${DURATION}s" -c "$CONCURRENCY" --no-tui $OHA_JSON \
        --worker-threads "$OHA_THREADS" "$URL"
    cp "$WORK/timed.stdout" "$WORK/oha-$1.json"
    local n elapsed
    n=$(jq '[.statusCodeDistribution[]] | add // 0' "$WORK/oha-$1.json")
    elapsed=$(jq '.summary.total' "$WORK/oha-$1.json")
    read -r u s <"$t"
    awk -v n="$n" -v e="$elapsed" -v u="$u" -v s="$s" 'BEGIN {printf "%.0f %.3f\n", n/e, (u+s)*1e6/n}'
}

run_wrk() {
    local url=$2 t=$WORK/wrk-$1.time
    timed "$t" wrk -t1 -c"$CONCURRENCY" -d"${DURATION}s" "$url"
    cp "$WORK/timed.stdout" "$WORK/wrk-$1.txt"
    grep -q 'Non-2xx\|Socket errors' "$WORK/wrk-$1.txt" && log "wrk reported errors: $(grep 'Non-2xx\|Socket errors' "$WORK/wrk-$1.txt")"
    local n elapsed
    read -r n elapsed < <(awk '/requests in/ {gsub(/s,?$/, "", $4); print $1, $4}' "$WORK/wrk-$1.txt")
    read -r u s <"$t"
    awk -v n="$n" -v e="$elapsed" -v u="$u" -v s="$s" 'BEGIN {printf "%.0f %.3f\n", n/e, (u+s)*1e6/n}'
}

run_bare() {
    timed "$WORK/bare-$1.time" "$BARE" "$URL" --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP"
    cp "$WORK/timed.stdout" "$WORK/bare-$1.json"
    [ "$(jq .errors "$WORK/bare-$1.json")" = 0 ] || log "bare loop reported errors: $(cat "$WORK/bare-$1.json")"
    jq -r '"\(.requests / .elapsed_s) \((.cpu_user_us + .cpu_sys_us) / .requests)"' "$WORK/bare-$1.json"
}

# wrk against a server; prints "req_per_s server_cpu_us_per_request server_busy_percent".
run_server() {
    local name=$1 url=$2 pid=$3 c0 c1 line
    c0=$(proc_cpu_s "$pid")
    line=$(run_wrk "$name" "$url")
    c1=$(proc_cpu_s "$pid")
    local n
    n=$(awk '/requests in/ {print $1}' "$WORK/wrk-$name.txt")
    echo "${line%% *} $(awk -v a="$c0" -v b="$c1" -v n="$n" -v d="$DURATION" 'BEGIN {printf "%.3f %.0f", (b-a)*1e6/n, 100*(b-a)/d}')"
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- 1. client cost
declare -A RPS CPU
TOOLS_ORDER=(benchgate h1-lean oha wrk bare)
has_part cost && {
log "client cost: $RUNS x (${TOOLS_ORDER[*]}), ${DURATION}s each, c=$CONCURRENCY, GET $BODY_PATH"
for r in $(seq "$RUNS"); do
    for tool in "${TOOLS_ORDER[@]}"; do
        wait_quiet
        case $tool in
            benchgate) line=$(run_benchgate "$r" hyper) ;;
            h1-lean) line=$(run_benchgate "$r" h1-lean) ;;
            oha) line=$(run_oha "$r") ;;
            wrk) line=$(run_wrk "client-$r" "$URL") ;;
            bare) line=$(run_bare "$r") ;;
        esac
        read -r rps cpu <<<"$line"
        log "  run $r $tool: $(printf '%.0f' "$rps") req/s, $(printf '%.2f' "$cpu") us/req"
        RPS[$tool]+="$rps "
        CPU[$tool]+="$cpu "
    done
done
}

# ---------------------------------------------------------------- 2. server headroom
declare -A SRPS SCPU SBUSY
SERVERS_ORDER=(benchgate-serve nginx floor benchgate-serve-hyper-only)
has_part server && {
log "server headroom: $RUNS x (${SERVERS_ORDER[*]}) under wrk -t1 -c$CONCURRENCY -d${DURATION}s"
for r in $(seq "$RUNS"); do
    for srv in "${SERVERS_ORDER[@]}"; do
        wait_quiet
        case $srv in
            nginx) line=$(run_server "nginx-$r" "$NGINX_URL" "$NGINX_PID") ;;
            floor) line=$(run_server "floor-$r" "$FLOOR_URL" "$FLOOR_PID") ;;
            benchgate-serve-hyper-only) line=$(run_server "serve-hyper-$r" "$HYPER_URL" "$HYPER_PID") ;;
            *) line=$(run_server "serve-$r" "$URL" "$SERVER_PID") ;;
        esac
        read -r rps cpu busy <<<"$line"
        log "  run $r $srv: $rps req/s, server $cpu us/req, server CPU busy $busy%"
        SRPS[$srv]+="$rps "
        SCPU[$srv]+="$cpu "
        SBUSY[$srv]+="$busy "
    done
done
}

# `run_trials CONFIG OUT`: `benchgate run` of CONFIG (output in CONFIG's .log);
# when benchgate refuses or fails it, prints "- reason" (its first error line,
# as a table cell) and returns 1.
run_trials() {
    local log=${1%.toml}.log
    taskset -c "$CLIENT_CPU,$SERVER_CPU" "$BG" run --config "$1" --out "$2" --quiet >"$log" 2>&1 && return 0
    echo "- $(grep -m1 'error' "$log" | sed 's/^benchgate: //; s/|/\\|/g')"
    return 1
}

# ---------------------------------------------------------------- 3. connections
# `run_connections KIND N`: one trial of KIND at N connections; prints
# "peak_rss_bytes memory_per_connection_bytes server_peak_open req_per_s errors",
# or "- reason" when benchgate did not measure it.
run_connections() {
    local kind=$1 n=$2 out=$WORK/conns-$1-$2.json cfg=$WORK/conns-$1-$2.toml
    cat >"$cfg" <<EOF
[run]
rounds = 1
warmup = "10s"
duration = "${DURATION}s"
timeout = "20s"

[[client]]
name = "$kind"
kind = "$kind"

[[scenario]]
name = "c$n"
method = "GET"
path = "$BODY_PATH"
concurrency = $n
EOF
    run_trials "$cfg" "$out" || return 0
    jq -r '.results[0].trials[0] | if .failure then "- trial failed: \(.failure)" else
        "\(.metrics.peak_rss_bytes) \(.metrics.memory_per_connection_bytes // "n/a") \(.server.peak_open_connections) \(.metrics.throughput_rps|floor) \(.metrics.requests - .metrics.ok)" end' "$out"
}

declare -A CONNS
has_part connections && {
log "connections: ${CONNECTION_DRIVERS[*]} at $CONNECTION_COUNTS connections, one trial each (10s warmup, ${DURATION}s window)"
for n in $CONNECTION_COUNTS; do
    for kind in "${CONNECTION_DRIVERS[@]}"; do
        wait_quiet
        CONNS[$kind-$n]=$(run_connections "$kind" "$n")
        log "  $kind at $n: ${CONNS[$kind-$n]}"
    done
done
}

# ---------------------------------------------------------------- 4. memory over time
# `run_memory KIND`: KIND in an open loop for 5 s, then for 60 s (one run, two
# scenarios, one trial each); prints "rss_5s rss_60s requests_5s requests_60s",
# or "- reason" when a trial did not measure.
run_memory() {
    local kind=$1 out=$WORK/memory-$1.json cfg=$WORK/memory-$1.toml s
    {
        printf '[run]\nrounds = 1\nwarmup = "0s"\n\n[[client]]\nname = "%s"\nkind = "%s"\n' "$kind" "$kind"
        for s in 5 60; do
            printf '\n[[scenario]]\nname = "open-%ss"\nmethod = "GET"\npath = "%s"\nrate = %s\nmax_in_flight = 32\nduration = "%ss"\n' \
                "$s" "$BODY_PATH" "$MEMORY_RATE" "$s"
        done
    } >"$cfg"
    run_trials "$cfg" "$out" || return 0
    jq -r '[.results[] | {(.scenario): .trials[0]}] | add as $t
        | if ($t["open-5s"].failure // $t["open-60s"].failure) then "- trial failed: \($t["open-5s"].failure // $t["open-60s"].failure)"
          else "\($t["open-5s"].metrics.peak_rss_bytes) \($t["open-60s"].metrics.peak_rss_bytes) \($t["open-5s"].metrics.ok) \($t["open-60s"].metrics.ok)" end' "$out"
}

declare -A MEMORY
has_part memory && {
log "memory: ${MEMORY_DRIVERS[*]}, open loop at $MEMORY_RATE req/s for 5 s and 60 s, one trial each"
for kind in "${MEMORY_DRIVERS[@]}"; do
    wait_quiet
    MEMORY[$kind]=$(run_memory "$kind")
    log "  $kind: ${MEMORY[$kind]}"
done
}

# ---------------------------------------------------------------- report
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
{
    echo "# bench-engine"
    echo
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r)"
    echo "- load average at start / end: $LOAD_START / $(cut -d' ' -f1-3 /proc/loadavg) ; runs started on a busy machine (> ${QUIET_PCT}% CPU after waiting ${QUIET_WAIT}s): $NOISY_RUNS"
    has_part cost && echo "- oha $("$OHA" --version | awk '{print $2}') with --worker-threads $OHA_THREADS; $(wrk -v 2>&1 | awk 'NR==1 {print $1, $2}'); nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///')"
    echo "- commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
    echo "- pinning: load generator on CPU $CLIENT_CPU, server on CPU $SERVER_CPU; GET $BODY_PATH keep-alive, $CONCURRENCY connections, ${DURATION}s per run, $RUNS runs interleaved, medians"
    echo "- benchgate = the hyper driver (kind = \"hyper\"); h1-lean = the lean generator (kind = \"h1-lean\"), both through \`benchgate run\`"
    echo "- CPU: benchgate, h1-lean = getrusage(SELF) of the driver in its window (median of 3 trials per run); bare loop = getrusage(SELF) after ${WARMUP}s warmup; oha, wrk = user+sys of the whole process (bash time), no warmup"
    echo
    if has_part cost; then
    echo "## 1. Client cost (against benchgate serve)"
    echo
    echo "| tool | req/s | CPU µs/request | vs bare loop | vs oha | vs wrk | runs (µs/req) |"
    echo "|---|---:|---:|---:|---:|---:|---|"
    bare_cpu=$(med "${CPU[bare]}")
    oha_cpu=$(med "${CPU[oha]}")
    wrk_cpu=$(med "${CPU[wrk]}")
    for tool in "${TOOLS_ORDER[@]}"; do
        c=$(med "${CPU[$tool]}")
        printf '| %s | %.0f | %.2f | %sx | %sx | %sx | %s |\n' "$tool" "$(med "${RPS[$tool]}")" "$c" \
            "$(ratio "$c" "$bare_cpu")" "$(ratio "$c" "$oha_cpu")" "$(ratio "$c" "$wrk_cpu")" \
            "$(for v in ${CPU[$tool]}; do printf '%.2f ' "$v"; done)"
    done
    bg_cpu=$(med "${CPU[benchgate]}")
    paired() { paste -d' ' <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) | awk '{printf "%.3f\n", $1/$2}'; }
    echo
    echo "Paired by run (same round, so machine drift hits both): benchgate/bare = $(paired "${CPU[benchgate]}" "${CPU[bare]}" | tr '\n' ' ')(median $(paired "${CPU[benchgate]}" "${CPU[bare]}" | median)), benchgate/oha = $(paired "${CPU[benchgate]}" "${CPU[oha]}" | tr '\n' ' ')(median $(paired "${CPU[benchgate]}" "${CPU[oha]}" | median))"
    echo
    vs_bare=$(ratio "$bg_cpu" "$bare_cpu")
    vs_oha=$(ratio "$bg_cpu" "$oha_cpu")
    verdict() { awk -v r="$1" -v t="$2" 'BEGIN {print (r == "n/a") ? "not measured" : (r+0 <= t+0) ? "met" : "MISSED"}'; }
    echo "- target benchgate <= 1.10x bare loop: ${vs_bare}x, $(verdict "$vs_bare" 1.10)"
    echo "- target benchgate <= 1.00x oha: ${vs_oha}x, $(verdict "$vs_oha" 1.00)"
    lean_vs_wrk=$(ratio "$(med "${CPU[h1-lean]}")" "$wrk_cpu")
    echo "- target h1-lean <= 1.00x wrk: ${lean_vs_wrk}x, $(verdict "$lean_vs_wrk" 1.00) (paired by run: $(paired "${CPU[h1-lean]}" "${CPU[wrk]}" | tr '\n' ' '))"
    echo
    echo
    fi
    if has_part server; then
    echo "## 2. Server headroom (wrk -t1 -c$CONCURRENCY on CPU $CLIENT_CPU)"
    echo
    echo "| server | req/s | server CPU µs/request | vs nginx | server CPU busy | runs (µs/req) |"
    echo "|---|---:|---:|---:|---:|---|"
    nginx_cpu=$(med "${SCPU[nginx]}")
    for srv in "${SERVERS_ORDER[@]}"; do
        c=$(med "${SCPU[$srv]}")
        printf '| %s | %.0f | %.2f | %sx | %s%% | %s|\n' "$srv" "$(med "${SRPS[$srv]}")" "$c" "$(ratio "$c" "$nginx_cpu")" \
            "$(med "${SBUSY[$srv]}")" "${SCPU[$srv]}"
    done
    s_ratio=$(ratio "$(med "${SCPU[benchgate-serve]}")" "$nginx_cpu")
    echo
    echo "- target reference server CPU per request <= 0.80x nginx's: ${s_ratio}x, $(awk -v r="$s_ratio" 'BEGIN {print (r == "n/a") ? "not measured" : (r+0 <= 0.8) ? "met" : "MISSED"}'); the floor (floor_server.c) at $(ratio "$(med "${SCPU[floor]}")" "$nginx_cpu")x nginx is the least any server spends here"
    echo "- server CPU per request from /proc (10 ms ticks over a ${DURATION} s run); a server below ~90% busy is not the bottleneck: req/s then measures wrk and the loopback round trip, not server headroom; CPU per request does"
    echo
    fi
    if has_part connections; then
    echo "## 3. Connections (closed loop, one trial each, 10 s warmup, ${DURATION} s window; open-file limit $(ulimit -Sn)/$(ulimit -Hn))"
    echo
    echo "| driver | connections | open at once (server's count) | driver peak RSS | bytes per connection | req/s | errors |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for n in $CONNECTION_COUNTS; do
        for kind in "${CONNECTION_DRIVERS[@]}"; do
            line=${CONNS[$kind-$n]}
            if [[ $line == -* ]]; then
                printf '| %s | %s | not measured: %s | | | | |\n' "$kind" "$n" "${line#- }"
            else
                read -r rss per open rps errs <<<"$line"
                printf '| %s | %s | %s | %s MiB | %s | %s | %s |\n' "$kind" "$n" "$open" \
                    "$(awk -v b="$rss" 'BEGIN {printf "%.0f", b / 1048576}')" \
                    "$(awk -v b="$per" 'BEGIN {if (b == "n/a") print b; else printf "%.0f", b}')" "$rps" "$errs"
            fi
        done
    done
    echo
    echo "- bytes per connection = (the driver's peak RSS until its window closed - its RSS just before its first connection) / the connections the server saw open at once (memory_per_connection_bytes)"
    fi
    if has_part memory; then
    echo
    echo "## 4. Memory over time (open loop, $MEMORY_RATE req/s, GET $BODY_PATH, one trial each)"
    echo
    echo "| driver | peak RSS, 5 s | peak RSS, 60 s | 60 s / 5 s | requests (5 s / 60 s) | target <= 1.10x |"
    echo "|---|---:|---:|---:|---:|---|"
    for kind in "${MEMORY_DRIVERS[@]}"; do
        line=${MEMORY[$kind]}
        if [[ $line == -* ]]; then
            printf '| %s | not measured: %s | | | | |\n' "$kind" "${line#- }"
        else
            read -r short long n_short n_long <<<"$line"
            r=$(ratio "$long" "$short")
            printf '| %s | %s MiB | %s MiB | %sx | %s / %s | %s |\n' "$kind" \
                "$(awk -v b="$short" 'BEGIN {printf "%.1f", b / 1048576}')" "$(awk -v b="$long" 'BEGIN {printf "%.1f", b / 1048576}')" \
                "$r" "$n_short" "$n_long" "$(awk -v r="$r" 'BEGIN {print (r == "n/a") ? "not measured" : (r+0 <= 1.1) ? "met" : "MISSED"}')"
        fi
    done
    fi
} >"$WORK/report.md"
mkdir -p "$(dirname "$REPORT")"
cp "$WORK/report.md" "$REPORT"
cat "$REPORT"
