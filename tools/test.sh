#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build (Release, warnings
# are errors), and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
ctest --preset release -j"$(nproc)"
