#!/usr/bin/env bash
# The main job: build (if needed) and run the layout report on the embedded workloads, time the peers that
# are installed, and render the chart. Extra arguments go to layout_report (see --help), e.g.
#   bench/run_layout_report.sh --workloads=default --isas=avx2
# Results: out/layout_report.json, out/peers.json, out/layouts.png (table on stdout, progress on stderr).
# Python runs through .ci/python (Debian's python3 and packages only, whatever is installed in /usr/local).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ROIALIGN_BUILD_DIR:-build-report}
out=${ROIALIGN_OUT_DIR:-out}
# With apache-tvm-ffi in .peers/, libroialign_tvm.so is built too: the TVM+roialign rows of the peers need it.
tvm_ffi_dir="$PWD/.peers/tvm_ffi/share/cmake/tvm_ffi"
tvm_args=() tvm_target=()
if [ -d "$tvm_ffi_dir" ]; then
  tvm_args=(-DROIALIGN_BUILD_TVM_EXTENSION=ON -Dtvm_ffi_DIR="$tvm_ffi_dir") tvm_target=(--target roialign_tvm)
fi
if [ ! -x "$build/bench/layout_report" ] || [ "${ROIALIGN_REBUILD:-1}" = "1" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROIALIGN_BUILD_TESTS=OFF "${tvm_args[@]}" >&2
  cmake --build "$build" --target layout_report "${tvm_target[@]}" >&2
fi
if [ -f "$build/engines/tvm/libroialign_tvm.so" ]; then
  export ROIALIGN_TVM_LIBRARY="${ROIALIGN_TVM_LIBRARY:-$(realpath "$build/engines/tvm/libroialign_tvm.so")}"
fi
for arg in "$@"; do
  if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then
    "$build/bench/layout_report" --help
    echo "Then bench/peers.py times the installed peers and bench/plot_layouts.py draws $out/layouts.png."
    exit 0
  fi
done
mkdir -p "$out/data"
"$build/bench/layout_report" --json="$out/layout_report.json" --dump-dir="$out/data" "$@"
if [ -d .peers ]; then export ROIALIGN_PEERS_PATH="$PWD/.peers${ROIALIGN_PEERS_PATH:+:$ROIALIGN_PEERS_PATH}"; fi
if [ -f bench/peers.py ]; then
  echo >&2 "timing peers (torchvision, ONNX Runtime, OpenVINO, TVM when installed)..."
  .ci/python bench/peers.py --data "$out/data" --out "$out/peers.json" || echo >&2 "peers: failed (see above)"
fi
if [ -f bench/plot_layouts.py ]; then
  peers_arg=()
  [ -f "$out/peers.json" ] && peers_arg=(--peers "$out/peers.json")
  .ci/python bench/plot_layouts.py --report "$out/layout_report.json" "${peers_arg[@]}" --out "$out/layouts.png"
  echo >&2 "chart: $out/layouts.png"
fi
