# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Tests of the Python package `roialign` (python/roialign, docs/python.md), as installed by `pip install .`.

.ci/test.sh runs them in a venv over Debian's python3 (.ci/venv) with ROIALIGN_REQUIRE_TORCHVISION=1, so the
comparisons with Debian's torchvision.ops.roi_align run rather than skip. Tolerance: docs/semantics.md#accuracy.
"""
import platform
import threading
import time

import numpy as np
import pytest

import roialign

from conftest import needs_torch, torch, torchvision_ops

tv_roi_align = getattr(torchvision_ops, "roi_align", None)

TOL_ABS = 1e-5
TOL_REL = 1e-4


def assert_close(got, ref, tol_abs=TOL_ABS, tol_rel=TOL_REL):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape
    err = np.abs(got - ref)
    bad = ~(err <= tol_abs + tol_rel * np.abs(ref))  # NaN in got counts as bad
    assert not bad.any(), "max abs err %g at %s" % (np.nanmax(err), np.argwhere(bad)[0])


def numpy_of(t):
    return t.detach().cpu().contiguous().numpy() if torch is not None and isinstance(t, torch.Tensor) else t


def make_problem(seed, n=None, c=None):
    """A random feature map (NCHW float32) and [K, 5] boxes: inside, straddling and outside the map."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(1, 4))
    c = c or int(rng.choice([1, 3, 8, 17]))
    h, w = int(rng.integers(1, 25)), int(rng.integers(1, 25))
    k = int(rng.integers(1, 13))
    scale = float(rng.choice([1.0, 0.5, 0.25]))
    x = rng.uniform(-1, 1, size=(n, c, h, w)).astype(np.float32)
    boxes = np.empty((k, 5), np.float32)
    for i in range(k):
        x1 = rng.uniform(-3, w + 1)
        y1 = rng.uniform(-3, h + 1)
        boxes[i] = (rng.integers(0, n), x1 / scale, y1 / scale, (x1 + rng.uniform(0.1, w)) / scale,
                    (y1 + rng.uniform(0.1, h)) / scale)
    pooled = (int(rng.integers(1, 8)), int(rng.integers(1, 8)))
    return x, boxes, pooled, scale


def per_image(boxes, n):
    return [boxes[boxes[:, 0] == i][:, 1:] for i in range(n)]


# ---------------------------------------------------------------------------------------------------------------
# Against torchvision: both aligned settings, both layouts, both box forms, fixed and adaptive grids, numpy and torch
# ---------------------------------------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 0, 2])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("box_form", ["rows", "list"])
def test_matches_torchvision(aligned, sampling_ratio, layout, kind, box_form):
    for seed in range(4):
        x, boxes, pooled, scale = make_problem(1000 * seed + 10 * (sampling_ratio + 1) + aligned)
        n = x.shape[0]
        ref = tv_roi_align(torch.from_numpy(x), torch.from_numpy(boxes), pooled, scale, sampling_ratio,
                           aligned).numpy()
        if kind == "torch":
            inp = torch.from_numpy(x)
            if layout == "NHWC":
                inp = inp.contiguous(memory_format=torch.channels_last)  # NCHW-shaped, channels_last memory
            bx = torch.from_numpy(boxes)
            if box_form == "list":
                bx = [torch.from_numpy(b) for b in per_image(boxes, n)]
        else:
            inp = np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if layout == "NHWC" else x
            bx = boxes if box_form == "rows" else per_image(boxes, n)
        if box_form == "list":
            ref = ref[np.argsort(boxes[:, 0], kind="stable")]  # the list form numbers RoIs image by image
        got = roialign.roi_align(inp, bx, pooled, scale, sampling_ratio, aligned, layout=layout)
        k, c = boxes.shape[0], x.shape[1]
        if kind == "torch":
            assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
            assert tuple(got.shape) == (k, c) + pooled  # torch: always [K, C, PH, PW]
            if layout == "NHWC":
                assert got.is_contiguous(memory_format=torch.channels_last)
            else:
                assert got.is_contiguous()
            got = got.numpy()
        else:
            assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.flags.c_contiguous
            if layout == "NHWC":
                assert got.shape == (k,) + pooled + (c,)
                got = got.transpose(0, 3, 1, 2)
            else:
                assert got.shape == (k, c) + pooled
        assert_close(got, ref)


@needs_torch
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_torch_memory_format_either_way(layout):
    """Torch tensors in the other memory format than `layout` are copied, and the result is still right and in the
    memory format `layout` names."""
    x, boxes, pooled, scale = make_problem(5, n=2, c=8)
    ref = tv_roi_align(torch.from_numpy(x), torch.from_numpy(boxes), pooled, scale, 2, True)
    other = torch.channels_last if layout == "NCHW" else torch.contiguous_format
    got = roialign.roi_align(torch.from_numpy(x).contiguous(memory_format=other), torch.from_numpy(boxes), pooled,
                             scale, 2, True, layout=layout)
    assert got.is_contiguous(memory_format=torch.channels_last if layout == "NHWC" else torch.contiguous_format)
    assert_close(got.numpy(), ref.numpy())


@needs_torch
def test_channels_last_single_channel():
    """[N, 1, H, W] in channels_last memory is also a contiguous tensor; torch tensors are read as N, C, H, W
    whatever their strides, so the result is [K, 1, PH, PW], not a misread [N, H, W, C] map."""
    x, boxes, pooled, scale = make_problem(6, n=2, c=1)
    xt = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
    got = roialign.roi_align(xt, torch.from_numpy(boxes), pooled, scale, -1, True, layout="NHWC")
    assert tuple(got.shape) == (boxes.shape[0], 1) + pooled
    assert_close(got.numpy(), tv_roi_align(xt, torch.from_numpy(boxes), pooled, scale, -1, True).numpy())


@needs_torch
def test_torch_input_requiring_grad_and_half_precision_boxes():
    x, boxes, pooled, scale = make_problem(7)
    xt = torch.from_numpy(x).requires_grad_(True)
    from roialign import _torch_ops

    if _torch_ops.available() is None:
        # Without the operator library tensor calls run on the extension, which records no gradient: an input that
        # requires grad is refused rather than its gradient dropped.
        with pytest.raises(RuntimeError, match="records no gradient"):
            roialign.roi_align(xt, torch.from_numpy(boxes).double(), pooled, scale)
        with pytest.raises(RuntimeError, match="records no gradient"):
            roialign.multi_scale_roi_align([xt], [torch.from_numpy(boxes[:, 1:])], pooled, [scale])
    else:
        # With it they run the operator, whose backward gives torchvision's gradient (test_backward.py has more).
        roialign.roi_align(xt, torch.from_numpy(boxes).double(), pooled, scale).sum().backward()
        ref = torch.from_numpy(x).requires_grad_(True)
        tv_roi_align(ref, torch.from_numpy(boxes), pooled, scale).sum().backward()
        assert_close(xt.grad.numpy(), ref.grad.numpy(), 1e-4, 1e-4)
    # Calls that run on the extension (another target) refuse it either way.
    with pytest.raises(RuntimeError, match="records no gradient"):
        roialign.roi_align(xt, torch.from_numpy(boxes), pooled, scale, target="generic")
    with torch.no_grad():
        got = roialign.roi_align(xt, torch.from_numpy(boxes).double(), pooled, scale)
    assert not got.requires_grad
    ref = tv_roi_align(torch.from_numpy(x), torch.from_numpy(boxes), pooled, scale)
    assert_close(got.numpy(), ref.numpy())


@needs_torch
def test_torch_jit_trace_records_the_operator_or_is_refused():
    # With the package's torch operators, tensors go through torch.ops.roialign.roi_align, which the trace records;
    # a call that runs on the extension (here another target) would be stored as a constant, and is refused.
    x, boxes, pooled, scale = make_problem(7)
    xt, bt = torch.from_numpy(x), torch.from_numpy(boxes)

    def on_extension(a, b):
        return roialign.roi_align(a, b, pooled, scale, target="generic")

    with pytest.raises(RuntimeError, match="torch.jit.trace"):
        torch.jit.trace(on_extension, (xt, bt))

    def pool(a, b):
        return roialign.roi_align(a, b, pooled, scale)

    from roialign import _torch_ops

    if _torch_ops.available() is None:
        with pytest.raises(RuntimeError, match="torch.jit.trace"):
            torch.jit.trace(pool, (xt, bt))
        return
    traced = torch.jit.trace(pool, (xt, bt))
    assert "roialign::roi_align" in str(traced.graph)
    other = bt.flip(0)[: bt.shape[0] - 1].contiguous()  # other boxes, another count
    assert torch.equal(traced(xt, other), pool(xt, other))
    assert_close(traced(xt, other).numpy(), on_extension(xt, other).numpy())


def test_zero_copy_for_dense_input():
    x, _, _, _ = make_problem(8)
    assert roialign._Map(x, "NCHW").memory is x
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    assert roialign._Map(nhwc, "NHWC").memory is nhwc
    strided = x[:, :, ::2, :]
    assert not np.shares_memory(roialign._Map(strided, "NCHW").memory, x)  # other strides are copied
    if torch is not None:
        xt = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
        assert roialign._Map(xt, "NHWC").memory.data_ptr() == xt.data_ptr()
        assert roialign._Map(torch.from_numpy(x), "NCHW").memory.data_ptr() == torch.from_numpy(x).data_ptr()


def test_strided_and_read_only_numpy_input():
    x, boxes, pooled, scale = make_problem(9)
    wide = np.zeros(x.shape[:3] + (2 * x.shape[3],), np.float32)
    wide[..., ::2] = x
    ref = roialign.roi_align(x, boxes, pooled, scale, 2, target="generic")
    assert_close(roialign.roi_align(wide[..., ::2], boxes, pooled, scale, 2), ref)
    ro = x.copy()
    ro.setflags(write=False)
    assert_close(roialign.roi_align(ro, boxes, pooled, scale, 2), ref)


def test_other_dlpack_producers_give_numpy():
    x, boxes, pooled, scale = make_problem(10)

    class Producer:  # only the DLPack protocol, as e.g. a JAX CPU array offers
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, stream=None):
            return self._a.__dlpack__()

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    got = roialign.roi_align(Producer(x), boxes, pooled, scale, 2)
    assert isinstance(got, np.ndarray)
    assert_close(got, roialign.roi_align(x, boxes, pooled, scale, 2))


# ---------------------------------------------------------------------------------------------------------------
# Modes and kernels, against the scalar reference (target "generic")
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pool", ["avg", "max", "max_onnx"])
@pytest.mark.parametrize("coordinate_mode", ["legacy", "half_pixel", "half_pixel_centered"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_modes_match_the_reference(pool, coordinate_mode, layout):
    x, boxes, pooled, scale = make_problem(11)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    args = dict(layout=layout, pool=pool, coordinate_mode=coordinate_mode)
    ref = roialign.roi_align(x, boxes, pooled, scale, 2, target="generic", **args)
    got = roialign.roi_align(x, boxes, pooled, scale, 2, target="host", **args)
    assert_close(got, ref)


def test_select_and_run_with_out():
    x, boxes, pooled, scale = make_problem(12)
    kernel = roialign.select("host", output_size=pooled, spatial_scale=scale, sampling_ratio=0, aligned=True)
    assert kernel.layout == "NCHW" and kernel.dtype == "float32" and kernel.output_size == pooled
    assert kernel.coordinate_mode == "half_pixel" and kernel.pool == "avg" and kernel.target == "host"
    assert kernel.name in roialign.implementations("host")
    assert kernel.name.startswith("roi_align_nchw.")
    out = np.full((boxes.shape[0], x.shape[1]) + pooled, np.nan, np.float32)
    assert kernel.run(x, boxes, out=out) is out
    assert_close(out, roialign.roi_align(x, boxes, pooled, scale, 0, True, target="generic"))
    generic = roialign.select("generic", layout="NHWC")
    assert generic.name == "roi_align_nhwc.reference"


def test_roi_align_with_out():
    x, boxes, pooled, scale = make_problem(14)
    ref = roialign.roi_align(x, boxes, pooled, scale, 2)
    out = np.full(ref.shape, np.nan, np.float32)
    assert roialign.roi_align(x, boxes, pooled, scale, 2, out=out) is out
    np.testing.assert_array_equal(out, ref)
    bad = np.array(boxes, copy=True)
    bad[0, 0] = x.shape[0]  # a batch index outside [0, N): found by the library, out untouched
    out[...] = 5.0
    with pytest.raises(ValueError, match="batch index"):
        roialign.roi_align(x, bad, pooled, scale, 2, out=out)
    assert (out == 5.0).all()
    with pytest.raises(ValueError, match=r"out has shape \(3, 17, 1, 2\); expected \(2, 17, 1, 2\)"):
        roialign.roi_align(x, boxes, pooled, scale, 2, out=np.empty((ref.shape[0] + 1,) + ref.shape[1:], np.float32))


def test_threads_do_not_change_the_result():
    x, boxes, pooled, scale = make_problem(13, n=2, c=17)
    results = [roialign.roi_align(x, boxes, pooled, scale, 2, num_threads=t) for t in (1, 2, 0)]
    assert np.array_equal(results[0], results[1]) and np.array_equal(results[0], results[2])


def test_adaptive_is_any_non_positive_ratio():
    x, boxes, pooled, scale = make_problem(14)
    assert np.array_equal(roialign.roi_align(x, boxes, pooled, scale, -1),
                          roialign.roi_align(x, boxes, pooled, scale, 0))


def test_no_boxes():
    x, _, _, _ = make_problem(15, c=3)
    assert roialign.roi_align(x, np.zeros((0, 5), np.float32), 7).shape == (0, 3, 7, 7)
    assert roialign.roi_align(x, [], (2, 3)).shape == (0, 3, 2, 3)


def test_queries():
    names = roialign.targets()
    assert {"host", "generic", "portable", "x86-avx2", "arm-neon"} <= set(names)
    info = roialign.query_target("generic")
    assert info["layouts"] == ["NCHW", "NHWC", "NCHW4c", "NCHW8c", "NCHW16c"] and "float32" in info["dtypes"]
    assert info["pool_modes"] == ["avg", "max", "max_onnx"]
    assert info["implementations"] == ["roi_align_nhwc.reference", "roi_align_nchw4c.reference",
                                       "roi_align_nchw8c.reference", "roi_align_nchw16c.reference",
                                       "roi_align_nchw.reference"]
    x, rois, _, _ = make_problem(16, c=3)
    with pytest.raises(ValueError, match="5-D"):  # the blocked layouts take [N, ceil(C/b), H, W, b] (test_blocked.py)
        roialign.roi_align(x, rois, 2, layout="NCHW16c")
    assert roialign.query_target("host")["preferred_layout"] in ("NCHW", "NHWC")
    with pytest.raises(ValueError, match="unknown target"):
        roialign.query_target("tpu")
    with pytest.raises(NotImplementedError):
        roialign.query_target(foreign_isa_target())


def foreign_isa_target():
    """A built-in target of the other architecture: UNSUPPORTED in this build."""
    return "x86-avx2" if platform.machine().lower() in ("aarch64", "arm64") else "arm-neon"


# ---------------------------------------------------------------------------------------------------------------
# 16-bit dtypes: NotImplementedError with the library's message until a target serves them, then they must work
# ---------------------------------------------------------------------------------------------------------------

def sixteen_bit_cases():
    cases = [("float16", "numpy")]
    if torch is not None:
        cases += [("float16", "torch"), ("bfloat16", "torch")]
    return cases


@pytest.mark.parametrize("dtype,kind", sixteen_bit_cases())
def test_sixteen_bit_dtypes(dtype, kind):
    x, boxes, pooled, scale = make_problem(16)
    if kind == "numpy":
        inp = x.astype(dtype)
        wide = inp.astype(np.float32)
    else:
        inp = torch.from_numpy(x).to(getattr(torch, dtype))
        wide = inp.float().numpy()
    if dtype not in roialign.query_target("host")["dtypes"]:
        with pytest.raises(NotImplementedError, match="dtype"):
            roialign.roi_align(inp, boxes, pooled, scale, 2)
        with pytest.raises(NotImplementedError):
            roialign.select(dtype=dtype)
        return
    got = roialign.roi_align(inp, boxes, pooled, scale, 2)
    assert str(got.dtype).replace("torch.", "") == dtype
    ref = roialign.roi_align(wide, boxes, pooled, scale, 2)  # f32 accumulation, then one rounding to 16 bits
    got32 = got.float().numpy() if kind == "torch" else got.astype(np.float32)
    tol = 4e-3 if dtype == "float16" else 1.6e-2
    assert_close(got32, ref, tol_abs=tol, tol_rel=tol)


# ---------------------------------------------------------------------------------------------------------------
# Errors: the right exception, and `out` untouched
# ---------------------------------------------------------------------------------------------------------------

def error_cases():
    x, boxes, pooled, scale = make_problem(17, n=2, c=4)
    k, c = boxes.shape[0], x.shape[1]
    fractional = boxes.copy()
    fractional[0, 0] = 0.5
    outside = boxes.copy()
    outside[-1, 0] = 2
    nan_box = boxes.copy()
    nan_box[0, 3] = np.nan
    ok_out = (k, c) + pooled
    return x, boxes, pooled, scale, [
        # (name, input, boxes, out shape, out dtype, exception, message excerpt)
        ("batch index outside [0, N)", x, outside, ok_out, np.float32, ValueError, "batch index"),
        ("fractional batch index", x, fractional, ok_out, np.float32, ValueError, "batch index"),
        ("non-finite coordinate", x, nan_box, ok_out, np.float32, ValueError, "x2"),
        ("more images than the map has", x, per_image(boxes, 2) + [boxes[:1, 1:]], (k + 1, c) + pooled,
         np.float32, ValueError, "batch index"),
        ("int32 input", x.astype(np.int32), boxes, ok_out, np.float32, TypeError, "int32"),
        ("float64 input to a float32 kernel", x.astype(np.float64), boxes, ok_out, np.float32, TypeError,
         "input has dtype float64; this kernel takes float32"),
        ("3-D input", x[0], boxes, ok_out, np.float32, ValueError, "4-D"),
        ("[K, 4] boxes without batch indices", x, boxes[:, 1:], ok_out, np.float32, ValueError, r"\[K, 5\]"),
        ("integer boxes", x, boxes.astype(np.int32), ok_out, np.float32, TypeError, "floating"),
        ("1-D boxes in the list form", x, [boxes[0, 1:]], (1, c) + pooled, np.float32, ValueError, r"\[L, 4\]"),
        ("out of the wrong shape", x, boxes, (k, c + 1) + pooled, np.float32, ValueError, "shape"),
        ("out of the wrong dtype", x, boxes, ok_out, np.float64, TypeError, "float64"),
    ]


def test_errors_raise_and_leave_out_untouched():
    x, boxes, pooled, scale, cases = error_cases()
    kernel = roialign.select(output_size=pooled, spatial_scale=scale, sampling_ratio=2)
    for name, inp, bx, out_shape, out_dtype, exc, excerpt in cases:
        out = np.full(out_shape, 12345.0, dtype=out_dtype)
        with pytest.raises(exc, match=excerpt):
            kernel.run(inp, bx, out=out)
        assert (out == 12345.0).all(), name
    # out that cannot be written in place
    k, c = boxes.shape[0], x.shape[1]
    strided = np.full((k, c, pooled[0], 2 * pooled[1]), 7.0, np.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel.run(x, boxes, out=strided[..., ::2])
    assert (strided == 7.0).all()
    read_only = np.full((k, c) + pooled, 7.0, np.float32)
    read_only.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        kernel.run(x, boxes, out=read_only)
    # out overlapping the input: refused by the extension before the kernel runs
    buf = np.full(x.size + k * c * pooled[0] * pooled[1], 3.0, np.float32)
    buf[:x.size] = x.ravel()
    alias = buf[x.size - 1:x.size - 1 + k * c * pooled[0] * pooled[1]].reshape((k, c) + pooled)
    before = buf.copy()
    with pytest.raises(ValueError, match="overlaps"):
        kernel.run(buf[:x.size].reshape(x.shape), boxes, out=alias)
    assert np.array_equal(buf, before)
    # a kernel of another dtype
    with pytest.raises(TypeError, match="float16"):
        kernel.run(x.astype(np.float16), boxes)


@needs_torch
def test_errors_leave_torch_out_untouched():
    x, boxes, pooled, scale = make_problem(18, n=1, c=4)
    boxes[:, 0] = 0
    boxes[0, 0] = 3
    kernel = roialign.select(output_size=pooled, spatial_scale=scale, layout="NHWC")
    xt = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
    out = torch.full((boxes.shape[0], 4) + pooled, 5.0).contiguous(memory_format=torch.channels_last)
    with pytest.raises(ValueError, match="batch index"):
        kernel.run(xt, torch.from_numpy(boxes), out=out)
    assert bool((out == 5.0).all())
    boxes[0, 0] = 0
    with pytest.raises(ValueError, match="channels_last"):
        kernel.run(xt, torch.from_numpy(boxes), out=torch.zeros((boxes.shape[0], 4) + pooled))
    assert kernel.run(xt, torch.from_numpy(boxes), out=out) is out
    assert_close(out.numpy(), tv_roi_align(xt, torch.from_numpy(boxes), pooled, scale).numpy())


@pytest.mark.parametrize("call,exc,excerpt", [
    (lambda x, b: roialign.roi_align(x, b, 0), ValueError, "pooled_height"),
    (lambda x, b: roialign.roi_align(x, b, 7, spatial_scale=0.0), ValueError, "spatial_scale"),
    (lambda x, b: roialign.roi_align(x, b, 7, sampling_ratio=2000), ValueError, "sampling_ratio"),
    (lambda x, b: roialign.roi_align(x, b, 7, target="tpu"), ValueError, "unknown target"),
    (lambda x, b: roialign.roi_align(x, b, 7, target=foreign_isa_target()), NotImplementedError, "available here"),
    (lambda x, b: roialign.roi_align(x, b, 7, pool="sum"), ValueError, "pool"),
    (lambda x, b: roialign.roi_align(x, b, 7, pool=1), TypeError, "pool"),
    (lambda x, b: roialign.roi_align(x, b, 7, layout="CHWN"), ValueError, "layout"),
    (lambda x, b: roialign.roi_align(x, b, 7, 1.0, -1, True, coordinate_mode="legacy"), ValueError, "contradicts"),
    (lambda x, b: roialign.roi_align(x, b, 7, aligned=True, coordinate_mode="legacy"), ValueError, "contradicts"),
    (lambda x, b: roialign.roi_align(x, b, (7, 7, 7)), TypeError, "output_size"),
    (lambda x, b: roialign.roi_align(x.tolist(), b, 7), TypeError, "numpy array"),
    (lambda x, b: roialign.roi_align(x, b, 7, num_threads=1.5), TypeError, "num_threads"),
    (lambda x, b: roialign.select(dtype="int32"), TypeError, "float64; got int32"),
])
def test_attribute_errors(call, exc, excerpt):
    x, boxes, _, _ = make_problem(19)
    with pytest.raises(exc, match=excerpt):
        call(x, boxes)


# ---------------------------------------------------------------------------------------------------------------
# The GIL is released while a kernel runs
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_call():
    """A kernel, a map and boxes that take at least 0.3 s on one thread (the box count doubles until they do)."""
    rng = np.random.default_rng(20)
    x = rng.uniform(-1, 1, size=(1, 16, 64, 64)).astype(np.float32)
    # MAX: every sample costs work. 32 x 32 samples per bin: about 0.2 ms per box per thread.
    kernel = roialign.select(output_size=7, sampling_ratio=32, pool="max")
    k = 16
    while True:
        boxes = np.tile(np.array([[0, 0, 0, 63, 63]], np.float32), (k, 1))
        t0 = time.perf_counter()
        kernel.run(x, boxes, num_threads=1)
        if time.perf_counter() - t0 >= 0.3 or k >= 1 << 14:
            return kernel, x, boxes
        k *= 2


def ticks_during(call):
    """Runs call() while another Python thread appends a timestamp every millisecond (each append needs the GIL);
    returns how many timestamps fall in the middle 60% of the call, and the call's duration."""
    stamps = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        time.sleep(0.05)
        t0 = time.perf_counter()
        call()
        t1 = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    # Holding the GIL, the call could let the ticker in only around its two ends (Python code before and after the
    # kernel, each interruptible once per 5 ms switch interval), never in its middle.
    margin = 0.2 * (t1 - t0)
    return sum(1 for s in stamps if t0 + margin < s < t1 - margin), t1 - t0


def test_gil_released_by_kernel_run(long_call):
    kernel, x, boxes = long_call
    out = np.empty((boxes.shape[0], 16, 7, 7), np.float32)
    inside, seconds = ticks_during(lambda: kernel.run(x, boxes, out=out, num_threads=1))
    # The fixture sized the call on a machine whose load may have dropped since; the middle 60% needs only room for
    # the 10 one-millisecond ticks asserted below.
    assert seconds >= 0.05
    assert inside >= 10, "another thread ran only %d times during a %.2f s call" % (inside, seconds)


def test_gil_released_by_roi_align(long_call):
    _, x, boxes = long_call
    inside, seconds = ticks_during(
        lambda: roialign.roi_align(x, boxes, 7, sampling_ratio=32, pool="max", num_threads=1))
    assert inside >= 10, "another thread ran only %d times during a %.2f s call" % (inside, seconds)


def _vma_flags(address):
    """The VmFlags of the mapping holding `address` in /proc/self/smaps, or None."""
    start = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                lo, hi = (int(x, 16) for x in head.split("-"))
                start = lo <= address < hi
            elif start and line.startswith("VmFlags:"):
                return line.split()[1:]
    return None


def _thp_possible():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[never]" not in f.read()
    except OSError:
        return False


@needs_torch
@pytest.mark.skipif(not _thp_possible(), reason="Linux without transparent huge pages")
def test_new_large_torch_results_ask_for_huge_pages():
    # The one huge-page policy (docs/python.md, "New results"): a new torch result of 4 MiB or more is advised
    # MADV_HUGEPAGE before the kernel touches it (the "hg" flag of its mapping), from the extension and from the torch
    # operator's result pool (engines/torch/result_pool.cc) alike; out= memory is never advised.
    x = torch.rand(1, 64, 40, 40)
    boxes = torch.tensor([[0, 0, 0, 60, 60]], dtype=torch.float32).repeat(3000, 1)  # 3000 x 64 x 49 x 4 B = 37 MB
    y = roialign.roi_align(x, boxes, 7, 0.25, 2, num_threads=1)  # not the defaults: the extension, not the operator
    assert y.numel() * 4 >= 4 << 20
    middle = y.data_ptr() + y.numel() * 2
    assert "hg" in _vma_flags(middle)
    np.testing.assert_allclose(y[0].numpy(), y[-1].numpy())  # the same box everywhere: the same result
    out = torch.empty_like(y)
    roialign.roi_align(x, boxes, 7, 0.25, 2, out=out)
    assert "hg" not in _vma_flags(out.data_ptr() + out.numel() * 2)
    assert torch.equal(out, y)
    # Exactly 4 MiB (256 boxes x 64 channels x 8 x 8 x 4 B): advised on both routes, so neither threshold is above it.
    y4 = roialign.roi_align(x, boxes[:256], 8, 0.25, 2, num_threads=1)
    assert y4.numel() * 4 == 4 << 20 and "hg" in _vma_flags(y4.data_ptr() + y4.numel() * 2)
    from roialign import _torch_ops

    if _torch_ops.available() is not None:
        pooled = torch.ops.roialign.roi_align(x, boxes, 0.25, 7, 7, 2, False)
        assert "hg" in _vma_flags(pooled.data_ptr() + pooled.numel() * 2)
        assert torch.equal(pooled, y)
        pooled4 = torch.ops.roialign.roi_align(x, boxes[:256], 0.25, 8, 8, 2, False)
        assert "hg" in _vma_flags(pooled4.data_ptr() + pooled4.numel() * 2)
        assert torch.equal(pooled4, y4)


@needs_torch
def test_torch_results_are_torch_memory():
    # A new result is a tensor torch allocated (torch.empty), so it resizes like any other.
    x, boxes, pooled, scale = make_problem(21)
    y = roialign.roi_align(torch.from_numpy(x), torch.from_numpy(boxes), pooled, scale)
    n = y.numel()
    y.resize_(2 * n)
    assert y.numel() == 2 * n


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_new_numpy_results_start_on_a_cache_line(dtype):
    # numpy starts large arrays 16 bytes past a 64-byte boundary; the package's results start on one, as torch's
    # do, so that the kernels can stream their stores into them.
    x, boxes, pooled, scale = make_problem(22)
    kernel = roialign.select(output_size=pooled, spatial_scale=scale, dtype=dtype)
    if dtype != np.float32 and kernel.name.endswith(".portable"):
        pytest.skip("no float16 kernel here")
    y = kernel.run(x.astype(dtype), np.repeat(boxes, 1000, axis=0))
    assert y.ctypes.data % 64 == 0 and y.flags.c_contiguous and y.flags.writeable and y.dtype == dtype
    assert y.nbytes >= 1 << 20
