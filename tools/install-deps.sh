#!/usr/bin/env bash
# Installs, with apt-get, whichever of the given Debian packages are missing (none: does nothing).
# Usage: tools/install-deps.sh [PACKAGE...]   (default: what building and testing myattn needs)
set -euo pipefail

packages=("$@")
if [ ${#packages[@]} -eq 0 ]; then
  packages=(g++ cmake make libxsimd-dev libtbb-dev catch2 libbenchmark-dev nlohmann-json3-dev
            python3-dev pybind11-dev python3-numpy python3-pytest)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
