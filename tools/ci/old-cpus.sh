#!/usr/bin/env bash
# Older x86-64 CPUs, for real: runs the Release build as a Haswell (AVX2+FMA, no AVX-512: the
# dispatcher must pick avx2), and the Release and the Debug builds as a Nehalem (no AVX: it must
# pick scalar), under Debian's qemu-x86_64, which emulates those CPU models' instruction sets (TCG; it may not
# implement AVX-512 at all, so this is how the paths of CPUs without AVX-512 are checked).
# For each build and CPU: `myattn info` must name the expected ISA, forcing a better one must be
# refused (exit 2), `myattn demo` must run, and every test case of every test binary but the
# dense sweeps must pass, with the CLI it spawns running on the same emulated CPU
# (MYATTN_TEST_CLI_PREFIX, tests/support/cli.hpp). Any SIGILL fails the stage.
#
# Each code path runs once per build, on the oldest model that reaches it: the Nehalem runs
# scalar and everything outside the kernels with no AVX at all, so the Haswell runs the suite
# with avx2 forced (MYATTN_ISA), which keeps the kernel tests from running scalar's kernels
# a second time, on a CPU that would show less. (Emulated, the suite is slow: that repetition
# cost minutes.) For the same reason the dense sweeps (tests tagged [sweep]) are left out: they
# check arithmetic that the native release stage checks on every ISA this host runs, while
# what emulation adds (the dispatch, no SIGILL, the ODR trap) shows in every other test, and
# they were half of each Haswell run.
#
# Release: build/release, reused as the release stage left it (built when missing). Debug:
# build/debug (preset `debug`), where the ODR trap of per-ISA objects would show.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(uname -m)" != x86_64 ]; then
  echo "old-cpus: x86-64 only (host is $(uname -m)); skipped"
  exit 0
fi
jobs=$(nproc)
tools/install-deps.sh
tools/install-deps.sh qemu-user

if [ ! -x build/release/tests/myattn_tests ] || [ ! -x build/release/tools/myattn ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release -j"${jobs}"
elif [ -n "$(find src include tests tools/cli -newer build/release/tests/myattn_tests -print -quit)" ]; then
  echo "old-cpus: warning: build/release is older than the sources; run tools/ci/release.sh first" >&2
fi
# Debug: everything but the benchmarks (not run here; saves a minute of compiling).
cmake --preset debug -DMYATTN_BUILD_BENCH=OFF >/dev/null
cmake --build --preset debug -j"${jobs}"

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# The CPU models. qemu warns on stderr for each feature of a model that TCG does not implement
# (Haswell: pcid, x2apic, tsc-deadline, invpcid and TSX's hle/rtm, all irrelevant to user code);
# the CLI's stderr is part of what the tests check, so those features are switched off.
declare -A models=(
  [Haswell]="Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"
  [Nehalem]="Nehalem"
)

# check BUILD_DIR CPU EXPECTED_ISA REFUSED_ISA [TEST_ISA]: the tests with MYATTN_ISA=TEST_ISA if given.
check() {
  local dir=$1 cpu=$2 want=$3 refused=$4 test_isa=${5:-}
  local qemu=(qemu-x86_64 -cpu "${models[$cpu]}")
  local tag="${dir#build/} on ${cpu}" scratch="$logs/${dir#build/}-${cpu}"
  local info status
  # Failures return explicitly: checks run in the background, where `set -e` does not apply.
  info=$("${qemu[@]}" "$dir/tools/myattn" info) || { echo "FAIL ${tag}: myattn info failed" >&2; return 1; }
  echo "--- ${tag}: myattn info"
  echo "${info}"
  grep -q "^active isa: *${want} " <<<"${info}" ||
    { echo "FAIL ${tag}: the active ISA is not ${want}" >&2; return 1; }
  # An ISA this CPU cannot run is refused, never silently replaced.
  status=0
  MYATTN_ISA=${refused} "${qemu[@]}" "$dir/tools/myattn" info >/dev/null 2>"$scratch.err" || status=$?
  [ "${status}" -eq 2 ] ||
    { echo "FAIL ${tag}: MYATTN_ISA=${refused} gave status ${status}, not 2" >&2; cat "$scratch.err" >&2; return 1; }
  echo "--- ${tag}: myattn demo"
  "${qemu[@]}" "$dir/tools/myattn" demo || { echo "FAIL ${tag}: myattn demo failed" >&2; return 1; }
  # Every Catch test binary, whole (myattn_tests, myattn_alloc_tests, ...).
  local bin
  for bin in "$dir"/tests/myattn_*tests; do
    echo "--- ${tag}: $(basename "$bin"), every test case but [sweep]${test_isa:+ (MYATTN_ISA=${test_isa})}"
    status=0
    SECONDS=0
    env ${test_isa:+MYATTN_ISA=${test_isa}} MYATTN_TEST_CLI_PREFIX="${qemu[*]}" \
      timeout 1200 "${qemu[@]}" "$bin" '~[sweep]' >"$scratch.tests" 2>&1 || status=$?
    echo "$(tail -n 2 "$scratch.tests" | head -n 1) [${SECONDS}s]"
    if [ "${status}" -ne 0 ]; then
      tail -n 60 "$scratch.tests" >&2
      case ${status} in
        132) echo "FAIL ${tag}: $(basename "$bin") died of SIGILL" >&2 ;;
        124) echo "FAIL ${tag}: $(basename "$bin") timed out" >&2 ;;
        *) echo "FAIL ${tag}: $(basename "$bin") exited with ${status}" >&2 ;;
      esac
      return 1
    fi
    # A CLI child that died of SIGILL fails its test too; this names the cause.
    if grep -qi 'illegal instruction' "$scratch.tests"; then
      echo "FAIL ${tag}: SIGILL in a child of $(basename "$bin")" >&2
      return 1
    fi
  done
  echo "--- ${tag}: ok"
}

# The three runs, slowest first (emulated AVX2 is several times slower than emulated scalar
# code, and Debug slower than Release), two at a time where there are two cores: each run is
# one emulated thread nearly all the time, so two halve the stage's wall time.
#
# Debug runs as a Nehalem only: any AVX code that reached a baseline object shows there, and an
# AVX-512 copy of a helper shared with the avx2 objects is what check-objects.sh refuses in the
# Debug objects already; the Debug run as a Haswell was the stage's longest, for nothing
# those two do not check.
runs=(
  "build/release Haswell avx2 avx512 avx2"
  "build/debug Nehalem scalar avx2"
  "build/release Nehalem scalar avx2"
)
lanes=$((jobs >= 2 ? 2 : 1))
for run in "${runs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${lanes}" ]; do wait -n || true; done
  read -r dir cpu want refused test_isa <<<"${run}"
  name="${dir#build/}-${cpu}"
  echo "old-cpus: started ${dir#build/} on ${cpu}"
  (
    status=0
    SECONDS=0
    check "${dir}" "${cpu}" "${want}" "${refused}" "${test_isa}" >"$logs/${name}.out" 2>&1 || status=$?
    echo "${status}" >"$logs/${name}.status"
    echo "old-cpus: ${dir#build/} on ${cpu} done in ${SECONDS}s (status ${status})"
  ) &
done
wait
failed=0
for run in "${runs[@]}"; do
  read -r dir cpu _ <<<"${run}"
  name="${dir#build/}-${cpu}"
  cat "$logs/${name}.out"
  [ "$(cat "$logs/${name}.status")" = 0 ] || failed=1
done
exit "${failed}"
