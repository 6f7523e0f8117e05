#!/usr/bin/env bash
# Release build with warnings as errors, then the whole ctest suite: every test case with the
# ISA the dispatcher picks, and the whole binary once per compiled ISA (isa/<name>); with the
# Python package, whose pytest suite (ctest's `python`) loops over the ISAs itself. Debian's
# interpreter is named: it is the one python3-numpy and python3-pytest belong to, and another
# python3 may come first on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/install-deps.sh
cmake --preset release -DMYATTN_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build --preset release -j"$(nproc)"
ctest --preset release -j"$(nproc)"
