#!/usr/bin/env bash
# Checks the crate's lib and bins (what `cargo install` and the image's builder
# compile) with
# exactly the Rust that Cargo.toml's `rust-version` declares, with default
# features and without, so that a dependency update that needs a newer compiler
# fails here instead of in users' builds and the image's builder
# (scripts/check-rust-version.py checks that the Dockerfile, README and release
# workflow name that same version). rustup installs the toolchain when missing
# (minimal profile). Exit 0 ok, 1 the build failed, 2 no toolchain.
#
# Usage: scripts/check-msrv.sh [--package TARGET | --no-default-features | --install]
#   no option: `cargo +<rust-version> check --locked --lib --bins`, with
#     default features and then with --no-default-features, in its own target
#     directory (target/msrv), which keeps the main build's artifacts intact;
#   --package TARGET: the default features only, as the release archive built
#     with that Rust (scripts/package.sh TARGET under
#     RUSTUP_TOOLCHAIN=<rust-version>), as the release workflow builds it: one
#     release build that is both the packaging check and the default features'
#     rust-version check, for TARGET (a musl build differs from a glibc one by
#     the allocator only musl builds use, mimalloc, and by the target's own
#     code paths in dependencies);
#   --no-default-features: the check without default features only;
#   --install: only installs that Rust when missing, with clippy and rustfmt,
#     and prints its toolchain name (the rust-version) on stdout, alone.
# scripts/test.sh calls --install, then formats, lints, builds and tests with
# that Rust (RUSTUP_TOOLCHAIN set to what --install printed): its test build
# is also this check with default features, its build without them the check
# without; and it calls --package at nice 19 in the background.
set -euo pipefail
cd "$(dirname "$0")/.."

# What to do: both (no option), package, no-default-features or install.
mode=both package_target=""
case "${1:-}" in
  "") ;;
  --package)
    mode=package package_target="${2:?--package needs a target triple}"
    ;;
  --no-default-features) mode=no-default-features ;;
  --install) mode=install ;;
  *)
    echo "usage: scripts/check-msrv.sh [--package TARGET | --no-default-features | --install]" >&2
    exit 2
    ;;
esac

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
if [ "$mode" = install ]; then
  # scripts/test.sh formats, lints and tests with this Rust too.
  for component in clippy rustfmt; do
    if ! rustup component list --toolchain "$msrv" --installed 2>/dev/null | grep -q "^$component"; then
      say "adding $component to Rust $msrv with rustup"
      rustup component add --toolchain "$msrv" "$component" >&2 || {
        say "rustup could not add $component to Rust $msrv"
        exit 2
      }
    fi
  done
  say "Rust $msrv is installed, with clippy and rustfmt"
  echo "$msrv"
  exit 0
fi
# What to do when the crate does not build with it (one wording, for both
# ways of checking).
advise() {
  say "Raise rust-version (and the Dockerfile, README and release workflow with it;"
  say "scripts/check-rust-version.py lists them) or pin the dependency that needs a newer Rust."
}
fail() {
  say "the crate does not build with Rust $msrv, the rust-version Cargo.toml declares."
  advise
  exit 1
}
msrv_dir="${BENCHGATE_MSRV_TARGET_DIR:-target/msrv}"
if [ "$mode" = package ]; then
  say "default features: scripts/package.sh $package_target with Rust $msrv (RUSTUP_TOOLCHAIN=$msrv)"
  if ! RUSTUP_TOOLCHAIN="$msrv" ./scripts/package.sh "$package_target"; then
    say "scripts/package.sh $package_target failed with Rust $msrv (its error is above)."
    say "If cargo failed to compile the crate, it does not build with the rust-version Cargo.toml declares."
    advise
    exit 1
  fi
elif [ "$mode" = both ]; then
  say "cargo +$msrv check --locked --lib --bins"
  CARGO_TARGET_DIR="$msrv_dir" cargo "+$msrv" check --locked --lib --bins --quiet || fail
fi
if [ "$mode" != package ]; then
  say "cargo +$msrv check --locked --lib --bins --no-default-features"
  CARGO_TARGET_DIR="$msrv_dir" cargo "+$msrv" check --locked --lib --bins --no-default-features --quiet || fail
fi
say "ok: builds with Rust $msrv"
