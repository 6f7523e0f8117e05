#!/usr/bin/env bash
# Every C++ file of the project is as .clang-format (clang-format 14, Debian 12's) lays it out.
# Fix with: tools/ci/format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/install-deps.sh clang-format
mapfile -t files < <(find include src tests bench tools examples python -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) | sort)
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run --Werror "${files[@]}"
fi
echo "format: ${#files[@]} files as .clang-format lays them out"
