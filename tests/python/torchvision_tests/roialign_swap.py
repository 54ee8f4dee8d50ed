# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""pytest plugin: torchvision's own RoIAlign tests, with roialign in place of torchvision's roi_align.

Loaded with ``-p roialign_swap`` by run.py (beside this file), in torchvision's own test directory. Before the test
modules are imported it routes

- ``torchvision.ops.roi_align`` (what ``test_ops.py`` calls and scripts), the ``roi_align`` of the module
  ``torchvision.ops.roi_align`` (what torchvision's own ``RoIAlign`` calls) and the ``roi_align`` of
  ``torchvision.ops.poolers`` (what ``MultiScaleRoIAlign`` calls) to :func:`roi_align` below, which runs
  ``torch.ops.roialign.roi_align``;
- ``torchvision.ops.RoIAlign`` to ``roialign.nn.RoIAlign``.

torchvision's own CPU kernels of ``torchvision::roi_align`` and ``torchvision::_roi_align_backward`` are replaced in
the dispatcher by kernels that raise, so a test that still reached torchvision's kernel, eagerly or from TorchScript,
cannot pass. (torch's profiler would count every operator call instead, but it made torchvision's Python reference
of test_forward 30 times slower: 20 s a test.) The run fails if the substitute roi_align was never called; the
summary prints how often it was called eagerly (scripted calls run the same operator, uncounted).
"""
import sys

import pytest
import torch
import torchvision.ops
import torchvision.ops.poolers
from torch import Tensor
from torch.jit.annotations import BroadcastingList2
from torch.nn.modules.utils import _pair
from torchvision.ops._utils import check_roi_boxes_shape, convert_boxes_to_roi_format

import roialign
import roialign.nn

_CALLS = [0]  # eager calls of roi_align below


@torch.jit.unused
def _count() -> None:
    _CALLS[0] += 1


def roi_align(input: Tensor, boxes: Tensor, output_size: BroadcastingList2[int], spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = False) -> Tensor:
    """torchvision.ops.roi_align's signature and argument checks, on torch.ops.roialign.roi_align."""
    if not torch.jit.is_scripting():
        _count()
    check_roi_boxes_shape(boxes)
    rois = boxes
    size = _pair(output_size)
    if not isinstance(rois, torch.Tensor):
        rois = convert_boxes_to_roi_format(rois)
    return torch.ops.roialign.roi_align(input, rois, spatial_scale, size[0], size[1], sampling_ratio, aligned)


def _refuse(op):
    def kernel(*args, **kwargs):
        raise AssertionError("torchvision::%s (torchvision's own kernel) was called, although roialign is "
                             "substituted" % op)
    return kernel


# The dispatcher's CPU kernels of torchvision's ops (torch warns that they are overridden), and its Python entry.
_TORCHVISION = torch.library.Library("torchvision", "IMPL")
for _op in ("roi_align", "_roi_align_backward"):
    _TORCHVISION.impl(_op, _refuse(_op), "CPU")


torchvision.ops.roi_align = roi_align
sys.modules["torchvision.ops.roi_align"].roi_align = roi_align
torchvision.ops.poolers.roi_align = roi_align
torchvision.ops.RoIAlign = roialign.nn.RoIAlign
torch.ops.torchvision.roi_align = _refuse("roi_align")


def pytest_report_header(config):
    return ["roialign_swap: torchvision.ops.roi_align -> torch.ops.roialign.roi_align, torchvision.ops.RoIAlign -> "
            "roialign.nn.RoIAlign (roialign %s, torchvision %s, torch %s)"
            % (roialign.__version__, torchvision.__version__, torch.__version__)]


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("roialign_swap: the substitute roi_align ran %d times eagerly (and roialign.nn.RoIAlign "
                                "and the scripted calls besides)" % _CALLS[0])


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if session.testscollected and _CALLS[0] == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
