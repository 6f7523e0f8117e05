#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, and run the whole
# test suite, stage by stage. Each stage is a script in tools/ci/ that can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each stage cost, measured one stage at a time on the 2-core Intel (Emerald Rapids) KVM
# machine while it was shared (load 6 to 13, so an idle machine is faster), from a clean build
# directory. The total must stay under 30 minutes: keep new tests cheap, above all under qemu.
stages=(
  tools/ci/format.sh # every tracked C++ file as .clang-format lays it out [1 s]
  tools/ci/optional-peers.sh # the default configure passes with libdnnl-dev but no OpenCL (peer off, one line) [5 s]
  tools/ci/release.sh # Release build, warnings are errors, ctest (every runnable ISA) [3.8 min]
  tools/ci/check-objects.sh # no AVX in baseline objects, no weak symbol shared by ISA objects (Release, Debug) [50 s]
  tools/ci/old-cpus.sh # Release and Debug under qemu as Haswell (avx2) and Nehalem (scalar), no SIGILL [19 min with the runs one at a time; two at a time not yet measured]
  tools/ci/aarch64.sh # cross build for AArch64, whole ctest suite under qemu-aarch64 with neon active [not remeasured]
  tools/ci/install.sh # install to a temp prefix; examples/ via find_package and pkg-config; TBB OFF build + ctest [not remeasured]
  tools/ci/sanitizers.sh # ASan+UBSan Debug build, whole ctest suite; TSan build, the [parallel] concurrency tests [not remeasured]
  tools/ci/fuzz.sh # clang libFuzzer targets: replay corpus + regressions, then fuzz each MYATTN_FUZZ_SECONDS (60) [not remeasured]
)

for stage in "${stages[@]}"; do
  echo "=== ${stage} ==="
  SECONDS=0
  bash "${stage}"
  echo "=== ${stage}: ok in ${SECONDS}s ==="
done
