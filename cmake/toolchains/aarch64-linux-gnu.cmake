# Cross-compiling for AArch64 Linux on a Debian x86-64 host, with Debian's multiarch packages:
#   g++-aarch64-linux-gnu, qemu-user, and the :arm64 -dev packages (tools/ci/aarch64.sh).
# There is no separate sysroot: the target's headers and libraries live in the host's /usr
# (/usr/include, /usr/lib/aarch64-linux-gnu), which Debian's cross compiler searches already.
#
#   cmake --preset aarch64 && cmake --build --preset aarch64 && ctest --preset aarch64
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(_triple aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${_triple}-gcc)
set(CMAKE_CXX_COMPILER ${_triple}-g++)
# find_package/find_library look in lib/aarch64-linux-gnu (libtbb, TBB's CMake config), never in
# the host's lib/x86_64-linux-gnu; arch-independent configs (/usr/share/cmake, /usr/lib/cmake:
# nlohmann_json, Catch2) are found as usual.
set(CMAKE_LIBRARY_ARCHITECTURE ${_triple})

# No CMAKE_FIND_ROOT_PATH: the "sysroot" is / itself. With the architecture above, find_package
# and find_library search <prefix>/lib/aarch64-linux-gnu and never lib/x86_64-linux-gnu, so a
# missing :arm64 package fails the configure instead of silently picking the host's x86 copy.

# ctest, catch_discover_tests and the tests' MYATTN_CLI run target binaries through this.
# Plain qemu-aarch64, never `-L /usr/aarch64-linux-gnu`: with libc6:arm64 installed that mixes
# two glibc builds and TBB's parallel_for spins forever (docs/platforms.md).
find_program(MYATTN_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${MYATTN_QEMU_AARCH64})
