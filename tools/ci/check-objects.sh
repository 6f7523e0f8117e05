#!/usr/bin/env bash
# Checks the objects of libmyattn.a for the two ways per-ISA translation units break older CPUs:
#  1. a baseline (non-ISA) object containing AVX / AVX-512 code: any VEX/EVEX instruction
#     (mnemonic v*), any ymm/zmm register or AVX-512 mask register (k0-k7, k* mask instructions);
#  2. the ODR trap (docs/platforms.md): a weak symbol (nm W/V/u) defined in more than
#     one ISA object, or in an ISA object and a baseline object; the linker keeps one copy, which
#     may be the AVX-encoded one, for every caller.
# Checks build/release (reused from the release stage when present, built otherwise) and
# build/debug (library target only; -O0 is where the ODR trap appears).
# Usage: tools/ci/check-objects.sh [BUILD_DIR...]
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(uname -m)" != x86_64 ]; then
  echo "check-objects: x86-64 only (host is $(uname -m)); nothing to check"
  exit 0
fi
tools/install-deps.sh binutils

if [ $# -gt 0 ]; then
  dirs=("$@")
else
  if [ ! -f build/release/src/libmyattn.a ]; then
    tools/install-deps.sh
    cmake --preset release >/dev/null
    cmake --build --preset release -j"$(nproc)" --target myattn
  fi
  tools/install-deps.sh
  cmake --preset debug -DMYATTN_BUILD_BENCH=OFF >/dev/null # as tools/ci/old-cpus.sh configures it
  cmake --build --preset debug -j"$(nproc)" --target myattn
  dirs=(build/release build/debug)
fi

# Weak symbols every object with C++ exception tables carries: DW.ref.__gxx_personality_v0 and
# DW.ref.<typeinfo> are data (a pointer to the personality routine / a typeinfo), never code.
allowed_weak='^DW\.ref\.'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# Prints "<mnemonic>\t<operands>" for each AVX / AVX-512 instruction of an object file.
avx_instructions() {
  objdump -d --no-show-raw-insn "$1" | awk -F'\t' '
    /^ *[0-9a-f]+:\t/ {
      n = split($2, w, " "); i = 1
      while (i < n && w[i] ~ /^(lock|rep|repz|repnz|repe|repne|notrack|bnd|data16|addr32|[cdefgs]s)$/) i++
      m = w[i]; ops = substr($2, index($2, m) + length(m))
      avx = (m ~ /^v/ && m !~ /^(verr|verw|vm(call|launch|resume|read|write|xoff|xon|ptrld|ptrst|clear|func|run|load|save|mcall))$/)
      mask = (m ~ /^k(add|and|andn|mov|not|or|ortest|shiftl|shiftr|test|unpck|xnor|xor)[bwdq]?/)
      if (avx || mask || ops ~ /%(y|z)mm[0-9]|%k[0-7]([^0-9]|$)/) print m "\t" ops
    }'
}

for dir in "${dirs[@]}"; do
  lib="$dir/src/libmyattn.a"
  [ -f "$lib" ] || { echo "check-objects: $lib not found (build it first)" >&2; exit 1; }
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$dir/CMakeCache.txt")
  mapfile -t baseline < <(find "$dir/src/CMakeFiles/myattn.dir" -name '*.o' | sort)
  mapfile -t isa_objs < <(find "$dir/src/CMakeFiles" -path '*/myattn_*.dir/*' -name '*.o' | sort)
  echo "== $dir ($build_type): ${#baseline[@]} baseline objects, ${#isa_objs[@]} ISA objects"
  if [ ${#isa_objs[@]} -eq 0 ]; then
    echo "FAIL: $dir has no ISA object to check (configured with MYATTN_ENABLE_AVX2/AVX512=OFF?)" >&2
    failed=1
  fi

  # Every member of libmyattn.a is one of the objects checked here: a new source file cannot
  # slip past (members are named by their basename).
  members=$(ar t "$lib" | sort)
  known=$(for o in "${baseline[@]}" "${isa_objs[@]}"; do basename "$o"; done | sort)
  if [ "$members" != "$known" ]; then
    echo "FAIL: the members of $lib are not the objects found under $dir/src/CMakeFiles:" >&2
    diff <(echo "$members") <(echo "$known") >&2 || true
    failed=1
  fi

  # 1. Baseline objects: no AVX / AVX-512.
  for o in "${baseline[@]}"; do
    name=${o#"$dir/src/CMakeFiles/myattn.dir/"}
    avx_instructions "$o" >"$tmp/avx"
    count=$(wc -l <"$tmp/avx")
    if [ "$count" -ne 0 ]; then
      echo "FAIL: baseline object $name has $count AVX/AVX-512 instructions, e.g.:" >&2
      sort "$tmp/avx" | uniq -c | sort -rn | head -5 >&2
      failed=1
    else
      echo "   baseline $name: $(objdump -d "$o" | grep -c $'^ *[0-9a-f]*:\t') instructions, no AVX/AVX-512"
    fi
  done

  # 2. ISA objects: their weak symbols, each defined in one ISA object and no baseline object.
  : >"$tmp/isa_weak"
  for o in "${isa_objs[@]}"; do
    isa=$(basename "$o" .cpp.o)
    avx=$(avx_instructions "$o" | wc -l)
    nm --defined-only "$o" | awk '$2 ~ /^[WVu]$/ {print $3}' | sort -u >"$tmp/weak.$isa"
    grep -Ev "$allowed_weak" "$tmp/weak.$isa" | sed "s/\$/ $isa/" >>"$tmp/isa_weak" || true
    echo "   isa $isa: $avx AVX/AVX-512 instructions, $(wc -l <"$tmp/weak.$isa") weak symbols" \
      "($(grep -cEv "$allowed_weak" "$tmp/weak.$isa" || true) besides DW.ref.*)"
    if [ "$avx" -eq 0 ]; then
      echo "FAIL: ISA object $isa has no AVX instruction at all: were its flags applied?" >&2
      failed=1
    fi
  done
  dups=$(awk '{n[$1]++; where[$1] = where[$1] " " $2} END {for (s in n) if (n[s] > 1) print s ":" where[s]}' \
    "$tmp/isa_weak")
  if [ -n "$dups" ]; then
    echo "FAIL: weak symbols defined in more than one ISA object:" >&2
    c++filt <<<"$dups" | head -20 >&2
    failed=1
  fi
  for o in "${baseline[@]}"; do nm --defined-only "$o"; done | awk '{print $NF}' | sort -u >"$tmp/base_syms"
  shared=$(awk '{print $1}' "$tmp/isa_weak" | sort -u | comm -12 - "$tmp/base_syms")
  if [ -n "$shared" ]; then
    echo "FAIL: weak symbols of ISA objects also defined in baseline objects:" >&2
    c++filt <<<"$shared" | head -20 >&2
    failed=1
  fi
  [ -z "$dups$shared" ] && echo "   no weak symbol defined twice across the ISA objects or with a baseline object"
done

if [ "$failed" -ne 0 ]; then
  echo "check-objects: FAILED" >&2
  exit 1
fi
echo "check-objects: ok"
