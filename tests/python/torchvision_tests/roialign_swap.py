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

torchvision's own Python entry to its kernel, ``torch.ops.torchvision.roi_align``, is replaced by a function that
fails the test. Each test runs under torch's profiler, which sees every operator call, scripted ones included: a
test that reaches torchvision's kernel anyway fails, and the run fails if roialign's operator was never called. The
summary prints how often each was called.
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

# Operator calls seen by the profiler: roialign's forward and backward, and torchvision's (which must stay 0).
_CALLS = {"roialign::roi_align": 0, "roialign::roi_align_backward": 0, "torchvision::roi_align": 0,
          "torchvision::_roi_align_backward": 0}


def roi_align(input: Tensor, boxes: Tensor, output_size: BroadcastingList2[int], spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = False) -> Tensor:
    """torchvision.ops.roi_align's signature and argument checks, on torch.ops.roialign.roi_align."""
    check_roi_boxes_shape(boxes)
    rois = boxes
    size = _pair(output_size)
    if not isinstance(rois, torch.Tensor):
        rois = convert_boxes_to_roi_format(rois)
    return torch.ops.roialign.roi_align(input, rois, spatial_scale, size[0], size[1], sampling_ratio, aligned)


def _torchvision_kernel_called(*args, **kwargs):
    raise AssertionError("torchvision's own roi_align kernel was called, although roialign is substituted")


torchvision.ops.roi_align = roi_align
sys.modules["torchvision.ops.roi_align"].roi_align = roi_align
torchvision.ops.poolers.roi_align = roi_align
torchvision.ops.RoIAlign = roialign.nn.RoIAlign
torch.ops.torchvision.roi_align = _torchvision_kernel_called


def pytest_report_header(config):
    return ["roialign_swap: torchvision.ops.roi_align -> torch.ops.roialign.roi_align, torchvision.ops.RoIAlign -> "
            "roialign.nn.RoIAlign (roialign %s, torchvision %s, torch %s)"
            % (roialign.__version__, torchvision.__version__, torch.__version__)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with torch.autograd.profiler.profile() as prof:
        outcome = yield
    seen = [e.name for e in prof.function_events if e.name in _CALLS]
    for name in seen:
        _CALLS[name] += 1
    torchvision = [name for name in seen if name.startswith("torchvision::")]
    if torchvision and outcome.excinfo is None:  # raised here, it fails the test
        raise AssertionError("%s ran, although roialign is substituted" % torchvision[0])


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("roialign_swap: operator calls seen by the profiler: " +
                                ", ".join("%s %d" % kv for kv in _CALLS.items()))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    tv = _CALLS["torchvision::roi_align"] + _CALLS["torchvision::_roi_align_backward"]
    if session.testscollected and (_CALLS["roialign::roi_align"] == 0 or tv):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
