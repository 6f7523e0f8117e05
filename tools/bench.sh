#!/usr/bin/env bash
# The README's benchmark command: installs what is missing (python3, the peers oneDNN and Eigen,
# matplotlib), builds myattn_bench (Release, build-bench/), runs the per-ISA kernel and forward
# benchmarks, every runnable ISA, scalar and the peers, and writes the report and its plot to
# build-bench/performance.md and build-bench/performance.png (docs/ holds the committed ones).
# Usage: tools/bench.sh [--quick] [any other tools/bench-report option]
set -euo pipefail
cd "$(dirname "$0")/.."

# A minimal Debian has no python3, the report's interpreter.
tools/install-deps.sh python3
exec python3 tools/bench-report --output build-bench/performance.md --plot build-bench/performance.png "$@"
