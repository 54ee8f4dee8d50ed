# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""The gradient of the map in the Python package: roialign.roi_align_backward and multi_scale_roi_align_backward
(docs/python.md), for numpy arrays and torch tensors in every layout, against torchvision's backward (AVG), a
brute-force reference written here from docs/semantics.md (MAX, MAX_ONNX), and the single-level function (the
multi-level one). The torch operators' autograd is tested in test_torch_ops.py.
"""
import numpy as np
import pytest

import roialign

from conftest import needs_torch, torch, torchvision_ops

# docs/semantics.md#accuracy: the gradient sums the same products as torchvision's in another order.
TOL_ABS, TOL_REL = 1e-5, 1e-4


def assert_close(got, ref, tol_abs=TOL_ABS, tol_rel=TOL_REL):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = np.abs(got - ref)
    bad = ~(err <= tol_abs + tol_rel * np.abs(ref))
    assert not bad.any(), "max abs err %g at %s" % (np.nanmax(err), np.argwhere(bad)[0])
    return float(err.max()) if err.size else 0.0


def problem(seed, n, c, h, w, k, scale=0.5):
    """A map (NCHW float32), [K, 5] boxes in image pixels (inside, straddling and outside the map) and dY."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, c, h, w)).astype(np.float32)
    boxes = np.empty((k, 5), np.float32)
    for i in range(k):
        x1, y1 = rng.uniform(-3, w + 1), rng.uniform(-3, h + 1)
        boxes[i] = (rng.integers(0, n), x1 / scale, y1 / scale, (x1 + rng.uniform(0.1, w)) / scale,
                    (y1 + rng.uniform(0.1, h)) / scale)
    return x, boxes


def dy_for(seed, k, c, pooled):
    return np.random.default_rng(seed + 1000).normal(size=(k, c) + pooled).astype(np.float32)


def nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def tv_gradient(x, boxes, dy, pooled, scale, sampling_ratio, aligned):
    xt = torch.from_numpy(x).requires_grad_()
    y = torchvision_ops.roi_align(xt, torch.from_numpy(boxes), pooled, scale, sampling_ratio, aligned)
    (y * torch.from_numpy(dy)).sum().backward()
    return xt.grad.numpy()


SHAPES = [(1, 3, 10, 12, 5), (2, 16, 33, 41, 40), (3, 5, 7, 64, 17)]
KINDS = ["numpy NCHW", "numpy NHWC", "torch NCHW", "torch channels_last"]


@needs_torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sampling_ratio", [-1, 1, 3])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_avg_gradient_matches_torchvision(shape, aligned, sampling_ratio, kind):
    n, c, h, w, k = shape
    seed = sum(shape) + 7 * aligned + sampling_ratio
    x, boxes = problem(seed, n, c, h, w, k)
    pooled = (3, 4)
    dy = dy_for(seed, k, c, pooled)
    ref = tv_gradient(x, boxes, dy, pooled, 0.5, sampling_ratio, aligned)
    args = (pooled, 0.5, sampling_ratio, aligned)
    if kind == "numpy NCHW":
        got = roialign.roi_align_backward(dy, x, boxes, *args)
    elif kind == "numpy NHWC":
        got = roialign.roi_align_backward(nhwc(dy), nhwc(x), boxes, *args, layout="NHWC")
        assert got.shape == (n, h, w, c)
        got = got.transpose(0, 3, 1, 2)
    else:
        # Tensors with the defaults run the torch operator, autograd's backward; the list form of the boxes too.
        xt = torch.from_numpy(x)
        layout = "NHWC" if kind == "torch channels_last" else "NCHW"
        if layout == "NHWC":
            xt = xt.contiguous(memory_format=torch.channels_last)
        per_image = [torch.from_numpy(boxes[boxes[:, 0] == i, 1:]) for i in range(n)]
        order = np.argsort(boxes[:, 0], kind="stable")  # the list form's RoI order
        got = roialign.roi_align_backward(torch.from_numpy(dy[order]), xt, per_image, *args, layout=layout)
        assert isinstance(got, torch.Tensor) and got.shape == (n, c, h, w) and got.dtype == torch.float32
        if layout == "NHWC":
            assert got.is_contiguous(memory_format=torch.channels_last)
        got = got.numpy()
    assert got.dtype == np.float32
    assert_close(got, ref)


# ---- MAX and MAX_ONNX: a brute-force reference of docs/semantics.md ----

def _sample_taps(sy, sx, h, w):
    """The four taps (y, x, weight) of a bilinear sample, or None outside the map (docs/semantics.md)."""
    f32 = np.float32
    if not (-1 <= sy <= h and -1 <= sx <= w):
        return None
    taps_axes = []
    for v, extent in ((sy, h), (sx, w)):
        v = max(v, f32(0))
        v0 = int(np.floor(v))
        if v0 >= extent - 1:
            v0 = v1 = extent - 1
            v = f32(v0)
        else:
            v1 = v0 + 1
        lv = f32(v - f32(v0))
        taps_axes.append((v0, v1, f32(1) - lv, lv))
    y0, y1, hy, ly = taps_axes[0]
    x0, x1, hx, lx = taps_axes[1]
    return [(y0, x0, f32(hy * hx)), (y0, x1, f32(hy * lx)), (y1, x0, f32(ly * hx)), (y1, x1, f32(ly * lx))]


def max_reference(x, boxes, dy, pooled, scale, sampling_ratio, aligned, pool, margin=1e-5):
    """(Y, dX, ambiguous) of MAX or MAX_ONNX by the formulas of docs/semantics.md in float32: each bin's gradient
    goes to the taps of its first maximal sample (MAX) or to its first maximal weighted tap (MAX_ONNX).
    ``ambiguous`` marks the bins whose best candidates with a gradient lie within ``margin`` of each other, where
    another rounding order may pick another one; the tests give those bins no gradient."""
    f32 = np.float32
    n, c, h, w = x.shape
    ph_n, pw_n = pooled
    k_n = boxes.shape[0]
    offset = f32(-0.5) if aligned else f32(0)
    y_out = np.zeros((k_n, c, ph_n, pw_n), f32)
    dx = np.zeros_like(x)
    ambiguous = np.zeros(y_out.shape, bool)
    for k in range(k_n):
        b = int(boxes[k, 0])
        start_x, start_y = f32(boxes[k, 1]) * f32(scale) + offset, f32(boxes[k, 2]) * f32(scale) + offset
        roi_w = f32(boxes[k, 3]) * f32(scale) + offset - start_x
        roi_h = f32(boxes[k, 4]) * f32(scale) + offset - start_y
        if not aligned:
            roi_w, roi_h = max(roi_w, f32(1)), max(roi_h, f32(1))
        bin_w, bin_h = f32(roi_w / f32(pw_n)), f32(roi_h / f32(ph_n))
        grid_w = sampling_ratio if sampling_ratio > 0 else max(int(np.ceil(roi_w / f32(pw_n))), 0)
        grid_h = sampling_ratio if sampling_ratio > 0 else max(int(np.ceil(roi_h / f32(ph_n))), 0)
        for ph in range(ph_n):
            for pw in range(pw_n):
                samples = []
                for iy in range(grid_h):
                    sy = start_y + f32(ph) * bin_h + f32(iy + 0.5) * bin_h / f32(grid_h)
                    for ix in range(grid_w):
                        sx = start_x + f32(pw) * bin_w + f32(ix + 0.5) * bin_w / f32(grid_w)
                        samples.append(_sample_taps(f32(sy), f32(sx), h, w))
                if not samples:
                    continue
                for ch in range(c):
                    v = x[b, ch]
                    # candidates: (value, [(y, x, weight) that receive the gradient])
                    cands = []
                    for taps in samples:
                        if pool == "max":
                            if taps is None:
                                cands.append((f32(0), []))
                            else:
                                value = f32(0)
                                for yy, xx, wt in taps:
                                    value = f32(value + f32(v[yy, xx] * wt))
                                cands.append((value, taps))
                        else:
                            for tap in (taps or [None] * 4):
                                cands.append((f32(0), []) if tap is None else (f32(v[tap[0], tap[1]] * tap[2]), [tap]))
                    best = max(range(len(cands)), key=lambda i: (cands[i][0], -i))  # first maximal
                    top = cands[best][0]
                    y_out[k, ch, ph, pw] = top
                    # Candidates that send the same gradient (samples snapped to one pixel) are not a tie.
                    near = {tuple((t[0], t[1], float(t[2])) for t in cd[1] if t[2] != 0)
                            for cd in cands if top - cd[0] <= margin * (1 + abs(top))}
                    ambiguous[k, ch, ph, pw] = len(near) > 1
                    for yy, xx, wt in cands[best][1]:
                        dx[b, ch, yy, xx] += wt * dy[k, ch, ph, pw]
    return y_out, dx, ambiguous


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("pool", ["max", "max_onnx"])
def test_max_modes_gradient_matches_brute_force(pool, aligned, sampling_ratio, layout):
    seed = 10 + 3 * aligned + sampling_ratio + 5 * (pool == "max_onnx")
    x, boxes = problem(seed, 2, 3, 9, 11, 6)
    pooled = (3, 2)
    dy = dy_for(seed, 6, 3, pooled)
    args = (pooled, 0.5, sampling_ratio, aligned)
    ref_y, _, ambiguous = max_reference(x, boxes, dy, *args, pool)
    assert_close(roialign.roi_align(x, boxes, *args, pool=pool), ref_y)  # the reference samples what roialign does
    dy[ambiguous] = 0  # a near-tie's argmax is the rounding's to pick
    _, ref, _ = max_reference(x, boxes, dy, *args, pool)
    if layout == "NHWC":
        got = roialign.roi_align_backward(nhwc(dy), nhwc(x), boxes, *args, pool=pool, layout="NHWC")
        got = got.transpose(0, 3, 1, 2)
    else:
        got = roialign.roi_align_backward(dy, x, boxes, *args, pool=pool)
    assert_close(got, ref)
    assert ambiguous.mean() < 0.05 and (ref != 0).any()


# ---- Multi-level ----

@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_multi_level_gradient_is_each_levels_single_level_gradient(layout):
    rng = np.random.default_rng(5)
    sizes, scales = [(32, 40), (16, 20), (8, 10)], [0.25, 0.125, 0.0625]
    features = [rng.uniform(-1, 1, size=(2, 6) + s).astype(np.float32) for s in sizes]
    boxes = np.concatenate([rng.integers(0, 2, size=(30, 1)), rng.uniform(0, 60, size=(30, 2))], axis=1)
    boxes = np.concatenate([boxes, boxes[:, 1:] + rng.uniform(1, 100, size=(30, 2))], axis=1).astype(np.float32)
    levels = rng.integers(0, 2, size=30).astype(np.int32)  # the last level gets no box: zeros
    dy = dy_for(5, 30, 6, (4, 4))
    conv = nhwc if layout == "NHWC" else (lambda a: a)
    got = roialign.multi_scale_roi_align_backward(conv(dy), [conv(f) for f in features], boxes, 4, scales, 2, True,
                                                  levels=levels, layout=layout)
    assert len(got) == 3
    for lvl, f in enumerate(features):
        pick = levels == lvl
        ref = roialign.roi_align_backward(conv(dy[pick]), conv(f), boxes[pick], 4, scales[lvl], 2, True, layout=layout)
        assert got[lvl].shape == conv(f).shape
        assert_close(got[lvl], ref)
    assert not got[2].any()


@needs_torch
def test_multi_level_tensors_run_the_operators_backward():
    # Tensors with the defaults: torch.ops.roialign.multi_scale_roi_align_backward, as autograd runs it.
    g = torch.Generator().manual_seed(2)
    feats = [torch.randn(1, 4, 32, 32, generator=g), torch.randn(1, 4, 16, 16, generator=g)]
    boxes = [torch.tensor([[0, 0, 30.0, 40], [10, 10, 160, 160]])]
    dy = torch.randn(2, 4, 3, 3, generator=g)
    got = roialign.multi_scale_roi_align_backward(dy, feats, boxes, 3, [0.25, 0.125], 2, canonical_scale=56,
                                                  canonical_level=2)
    leaves = [f.clone().requires_grad_() for f in feats]
    (roialign.multi_scale_roi_align(leaves, boxes, 3, [0.25, 0.125], 2, canonical_scale=56, canonical_level=2)
     * dy).sum().backward()
    assert all(torch.equal(a, b.grad) for a, b in zip(got, leaves))
    assert all(a.abs().sum() > 0 for a in got)  # one box per level
    # The extension (another target) gives the same bits: one implementation with a fixed order of sums.
    other = roialign.multi_scale_roi_align_backward(dy, feats, boxes, 3, [0.25, 0.125], 2, canonical_scale=56,
                                                    canonical_level=2, num_threads=2)
    assert all(torch.equal(a, b) for a, b in zip(got, other))


# ---- Layouts, dtypes, threads, kernels ----

def test_blocked_layout_gradient_is_the_nchw_gradient_in_blocks():
    x, boxes = problem(11, 2, 7, 12, 13, 9)
    dy = dy_for(11, 9, 7, (2, 3))
    ref = roialign.roi_align_backward(dy, x, boxes, (2, 3), 0.5, 2)

    def blocked(a, fill):
        padded = np.full((a.shape[0], 8) + a.shape[2:], fill, np.float32)
        padded[:, :7] = a
        return np.ascontiguousarray(padded.reshape(a.shape[0], 1, 8, *a.shape[2:]).transpose(0, 1, 3, 4, 2))

    got = roialign.roi_align_backward(blocked(dy, 0), blocked(x, np.nan), boxes, (2, 3), 0.5, 2, layout="NCHW8c",
                                      channels=7)
    assert got.shape == (2, 1, 12, 13, 8)
    assert_close(got[..., :7].transpose(0, 1, 4, 2, 3).reshape(x.shape), ref)
    assert not got[..., 7:].any()  # the padded lanes are written, as zeros


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradient_is_float32s_rounded(dtype):
    x, boxes = problem(13, 1, 8, 16, 16, 10)
    dy = dy_for(13, 10, 8, (3, 3))
    t = getattr(torch, dtype)
    xh, dyh = torch.from_numpy(x).to(t), torch.from_numpy(dy).to(t)
    got = roialign.roi_align_backward(dyh, xh, torch.from_numpy(boxes), 3, 0.5, 2, True)
    assert got.dtype == t
    ref = roialign.roi_align_backward(dyh.float(), xh.float(), torch.from_numpy(boxes), 3, 0.5, 2, True)
    tol = 2.0 ** (-10 if dtype == "float16" else -7)
    assert_close(got.float().numpy(), ref.to(t).float().numpy(), 1e-3, 2 * tol)


def test_thread_count_does_not_change_bits():
    x, boxes = problem(17, 2, 16, 40, 40, 60)
    dy = dy_for(17, 60, 16, (7, 7))
    for pool in ("avg", "max", "max_onnx"):
        one = roialign.roi_align_backward(dy, x, boxes, 7, 0.5, 0, True, pool=pool, num_threads=1)
        two = roialign.roi_align_backward(dy, x, boxes, 7, 0.5, 0, True, pool=pool, num_threads=2)
        assert np.array_equal(one.view(np.uint32), two.view(np.uint32)), pool


def test_kernel_run_backward_and_out():
    x, boxes = problem(19, 2, 4, 10, 10, 5)
    dy = dy_for(19, 5, 4, (2, 2))
    kernel = roialign.select(output_size=2, spatial_scale=0.5, sampling_ratio=2, backward=True)
    assert kernel.backward and "backward=True" in repr(kernel)
    out = np.full(x.shape, 7.0, np.float32)
    assert kernel.run_backward(dy, x, boxes, out=out) is out
    assert np.array_equal(out, roialign.roi_align_backward(dy, x, boxes, 2, 0.5, 2))
    with pytest.raises(ValueError, match="selected without backward=True"):
        roialign.select(output_size=2, spatial_scale=0.5, sampling_ratio=2).run_backward(dy, x, boxes)


def test_refusals():
    x, boxes = problem(23, 2, 4, 10, 10, 5)
    dy = dy_for(23, 5, 4, (2, 2))
    call = roialign.roi_align_backward
    cases = [
        (lambda: call(dy[:, :, :1], x, boxes, 2), ValueError, r"grad_output has shape \(5, 4, 1, 2\); expected "
                                                              r"\(5, 4, 2, 2\)"),
        (lambda: call(dy.astype(np.float16), x, boxes, 2), TypeError, "grad_output has dtype float16"),
        (lambda: call(dy, x.astype(np.int32), boxes, 2), roialign.DTypeError, "int32"),
        (lambda: call(dy, x.astype(np.float64), boxes, 2), TypeError, "grad_output has dtype float32; this kernel "
                                                                      "takes float64"),
        (lambda: call(dy, x, boxes[:, :4], 2), ValueError, r"rois must be \[K, 5\]"),
        (lambda: call(dy, x, boxes + 9 * (np.arange(5) == 0), 2), ValueError, "batch index"),
        (lambda: call(dy, x, boxes, 2, out=np.zeros((2, 4, 10, 9), np.float32)), ValueError,
         r"out has shape \(2, 4, 10, 9\); expected the map's"),
        (lambda: call(dy, x, boxes, 2, out=np.zeros((2, 4, 10, 10), np.float32)[:, ::-1]), ValueError,
         r"out must be \[N, C, H, W\], C-contiguous"),
        (lambda: call(None, x, boxes, 2), TypeError, "grad_output must be an array"),
        (lambda: call(dy, x, boxes, 2, pool="median"), ValueError, "unknown pool"),
        (lambda: roialign.multi_scale_roi_align_backward(dy, [x], boxes, 2, [1.0], out=[]), TypeError,
         "one array per level"),
    ]
    if torch is not None:
        cases += [
            (lambda: call(dy, torch.from_numpy(x), boxes, 2), TypeError, "grad_output must be a torch tensor"),
            (lambda: call(torch.from_numpy(dy), x, boxes, 2), TypeError, "grad_output is a torch tensor"),
            (lambda: call(torch.from_numpy(dy).half(), torch.from_numpy(x), torch.from_numpy(boxes), 2), TypeError,
             "grad_output has dtype float16; the map's is float32"),
            (lambda: call(torch.from_numpy(dy)[:, :, :1], torch.from_numpy(x), torch.from_numpy(boxes), 2),
             ValueError, "grad has shape"),
            (lambda: call(torch.from_numpy(dy).requires_grad_(), torch.from_numpy(x), boxes, 2, target="generic"),
             RuntimeError, "double backwards on roi_align not supported"),
        ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()
    with pytest.raises(RuntimeError, match="float32, float16, bfloat16 or float64; got int32"):  # DTypeError is both
        call(dy, x.astype(np.int32), boxes, 2)
