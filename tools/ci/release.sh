#!/usr/bin/env bash
# Release build with warnings as errors, then the whole ctest suite: every test case with the
# ISA the dispatcher picks, and the whole binary once per compiled ISA (isa/<name>).
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
ctest --preset release -j"$(nproc)"
