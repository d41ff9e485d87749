#!/usr/bin/env bash
# Fuzzes the parsers that read outside input (issue 17, point 9) with
# cargo-fuzz (libFuzzer), each target for a bounded time:
#   config          a config file's bytes -> Suite::from_bytes (what `run --config` reads)
#   results         a results file -> RunResults::parse, compare, every renderer
#                   (report mode on a fork's artifact; decodes its histograms)
#   histogram       raw HdrHistogram V2 bytes, base64 -> LatencyHistogram::decode
#   client_result   a command client's result file -> orchestrate::external::parse
#   jmh             benchmark name, newline, JMH JSON -> orchestrate::jmh::parse
#   event           event name byte + payload -> action::event::parse_payload, mode::decide
#   meta            benchgate-meta.json -> action::check_meta
#   server_request  one connection's bytes -> the reference server (server::serve_bytes)
#
# Usage: scripts/fuzz.sh [TARGET...]       (no target: all of them)
#   FUZZ_SECONDS     seconds per target (default 60)
#   FUZZ_TOOLCHAIN   rustup toolchain with -Zsanitizer (default nightly)
#   FUZZ_BEFORE      a command run before the build and before each target, e.g.
#                    one that waits while a benchmark measures on a shared machine
# Not part of scripts/test.sh (minutes, not seconds). Each target's corpus
# (fuzz/corpus/TARGET, not committed) is seeded from the repository's
# fixtures and keeps what earlier runs found. A crash, panic, timeout (10 s
# per input) or allocation over 512 MiB stops the target; the script goes on
# with the others, prints each reproducer and exits 1. Reproduce one with
#   cd fuzz && cargo +nightly fuzz run TARGET artifacts/TARGET/crash-...
# and keep it as a regular test (tests/hostile_inputs.rs).
# Installs cargo-fuzz from crates.io when it is missing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
toolchain=${FUZZ_TOOLCHAIN:-nightly}
fixtures=$root/fixtures
before_each() { if [ -n "${FUZZ_BEFORE:-}" ]; then bash -c "$FUZZ_BEFORE"; fi; }

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

cd "$root/fuzz"
all=$(cargo "+$toolchain" fuzz list)
if [ $# -gt 0 ]; then
    targets=("$@")
    for t in "${targets[@]}"; do
        grep -qx "$t" <<<"$all" || { echo "fuzz.sh: no target $t; the targets: $(echo $all)" >&2; exit 2; }
    done
else
    mapfile -t targets <<<"$all"
fi

# Copies the files given into corpus directory $1 (never over a corpus entry).
seed() {
    local dir=$1
    shift
    mkdir -p "$dir"
    local f
    for f in "$@"; do
        [ -f "$f" ] && cp -n "$f" "$dir/seed-$(basename "$f")"
    done
    return 0
}

# Writes stdin into corpus directory $1 as seed-$2.
seed_text() {
    mkdir -p "$1"
    cat >"$1/seed-$2"
}

seed_corpus() {
    local t=$1 dir=corpus/$1
    case $t in
        config) seed "$dir" "$fixtures"/configs/*.toml "$fixtures"/act/benchgate.toml ;;
        results) seed "$dir" "$fixtures"/results/*.json ;;
        histogram)
            mkdir -p "$dir"
            local f h i=0
            for f in "$fixtures"/results/*.json; do
                for h in $(grep -o '"histogram[a-z_]*": *"[A-Za-z0-9+/=]*"' "$f" | sed 's/.*"\([A-Za-z0-9+/=]*\)"$/\1/'); do
                    i=$((i + 1))
                    base64 -d <<<"$h" >"$dir/seed-$i" 2>/dev/null || rm -f "$dir/seed-$i"
                done
            done
            ;;
        client_result)
            seed_text "$dir" list.json <<'EOF'
{"benchgate_result":1,"requests":4,"ok":3,"errors":{"status_5xx":1,"read":0},"elapsed_s":2.5,"latency_us":[100,250,3000]}
EOF
            # A histogram from the results fixtures, as command clients write it.
            local h
            h=$(grep -oh '"histogram": *"[A-Za-z0-9+/=]*"' "$fixtures"/results/*.json | head -1 | sed 's/.*"\([A-Za-z0-9+/=]*\)"$/\1/')
            printf '{"benchgate_result":1,"requests":100000,"ok":100000,"elapsed_s":1,"latency_histogram":"%s"}' "$h" |
                seed_text "$dir" histogram.json
            ;;
        jmh)
            mkdir -p "$dir"
            local f name
            for f in "$fixtures"/jmh/*.json; do
                name=$(grep -o '"benchmark" *: *"[^"]*"' "$f" | head -1 | sed 's/.*: *"\(.*\)"/\1/')
                { printf '%s\n' "$name"; cat "$f"; } >"$dir/seed-$(basename "$f")"
            done
            ;;
        event)
            mkdir -p "$dir"
            local f byte
            for f in "$fixtures"/events/*.json; do
                # The first byte picks the event name (fuzz_targets/event.rs, NAMES).
                case $(basename "$f") in
                    pull_request*) byte='\x00' ;;
                    push*) byte='\x02' ;;
                    workflow_run*) byte='\x03' ;;
                    schedule*) byte='\x04' ;;
                    *) byte='\x00' ;;
                esac
                { printf "$byte"; cat "$f"; } >"$dir/seed-$(basename "$f")"
                { printf '\x01'; cat "$f"; } >"$dir/seed-target-$(basename "$f")"
            done
            ;;
        meta)
            seed_text "$dir" meta.json <<'EOF'
{"schema":"benchgate-meta","version":2,"repository":"o/r","event":"pull_request","head_sha":"2222222222222222222222222222222222222222","measured_sha":"3333333333333333333333333333333333333333","pr_number":7,"base_ref":"main","base_sha":"1111111","run_id":"42"}
EOF
            ;;
        server_request)
            printf 'GET /bytes/22 HTTP/1.1\r\nhost: x\r\n\r\nGET /status/503 HTTP/1.1\r\nhost: x\r\n\r\n' | seed_text "$dir" get
            printf 'POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\n\r\nabcd' | seed_text "$dir" upload
            printf 'POST /upload HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n' | seed_text "$dir" chunked
            printf 'GET /sha1?size=100 HTTP/1.0\r\n\r\nGET /fault/close-mid-body?size=10 HTTP/1.1\r\n\r\n' | seed_text "$dir" sha1
            printf 'GET /__benchgate/counters HTTP/1.1\r\nhost: x\r\n\r\nPOST /__benchgate/window/start HTTP/1.1\r\ncontent-length: 0\r\n\r\n' | seed_text "$dir" control
            printf 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00' | seed_text "$dir" h2
            ;;
    esac
}

echo "fuzz.sh: building the targets ($toolchain)" >&2
before_each
cargo "+$toolchain" fuzz build

status=0
for t in "${targets[@]}"; do
    seed_corpus "$t"
    echo "fuzz.sh: $t for ${seconds}s, corpus fuzz/corpus/$t ($(ls "corpus/$t" | wc -l) inputs)" >&2
    mkdir -p "artifacts/$t"
    known=$(ls "artifacts/$t")
    before_each
    if ! cargo "+$toolchain" fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -print_final_stats=1; then
        status=1
    fi
    for f in $(comm -13 <(echo "$known") <(ls "artifacts/$t")); do
        status=1
        echo "fuzz.sh: $t FOUND a failing input: fuzz/artifacts/$t/$f" >&2
        echo "  reproduce: cd fuzz && cargo +$toolchain fuzz run $t artifacts/$t/$f" >&2
    done
done
[ $status -eq 0 ] && echo "fuzz.sh: no failure in ${targets[*]}" >&2
exit $status
