# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: cross-build roialign for aarch64 Linux with Debian's cross compilers, and run what it
# builds (tests via ctest) under qemu-user.
#
# Needs (Debian 12, as root):
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install -y crossbuild-essential-arm64 qemu-user \
#       libhwy-dev:arm64 libgtest-dev:arm64 libgomp1:arm64
#
# Use:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DROIALIGN_BUILD_BENCHMARKS=OFF
#   cmake --build build-arm -j2 && ctest --test-dir build-arm
#   (-DROIALIGN_QEMU_CPU=cortex-a72 | a64fx | max,sve-max-vq=2 ... picks the emulated CPU; default "max")
#
# Debian's cross setup is multiarch, not a sysroot: the target's C library and libstdc++ live in
# /usr/aarch64-linux-gnu (found by the cross compiler itself), and the arm64 packages installed as
# "name:arm64" put their libraries and CMake package files in /usr/lib/aarch64-linux-gnu, with their
# (architecture-independent) headers in /usr/include, shared with the host's copies.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ROIALIGN_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${ROIALIGN_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ROIALIGN_CROSS_TRIPLE}-g++)
set(CMAKE_AR ${ROIALIGN_CROSS_TRIPLE}-ar CACHE FILEPATH "Archiver")
set(CMAKE_RANLIB ${ROIALIGN_CROSS_TRIPLE}-ranlib CACHE FILEPATH "Ranlib")
set(CMAKE_STRIP ${ROIALIGN_CROSS_TRIPLE}-strip CACHE FILEPATH "Strip")

# Multiarch: make every find_* look in lib/aarch64-linux-gnu (e.g. /usr/lib/aarch64-linux-gnu/cmake/hwy,
# /usr/lib/aarch64-linux-gnu/cmake/GTest) and never in the host's lib/x86_64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE ${ROIALIGN_CROSS_TRIPLE})

# Search roots: the cross toolchain's own tree first, then the multiarch root "/" (whose /usr/lib/<triple>
# holds the arm64 packages). Programs (qemu, pkg-config, ...) are always the host's; libraries, headers and
# packages are looked up only under the roots, and only in the target's multiarch directories.
set(CMAKE_FIND_ROOT_PATH /usr/${ROIALIGN_CROSS_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (if anything uses it): arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${ROIALIGN_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# try_run(), gtest_discover_tests() and ctest run target binaries under qemu-user.
#   -L /usr/aarch64-linux-gnu: the program interpreter /lib/ld-linux-aarch64.so.1 is taken from the cross
#     C library (libc6-arm64-cross), the one the binaries were linked against.
#   -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib: libc.so.6 (and libstdc++, libgomp) must come from that
#     same tree. Without it the cross loader searches /lib/aarch64-linux-gnu first and loads libc6:arm64's
#     libc.so.6 (pulled in by libhwy1:arm64; a different Debian build, e.g. 2.36-9+deb12u14 against the
#     loader's 2.36-8cross1). That loader/libc mismatch (GLIBC_PRIVATE _rtld_global layout) makes the first
#     pthread_create() spin forever, so every OpenMP parallel region hangs.
#   libhwy.so.1 is found in /usr/lib/aarch64-linux-gnu, the loader's default multiarch path.
set(ROIALIGN_QEMU_CPU "max" CACHE STRING
    "qemu-aarch64 -cpu value for running target binaries (e.g. max, cortex-a72, a64fx, max,sve-max-vq=2)")
find_program(ROIALIGN_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static REQUIRED)
# Two settings for speed under emulation, neither of which changes what roialign's own code runs:
# - OMP_WAIT_POLICY=passive: idle OpenMP threads sleep. Spinning emulated threads took the host cores from the
#   working ones while two test shards ran side by side.
# - GLIBC_TUNABLES=glibc.cpu.name=generic: glibc's generic memcpy/memset instead of its A64FX ones, whose SVE
#   instructions qemu emulates slowly (the kernels' SVE paths are Highway's, not glibc's).
# One test under -cpu a64fx (RowBandsThroughRun, NEON, f32) took 13.1 s without them and 4.8 s with them.
set(CMAKE_CROSSCOMPILING_EMULATOR
    "${ROIALIGN_QEMU_AARCH64};-L;/usr/${ROIALIGN_CROSS_TRIPLE};-E;LD_LIBRARY_PATH=/usr/${ROIALIGN_CROSS_TRIPLE}/lib;-E;OMP_WAIT_POLICY=passive;-E;GLIBC_TUNABLES=glibc.cpu.name=generic;-cpu;${ROIALIGN_QEMU_CPU}")
