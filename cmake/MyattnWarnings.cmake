# Warnings for our own targets; MYATTN_WERROR (on in CI and the presets) makes them errors.
# -Wrestrict is off: GCC 12 reports false overlaps inside std::string's operator+ at -O2
# (GCC PR 105329), in code that only concatenates strings.
function(myattn_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                           $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict> $<$<BOOL:${MYATTN_WERROR}>:-Werror>)
endfunction()
