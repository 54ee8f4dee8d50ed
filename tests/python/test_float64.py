# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""float64 in the Python package and the torch operators (docs/python.md, docs/torch.md).

float64 maps select the library's F64 kernels, which compute in double with the RoIs and the spatial scale in double
(docs/semantics.md). Checked here:

- the numpy-level functions (roi_align, roi_align_backward, multi_scale_roi_align and its backward, Kernel.run and
  run_backward) in NCHW, NHWC and a blocked layout, every coordinate and pool mode, on "host" and "generic", against
  a float64 brute force written below from docs/semantics.md;
- torch.autograd.gradcheck of the operators on every coordinate mode and pool mode, in both layouts, and of the
  multi-level operator under both level rules;
- the forward and the gradient against torchvision's float64 roi_align (which computes in double), the modules
  included.

The tolerance is 1e-12 (absolute, plus 1e-12 relative): a double computation in another order differs by a few
units of 1e-16, and each test also checks that the same problem computed in float32 misses it by far (the spatial
scale 1/3 and the box coordinates are not float32 numbers), so a float32 computation anywhere would fail it.
"""
import math

import numpy as np
import pytest

import roialign

from conftest import needs_torch, torch, torchvision_ops

TOL = 1e-12
COORDINATE_MODES = ["legacy", "half_pixel", "half_pixel_centered", "legacy_unclamped"]
POOLS = ["avg", "max", "max_onnx"]
TARGETS = ["host", "generic"]
SCALE = 1.0 / 3.0  # not a float32 number: a kernel that rounds it to float32 is off by ~1e-8


def assert_close(got, ref, tol=TOL):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = np.abs(got - ref)
    bad = ~(err <= tol + tol * np.abs(ref))
    assert not bad.any(), "max abs err %g at %s (%r vs %r)" % (
        np.nanmax(err), np.argwhere(bad)[0], got[tuple(np.argwhere(bad)[0])], ref[tuple(np.argwhere(bad)[0])])


def assert_float32_misses(got32, ref):
    """The problem discriminates: its float32 computation is far outside TOL (else the test could not tell)."""
    err = np.abs(np.asarray(got32, dtype=np.float64) - np.asarray(ref, dtype=np.float64)).max()
    assert err > 1000 * TOL, "float32 gives %g: the problem does not tell float32 from float64" % err


# ---------------------------------------------------------------------------------------------------------------
# The brute force: docs/semantics.md in float64, one RoI, bin and sample at a time (channels as a vector)
# ---------------------------------------------------------------------------------------------------------------

# (a, b, clamp) of each coordinate mode (docs/semantics.md, "Coordinate modes").
MODES = {"legacy": (0.0, 0.0, True), "half_pixel": (0.0, -0.5, False),
         "half_pixel_centered": (0.5, -0.5, False), "legacy_unclamped": (0.0, 0.0, False)}


def axis(v, size):
    """(v0, v1, lv) of one axis of a sample inside the map (docs/semantics.md, "Bilinear sample")."""
    v = max(v, 0.0)
    v0 = int(math.floor(v))
    if v0 >= size - 1:
        return size - 1, size - 1, 0.0
    return v0, v0 + 1, v - v0


def roi_samples(roi, scale, pooled, sampling_ratio, mode, h, w):
    """For each bin (ph, pw): its grid size and its samples, each None (outside) or four taps (y, x, weight) in the
    order (y0,x0) (y0,x1) (y1,x0) (y1,x1)."""
    a, b, clamp = MODES[mode]
    x1, y1, x2, y2 = roi
    start_x, start_y = (x1 + a) * scale + b, (y1 + a) * scale + b
    roi_w, roi_h = (x2 + a) * scale + b - start_x, (y2 + a) * scale + b - start_y
    if clamp:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    ph_, pw_ = pooled
    bin_w, bin_h = roi_w / pw_, roi_h / ph_
    grid_w = sampling_ratio if sampling_ratio > 0 else max(math.ceil(roi_w / pw_), 0)
    grid_h = sampling_ratio if sampling_ratio > 0 else max(math.ceil(roi_h / ph_), 0)
    bins = {}
    for ph in range(ph_):
        for pw in range(pw_):
            samples = []
            for iy in range(grid_h):
                y = start_y + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                for ix in range(grid_w):
                    x = start_x + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                    if not (-1.0 <= y <= h and -1.0 <= x <= w):
                        samples.append(None)
                        continue
                    y0, y1_, ly = axis(y, h)
                    x0, x1_, lx = axis(x, w)
                    hy, hx = 1.0 - ly, 1.0 - lx
                    samples.append([(y0, x0, hy * hx), (y0, x1_, hy * lx), (y1_, x0, ly * hx), (y1_, x1_, ly * lx)])
            bins[ph, pw] = (grid_h * grid_w, samples)
    return bins


def reference(x, rois, pooled, scale, sampling_ratio, mode, pool, dy=None):
    """Y [K, C, PH, PW] of an NCHW float64 map and [K, 5] rows; with dy, dX [N, C, H, W] instead."""
    # Python floats from here on: numpy 2 would keep float32 rows in float32 (NEP 50).
    x, rois, scale = np.asarray(x, dtype=np.float64), np.asarray(rois, dtype=np.float64).tolist(), float(scale)
    dy = None if dy is None else np.asarray(dy, dtype=np.float64)
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c) + tuple(pooled))
    dx = np.zeros_like(x)
    for k, row in enumerate(rois):
        img = int(row[0])
        bins = roi_samples(row[1:], scale, pooled, sampling_ratio, mode, h, w)
        for (ph, pw), (count, samples) in bins.items():
            if count == 0:
                continue
            # Each sample's value and each tap's weighted value, per channel; outside ones are 0.
            values = np.zeros((len(samples), c))
            taps = np.zeros((len(samples) * 4, c))
            for s, t in enumerate(samples):
                if t is None:
                    continue
                for j, (yy, xx, wt) in enumerate(t):
                    taps[4 * s + j] = wt * x[img, :, yy, xx]
                values[s] = ((taps[4 * s] + taps[4 * s + 1]) + taps[4 * s + 2]) + taps[4 * s + 3]
            if pool == "avg":
                out[k, :, ph, pw] = values.sum(axis=0) / count
            elif pool == "max":
                out[k, :, ph, pw] = values.max(axis=0)
            else:
                out[k, :, ph, pw] = taps.max(axis=0)
            if dy is None:
                continue
            g = dy[k, :, ph, pw]
            if pool == "avg":
                d = g / count
                for t in samples:
                    for yy, xx, wt in t or []:
                        dx[img, :, yy, xx] += wt * d
                continue
            first = np.argmax(values if pool == "max" else taps, axis=0)  # the first maximum, per channel
            for ch in range(c):
                s = first[ch] if pool == "max" else first[ch] // 4
                if samples[s] is None:
                    continue  # an argmax outside the map reads no pixel and sends nothing back
                chosen = samples[s] if pool == "max" else [samples[s][first[ch] % 4]]
                for yy, xx, wt in chosen:
                    dx[img, ch, yy, xx] += wt * g[ch]
    return out if dy is None else dx


# ---------------------------------------------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------------------------------------------

def problem(seed, n=2, c=5, h=9, w=11, k=7):
    """A positive float64 map (no ties with the 0 of outside samples in the max modes), [K, 5] rows in image pixels
    at SCALE (inside, straddling and outside the map; one inverted, one of zero size) that are not float32 numbers,
    and dY."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, size=(n, c, h, w))
    rows = np.empty((k, 5))
    for i in range(k):
        x1, y1 = rng.uniform(-2, w), rng.uniform(-2, h)
        rows[i] = (rng.integers(0, n), x1 / SCALE, y1 / SCALE, (x1 + rng.uniform(0.3, 6)) / SCALE,
                   (y1 + rng.uniform(0.3, 6)) / SCALE)
    rows[1, 3], rows[1, 1] = rows[1, 1], rows[1, 3]  # inverted in x
    rows[2, 3:] = rows[2, 1:3]  # zero size
    dy = rng.normal(size=(k, c, 2, 3))
    return x, rows, dy


def nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def to_blocked(x, b):
    n, c, h, w = x.shape
    cb = -(-c // b)
    padded = np.full((n, cb * b, h, w), np.nan)
    padded[:, :c] = x
    return np.ascontiguousarray(padded.reshape(n, cb, b, h, w).transpose(0, 1, 3, 4, 2))


def from_blocked(y, c):
    k, cb, a, b_, blk = y.shape
    return y.transpose(0, 1, 4, 2, 3).reshape(k, cb * blk, a, b_)[:, :c]


# ---------------------------------------------------------------------------------------------------------------
# numpy: forward and backward against the brute force
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("mode", COORDINATE_MODES)
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_numpy_forward_and_backward_match_the_float64_brute_force(target, pool, mode, sampling_ratio):
    x, rows, dy = problem(100 * COORDINATE_MODES.index(mode) + 10 * POOLS.index(pool) + sampling_ratio + 1)
    pooled = dy.shape[2:]
    kw = dict(pool=pool, coordinate_mode=mode, target=target)
    ref = reference(x, rows, pooled, SCALE, sampling_ratio, mode, pool)
    ref_dx = reference(x, rows, pooled, SCALE, sampling_ratio, mode, pool, dy)

    y = roialign.roi_align(x, rows, pooled, SCALE, sampling_ratio, **kw)
    assert y.dtype == np.float64
    assert_close(y, ref)
    dx = roialign.roi_align_backward(dy, x, rows, pooled, SCALE, sampling_ratio, **kw)
    assert dx.dtype == np.float64
    assert_close(dx, ref_dx)

    # NHWC: [N, H, W, C] in, [K, PH, PW, C] out; the list form of the boxes.
    per_image = [rows[rows[:, 0] == i, 1:] for i in range(x.shape[0])]
    order = np.argsort(rows[:, 0], kind="stable")
    y = roialign.roi_align(nhwc(x), per_image, pooled, SCALE, sampling_ratio, layout="NHWC", **kw)
    assert_close(y, nhwc(ref[order]))
    dx = roialign.roi_align_backward(nhwc(dy[order]), nhwc(x), per_image, pooled, SCALE, sampling_ratio,
                                     layout="NHWC", **kw)
    assert_close(dx, nhwc(ref_dx))

    # A blocked layout: C = 5 in one block of 8, the padded lanes NaN (never read) in, +0 out.
    y = roialign.roi_align(to_blocked(x, 8), rows, pooled, SCALE, sampling_ratio, layout="NCHW8c", channels=5, **kw)
    assert_close(from_blocked(y, 5), ref)
    assert (from_blocked(y, 8)[:, 5:] == 0).all()
    dx = roialign.roi_align_backward(to_blocked(dy, 8), to_blocked(x, 8), rows, pooled, SCALE, sampling_ratio,
                                     layout="NCHW8c", channels=5, **kw)
    assert_close(from_blocked(dx, 5), ref_dx)

    # The same problem in float32 is far off: the comparison above would catch a float32 computation.
    assert_float32_misses(roialign.roi_align(x.astype(np.float32), rows, pooled, SCALE, sampling_ratio, **kw), ref)


def test_blocked_float64_gives_the_nhwc_bits():
    # docs/semantics.md#accuracy: on one ISA a blocked layout reads the NHWC kernel's taps in its order.
    x, rows, _ = problem(5, c=19)
    for pool in POOLS:
        ref = roialign.roi_align(nhwc(x), rows, 3, SCALE, 2, layout="NHWC", pool=pool)
        for layout, b in (("NCHW4c", 4), ("NCHW8c", 8), ("NCHW16c", 16)):
            got = roialign.roi_align(to_blocked(x, b), rows, 3, SCALE, 2, layout=layout, pool=pool, channels=19)
            assert np.array_equal(from_blocked(got, 19).view(np.uint64), ref.transpose(0, 3, 1, 2).view(np.uint64))


def test_multi_scale_float64_matches_each_level():
    rng = np.random.default_rng(3)
    features = [rng.uniform(0.1, 1, size=(2, 4, 32 >> i, 40 >> i)) for i in range(3)]
    scales = [0.25, 0.125, 0.0625]
    rows = np.array([[0, 3.3, 4.1, 20.7, 30.9], [1, 10.01, 8.3, 90.2, 100.7], [0, 1.1, 2.2, 150.3, 140.9],
                     [1, 40.3, 60.7, 47.9, 66.1]])
    levels = np.array([0, 1, 2, 0])
    dy = rng.normal(size=(4, 4, 3, 3))
    got = roialign.multi_scale_roi_align(features, rows, 3, scales, 2, True, levels=levels)
    dxs = roialign.multi_scale_roi_align_backward(dy, features, rows, 3, scales, 2, True, levels=levels)
    for l in range(3):
        pick = levels == l
        assert_close(got[pick], reference(features[l], rows[pick], (3, 3), scales[l], 2, "half_pixel", "avg"))
        assert_close(dxs[l], reference(features[l], rows[pick], (3, 3), scales[l], 2, "half_pixel", "avg", dy[pick]))
    # torchvision's rule (levels=None) picks a level per box; each box's row is that level's roi_align.
    got = roialign.multi_scale_roi_align(features, rows, 3, scales, 2, canonical_scale=32, canonical_level=3)
    for i in range(len(rows)):
        assert any(np.abs(got[i] - reference(features[l], rows[i:i + 1], (3, 3), scales[l], 2, "legacy", "avg")[0])
                   .max() <= TOL for l in range(3))


def test_kernel_run_and_select_f64():
    x, rows, dy = problem(11)
    kernel = roialign.select(output_size=(2, 3), spatial_scale=SCALE, sampling_ratio=2, aligned=True, dtype="f64",
                             backward=True)
    assert kernel.dtype == "float64"
    assert kernel.spatial_scale == SCALE  # the Python float itself, not its float32 rounding
    assert roialign.select(spatial_scale=SCALE).spatial_scale == float(np.float32(SCALE))
    for spelling in ("float64", "F64", np.float64, np.dtype("float64")):
        assert roialign.select(dtype=spelling).dtype == "float64"
    ref = reference(x, rows, (2, 3), SCALE, 2, "half_pixel", "avg")
    out = np.full((len(rows), 5, 2, 3), np.nan)
    assert kernel.run(x, rows, out=out) is out
    assert_close(out, ref)
    assert_close(kernel.run(x, rows.astype(np.float32)), reference(x, rows.astype(np.float32), (2, 3), SCALE, 2,
                                                                  "half_pixel", "avg"))
    dx = np.full_like(x, np.nan)
    assert kernel.run_backward(dy, x, rows, out=dx) is dx
    assert_close(dx, reference(x, rows, (2, 3), SCALE, 2, "half_pixel", "avg", dy))
    with pytest.raises(TypeError, match="input has dtype float32; this kernel takes float64"):
        kernel.run(x.astype(np.float32), rows)
    with pytest.raises(TypeError, match="out has dtype float32; this kernel writes float64"):
        kernel.run(x, rows, out=out.astype(np.float32))
    with pytest.raises(TypeError, match="grad_output has dtype float32"):
        kernel.run_backward(dy.astype(np.float32), x, rows)
    # The extension itself reads float64 RoIs for a float64 kernel, and float32 RoIs for the others.
    with pytest.raises(TypeError, match="rois have dtype float32; a float64 kernel reads float64 rois"):
        kernel._kernel.run(x, rows.astype(np.float32), None, out, 0)
    with pytest.raises(TypeError, match="rois have dtype float64; a float32 kernel reads float32 rois"):
        roialign.select()._kernel.run(x.astype(np.float32), rows, None, np.empty((7, 5, 7, 7), np.float32), 0)


def test_unsupported_dtypes_still_raise_dtype_error():
    x, rows, _ = problem(1)
    for bad in (x.astype(np.int32), x.astype(np.complex128), x.astype(np.longdouble)):
        with pytest.raises(roialign.DTypeError, match="float32, float16, bfloat16 or float64; got"):
            roialign.roi_align(bad, rows, 2)
    with pytest.raises(roialign.DTypeError, match="float64; got int32"):
        roialign.select(dtype="int32")


# ---------------------------------------------------------------------------------------------------------------
# torch: gradcheck of the operators, and torchvision in float64
# ---------------------------------------------------------------------------------------------------------------

def torch_ops():
    from roialign import _torch_ops

    if _torch_ops.available() is None:
        pytest.skip("the package was built without its torch operators")
    return torch.ops.roialign


def torch_problem(seed, channels_last=False, n=2, c=3, h=6, w=7, k=5):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(n, c, h, w, generator=gen, dtype=torch.float64) + 0.1)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    x.requires_grad_()
    x1 = torch.rand(k, generator=gen, dtype=torch.float64) * (w + 2) - 2
    y1 = torch.rand(k, generator=gen, dtype=torch.float64) * (h + 2) - 2
    bw = torch.rand(k, generator=gen, dtype=torch.float64) * 5 + 0.5
    bh = torch.rand(k, generator=gen, dtype=torch.float64) * 5 + 0.5
    batch = torch.randint(0, n, (k,), generator=gen).to(torch.float64)
    rois = torch.stack([batch, x1 / SCALE, y1 / SCALE, (x1 + bw) / SCALE, (y1 + bh) / SCALE], dim=1)
    return x, rois


@needs_torch
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("mode", COORDINATE_MODES)
def test_gradcheck_every_coordinate_and_pool_mode(layout, pool, mode):
    ops = torch_ops()
    x, rois = torch_problem(COORDINATE_MODES.index(mode) * 10 + POOLS.index(pool), layout == "NHWC")
    for sampling_ratio in (-1, 2):
        def f(z):
            return ops.roi_align(z, rois, SCALE, 2, 3, sampling_ratio, mode == "half_pixel", layout=layout,
                                 pool_mode=pool.upper(), coordinate_mode=mode.upper())

        assert torch.autograd.gradcheck(f, (x,))
        y = f(x)
        assert y.dtype == torch.float64
        # The operator is what docs/semantics.md says, in double.
        ref = reference(x.detach().numpy(), rois.numpy(), (2, 3), SCALE, sampling_ratio, mode, pool)
        assert_close(y.detach().numpy(), ref)


@needs_torch
@pytest.mark.parametrize("aligned", [False, True])
def test_gradcheck_of_roialign_roi_align_on_tensors(aligned):
    torch_ops()
    x, rois = torch_problem(7)
    per_image = [rois[rois[:, 0] == i, 1:] for i in range(2)]
    assert torch.autograd.gradcheck(lambda z: roialign.roi_align(z, per_image, 3, SCALE, -1, aligned), (x,))
    assert torch.autograd.gradcheck(
        lambda z: roialign.roi_align(z, rois, 2, SCALE, 2, aligned, pool="max", layout="NHWC"), (x,))


@needs_torch
@pytest.mark.parametrize("rule", ["SCALE", "OPENVINO"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_gradcheck_multi_level(rule, layout):
    ops = torch_ops()
    gen = torch.Generator().manual_seed(17)
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    features = tuple((torch.rand(2, 1, 16 >> l, 20 >> l, generator=gen, dtype=torch.float64) + 0.1)
                     .contiguous(memory_format=fmt).requires_grad_() for l in range(3))
    scales = [0.5, 0.25, 0.125]
    # Boxes of sizes 3 to 30 image pixels: with canonical size 8 they spread over the three levels.
    rois = torch.tensor([[0, 1.3, 2.7, 4.9, 5.1], [1, 3.1, 1.7, 11.3, 10.9], [0, 6.7, 2.3, 27.1, 30.3],
                         [1, 0.3, 0.9, 33.7, 38.1], [0, 20.1, 12.3, 26.9, 19.7]], dtype=torch.float64)
    kw = dict(level_rule=rule, canonical_size=8.0, canonical_level=2 if rule == "SCALE" else 3, layout=layout)

    def f(*maps):
        return ops.multi_scale_roi_align(list(maps), rois, scales, 2, 2, 2, True, **kw)

    assert torch.autograd.gradcheck(f, features)
    # Each row is its level's single-level result, in double; every level pools at least one box.
    y = f(*features).detach()
    used = set()
    for i in range(len(rois)):
        for l in range(3):
            single = ops.roi_align(features[l].detach(), rois[i:i + 1], scales[l], 2, 2, 2, True, layout=layout)
            if (single - y[i:i + 1]).abs().max() <= TOL:
                used.add(l)
                break
        else:
            raise AssertionError("row %d is no level's result" % i)
    assert used == {0, 1, 2}


@needs_torch
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_forward_and_gradient_match_torchvision_float64(channels_last, aligned, sampling_ratio):
    ops = torch_ops()
    x, rois = torch_problem(23 + sampling_ratio, channels_last, n=2, c=4, h=12, w=13, k=9)
    layout = "NHWC" if channels_last else "NCHW"
    dy = torch.randn(9, 4, 3, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)

    ours = ops.roi_align(x, rois, SCALE, 3, 2, sampling_ratio, aligned, layout=layout)
    (ours * dy).sum().backward()
    ours_grad, x.grad = x.grad.clone(), None
    ref = torchvision_ops.roi_align(x, rois, (3, 2), SCALE, sampling_ratio, aligned)
    (ref * dy).sum().backward()
    assert ours.dtype == torch.float64 and x.grad.dtype == torch.float64
    assert ours.is_contiguous(memory_format=torch.channels_last if channels_last else torch.contiguous_format)
    assert_close(ours.detach().numpy(), ref.detach().numpy())
    assert_close(ours_grad.numpy(), x.grad.numpy())
    # The functional path (roialign.roi_align on tensors) is the operator.
    got = roialign.roi_align(x.detach(), rois, (3, 2), SCALE, sampling_ratio, aligned, layout=layout)
    assert_close(got.numpy(), ref.detach().numpy())
    # ... and so is the extension (another target), which reads the tensor in place.
    got = roialign.roi_align(x.detach(), rois, (3, 2), SCALE, sampling_ratio, aligned, layout=layout,
                             target="generic")
    assert got.dtype == torch.float64
    assert_close(got.numpy(), ref.detach().numpy())
    # float32 would miss torchvision's double result by far.
    assert_float32_misses(ops.roi_align(x.detach().float(), rois, SCALE, 3, 2, sampling_ratio, aligned).numpy(),
                          ref.detach().numpy())


@needs_torch
def test_modules_train_in_float64_as_torchvision():
    torch_ops()
    import roialign.nn as rnn
    from collections import OrderedDict

    x, rois = torch_problem(31, c=3, h=20, w=24, k=6)
    ours = rnn.RoIAlign((3, 3), SCALE, 2, aligned=True)(x, rois)
    ours.square().sum().backward()
    g, x.grad = x.grad.clone(), None
    ref = torchvision_ops.RoIAlign((3, 3), SCALE, 2, aligned=True)(x, rois)
    ref.square().sum().backward()
    assert_close(ours.detach().numpy(), ref.detach().numpy())
    assert_close(g.numpy(), x.grad.numpy())

    gen = torch.Generator().manual_seed(2)
    feats = OrderedDict((str(l), (torch.rand(2, 3, 32 >> l, 32 >> l, generator=gen, dtype=torch.float64))
                         .requires_grad_()) for l in range(4))
    boxes = [torch.tensor([[1.3, 2.1, 40.7, 50.9], [3.3, 3.9, 9.7, 12.1]], dtype=torch.float64),
             torch.tensor([[10.1, 20.3, 120.9, 127.1], [0.7, 0.3, 80.9, 70.1]], dtype=torch.float64)]
    shapes = [(128, 128), (128, 128)]
    results = []
    for pooler in (rnn.MultiScaleRoIAlign(["0", "1", "2", "3"], 3, 2, canonical_scale=32),
                   torchvision_ops.MultiScaleRoIAlign(["0", "1", "2", "3"], 3, 2, canonical_scale=32)):
        y = pooler(feats, boxes, shapes)
        y.square().sum().backward()
        results.append((y.detach(), [f.grad.clone() for f in feats.values()]))
        for f in feats.values():
            f.grad = None
    assert results[0][0].dtype == torch.float64
    assert_close(results[0][0].numpy(), results[1][0].numpy())
    for mine, theirs in zip(results[0][1], results[1][1]):
        assert_close(mine.numpy(), theirs.numpy())


@needs_torch
def test_meta_kernels_keep_float64():
    ops = torch_ops()
    x = torch.empty(2, 3, 10, 12, dtype=torch.float64, device="meta")
    rois = torch.empty(5, 5, dtype=torch.float64, device="meta")
    y = ops.roi_align(x, rois, 0.5, 2, 3)
    assert y.shape == (5, 3, 2, 3) and y.dtype == torch.float64 and y.device.type == "meta"
    dx = ops.roi_align_backward(torch.empty(5, 3, 2, 3, dtype=torch.float64, device="meta"), x, rois, 0.5, 2, 3)
    assert dx.shape == x.shape and dx.dtype == torch.float64
    y = ops.multi_scale_roi_align([x, x[:, :, :5, :6]], rois, [0.5, 0.25], 2, 3)
    assert y.shape == (5, 3, 2, 3) and y.dtype == torch.float64


@needs_torch
def test_unsupported_dtypes_are_runtime_errors_on_every_path():
    # torchvision's operators raise RuntimeError for a map of a dtype they have no kernel for; roialign's operator,
    # its modules and roialign.roi_align on tensors agree (the package's DTypeError is also a TypeError).
    torch_ops()
    import roialign.nn as rnn

    x = torch.randint(0, 5, (1, 4, 10, 10), dtype=torch.int32)
    rois = torch.tensor([[0, 1.0, 1, 5, 5]])
    calls = [lambda: torch.ops.roialign.roi_align(x, rois, 1.0, 2, 2),
             lambda: rnn.RoIAlign(2, 1.0, 2)(x, rois),
             lambda: roialign.roi_align(x, rois, 2),
             lambda: rnn.MultiScaleRoIAlign(["0"], 2, 2)({"0": x}, [rois[:, 1:]], [(10, 10)]),
             lambda: roialign.multi_scale_roi_align([x], rois, 2, [1.0])]
    for call in calls:
        with pytest.raises(RuntimeError, match="float32, float16, bfloat16 (and|or) float64"):
            call()
    with pytest.raises(RuntimeError):
        torchvision_ops.roi_align(x, rois, 2)
