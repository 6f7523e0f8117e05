# Which SIMD ISAs this build compiles kernels for, and the flags of each.
#
# Every ISA gets one translation unit (src/isa/<isa>.cpp) built with its own flags; the rest of
# the library is built for the baseline (x86-64 / armv8-a), so one binary runs on any CPU of
# the family and picks its kernels at run time. The ISA's row in src/registry.hpp says what it
# needs of the CPU; here, one line each says which processors it is built for and with what.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_family x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(_family arm)
else()
  set(_family none)
endif()

set(MYATTN_ISAS)
# myattn_isa(<name> <family> <description> <flags>...): option MYATTN_ENABLE_<NAME>, on by
# default on that family; the enabled ISAs go to MYATTN_ISAS, their flags to MYATTN_ISA_FLAGS_<name>.
function(myattn_isa name family description)
  string(TOUPPER ${name} _up)
  if(family STREQUAL _family)
    set(_default ON)
  else()
    set(_default OFF)
  endif()
  option(MYATTN_ENABLE_${_up} "Compile ${description} kernels" ${_default})
  if(MYATTN_ENABLE_${_up})
    set(MYATTN_ISAS ${MYATTN_ISAS} ${name} PARENT_SCOPE)
    set(MYATTN_ISA_FLAGS_${name} ${ARGN} PARENT_SCOPE)
  endif()
endfunction()

# GCC 12 flags the deliberately undefined `__Y = __Y` of _mm512_undefined_ps() once it is inlined
# (avx512fintrin.h): false positives, silenced for the AVX-512 object only (docs/platforms.md).
set(_gcc_avx512_quiet $<$<CXX_COMPILER_ID:GNU>:-Wno-uninitialized> $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
set(_avx512 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma ${_gcc_avx512_quiet})
myattn_isa(avx512 x86 "AVX-512 (F, BW, DQ, VL) + FMA3" ${_avx512})
myattn_isa(avx2 x86 "AVX2 + FMA3" -mavx2 -mfma)
myattn_isa(neon arm "NEON" "") # Advanced SIMD is part of the AArch64 baseline

# Kernel sets of an ISA that need an extension beyond its flags (its registry rows name the CPU
# feature): src/isa/<name>.cpp, compiled whenever the ISA is, with the ISA's flags and the
# extension's. They go to MYATTN_KERNEL_SETS: objects and MYATTN_HAVE_<NAME> like an ISA's, but no
# ISA of their own (MYATTN_ISA and the per-ISA test runs name ISAs). Option MYATTN_ENABLE_<NAME>,
# on by default, leaves one out (e.g. to benchmark the kernel set it is preferred to).
set(MYATTN_KERNEL_SETS)
function(myattn_kernels name isa description)
  string(TOUPPER ${name} _up)
  option(MYATTN_ENABLE_${_up} "Compile ${description} kernels (where ${isa}'s are)" ON)
  if(isa IN_LIST MYATTN_ISAS AND MYATTN_ENABLE_${_up})
    set(MYATTN_KERNEL_SETS ${MYATTN_KERNEL_SETS} ${name} PARENT_SCOPE)
    set(MYATTN_ISA_FLAGS_${name} ${ARGN} PARENT_SCOPE)
  endif()
endfunction()
myattn_kernels(avx512vnni avx512 "AVX512-VNNI int8" ${_avx512} -mavx512vnni)
myattn_kernels(avx512amx avx512 "AMX int8" ${_avx512} -mavx512vnni -mamx-tile -mamx-int8)
myattn_kernels(avx512bf16 avx512 "AVX512-BF16 bf16" ${_avx512} -mavx512bf16)
myattn_kernels(avx2vnni avx2 "AVX-VNNI int8" -mavx2 -mfma -mavxvnni)
myattn_kernels(neondot neon "NEON dot product int8" -march=armv8.2-a+dotprod)
