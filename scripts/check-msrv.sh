#!/usr/bin/env bash
# Checks the crate (`cargo check --locked --lib --bins`: what `cargo install`
# and the image's builder compile; tests and dev-dependencies are built with the
# current Rust only) with exactly the Rust that Cargo.toml's `rust-version`
# declares, with default features and without, so that a dependency update
# that needs a newer compiler fails here instead of in users' builds and the image's builder
# (scripts/check-rust-version.py checks that the Dockerfile, README and release
# workflow name that same version). rustup installs the toolchain when missing
# (minimal profile). Its own target directory (target/msrv) keeps the main
# build's artifacts intact. Exit 0 ok, 1 the build failed, 2 no toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

msrv="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["package"]["rust-version"])')"
say() { echo "check-msrv: $*" >&2; }
if ! command -v rustup >/dev/null; then
  say "needs rustup to install Rust $msrv (Cargo.toml's rust-version)"
  exit 2
fi
if ! rustup run "$msrv" rustc --version >/dev/null 2>&1; then
  say "installing Rust $msrv (Cargo.toml's rust-version) with rustup"
  rustup toolchain install "$msrv" --profile minimal --no-self-update >&2 || {
    say "rustup could not install Rust $msrv"
    exit 2
  }
fi
say "cargo +$msrv check --locked --lib --bins (default features, then --no-default-features)"
export CARGO_TARGET_DIR="${BENCHGATE_MSRV_TARGET_DIR:-target/msrv}"
if ! cargo "+$msrv" check --locked --lib --bins --quiet ||
  ! cargo "+$msrv" check --locked --lib --bins --no-default-features --quiet; then
  say "the crate does not build with Rust $msrv, the rust-version Cargo.toml declares."
  say "Either raise rust-version (and the Dockerfile, README and release workflow with it;"
  say "scripts/check-rust-version.py lists them) or pin the dependency that needs a newer Rust."
  exit 1
fi
say "ok: builds with Rust $msrv"
