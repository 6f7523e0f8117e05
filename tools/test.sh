#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build, and run the whole
# test suite, stage by stage. Each stage is a script in tools/ci/ that can also run alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each stage cost on the 2-core Intel (Emerald Rapids) KVM machine, in a fresh Debian 12,
# with the int8 and bf16 kernels: about 29 minutes in all before the first cuts (the shared
# release tree for install, TSan on the scalar kernels, 30 s of fuzzing, the sanitizer builds'
# kernel objects at -O1), 23.5 minutes after them; 37 minutes later on a Zen 5 guest before the
# ASan tree moved to clang 14 and took the fuzz targets in, 17.3 minutes after
# (docs/tuning.md). The bracketed figures are the latest measured. The total must stay under
# 30 minutes: keep new tests cheap, above all under qemu, and mind the sanitizer build, which
# compiles every kernel at every precision.
stages=(
  tools/ci/format.sh # every tracked C++ file as .clang-format lays it out [11 s]
  tools/ci/optional-peers.sh # the default configure passes with libdnnl-dev but no OpenCL (peer off, one line) [25 s]
  tools/ci/release.sh # Release build, warnings are errors, ctest (every runnable ISA) [2.5 min cold]
  tools/ci/check-objects.sh # no AVX in baseline objects, no weak symbol shared by ISA objects (Release, Debug) [74 s]
  tools/ci/old-cpus.sh # Release as Haswell (avx2), Release and Debug as Nehalem (scalar) under qemu, no SIGILL [5.7 min with a Debug Haswell run too]
  tools/ci/aarch64.sh # cross build for AArch64, whole ctest suite under qemu-aarch64 with neon active [3.2 min]
  tools/ci/install.sh # install to a temp prefix; examples/ via find_package and pkg-config; TBB OFF build + ctest [4.8 min before it reused build/release]
  tools/ci/sanitizers.sh # clang ASan+UBSan Debug build with the fuzz targets, whole ctest suite; TSan build, the [parallel] concurrency tests [5.2 min on Zen 5: ASan 259 s, TSan 48 s; 704 s with gcc's ASan]
  tools/ci/fuzz.sh # libFuzzer targets from the ASan tree: replay corpus + regressions, then fuzz the targets side by side for MYATTN_FUZZ_SECONDS (30) [33 s on Zen 5; 271 s with a tree of its own]
)

for stage in "${stages[@]}"; do
  echo "=== ${stage} ==="
  SECONDS=0
  bash "${stage}"
  echo "=== ${stage}: ok in ${SECONDS}s ==="
done
