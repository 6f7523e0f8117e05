# Which SIMD ISAs this build compiles kernels for, and the flags of each.
#
# Every ISA gets one translation unit (src/isa/<isa>.cpp) built with its own flags; the rest of
# the library is built for the baseline (x86-64 / armv8-a), so one binary runs on any CPU of
# the family and picks its kernels at run time.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_x86 ON)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(_arm ON)
endif()

option(MYATTN_ENABLE_AVX2 "Compile AVX2+FMA kernels" ${_x86})
option(MYATTN_ENABLE_AVX512 "Compile AVX-512 kernels" ${_x86})
option(MYATTN_ENABLE_NEON "Compile NEON kernels" ${_arm})

set(MYATTN_ISA_FLAGS_avx2 -mavx2 -mfma)
set(MYATTN_ISA_FLAGS_avx512 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma)
set(MYATTN_ISA_FLAGS_neon "") # Advanced SIMD is part of the AArch64 baseline

set(MYATTN_ISAS)
foreach(isa avx2 avx512 neon)
  string(TOUPPER ${isa} _up)
  if(MYATTN_ENABLE_${_up})
    list(APPEND MYATTN_ISAS ${isa})
  endif()
endforeach()
