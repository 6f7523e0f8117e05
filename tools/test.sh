#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, and run the whole
# test suite, stage by stage. Each stage is a script in tools/ci/ that can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=(
  tools/ci/release.sh # Release build, warnings are errors, ctest (every runnable ISA)
)

for stage in "${stages[@]}"; do
  echo "=== ${stage} ==="
  SECONDS=0
  bash "${stage}"
  echo "=== ${stage}: ok in ${SECONDS}s ==="
done
