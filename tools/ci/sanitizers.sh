#!/usr/bin/env bash
# Sanitizer builds (docs/contract.md): the whole ctest suite under AddressSanitizer +
# UndefinedBehaviorSanitizer (preset asan: clang 14, Debug, -fno-sanitize-recover=all, so any
# report fails its test; the same tree holds the libFuzzer targets that tools/ci/fuzz.sh runs),
# then the concurrency tests ([parallel], named "concurrency: ...") under ThreadSanitizer
# (preset tsan, suppressions in tools/tsan.supp).
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/install-deps.sh
# libclang-rt-14-dev holds the sanitizer runtimes and libFuzzer (libclang_rt.fuzzer).
tools/install-deps.sh clang-14 libclang-rt-14-dev
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
