#!/usr/bin/env bash
# Runs every roialign test: the native build (all x86 SIMD targets this CPU runs, the C API from C99, the
# torchvision cross-check), the Python package (pip install ., pytest), roialign inside TVM (libroialign_tvm.so,
# roialign.tvm), the OpenVINO extension against ONNX Runtime, consumers of the installed package (C++ and C-only),
# the build without OpenMP, the
# sanitizers and the fuzzer, and the aarch64 build under qemu on a
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

if [ "${ROIALIGN_SKIP_PYTHON:-0}" != "1" ]; then
  echo "== Python package: pip install . into a venv over Debian's python3, pytest against Debian's torchvision"
  # .ci/venv: Debian's packages (numpy, torch, torchvision, pytest) and nothing from /usr/local. pip builds the
  # extension from this checkout with scikit-build-core and nanobind from PyPI, in a build directory of its own.
  py="$build-python"
  rm -rf "$py"
  .ci/venv "$py/venv"
  CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$py/venv/bin/python" -I -m pip install -q --config-settings=build-dir="$py/build" .
  ROIALIGN_REQUIRE_TORCHVISION=1 "$py/venv/bin/python" -I -m pytest -p no:cacheprovider tests/python

  echo "== TVM: libroialign_tvm.so (apache-tvm-ffi) and roialign.tvm.dispatch_roi_align on Relax models (apache-tvm)"
  # apache-tvm and apache-tvm-ffi come from .ci/setup-debian.sh (.peers/); their absence fails this stage.
  if [ ! -d .peers/tvm ] || [ ! -d .peers/tvm_ffi ]; then echo "apache-tvm is not installed in .peers/"; exit 1; fi
  cmake -S . -B "$build" -DROIALIGN_BUILD_TVM_EXTENSION=ON -Dtvm_ffi_DIR="$root/.peers/tvm_ffi/share/cmake/tvm_ffi" \
    >/dev/null
  cmake --build "$build" -j "$jobs" --target roialign_tvm
  ROIALIGN_REQUIRE_TVM=1 ROIALIGN_PEERS_PATH="$root/.peers" \
    ROIALIGN_TVM_LIBRARY="$build/engines/tvm/libroialign_tvm.so" \
    "$py/venv/bin/python" -I -m pytest -p no:cacheprovider tests/python/test_tvm.py
fi

if [ "${ROIALIGN_SKIP_OPENVINO:-0}" != "1" ]; then
  echo "== OpenVINO extension (engines/openvino) on the openvino wheel's C++ SDK; ONNX models vs ONNX Runtime"
  # The wheel (with onnx and onnxruntime) is in .peers/ (.ci/setup-debian.sh). CI must test it: a missing
  # wheel fails here instead of skipping.
  ovsdk="$root/.peers/openvino/cmake"
  if [ ! -f "$ovsdk/OpenVINOConfig.cmake" ]; then
    echo "no OpenVINO SDK at $ovsdk: run .ci/setup-debian.sh (or set ROIALIGN_SKIP_OPENVINO=1)"; exit 1
  fi
  cmake -S . -B "$build" -DROIALIGN_BUILD_OPENVINO_EXTENSION=ON -DOpenVINO_DIR="$ovsdk" >/dev/null
  cmake --build "$build" -j "$jobs" --target roialign_openvino
  ROIALIGN_REQUIRE_OPENVINO=1 ROIALIGN_PEERS_PATH="$root/.peers" \
    ROIALIGN_OPENVINO_EXTENSION="$build/engines/openvino/libroialign_openvino.so" \
    .ci/python -m pytest -p no:cacheprovider -q tests/engines/test_openvino.py
fi

echo "== installed package consumed by an outside project (examples/)"
rm -rf "$build/install" "$build/example"
cmake --install "$build" --prefix "$build/install" >/dev/null
if [ "${ROIALIGN_SKIP_OPENVINO:-0}" != "1" ] && [ ! -f "$build/install/lib/libroialign_openvino.so" ]; then
  echo "the OpenVINO extension was not installed into lib/"; exit 1
fi
cmake -S examples -B "$build/example" -G Ninja -DCMAKE_PREFIX_PATH="$build/install"
cmake --build "$build/example"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_cpp"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_c"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_engine_pool"

echo "== a C-only project consumes the installed shared library (no C++, no OpenMP, no Highway needed)"
rm -rf "$build/c-consumer"
cmake -S tests/c_consumer -B "$build/c-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$build/install"
cmake --build "$build/c-consumer"
LD_LIBRARY_PATH="$build/install/lib" "$build/c-consumer/roialign_c_consumer"

echo "== build without OpenMP (-DROIALIGN_OPENMP=OFF): every test, the install, a C-only consumer"
noomp="$build-no-openmp"
cmake -S . -B "$noomp" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_OPENMP=OFF \
  -DROIALIGN_BUILD_BENCHMARKS=OFF
cmake --build "$noomp" -j "$jobs"
if ldd "$noomp/libroialign.so" | grep -q gomp; then echo "libroialign.so links OpenMP with ROIALIGN_OPENMP=OFF"; exit 1; fi
ctest --test-dir "$noomp" -j "$jobs" --output-on-failure
rm -rf "$noomp/install" "$noomp/c-consumer"
cmake --install "$noomp" --prefix "$noomp/install" >/dev/null
if grep -q fopenmp "$noomp/install/lib/pkgconfig/roialign.pc"; then echo "roialign.pc asks for OpenMP"; exit 1; fi
cmake -S tests/c_consumer -B "$noomp/c-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$noomp/install"
cmake --build "$noomp/c-consumer"
LD_LIBRARY_PATH="$noomp/install/lib" "$noomp/c-consumer/roialign_c_consumer"

echo "== benchmark smoke run (the suite starts and a kernel runs)"
"$build/bench/layout_report" --custom=C=16:H=20:W=24:K=20 --repeats=1 --threads=1 >/dev/null
echo "== FPN workload smoke run (multi-level calls and the level-by-level baseline, every ISA)"
"$build/bench/layout_report" --workloads=fpn --repeats=1 --threads=1 >/dev/null

echo "== the limit holds: no path beats it, in every pool and coordinate mode (layout_report exits 3 if one does)"
for pool in AVG MAX MAX_ONNX; do
  for coord in LEGACY HALF_PIXEL HALF_PIXEL_CENTERED LEGACY_UNCLAMPED; do
    "$build/bench/layout_report" --custom=C=32:H=40:W=48:K=50:ratio=0:pool=$pool:coord=$coord --repeats=3 >/dev/null
  done
done

if [ "${ROIALIGN_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== ASan + UBSan build of the test suite"
  san="$build-asan"
  cmake -S . -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROIALIGN_BUILD_BENCHMARKS=OFF \
    -DROIALIGN_TEST_TORCHVISION=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
  cmake --build "$san" -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir "$san" -j "$jobs" --output-on-failure
fi

if [ "${ROIALIGN_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== ThreadSanitizer: concurrent runs of one kernel, concurrent select/register, caller thread pools"
  # One OpenMP thread per call inside these tests: libgomp is not TSan-instrumented. The thread-pool tests run
  # entirely on pthreads, which TSan sees.
  tsan="$build-tsan"
  cmake -S . -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROIALIGN_BUILD_BENCHMARKS=OFF \
    -DROIALIGN_TEST_TORCHVISION=OFF -DCMAKE_CXX_FLAGS="-fsanitize=thread -DROIALIGN_CONCURRENCY_INNER_THREADS=1" \
    -DCMAKE_C_FLAGS="-fsanitize=thread" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread"
  cmake --build "$tsan" -j "$jobs" --target roialign_tests roialign_threadpool_threads_tests
  TSAN_OPTIONS="halt_on_error=1" "$tsan/tests/roialign_tests" \
    --gtest_filter='Concurrency.*:Strategy.ConcurrentSelectAndRegister:Strategy.CustomNhwcOnlyTarget:ThreadPool.*'
  TSAN_OPTIONS="halt_on_error=1" "$tsan/tests/roialign_threadpool_threads_tests"

  echo "== libFuzzer over the C API, single- and multi-level (${ROIALIGN_FUZZ_SECONDS:-60} s each, clang, ASan+UBSan)"
  fz="$build-fuzz"
  CC=clang CXX=clang++ cmake -S . -B "$fz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROIALIGN_BUILD_TESTS=OFF \
    -DROIALIGN_BUILD_BENCHMARKS=OFF -DROIALIGN_BUILD_FUZZERS=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
  cmake --build "$fz" -j "$jobs" --target fuzz_c_api fuzz_multi_level
  # New inputs go to the build tree; the seed corpora (with every past crash) stay read-only in tests/fuzz.
  # pipefail (set above) makes a crash fail this step despite the tail.
  for target in c_api:corpus multi_level:corpus_multi_level; do
    name=${target%%:*} seeds=${target#*:}
    mkdir -p "$fz/corpus-$name"
    (cd "$fz" && "./tests/fuzz/fuzz_$name" "corpus-$name" "$root/tests/fuzz/$seeds" \
      -max_total_time="${ROIALIGN_FUZZ_SECONDS:-60}" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 2>&1 \
      | tail -n 15)
  done
fi

if [ "${ROIALIGN_SKIP_ARM:-0}" != "1" ]; then
  echo "== aarch64 cross build, tests under qemu-user"
  arm="$build-aarch64"
  cmake -S . -B "$arm" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_BUILD_BENCHMARKS=OFF
  cmake --build "$arm" -j "$jobs"
  # CPU -> the ISA "host" must select there (checked by the strategy test).
  for run in cortex-a72:neon a64fx:sve "max,sve-max-vq=1:sve2" "max,sve-max-vq=2:sve2"; do
    cpu=${run%:*} isa=${run##*:}
    echo "-- qemu -cpu $cpu (expect $isa)"
    cmake -S . -B "$arm" -DROIALIGN_QEMU_CPU="$cpu" >/dev/null
    # qemu emulates SVE about 20x slower than NEON (one planar-path test: 52 s on SVE, 2.7 s on NEON, under
    # -cpu a64fx on a Xeon), so on the SVE CPUs the 16-bit variants of the four largest-data kernel tests are
    # left out; they run on NEON here and natively. Every other test runs on SVE at every dtype, and these four
    # at f32.
    filter="*"
    if [ "$isa" != "neon" ]; then
      filter="-"
      for t in RowBandsThroughRun LargeGrids PlanarTilePathAndBandPathMatchReference RowBandsOfAnySizeMatchReference; do
        filter="$filter*.$t/*_F16:*.$t/*_BF16:"
      done
    fi
    GTEST_FILTER="${filter%:}" ROIALIGN_EXPECT_HOST_ISA=$isa ctest --test-dir "$arm" -j "$jobs" --output-on-failure
  done
fi
echo "== all tests passed"
