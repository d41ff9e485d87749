#!/usr/bin/env bash
# Tests the harness packages in harness/, each in its own language's runner, against
# local servers on 127.0.0.1 (scripts/install-test-deps.sh installs what they need;
# scripts/test.sh runs both):
#   Java    sh harness/java/test.sh (javac + a small runner: "N passed, M failed")
#   Python  python3 -m pytest harness/python/tests (the python3 the package is installed in)
#   Node    node --test harness/node/test/
# Their end-to-end runs through `benchgate run` are tests/run/harness_packages.rs; their
# documented installs, tests/run/harness_install.rs.
# Usage: bash scripts/test-harness.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== harness/java: sh harness/java/test.sh"
sh harness/java/test.sh
echo "== harness/python: pytest"
python3 -m pytest -q -p no:cacheprovider harness/python/tests
echo "== harness/node: node --test"
(cd harness/node && node --test test/)

# The artifacts a registry would receive, built as they would be published
# (tests/house/harness_manifests.rs checks the manifests): the jar (above, by
# test.sh's build.sh), the npm tarball and the wheel, each checked to hold its
# library and nothing of the tests.
artifacts=$(mktemp -d)
trap 'rm -rf "$artifacts"' EXIT
echo "== harness/node: npm pack"
(cd harness/node && npm pack --silent --pack-destination "$artifacts" >/dev/null)
tar -tzf "$artifacts"/benchgate-harness-*.tgz >"$artifacts/tgz.txt"
grep -qx 'package/src/index.js' "$artifacts/tgz.txt" || { echo "npm pack: no src/index.js" >&2; exit 1; }
if grep -q '^package/test/' "$artifacts/tgz.txt"; then echo "npm pack ships the tests" >&2; exit 1; fi
echo "== harness/python: wheel"
python3 -m pip wheel --quiet --no-deps --wheel-dir "$artifacts" harness/python
python3 - "$artifacts" <<'PY'
import glob, sys, zipfile
wheel, = glob.glob(sys.argv[1] + "/benchgate_harness-*.whl")
names = zipfile.ZipFile(wheel).namelist()
for need in ("benchgate_harness/__init__.py", "benchgate_harness/py.typed"):
    assert need in names, f"{wheel} lacks {need}: {names}"
assert not any(n.startswith("tests/") for n in names), f"{wheel} ships the tests"
print(f"{wheel.rsplit('/', 1)[1]}: {len(names)} files")
PY
