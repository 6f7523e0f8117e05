#!/usr/bin/env bash
# The README's benchmark command: installs what is missing (python3, the peers oneDNN and Eigen,
# matplotlib), builds myattn_bench (Release, build-bench/), runs the per-ISA kernel and forward
# benchmarks, every runnable ISA and precision, scalar and the peers (PyTorch's too where
# /usr/bin/python3 has torch: tools/bench-torch), and writes this CPU's report and plot,
# and the summary of the reports there, to build-bench/performance/ (docs/performance/ holds
# the committed ones, one per CPU).
# Usage: tools/bench.sh [--quick] [any other tools/bench-report option]
set -euo pipefail
cd "$(dirname "$0")/.."

# A minimal Debian has no python3, the report's interpreter. Debian's is named: the one
# python3-matplotlib belongs to (another python3 may come first on PATH).
tools/install-deps.sh python3
exec /usr/bin/python3 tools/bench-report --output-dir build-bench/performance "$@"
