#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, and run the whole
# test suite, stage by stage. Each stage is a script in tools/ci/ that can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each stage cost on the 2-core Intel (Emerald Rapids) KVM machine, in a fresh Debian 12
# after tools/demo.sh (sanitizers and fuzz beside another build): about 27 minutes in all. The
# total must stay under 30 minutes: keep new tests cheap, above all under qemu.
stages=(
  tools/ci/format.sh # every tracked C++ file as .clang-format lays it out [6 s]
  tools/ci/optional-peers.sh # the default configure passes with libdnnl-dev but no OpenCL (peer off, one line) [5 s]
  tools/ci/release.sh # Release build, warnings are errors, ctest (every runnable ISA) [1.6 min after demo.sh built the library; 3.8 min cold on a loaded machine]
  tools/ci/check-objects.sh # no AVX in baseline objects, no weak symbol shared by ISA objects (Release, Debug) [41 s]
  tools/ci/old-cpus.sh # Release and Debug under qemu as Haswell (avx2) and Nehalem (scalar), no SIGILL [8.0 min]
  tools/ci/aarch64.sh # cross build for AArch64, whole ctest suite under qemu-aarch64 with neon active [3.3 min, with its packages installed]
  tools/ci/install.sh # install to a temp prefix; examples/ via find_package and pkg-config; TBB OFF build + ctest [2.0 min]
  tools/ci/sanitizers.sh # ASan+UBSan Debug build, whole ctest suite; TSan build, the [parallel] concurrency tests [7.5 min]
  tools/ci/fuzz.sh # clang libFuzzer targets: replay corpus + regressions, then fuzz the targets side by side for MYATTN_FUZZ_SECONDS (60) [2.1 min]
)

for stage in "${stages[@]}"; do
  echo "=== ${stage} ==="
  SECONDS=0
  bash "${stage}"
  echo "=== ${stage}: ok in ${SECONDS}s ==="
done
