# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""libroialign_openvino.so inside OpenVINO: ONNX models read with core.add_extension(path) + read_model run roialign,
and agree with ONNX Runtime on the same model.

Run with Debian's python through .ci/python (see .ci/test.sh):
    ROIALIGN_PEERS_PATH=.peers ROIALIGN_OPENVINO_EXTENSION=build/engines/openvino/libroialign_openvino.so \\
        .ci/python -m pytest tests/engines
Skips only when openvino (or onnx/onnxruntime) cannot be imported, and not even then with
ROIALIGN_REQUIRE_OPENVINO=1 (CI sets it). A missing extension library is a failure.
"""
import os
import sys

# Extra package directories first, as bench/peers.py does: they must win over dist-packages, numpy included.
for _p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import openvino as ov
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("ROIALIGN_REQUIRE_OPENVINO") == "1":
        raise
    pytest.skip("openvino/onnx/onnxruntime not importable (%s); set ROIALIGN_PEERS_PATH" % e, allow_module_level=True)

EXTENSION = os.environ.get("ROIALIGN_OPENVINO_EXTENSION", "")
OUR_OP = "RoialignRoiAlign"
# f32 peers accumulate in another order: a few ulps per sample (bench/peers.py uses the same bound).
ABS_TOL, REL_TOL = 1e-4, 1e-3
ort.set_default_logger_severity(3)  # ORT warns about its max mode on every session; the mapping is checked below


@pytest.fixture(scope="module")
def core():
    assert EXTENSION and os.path.isfile(EXTENSION), (
        "set ROIALIGN_OPENVINO_EXTENSION to libroialign_openvino.so (got %r)" % EXTENSION)
    c = ov.Core()
    c.add_extension(EXTENSION)
    return c


def roi_align_model(path, opset, attrs, with_conv=True, dtype=TensorProto.FLOAT, n=2, c=3, h=20, w=24, k=6,
                    oc=8):
    """X -> [Conv ->] RoiAlign(attrs) -> Y, saved to `path` (onnx.helper, checked)."""
    rng = np.random.default_rng(1)
    nodes, inits = [], []
    feat = "X"
    channels = c
    if with_conv:
        inits.append(numpy_helper.from_array(rng.standard_normal((oc, c, 3, 3)).astype(np.float32), "conv_w"))
        nodes.append(helper.make_node("Conv", ["X", "conv_w"], ["F"], pads=[1, 1, 1, 1]))
        feat, channels = "F", oc
    nodes.append(helper.make_node("RoiAlign", [feat, "rois", "batch_indices"], ["Y"], name="roi_align", **attrs))
    ph, pw = attrs.get("output_height", 1), attrs.get("output_width", 1)
    graph = helper.make_graph(
        nodes, "roialign_test",
        [helper.make_tensor_value_info("X", dtype, [n, c, h, w]),
         helper.make_tensor_value_info("rois", dtype, [k, 4]),
         helper.make_tensor_value_info("batch_indices", TensorProto.INT64, [k])],
        [helper.make_tensor_value_info("Y", dtype, [k, channels, ph, pw])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="roialign-test")
    model.ir_version = 8  # opset 16's IR version, which ORT 1.x reads
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def inputs(n=2, c=3, h=20, w=24, dtype=np.float32):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)  # mixed signs: MAX modes and clamping both matter
    # Boxes in image pixels (spatial_scale 0.5 below): inside, across the border, tiny, inverted, whole map.
    rois = np.array([[0, 0, 30, 30], [4, 6, 40, 38], [10, 2, 20, 30], [1, 1, 2, 2], [30, 20, 10, 5],
                     [-6, -4, 47, 39]], dtype)
    batch = np.array([0, 1, 0, 1, 1, 0], np.int64)
    return {"X": x, "rois": rois, "batch_indices": batch}


def run_ort(path, feeds):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


# On CPUs with native bf16 (AVX-512 BF16, AMX: Sapphire and Emerald Rapids) the CPU plugin runs its own ops, such as
# the Conv, in bf16 unless asked for f32; ONNX Runtime's reference is f32.
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def run_ov(core, path, feeds, threads=2):
    compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_NUM_THREADS": threads, **F32})
    return compiled(feeds)[0], compiled


def assert_close(got, ref, abs_tol=ABS_TOL, rel_tol=REL_TOL):
    assert got.shape == ref.shape
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    bound = abs_tol + rel_tol * np.abs(ref.astype(np.float64))
    assert np.all(err <= bound), "max err %g (worst ratio %g)" % (err.max(), (err / bound).max())


def our_ops(model):
    return [op for op in model.get_ops() if op.get_type_name() == OUR_OP]


BASE = dict(output_height=5, output_width=4, sampling_ratio=2, spatial_scale=0.5)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_conv_then_roialign_opset16_half_pixel_matches_onnxruntime(core, tmp_path, mode):
    path = roi_align_model(tmp_path / "m.onnx", 16, dict(BASE, mode=mode, coordinate_transformation_mode="half_pixel"))
    feeds = inputs()
    got, compiled = run_ov(core, path, feeds)
    assert_close(got, run_ort(path, feeds))
    # The converted model holds our op with the ONNX attributes mapped ("max" is ONNX's max over taps: MAX_ONNX).
    (op,) = our_ops(core.read_model(path))
    assert op.get_attributes() == {"pooled_height": 5, "pooled_width": 4, "spatial_scale": 0.5, "sampling_ratio": 2,
                                   "coordinate_mode": "HALF_PIXEL", "pool_mode": "AVG" if mode == "avg" else "MAX_ONNX"}
    # The CPU plugin runs extension ops as "Reference" nodes (it calls our evaluate); its own would be "ROIAlign".
    layers = {o.get_rt_info()["originalLayersNames"].astype(str): o.get_rt_info()["layerType"].astype(str)
              for o in compiled.get_runtime_model().get_ops()}
    assert layers.get("Y") == "Reference", layers
    assert "ROIAlign" not in layers.values(), layers
    assert "Convolution" in layers.values()  # the rest of the model is OpenVINO's own


def test_without_the_extension_openvino_runs_its_own_roialign(tmp_path):
    # The contrast to the test above, so it shows the extension made the difference.
    path = roi_align_model(tmp_path / "m.onnx", 16, dict(BASE, mode="avg", coordinate_transformation_mode="half_pixel"))
    plain = ov.Core()
    compiled = plain.compile_model(plain.read_model(path), "CPU", F32)
    types = [o.get_rt_info()["layerType"].astype(str) for o in compiled.get_runtime_model().get_ops()]
    assert "ROIAlign" in types and "Reference" not in types, types


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("opset", [10, 11, 16])
def test_without_coordinate_transformation_mode_the_opset_decides(core, tmp_path, opset, mode):
    # Opset 10-15 have no such attribute (output_half_pixel = LEGACY); from 16 its default is half_pixel.
    path = roi_align_model(tmp_path / "m.onnx", opset, dict(BASE, mode=mode))
    (op,) = our_ops(core.read_model(path))
    assert op.get_attributes()["coordinate_mode"] == ("HALF_PIXEL" if opset >= 16 else "LEGACY")
    feeds = inputs()
    assert_close(run_ov(core, path, feeds)[0], run_ort(path, feeds))


def test_output_half_pixel_is_legacy(core, tmp_path):
    path = roi_align_model(tmp_path / "m.onnx", 16,
                           dict(BASE, mode="avg", coordinate_transformation_mode="output_half_pixel"))
    (op,) = our_ops(core.read_model(path))
    assert op.get_attributes()["coordinate_mode"] == "LEGACY"
    feeds = inputs()
    assert_close(run_ov(core, path, feeds)[0], run_ort(path, feeds))


def test_defaults_adaptive_sampling_and_scale_one(core, tmp_path):
    # No sampling_ratio (ONNX default 0: adaptive grid), no spatial_scale (1.0), no output size (1x1), no mode.
    path = roi_align_model(tmp_path / "m.onnx", 16, {"output_height": 3, "output_width": 2}, with_conv=False)
    (op,) = our_ops(core.read_model(path))
    attrs = op.get_attributes()
    assert (attrs["sampling_ratio"], attrs["spatial_scale"], attrs["pool_mode"]) == (0, 1.0, "AVG")
    feeds = inputs()
    assert_close(run_ov(core, path, feeds)[0], run_ort(path, feeds))


def test_batch_indices_pick_the_image(core, tmp_path):
    path = roi_align_model(tmp_path / "m.onnx", 16, dict(BASE, mode="avg", coordinate_transformation_mode="half_pixel"))
    feeds = inputs()
    y = run_ov(core, path, feeds)[0]
    swapped = dict(feeds, batch_indices=1 - feeds["batch_indices"])
    y_swapped = run_ov(core, path, swapped)[0]
    assert_close(y_swapped, run_ort(path, swapped))
    assert not np.allclose(y, y_swapped)  # the two images differ, so the index must have been used
    # An index outside [0, N) is bad data: refused at inference with roialign's message.
    bad = dict(feeds, batch_indices=np.array([0, 1, 0, 2, 1, 0], np.int64))
    with pytest.raises(Exception, match="batch"):
        run_ov(core, path, bad)


def test_float16_model(core, tmp_path):
    attrs = dict(BASE, mode="avg", coordinate_transformation_mode="half_pixel")
    path = roi_align_model(tmp_path / "m.onnx", 16, attrs, with_conv=False, dtype=TensorProto.FLOAT16)
    feeds = inputs(dtype=np.float16)
    model = core.read_model(path)
    (op,) = our_ops(model)
    assert op.get_input_element_type(0) == ov.Type.f16 and op.get_output_element_type(0) == ov.Type.f16
    ref = run_ort(path, feeds)
    assert ref.dtype == np.float16
    # Both round the same f32 result to f16 once, so they differ by at most one f16 ulp.
    ulp = np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    got, _ = run_ov(core, path, feeds)
    assert got.dtype == np.float16
    assert np.all(np.abs(got.astype(np.float64) - ref) <= ulp + 1e-4)
    # The CPU plugin on a CPU without f16 arithmetic lowers the op to f32 (our op then selects the f32 kernel). The
    # model itself, evaluated by OpenVINO's core, runs our f16 kernel on f16 tensors.
    assert op.get_attributes()["coordinate_mode"] == "HALF_PIXEL"  # reading the attributes keeps the kernel
    out = [ov.Tensor(ov.Type.f16, ov.Shape(list(ref.shape)))]
    assert model.evaluate(out, [ov.Tensor(feeds[k]) for k in ("X", "rois", "batch_indices")])
    assert np.all(np.abs(out[0].data.astype(np.float64) - ref) <= ulp + 1e-4)


def test_refused_attributes_fail_at_read_model_with_our_message(core, tmp_path):
    # A 2000x2000 sampling grid per bin is beyond roialign's limit (1024 per axis): refused at selection, which the
    # conversion runs, so read_model fails and no inference ever starts.
    path = roi_align_model(tmp_path / "m.onnx", 16, dict(BASE, mode="avg", sampling_ratio=2000,
                                                         coordinate_transformation_mode="half_pixel"))
    with pytest.raises(Exception) as info:
        core.read_model(path)
    text = str(info.value)
    assert "roialign refuses RoiAlign node 'roi_align'" in text, text
    assert "1024" in text, text
    # Without the extension OpenVINO reads the same model (it is valid ONNX): the refusal is ours.
    ov.Core().read_model(path)


def test_results_do_not_depend_on_the_thread_count(core, tmp_path):
    path = roi_align_model(tmp_path / "m.onnx", 16, dict(BASE, mode="max", coordinate_transformation_mode="half_pixel"),
                           n=2, c=3, h=40, w=48, k=6, oc=32)
    feeds = inputs(h=40, w=48)
    one = run_ov(core, path, feeds, threads=1)[0]
    two = run_ov(core, path, feeds, threads=2)[0]
    assert np.array_equal(one, two)


def test_converted_model_round_trips_through_ir(core, tmp_path):
    # save_model writes our op's attributes; read_model with the extension builds it again and selects its kernel.
    path = roi_align_model(tmp_path / "m.onnx", 10, dict(BASE, mode="max"))
    ir = str(tmp_path / "m.xml")
    ov.save_model(core.read_model(path), ir, compress_to_fp16=False)
    (op,) = our_ops(core.read_model(ir))
    assert op.get_attributes()["coordinate_mode"] == "LEGACY" and op.get_attributes()["pool_mode"] == "MAX_ONNX"
    feeds = inputs()
    assert_close(run_ov(core, ir, feeds)[0], run_ort(path, feeds))
