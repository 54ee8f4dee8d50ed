# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign inside Apache TVM: libroialign_tvm.so (engines/tvm) and the Relax pass roialign.tvm.dispatch_roi_align.

Needs apache-tvm (0.27) importable, e.g. from .peers via ROIALIGN_PEERS_PATH, and the library's path in
ROIALIGN_TVM_LIBRARY. Skips when tvm is absent, except under ROIALIGN_REQUIRE_TVM=1 (.ci/test.sh sets it).
"""
import os
import warnings

import numpy as np
import pytest

# conftest.py has put ROIALIGN_PEERS_PATH first on sys.path.
try:
    # tvm-ffi would JIT-compile a torch addon on import when torch is importable; Debian's torch 1.13 cannot take
    # it, and each failed attempt costs seconds. tvm.relax calls the loader itself, hence the stub as well.
    os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
    import tvm_ffi._optional_torch_c_dlpack as _addon
    _addon.load_torch_c_dlpack_extension = lambda: None
    import tvm
    import tvm_ffi
    from tvm import relax
except ImportError:
    if os.environ.get("ROIALIGN_REQUIRE_TVM") == "1":
        raise
    pytest.skip("apache-tvm is not importable (set ROIALIGN_PEERS_PATH)", allow_module_level=True)

import roialign
import roialign.tvm as rtvm

LIBRARY = os.environ.get("ROIALIGN_TVM_LIBRARY")
TARGET = tvm.target.Target({"kind": "llvm"})
# TVM's avg adds sample/count terms, roialign divides the sum once: a few ulps apart.
TOL_ABS, TOL_REL = 1e-5, 1e-4
PACKED = 'R.call_dps_packed("roialign.roi_align_dps"'


def setup_module():
    rtvm.load_library(LIBRARY)


def assert_close(got, ref):
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    bad = ~(err <= TOL_ABS + TOL_REL * np.abs(ref))
    assert not bad.any(), "max abs err %g at %s" % (np.nanmax(err), np.argwhere(bad)[0])


def problem(layout, seed=0, n=2, c=16, h=20, w=24, k=9):
    """A map in `layout` and [K, 5] boxes inside, straddling and outside it (spatial_scale 0.25)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    rois = np.empty((k, 5), np.float32)
    for i in range(k):
        x1, y1 = rng.uniform(-12, 4 * w), rng.uniform(-12, 4 * h)
        rois[i] = (i % n, x1, y1, x1 + rng.uniform(0.5, 60), y1 + rng.uniform(0.5, 60))
    return x, rois


def roi_align_module(x_shape, rois_shape, layout, mode, aligned, pooled=(7, 6), scale=0.25, ratio=2,
                     dtype="float32"):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(x_shape, dtype))
    r = relax.Var("rois", relax.TensorType(rois_shape, "float32"))
    with bb.function("main", [x, r]):
        y = bb.emit(relax.op.vision.roi_align(x, r, pooled, scale, ratio, aligned, layout, mode))
        bb.emit_func_output(y)
    return bb.get()


def run(mod, *arrays):
    vm = relax.VirtualMachine(relax.build(mod, TARGET), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def dispatch_quietly(mod):
    with warnings.catch_warnings():
        warnings.simplefilter("error", rtvm.DispatchWarning)
        return rtvm.dispatch_roi_align(mod)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [2, 0])
def test_dispatch_agrees_with_tvm_lowering(layout, mode, ratio):
    x, rois = problem(layout, seed=hash((layout, mode, ratio)) % 1000)
    mod = roi_align_module(x.shape, rois.shape, layout, mode, aligned=False, ratio=ratio)
    out = dispatch_quietly(mod)
    text = out.script()
    assert PACKED in text
    assert 'R.str("%s")' % layout in text and 'R.str("legacy")' in text and 'R.str("%s")' % mode in text
    assert "roi_align(" not in text.replace("roi_align_dps", "")
    # The NHWC model stays NHWC: nothing transposes the map or the result.
    assert "permute_dims" not in text and "layout_transform" not in text
    assert_close(run(out, x, rois), run(mod, x, rois))


def test_nhwc_dispatch_matches_roialign_directly():
    x, rois = problem("NHWC", seed=7)
    mod = dispatch_quietly(roi_align_module(x.shape, rois.shape, "NHWC", "avg", aligned=False))
    ref = roialign.roi_align(x, rois, (7, 6), spatial_scale=0.25, sampling_ratio=2, layout="NHWC")
    np.testing.assert_array_equal(run(mod, x, rois), ref)  # the same kernel: bit-identical


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [2, 0])
def test_aligned_true_dispatches_and_agrees(layout, mode, ratio):
    """aligned=True maps to LEGACY_UNCLAMPED; boxes include ones narrower than a pixel, where the clamp matters."""
    x, rois = problem(layout, seed=3 + ratio)
    rois[:3, 3] = rois[:3, 1] + np.float32(0.75)  # 0.1875 x 0.375 map pixels at scale 0.25
    rois[:3, 4] = rois[:3, 2] + np.float32(1.5)
    mod = roi_align_module(x.shape, rois.shape, layout, mode, aligned=True, ratio=ratio)
    out = dispatch_quietly(mod)
    text = out.script()
    assert PACKED in text and 'R.str("legacy_unclamped")' in text
    assert_close(run(out, x, rois), run(mod, x, rois))


def test_aligned_mapping():
    assert rtvm.coordinate_mode_of(False) == "legacy"
    assert rtvm.coordinate_mode_of(True) == "legacy_unclamped"


def test_tvm_aligned_true_has_no_half_pixel_shift():
    """TVM's aligned=True is x * scale with no shift and no clamp: our LEGACY_UNCLAMPED. It is not our HALF_PIXEL
    (torchvision's aligned=True), nor LEGACY on a box narrower than a pixel."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
    rois = np.array([[0, 1.5, 2.0, 9.5, 7.0], [0, 0.0, 0.5, 0.5, 0.5], [0, 3.0, 4.5, 14.0, 15.5]], np.float32)
    mod = roi_align_module(x.shape, rois.shape, "NCHW", "avg", aligned=True, pooled=(3, 3), scale=1.0)
    tvm_out = run(mod, x, rois)
    ours = roialign.roi_align(x, rois, (3, 3), spatial_scale=1.0, sampling_ratio=2, coordinate_mode="legacy_unclamped")
    assert_close(tvm_out, ours)
    half_pixel = roialign.roi_align(x, rois, (3, 3), spatial_scale=1.0, sampling_ratio=2, aligned=True)
    assert np.abs(tvm_out - half_pixel).max() > 1e-2
    # The second box is 0.5 x 0 pixels: TVM's aligned=True keeps it that small, LEGACY would widen it to 1 x 1.
    legacy = roialign.roi_align(x, rois, (3, 3), spatial_scale=1.0, sampling_ratio=2, aligned=False)
    assert np.abs(tvm_out[1] - legacy[1]).max() > 1e-2


def test_refused_attributes_warn_and_stay():
    x_shape, r_shape = (1, 4, 8, 8), (2, 5)
    cases = [
        (dict(ratio=4096), "roialign refuses these attributes"),  # beyond the documented sampling-grid limit
        (dict(dtype="float64"), "float64"),
    ]
    for kwargs, message in cases:
        mod = roi_align_module(x_shape, r_shape, "NCHW", "avg", aligned=False, **kwargs)
        with pytest.warns(rtvm.DispatchWarning, match=message):
            out = rtvm.dispatch_roi_align(mod)
        tvm.ir.assert_structural_equal(out, mod)


def test_check_function():
    check = tvm.get_global_func("roialign.roi_align_check")
    assert check(7, 7, 0.25, 2, "legacy", "avg", "NHWC", "bfloat16") == ""
    assert "sampling" in check(7, 7, 0.25, 4096, "legacy", "avg", "NCHW", "float32").lower()
    with pytest.raises(ValueError, match="unknown layout"):
        check(7, 7, 0.25, 2, "legacy", "avg", "NCWH", "float32")


def call_dps(x, rois, out, layout="NCHW", pooled=(2, 2)):
    f = tvm.get_global_func(rtvm.FUNCTION)
    f(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(rois), pooled[0], pooled[1], 0.5, 2, "legacy", "avg", layout,
      tvm_ffi.from_dlpack(out))


def test_packed_function_validates_and_leaves_output_untouched():
    x = np.ones((1, 3, 6, 6), np.float32)
    rois = np.array([[0, 0, 0, 8, 8]], np.float32)
    good = np.full((1, 3, 2, 2), 7.0, np.float32)
    call_dps(x, rois, good)
    np.testing.assert_allclose(good, 1.0)
    bad = [
        (dict(x=x.astype(np.int32)), TypeError, "int32.*float32, float16 and bfloat16"),
        (dict(x=x[..., ::2]), ValueError, "not contiguous"),
        (dict(x=x[0]), ValueError, "must be 4-D"),
        (dict(rois=rois[:, 1:].copy()), ValueError, r"\[K, 5\]"),
        (dict(rois=rois.astype(np.float64)), TypeError, "expected float32"),
        (dict(out=np.zeros((1, 3, 3, 2), np.float32)), ValueError, r"gives \[1, 3, 2, 2\]"),
        (dict(out=np.zeros((1, 3, 2, 2), np.float16)), TypeError, "must match"),
        (dict(rois=np.array([[1, 0, 0, 8, 8]], np.float32)), ValueError, "batch"),  # batch index beyond N=1
    ]
    for change, error, message in bad:
        args = dict(x=x, rois=rois, out=np.full((1, 3, 2, 2), 7.0, np.float32))
        args.update(change)
        before = args["out"].copy()
        with pytest.raises(error, match=message):
            call_dps(**args)
        np.testing.assert_array_equal(args["out"], before)


def to_blocked_array(x, b):
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // b, b, h, w).transpose(0, 1, 3, 4, 2))


def test_packed_function_takes_blocked_maps():
    """NCHW{b}c: data [N, C/b, H, W, b] and out [K, C/b, PH, PW, b], every lane a channel; the NHWC kernel's bits."""
    x, rois = problem("NCHW", seed=13, c=32)
    for b in (4, 8, 16):
        xb = to_blocked_array(x, b)
        out = np.full((rois.shape[0], 32 // b, 2, 2, b), 7.0, np.float32)
        call_dps(xb, rois, out, layout="NCHW%dc" % b)
        nhwc = roialign.roi_align(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), rois, (2, 2), spatial_scale=0.5,
                                  sampling_ratio=2, layout="NHWC")
        np.testing.assert_array_equal(out, to_blocked_array(nhwc.transpose(0, 3, 1, 2), b))
    xb = to_blocked_array(x, 16)
    good_out = np.zeros((rois.shape[0], 2, 2, 2, 16), np.float32)
    bad = [
        (dict(x=x), "must be 5-D"),
        (dict(x=to_blocked_array(x, 8)), "16 channels in its last dimension"),
        (dict(out=np.zeros((rois.shape[0], 32, 2, 2), np.float32)), r"gives \[9, 2, 2, 2, 16\]"),
    ]
    for change, message in bad:
        args = dict(x=xb, rois=rois, out=good_out.copy())
        args.update(change)
        before = args["out"].copy()
        with pytest.raises(ValueError, match=message):
            call_dps(layout="NCHW16c", **args)
        np.testing.assert_array_equal(args["out"], before)
