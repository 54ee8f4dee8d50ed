#!/usr/bin/env bash
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
# Installs everything roialign's build, tests, benchmarks and report need on a fresh Debian 12 machine
# (as root, or with sudo available). Safe to run twice.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
with_arm="${ROIALIGN_SETUP_ARM:-1}"
if [ "$with_arm" = "1" ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
# python3-dev, python3-venv, python3-pytest: the Python package (pip install . in a venv, its pytest suite).
# libtorch-dev: LibTorch for the PyTorch operator library (engines/torch), the one Debian's python3-torch runs on.
pkgs=(cmake ninja-build g++ pkg-config libhwy-dev libgtest-dev libbenchmark-dev libomp-dev
      python3-numpy python3-torchvision python3-matplotlib python3-pip clang libclang-rt-14-dev
      python3-dev python3-venv python3-pytest libtorch-dev valgrind)
if [ "$with_arm" = "1" ]; then
  pkgs+=(crossbuild-essential-arm64 qemu-user libhwy-dev:arm64 libgtest-dev:arm64 libgomp1:arm64)
fi
$SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
echo "setup-debian: installed ${#pkgs[@]} packages"

# Peers for the layout report (ONNX Runtime, OpenVINO), beside Debian's python in .peers/ (not in git), installed
# with Debian's pip through .ci/python (a pip in /usr/local must not take its place).
# numpy<2: Debian's torch 1.13 cannot take numpy 2 arrays. ROIALIGN_SETUP_PEERS=0 skips this.
if [ "${ROIALIGN_SETUP_PEERS:-1}" = "1" ]; then
  cd "$(dirname "$0")/.."
  .ci/python -m pip install -q --disable-pip-version-check --target .peers \
    onnxruntime onnx openvino "numpy<2" >/dev/null 2>&1 \
    && echo "setup-debian: peers installed in .peers/" \
    || echo "setup-debian: could not install the peers (the report will list them as skipped)"
  # Apache TVM 0.27 (about 120 MB of wheels, 420 MB installed, ~20 s): a peer of the report, and the engine that
  # libroialign_tvm.so (-DROIALIGN_BUILD_TVM_EXTENSION=ON, built against apache-tvm-ffi's CMake package) plugs into.
  # Its wheel asks for numpy without a bound; "numpy<2" keeps the 1.26 installed above. .ci/test.sh requires it.
  # apache-tvm-ffi 0.1.15 crashes Relax's ConvertLayout to NCHW[b]c layouts (docs/tvm.md); 0.1.14.post0 is the
  # lowest TVM 0.27 accepts and does not.
  .ci/python -m pip install -q --disable-pip-version-check --target .peers \
    "apache-tvm==0.27.*" "apache-tvm-ffi==0.1.14.post0" "numpy<2" >/dev/null 2>&1 \
    && echo "setup-debian: apache-tvm installed in .peers/" \
    || echo "setup-debian: could not install apache-tvm (the TVM tests will fail, the report skips TVM)"
  # torchvision's own RoIAlign tests (test/test_ops.py of Debian's pytorch-vision 0.14.1 source: PyPI's torchvision
  # ships no tests), fetched with a private apt state from this machine's Debian sources (about 9 MB, a few
  # seconds); .ci/test.sh runs them with roialign substituted. Only the four test files are kept.
  if [ ! -f .peers/torchvision-tests/test/test_ops.py ]; then
    .ci/python tests/python/torchvision_tests/run.py --fetch .peers/torchvision-tests >/dev/null 2>&1 \
      && echo "setup-debian: torchvision's tests in .peers/torchvision-tests" \
      || echo "setup-debian: could not fetch torchvision's tests (the Python stage of .ci/test.sh will fail)"
  fi
fi
