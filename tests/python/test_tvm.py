# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign inside Apache TVM: libroialign_tvm.so (engines/tvm) and the Relax pass roialign.tvm.dispatch_roi_align.

Needs apache-tvm (0.27) importable, e.g. from .peers via ROIALIGN_PEERS_PATH, and the library's path in
ROIALIGN_TVM_LIBRARY. Skips when tvm is absent, except under ROIALIGN_REQUIRE_TVM=1 (.ci/test.sh sets it).
"""
import os
import signal
import subprocess
import sys
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


def dispatch_quietly(mod, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", rtvm.DispatchWarning)
        return rtvm.dispatch_roi_align(mod, **kwargs)


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


# ---- Channel-blocked maps (NCHW4c/8c/16c), as relax.transform.ConvertLayout leaves them ----


def to_blocked(b):
    return lambda n, c, h, w: (n, c // b, h, w, c % b)


def from_blocked(b):
    return lambda n, c1, h, w, c0: (n, c1 * b + c0, h, w)


def conv_roi_align_module(x_shape, w_shape, rois_shape, block=None, head_shape=None, mode="avg", ratio=2):
    """conv2d (NCHW) -> roi_align (NCHW) [-> conv2d, a mask head]. With `block`, the module that
    relax.transform.ConvertLayout({"relax.nn.conv2d": ["NCHW{b}c", "OIHW{b}o", "NCHW{b}c"]}) makes of it: each conv2d
    in NCHW{b}c between layout transforms, roi_align on the NCHW transform of the blocked map, and the head's conv2d
    on the blocked transform of roi_align's result (test_convert_layout_gives_the_blocked_module checks that)."""
    b = block
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(x_shape, "float32"))
    w = relax.Var("w", relax.TensorType(w_shape, "float32"))
    r = relax.Var("rois", relax.TensorType(rois_shape, "float32"))
    params = [x, w, r]
    if head_shape:
        w2 = relax.Var("w2", relax.TensorType(head_shape, "float32"))
        params.append(w2)

    def conv(data, weight, last=False):
        emit = bb.emit_output if last else bb.emit
        if not b:
            return emit(relax.op.nn.conv2d(data, weight, padding=1))
        data = bb.emit(relax.op.layout_transform(data, index_map=to_blocked(b)))
        weight = bb.emit(relax.op.layout_transform(weight, index_map=lambda o, i, h, w: (o // b, i, h, w, o % b)))
        layout = "NCHW%dc" % b
        y = bb.emit(relax.op.nn.conv2d(data, weight, padding=1, data_layout=layout, kernel_layout="OIHW%do" % b,
                                       out_layout=layout))
        return emit(relax.op.layout_transform(y, index_map=from_blocked(b)))

    with bb.function("main", params):
        with bb.dataflow():
            y = conv(x, w)
            y = bb.emit(relax.op.vision.roi_align(y, r, (7, 6), 0.25, ratio, False, "NCHW", mode))
            out = conv(y, w2, last=True) if head_shape else bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def run_blocked(mod, *arrays):
    """`run`, with TVM's TE compute for NCHW[b]c conv2d: the llvm target's LegalizeOps leaves a blocked conv2d as it
    is (test_llvm_legalize_leaves_blocked_conv2d), TVM's Adreno pipeline legalizes it with this one."""
    from tvm.relax.transform.legalize_ops.adreno import conv2d_NCHWc_OIHWo
    return run(relax.transform.LegalizeOps({"relax.nn.conv2d": conv2d_NCHWc_OIHWo})(mod), *arrays)


def bindings(mod):
    return {bnd.var: bnd.value for block in mod["main"].body.blocks for bnd in block.bindings}


def op_name(value):
    return value.op.name if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) else None


def conv_problem(seed, c_in=16, c=32, head=0, n=2, h=20, w=24, k=9):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, c_in, h, w)).astype(np.float32),
              (rng.standard_normal((c, c_in, 3, 3)) / 8).astype(np.float32), problem("NCHW", seed, n, 1, h, w, k)[1]]
    if head:
        arrays.append((rng.standard_normal((head, c, 3, 3)) / 8).astype(np.float32))
    return arrays


@pytest.mark.parametrize("block,mode,head", [(4, "avg", 0), (8, "max", 0), (16, "avg", 0), (16, "max", 16),
                                             (8, "avg", 16)])
def test_blocked_conv_before_roi_align(block, mode, head):
    """The layout_transform to NCHW between an NCHW{b}c conv2d and roi_align goes: roialign's blocked kernel reads
    the conv2d's output. Its blocked result is transformed back to NCHW, or, before an NCHW{b}c head, taken by the
    head's conv2d as it is. Agrees with TVM's own lowering of the same module and of the NCHW module."""
    arrays = conv_problem(block + head, head=head)
    shapes = [a.shape for a in arrays]
    nchw = conv_roi_align_module(shapes[0], shapes[1], shapes[2], head_shape=head and shapes[3], mode=mode)
    mod = conv_roi_align_module(shapes[0], shapes[1], shapes[2], block, head and shapes[3], mode)
    out = dispatch_quietly(mod, fold_blocks=(block,))
    text = out.script()
    assert PACKED in text and 'R.str("NCHW%dc")' % block in text and "R.vision.roi_align" not in text
    values = bindings(out)
    (packed,) = [v for v in values.values() if op_name(v) == "relax.call_dps_packed"]
    assert op_name(values[packed.args[1].fields[0]]) == "relax.nn.conv2d"  # the map is the conv2d's own output
    transforms = [v for v in values.values() if op_name(v) == "relax.layout_transform"]
    if head:  # x, w and w2 to blocked, the head's result to NCHW: roi_align has no transform on either side
        assert len(transforms) == 4 and all(op_name(values.get(t.args[0])) != "relax.call_dps_packed"
                                            for t in transforms)
    else:  # x and w to blocked, roi_align's blocked result to NCHW
        assert len(transforms) == 3 and any(t.args[0].same_as(v) for t in transforms for v, p in values.items()
                                            if p.same_as(packed))
    tvm_blocked = run_blocked(mod, *arrays)
    assert_close(run_blocked(out, *arrays), tvm_blocked)
    assert_close(tvm_blocked, run(nchw, *arrays))


def blocked_map_module(block, shape, rois_shape, mode="avg", ratio=2, dtype="float32"):
    """A blocked map [N, C/b, H, W, b], its layout_transform to NCHW and roi_align on that."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape, dtype))
    r = relax.Var("rois", relax.TensorType(rois_shape, "float32"))
    with bb.function("main", [x, r]):
        with bb.dataflow():
            y = bb.emit(relax.op.layout_transform(x, index_map=from_blocked(block)))
            y = bb.emit(relax.op.vision.roi_align(y, r, (7, 6), 0.25, ratio, False, "NCHW", mode))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def to_blocked_array(x, b):
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // b, b, h, w).transpose(0, 1, 3, 4, 2))


@pytest.mark.parametrize("block", [4, 8, 16])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [2, 0])
def test_blocked_map_gives_nhwc_bits(block, mode, ratio):
    """On a blocked map, the fold runs roialign's blocked kernel, whose results are the NHWC kernel's bits, and
    agrees with TVM's roi_align on the NCHW transform."""
    x, rois = problem("NCHW", seed=block + ratio, c=32)
    xb = to_blocked_array(x, block)
    mod = blocked_map_module(block, xb.shape, rois.shape, mode, ratio)
    out = dispatch_quietly(mod, fold_blocks=(4, 8, 16))
    text = out.script()
    assert 'R.str("NCHW%dc")' % block in text
    assert [op_name(v) for v in bindings(out).values()] == ["relax.call_dps_packed", "relax.layout_transform", None]
    got = run(out, xb, rois)
    assert_close(got, run(mod, xb, rois))
    nhwc = roialign.roi_align(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), rois, (7, 6), spatial_scale=0.25,
                              sampling_ratio=ratio, layout="NHWC", pool=mode)
    np.testing.assert_array_equal(got, nhwc.transpose(0, 3, 1, 2))


def test_blocked_fold_keeps_what_other_consumers_need():
    """A map transform that something else also reads stays, and so does the NCHW result that is returned beside
    its blocked transform; roi_align still reads the blocked map."""
    b = 8
    x, rois = problem("NCHW", seed=5, c=16)
    xb = to_blocked_array(x, b)
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType(xb.shape, "float32"))
    rv = relax.Var("rois", relax.TensorType(rois.shape, "float32"))
    with bb.function("main", [xv, rv]):
        with bb.dataflow():
            m = bb.emit(relax.op.layout_transform(xv, index_map=from_blocked(b)))
            y = bb.emit(relax.op.vision.roi_align(m, rv, (7, 6), 0.25, 2, False, "NCHW", "avg"))
            yb = bb.emit(relax.op.layout_transform(y, index_map=to_blocked(b)))
            total = bb.emit(relax.op.sum(m))
            out = bb.emit_output(relax.Tuple([total, y, yb]))
        bb.emit_func_output(out)
    mod = bb.get()
    out = dispatch_quietly(mod, fold_blocks=(8,))
    values = bindings(out)
    (packed,) = [v for v in values.values() if op_name(v) == "relax.call_dps_packed"]
    assert packed.args[1].fields[0].same_as(mod["main"].params[0])
    assert [op_name(v) for v in values.values()].count("relax.layout_transform") == 2  # the map's; y's to NCHW
    vm_ours = relax.VirtualMachine(relax.build(out, TARGET), tvm.cpu())["main"](tvm.runtime.tensor(xb),
                                                                               tvm.runtime.tensor(rois))
    vm_tvm = relax.VirtualMachine(relax.build(mod, TARGET), tvm.cpu())["main"](tvm.runtime.tensor(xb),
                                                                              tvm.runtime.tensor(rois))
    for got, ref in zip(vm_ours, vm_tvm):
        assert_close(got.numpy(), ref.numpy())


def test_other_transforms_stay_nchw():
    """Only the NCHW{b}c -> NCHW transform folds: a map that is another 5-D transform (channels in the other order)
    keeps its transform and runs the NCHW kernel."""
    x, rois = problem("NCHW", seed=9, c=16)
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType((2, 4, 20, 24, 4), "float32"))
    rv = relax.Var("rois", relax.TensorType(rois.shape, "float32"))
    with bb.function("main", [xv, rv]):
        y = bb.emit(relax.op.layout_transform(xv, index_map=lambda n, c1, h, w, c0: (n, c0 * 4 + c1, h, w)))
        bb.emit_func_output(bb.emit(relax.op.vision.roi_align(y, rv, (7, 6), 0.25, 2, False, "NCHW", "avg")))
    mod = bb.get()
    out = dispatch_quietly(mod, fold_blocks=(4, 8, 16))
    text = out.script()
    assert 'R.str("NCHW")' in text and "layout_transform" in text and 'c")' not in text
    xb = np.ascontiguousarray(x.reshape(2, 4, 4, 20, 24).transpose(0, 2, 3, 4, 1))  # [n, c1, h, w, c0], c = c0*4+c1
    assert_close(run(out, xb, rois), run(mod, xb, rois))


def test_default_folds_nchw16c_only():
    """By default NCHW16c folds and NCHW4c/8c keep their transform and the NCHW kernel (the slower blocked kernels,
    docs/tvm.md); fold_blocks=() folds none, and a block that is no layout's is refused."""
    for b in (4, 8, 16):
        mod = blocked_map_module(b, (2, 32 // b, 20, 24, b), (9, 5))
        text = dispatch_quietly(mod).script()
        assert ('R.str("NCHW16c")' in text) == (b == 16) and ('R.str("NCHW")' in text) == (b != 16)
        text = dispatch_quietly(mod, fold_blocks=()).script()
        assert 'R.str("NCHW")' in text and "c1 * %d + c0" % b in text
    with pytest.raises(ValueError, match="blocks of 4, 8 and 16"):
        rtvm.dispatch_roi_align(mod, fold_blocks=(32,))


def test_blocks_come_from_the_library():
    """The pass's blocked layouts and their blocks are the library's (roialign_enum_name,
    roialign_layout_channel_block), as the package reads them: the binding keeps no copy."""
    assert rtvm._channel_blocks() == {b: name for name, b in roialign._BLOCKS.items()}
    assert sorted(rtvm._channel_blocks()) == [4, 8, 16]


FOREIGN_LOAD = """
import ctypes, os, sys
sys.path[:0] = sys.argv[1].split(os.pathsep)
os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
import tvm_ffi._optional_torch_c_dlpack as addon
addon.load_torch_c_dlpack_extension = lambda: None
import tvm  # loads libtvm_ffi.so, which the library needs
ctypes.CDLL(sys.argv[2])  # registers the functions without load_library
import roialign.tvm as rtvm
assert not rtvm._libraries and tvm.get_global_func(rtvm.FUNCTION, allow_missing=True) is not None
print(sorted(rtvm._channel_blocks().items()))
"""


def test_blocks_of_a_library_loaded_elsewhere():
    """When libroialign_tvm.so was loaded without load_library (its functions registered all the same), the blocks
    come from that library, found in the process by its soname."""
    proc = subprocess.run([sys.executable, "-I", "-c", FOREIGN_LOAD, os.pathsep.join(sys.path),
                           os.path.abspath(LIBRARY)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[(4, 'NCHW4c'), (8, 'NCHW8c'), (16, 'NCHW16c')]"


def test_blocked_float16_map():
    """A float16 blocked map folds too: the NHWC kernel's float16 bits, and TVM's result within float16 rounding."""
    x, rois = problem("NCHW", seed=21, c=32)
    x = x.astype(np.float16)
    xb = to_blocked_array(x, 16)
    mod = blocked_map_module(16, xb.shape, rois.shape, dtype="float16")
    out = dispatch_quietly(mod)
    assert 'R.str("NCHW16c")' in out.script()
    got = run(out, xb, rois)
    nhwc = roialign.roi_align(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), rois, (7, 6), spatial_scale=0.25,
                              sampling_ratio=2, layout="NHWC")
    np.testing.assert_array_equal(got, nhwc.transpose(0, 3, 1, 2))
    np.testing.assert_allclose(got.astype(np.float32), run(mod, xb, rois).astype(np.float32), atol=2e-2, rtol=1e-2)


def test_llvm_legalize_leaves_blocked_conv2d():
    """TVM 0.27's LegalizeOps (the llvm/CPU pipeline's) cannot lower an NCHW{b}c conv2d ("channel chunk"): it stays
    R.nn.conv2d, and relax.build fails on it. So the CPU pipeline never makes blocked tensors by itself; a module
    that has them brings its own legalization (run_blocked). A TVM that lowers it fails here: docs/tvm.md."""
    mod = conv_roi_align_module((1, 16, 8, 8), (16, 16, 3, 3), (2, 5), block=16)
    text = relax.transform.LegalizeOps()(mod).script()
    assert 'R.nn.conv2d(' in text and 'data_layout="NCHW16c"' in text


CONVERT_LAYOUT = """
import os, sys
sys.path[:0] = sys.argv[1].split(os.pathsep)
os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
import tvm_ffi._optional_torch_c_dlpack as addon
addon.load_torch_c_dlpack_extension = lambda: None
import tvm, tvm.script
from tvm import relax
mod = tvm.script.from_source(sys.stdin.read())
b = int(sys.argv[2])
layouts = {"relax.nn.conv2d": ["NCHW%dc" % b, "OIHW%do" % b, "NCHW%dc" % b]}
print(relax.transform.ConvertLayout(layouts)(mod).script())
"""


@pytest.mark.parametrize("block,head", [(16, 0), (8, 16)])
def test_convert_layout_gives_the_blocked_module(block, head):
    """relax.transform.ConvertLayout to NCHW{b}c conv2d gives conv_roi_align_module(block=b): the module the fold is
    tested on. Run in a subprocess: with apache-tvm-ffi 0.1.15 under apache-tvm 0.27.0.post1, ConvertLayout to a
    blocked layout kills the process with SIGSEGV (in tvm_ffi's ToJSONGraph, which tvm.ir.save_json of any PrimExpr
    also crashes in); with 0.1.14.post0 it works. docs/tvm.md."""
    shapes = [(2, 16, 20, 24), (32, 16, 3, 3), (9, 5), head and (head, 32, 3, 3)]
    nchw = conv_roi_align_module(*shapes[:3], head_shape=shapes[3])
    proc = subprocess.run([sys.executable, "-I", "-c", CONVERT_LAYOUT, os.pathsep.join(sys.path), str(block)],
                          input=nchw.script(), capture_output=True, text=True, timeout=300)
    if proc.returncode == -signal.SIGSEGV:
        pytest.xfail("ConvertLayout to NCHW%dc crashed (SIGSEGV) with apache-tvm-ffi %s"
                     % (block, tvm_ffi.__version__))
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = conv_roi_align_module(*shapes[:3], block, shapes[3])
    # Both through TVMScript's printer and parser, so that only the IR is compared.
    tvm.ir.assert_structural_equal(tvm.script.from_source(proc.stdout), tvm.script.from_source(expected.script()))


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
