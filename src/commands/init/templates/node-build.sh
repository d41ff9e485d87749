#!/bin/sh
# Builds the benchmark client: installs benchgate's Node harness (from the
# tarball in bench/; it has no dependencies) into bench/node_modules. benchgate
# runs it as the client's `setup`, once in each commit's tree (base and head),
# before the rounds; commit it. Written by `benchgate init` @@VERSION@@.
#
# bench/ needs the harness tarball, committed with the project: in a clone of
# benchgate ($BENCHGATE), from this project's root:
#   npm pack --pack-destination bench "$BENCHGATE/harness/node"
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

tarball=""
for t in "$here"/benchgate-harness-*.tgz; do
  [ -f "$t" ] && tarball=$t
done
[ -n "$tarball" ] || {
  echo "bench/build.sh: no benchgate-harness-*.tgz in bench/; from a clone of benchgate (\$BENCHGATE) run: npm pack --pack-destination bench \"\$BENCHGATE/harness/node\", and commit the tarball" >&2
  exit 2
}
npm install --prefix "$here" --no-save --no-package-lock --no-audit --no-fund --silent "$tarball"

# TODO: if bench/quickstart.mjs imports your client library, install the
# project's dependencies too, for example: npm ci
echo "bench/build.sh: bench/node_modules ready" >&2
