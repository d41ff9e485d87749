#!/usr/bin/env bash
# The project's test command (README "Quick start"); .ci/run calls it.
# Installs nothing beyond the Rust toolchain for now: every test runs against
# benchgate's own reference server and raw TCP peers on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --all-targets --locked
