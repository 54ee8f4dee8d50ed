# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Rotated RoIs in the Python package and the torch operators (docs/python.md, "Rotated RoIs"; docs/torch.md).

The definition is DESIGN.md section 5 (docs/semantics.md, "Rotated RoIs"), transcribed below in numpy, in float64,
for every convention: degrees and radians, counter-clockwise and clockwise, aligned True and False, and the three
pool modes, with its transposed sampling as the backward. Checked here:

- roialign.roi_align_rotated and roi_align_rotated_backward against it: float64 to 1e-12 on every layout (NCHW,
  NHWC, a blocked one) and on "host" and "generic"; float32 to 1e-4 (below), float16 and bfloat16 against float32;
- an angle of 0 against roi_align aligned (HALF_PIXEL) on the box (cx - w/2, cy - h/2, cx + w/2, cy + h/2);
  degrees against radians and clockwise against the negated angle; OpenVINO's ROIAlignRotated-15, another
  implementation, when openvino can be imported (installed or in .peers/);
- torch.autograd.gradcheck in float64 of the operator for AVG, MAX and MAX_ONNX, and of the modules of both
  conventions (detectron2's ROIAlignRotated, mmcv's RoIAlignRotated); the same gradient bits at 1 and 2 threads;
  a double backward refused; the Meta kernels;
- the modules' signatures, TorchScript (script, trace, save and load), torch.fx; ONNX export as mmcv's custom node
  mmcv::MMCVRoIAlignRotated with its attributes (read with onnx from ROIALIGN_PEERS_PATH or the checkout's
  .peers/); on torch 2.x, torch.compile and torch.export.

float32 is held to 1e-4 (absolute, plus 1e-4 relative) against the float64 definition, not to the 1e-5 of the
axis-aligned kernels: a rotated sample's position is cy + yy·cos θ − xx·sin θ, computed in float32 from
coordinates of tens of pixels, so it is off by a few 1e-6 pixels, and its bilinear value by that times the map's
slope between neighbouring pixels (up to about 1 here); the AVG of such samples and the MAX of them carry it on.
"""
import inspect
import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import roialign

from conftest import needs_torch, torch

TOL64 = 1e-12
TOL32 = 1e-4
POOLS = ["avg", "max", "max_onnx"]
SCALE = 1.0 / 3.0  # not a float32 number: a float32 computation anywhere misses TOL64 by far
# (angle_unit, clockwise, aligned): every convention; detectron2 is ("degrees", False, True), mmcv ("radians", *, *).
CONVENTIONS = [(unit, cw, al) for unit in ("degrees", "radians") for cw in (False, True) for al in (True, False)]


def assert_close(got, ref, tol):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = np.abs(got - ref)
    bad = ~(err <= tol + tol * np.abs(ref))
    assert not bad.any(), "max abs err %g at %s (%r vs %r)" % (
        np.nanmax(err), np.argwhere(bad)[0], got[tuple(np.argwhere(bad)[0])], ref[tuple(np.argwhere(bad)[0])])


# ---------------------------------------------------------------------------------------------------------------
# DESIGN.md section 5 (and 1.1 for the bilinear taps, 4 for the backward) in float64, one sample at a time
# ---------------------------------------------------------------------------------------------------------------

def axis(v, size):
    """(low index, high index, coordinate) of one axis of bilinear(), after the clamp to 0 and the snap at the edge."""
    v = max(v, 0.0)
    low = int(math.floor(v))
    if low >= size - 1:
        return size - 1, size - 1, float(size - 1)
    return low, low + 1, v


def taps(y, x, h, w):
    """The four (y, x, weight) taps of bilinear(y, x), or none for a sample outside [-1, H] x [-1, W]."""
    if not (-1.0 <= y <= h and -1.0 <= x <= w):
        return []
    y0, y1, y = axis(y, h)
    x0, x1, x = axis(x, w)
    ly, lx = y - y0, x - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    return [(y0, x0, hy * hx), (y0, x1, hy * lx), (y1, x0, ly * hx), (y1, x1, ly * lx)]


def samples(roi, output_size, scale, sampling_ratio, unit, clockwise, aligned, h, w):
    """(count, {(ph, pw): [taps of each sample, in (iy, ix) order]}) of one rotated RoI (cx, cy, w, h, angle)."""
    cx, cy, rw, rh, angle = (float(v) for v in roi)
    theta = angle * math.pi / 180.0 if unit == "degrees" else angle
    if clockwise:
        theta = -theta
    off = 0.5 if aligned else 0.0
    cx, cy, rw, rh = cx * scale - off, cy * scale - off, rw * scale, rh * scale
    if not aligned:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    ph_n, pw_n = output_size
    bin_h, bin_w = rh / ph_n, rw / pw_n
    grid_h = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / ph_n))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / pw_n))
    cos, sin = math.cos(theta), math.sin(theta)
    bins = {}
    for ph in range(ph_n):
        for pw in range(pw_n):
            bins[ph, pw] = []
            for iy in range(grid_h):
                yy = -rh / 2 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                for ix in range(grid_w):
                    xx = -rw / 2 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                    bins[ph, pw].append(taps(yy * cos - xx * sin + cy, yy * sin + xx * cos + cx, h, w))
    return max(grid_h * grid_w, 1), bins


def reference(x, rois, output_size, scale, sampling_ratio, unit, clockwise, aligned, pool, dy=None):
    """The forward [K, C, PH, PW] of NCHW x over [K, 6] rois; with dy, the backward dX instead (section 4)."""
    x = np.asarray(x, dtype=np.float64)
    _, c, h, w = x.shape
    y = np.zeros((len(rois), c) + tuple(output_size))
    dx = np.zeros_like(x)
    for k, roi in enumerate(np.asarray(rois, dtype=np.float64)):
        b = int(roi[0])
        count, bins = samples(roi[1:], output_size, scale, sampling_ratio, unit, clockwise, aligned, h, w)
        for (ph, pw), bin_taps in bins.items():
            if not bin_taps:
                continue
            values = []  # each sample's value per channel, and its taps' contributions
            for t in bin_taps:
                weighted = [(yy, xx, wt, wt * x[b, :, yy, xx]) for yy, xx, wt in t]
                if pool == "max_onnx":
                    v = np.max([p[3] for p in weighted], axis=0) if weighted else np.zeros(c)
                else:
                    v = np.sum([p[3] for p in weighted], axis=0) if weighted else np.zeros(c)
                values.append((v, weighted))
            if pool == "avg":
                y[k, :, ph, pw] = np.sum([v for v, _ in values], axis=0) / count
                if dy is not None:
                    for _, weighted in values:
                        for yy, xx, wt, _ in weighted:
                            dx[b, :, yy, xx] += wt * dy[k, :, ph, pw] / count
                continue
            stacked = np.array([v for v, _ in values])  # [samples, C]
            y[k, :, ph, pw] = stacked.max(axis=0)
            if dy is None:
                continue
            for ch in range(c):  # the first sample (and for MAX_ONNX the first tap) attaining the maximum
                s = int(np.argmax(stacked[:, ch]))
                weighted = values[s][1]
                if pool == "max":
                    for yy, xx, wt, _ in weighted:
                        dx[b, ch, yy, xx] += wt * dy[k, ch, ph, pw]
                elif weighted:
                    t = int(np.argmax([p[3][ch] for p in weighted]))
                    yy, xx, wt, _ = weighted[t]
                    dx[b, ch, yy, xx] += wt * dy[k, ch, ph, pw]
    return y if dy is None else dx


def problem(seed, n=2, c=3, h=9, w=11, k=7, dtype=np.float64, degrees=True):
    """A map of positive values and rotated boxes inside, across and outside it, of every angle (and one of width
    0), in image pixels (SCALE maps them onto the map)."""
    rng = np.random.default_rng(seed)
    x = (rng.random((n, c, h, w)) + 0.1).astype(dtype)
    cx = rng.uniform(-2, w + 2, k) / SCALE
    cy = rng.uniform(-2, h + 2, k) / SCALE
    bw = rng.uniform(0.5, 8, k) / SCALE
    bh = rng.uniform(0.5, 8, k) / SCALE
    bw[-1] = 0.0
    angle = rng.uniform(-200, 200, k)
    if not degrees:
        angle = angle * math.pi / 180
    batch = rng.integers(0, n, k).astype(np.float64)
    return x, np.stack([batch, cx, cy, bw, bh, angle], axis=1)


def to_layout(x, layout):
    """An NCHW numpy map in a layout's memory order (a blocked one padded with NaN, which is never read)."""
    if layout == "NHWC":
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    if layout == "NCHW8c":
        n, c, h, w = x.shape
        blocks = -(-c // 8)
        padded = np.full((n, blocks * 8, h, w), np.nan, x.dtype)
        padded[:, :c] = x
        return np.ascontiguousarray(padded.reshape(n, blocks, 8, h, w).transpose(0, 1, 3, 4, 2))
    return x


def from_layout(y, layout, c):
    if layout == "NHWC":
        return y.transpose(0, 3, 1, 2)
    if layout == "NCHW8c":
        k, blocks, ph, pw, b = y.shape
        return y.transpose(0, 1, 4, 2, 3).reshape(k, blocks * b, ph, pw)[:, :c]
    return y


# ---------------------------------------------------------------------------------------------------------------
# numpy: every convention against the definition
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("unit,clockwise,aligned", CONVENTIONS)
@pytest.mark.parametrize("pool", POOLS)
def test_float64_forward_and_backward_are_the_definition(unit, clockwise, aligned, pool):
    x, rois = problem(CONVENTIONS.index((unit, clockwise, aligned)) * 3 + POOLS.index(pool),
                      degrees=unit == "degrees")
    for sampling_ratio in (0, 2):
        args = ((2, 3), SCALE, sampling_ratio)
        conv = dict(angle_unit=unit, clockwise=clockwise, aligned=aligned, pool=pool)
        ref = reference(x, rois, *args, unit, clockwise, aligned, pool)
        assert_close(roialign.roi_align_rotated(x, rois, *args, **conv), ref, TOL64)
        dy = np.random.default_rng(5).random(ref.shape)
        dref = reference(x, rois, *args, unit, clockwise, aligned, pool, dy=dy)
        assert_close(roialign.roi_align_rotated_backward(dy, x, rois, *args, **conv), dref, TOL64)
        # float32 computes the sample positions in float32 (module docstring): within TOL32, and not within TOL64.
        y32 = roialign.roi_align_rotated(x.astype(np.float32), rois.astype(np.float32), *args, **conv)
        assert y32.dtype == np.float32
        assert_close(y32, ref, TOL32)
        assert np.abs(y32 - ref).max() > 1000 * TOL64


@pytest.mark.parametrize("layout", ["NCHW", "NHWC", "NCHW8c"])
@pytest.mark.parametrize("target", ["host", "generic"])
def test_every_layout_and_target_is_the_definition(layout, target):
    x, rois = problem(11, c=5)
    for unit, clockwise, aligned in [("degrees", False, True), ("radians", True, False)]:
        if unit == "radians":
            rois = rois.copy()
            rois[:, 5] *= math.pi / 180
        for pool in POOLS:
            conv = dict(angle_unit=unit, clockwise=clockwise, aligned=aligned, pool=pool, layout=layout, target=target,
                        channels=5)
            ref = reference(x, rois, (3, 2), SCALE, 0, unit, clockwise, aligned, pool)
            y = roialign.roi_align_rotated(to_layout(x, layout), rois, (3, 2), SCALE, **conv)
            assert_close(from_layout(y, layout, 5), ref, TOL64)
            dy = np.random.default_rng(1).random(ref.shape)
            dref = reference(x, rois, (3, 2), SCALE, 0, unit, clockwise, aligned, pool, dy=dy)
            dyl = np.nan_to_num(to_layout(dy, layout))
            dx = roialign.roi_align_rotated_backward(dyl, to_layout(x, layout), rois, (3, 2), SCALE, **conv)
            assert_close(from_layout(dx, layout, 5), dref, TOL64)


def test_sixteen_bit_maps_follow_float32():
    x, rois = problem(3, c=8)
    y32 = roialign.roi_align_rotated(x.astype(np.float32), rois, 4, SCALE, 2, angle_unit="degrees")
    y16 = roialign.roi_align_rotated(x.astype(np.float16), rois, 4, SCALE, 2, angle_unit="degrees")
    assert y16.dtype == np.float16
    assert_close(y16, y32, 2e-3)  # one rounding of the float32 result to float16 (and of the map)
    if torch is not None:
        xb = torch.from_numpy(x).to(torch.bfloat16)
        yb = roialign.roi_align_rotated(xb, torch.from_numpy(rois), 4, SCALE, 2, angle_unit="degrees")
        assert yb.dtype == torch.bfloat16
        assert_close(yb.float().numpy(), y32, 2e-2)


def test_angle_zero_is_roi_align_half_pixel_on_the_box():
    x, rois = problem(4)
    rois[:, 5] = 0.0
    cx, cy, w, h = rois[:, 1], rois[:, 2], rois[:, 3], rois[:, 4]
    boxes = np.stack([rois[:, 0], cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    for pool in POOLS:
        for sampling_ratio in (0, 3):
            for dtype, tol in ((np.float64, TOL64), (np.float32, 1e-5)):
                a = roialign.roi_align_rotated(x.astype(dtype), rois, (3, 4), SCALE, sampling_ratio, pool=pool)
                b = roialign.roi_align(x.astype(dtype), boxes, (3, 4), SCALE, sampling_ratio, True, pool=pool)
                assert_close(a, b, tol)


def test_degrees_are_radians_and_clockwise_is_the_negated_angle():
    x, rois = problem(6)
    radians = rois.copy()
    radians[:, 5] *= math.pi / 180
    negated = rois.copy()
    negated[:, 5] *= -1
    for dtype in (np.float64, np.float32):
        xd = x.astype(dtype)
        d = roialign.roi_align_rotated(xd, rois, 3, SCALE, angle_unit="degrees")
        assert_close(roialign.roi_align_rotated(xd, radians, 3, SCALE), d, TOL64 if dtype == np.float64 else 1e-5)
        cw = roialign.roi_align_rotated(xd, rois, 3, SCALE, angle_unit="degrees", clockwise=True)
        np.testing.assert_array_equal(cw, roialign.roi_align_rotated(xd, negated, 3, SCALE, angle_unit="degrees"))


def test_out_and_torch_blocked_maps():
    x, rois = problem(12, c=5)
    want = roialign.roi_align_rotated(x, rois, 2, SCALE, angle_unit="degrees", pool="max")
    out = roialign._aligned_empty(want.shape, np.dtype(np.float64))
    assert roialign.roi_align_rotated(x, rois, 2, SCALE, angle_unit="degrees", pool="max", out=out) is out
    np.testing.assert_array_equal(out, want)
    if torch is None:
        return
    # A blocked torch map runs on the extension and gives the numpy bits.
    blocked = to_layout(x, "NCHW8c")
    y = roialign.roi_align_rotated(torch.from_numpy(blocked), torch.from_numpy(rois), 2, SCALE, angle_unit="degrees",
                                   pool="max", layout="NCHW8c", channels=5)
    assert isinstance(y, torch.Tensor) and y.shape == (len(rois), 1, 2, 2, 8)
    np.testing.assert_array_equal(from_layout(y.numpy(), "NCHW8c", 5), want)
    assert not y[..., 5:].any()  # the padded lanes are written as 0


def test_list_of_boxes_and_batch_indices():
    x, rois = problem(7)
    per_image = [rois[rois[:, 0] == b, 1:] for b in range(2)]
    order = np.argsort(rois[:, 0], kind="stable")
    y = roialign.roi_align_rotated(x, per_image, 2, SCALE)
    np.testing.assert_array_equal(y, roialign.roi_align_rotated(x, rois[order], 2, SCALE))


def test_kernel_select_rotated():
    x, rois = problem(8)
    kernel = roialign.select(output_size=2, spatial_scale=SCALE, sampling_ratio=0, aligned=True, dtype="f64",
                             rotated=True, angle_unit="degrees", clockwise=True, backward=True)
    assert kernel.rotated and kernel.angle_unit == "degrees" and kernel.clockwise
    assert "rotated=True" in repr(kernel) and kernel.coordinate_mode == "half_pixel"
    y = roialign.roi_align_rotated(x, rois, 2, SCALE, angle_unit="degrees", clockwise=True)
    np.testing.assert_array_equal(kernel.run(x, rois), y)
    dy = np.ones_like(y)
    np.testing.assert_array_equal(kernel.run_backward(dy, x, rois), roialign.roi_align_rotated_backward(
        dy, x, rois, 2, SCALE, angle_unit="degrees", clockwise=True))
    plain = roialign.select()
    assert not plain.rotated and "rotated" not in repr(plain)


def test_threads_give_the_same_gradient_bits():
    x, rois = problem(9, c=16, h=20, w=24, k=40)
    dy = np.random.default_rng(2).random((40, 16, 7, 7))
    for pool in POOLS:
        for dtype in (np.float32, np.float64):
            a = roialign.roi_align_rotated_backward(dy.astype(dtype), x.astype(dtype), rois, 7, SCALE, pool=pool,
                                                    angle_unit="degrees", num_threads=1)
            b = roialign.roi_align_rotated_backward(dy.astype(dtype), x.astype(dtype), rois, 7, SCALE, pool=pool,
                                                    angle_unit="degrees", num_threads=2)
            np.testing.assert_array_equal(a, b)


def test_refusals():
    x, rois = problem(10)
    with pytest.raises(ValueError, match=r"\[K, 6\]"):
        roialign.roi_align_rotated(x, rois[:, :5], 2)
    with pytest.raises(ValueError, match=r"\[L, 5\]"):
        roialign.roi_align_rotated(x, [rois[:, 1:5]], 2)
    with pytest.raises(ValueError, match="angle_unit"):
        roialign.roi_align_rotated(x, rois, 2, angle_unit="gradians")
    with pytest.raises(TypeError, match="clockwise"):
        roialign.roi_align_rotated(x, rois, 2, clockwise="yes")
    bad = rois.copy()
    bad[2, 3] = -4.0  # a negative width of an aligned box
    out = np.full((len(rois), 3, 2, 2), 7.0)
    with pytest.raises(ValueError, match="roi 2"):
        roialign.roi_align_rotated(x, bad, 2, out=out)
    assert (out == 7.0).all()
    bad[2, 3], bad[4, 5] = 1.0, np.inf
    with pytest.raises(ValueError, match="roi 4"):
        roialign.roi_align_rotated(x, bad, 2)
    with pytest.raises(ValueError, match="rotated"):
        roialign.select(angle_unit="degrees")


def _openvino():
    """openvino, installed or from the checkout's .peers/ (.ci/setup-debian.sh), as test_multi_scale.py finds it."""
    try:
        import openvino
    except ImportError:
        peers = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".peers"))
        if not os.path.isdir(peers):
            return None
        sys.path.append(peers)
        try:
            import openvino
        except Exception:
            return None
    return openvino


@pytest.mark.parametrize("clockwise", [False, True])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_matches_openvino_roi_align_rotated_15(clockwise, sampling_ratio):
    """Another implementation of the definition: OpenVINO's ROIAlignRotated-15 (radians, aligned, [K, 5] boxes and
    batch indices, clockwise_mode) on its CPU plugin, in float32."""
    ov = _openvino()
    if ov is None:
        pytest.skip("openvino not importable (installed or in .peers)")
    import openvino.opset15 as op15

    x, rois = problem(30 + sampling_ratio + clockwise, c=6, k=20, degrees=False)
    x = x.astype(np.float32)
    boxes, batch = rois[:, 1:].astype(np.float32), rois[:, 0].astype(np.int32)
    params = [op15.parameter(list(a.shape), a.dtype) for a in (x, boxes, batch)]
    node = op15.roi_align_rotated(*params, pooled_h=2, pooled_w=3, sampling_ratio=sampling_ratio, spatial_scale=SCALE,
                                  clockwise_mode=clockwise)
    compiled = ov.Core().compile_model(ov.Model([node.output(0)], params), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ref = compiled([x, boxes, batch])[0]
    got = roialign.roi_align_rotated(x, [boxes[batch == b] for b in range(2)], (2, 3), SCALE, sampling_ratio,
                                     clockwise=clockwise)
    order = np.argsort(batch, kind="stable")  # the list form gives image 0's boxes first
    assert_close(got, ref[order], 1e-5)


# ---------------------------------------------------------------------------------------------------------------
# torch: the operator, autograd, the modules, TorchScript, FX, ONNX
# ---------------------------------------------------------------------------------------------------------------

def torch_ops():
    from roialign import _torch_ops

    if _torch_ops.available() is None:
        if os.environ.get("ROIALIGN_REQUIRE_TORCH_OPS") == "1":
            pytest.fail("ROIALIGN_REQUIRE_TORCH_OPS=1 but the package has no torch operators")
        pytest.skip("the package was built without its torch operators")
    return torch.ops.roialign


def torch_problem(seed, degrees=True, channels_last=False, **kwargs):
    x, rois = problem(seed, degrees=degrees, **kwargs)
    x = torch.from_numpy(x)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    return x.requires_grad_(), torch.from_numpy(rois)


@needs_torch
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("pool", POOLS)
def test_gradcheck_of_the_operator(layout, pool):
    ops = torch_ops()
    for unit, clockwise, aligned in [("degrees", False, True), ("radians", True, False)]:
        x, rois = torch_problem(POOLS.index(pool), unit == "degrees", layout == "NHWC", h=6, w=7, k=5)

        def f(z):
            return ops.roi_align_rotated(z, rois, SCALE, 2, 3, 0, aligned, clockwise, angle_unit=unit.upper(),
                                         layout=layout, pool_mode=pool.upper())

        assert torch.autograd.gradcheck(f, (x,))
        y = f(x)
        assert y.dtype == torch.float64
        assert y.is_contiguous(memory_format=torch.channels_last if layout == "NHWC" else torch.contiguous_format)
        assert_close(y.detach().numpy(), reference(x.detach().numpy(), rois.numpy(), (2, 3), SCALE, 0, unit,
                                                   clockwise, aligned, pool), TOL64)


@needs_torch
def test_gradcheck_of_both_conventions_modules_and_the_function():
    torch_ops()
    from roialign import nn as rnn

    x, rois = torch_problem(20, h=6, w=7, k=5)
    assert torch.autograd.gradcheck(lambda z: rnn.ROIAlignRotated((2, 3), SCALE, 0)(z, rois), (x,))
    x, rois = torch_problem(21, degrees=False, h=6, w=7, k=5)
    for aligned in (True, False):
        for clockwise in (False, True):
            module = rnn.RoIAlignRotated((3, 2), SCALE, 2, aligned, clockwise)
            assert torch.autograd.gradcheck(lambda z: module(z, rois), (x,))
    assert torch.autograd.gradcheck(
        lambda z: roialign.roi_align_rotated(z, rois, 2, SCALE, clockwise=True, pool="max"), (x,))


@needs_torch
def test_modules_are_the_two_conventions():
    torch_ops()
    from roialign import nn as rnn

    x, rois = torch_problem(22)
    x = x.detach()
    d2 = rnn.ROIAlignRotated(3, SCALE, 0)
    np.testing.assert_array_equal(d2(x, rois).numpy(), roialign.roi_align_rotated(
        x.numpy(), rois.numpy(), 3, SCALE, 0, angle_unit="degrees", clockwise=False, aligned=True))
    radians = rois.clone()
    radians[:, 5] *= math.pi / 180
    mm = rnn.RoIAlignRotated((3, 4), SCALE, 2, False, True)
    np.testing.assert_array_equal(mm(x, radians).numpy(), roialign.roi_align_rotated(
        x.numpy(), radians.numpy(), (3, 4), SCALE, 2, angle_unit="radians", clockwise=True, aligned=False))
    # channels_last maps with layout="NHWC" give the same values in channels_last memory.
    y = rnn.RoIAlignRotated((3, 4), SCALE, 2, False, True, layout="NHWC")(
        x.contiguous(memory_format=torch.channels_last), radians)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert_close(y.numpy(), mm(x, radians).numpy(), TOL64)


@needs_torch
def test_module_signatures():
    torch_ops()
    from roialign import nn as rnn

    d2 = inspect.signature(rnn.ROIAlignRotated.__init__).parameters
    assert list(d2)[:4] == ["self", "output_size", "spatial_scale", "sampling_ratio"]
    assert all(d2[n].default is inspect.Parameter.empty for n in ("output_size", "spatial_scale", "sampling_ratio"))
    mm = inspect.signature(rnn.RoIAlignRotated.__init__).parameters
    assert list(mm)[:6] == ["self", "output_size", "spatial_scale", "sampling_ratio", "aligned", "clockwise"]
    assert (mm["sampling_ratio"].default, mm["aligned"].default, mm["clockwise"].default) == (0, True, False)
    for cls in (rnn.ROIAlignRotated, rnn.RoIAlignRotated):
        assert list(inspect.signature(cls.forward).parameters) == ["self", "input", "rois"]
    m = rnn.RoIAlignRotated(7, 0.25)
    assert (m.output_size, m.spatial_scale, m.sampling_ratio, m.aligned, m.clockwise) == ((7, 7), 0.25, 0, True, False)
    assert "clockwise=False" in repr(m) and "ROIAlignRotated(output_size=(7, 7)" in repr(rnn.ROIAlignRotated(7, 1, 2))


@needs_torch
def test_package_function_goes_through_the_operator():
    torch_ops()
    x, rois = torch_problem(23)
    y = roialign.roi_align_rotated(x, rois, 2, SCALE, angle_unit="degrees", pool="max_onnx")
    assert y.grad_fn is not None
    y.sum().backward()
    dy = torch.ones_like(y)
    np.testing.assert_array_equal(x.grad.numpy(), roialign.roi_align_rotated_backward(
        dy.numpy(), x.detach().numpy(), rois.numpy(), 2, SCALE, angle_unit="degrees", pool="max_onnx"))
    np.testing.assert_array_equal(x.grad.numpy(), roialign.roi_align_rotated_backward(
        dy, x.detach(), rois, 2, SCALE, angle_unit="degrees", pool="max_onnx").numpy())
    # Off the operator (another target), a tensor that requires grad is refused rather than losing its gradient.
    with pytest.raises(RuntimeError, match="records no gradient"):
        roialign.roi_align_rotated(x, rois, 2, SCALE, target="generic")


@needs_torch
def test_operator_threads_give_the_same_gradient_bits():
    ops = torch_ops()
    x, rois = torch_problem(24, c=16, h=20, w=24, k=40)
    threads = torch.get_num_threads()
    grads = []
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            for pool in POOLS:
                x.grad = None
                ops.roi_align_rotated(x.float(), rois, SCALE, 7, 7, 0, True, False, angle_unit="DEGREES",
                                      pool_mode=pool.upper()).pow(2).sum().backward()
                grads.append(x.grad.clone())
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(grads[:3], grads[3:]):
        assert torch.equal(a, b)


@needs_torch
def test_double_backward_is_refused_and_meta_gives_shapes():
    ops = torch_ops()
    x, rois = torch_problem(25)
    y = ops.roi_align_rotated(x, rois, SCALE, 2, 3, angle_unit="DEGREES")
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="double backwards"):
        g.sum().backward()
    meta = ops.roi_align_rotated(torch.empty(2, 5, 9, 9, device="meta"), torch.empty(4, 6, device="meta"), 0.5, 3,
                                 2, layout="NHWC")
    assert meta.shape == (4, 5, 3, 2) and meta.device.type == "meta"
    assert meta.is_contiguous(memory_format=torch.channels_last)
    back = ops.roi_align_rotated_backward(torch.empty(4, 5, 3, 2, device="meta"), torch.empty(2, 5, 9, 9,
                                          device="meta"), torch.empty(4, 6, device="meta"), 0.5, 3, 2)
    assert back.shape == (2, 5, 9, 9)
    with pytest.raises(RuntimeError, match=r"\[K, 6\]"):
        ops.roi_align_rotated(torch.empty(2, 5, 9, 9, device="meta"), torch.empty(4, 5, device="meta"), 0.5, 3, 2)
    with pytest.raises(RuntimeError, match="angle_unit"):
        ops.roi_align_rotated(x, rois, SCALE, 2, 3, angle_unit="GRADIANS")


@needs_torch
def test_torchscript_and_fx(tmp_path):
    torch_ops()
    from roialign import nn as rnn

    x, rois = torch_problem(26)
    x = x.detach().float()
    rois = rois.float()
    for module in (rnn.ROIAlignRotated(3, SCALE, 2), rnn.RoIAlignRotated((2, 3), SCALE, 0, False, True)):
        want = module(x, rois)
        scripted = torch.jit.script(module)
        assert torch.equal(scripted(x, rois), want)
        traced = torch.jit.trace(module, (x, rois))
        other = rois[:3].clone()  # the trace pools the rois it is given, not the traced ones
        assert torch.equal(traced(x, other), module(x, other))
        path = str(tmp_path / "m.pt")
        scripted.save(path)
        assert torch.equal(torch.jit.load(path)(x, rois), want)
        graph = torch.fx.symbolic_trace(module).graph
        calls = [n for n in graph.nodes if n.op == "call_function"]
        assert len(calls) == 1 and "roialign.roi_align_rotated" in str(calls[0].target)


@needs_torch
@pytest.mark.skipif(torch is None or not hasattr(torch, "compile"), reason="torch.compile is torch 2.x's")
def test_compile_gives_eager_results_and_gradients():
    torch_ops()
    from roialign import nn as rnn

    module = rnn.ROIAlignRotated(3, SCALE, 2)
    torch._dynamo.reset()
    compiled = torch.compile(module, fullgraph=True, dynamic=True)
    for k in (7, 12):  # the Meta kernel takes a symbolic RoI count
        x, rois = torch_problem(27 + k, k=k)
        x, rois = x.detach().float(), rois.float()
        with torch.no_grad():
            assert torch.equal(compiled(x, rois), module(x, rois))
    grads = []
    for fn in (compiled, module):
        leaf = x.clone().requires_grad_()
        fn(leaf, rois).square().sum().backward()
        grads.append(leaf.grad)
    assert torch.equal(grads[0], grads[1])


@needs_torch
@pytest.mark.skipif(torch is None or not hasattr(torch, "export"), reason="torch.export is torch 2.x's")
def test_export_gives_eager_results():
    torch_ops()
    from roialign import nn as rnn

    module = rnn.RoIAlignRotated((2, 3), SCALE, 0, False, True)
    x, rois = torch_problem(28, degrees=False)
    x = x.detach()
    exported = torch.export.export(module, (x, rois), dynamic_shapes=(None, {0: torch.export.Dim("k", min=2)}))
    targets = [str(n.target) for n in exported.graph.nodes if n.op == "call_function"]
    assert any("roialign.roi_align_rotated" in t for t in targets)
    other = rois[:4].clone()
    assert torch.equal(exported.module()(x, other), module(x, other))


def peers_path():
    """Where onnx comes from: ROIALIGN_PEERS_PATH, else the checkout's .peers/ (.ci/setup-debian.sh), else None."""
    if os.environ.get("ROIALIGN_PEERS_PATH"):
        return os.environ["ROIALIGN_PEERS_PATH"]
    peers = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".peers"))
    return peers if os.path.isdir(os.path.join(peers, "onnx")) else None


# onnx comes from peers_path(), in a process of its own (as in test_torch_ops.py, since torch has imported Debian's
# older typing_extensions here): prints the graph's nodes (op, domain, inputs, attributes) and constants as JSON.
ONNX_NODES = textwrap.dedent("""
    import json, os, sys
    for p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
        sys.path.insert(0, p)
    import onnx, onnx.numpy_helper
    model = onnx.load(sys.argv[1])
    value = lambda v: onnx.numpy_helper.to_array(v).tolist() if isinstance(v, onnx.TensorProto) else v
    nodes = [{"op": n.op_type, "domain": n.domain, "inputs": list(n.input), "outputs": list(n.output),
              "attributes": {a.name: value(onnx.helper.get_attribute_value(a)) for a in n.attribute}}
             for n in model.graph.node]
    constants = {i.name: onnx.numpy_helper.to_array(i).tolist() for i in model.graph.initializer}
    for n in nodes:
        if n["op"] == "Constant":
            constants[n["outputs"][0]] = n["attributes"]["value"]
    print(json.dumps({"nodes": nodes, "constants": constants},
                     default=lambda v: v.decode() if isinstance(v, bytes) else str(v)))
""")


def onnx_nodes(module, args, path, opset):
    import json

    kwargs = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False  # the TorchScript exporter, which roialign's symbolics serve
    with warnings.catch_warnings():  # that the exporter cannot infer the shape of a custom node
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(module, args, path, opset_version=opset, input_names=["x", "rois"],
                          custom_opsets={"mmcv": 1}, **kwargs)
    run = subprocess.run([sys.executable, "-c", ONNX_NODES, path], capture_output=True, text=True,
                         env=dict(os.environ, ROIALIGN_PEERS_PATH=peers_path()))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@needs_torch
@pytest.mark.parametrize("opset", [11, 16])
def test_onnx_export_is_mmcvs_node(tmp_path, opset):
    torch_ops()
    if peers_path() is None:
        pytest.skip("onnx is not there to read the export (ROIALIGN_PEERS_PATH, or the checkout's .peers/)")
    from roialign import nn as rnn

    x, rois = torch.rand(2, 4, 20, 24), torch.tensor([[0, 30.0, 20, 16, 8, 0.3], [1, 40, 30, 20, 12, -1.0]])
    nodes = onnx_nodes(rnn.RoIAlignRotated((3, 5), 0.5, 2, False, True), (x, rois), str(tmp_path / "mm.onnx"),
                       opset)["nodes"]
    (node,) = [n for n in nodes if n["op"] == "MMCVRoIAlignRotated"]
    assert node["inputs"] == ["x", "rois"]
    assert node["domain"] == "mmcv"
    assert node["attributes"] == {"output_height": 3, "output_width": 5, "spatial_scale": 0.5, "sampling_ratio": 2,
                                  "aligned": 0, "clockwise": 1}
    assert not any(n["op"] == "Mul" for n in nodes)  # radians go in as they are
    # detectron2's module: aligned, counter-clockwise, adaptive, and degrees turned into radians in the graph.
    graph = onnx_nodes(rnn.ROIAlignRotated((4, 2), 0.25, -1), (x, rois), str(tmp_path / "d2.onnx"), opset)
    nodes = graph["nodes"]
    (node,) = [n for n in nodes if n["op"] == "MMCVRoIAlignRotated"]
    assert node["attributes"] == {"output_height": 4, "output_width": 2, "spatial_scale": 0.25, "sampling_ratio": 0,
                                  "aligned": 1, "clockwise": 0}
    (mul,) = [n for n in nodes if n["op"] == "Mul"]
    assert mul["outputs"] == [node["inputs"][1]] and "rois" in mul["inputs"]
    (factor,) = [graph["constants"][i] for i in mul["inputs"] if i != "rois"]
    np.testing.assert_allclose(factor, [1, 1, 1, 1, 1, math.pi / 180], rtol=1e-7)


@needs_torch
def test_onnx_export_refuses_what_mmcv_has_no_attribute_for(tmp_path):
    torch_ops()

    class MaxPool(torch.nn.Module):
        def forward(self, x, rois):
            return torch.ops.roialign.roi_align_rotated(x, rois, 1.0, 2, 2, pool_mode="MAX")

    x, rois = torch.rand(1, 2, 8, 8), torch.tensor([[0, 4.0, 4, 3, 3, 0.5]])
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with pytest.raises(Exception) as refused:
        torch.onnx.export(MaxPool(), (x, rois), str(tmp_path / "max.onnx"), opset_version=16, **kwargs)
    chain, e = [], refused.value  # the symbolic's RuntimeError, or an exporter's error that carries it
    while e is not None and len(chain) < 8:
        chain.append(str(e))
        e = e.__cause__ or e.__context__
    assert any("averages; it has no pool mode for MAX" in m for m in chain), chain


# OpenVINO with roialign's extension (ROIALIGN_OPENVINO_EXTENSION, set by the PyTorch stages of .ci/test.sh), in a
# process of its own: reads the exported model, checks that the mmcv node became roialign's op, runs it.
OPENVINO_RUNNER = textwrap.dedent("""
    import os, sys
    for p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
        sys.path.insert(0, p)
    import numpy as np, openvino as ov
    core = ov.Core()
    core.add_extension(os.environ["ROIALIGN_OPENVINO_EXTENSION"])
    model = core.read_model(sys.argv[1])
    assert any(op.get_type_name() == "RoialignRoiAlignRotated" for op in model.get_ops()), "not roialign's op"
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.save(sys.argv[3], compiled(dict(np.load(sys.argv[2])))[0])
""")


@needs_torch
@pytest.mark.parametrize("module_kind", ["mmcv", "detectron2"])
def test_onnx_export_runs_in_openvino_with_the_extension(tmp_path, module_kind):
    torch_ops()
    extension = os.environ.get("ROIALIGN_OPENVINO_EXTENSION")
    if not extension:
        if os.environ.get("ROIALIGN_REQUIRE_PACKAGED_TORCH_OPS") == "1":
            pytest.fail("ROIALIGN_OPENVINO_EXTENSION is not set: the export is not run in OpenVINO")
        pytest.skip("ROIALIGN_OPENVINO_EXTENSION is not set (the PyTorch stages of .ci/test.sh set it)")
    if peers_path() is None:
        pytest.skip("openvino is not there (ROIALIGN_PEERS_PATH, or the checkout's .peers/)")
    from roialign import nn as rnn

    # mmcv's module in radians, clockwise; detectron2's in degrees (turned into radians in the graph).
    module = (rnn.RoIAlignRotated((3, 5), 0.5, 2, aligned=True, clockwise=True) if module_kind == "mmcv"
              else rnn.ROIAlignRotated((4, 2), 0.25, 0))
    g = torch.Generator().manual_seed(7)
    x = torch.rand(2, 4, 20, 24, generator=g)
    angles = [0.3, -1.0, 2.5] if module_kind == "mmcv" else [17.0, -60.0, 135.0]
    rois = torch.tensor([[0, 30.0, 20, 16, 8, angles[0]], [1, 40, 30, 20, 12, angles[1]],
                         [0, 12, 44, 30, 6, angles[2]]])
    eager = module(x, rois)
    path = str(tmp_path / "model.onnx")
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with warnings.catch_warnings():  # that the exporter cannot infer the shape of a custom node
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(module, (x, rois), path, opset_version=16, input_names=["x", "rois"],
                          custom_opsets={"mmcv": 1}, **kwargs)
    feeds, out = str(tmp_path / "feeds.npz"), str(tmp_path / "openvino.npy")
    np.savez(feeds, x=x.numpy(), rois=rois.numpy())
    run = subprocess.run([sys.executable, "-c", OPENVINO_RUNNER, path, feeds, out], capture_output=True, text=True,
                         env=dict(os.environ, ROIALIGN_PEERS_PATH=peers_path()))
    assert run.returncode == 0, run.stderr
    # The same kernels on the same float32 inputs; the graph's degrees factor rounds each angle once.
    np.testing.assert_allclose(np.load(out), eager.numpy(), rtol=1e-5, atol=1e-6)
