# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign.multi_scale_roi_align (docs/multi-level.md) against torchvision's MultiScaleRoIAlign (Debian's) and,
where it is importable, OpenVINO's ExperimentalDetectronROIFeatureExtractor with the OpenVINO rule.

OpenVINO is looked up as installed, then in the repository's .peers (appended to sys.path, so Debian's numpy stays
the one imported). Tolerance: docs/semantics.md#accuracy.
"""
import os
import sys

import numpy as np
import pytest

import roialign

from conftest import needs_torch, torch, torchvision_ops

MultiScaleRoIAlign = getattr(torchvision_ops, "MultiScaleRoIAlign", None)
SCALES = [1 / 4, 1 / 8, 1 / 16, 1 / 32]


def _openvino():
    peers = os.path.join(os.path.dirname(__file__), "..", "..", ".peers")
    try:
        import openvino  # noqa: F401
    except ImportError:
        if not os.path.isdir(peers):
            return None
        sys.path.append(os.path.abspath(peers))
        try:
            import openvino  # noqa: F401
        except Exception:
            return None
    import openvino
    return openvino


def assert_close(got, ref, tol_abs=1e-5, tol_rel=1e-4):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape
    err = np.abs(got - ref)
    bad = ~(err <= tol_abs + tol_rel * np.abs(ref))
    assert not bad.any(), "max abs err %g at %s" % (np.nanmax(err), np.argwhere(bad)[0])


def pyramid(rng, n, c, image_h, image_w):
    """P2-P5 maps of an image_h x image_w image, NCHW float32 in [-1, 1]."""
    return [rng.uniform(-1, 1, (n, c, int(image_h * s), int(image_w * s))).astype(np.float32) for s in SCALES]


def boxes_log_uniform(rng, k, image_h, image_w, lo=8.0, hi=600.0):
    w = np.exp(rng.uniform(np.log(lo), np.log(hi), k))
    h = w * rng.uniform(0.5, 1.5, k)
    x1 = rng.uniform(-0.05, 1.0, k) * image_w
    y1 = rng.uniform(-0.05, 1.0, k) * image_h
    return np.stack([x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


@needs_torch
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("sampling_ratio", [2, -1])
def test_matches_torchvision_multiscale(layout, sampling_ratio):
    rng = np.random.default_rng(7)
    image_h, image_w = 256, 384
    maps = pyramid(rng, 2, 19, image_h, image_w)
    boxes = [torch.from_numpy(boxes_log_uniform(rng, k, image_h, image_w)) for k in (40, 25)]
    boxes[0][3] = torch.tensor([30.0, 30.0, 30.0, 30.0])  # zero area: torchvision's finest level
    names = ["p%d" % (i + 2) for i in range(4)]
    features = {name: torch.from_numpy(m) for name, m in zip(names, maps)}
    ref = MultiScaleRoIAlign(names, 7, sampling_ratio)(features, boxes, [(image_h, image_w)] * 2)
    tensors = [torch.from_numpy(m) for m in maps]
    if layout == "NHWC":
        tensors = [t.contiguous(memory_format=torch.channels_last) for t in tensors]
    got = roialign.multi_scale_roi_align(tensors, boxes, 7, SCALES, sampling_ratio, layout=layout, num_threads=2)
    assert got.shape == ref.shape
    assert_close(got.numpy(), ref.numpy())
    # numpy in, the [K, 5] form of the boxes, the same result
    rois = np.concatenate([np.concatenate([np.full((len(b), 1), i, np.float32), b.numpy()], 1)
                           for i, b in enumerate(boxes)])
    arrays = maps if layout == "NCHW" else [np.ascontiguousarray(m.transpose(0, 2, 3, 1)) for m in maps]
    got_np = roialign.multi_scale_roi_align(arrays, rois, 7, SCALES, sampling_ratio, layout=layout)
    if layout == "NHWC":
        got_np = got_np.transpose(0, 3, 1, 2)
    assert_close(got_np, ref.numpy())


@needs_torch
def test_canonical_scale_and_level_and_clamped_levels():
    rng = np.random.default_rng(3)
    image_h, image_w = 128, 128
    maps = pyramid(rng, 1, 5, image_h, image_w)
    # tiny and huge boxes: levels clamped to P2 and P5
    b = np.array([[1, 1, 2, 2], [0, 0, 127, 127], [10, 10, 4000, 4000], [5, 5, 40, 20]], np.float32)
    names = ["a", "b", "c", "d"]
    features = {n: torch.from_numpy(m) for n, m in zip(names, maps)}
    for canonical_scale, canonical_level in [(224, 4), (64, 3), (32, 5)]:
        ref = MultiScaleRoIAlign(names, 3, 2, canonical_scale=canonical_scale, canonical_level=canonical_level)(
            features, [torch.from_numpy(b)], [(image_h, image_w)])
        got = roialign.multi_scale_roi_align([torch.from_numpy(m) for m in maps], [torch.from_numpy(b)], 3, SCALES,
                                             2, canonical_scale=canonical_scale, canonical_level=canonical_level)
        assert_close(got.numpy(), ref.numpy())


@needs_torch
@pytest.mark.parametrize("scales,pooled", [
    ([1 / 32, 1 / 32], 8),       # k 5..5: every box on the first map
    ([1 / 4, 1 / 16], 4),        # k 2..4: the boxes of k = 4 (sides from 224 on) have index 2, no map
    ([1 / 4, 1 / 8, 1 / 8], 8),  # k 2..3: the third map is never chosen
    ([1 / 8, 1 / 4], 0),         # k_min 3 > k_max 2: clamped to 2, index -1
])
def test_scale_rule_takes_any_powers_of_two_as_torchvision(scales, pooled):
    # torchvision's LevelMapper takes k_min and k_max from the first and last scales only: repeated scales
    # (MobileNet v3's FPN has two maps at stride 32), skipped levels and growing scales all pool, and a box whose level
    # names no map stays zero.
    rng = np.random.default_rng(5)
    image_h = image_w = 256
    maps = [rng.standard_normal((1, 3, int(image_h * s), int(image_w * s))).astype(np.float32) for s in scales]
    sides = np.array([2, 40, 112, 160, 224, 300, 448, 900], np.float32)
    b = np.stack([np.full_like(sides, 3), np.full_like(sides, 5), 3 + sides, 5 + sides], 1)
    names = [str(i) for i in range(len(scales))]
    ref = MultiScaleRoIAlign(names, 3, 2)({n: torch.from_numpy(m) for n, m in zip(names, maps)},
                                          [torch.from_numpy(b)], [(image_h, image_w)]).numpy()
    rois = np.concatenate([np.zeros((len(b), 1), np.float32), b], 1)
    got = roialign.multi_scale_roi_align(maps, rois, 3, scales, 2)  # the extension
    assert_close(got, ref)
    got = roialign.multi_scale_roi_align([torch.from_numpy(m) for m in maps], [torch.from_numpy(b)], 3, scales, 2)
    assert_close(got.numpy(), ref)
    nonzero = np.abs(got.numpy()).sum(axis=(1, 2, 3)) > 0
    assert nonzero.tolist() == [True] * pooled + [False] * (len(sides) - pooled)


def test_given_levels_and_refusals():
    rng = np.random.default_rng(4)
    maps = pyramid(rng, 1, 3, 64, 64)
    rois = np.array([[0, 1, 1, 30, 30], [0, 2, 2, 50, 60], [0, 0, 0, 10, 10]], np.float32)
    levels = np.array([3, 0, 1], np.int64)
    got = roialign.multi_scale_roi_align(maps, rois, 2, SCALES, 2, levels=levels)
    for k, l in enumerate(levels):
        ref = roialign.roi_align(maps[l], rois[k:k + 1], 2, SCALES[l], 2)
        np.testing.assert_array_equal(got[k:k + 1], ref)
    with pytest.raises(ValueError, match="roi 2: level 4 is outside"):
        roialign.multi_scale_roi_align(maps, rois, 2, SCALES, 2, levels=[0, 1, 4])
    with pytest.raises(ValueError, match="levels holds 2 values for 3 rois"):
        roialign.multi_scale_roi_align(maps, rois, 2, SCALES, 2, levels=[0, 1])
    with pytest.raises(ValueError, match="power-of-two"):
        roialign.multi_scale_roi_align(maps, rois, 2, [0.3, 0.15, 0.075, 0.0375])
    with pytest.raises(ValueError, match="spatial_scales has 3 values for 4 feature maps"):
        roialign.multi_scale_roi_align(maps, rois, 2, SCALES[:3])
    with pytest.raises(ValueError, match="levels share them"):
        roialign.multi_scale_roi_align([maps[0], maps[1][:, :2]] + maps[2:], rois, 2, SCALES)
    with pytest.raises(ValueError, match="number of levels must be 1 to 8"):
        roialign.multi_scale_roi_align([maps[0]] * 9, rois, 2, [0.25] * 9, levels=[0, 0, 0])


def _openvino_extractor(ov, maps, rois, output_size, sampling_ratio, aligned):
    from openvino.utils.node_factory import NodeFactory
    import openvino.opset1 as op1
    params = [op1.parameter(list(rois.shape), np.float32)] + [op1.parameter(list(m.shape), np.float32) for m in maps]
    node = NodeFactory("opset6").create(
        "ExperimentalDetectronROIFeatureExtractor", [p.output(0) for p in params],
        {"output_size": output_size, "sampling_ratio": sampling_ratio, "pyramid_scales": [4, 8, 16, 32],
         "aligned": aligned})
    # f32 also on CPUs with native bf16, where the CPU plugin would otherwise infer in bf16.
    compiled = ov.Core().compile_model(ov.Model([node.output(0)], params), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return compiled([rois] + list(maps))[0]


@pytest.mark.parametrize("sampling_ratio", [2, 0])
def test_matches_openvino_experimental_detectron_roi_feature_extractor(sampling_ratio):
    ov = _openvino()
    if ov is None:
        pytest.skip("openvino not importable (installed or in .peers)")
    rng = np.random.default_rng(11)
    image_h, image_w = 256, 320
    maps = pyramid(rng, 1, 8, image_h, image_w)
    boxes = boxes_log_uniform(rng, 60, image_h, image_w, 4.0, 700.0)
    boxes[5] = [20, 20, 20, 60]   # zero area: not pooled, zeros
    boxes[9] = [40, 40, 10, 10]   # both axes inverted: positive area, pooled
    boxes[12] = [40, 10, 10, 60]  # one axis inverted: negative area, zeros
    ref = _openvino_extractor(ov, maps, boxes, 7, sampling_ratio, False)
    got = roialign.multi_scale_roi_align(maps, [boxes], 7, SCALES, sampling_ratio, levels="openvino")
    assert not got[5].any() and not got[12].any()
    assert_close(got, ref)


def test_out_is_written_and_returned_and_untouched_on_error():
    rng = np.random.default_rng(5)
    maps = pyramid(rng, 1, 6, 96, 128)
    rois = np.concatenate([np.zeros((9, 1), np.float32), boxes_log_uniform(rng, 9, 96, 128)], 1)
    for layout in ("NCHW", "NHWC"):
        arrays = maps if layout == "NCHW" else [np.ascontiguousarray(m.transpose(0, 2, 3, 1)) for m in maps]
        ref = roialign.multi_scale_roi_align(arrays, rois, (3, 2), SCALES, 2, layout=layout)
        out = np.full(ref.shape, np.nan, np.float32)
        assert roialign.multi_scale_roi_align(arrays, rois, (3, 2), SCALES, 2, layout=layout, out=out) is out
        np.testing.assert_array_equal(out, ref)
        # A level outside the pyramid is found by the library after out was accepted: out stays as it was.
        sentinel = np.full(ref.shape, 7.0, np.float32)
        with pytest.raises(ValueError, match="level 4 is outside"):
            roialign.multi_scale_roi_align(arrays, rois, (3, 2), SCALES, 2, layout=layout, levels=[4] * 9,
                                           out=sentinel)
        assert (sentinel == 7.0).all()
    with pytest.raises(ValueError, match=r"out has shape \(9, 6, 2, 3\); expected \(9, 6, 3, 2\)"):
        roialign.multi_scale_roi_align(maps, rois, (3, 2), SCALES, 2, out=np.empty((9, 6, 2, 3), np.float32))
    with pytest.raises(TypeError, match="out has dtype float16; this kernel writes float32"):
        roialign.multi_scale_roi_align(maps, rois, (3, 2), SCALES, 2, out=np.empty((9, 6, 3, 2), np.float16))
    with pytest.raises(ValueError, match="out overlaps features"):
        roialign.multi_scale_roi_align(maps, rois, 1, SCALES, 2, out=maps[0].reshape(-1)[:9 * 6].reshape(9, 6, 1, 1))


@needs_torch
def test_out_tensor_in_channels_last_memory():
    rng = np.random.default_rng(6)
    maps = pyramid(rng, 1, 5, 64, 64)
    boxes = [torch.from_numpy(boxes_log_uniform(rng, 7, 64, 64))]
    tensors = [torch.from_numpy(m).contiguous(memory_format=torch.channels_last) for m in maps]
    ref = roialign.multi_scale_roi_align(tensors, boxes, 4, SCALES, 2, layout="NHWC")
    out = torch.full((7, 5, 4, 4), float("nan")).contiguous(memory_format=torch.channels_last)
    assert roialign.multi_scale_roi_align(tensors, boxes, 4, SCALES, 2, layout="NHWC", out=out) is out
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    with pytest.raises(ValueError, match="channels_last"):
        roialign.multi_scale_roi_align(tensors, boxes, 4, SCALES, 2, layout="NHWC", out=torch.empty((7, 5, 4, 4)))
