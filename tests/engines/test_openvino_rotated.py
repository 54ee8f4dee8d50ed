# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Rotated RoIs on roialign inside OpenVINO (docs/openvino.md#rotated-rois): ONNX models with mmcv's
MMCVRoIAlignRotated, built by hand with onnx.helper as mmcv's exporter writes them, run through
libroialign_openvino.so and are compared with a float64 numpy transcription of DESIGN.md section 5 (the rotated
definition of docs/semantics.md#rotated-rois); OpenVINO's own opset15 ROIAlignRotated is compared with the same
transcription and with the extension, in both directions of rotation; and models built with ROIAlignRotated-15 run
on roialign after roialign.openvino.replace_roi_align_rotated (OpenVINO's public pass API).

Run as tests/engines/test_openvino.py (.ci/test.sh's OpenVINO stage):
    ROIALIGN_PEERS_PATH=.peers ROIALIGN_OPENVINO_EXTENSION=build/engines/openvino/libroialign_openvino.so \\
        .ci/python -m pytest tests/engines/test_openvino_rotated.py
Skips only when openvino or onnx cannot be imported, and not even then with ROIALIGN_REQUIRE_OPENVINO=1.

Tolerances. Against the float64 transcription: 1e-4 + 1e-3 |ref| (the f32 kernel computes each sample position in
float32: at map coordinates of tens of pixels that moves a position by ~1e-5 pixel and a value of a map in [-1, 1]
by about as much; a wrong sample, tap or sign is an error near 1e-2 or more). Against OpenVINO's ROIAlignRotated-15,
on a map of a few hundred pixels: 2e-4 + 1e-3 |ref|, since both compute positions in float32 in their own order, and
at coordinates of a few hundred pixels one float32 ulp is ~3e-5 pixel, which moves a value by up to ~3e-5 per
sample (map values in [-1, 1], neighbouring pixels differing by up to 2).
"""
import importlib.util
import math
import os
import sys

for _p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

try:
    import numpy as np
    import onnx
    import openvino as ov
    from onnx import TensorProto, helper
    try:
        import openvino.opset15 as ops15
    except ImportError:
        import openvino.runtime.opset15 as ops15
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("ROIALIGN_REQUIRE_OPENVINO") == "1":
        raise
    pytest.skip("openvino/onnx not importable (%s); set ROIALIGN_PEERS_PATH" % e, allow_module_level=True)

EXTENSION = os.environ.get("ROIALIGN_OPENVINO_EXTENSION", "")
OUR_OP = "RoialignRoiAlignRotated"
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def core():
    assert EXTENSION and os.path.isfile(EXTENSION), (
        "set ROIALIGN_OPENVINO_EXTENSION to libroialign_openvino.so (got %r)" % EXTENSION)
    c = ov.Core()
    c.add_extension(EXTENSION)
    return c


@pytest.fixture(scope="module")
def helper_module():
    """python/roialign/openvino.py loaded from its file (it needs openvino, not the built roialign package)."""
    path = os.path.join(ROOT, "python", "roialign", "openvino.py")
    spec = importlib.util.spec_from_file_location("roialign_openvino_helper", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- the definition, in float64 (DESIGN.md section 5 over section 1.1's bilinear) ----

def bilinear(img, y, x):
    """img [C, H, W] at (y, x): section 1.1, all four weights 0 outside [-1, H] x [-1, W]."""
    _, h, w = img.shape
    if not (-1.0 <= y <= h and -1.0 <= x <= w):
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return hy * hx * img[:, y0, x0] + hy * lx * img[:, y0, x1] + ly * hx * img[:, y1, x0] + ly * lx * img[:, y1, x1]


def reference(x, rows6, ph, pw, scale, ratio, aligned, clockwise, degrees=False):
    """AVG over rotated RoIs, rows (batch, cx, cy, w, h, angle), in float64."""
    x = x.astype(np.float64)
    out = np.zeros((len(rows6), x.shape[1], ph, pw))
    for k, (b, cx, cy, bw, bh, angle) in enumerate(rows6.astype(np.float64)):
        theta = angle * math.pi / 180.0 if degrees else angle
        if clockwise:
            theta = -theta
        off = 0.5 if aligned else 0.0
        cx, cy, bw, bh = cx * scale - off, cy * scale - off, bw * scale, bh * scale
        if not aligned:
            bw, bh = max(bw, 1.0), max(bh, 1.0)
        bin_h, bin_w = bh / ph, bw / pw
        gh = ratio if ratio > 0 else int(math.ceil(bh / ph))
        gw = ratio if ratio > 0 else int(math.ceil(bw / pw))
        count = max(gh * gw, 1)
        c, s = math.cos(theta), math.sin(theta)
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(x.shape[1])
                for iy in range(gh):
                    yy = -bh / 2 + i * bin_h + (iy + 0.5) * bin_h / gh
                    for ix in range(gw):
                        xx = -bw / 2 + j * bin_w + (ix + 0.5) * bin_w / gw
                        acc += bilinear(x[int(b)], yy * c - xx * s + cy, yy * s + xx * c + cx)
                out[k, :, i, j] = acc / count
    return out


def assert_close(got, ref, abs_tol=1e-4, rel_tol=1e-3):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    bound = abs_tol + rel_tol * np.abs(ref.astype(np.float64))
    assert np.all(err <= bound), "max err %g (worst ratio %g)" % (err.max(), (err / bound).max())


def case(n=2, c=5, h=24, w=32, k=9, scale=0.5, seed=3):
    """A map in [-1, 1] and RoIs in image pixels (map / scale): inside, across the border, outside, tiny, of size
    0, and of every angle in radians (both signs, beyond pi too)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    iw, ih = w / scale, h / scale
    rows = [[0, iw / 2, ih / 2, iw / 2, ih / 3, 0.3], [1, iw * 0.2, ih * 0.8, iw * 0.6, ih * 0.2, -1.2],
            [0, iw * 0.95, ih * 0.1, iw * 0.5, ih * 0.5, 2.5], [1, iw * 0.5, ih * 0.5, 1.0, 0.5, 4.0],
            [0, iw * 0.3, ih * 0.3, 0.0, ih * 0.3, 0.7], [1, -iw, ih * 0.5, 3.0, 3.0, 0.1],
            [0, iw * 0.6, ih * 0.4, iw * 1.2, ih * 0.9, -3.5], [1, iw * 0.1, ih * 0.1, 6.0, 30.0, math.pi / 2],
            [0, iw * 0.7, ih * 0.6, 20.0, 12.0, -math.pi]]
    return x, np.array(rows[:k], np.float32)


# ---- mmcv::MMCVRoIAlignRotated, as mmcv's exporter writes it ----

def mmcv_model(path, out_h, out_w, scale, ratio, aligned, clockwise, n, c, h, w, k, domain="mmcv", inputs=2):
    node_inputs = ["features", "rois"] + (["extra"] if inputs == 3 else [])
    node = helper.make_node("MMCVRoIAlignRotated", node_inputs, ["Y"], domain=domain, name="roi_align_rotated",
                            output_height=out_h, output_width=out_w, spatial_scale=float(scale),
                            sampling_ratio=ratio, aligned=int(aligned), clockwise=int(clockwise))
    graph_inputs = [helper.make_tensor_value_info("features", TensorProto.FLOAT, [n, c, h, w]),
                    helper.make_tensor_value_info("rois", TensorProto.FLOAT, [k, 6])]
    if inputs == 3:
        graph_inputs.append(helper.make_tensor_value_info("extra", TensorProto.FLOAT, [k]))
    graph = helper.make_graph([node], "mmcv_roi_align_rotated", graph_inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [k, c, out_h, out_w])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid(domain, 1)],
                              producer_name="roialign-test")
    model.ir_version = 7
    onnx.save(model, str(path))
    return str(path)


def run(core, model, feeds, threads=2):
    compiled = core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": threads, **F32})
    return compiled(feeds)[0]


@pytest.mark.parametrize("aligned", [1, 0])
@pytest.mark.parametrize("clockwise", [0, 1])
@pytest.mark.parametrize("ratio", [2, 0])
def test_mmcv_onnx_model_runs_roialign_and_matches_the_definition(core, tmp_path, aligned, clockwise, ratio):
    x, rows = case()
    n, c, h, w = x.shape
    # mmcv's exporter writes output_width = output_height; a 7x7 pooler is what it exports in practice.
    path = mmcv_model(tmp_path / "m.onnx", 7, 7, 0.5, ratio, aligned, clockwise, n, c, h, w, len(rows))
    model = core.read_model(path)
    (op,) = [o for o in model.get_ops() if o.get_type_name() == OUR_OP]
    attrs = op.get_attributes()
    assert attrs["coordinate_mode"] == ("HALF_PIXEL" if aligned else "LEGACY")
    assert attrs["rotation"] == ("CLOCKWISE" if clockwise else "COUNTER_CLOCKWISE")
    assert attrs["angle_unit"] == "RADIANS" and attrs["sampling_ratio"] == ratio
    got = run(core, model, {"features": x, "rois": rows})
    assert_close(got, reference(x, rows, 7, 7, 0.5, ratio, aligned, clockwise))


def test_mmcv_attributes_are_read_as_written(core, tmp_path):
    # A file whose output_width differs from output_height (not what mmcv writes, but what the file says) gets it.
    x, rows = case(k=4)
    n, c, h, w = x.shape
    path = mmcv_model(tmp_path / "m.onnx", 3, 5, 0.5, 2, 1, 0, n, c, h, w, len(rows))
    got = run(core, core.read_model(path), {"features": x, "rois": rows}, threads=1)
    assert got.shape == (4, c, 3, 5)
    assert_close(got, reference(x, rows, 3, 5, 0.5, 2, True, False))


def test_mmcv_node_that_cannot_be_expressed_is_refused_at_read(core, tmp_path):
    x, rows = case(k=2)
    n, c, h, w = x.shape
    path = mmcv_model(tmp_path / "m.onnx", 7, 7, 0.5, 2, 1, 0, n, c, h, w, 2, inputs=3)
    with pytest.raises(Exception, match="MMCVRoIAlignRotated 'roi_align_rotated' has 3 inputs"):
        core.read_model(path)


def test_a_bad_roi_is_refused_at_run_naming_it(core, tmp_path):
    # The ONNX frontend names a converted node after its output ("Y"); roialign's message names the RoI.
    x, rows = case(k=3)
    n, c, h, w = x.shape
    rows[1, 3] = -4.0  # a negative width, aligned: INVALID_ARGUMENT
    path = mmcv_model(tmp_path / "m.onnx", 7, 7, 0.5, 2, 1, 0, n, c, h, w, 3)
    with pytest.raises(Exception, match="RoiAlignRotated 'Y': roi 1: size -4"):
        run(core, core.read_model(path), {"features": x, "rois": rows})


# ---- OpenVINO's own ROIAlignRotated-15 ----

def ov15_model(shape, k, ph, pw, ratio, scale, clockwise):
    x = ops15.parameter(list(shape), ov.Type.f32, name="X")
    rois = ops15.parameter([k, 5], ov.Type.f32, name="rois")
    idx = ops15.parameter([k], ov.Type.i32, name="batch_indices")
    node = ops15.roi_align_rotated(x, rois, idx, ph, pw, ratio, scale, clockwise, name="ov_rotated")
    return ov.Model([node], [x, rois, idx], "ov15_rotated")


def big_case():
    """A map of a few hundred pixels (scale 1/4 of an 800 x 1088 image, as the rotated workload's) and RoIs of
    16-512 px at every angle."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (1, 4, 200, 272)).astype(np.float32)
    k = 24
    sizes = np.exp(rng.uniform(math.log(16), math.log(512), (k, 2)))
    rows = np.stack([np.zeros(k), rng.uniform(0, 1088, k), rng.uniform(0, 800, k), sizes[:, 0], sizes[:, 1],
                     rng.uniform(-math.pi / 2, math.pi / 2, k)], axis=1).astype(np.float32)
    return x, rows


@pytest.mark.parametrize("clockwise", [False, True])
def test_openvino_roi_align_rotated_15_agrees_with_the_definition_and_the_extension(core, tmp_path, clockwise):
    x, rows = big_case()
    k = len(rows)
    feeds = {"X": x, "rois": np.ascontiguousarray(rows[:, 1:]), "batch_indices": rows[:, 0].astype(np.int32)}
    theirs = ov.Core().compile_model(ov15_model(x.shape, k, 7, 7, 2, 0.25, clockwise), "CPU", F32)(feeds)[0]
    ref = reference(x, rows, 7, 7, 0.25, 2, True, clockwise)
    assert_close(theirs, ref, abs_tol=2e-4)  # OpenVINO's op is (RADIANS, aligned, clockwise_mode): section 5
    path = mmcv_model(tmp_path / "m.onnx", 7, 7, 0.25, 2, 1, int(clockwise), *x.shape, k)
    ours = run(core, core.read_model(path), {"features": x, "rois": rows})
    assert_close(ours, ref, abs_tol=2e-4)
    assert_close(ours, theirs, abs_tol=2e-4)


@pytest.mark.parametrize("clockwise", [False, True])
def test_models_with_roi_align_rotated_15_run_on_roialign_after_the_pass(core, helper_module, clockwise):
    x, rows = big_case()
    k = len(rows)
    feeds = {"X": x, "rois": np.ascontiguousarray(rows[:, 1:]), "batch_indices": rows[:, 0].astype(np.int32)}
    theirs = ov.Core().compile_model(ov15_model(x.shape, k, 7, 5, 0, 0.25, clockwise), "CPU", F32)(feeds)[0]
    model = ov15_model(x.shape, k, 7, 5, 0, 0.25, clockwise)
    assert helper_module.replace_roi_align_rotated(model, EXTENSION) == 1
    types = [o.get_type_name() for o in model.get_ops()]
    assert OUR_OP in types and "ROIAlignRotated" not in types
    (op,) = [o for o in model.get_ops() if o.get_type_name() == OUR_OP]
    assert op.get_friendly_name() == "ov_rotated"
    assert op.get_attributes()["rotation"] == ("CLOCKWISE" if clockwise else "COUNTER_CLOCKWISE")
    ours = run(core, model, feeds)
    assert_close(ours, theirs, abs_tol=2e-4)
    assert_close(ours, reference(x, rows, 7, 5, 0.25, 0, True, clockwise), abs_tol=2e-4)


def test_the_pass_leaves_what_roialign_refuses(core, helper_module):
    # An f64 map: roialign's OpenVINO op serves f32, f16 and bf16 maps, so OpenVINO's own op stays.
    x = ops15.parameter([1, 2, 8, 8], ov.Type.f64, name="X")
    rois = ops15.parameter([1, 5], ov.Type.f64, name="rois")
    idx = ops15.parameter([1], ov.Type.i32, name="batch_indices")
    model = ov.Model([ops15.roi_align_rotated(x, rois, idx, 2, 2, 2, 1.0, False)], [x, rois, idx], "f64")
    assert helper_module.replace_roi_align_rotated(model, EXTENSION) == 0
    assert "ROIAlignRotated" in [o.get_type_name() for o in model.get_ops()]


def test_ir_files_with_roi_align_rotated_15_are_read_with_the_extension(core, tmp_path):
    # The library's DecoderTransformationExtension: whether read_model applies it to an IR file is OpenVINO's
    # frontend's choice (docs/openvino.md#rotated-rois); either way the model runs and agrees with OpenVINO's op.
    x, rows = big_case()
    k = len(rows)
    feeds = {"X": x, "rois": np.ascontiguousarray(rows[:, 1:]), "batch_indices": rows[:, 0].astype(np.int32)}
    xml = str(tmp_path / "m.xml")
    ov.save_model(ov15_model(x.shape, k, 7, 7, 2, 0.25, False), xml)
    model = core.read_model(xml)
    types = [o.get_type_name() for o in model.get_ops()]
    theirs = ov.Core().compile_model(ov.Core().read_model(xml), "CPU", F32)(feeds)[0]
    assert_close(run(core, model, feeds), theirs, abs_tol=2e-4)
    print("IR read with the extension holds", "roialign's op" if OUR_OP in types else "ROIAlignRotated-15")


def test_cpp_programs_replace_it_through_the_exported_function(tmp_path):
    # tests/engines/openvino_replace_rotated.cc, compiled against the SDK of the openvino package imported above
    # (the wheel's include/ and libs/), loads the extension with dlopen and calls its one exported pass.
    import glob
    import shutil
    import subprocess
    sdk = os.path.dirname(ov.__file__)
    libs = glob.glob(os.path.join(sdk, "libs", "libopenvino.so*"))
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if not (cxx and libs and os.path.isdir(os.path.join(sdk, "include"))):
        if os.environ.get("ROIALIGN_REQUIRE_OPENVINO") == "1":
            pytest.fail("no C++ compiler (%r) or no SDK in %s" % (cxx, sdk))
        pytest.skip("no C++ compiler or no OpenVINO SDK beside the openvino package")
    exe = str(tmp_path / "openvino_replace_rotated")
    lib = sorted(libs, key=len)[0]
    subprocess.run([cxx, "-std=c++17", "-O1", "-I", os.path.join(sdk, "include"),
                    os.path.join(ROOT, "tests", "engines", "openvino_replace_rotated.cc"), "-o", exe, lib, "-ldl",
                    "-Wl,-rpath," + os.path.dirname(lib)], check=True)
    out = subprocess.run([exe, EXTENSION], check=True, capture_output=True, text=True).stdout
    assert "null model: -1" in out and "replaced: 1" in out, out
    assert "op: RoialignRoiAlignRotated" in out and "op: ROIAlignRotated" not in out, out
    assert "output: 2.5 4.5 2.5 4.5 12.5 14.5 12.5 14.5" in out, out
