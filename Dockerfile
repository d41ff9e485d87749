# benchgate's GitHub Action image: `benchgate action` is the entrypoint.

# Builder: a Rust that builds the AWS SDK (the crate's rust-version, checked by scripts/check-rust-version.py).
FROM rust:1.91-bookworm AS builder
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
COPY src ./src
COPY schema ./schema
RUN cargo build --release --locked --bin benchgate \
    && cp target/release/benchgate /usr/local/bin/benchgate

# Runtime: minimal Debian with CA certificates (GitHub API, CloudWatch over TLS)
# and git: on a pull request benchgate lists the base commit's ancestors
# (`git rev-list`, with `fetch-depth: 0` in actions/checkout) to find the nearest
# older baseline. The runner mounts the workspace owned by its own user while the
# action runs as root, so git's safe.directory check would refuse the checkout
# ("dubious ownership"); this single-purpose image trusts it.
FROM debian:bookworm-slim
# ca-certificates and git follow bookworm's security updates; pinning a version
# would break the build when Debian replaces it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'
COPY --from=builder /usr/local/bin/benchgate /usr/local/bin/benchgate
# Container actions run as root (the runner mounts /github/workspace and the
# file commands owned by root), so no USER here.
# Exec form: benchgate is PID 1 and receives SIGTERM directly on cancellation.
ENTRYPOINT ["/usr/local/bin/benchgate", "action"]
