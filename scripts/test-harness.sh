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
