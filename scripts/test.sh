#!/usr/bin/env bash
# The project's test command (README "Quick start"); .ci/run calls it.
# Installs what the tests need (curl, a JDK, Debian's Apache HttpClient 5 and
# HdrHistogram jars, Python's requests; builds the Java example clients), then
# runs fmt, clippy and every test. All servers are local (127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing test dependencies"
./scripts/install-test-deps.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --all-targets --locked
