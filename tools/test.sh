#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, and run the whole
# test suite, stage by stage. Each stage is a script in tools/ci/ that can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=(
  tools/ci/format.sh # every tracked C++ file as .clang-format lays it out
  tools/ci/optional-peers.sh # the default configure passes with libdnnl-dev but no OpenCL (peer off, one line)
  tools/ci/release.sh # Release build, warnings are errors, ctest (every runnable ISA)
  tools/ci/check-objects.sh # no AVX in baseline objects, no weak symbol shared by ISA objects (Release, Debug)
  tools/ci/old-cpus.sh # Release and Debug under qemu as Haswell (avx2) and Nehalem (scalar), no SIGILL
  tools/ci/aarch64.sh # cross build for AArch64, whole ctest suite under qemu-aarch64 with neon active
  tools/ci/install.sh # install to a temp prefix; examples/ via find_package and pkg-config; TBB OFF build + ctest
  tools/ci/sanitizers.sh # ASan+UBSan Debug build, whole ctest suite; TSan build, the [parallel] concurrency tests
  tools/ci/fuzz.sh # clang libFuzzer targets: replay corpus + regressions, then fuzz each MYATTN_FUZZ_SECONDS (60)
)

for stage in "${stages[@]}"; do
  echo "=== ${stage} ==="
  SECONDS=0
  bash "${stage}"
  echo "=== ${stage}: ok in ${SECONDS}s ==="
done
