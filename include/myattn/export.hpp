// MYATTN_EXPORT marks the public API. The library is compiled with -fvisibility=hidden, so in a
// shared libmyattn only what carries this mark is exported; in the static libmyattn.a it is what
// stays visible when the archive is linked into a consumer's own shared library.
#pragma once

#if __cplusplus < 202002L
#error "myattn needs C++20: compile with -std=c++20 (CMake's myattn::myattn target asks for it)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MYATTN_EXPORT __attribute__((visibility("default")))
#else
#define MYATTN_EXPORT
#endif
