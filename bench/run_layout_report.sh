#!/usr/bin/env bash
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
# The main job: build (if needed) and run the layout report on the embedded workloads, time the peers that
# are installed, and render the chart.
#   bench/run_layout_report.sh            the default, rotated and fpn workloads, the host's ISA and the one below
#                                         it, 1 and 2 threads; the peers on default and rotated at 1 thread (on
#                                         rotated, OpenVINO's ROIAlignRotated-15 runs once: tens of seconds)
#   bench/run_layout_report.sh --full     every workload, every ISA this CPU runs, 1 thread and all cores, every
#                                         peer on every workload (the full report of docs/layouts.md)
# Other arguments go to layout_report after these (see --help) and override them, e.g. --isas=avx2.
# Every workload's backward (dX from dY) is timed too, per kernel layout (--backward=none or a list of workloads to
# restrict it).
# Results: out/layout_report.json, out/peers.json, out/layouts.png, out/layouts-blocked.png, out/layouts-backward.png
# (table on stdout, progress on stderr).
# Python runs through .ci/python (Debian's python3 and packages only, whatever is installed in /usr/local).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ROIALIGN_BUILD_DIR:-build-report}
out=${ROIALIGN_OUT_DIR:-out}
# With apache-tvm-ffi in .peers/, libroialign_tvm.so is built too: the TVM+roialign rows of the peers need it.
tvm_ffi_dir="$PWD/.peers/tvm_ffi/share/cmake/tvm_ffi"
engine_args=() engine_targets=()
if [ -d "$tvm_ffi_dir" ]; then
  engine_args+=(-DROIALIGN_BUILD_TVM_EXTENSION=ON -Dtvm_ffi_DIR="$tvm_ffi_dir") engine_targets+=(roialign_tvm)
fi
# With the openvino wheel's C++ SDK in .peers/ (.ci/setup-debian.sh), also the OpenVINO extension, which peers.py
# times beside OpenVINO's own RoIAlign.
ovsdk="$PWD/.peers/openvino/cmake"
if [ -f "$ovsdk/OpenVINOConfig.cmake" ]; then
  engine_args+=(-DROIALIGN_BUILD_OPENVINO_EXTENSION=ON -DOpenVINO_DIR="$ovsdk") engine_targets+=(roialign_openvino)
fi
if [ ! -x "$build/bench/layout_report" ] || [ "${ROIALIGN_REBUILD:-1}" = "1" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROIALIGN_BUILD_TESTS=OFF "${engine_args[@]}" >&2
  cmake --build "$build" --target layout_report "${engine_targets[@]}" >&2
fi
if [ -f "$build/engines/tvm/libroialign_tvm.so" ]; then
  export ROIALIGN_TVM_LIBRARY="${ROIALIGN_TVM_LIBRARY:-$(realpath "$build/engines/tvm/libroialign_tvm.so")}"
fi
ovext="$PWD/$build/engines/openvino/libroialign_openvino.so"
case "$build" in /*) ovext="$build/engines/openvino/libroialign_openvino.so" ;; esac
if [ -f "$ovext" ]; then export ROIALIGN_OPENVINO_EXTENSION="$ovext"; fi
full=0 report_args=()
for arg in "$@"; do
  if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then
    "$build/bench/layout_report" --help
    echo "Then bench/peers.py times the installed peers and bench/plot_layouts.py draws $out/layouts.png."
    echo "Without --full: --workloads=default,rotated,fpn --best-isas=2 --threads=1,2, peers on default and rotated at 1 thread."
    exit 0
  elif [ "$arg" = "--full" ]; then
    full=1
  else
    report_args+=("$arg")
  fi
done
default_args=(--workloads=default,rotated,fpn --best-isas=2 --threads=1,2) peer_args=(--only default,rotated --threads 1)
if [ "$full" = "1" ]; then default_args=() peer_args=(); fi
rm -rf "$out/data" && mkdir -p "$out/data"  # no dumps of an earlier run for the peers to time
"$build/bench/layout_report" --json="$out/layout_report.json" --dump-dir="$out/data" "${default_args[@]}" \
  "${report_args[@]}"
if [ -d .peers ]; then export ROIALIGN_PEERS_PATH="$PWD/.peers${ROIALIGN_PEERS_PATH:+:$ROIALIGN_PEERS_PATH}"; fi
if [ -f bench/peers.py ]; then
  echo >&2 "timing peers (torchvision, ONNX Runtime, OpenVINO and TVM with and without roialign, when installed)..."
  .ci/python bench/peers.py --data "$out/data" --out "$out/peers.json" "${peer_args[@]}" || echo >&2 "peers: failed (see above)"
fi
if [ -f bench/plot_layouts.py ]; then
  peers_arg=()
  [ -f "$out/peers.json" ] && peers_arg=(--peers "$out/peers.json")
  .ci/python bench/plot_layouts.py --report "$out/layout_report.json" "${peers_arg[@]}" --out "$out/layouts.png" \
    --blocked-out "$out/layouts-blocked.png" --backward-out "$out/layouts-backward.png"
  echo >&2 "charts: $out/layouts.png, $out/layouts-blocked.png, $out/layouts-backward.png"
fi
