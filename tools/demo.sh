#!/usr/bin/env bash
# The README's first command: install what is missing, build (Release), run `myattn demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target myattn_cli
build/release/tools/myattn info
build/release/tools/myattn demo
