#!/usr/bin/env bash
# libFuzzer targets (tests/fuzz, preset fuzz: clang 14 with ASan + UBSan): replay the committed
# seed corpora and crash regressions, then fuzz each target for MYATTN_FUZZ_SECONDS (default 30)
# and fail on any crash, leak, timeout or out-of-memory. A failing input is left in
# build/fuzz/artifacts/<target>/; commit it to tests/fuzz/regressions/<target>/ with the fix, and
# every build's ctest replays it from then on (fuzz-replay/<target>).
set -euo pipefail
cd "$(dirname "$0")/../.."

# libclang-rt-14-dev holds libFuzzer (libclang_rt.fuzzer) and the sanitizer runtimes.
tools/install-deps.sh clang-14 libclang-rt-14-dev cmake make libxsimd-dev libtbb-dev nlohmann-json3-dev
seconds="${MYATTN_FUZZ_SECONDS:-30}"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
ctest --test-dir build/fuzz --output-on-failure # replay corpus and regressions once

# The targets fuzz side by side, one per core (each is one process on one core), so the stage
# costs one MYATTN_FUZZ_SECONDS, not one per target.
fuzz() {
  local target=$1
  local corpus="build/fuzz/corpus/${target}" # grows here; the committed seeds stay as they are
  local artifacts="build/fuzz/artifacts/${target}/"
  mkdir -p "${corpus}" "${artifacts}"
  if ! "build/fuzz/tests/fuzz/fuzz_${target}" "${corpus}" "tests/fuzz/corpus/${target}" \
      -max_total_time="${seconds}" -max_len=8192 -timeout=20 -rss_limit_mb=2048 \
      -artifact_prefix="${artifacts}" -print_final_stats=1 2>"build/fuzz/${target}.log"; then
    tail -n 60 "build/fuzz/${target}.log"
    echo "fuzz_${target} failed; the input is in ${artifacts}" >&2
    ls -l "${artifacts}" >&2
    return 1
  fi
}
targets=(safetensors forward)
lanes=$(($(nproc) >= ${#targets[@]} ? ${#targets[@]} : 1))
echo "--- fuzzing ${targets[*]} for ${seconds}s each, ${lanes} at a time"
pids=()
failed=0
for target in "${targets[@]}"; do
  if [ "${lanes}" -gt 1 ]; then
    fuzz "${target}" &
    pids+=($!)
  else
    fuzz "${target}" || failed=1
  fi
done
for pid in "${pids[@]}"; do wait "${pid}" || failed=1; done
for target in "${targets[@]}"; do
  echo "--- fuzz_${target}"
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "build/fuzz/${target}.log" || true
done
exit "${failed}"
