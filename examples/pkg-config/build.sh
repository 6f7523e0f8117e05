#!/usr/bin/env bash
# Builds main.cpp against an installed myattn with pkg-config alone:
#   PKG_CONFIG_PATH=/path/to/prefix/lib/pkgconfig examples/pkg-config/build.sh [OUTPUT]
# --static: libmyattn.a needs what myattn.pc lists as Requires.private / Libs.private (TBB).
set -euo pipefail
src="$(dirname "$0")/main.cpp"
out=${1:-myattn_pkgconfig}
set -x
# shellcheck disable=SC2046 # the flags are meant to be split into words
${CXX:-c++} -std=c++20 -O2 "${src}" -o "${out}" $(pkg-config --cflags --libs --static myattn)
