#!/usr/bin/env bash
# The project's test command (README "Quick start"); .ci/run calls it.
#  1. lints action.yml, the workflows and the Dockerfile (scripts/lint.sh);
#  2. installs what the tests need (scripts/install-test-deps.sh: curl, a JDK,
#     the Java/Python/Node test clients' packages, act) and the Rust that
#     Cargo.toml's rust-version declares, with clippy and rustfmt: every cargo
#     call below uses it, so the tests test the compiler that ships;
#  3. tests the harness packages in their own runners, checks fmt, lints with
#     clippy (-D warnings) and builds the tests in one build;
#  4. lints the kits `benchgate init` writes, with the binary that build made;
#  5. runs every test (cargo-nextest, each test a process of its own, several
#     at a time) but the serial set below, with moto's CloudWatch-compatible
#     server on a free 127.0.0.1 port; then the build without default features
#     and its two tests;
#  6. runs the serial set one test at a time, with nothing else running.
# No test runs twice: a failure fails the run. The release archive is a
# build, not a test: CI builds it after this command (.ci/run) and in a job of
# its own (.github/workflows/ci.yml), with scripts/check-msrv.sh --package.
set -euo pipefail
cd "$(dirname "$0")/.."

# The serial set: tests that measure the machine itself and cannot share it
# with another test. Each is named with its reason; a test leaves this set once
# it tolerates a neighbour.
# - action_act: a real Java client's stored A/A within threshold in 5 rounds,
#   through act;
# - harness_packages, example_clients, command_loop: a program's counts
#   within 1% of the server's (example_clients: 3.7% off beside six tests and
#   the release build, load 13; command_loop: per window of 600 ms);
# - window_ack: window acknowledgements under a forced marker lag;
# - validity: a closed loop's CPU share, read as starvation figures;
# - server_under_test: a server under test's rounds, paired A/A;
# - capped_output: a flooding client read as fast as it writes;
# - server, server_hostile: the reference server's service time and idle
#   cut-off within their bounds;
# - inject_cpu: sub-microsecond CPU per request;
# - inject_tail: an injected 20 ms tail against a plain client's p99;
# - verdict_e2e: a Python client's A/A and +15-20% CPU per request in 6 rounds
#   of 300 ms (beside six tests and the release build, load 13, the A/A's
#   throughput read -27% in all 6 pairs, and a caused +20% read -40%).
SERIAL='(binary(ci) & test(/^action_act::/))
  | (binary(gate) & test(/^verdict_e2e::/))
  | (binary(run) & test(/^(harness_packages|example_clients|command_loop|window_ack|validity|server_under_test|capped_output|server|server_hostile|inject_cpu|inject_tail)::/))'

# On CI (a clean clone, everything built once) incremental compilation only
# costs; fewer code generation units in the debug builds do less work twice
# (docs/development.md). A caller's settings win.
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
  export CARGO_PROFILE_DEV_CODEGEN_UNITS="${CARGO_PROFILE_DEV_CODEGEN_UNITS:-4}"
fi

# Stages and their wall-clock times, printed at the end (also on failure).
STAGE="" STAGE_T0=$SECONDS TIMES=""
stage() {
  stage_end
  STAGE=$1 STAGE_T0=$SECONDS
  echo "== $STAGE"
}
stage_end() {
  [ -n "$STAGE" ] || return 0
  TIMES+="$(printf '%5d s  %s' $((SECONDS - STAGE_T0)) "$STAGE")"$'\n'
  STAGE=""
}
JOBS=()
on_exit() {
  local code=$?
  [ -z "$STAGE" ] || { [ "$code" = 0 ] || STAGE+=" (failed)"; }
  stage_end
  for pid in "${JOBS[@]}"; do pkill -TERM -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
  printf '== stage times (%s CPUs, load average %s):\n%s%5d s  total\n' \
    "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$TIMES" "$SECONDS"
}
trap on_exit EXIT

stage "lint: action.yml, workflows, Dockerfile (scripts/lint.sh)"
LINT_INIT_KITS=skip ./scripts/lint.sh

stage "installing test dependencies, the declared Rust and cargo-nextest"
./scripts/install-test-deps.sh
RUSTUP_TOOLCHAIN="$(./scripts/check-msrv.sh --install)"
export RUSTUP_TOOLCHAIN
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest
echo "$(cargo --version), $(cargo nextest --version | head -n 1)"

stage "harness packages: Java runner, pytest, node --test (scripts/test-harness.sh)"
./scripts/test-harness.sh

stage "cargo fmt --check"
cargo fmt --all -- --check

# Clippy and the test build in one: clippy-driver compiles the package's own
# crates (as `cargo clippy` runs it), so they are linted and built in one pass.
# A known lint proves first that this clippy takes -D warnings this way.
stage "cargo clippy -D warnings and the test build, in one"
RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver)"
CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
canary="$(mktemp -d -t benchgate-clippy.XXXXXX)"
echo 'fn main() { let v: Vec<u8> = Vec::new(); if v.len() == 0 {} }' >"$canary/c.rs"
if "$RUSTC_WORKSPACE_WRAPPER" rustc --edition 2021 --emit=metadata -o "$canary/c.rmeta" "$canary/c.rs" 2>"$canary/err" ||
  ! grep -q len_zero "$canary/err"; then
  echo "clippy-driver passed a known lint under CLIPPY_ARGS=$CLIPPY_ARGS: run cargo clippy --all-targets -- -D warnings instead"
  exit 1
fi
rm -rf "$canary"
cargo nextest run --all-targets --locked --no-run

# With the binary the test build made (its test knobs do nothing to `init`).
stage "lint: the workflows and bench/ scripts benchgate init writes (scripts/lint.sh)"
LINT_INIT_KITS=only BENCHGATE_BIN="target/debug/benchgate" ./scripts/lint.sh

stage "moto (CloudWatch) on 127.0.0.1"
MOTO_VERSION="5.2.1" # 5.2 serves CloudWatch's query protocol (see Cargo.toml)
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
MOTO_PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$PYTHON" scripts/moto-server.py -H 127.0.0.1 -p "$MOTO_PORT" >/dev/null 2>&1 &
JOBS+=($!)
for _ in $(seq 1 100); do
  "$PYTHON" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$MOTO_PORT/moto-api/', timeout=1)" 2>/dev/null && break
  sleep 0.2
done
export BENCHGATE_TEST_MOTO_URL="http://127.0.0.1:$MOTO_PORT"
# Dummy credentials: nothing here may reach a real AWS account.
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ROLE_ARN AWS_WEB_IDENTITY_TOKEN_FILE

stage "tests: all but the serial set, ${BENCHGATE_TEST_JOBS:-6} at a time"
cargo nextest run --all-targets --locked -j "${BENCHGATE_TEST_JOBS:-6}" -E "not ($SERIAL)"

# Without default features (no AWS SDK): clippy, then the two tests whose code
# differs (tests/gate/feature_sets.rs keeps that list true). Their build lints
# and builds the library and the binary too; the library's unit tests are not
# built again: their code does not change with the feature (src/publish/mod.rs
# gates the CloudWatch module and its tests whole).
stage "without default features: clippy -D warnings and the tests cloudwatch, publish_config"
cargo nextest run --locked --no-default-features --test cloudwatch --test publish_config \
  -E 'binary(cloudwatch) | binary(publish_config)'

stage "tests: the serial set, one at a time, nothing beside it"
cargo nextest run --all-targets --locked -j 1 -E "$SERIAL"
stage_end
