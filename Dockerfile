# benchgate's container image: the containerized CI tool. It runs `benchgate`
# anywhere a container runs: GitLab CI, `docker run`, and
# GitHub as `uses: docker://...` or through container/action.yml. With no
# arguments it runs `benchgate action` (the GitHub Action's entrypoint); any
# arguments replace that (`docker run IMAGE run --config benchgate.toml`).

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
# tini is PID 1: it reaps orphaned processes (a server under test that forks
# and exits would otherwise leave zombies that keep its process group alive, and
# its stop would time out) and forwards SIGTERM/SIGINT to benchgate, which stops
# the running trial and keeps what was measured.
# ca-certificates, git and tini follow bookworm's security updates; pinning a
# version would break the build when Debian replaces it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git tini \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'
COPY --from=builder /usr/local/bin/benchgate /usr/local/bin/benchgate
# Container actions run as root (the runner mounts /github/workspace and the
# file commands owned by root), so no USER here.
# Exec form; tini forwards the job's cancellation signal to benchgate.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/benchgate"]
CMD ["action"]
