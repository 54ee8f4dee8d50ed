# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""What the Python tests share: torch and torchvision, imported once.

.ci/test.sh sets ROIALIGN_REQUIRE_TORCHVISION=1, so there a failed import fails the run instead of skipping the
comparisons with torchvision. Test modules take them with `from conftest import torch, torchvision_ops, needs_torch`
(pytest puts this directory on sys.path).
"""
import os
import sys

import pytest

# Extra package directories (ROIALIGN_PEERS_PATH, e.g. .peers/ for test_tvm.py) go first, before torch brings in
# Debian's numpy and typing_extensions, so that every module of the run sees the same ones.
for _p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
    if _p not in sys.path:
        sys.path.insert(0, _p)

try:
    import torch
    import torchvision.ops as torchvision_ops
except Exception:  # ImportError, or a broken torch install
    if os.environ.get("ROIALIGN_REQUIRE_TORCHVISION") == "1":
        raise
    torch = None
    torchvision_ops = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch/torchvision not importable")
