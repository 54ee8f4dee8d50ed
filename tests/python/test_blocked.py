# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""The channel-blocked layouts NCHW4c, NCHW8c and NCHW16c in the Python package (docs/python.md, issue 30).

A blocked map is a [N, ceil(C/b), H, W, b] array, its result [K, ceil(C/b), PH, PW, b]; ``channels=`` gives the
logical C. The maps are built here from NCHW arrays with numpy, their padded lanes NaN (never read, docs/semantics.md),
and each result is compared with the NHWC result of the same target, re-blocked: on one ISA a blocked kernel gives
the NHWC kernel's bits for every logical element (docs/semantics.md#accuracy), so the comparison is of bits, and the
padded lanes of the result must be +0. Against the NCHW result the comparison is to the documented tolerance.
"""
import numpy as np
import pytest

import roialign

from conftest import torch

LAYOUTS = ["NCHW4c", "NCHW8c", "NCHW16c"]
BLOCK = {"NCHW4c": 4, "NCHW8c": 8, "NCHW16c": 16}
CHANNELS = [1, 7, 17, 64]
TARGETS = ["host", "generic"]


# ---------------------------------------------------------------------------------------------------------------
# Helpers: blocking with numpy, bit comparison
# ---------------------------------------------------------------------------------------------------------------

def to_blocked(x, b, fill):
    """[N, C, H, W] -> [N, ceil(C/b), H, W, b], the padded lanes of the last block set to `fill`."""
    n, c, h, w = x.shape
    cb = -(-c // b)
    padded = np.full((n, cb * b, h, w), fill, dtype=x.dtype)
    padded[:, :c] = x
    return np.ascontiguousarray(padded.reshape(n, cb, b, h, w).transpose(0, 1, 3, 4, 2))


def from_blocked(y, c):
    """[K, ceil(C/b), PH, PW, b] -> [K, C, PH, PW] (the logical elements)."""
    k, cb, ph, pw, b = y.shape
    return y.transpose(0, 1, 4, 2, 3).reshape(k, cb * b, ph, pw)[:, :c]


def padded_lanes(y, c):
    k, cb, ph, pw, b = y.shape
    return y.transpose(0, 1, 4, 2, 3).reshape(k, cb * b, ph, pw)[:, c:]


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({4: np.uint32, 2: np.uint16}[a.dtype.itemsize])


def assert_same_bits(got, ref):
    assert got.shape == ref.shape and got.dtype == ref.dtype
    same = bits(got) == bits(ref)
    assert same.all(), "%d of %d elements differ, first at %s: %r vs %r" % (
        (~same).sum(), same.size, np.argwhere(~same)[0], got[tuple(np.argwhere(~same)[0])],
        ref[tuple(np.argwhere(~same)[0])])


def assert_blocked_result(got, ref_nchw, c, b):
    """`got` is `ref_nchw` ([K, C, PH, PW], of the same bits) in blocks of b, padded lanes +0."""
    k, _, ph, pw = ref_nchw.shape
    assert got.shape == (k, -(-c // b), ph, pw, b)
    assert_same_bits(from_blocked(got, c), ref_nchw)
    pad = padded_lanes(got, c)
    assert (bits(pad) == 0).all(), "padded output lanes are not +0"


def assert_close(got, ref, tol_abs=1e-5, tol_rel=1e-4):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape
    err = np.abs(got - ref)
    bad = ~(err <= tol_abs + tol_rel * np.abs(ref))
    assert not bad.any(), "max abs err %g at %s" % (np.nanmax(err), np.argwhere(bad)[0])


def make_problem(seed, c, n=2):
    """An NCHW float32 map of c channels and [K, 5] boxes inside, straddling and outside it."""
    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(3, 20)), int(rng.integers(3, 20))
    k = int(rng.integers(1, 10))
    scale = float(rng.choice([1.0, 0.5]))
    x = rng.uniform(-1, 1, size=(n, c, h, w)).astype(np.float32)
    boxes = np.empty((k, 5), np.float32)
    for i in range(k):
        x1, y1 = rng.uniform(-3, w + 1), rng.uniform(-3, h + 1)
        boxes[i] = (rng.integers(0, n), x1 / scale, y1 / scale, (x1 + rng.uniform(0.1, w)) / scale,
                    (y1 + rng.uniform(0.1, h)) / scale)
    pooled = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    return x, boxes, pooled, scale


def nhwc_reference(x, boxes, pooled, scale, **kwargs):
    """roi_align of the NHWC map, as [K, C, PH, PW]: the bits the blocked kernels must give."""
    y = roialign.roi_align(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), boxes, pooled, scale, layout="NHWC",
                           **kwargs)
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2))


def numpy_dtypes(target):
    served = roialign.query_target(target)["dtypes"]
    return [d for d in ("float32", "float16") if d in served]


def cases():
    return [(layout, c, target) for layout in LAYOUTS for c in CHANNELS for target in TARGETS]


# ---------------------------------------------------------------------------------------------------------------
# roi_align, multi_scale_roi_align and Kernel.run against NHWC, bit for bit
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout,c,target", cases())
def test_roi_align_blocked_matches_nhwc(layout, c, target):
    b = BLOCK[layout]
    for dtype in numpy_dtypes(target):
        for seed, (pool, mode, ratio) in enumerate([("avg", "legacy", 2), ("avg", "half_pixel", -1),
                                                    ("max", "half_pixel_centered", 2), ("max_onnx", "legacy", 1)]):
            x, boxes, pooled, scale = make_problem(100 * c + seed, c)
            x = x.astype(dtype)
            args = dict(sampling_ratio=ratio, pool=pool, coordinate_mode=mode, target=target)
            xb = to_blocked(x, b, np.nan)
            got = roialign.roi_align(xb, boxes, pooled, scale, layout=layout, channels=c, **args)
            assert isinstance(got, np.ndarray) and got.dtype == np.dtype(dtype)
            assert_blocked_result(got, nhwc_reference(x, boxes, pooled, scale, **args), c, b)
            # Against NCHW: the same values to the documented tolerance (the NCHW kernels accumulate in their own
            # order), exactly on the reference, where NHWC is NCHW transposed bit for bit.
            nchw = roialign.roi_align(x, boxes, pooled, scale, **args)
            if target == "generic":
                assert_same_bits(from_blocked(got, c), nchw)
            elif dtype == "float32":
                assert_close(from_blocked(got, c), nchw)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_channels_default_is_whole_blocks(layout):
    b = BLOCK[layout]
    x, boxes, pooled, scale = make_problem(7, 2 * b)
    xb = to_blocked(x, b, np.nan)
    got = roialign.roi_align(xb, boxes, pooled, scale, 2, layout=layout)  # C = 2 * b, from the shape
    assert_blocked_result(got, nhwc_reference(x, boxes, pooled, scale, sampling_ratio=2), 2 * b, b)
    # Without channels=, padded lanes are channels like any other: NaN lanes give NaN results there.
    x, boxes, pooled, scale = make_problem(8, b - 1)
    xb = to_blocked(x, b, np.nan)
    assert np.isnan(padded_lanes(roialign.roi_align(xb, boxes, pooled, scale, 2, layout=layout), b - 1)).any()
    assert (padded_lanes(roialign.roi_align(xb, boxes, pooled, scale, 2, layout=layout, channels=b - 1),
                         b - 1) == 0).all()


@pytest.mark.parametrize("layout,c,target", cases())
def test_multi_scale_blocked_matches_nhwc(layout, c, target):
    b = BLOCK[layout]
    rng = np.random.default_rng(c)
    scales = [1 / 4, 1 / 8]
    for dtype in numpy_dtypes(target):
        levels_nchw = [rng.uniform(-1, 1, size=(2, c, 40, 56)).astype(dtype),
                       rng.uniform(-1, 1, size=(2, c, 20, 28)).astype(dtype)]
        boxes = [np.array([[0, 0, 30, 30], [10, 20, 200, 150]], np.float32),
                 np.array([[5, 5, 100, 60], [0, 0, 223, 159], [40, 40, 41, 41]], np.float32)]
        for levels in (None, np.array([1, 0, 0, 1, 1])):
            args = dict(sampling_ratio=2, levels=levels, target=target)
            got = roialign.multi_scale_roi_align([to_blocked(f, b, np.nan) for f in levels_nchw], boxes, 3, scales,
                                                 layout=layout, channels=c, **args)
            ref = roialign.multi_scale_roi_align([np.ascontiguousarray(f.transpose(0, 2, 3, 1)) for f in levels_nchw],
                                                 boxes, 3, scales, layout="NHWC", **args)
            assert_blocked_result(got, np.ascontiguousarray(ref.transpose(0, 3, 1, 2)), c, b)
            out = np.full(got.shape, np.nan, dtype)
            assert roialign.multi_scale_roi_align([to_blocked(f, b, np.nan) for f in levels_nchw], boxes, 3, scales,
                                                  layout=layout, channels=c, out=out, **args) is out
            assert_same_bits(out, got)


@pytest.mark.parametrize("layout,c,target", cases())
def test_kernel_run_blocked_matches_nhwc(layout, c, target):
    b = BLOCK[layout]
    for dtype in numpy_dtypes(target):
        x, boxes, pooled, scale = make_problem(1000 + c, c)
        x = x.astype(dtype)
        kernel = roialign.select(target, output_size=pooled, spatial_scale=scale, sampling_ratio=2, aligned=True,
                                 layout=layout.lower(), dtype=dtype)
        assert kernel.layout == layout  # the library's spelling, whatever the caller's case
        assert ("nchw%dc" % b) in kernel.name
        ref = nhwc_reference(x, boxes, pooled, scale, sampling_ratio=2, aligned=True, target=target)
        xb = to_blocked(x, b, np.nan)
        got = kernel.run(xb, boxes, channels=c)
        assert_blocked_result(got, ref, c, b)
        # out=: written in place, its padded lanes (NaN before) +0 after
        out = np.full(got.shape, np.nan, dtype)
        assert kernel.run(xb, boxes, out=out, channels=c) is out
        assert_blocked_result(out, ref, c, b)
        out[...] = np.nan
        assert roialign.roi_align(xb, boxes, pooled, scale, 2, True, layout=layout, channels=c, target=target,
                                  out=out) is out
        assert_blocked_result(out, ref, c, b)


def torch_dtypes():
    if torch is None:
        return []
    served = roialign.query_target("host")["dtypes"]
    return [d for d in ("float32", "float16", "bfloat16") if d in served]


@pytest.mark.skipif(torch is None, reason="torch not importable")
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("c", CHANNELS)
def test_torch_tensors_blocked(layout, c):
    """torch has no memory format for the blocked layouts: a [N, ceil(C/b), H, W, b] tensor, torch result."""
    b = BLOCK[layout]
    for dtype in torch_dtypes():
        x, boxes, pooled, scale = make_problem(2000 + c, c)
        xt = torch.from_numpy(x).to(getattr(torch, dtype))
        ref_t = roialign.roi_align(xt.contiguous(memory_format=torch.channels_last), torch.from_numpy(boxes),
                                   pooled, scale, 2, layout="NHWC")
        ref = ref_t.float().numpy()  # bf16 and f16 widen exactly; +0 stays +0
        xb = torch.from_numpy(to_blocked(xt.float().numpy(), b, np.nan)).to(xt.dtype)
        got = roialign.roi_align(xb, torch.from_numpy(boxes), pooled, scale, 2, layout=layout, channels=c)
        assert isinstance(got, torch.Tensor) and got.dtype == xt.dtype and got.is_contiguous()
        assert tuple(got.shape) == (boxes.shape[0], -(-c // b)) + pooled + (b,)
        assert_blocked_result(got.float().numpy(), ref, c, b)
        # Other strides are copied first; a torch out= is written in place.
        wide = torch.zeros(xb.shape[:4] + (2 * b,), dtype=xb.dtype)
        wide[..., ::2] = xb
        out = torch.full(tuple(got.shape), float("nan"), dtype=xt.dtype)
        kernel = roialign.select(output_size=pooled, spatial_scale=scale, sampling_ratio=2, layout=layout,
                                 dtype=xt.dtype)
        assert kernel.run(wide[..., ::2], [torch.from_numpy(b_) for b_ in per_image(boxes, 2)], out=out,
                          channels=c) is out
        assert_blocked_result(out.float().numpy(), ref, c, b)
        # Multi-scale, through the extension (the torch operators take NCHW and NHWC only).
        got = roialign.multi_scale_roi_align([xb], torch.from_numpy(boxes), pooled, [scale], sampling_ratio=2,
                                             layout=layout, channels=c, levels=np.zeros(boxes.shape[0], np.int64))
        assert isinstance(got, torch.Tensor)
        assert_blocked_result(got.float().numpy(), ref, c, b)


def per_image(boxes, n):
    return [np.ascontiguousarray(boxes[boxes[:, 0] == i][:, 1:]) for i in range(n)]


def test_read_in_place_when_dense():
    x, _, _, _ = make_problem(3, 17)
    xb = to_blocked(x, 8, np.nan)
    assert roialign._Map(xb, "NCHW8c", 17).memory is xb
    assert roialign._Map(xb, "NCHW8c").extent == 24 and roialign._Map(xb, "NCHW8c").channels is None
    assert roialign._Map(xb, "NCHW8c", 17).extent == 24 and roialign._Map(xb, "NCHW8c", 17).channels == 17
    strided = np.zeros(xb.shape[:4] + (16,), np.float32)[..., ::2]
    assert not np.shares_memory(roialign._Map(strided, "NCHW8c").memory, strided)


# ---------------------------------------------------------------------------------------------------------------
# Names and refusals
# ---------------------------------------------------------------------------------------------------------------

def test_layout_names_are_the_librarys():
    assert roialign.query_target("generic")["layouts"] == ["NCHW", "NHWC"] + LAYOUTS
    x, boxes, pooled, scale = make_problem(4, 5)
    xb = to_blocked(x, 16, np.nan)
    ref = roialign.roi_align(xb, boxes, pooled, scale, 2, layout="NCHW16c", channels=5)
    for spelling in ("NCHW16C", "nchw16c", "Nchw16C"):
        assert_same_bits(roialign.roi_align(xb, boxes, pooled, scale, 2, layout=spelling, channels=5), ref)
        assert roialign.select(layout=spelling).layout == "NCHW16c"
    with pytest.raises(ValueError, match="unknown layout 'NCHW32c'"):
        roialign.roi_align(xb, boxes, pooled, scale, 2, layout="NCHW32c")


def refusal_cases():
    x, boxes, pooled, scale = make_problem(5, 7)
    b4 = to_blocked(x, 4, np.nan)  # [N, 2, H, W, 4]
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    k = boxes.shape[0]
    return [
        # the last dimension is not the block
        ("last dim", dict(input=b4, layout="NCHW8c"), ValueError, r"last dimension must be the block, 8"),
        ("last dim, channels", dict(input=b4, layout="NCHW16c", channels=7), ValueError, "must be the block, 16"),
        # ceil(channels / b) is not the array's block count
        ("too many channels", dict(input=b4, layout="NCHW4c", channels=9), ValueError,
         r"channels=9 needs ceil\(9/4\) = 3 blocks of 4; input .* has 2"),
        ("too few channels", dict(input=b4, layout="NCHW4c", channels=4), ValueError,
         r"channels=4 needs ceil\(4/4\) = 1 blocks of 4; input .* has 2"),
        ("negative channels", dict(input=b4, layout="NCHW4c", channels=-1), ValueError, "channels must be >= 0"),
        ("huge channels", dict(input=b4, layout="NCHW4c", channels=2 ** 63 - 1), ValueError,
         r"channels=9223372036854775807 needs ceil\(9223372036854775807/4\) = 2305843009213693952 blocks of 4"),
        ("channels beyond int64", dict(input=b4, layout="NCHW4c", channels=2 ** 64), ValueError, "fit int64"),
        ("bool channels", dict(input=b4, layout="NCHW4c", channels=True), TypeError, "channels must be an int"),
        ("str channels", dict(input=b4, layout="NCHW4c", channels="7"), TypeError, "channels must be an int"),
        ("float channels", dict(input=b4, layout="NCHW4c", channels=7.0), TypeError, "channels must be an int"),
        # the rank
        ("4-D blocked", dict(input=x, layout="NCHW4c"), ValueError, r"5-D, \[N, ceil\(C/b\), H, W, b\] with b = 4"),
        ("5-D NCHW", dict(input=b4, layout="NCHW"), ValueError, r"4-D, \[N, C, H, W\]"),
        # channels= with NCHW and NHWC: accepted only equal to the map's C
        ("NCHW channels", dict(input=x, layout="NCHW", channels=8), ValueError,
         r"channels=8 but input \(.*\) has 7 channels"),
        ("NHWC channels", dict(input=nhwc, layout="NHWC", channels=4), ValueError,
         r"channels=4 but input \(.*\) has 7 channels"),
        # out= of the wrong shape or rank
        ("out shape", dict(input=b4, layout="NCHW4c", channels=7,
                           out=np.full((k, 1) + pooled + (4,), 5.0, np.float32)), ValueError,
         r"out has shape .*; expected \(%d, 2, %d, %d, 4\) \(K, ceil\(C/b\), PH, PW, b\)" % ((k,) + pooled)),
        ("out rank", dict(input=b4, layout="NCHW4c", channels=7, out=np.full((k, 7) + pooled, 5.0, np.float32)),
         ValueError, r"out must be \[K, ceil\(C/b\), PH, PW, b\] with b = 4"),
        ("out strides", dict(input=b4, layout="NCHW4c", channels=7,
                             out=np.full((k, 2) + pooled + (8,), 5.0, np.float32)[..., ::2]), ValueError,
         "C-contiguous"),
    ], boxes, pooled, scale


@pytest.mark.parametrize("case", [c[0] for c in refusal_cases()[0]])
def test_refusals(case):
    cases, boxes, pooled, scale = refusal_cases()
    _, kwargs, exc, match = next(c for c in cases if c[0] == case)
    kwargs = dict(kwargs)
    input = kwargs.pop("input")
    out = kwargs.get("out")
    before = None if out is None else out.copy()
    with pytest.raises(exc, match=match):
        roialign.roi_align(input, boxes, pooled, scale, 2, **kwargs)
    if out is not None:
        np.testing.assert_array_equal(out, before)  # untouched
    # Kernel.run and multi_scale_roi_align refuse the same (the package's and the extension's checks are shared)
    layout = kwargs.pop("layout")
    kernel = roialign.select(output_size=pooled, spatial_scale=scale, sampling_ratio=2, layout=layout)
    with pytest.raises(exc, match=match):
        kernel.run(input, boxes, **kwargs)
    with pytest.raises(exc, match=match.replace("input", r"features\[0\]")):
        roialign.multi_scale_roi_align([input], boxes, pooled, [scale], 2, layout=layout,
                                       levels=np.zeros(boxes.shape[0], np.int64), **kwargs)
    if out is not None:
        np.testing.assert_array_equal(out, before)


def test_channels_equal_to_the_maps_is_accepted_for_nchw_and_nhwc():
    x, boxes, pooled, scale = make_problem(6, 7)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    assert_same_bits(roialign.roi_align(x, boxes, pooled, scale, 2, channels=7),
                     roialign.roi_align(x, boxes, pooled, scale, 2))
    assert_same_bits(roialign.roi_align(nhwc, boxes, pooled, scale, 2, layout="NHWC", channels=7),
                     roialign.roi_align(nhwc, boxes, pooled, scale, 2, layout="NHWC"))
    assert_same_bits(roialign.select(output_size=pooled, spatial_scale=scale, sampling_ratio=2).run(x, boxes,
                                                                                                   channels=7),
                     roialign.roi_align(x, boxes, pooled, scale, 2))
    assert_same_bits(roialign.multi_scale_roi_align([x], boxes, pooled, [scale], 2, channels=7,
                                                    levels=np.zeros(boxes.shape[0], np.int64)),
                     roialign.roi_align(x, boxes, pooled, scale, 2))


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_torch_refusals():
    x, boxes, pooled, scale = make_problem(9, 7)
    xt, bt = torch.from_numpy(x), torch.from_numpy(boxes)
    with torch.no_grad():
        # An NCHW-shaped tensor with a blocked layout: torch tensors in blocked layouts are 5-D
        with pytest.raises(ValueError, match=r"5-D tensor \[N, ceil\(C/b\), H, W, b\] with b = 8"):
            roialign.roi_align(xt, bt, pooled, scale, 2, layout="NCHW8c")
        # channels= on the torch operators' path (NCHW tensor, default target and threads) is checked too
        with pytest.raises(ValueError, match="channels=8 but input has 7 channels"):
            roialign.roi_align(xt, bt, pooled, scale, 2, channels=8)
        with pytest.raises(ValueError, match=r"channels=8 but features\[0\] has 7 channels"):
            roialign.multi_scale_roi_align([xt], bt, pooled, [scale], 2, channels=8)
        np.testing.assert_array_equal(roialign.roi_align(xt, bt, pooled, scale, 2, channels=7).numpy(),
                                      roialign.roi_align(xt, bt, pooled, scale, 2).numpy())
        xb = torch.from_numpy(to_blocked(x, 8, np.nan))
        with pytest.raises(ValueError, match=r"channels=9 needs ceil\(9/8\) = 2 blocks of 8"):
            roialign.roi_align(xb, bt, pooled, scale, 2, layout="NCHW8c", channels=9)
        out = torch.full((boxes.shape[0], 1, pooled[1], pooled[0], 8), 5.0).transpose(2, 3)  # not contiguous
        with pytest.raises(ValueError, match=r"out must be \[K, ceil\(C/b\), PH, PW, b\] with b = 8, contiguous"):
            roialign.roi_align(xb, bt, pooled, scale, 2, layout="NCHW8c", channels=7, out=out)
        assert (out == 5.0).all()
    # Blocked tensors run on the extension, which records no gradient: one that requires grad is refused (its
    # gradient: roialign.roi_align_backward)
    with pytest.raises(RuntimeError, match="records no gradient"):
        roialign.roi_align(xb.clone().requires_grad_(), bt, pooled, scale, 2, layout="NCHW8c", channels=7)


def test_multi_scale_levels_share_blocks():
    rng = np.random.default_rng(1)
    f0 = to_blocked(rng.uniform(size=(1, 7, 8, 8)).astype(np.float32), 4, np.nan)
    f1 = to_blocked(rng.uniform(size=(1, 9, 4, 4)).astype(np.float32), 4, np.nan)
    boxes = np.array([[0, 0, 0, 6, 6]], np.float32)
    with pytest.raises(ValueError, match=r"features\[1\] has batch 1 and 12 channels; features\[0\] has 1 and 8"):
        roialign.multi_scale_roi_align([f0, f1], boxes, 2, [1.0, 0.5], layout="NCHW4c")
    with pytest.raises(ValueError, match=r"channels=7 needs ceil\(7/4\) = 2 blocks of 4; features\[1\]"):
        roialign.multi_scale_roi_align([f0, f1], boxes, 2, [1.0, 0.5], layout="NCHW4c", channels=7)
