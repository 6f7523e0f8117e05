#!/usr/bin/env bash
# libFuzzer targets (tests/fuzz), built in the ASan + UBSan tree (preset asan: clang 14; reused
# when tools/ci/sanitizers.sh has built it): replay the committed seed corpora and crash
# regressions, then fuzz each target for MYATTN_FUZZ_SECONDS (default 30) and fail on any crash,
# leak, timeout or out-of-memory. A failing input is left in build/asan/fuzz/artifacts/<target>/;
# commit it to tests/fuzz/regressions/<target>/ with the fix, and every build's ctest replays it
# from then on (fuzz-replay/<target>).
set -euo pipefail
cd "$(dirname "$0")/../.."

# libclang-rt-14-dev holds libFuzzer (libclang_rt.fuzzer) and the sanitizer runtimes.
tools/install-deps.sh
tools/install-deps.sh clang-14 libclang-rt-14-dev
seconds="${MYATTN_FUZZ_SECONDS:-30}"
targets=(safetensors forward)
out=build/asan/fuzz

cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
ctest --preset asan -R '^fuzz/' # replay corpus and regressions once

# The targets fuzz side by side, one per core (each is one process on one core), so the stage
# costs one MYATTN_FUZZ_SECONDS, not one per target.
fuzz() {
  local target=$1
  local corpus="${out}/corpus/${target}" # grows here; the committed seeds stay as they are
  local artifacts="${out}/artifacts/${target}/"
  mkdir -p "${corpus}" "${artifacts}"
  if ! "build/asan/tests/fuzz/fuzz_${target}" "${corpus}" "tests/fuzz/corpus/${target}" \
      -max_total_time="${seconds}" -max_len=8192 -timeout=20 -rss_limit_mb=2048 \
      -artifact_prefix="${artifacts}" -print_final_stats=1 2>"${out}/${target}.log"; then
    tail -n 60 "${out}/${target}.log"
    echo "fuzz_${target} failed; the input is in ${artifacts}" >&2
    ls -l "${artifacts}" >&2
    return 1
  fi
}
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
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "${out}/${target}.log" || true
done
exit "${failed}"
