#!/usr/bin/env bash
# Fuzzes the parsers that read outside input (issue 17, point 9; issue 30,
# point 8) with cargo-fuzz (libFuzzer), each target for a bounded time:
#   config          a config file's bytes -> Suite::from_bytes (what `run --config` reads)
#   results         a results file's bytes -> RunResults::parse_bytes, compare, every
#                   renderer (report mode on a fork's artifact; decodes its histograms)
#   json_scan       untrusted JSON -> files::json::scan, the limits checked before
#                   serde_json builds anything, against serde_json as the reference
#   baseline_index  a baseline index (data branch, local store) -> Index::parse
#   histogram       raw HdrHistogram V2 bytes, base64 -> LatencyHistogram::decode
#   client_result   a command client's result file -> orchestrate::external::parse
#   jmh             benchmark name, newline, JMH JSON -> orchestrate::jmh::parse
#   jmh_results     trial byte + a JMH result file -> results::jmh::parse (what compare,
#                   merge and report mode read), the run read back as a store writes it,
#                   merged with a copy of itself, compared and rendered
#   event           event name byte + payload -> action::event::parse_payload, mode::decide
#   meta            benchgate-meta.json -> action::check_meta
#   server_request  one connection's bytes -> the reference server (server::serve_bytes)
#
# Usage: scripts/fuzz.sh [TARGET...]       (no target: all of them)
#   FUZZ_SECONDS     seconds per target (default 60); each target is also killed
#                    at FUZZ_SECONDS + 300 whatever libFuzzer does
#   FUZZ_TOOLCHAIN   rustup toolchain to build with (-Zsanitizer needs nightly
#                    features). Default: an installed nightly, else stable with
#                    RUSTC_BOOTSTRAP=1 (nightly features on a stable compiler);
#                    the script says which it used
#   FUZZ_BEFORE      a command run before the build and before each target, e.g.
#                    one that waits while a benchmark measures on a shared machine
# Not part of scripts/test.sh (minutes, not seconds). Each target's corpus
# (fuzz/corpus/TARGET, not committed) is seeded from the repository's
# fixtures and keeps what earlier runs found. A crash, panic, timeout (10 s
# per input) or allocation over 512 MiB stops the target; the script goes on
# with the others, prints each reproducer and exits 1. At the end it prints
# one line per target: seconds, executions, corpus size, findings (the logs
# are in fuzz/logs/). Reproduce a finding with the command it prints, e.g.
#   cd fuzz && cargo +nightly fuzz run TARGET artifacts/TARGET/crash-...
# and keep it as a regular test (tests/gate/hostile_inputs.rs).
# Installs cargo-fuzz from crates.io when it is missing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
fixtures=$root/fixtures
before_each() { if [ -n "${FUZZ_BEFORE:-}" ]; then bash -c "$FUZZ_BEFORE"; fi; }
case $seconds in
    '' | *[!0-9]*) echo "fuzz.sh: FUZZ_SECONDS=$seconds is not a whole number of seconds" >&2; exit 2 ;;
esac

# The toolchain: the one asked for, else an installed nightly, else stable
# with RUSTC_BOOTSTRAP=1. Never one that would have to be downloaded.
installed=$(rustup toolchain list 2>/dev/null | cut -d' ' -f1) || {
    echo "fuzz.sh: needs rustup (to pick the toolchain)" >&2
    exit 2
}
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
    toolchain=$FUZZ_TOOLCHAIN
    grep -q -e "^$toolchain\$" -e "^$toolchain-" <<<"$installed" || {
        echo "fuzz.sh: FUZZ_TOOLCHAIN=$toolchain is not installed (installed: ${installed//$'\n'/ })" >&2
        exit 2
    }
    how="FUZZ_TOOLCHAIN"
elif nightly=$(grep -m1 '^nightly' <<<"$installed"); then
    toolchain=$nightly
    how="an installed nightly"
else
    toolchain=stable
    how="no nightly installed: stable with RUSTC_BOOTSTRAP=1"
fi
if [ "$(rustup run "$toolchain" rustc -Vv | sed -n 's/^release: .*-//p')" != nightly ]; then
    export RUSTC_BOOTSTRAP=1
fi
version=$(rustup run "$toolchain" rustc --version)
echo "fuzz.sh: toolchain $toolchain ($how): $version${RUSTC_BOOTSTRAP:+, RUSTC_BOOTSTRAP=1}" >&2

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz from crates.io" >&2
    cargo install cargo-fuzz --locked
fi

cd "$root/fuzz"
all=$(cargo "+$toolchain" fuzz list)
if [ $# -gt 0 ]; then
    targets=("$@")
    for t in "${targets[@]}"; do
        grep -qx "$t" <<<"$all" || { echo "fuzz.sh: no target $t; the targets: ${all//$'\n'/ }" >&2; exit 2; }
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
        json_scan)
            # The first byte picks the limits (fuzz_targets/json_scan.rs):
            # even the results file's, odd small ones with rules by place.
            mkdir -p "$dir"
            local f
            for f in "$fixtures"/results/*.json; do
                { printf '\x00'; cat "$f"; } >"$dir/seed-results-$(basename "$f")"
            done
            printf '\x01{"results":[{"client":"ab","trials":[1,2]}],"x":{"id":"a"},"config":{"k":["\\u00e9\\ud83d\\ude00"]}}' |
                seed_text "$dir" small.json
            ;;
        baseline_index)
            # The first byte picks how a version 1 index is read: even as the
            # data branch wrote it, odd as a local store did.
            printf '\x00{"schema":"benchgate-baseline-index","version":2,"branch":"main","entries":[{"sha":"%s","started_at":"2025-03-14T12:00:00Z","run_id":"3","file":"%s.json","bytes":921000,"histograms_stripped":true}]}' \
                cccccccccccccccccccccccccccccccccccccccc cccccccccccccccccccccccccccccccccccccccc | seed_text "$dir" v2.json
            printf '\x00{"schema":"benchgate-baseline-index","version":1,"branch":"main","entries":[{"sha":"b","started_at":"2025-03-14T11:00:00Z","run_id":"2","file":"b.json","bytes":4100,"histograms_stripped":false}]}' |
                seed_text "$dir" data-branch-v1.json
            printf '\x01{"schema":"benchgate-baseline-index","version":1,"branch":"main","entries":[{"sha":"1","started_at":"2025-03-14T10:00:00Z","run_id":"run-1","file":"1-run-1.json"}]}' |
                seed_text "$dir" local-v1.json
            ;;
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
        jmh_results)
            # The first byte picks what a trial is (fuzz_targets/jmh_results.rs):
            # even a fork, odd an iteration.
            mkdir -p "$dir"
            local f
            for f in "$fixtures"/jmh/*.json; do
                { printf '\x00'; cat "$f"; } >"$dir/seed-forks-$(basename "$f")"
                { printf '\x01'; cat "$f"; } >"$dir/seed-iterations-$(basename "$f")"
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

# libFuzzer's final stats line `stat::NAME: N` in log $1.
stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -1; }

status=0
summary=()
mkdir -p logs
for t in "${targets[@]}"; do
    seed_corpus "$t"
    echo "fuzz.sh: $t for ${seconds}s, corpus fuzz/corpus/$t ($(ls "corpus/$t" | wc -l) inputs)" >&2
    mkdir -p "artifacts/$t"
    known=$(ls "artifacts/$t")
    before_each
    log=logs/$t.log
    start=$(date +%s)
    if ! timeout --kill-after=30 $((seconds + 300)) cargo "+$toolchain" fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -print_final_stats=1 2>&1 | tee "$log" | { grep -v '^#[0-9]' || true; } >&2; then
        status=1
    fi
    took=$(($(date +%s) - start))
    found=0
    for f in $(comm -13 <(echo "$known") <(ls "artifacts/$t")); do
        status=1
        found=$((found + 1))
        echo "fuzz.sh: $t FOUND a failing input: fuzz/artifacts/$t/$f" >&2
        echo "  reproduce: cd fuzz && cargo +$toolchain fuzz run $t artifacts/$t/$f" >&2
    done
    summary+=("$(printf '%-15s %5ss %12s executions %6s inputs in corpus  %s finding(s)' \
        "$t" "$took" "$(stat "$log" number_of_executed_units)" "$(ls "corpus/$t" | wc -l)" "$found")")
done
echo "fuzz.sh: $version${RUSTC_BOOTSTRAP:+ (RUSTC_BOOTSTRAP=1)}, FUZZ_SECONDS=$seconds" >&2
printf '  %s\n' "${summary[@]}" >&2
[ $status -eq 0 ] && echo "fuzz.sh: no failure in ${targets[*]}" >&2
exit $status
