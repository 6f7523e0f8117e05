#!/usr/bin/env bash
# Sanitizer builds (docs/contract.md): the whole ctest suite under AddressSanitizer +
# UndefinedBehaviorSanitizer (preset asan: Debug, -fno-sanitize-recover=all, so any report fails
# its test), then the concurrency tests ([parallel], named "concurrency: ...") under
# ThreadSanitizer (preset tsan, suppressions in tools/tsan.supp).
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/install-deps.sh
jobs="$(nproc)"

SECONDS=0
cmake --preset asan >/dev/null
cmake --build --preset asan -j"${jobs}"
ctest --preset asan -j"${jobs}"
echo "--- asan + ubsan: ${SECONDS}s"

SECONDS=0
cmake --preset tsan >/dev/null
# Only what the concurrency tests need: their own test binary.
cmake --build --preset tsan -j"${jobs}" --target myattn_concurrency_tests
ctest --preset tsan -j"${jobs}"
echo "--- tsan: ${SECONDS}s"
