#!/usr/bin/env bash
# AArch64 for real: cross-build with Debian's g++-aarch64-linux-gnu (preset `aarch64`, toolchain
# cmake/toolchains/aarch64-linux-gnu.cmake) and run the whole ctest suite under qemu-aarch64:
# every test case with the dispatcher's own choice (neon), and the whole binary once per ISA
# (isa/neon, isa/scalar), which includes `myattn run` on every PyTorch case. Then checks that
# `myattn info` under qemu says neon is active. Installs what is missing, and only that.
set -euo pipefail
cd "$(dirname "$0")/../.."

jobs=$(nproc)

# Host side: the cross compiler, qemu-user, CMake, and the header-only packages whose CMake
# configs are architecture-independent (Catch2, nlohmann-json).
tools/install-deps.sh cmake make catch2 nlohmann-json3-dev g++-aarch64-linux-gnu qemu-user

# Target side: multiarch :arm64 packages (libtbb-dev brings libc6/libstdc++6:arm64, which also
# give qemu-aarch64 its /lib/ld-linux-aarch64.so.1; libxsimd-dev:arm64 only for its CMake config
# in /usr/lib/aarch64-linux-gnu/cmake). The arm64 architecture is added only when one is missing;
# tools/install-deps.sh then runs apt-get update + install, again only when something is missing.
arm64_packages=(libtbb-dev:arm64 libxsimd-dev:arm64)
missing=()
for p in "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "adding the arm64 architecture to dpkg"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo dpkg --add-architecture arm64
  fi
  # Installing libtbb-dev:arm64 may also upgrade a few host systemd/udev packages (Multi-Arch:
  # same needs equal versions): expected.
  tools/install-deps.sh "${missing[@]}"
fi

cmake --preset aarch64 >/dev/null
cmake --build --preset aarch64 -j"${jobs}"

# Under qemu-aarch64 the dispatcher must pick neon on its own.
info=$(qemu-aarch64 build/aarch64/tools/myattn info)
echo "${info}"
grep -q '^compiled isas:.*\bneon\b' <<<"${info}" || { echo "aarch64: neon is not compiled in" >&2; exit 1; }
grep -q '^active isa: *neon ' <<<"${info}" || { echo "aarch64: the active ISA is not neon" >&2; exit 1; }
qemu-aarch64 build/aarch64/tools/myattn demo

# Timings under qemu mean nothing; correctness does. Always a timeout (docs/platforms.md: a wrong
# qemu -L makes TBB spin forever).
ctest --preset aarch64 -j"${jobs}" --timeout 900
