#!/usr/bin/env bash
# Runs every roialign test: the native build (all x86 SIMD targets this CPU runs, the C API from C99, the
# torchvision cross-check), a consumer of the installed package, and the aarch64 build under qemu on a
# NEON-only CPU, SVE at 512 bits, and SVE2 at 128 and 256 bits. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${ROIALIGN_JOBS:-$(nproc)}
build=${ROIALIGN_BUILD_DIR:-$root/build-ci}

echo "== native build and tests"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_BUILD_BENCHMARKS=ON
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" -j "$jobs" --output-on-failure

echo "== installed package consumed by an outside project (examples/)"
rm -rf "$build/install" "$build/example"
cmake --install "$build" --prefix "$build/install" >/dev/null
cmake -S examples -B "$build/example" -G Ninja -DCMAKE_PREFIX_PATH="$build/install"
cmake --build "$build/example"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_cpp"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_c"

echo "== benchmark smoke run (the suite starts and a kernel runs)"
"$build/bench/layout_report" --custom=C=16:H=20:W=24:K=20 --repeats=1 --threads=1 >/dev/null

if [ "${ROIALIGN_SKIP_ARM:-0}" != "1" ]; then
  echo "== aarch64 cross build, tests under qemu-user"
  arm="$build-aarch64"
  cmake -S . -B "$arm" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_BUILD_BENCHMARKS=OFF
  cmake --build "$arm" -j "$jobs"
  for cpu in cortex-a72 a64fx "max,sve-max-vq=1" "max,sve-max-vq=2"; do
    echo "-- qemu -cpu $cpu"
    cmake -S . -B "$arm" -DROIALIGN_QEMU_CPU="$cpu" >/dev/null
    ctest --test-dir "$arm" -j "$jobs" --output-on-failure
  done
fi
echo "== all tests passed"
