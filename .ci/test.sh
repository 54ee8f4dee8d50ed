#!/usr/bin/env bash
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
# The test command (docs/testing.md says what runs where and how long each stage takes).
#   .ci/test.sh          on this CPU: the native build and its tests (every x86 SIMD target this CPU runs, the C API
#                        from C99, the torchvision cross-check, the limit), the Python package (pip install .,
#                        pytest), roialign inside TVM, OpenVINO and PyTorch (Debian's 1.13, and 2.x from PyPI in a
#                        venv), consumers of the installed package (C++ and C-only), smoke runs of the layout report
#   .ci/test.sh --all    all of that, then what CI adds: the build without OpenMP, ASan+UBSan (the test suite and
#                        the three libFuzzer targets), ThreadSanitizer, and the aarch64 build under qemu on a NEON-only
#                        CPU, SVE at 512 bits and SVE2 at 128 and 256 bits (.ci/run runs this)
# Exits non-zero on the first failure. Each stage prints its duration.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
all=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    -h|--help) sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument '$arg' (.ci/test.sh [--all])" >&2; exit 2 ;;
  esac
done
jobs=${ROIALIGN_JOBS:-$(nproc)}
build=${ROIALIGN_BUILD_DIR:-$root/build-ci}

# A full disk fails pip or the linker late and obscurely, so a run without the room its stages take (mostly the torch
# 2.x venv, and pip's wheels unpacked in the temporary directory first) refuses at once (docs/testing.md, "Disk").
need_gib=${ROIALIGN_NEED_DISK_GIB:-15}
for dir in "$root" "$(dirname "$build")" "${TMPDIR:-/tmp}"; do
  free_gib=$(( $(df -Pk "$dir" | awk 'NR == 2 { print $4 }') / 1048576 ))
  if [ "$free_gib" -lt "$need_gib" ]; then
    echo "only $free_gib GiB free under $dir: .ci/test.sh needs about $need_gib GiB there (docs/testing.md, \"Disk\")" >&2
    exit 1
  fi
done
started=$(date +%s) stage_started=$started stage_name=""
# `stage NAME`: ends the previous stage (printing its duration) and starts NAME.
stage() {
  local now; now=$(date +%s)
  if [ -n "$stage_name" ]; then echo "-- $stage_name: $((now - stage_started)) s"; fi
  stage_name=$1 stage_started=$now
  if [ -n "$1" ]; then echo "== $1"; fi
}

# The native build's one configuration, declared here for every stage that uses "$build": the library, its tests and
# the layout report, and the engines' extensions that the TVM, OpenVINO and PyTorch 1.13 stages test, each on the
# SDK that .ci/setup-debian.sh puts in .peers/ (Debian's libtorch-dev for PyTorch). The native stage builds them
# all once; the engine stages only run their tests, and the install check installs what this configuration names.
# Each extension is set ON or OFF explicitly, so a build directory left by a run with other ROIALIGN_SKIP_* switches
# gets this run's configuration. An extension is ON exactly when a stage below tests it: TVM with the Python stage
# (its tests run in the Python stage's venv), OpenVINO unless skipped, PyTorch 1.13 with both (its tests need the
# venv and run ONNX models in OpenVINO with the extension).
tvm=OFF openvino=OFF torch=OFF
engines=()
if [ "${ROIALIGN_SKIP_PYTHON:-0}" != "1" ]; then
  # apache-tvm and apache-tvm-ffi come from .ci/setup-debian.sh (.peers/); their absence fails the run.
  if [ ! -d .peers/tvm ] || [ ! -d .peers/tvm_ffi ]; then echo "apache-tvm is not installed in .peers/"; exit 1; fi
  tvm=ON engines+=(-Dtvm_ffi_DIR="$root/.peers/tvm_ffi/share/cmake/tvm_ffi")
fi
if [ "${ROIALIGN_SKIP_OPENVINO:-0}" != "1" ]; then
  # The wheel (with onnx and onnxruntime) is in .peers/ (.ci/setup-debian.sh). CI must test it: a missing
  # wheel fails here instead of skipping.
  ovsdk="$root/.peers/openvino/cmake"
  if [ ! -f "$ovsdk/OpenVINOConfig.cmake" ]; then
    echo "no OpenVINO SDK at $ovsdk: run .ci/setup-debian.sh (or set ROIALIGN_SKIP_OPENVINO=1)"; exit 1
  fi
  openvino=ON engines+=(-DOpenVINO_DIR="$ovsdk")
fi
if [ "${ROIALIGN_SKIP_PYTHON:-0}" != "1" ] && [ "$openvino" = ON ]; then torch=ON; fi

stage "native build and tests (extensions: TVM $tvm, OpenVINO $openvino, PyTorch 1.13 $torch)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_BUILD_BENCHMARKS=ON \
  -DROIALIGN_BUILD_TVM_EXTENSION=$tvm -DROIALIGN_BUILD_OPENVINO_EXTENSION=$openvino \
  -DROIALIGN_BUILD_TORCH_EXTENSION=$torch "${engines[@]}"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" -j "$jobs" --output-on-failure

if [ "${ROIALIGN_SKIP_PYTHON:-0}" != "1" ]; then
  stage "Python package: pip install . into a venv over Debian's python3, pytest against Debian's torchvision"
  # .ci/venv: Debian's packages (numpy, torch, torchvision, pytest) and nothing from /usr/local. pip builds the
  # extension from this checkout with scikit-build-core and nanobind from PyPI, in a build directory of its own.
  py="$build-python"
  rm -rf "$py"
  .ci/venv "$py/venv"
  # The package must ship its torch operators (ROIALIGN_PYTHON_TORCH_OPS=ON: Debian's torch and libtorch-dev are
  # there); the PyTorch stage below tests them, from the package.
  CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$py/venv/bin/python" -I -m pip install -q --config-settings=build-dir="$py/build" \
    --config-settings=cmake.define.ROIALIGN_PYTHON_TORCH_OPS=ON .
  # The package has its torch operators here, so test_training.py must run, not skip.
  ROIALIGN_REQUIRE_TORCHVISION=1 ROIALIGN_REQUIRE_TORCH_OPS=1 "$py/venv/bin/python" -I -m pytest \
    -p no:cacheprovider tests/python --ignore=tests/python/test_torch_ops.py
  # torchvision's own RoIAlign tests (its test_ops.py, fetched by .ci/setup-debian.sh) with roialign substituted.
  "$py/venv/bin/python" -I tests/python/torchvision_tests/run.py --tests .peers/torchvision-tests

  stage "TVM: libroialign_tvm.so (apache-tvm-ffi) and roialign.tvm.dispatch_roi_align on Relax models (apache-tvm)"
  # libroialign_tvm.so: built by the native stage (the configuration above).
  ROIALIGN_REQUIRE_TVM=1 ROIALIGN_PEERS_PATH="$root/.peers" \
    ROIALIGN_TVM_LIBRARY="$build/engines/tvm/libroialign_tvm.so" \
    "$py/venv/bin/python" -I -m pytest -p no:cacheprovider tests/python/test_tvm.py
fi

if [ "$openvino" = ON ]; then
  stage "OpenVINO extension (engines/openvino) on the openvino wheel's C++ SDK; ONNX models vs ONNX Runtime"
  # libroialign_openvino.so: built by the native stage on the wheel's C++ SDK (the configuration above).
  ROIALIGN_REQUIRE_OPENVINO=1 ROIALIGN_PEERS_PATH="$root/.peers" \
    ROIALIGN_OPENVINO_EXTENSION="$build/engines/openvino/libroialign_openvino.so" \
    .ci/python -m pytest -p no:cacheprovider -q tests/engines/test_openvino.py tests/engines/test_openvino_rotated.py
fi

if [ "$torch" = ON ]; then
  stage "PyTorch operators (engines/torch, Debian's libtorch-dev): torch.ops.roialign, roialign.nn, TorchScript in "\
"Python and C++, ONNX in ONNX Runtime and OpenVINO, Faster and Mask R-CNN"
  # libroialign_torch.so and the C++ loader: built by the native stage on Debian's LibTorch (the configuration above).
  # The operators in Python are the package's own (no ROIALIGN_TORCH_LIBRARY); the C++ loader links the build tree's.
  ROIALIGN_REQUIRE_TORCH_OPS=1 ROIALIGN_REQUIRE_PACKAGED_TORCH_OPS=1 ROIALIGN_PEERS_PATH="$root/.peers" \
    ROIALIGN_TORCH_LOADER="$build/engines/torch/roialign_torch_load_scripted" \
    ROIALIGN_OPENVINO_EXTENSION="$build/engines/openvino/libroialign_openvino.so" \
    "$py/venv/bin/python" -I -m pytest -p no:cacheprovider -q tests/python/test_torch_ops.py
fi

# It needs the PyTorch stage's library (built against Debian's LibTorch 1.13) and the OpenVINO extension.
if [ "$torch" = ON ] && [ "${ROIALIGN_SKIP_TORCH2:-0}" != "1" ]; then
  stage "PyTorch 2.x from PyPI: torch and torchvision in a plain venv, pip install . against their LibTorch (beside "\
"Debian's libtorch-dev), the Python tests there: torch.compile, torch.export, FX, TorchScript in Python and C++, ONNX"
  # The venv sees nothing of Debian's: torch, torchvision (with their CUDA wheels, about 5.4 GB installed) and pytest
  # come from PyPI, through pip's cache after the first run. The package built there must link that torch's LibTorch,
  # not Debian's (printed here; test_torch_ops.py asserts it). The package's build also builds the C++ loader against
  # that LibTorch (build.targets), in its build tree.
  t2="$build-torch2"
  rm -rf "$t2"
  /usr/bin/python3 -m venv "$t2/venv"
  "$t2/venv/bin/python" -I -m pip install -q --disable-pip-version-check torch torchvision pytest
  "$t2/venv/bin/python" -I -c 'import torch, torchvision; print("torch", torch.__version__, torchvision.__version__)'
  CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$t2/venv/bin/python" -I -m pip install -q --disable-pip-version-check \
    --config-settings=build-dir="$t2/build" --config-settings=cmake.define.ROIALIGN_PYTHON_TORCH_OPS=ON \
    "--config-settings=build.targets=_roialign;roialign_torch_load_scripted" .
  ldd "$("$t2/venv/bin/python" -I -c 'import roialign._torch_ops as t; print(t.library_path())')" | \
    grep -E 'lib(c10|torch_cpu)\.so'
  # ROIALIGN_MISMATCHED_TORCH_LIBRARY: the PyTorch stage's library, built against Debian's LibTorch 1.13, which this
  # torch must refuse at import.
  ROIALIGN_REQUIRE_TORCHVISION=1 ROIALIGN_REQUIRE_TORCH_OPS=1 ROIALIGN_REQUIRE_PACKAGED_TORCH_OPS=1 \
    ROIALIGN_PEERS_PATH="$root/.peers" ROIALIGN_TORCH_LOADER="$t2/build/engines/torch/roialign_torch_load_scripted" \
    ROIALIGN_OPENVINO_EXTENSION="$build/engines/openvino/libroialign_openvino.so" \
    ROIALIGN_MISMATCHED_TORCH_LIBRARY="$build/engines/torch/libroialign_torch.so" \
    "$t2/venv/bin/python" -I -m pytest -p no:cacheprovider -q tests/python --ignore=tests/python/test_tvm.py
  # torchvision 0.14.1's RoIAlign tests (the only torchvision tests Debian or PyPI serve) on this torch and torchvision.
  "$t2/venv/bin/python" -I tests/python/torchvision_tests/run.py --tests .peers/torchvision-tests
fi

stage "installed package consumed by an outside project (examples/)"
rm -rf "$build/install" "$build/example"
cmake --install "$build" --prefix "$build/install" >/dev/null
# The license travels with the package: its text, and its SPDX identifier in roialign.pc and the CMake package.
grep -qx "License: Apache-2.0" "$build/install/lib/pkgconfig/roialign.pc"
grep -q 'set(roialign_LICENSE "Apache-2.0")' "$build/install/lib/cmake/roialign/roialignConfig.cmake"
cmp -s LICENSE "$build/install/share/doc/roialign/LICENSE"
# Every extension of the configuration is installed into lib/ (cmake --install installs every component).
for ext in tvm:$tvm openvino:$openvino torch:$torch; do
  if [ "${ext#*:}" = ON ] && [ ! -f "$build/install/lib/libroialign_${ext%:*}.so" ]; then
    echo "the ${ext%:*} extension was not installed into lib/"; exit 1
  fi
done
cmake -S examples -B "$build/example" -G Ninja -DCMAKE_PREFIX_PATH="$build/install"
cmake --build "$build/example"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_cpp"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_c"
LD_LIBRARY_PATH="$build/install/lib" "$build/example/roialign_example_engine_pool"

stage "a C-only project consumes the installed shared library (no C++, no OpenMP, no Highway needed)"
rm -rf "$build/c-consumer"
cmake -S tests/c_consumer -B "$build/c-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$build/install"
cmake --build "$build/c-consumer"
LD_LIBRARY_PATH="$build/install/lib" "$build/c-consumer/roialign_c_consumer"

stage "benchmark smoke run (the suite starts and a kernel runs)"
"$build/bench/layout_report" --custom=C=16:H=20:W=24:K=20 --repeats=1 --threads=1 >/dev/null
stage "FPN workload smoke run (multi-level calls and the level-by-level baseline, every ISA)"
"$build/bench/layout_report" --workloads=fpn --repeats=1 --threads=1 >/dev/null

stage "the limit holds: no path beats it, in every pool and coordinate mode (layout_report exits 3 if one does)"
for pool in AVG MAX MAX_ONNX; do
  for coord in LEGACY HALF_PIXEL HALF_PIXEL_CENTERED LEGACY_UNCLAMPED; do
    "$build/bench/layout_report" --custom=C=32:H=40:W=48:K=50:ratio=0:pool=$pool:coord=$coord --repeats=3 >/dev/null
  done
  # Rotated RoIs (aligned and mmcv's aligned=False), their limit counted from each sample's own taps.
  for coord in LEGACY HALF_PIXEL; do
    "$build/bench/layout_report" --custom=C=32:H=40:W=48:K=50:ratio=0:pool=$pool:coord=$coord:angle=90 --repeats=3 \
      >/dev/null
  done
done

if [ "$all" != "1" ]; then
  stage ""
  echo "== the tests of this CPU passed in $(( $(date +%s) - started )) s (.ci/test.sh --all runs what CI adds)"
  exit 0
fi

stage "build without OpenMP (-DROIALIGN_OPENMP=OFF): the tests but the kernels', the install, a C-only consumer"
noomp="$build-no-openmp"
cmake -S . -B "$noomp" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_OPENMP=OFF \
  -DROIALIGN_BUILD_BENCHMARKS=OFF
cmake --build "$noomp" -j "$jobs"
if ldd "$noomp/libroialign.so" | grep -q gomp; then echo "libroialign.so links OpenMP with ROIALIGN_OPENMP=OFF"; exit 1; fi
# ROIALIGN_OPENMP reaches only execution/parallel.cc: without OpenMP a call runs on the calling thread (or the
# caller's pool), the loop a 1-thread call of the OpenMP build takes. So this build runs what that changes (the
# label common: threads, pools, determinism, the backward on every target, the C API, the ABI, out of memory), not
# the per-implementation kernel tests (label kernel), which the native stage runs at 1 thread too; docs/testing.md.
ctest --test-dir "$noomp" -j "$jobs" --output-on-failure -LE 'kernel|tools'
rm -rf "$noomp/install" "$noomp/c-consumer"
cmake --install "$noomp" --prefix "$noomp/install" >/dev/null
if grep -q fopenmp "$noomp/install/lib/pkgconfig/roialign.pc"; then echo "roialign.pc asks for OpenMP"; exit 1; fi
cmake -S tests/c_consumer -B "$noomp/c-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$noomp/install"
cmake --build "$noomp/c-consumer"
LD_LIBRARY_PATH="$noomp/install/lib" "$noomp/c-consumer/roialign_c_consumer"

if [ "${ROIALIGN_SKIP_SANITIZERS:-0}" != "1" ]; then
  stage "ASan + UBSan (clang): the test suite, then libFuzzer over the C API: single- and"\
" multi-level, layout transforms (${ROIALIGN_FUZZ_SECONDS:-60} s each)"
  # One instrumented build serves both: the fuzzers' coverage hooks (fuzzer-no-link) cost the tests little, and
  # the kernels compile once under the sanitizers instead of twice. The C tests link UBSan's C++ runtime, which
  # the library's C++ checks (vptr, function) call into.
  san="$build-sanitizers"
  sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  CC=clang CXX=clang++ cmake -S . -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROIALIGN_BUILD_BENCHMARKS=OFF \
    -DROIALIGN_TEST_TORCHVISION=OFF -DROIALIGN_BUILD_FUZZERS=ON -DCMAKE_CXX_FLAGS="$sanitize" \
    -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined -fsanitize-link-c++-runtime -lstdc++"
  cmake --build "$san" -j "$jobs"
  # The suite runs as slices in shards (tests/CMakeLists.txt: one process per test would pay the instrumented
  # start-up a thousand times), without the blocked layouts' heavy kernel tests (they share NHWC's in-place path and
  # give its bits) and without SSE4's float64 kernels (AVX2's 4 lanes and the fallback's 1 run here; SSE4's 2 lanes
  # natively and under qemu's NEON); docs/testing.md. The report's tools (label tools) are Python: nothing to
  # instrument.
  export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$root/.ci/lsan-suppressions.txt"
  ctest --test-dir "$san" -j "$jobs" --output-on-failure -LE tools
  # New inputs go to the build tree; the seed corpora (with every past crash) stay read-only in tests/fuzz.
  # pipefail (set above) makes a crash fail this step despite the tail.
  for target in c_api:corpus multi_level:corpus_multi_level transform_layout:corpus_transform_layout; do
    name=${target%%:*} seeds=${target#*:}
    mkdir -p "$san/corpus-$name"
    (cd "$san" && "./tests/fuzz/fuzz_$name" "corpus-$name" "$root/tests/fuzz/$seeds" \
      -max_total_time="${ROIALIGN_FUZZ_SECONDS:-60}" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 2>&1 \
      | tail -n 15)
  done
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
fi

if [ "${ROIALIGN_SKIP_SANITIZERS:-0}" != "1" ]; then
  stage "ThreadSanitizer: concurrent runs of one kernel, concurrent select/register, caller thread pools"
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
fi

if [ "${ROIALIGN_SKIP_ARM:-0}" != "1" ]; then
  stage "aarch64 cross build"
  arm="$build-aarch64"
  cmake -S . -B "$arm" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DROIALIGN_WERROR=ON -DROIALIGN_BUILD_BENCHMARKS=OFF
  cmake --build "$arm" -j "$jobs"
  # CPU -> the ISA "host" must select there (checked by the strategy test), and the ctest labels it leaves out
  # (tests/CMakeLists.txt). qemu emulates SVE far slower than NEON (docs/testing.md has the figures), so the SVE CPUs
  # share the dtypes of the SVE and SVE2 kernels' tests (labels sve_F32, sve2_BF16, ...) instead of each running all
  # four: a64fx (the arm-sve target at 512 bits) every dtype, SVE2 at 128 bits f32 and f16, SVE2 at 256 bits f32,
  # bf16 and f64. Every SVE kernel thus runs every dtype on at least one SVE CPU, and f32 at every vector length.
  # The implementations whose code no CPU feature changes (the reference, the portable fallback and NEON: label
  # arch) run on the NEON CPU only, which runs everything. docs/testing.md has the table.
  for run in cortex-a72:neon a64fx:sve "max,sve-max-vq=1:sve2" "max,sve-max-vq=2:sve2"; do
    cpu=${run%:*} isa=${run##*:}
    case "$cpu" in
      cortex-a72) skip=() ;;
      a64fx) skip=(-LE '^(arch|sve2_.*)$') ;;
      *sve-max-vq=1) skip=(-LE '^(arch|sve2?_(BF16|F64))$') ;;
      *sve-max-vq=2) skip=(-LE '^(arch|sve2?_F16)$') ;;
    esac
    stage "tests under qemu-user -cpu $cpu (expect $isa)"
    cmake -S . -B "$arm" -DROIALIGN_QEMU_CPU="$cpu" >/dev/null
    ROIALIGN_EXPECT_HOST_ISA=$isa ctest --test-dir "$arm" -j "$jobs" --output-on-failure "${skip[@]}"
  done
fi
stage ""
echo "== all tests passed in $(( $(date +%s) - started )) s"
