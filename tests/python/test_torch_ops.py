# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign's torch operators (engines/torch/) and modules (roialign.nn): results and gradients against torchvision,
shapes on the Meta device, the refused double backward, TorchScript (trace, script, save, load in a fresh process), torch.fx, ONNX export
run in ONNX Runtime, and torchvision's own detectors with their poolers replaced.

Needs the operator library: the package's own, or ROIALIGN_TORCH_LIBRARY (.ci/test.sh sets it to the build tree's).
ROIALIGN_REQUIRE_TORCH_OPS=1 (CI) turns a missing library into a failure instead of a skip.
"""
import copy
import importlib.util
import os
import subprocess
import sys
import textwrap
from collections import OrderedDict
from typing import Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

try:
    import roialign.nn as rnn
except ImportError as e:  # pragma: no cover - depends on the build
    if os.environ.get("ROIALIGN_REQUIRE_TORCH_OPS") == "1":
        raise
    pytest.skip("roialign's torch operators are not available (%s)" % e, allow_module_level=True)

# torchvision sums samples in another order: a few ulps per sample (docs/semantics.md).
ABS_TOL, REL_TOL = 1e-4, 1e-3


def close(a, b, atol=ABS_TOL, rtol=REL_TOL):
    assert a.shape == b.shape, (a.shape, b.shape)
    torch.testing.assert_close(a.float(), b.float(), atol=atol, rtol=rtol)


def boxes_on(generator, k, extent):
    b = torch.rand(k, 4, generator=generator) * extent
    b[:, 2:] += b[:, :2] + 1
    return b


def rois_on(generator, k, extent, batch=2):
    return torch.cat([torch.randint(0, batch, (k, 1), generator=generator).float(),
                      boxes_on(generator, k, extent)], dim=1)


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(7)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_roi_align_matches_torchvision(gen, aligned, layout):
    x = torch.randn(2, 16, 40, 48, generator=gen)
    rois = rois_on(gen, 30, 180)
    ours = torch.ops.roialign.roi_align(x, rois, 0.25, 7, 6, 2, aligned, layout=layout)
    close(ours, torchvision.ops.roi_align(x, rois, (7, 6), 0.25, 2, aligned))
    if layout == "NHWC":
        assert ours.is_contiguous(memory_format=torch.channels_last)
    # The module, with torchvision's list-of-boxes form.
    boxes = [rois[rois[:, 0] == i, 1:] for i in range(2)]
    module = rnn.RoIAlign((7, 6), 0.25, 2, aligned, layout=layout)
    close(module(x, boxes), torchvision.ops.RoIAlign((7, 6), 0.25, 2, aligned)(x, boxes))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_maps(gen, dtype):
    x = torch.randn(1, 24, 30, 30, generator=gen)
    rois = rois_on(gen, 12, 100, batch=1)
    ours = torch.ops.roialign.roi_align(x.to(dtype), rois, 0.25, 7, 7, 2, True)
    assert ours.dtype == dtype
    close(ours, torchvision.ops.roi_align(x.to(dtype).float(), rois, 7, 0.25, 2, True), atol=2e-2, rtol=2e-2)


def test_refusals_are_errors_with_reasons(gen):
    x = torch.randn(1, 4, 10, 10, generator=gen)
    with pytest.raises(RuntimeError, match="unknown layout 'NCWH'"):
        torch.ops.roialign.roi_align(x, torch.tensor([[0, 1.0, 1, 5, 5]]), 1.0, 2, 2, layout="NCWH")
    with pytest.raises(RuntimeError, match="batch index 3 is outside"):
        torch.ops.roialign.roi_align(x, torch.tensor([[3, 1.0, 1, 5, 5]]), 1.0, 2, 2)
    with pytest.raises(RuntimeError, match=r"rois must be \[K, 5\]"):
        torch.ops.roialign.roi_align(x, torch.ones(3, 4), 1.0, 2, 2)
    with pytest.raises(RuntimeError, match="float32, float16, bfloat16 and float64"):
        torch.ops.roialign.roi_align(x.int(), torch.tensor([[0, 1.0, 1, 5, 5]]), 1.0, 2, 2)
    # float64 maps and their RoI and scale in double: test_float64.py; other dtypes on every path too.


def fpn_features(gen, channels=8, batch=2):
    return OrderedDict([("0", torch.randn(batch, channels, 64, 80, generator=gen)),
                        ("1", torch.randn(batch, channels, 32, 40, generator=gen)),
                        ("2", torch.randn(batch, channels, 16, 20, generator=gen)),
                        ("3", torch.randn(batch, channels, 8, 10, generator=gen)),
                        ("pool", torch.randn(batch, channels, 4, 5, generator=gen))])


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_multi_scale_matches_torchvision(gen, layout):
    feats = fpn_features(gen)
    boxes = [boxes_on(gen, 20, 200), boxes_on(gen, 15, 250), boxes_on(gen, 0, 10)][:2]
    shapes = [(250, 320), (256, 300)]  # scales inferred: 64 / 256 rounds to 1/4
    ours = rnn.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2, layout=layout)(feats, boxes, shapes)
    theirs = torchvision.ops.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)(feats, boxes, shapes)
    close(ours, theirs)


def test_meta_kernels_give_shapes_without_data(gen):
    x = torch.empty(2, 16, 40, 48, device="meta")
    out = torch.ops.roialign.roi_align(x, torch.empty(9, 5, device="meta"), 0.25, 7, 5, 2, True, layout="NHWC")
    assert out.device.type == "meta" and tuple(out.shape) == (9, 16, 7, 5)
    assert out.is_contiguous(memory_format=torch.channels_last)
    feats = [torch.empty(2, 8, 32, 32, device="meta"), torch.empty(2, 8, 16, 16, device="meta")]
    out = torch.ops.roialign.multi_scale_roi_align(feats, torch.empty(4, 5, device="meta"), [0.25, 0.125], 3, 3)
    assert out.device.type == "meta" and tuple(out.shape) == (4, 8, 3, 3)


# ---- Gradients (the backward ops and autograd; the package's functions: test_backward.py) ----

def leaf(t, layout="NCHW"):
    """A leaf tensor that requires grad, channels_last for NHWC."""
    t = t.detach().clone()
    if layout == "NHWC":
        t = t.contiguous(memory_format=torch.channels_last)
    return t.requires_grad_()


def grad_of(fn, inputs, dy):
    """d sum(fn(*inputs) * dy) / d inputs."""
    return torch.autograd.grad((fn(*inputs) * dy).sum(), inputs)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("aligned", [False, True])
def test_autograd_matches_torchvision(gen, layout, aligned):
    x = torch.randn(2, 16, 40, 48, generator=gen)
    rois = rois_on(gen, 30, 180)
    dy = torch.randn(30, 16, 7, 6, generator=gen)
    ours, = grad_of(lambda a: torch.ops.roialign.roi_align(a, rois, 0.25, 7, 6, 2, aligned, layout=layout),
                    [leaf(x, layout)], dy)
    theirs, = grad_of(lambda a: torchvision.ops.roi_align(a, rois, (7, 6), 0.25, 2, aligned), [leaf(x)], dy)
    assert ours.shape == x.shape and ours.dtype == x.dtype
    assert ours.is_contiguous(memory_format=torch.channels_last if layout == "NHWC" else torch.contiguous_format)
    close(ours, theirs)


def test_the_boxes_get_no_gradient(gen):
    x, rois = torch.randn(1, 4, 10, 10, generator=gen), torch.tensor([[0, 1.0, 1, 8, 8]], requires_grad=True)
    y = torch.ops.roialign.roi_align(x, rois, 1.0, 2, 2)  # only the boxes require grad: a graph, no gradient
    assert y.requires_grad
    y.sum().backward()
    assert rois.grad is None
    xl = leaf(x)
    torch.ops.roialign.multi_scale_roi_align([xl], rois, [1.0], 2, 2).sum().backward()
    assert rois.grad is None and xl.grad is not None
    with torch.no_grad():
        assert not torch.ops.roialign.roi_align(xl, rois, 1.0, 2, 2).requires_grad
    with torch.inference_mode():
        assert torch.ops.roialign.roi_align(xl, rois, 1.0, 2, 2).shape == (1, 4, 2, 2)


@pytest.mark.parametrize("pool", ["MAX", "MAX_ONNX"])
def test_max_modes_backward_op_is_autograds(gen, pool):
    # The op autograd runs is roi_align_backward with the forward's arguments (its values: test_backward.py).
    x, rois = torch.randn(2, 8, 20, 24, generator=gen), rois_on(gen, 9, 90)
    dy = torch.randn(9, 8, 3, 3, generator=gen)
    got, = grad_of(lambda a: torch.ops.roialign.roi_align(a, rois, 0.5, 3, 3, 2, True, pool_mode=pool), [leaf(x)], dy)
    direct = torch.ops.roialign.roi_align_backward(dy, x, rois, 0.5, 3, 3, 2, True, pool_mode=pool)
    assert torch.equal(got, direct)
    assert (got != 0).sum() <= 9 * 8 * 9 * 4 * 4  # one sample's four taps per bin at most


def test_double_backward_is_refused(gen):
    x, rois = torch.randn(1, 4, 10, 10, generator=gen), torch.tensor([[0, 1.0, 1, 8, 8]])
    xl = leaf(x)
    dx, = torch.autograd.grad(torch.ops.roialign.roi_align(xl, rois, 1.0, 2, 2).pow(2).sum(), xl, create_graph=True)
    with pytest.raises(RuntimeError, match="double backwards on roialign::roi_align not supported"):
        dx.sum().backward()
    dx, = torch.autograd.grad(torch.ops.roialign.multi_scale_roi_align([xl], rois, [1.0], 2, 2).pow(2).sum(), xl,
                              create_graph=True)
    with pytest.raises(RuntimeError, match="double backwards on roialign::multi_scale_roi_align not supported"):
        dx.sum().backward()


def test_backward_ops_refuse_bad_gradients(gen):
    x, rois = torch.randn(1, 4, 10, 10, generator=gen), torch.tensor([[0, 1.0, 1, 8, 8]])
    with pytest.raises(RuntimeError, match=r"grad has shape \[1, 4, 3, 2\]; the forward's result is \[1, 4, 2, 2\]"):
        torch.ops.roialign.roi_align_backward(torch.ones(1, 4, 3, 2), x, rois, 1.0, 2, 2)
    with pytest.raises(RuntimeError, match="grad has dtype Half, the map Float"):
        torch.ops.roialign.roi_align_backward(torch.ones(1, 4, 2, 2, dtype=torch.half), x, rois, 1.0, 2, 2)
    with pytest.raises(RuntimeError, match="batch index 3 is outside"):
        torch.ops.roialign.roi_align_backward(torch.ones(1, 4, 2, 2), x, rois + 3 * (torch.arange(5) == 0), 1.0, 2, 2)
    with pytest.raises(RuntimeError, match="grad has shape"):
        torch.ops.roialign.multi_scale_roi_align_backward(torch.ones(2, 4, 2, 2), [x], rois, [1.0], 2, 2)


def test_backward_meta_kernels_give_the_maps_shapes(gen):
    x = torch.empty(2, 16, 40, 48, device="meta").contiguous(memory_format=torch.channels_last)
    dx = torch.ops.roialign.roi_align_backward(torch.empty(9, 16, 7, 5, device="meta"), x,
                                               torch.empty(9, 5, device="meta"), 0.25, 7, 5, 2, True, layout="NHWC")
    assert dx.device.type == "meta" and dx.shape == x.shape and dx.is_contiguous(memory_format=torch.channels_last)
    feats = [torch.empty(2, 8, 32, 32, device="meta"), torch.empty(2, 8, 16, 16, device="meta")]
    dxs = torch.ops.roialign.multi_scale_roi_align_backward(torch.empty(4, 8, 3, 3, device="meta"), feats,
                                                            torch.empty(4, 5, device="meta"), [0.25, 0.125], 3, 3)
    assert [d.shape for d in dxs] == [f.shape for f in feats] and all(d.device.type == "meta" for d in dxs)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_multi_scale_gradient_is_each_levels_single_level_gradient(gen, layout):
    # Each RoI's gradient goes to the level its forward pooled from: the multi-level gradient of a level is the
    # single-level op's gradient over that level's RoIs (a level no RoI chose gets zeros).
    feats = [leaf(f, layout) for f in list(fpn_features(gen).values())[:4]]
    scales = [1 / 4, 1 / 8, 1 / 16, 1 / 32]
    rois = torch.cat([rois_on(gen, 25, 200), torch.tensor([[1, 0, 0, 500, 500.0]])])  # the last: the coarsest level
    dy = torch.randn(26, 8, 7, 7, generator=gen)
    ours = grad_of(lambda *f: torch.ops.roialign.multi_scale_roi_align(list(f), rois, scales, 7, 7, 2, True,
                                                                        layout=layout), feats, dy)
    area = (rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2])
    level = torch.floor(4 + torch.log2(torch.sqrt(area) / 224) + 1e-6).clamp(2, 5).long() - 2
    for lvl, f in enumerate(feats):
        pick = level == lvl
        ref, = grad_of(lambda a: torch.ops.roialign.roi_align(a, rois[pick], scales[lvl], 7, 7, 2, True,
                                                              layout=layout), [leaf(f, layout)], dy[pick])
        close(ours[lvl], ref)
    assert (level == 3).sum() == 1 and (ours[3] != 0).any()


def test_thread_count_does_not_change_gradient_bits(gen):
    x = leaf(torch.randn(2, 32, 50, 50, generator=gen))
    rois = rois_on(gen, 64, 190)
    feats = [leaf(f) for f in list(fpn_features(gen).values())[:4]]
    frois = rois_on(gen, 40, 250)
    dy, fdy = torch.randn(64, 32, 7, 7, generator=gen), torch.randn(40, 8, 7, 7, generator=gen)
    threads = torch.get_num_threads()
    got = []
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            got.append(grad_of(lambda a: torch.ops.roialign.roi_align(a, rois, 0.25, 7, 7, 0, True), [x], dy)
                       + grad_of(lambda *f: torch.ops.roialign.multi_scale_roi_align(
                           list(f), frois, [1 / 4, 1 / 8, 1 / 16, 1 / 32], 7, 7, 2, False), feats, fdy))
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(a, b) for a, b in zip(*got))


def test_modules_train_as_torchvisions_do(gen):
    # loss.backward() through roialign.nn's modules: the maps get torchvision's gradients, in both layouts.
    x = torch.randn(2, 8, 40, 48, generator=gen)
    boxes = [boxes_on(gen, 12, 150), boxes_on(gen, 7, 150)]
    feats = fpn_features(gen)
    fboxes, shapes = [boxes_on(gen, 20, 200), boxes_on(gen, 15, 250)], [(250, 320), (256, 300)]
    names = ["0", "1", "2", "3"]
    theirs_x = leaf(x)
    theirs_f = OrderedDict((k, leaf(v)) for k, v in feats.items())
    (torchvision.ops.RoIAlign(5, 0.25, 2, True)(theirs_x, boxes).square().sum()
     + torchvision.ops.MultiScaleRoIAlign(names, 7, 2)(theirs_f, fboxes, shapes).square().sum()).backward()
    for layout in ("NCHW", "NHWC"):
        ours_x = leaf(x, layout)
        ours_f = OrderedDict((k, leaf(v, layout)) for k, v in feats.items())
        pooled = rnn.RoIAlign(5, 0.25, 2, True, layout=layout)(ours_x, boxes)
        multi = rnn.MultiScaleRoIAlign(names, 7, 2, layout=layout)(ours_f, fboxes, shapes)
        loss = pooled.square().sum() + multi.square().sum()
        loss.backward()
        close(ours_x.grad, theirs_x.grad)
        for k in names:
            close(ours_f[k].grad, theirs_f[k].grad)
        assert ours_f["pool"].grad is None  # not pooled, as in torchvision


def test_scripted_modules_train(gen):
    x = torch.randn(2, 8, 40, 48, generator=gen)
    boxes = [boxes_on(gen, 12, 150), boxes_on(gen, 7, 150)]
    scripted = torch.jit.script(rnn.RoIAlign(5, 0.25, 2, True))
    a, b = leaf(x), leaf(x)
    scripted(a, boxes).square().sum().backward()
    rnn.RoIAlign(5, 0.25, 2, True)(b, boxes).square().sum().backward()
    assert torch.equal(a.grad, b.grad)


def test_thread_count_does_not_change_bits(gen):
    x = torch.randn(2, 32, 50, 50, generator=gen)
    rois = rois_on(gen, 64, 190)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = torch.ops.roialign.roi_align(x, rois, 0.25, 7, 7, 0, True)
        torch.set_num_threads(2)
        two = torch.ops.roialign.roi_align(x, rois, 0.25, 7, 7, 0, True)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, two)


def test_large_results_reuse_the_blocks_of_dead_ones(gen):
    # 400 RoIs x 64 channels x 7 x 7 floats: 5 MB, above the 4 MiB from which results come from the pool.
    x = torch.randn(2, 64, 40, 40, generator=gen)
    rois, other = rois_on(gen, 400, 150), rois_on(gen, 390, 150)
    torch.ops.roialign.empty_cache()
    first = torch.ops.roialign.roi_align(x, rois, 0.25, 7, 7, 2, True)
    address = first.data_ptr()
    alive = torch.ops.roialign.roi_align(x, other, 0.25, 7, 7, 2, True)
    assert alive.data_ptr() != address  # a live result's memory is never handed out
    del first
    reused = torch.ops.roialign.roi_align(x, other, 0.25, 7, 7, 2, True)
    assert reused.data_ptr() == address
    assert torch.equal(reused, alive)
    close(reused, torchvision.ops.roi_align(x, other, 7, 0.25, 2, True))
    grown = reused.clone()
    reused.resize_(2 * reused.numel())  # like torch.empty's memory: a resize moves it to torch's allocator
    assert reused.data_ptr() != address and torch.equal(reused[:grown.numel()].view_as(grown), grown)
    del reused
    nhwc = torch.ops.roialign.roi_align(x.contiguous(memory_format=torch.channels_last), rois, 0.25, 7, 7, 2, True,
                                        layout="NHWC")
    assert nhwc.is_contiguous(memory_format=torch.channels_last) and nhwc.data_ptr() == address
    close(nhwc, torchvision.ops.roi_align(x, rois, 7, 0.25, 2, True))
    del nhwc
    torch.ops.roialign.empty_cache()
    small = torch.ops.roialign.roi_align(x, rois[:10], 0.25, 7, 7, 2, True)  # below the pool's threshold
    close(small, torchvision.ops.roi_align(x, rois[:10], 7, 0.25, 2, True))


def test_package_functions_go_through_the_operators(gen):
    # roialign.roi_align and multi_scale_roi_align on tensors call the operators: traced, they pool the RoIs they
    # are given; an input that requires grad gets the operator's gradient.
    import roialign

    x, rois = torch.randn(2, 8, 40, 48, generator=gen), rois_on(gen, 12, 180)
    traced = torch.jit.trace(lambda a, b: roialign.roi_align(a, b, 7, 0.25, 2, True), (x, rois))
    assert "roialign::roi_align" in str(traced.graph)
    other = rois_on(gen, 20, 180)
    assert torch.equal(traced(x, other), torch.ops.roialign.roi_align(x, other, 0.25, 7, 7, 2, True))
    xl = leaf(x)
    roialign.roi_align(xl, rois, 7, 0.25, 2, True).sum().backward()
    ref = leaf(x)
    torchvision.ops.roi_align(ref, rois, 7, 0.25, 2, True).sum().backward()
    close(xl.grad, ref.grad)

    feats = list(fpn_features(gen).values())[:4]
    scales = [1 / 4, 1 / 8, 1 / 16, 1 / 32]

    def pyramid(f0, f1, f2, f3, b0, b1):
        return roialign.multi_scale_roi_align([f0, f1, f2, f3], [b0, b1], 7, scales, 2)

    traced = torch.jit.trace(pyramid, tuple(feats) + (boxes_on(gen, 10, 200), boxes_on(gen, 6, 250)))
    assert "roialign::multi_scale_roi_align" in str(traced.graph)
    boxes = [boxes_on(gen, 25, 250), boxes_on(gen, 3, 250)]
    got = traced(*feats, *boxes)
    assert torch.equal(got, pyramid(*feats, *boxes))
    theirs = torchvision.ops.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)
    close(got, theirs(OrderedDict(zip("0123", feats)), boxes, [(256, 320), (256, 320)]))
    with pytest.raises(ValueError, match="batch index 2 is outside"):  # the library's refusal, as ValueError
        roialign.roi_align(x, torch.tensor([[2, 1.0, 1, 5, 5]]), 7, 0.25)


def test_the_package_ships_the_operators():
    # The Python package stage of .ci/test.sh: pip install . built libroialign_torch.so into the package, and
    # `import torch, roialign` registers it with no environment variable.
    if os.environ.get("ROIALIGN_REQUIRE_PACKAGED_TORCH_OPS") != "1":
        pytest.skip("ROIALIGN_REQUIRE_PACKAGED_TORCH_OPS is not set (the ops may come from a build tree)")
    import roialign
    from roialign import _torch_ops

    assert "ROIALIGN_TORCH_LIBRARY" not in os.environ
    assert os.path.dirname(_torch_ops.library_path()) == os.path.dirname(roialign.__file__)
    script = "import torch, roialign; print(torch.ops.roialign.roi_align.default.name())"
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "roialign::roi_align", run.stderr


class Pooler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.single = rnn.RoIAlign(5, 0.25, 2, True)
        self.multi = rnn.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)

    def forward(self, x, rois, feats: Dict[str, torch.Tensor], boxes: List[torch.Tensor],
                shapes: List[Tuple[int, int]]):
        return self.single(x, rois), self.multi(feats, boxes, shapes)


def saved_data(inputs, expected, types):
    """A scripted module holding a forward's arguments (``inputs``), its eager results (``expected``) and the thread
    count they were computed with, for LibTorch to load (engines/torch/load_scripted.cc). ``types``: the
    TorchScript types of the two."""

    class Data(torch.nn.Module):
        __annotations__ = {"inputs": types[0], "expected": types[1], "threads": int}

        def __init__(self):
            super().__init__()
            self.inputs, self.expected, self.threads = inputs, expected, torch.get_num_threads()

        def forward(self) -> int:
            return 0

    return torch.jit.script(Data())


LOAD_AND_COMPARE = textwrap.dedent("""
    import sys, torch
    import roialign  # after torch: registers the operators
    if sys.argv[4] == "1":
        import torchvision  # registers torchvision's operators (a detector calls torchvision::nms)
    module = torch.jit.load(sys.argv[1])
    inputs, eager = torch.load(sys.argv[2])
    torch.set_num_threads(int(sys.argv[3]))
    with torch.no_grad():
        got = module(*inputs)
    flat = lambda v: [t for x in v for t in flat(x)] if isinstance(v, (list, tuple)) else [v]
    got, eager = flat(got), flat(eager)
    assert len(got) == len(eager) > 0, (len(got), len(eager))
    for a, b in zip(got, eager):
        assert a.shape == b.shape and torch.equal(a, b), (a.shape, b.shape)
    print("ok")
""")


def torchvision_op_libraries():
    """The files a LibTorch program loads for torchvision's operators: torchvision's library (_C, or _C_stable since
    torchvision builds it on LibTorch's stable ABI, 0.29 from PyPI), after the libraries of torch's lib/ that it
    needs and the loader does not link (a CUDA wheel's is linked against libtorch_cuda and libc10_cuda, which a
    Python process has loaded with torch)."""
    from roialign import _torch_ops

    for name in ("torchvision._C", "torchvision._C_stable"):
        spec = importlib.util.find_spec(name)
        if spec is not None:
            torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
            needed = (_torch_ops._elf_dynamic(spec.origin) or ([], None))[0]
            first = [os.path.join(torch_lib, n) for n in needed if os.path.exists(os.path.join(torch_lib, n))]
            return first + [spec.origin]
    pytest.fail("torchvision has no operator library (_C or _C_stable) to load in LibTorch")


def check_deployments(scripted, inputs, eager, types, tmp_path, torchvision_ops=False):
    """Saves ``scripted``; loads it in a fresh Python process and in LibTorch (ROIALIGN_TORCH_LOADER), each run on
    ``inputs``, and checks both give ``eager`` bit for bit. ``torchvision_ops``: the model also calls torchvision's
    operators, which both load first (LibTorch: torchvision's own library, which needs no Python)."""
    model, data = str(tmp_path / "model.pt"), str(tmp_path / "data.pt")
    scripted.save(model)
    torch.save((inputs, eager), data)
    run = subprocess.run([sys.executable, "-c", LOAD_AND_COMPARE, model, data, str(torch.get_num_threads()),
                          "1" if torchvision_ops else "0"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    loader = os.environ.get("ROIALIGN_TORCH_LOADER")
    if not loader:
        if os.environ.get("ROIALIGN_REQUIRE_TORCH_OPS") == "1":
            pytest.fail("ROIALIGN_TORCH_LOADER (roialign_torch_load_scripted) is not set")
        return
    saved_data(inputs, eager, types).save(str(tmp_path / "cpp_data.pt"))
    libraries = torchvision_op_libraries() if torchvision_ops else []
    run = subprocess.run([loader, model, str(tmp_path / "cpp_data.pt")] + libraries, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("ok"), run.stderr


def pooler_inputs(gen, k):
    return (torch.randn(2, 8, 40, 40, generator=gen), rois_on(gen, k, 150), fpn_features(gen),
            [boxes_on(gen, k, 200), boxes_on(gen, k + 3, 220)], [(256, 320), (256, 320)])


def test_trace_pools_the_given_rois_not_the_traced_ones(gen):
    module = rnn.RoIAlign(5, 0.25, 2, True)
    traced_on = (torch.randn(2, 8, 40, 40, generator=gen), rois_on(gen, 6, 150))
    traced = torch.jit.trace(module, traced_on)
    other = (torch.randn(2, 8, 40, 40, generator=gen), rois_on(gen, 11, 150))
    assert torch.equal(traced(*other), module(*other))
    assert "roialign::roi_align" in str(traced.graph)


def test_script_save_and_load_in_a_fresh_process(gen, tmp_path):
    scripted = torch.jit.script(Pooler())
    inputs = pooler_inputs(gen, 9)
    eager = Pooler()(*inputs)
    for a, b in zip(scripted(*inputs), eager):
        assert torch.equal(a, b)
    inputs = pooler_inputs(gen, 14)  # the deployments run on other inputs than the scripted model's first run
    types = (Tuple[torch.Tensor, torch.Tensor, Dict[str, torch.Tensor], List[torch.Tensor], List[Tuple[int, int]]],
             Tuple[torch.Tensor, torch.Tensor])
    check_deployments(scripted, inputs, Pooler()(*inputs), types, tmp_path)


def test_fx_sees_one_node():
    graph = torch.fx.symbolic_trace(rnn.RoIAlign(7, 0.25, 2)).graph
    calls = [n for n in graph.nodes if n.op == "call_function"]
    assert len(calls) == 1 and "roialign.roi_align" in str(calls[0].target)


# onnx and onnxruntime come from ROIALIGN_PEERS_PATH (.peers/), which must come first on the path: in this process
# torch has already imported Debian's older typing_extensions, so they run in a process of their own. Arguments: the
# model, its inputs (.npz), and where to save ONNX Runtime's and OpenVINO's outputs; prints the RoiAlign nodes.
ONNX_RUNNER = textwrap.dedent("""
    import json, os, sys
    for p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
        sys.path.insert(0, p)
    import numpy as np, onnx, onnxruntime as ort
    model = onnx.load(sys.argv[1])
    nodes = [{"op": n.op_type, "attributes": {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}}
             for n in model.graph.node if n.op_type == "RoiAlign"]
    session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
    feeds = dict(np.load(sys.argv[2]))
    (out,) = session.run(None, feeds)
    np.save(sys.argv[3], out)
    extension = os.environ.get("ROIALIGN_OPENVINO_EXTENSION")
    if extension:  # OpenVINO with roialign's extension, which maps ONNX RoiAlign to roialign's op
        import openvino as ov
        core = ov.Core()
        core.add_extension(extension)
        model = core.read_model(sys.argv[1])
        assert any(op.get_type_name() == "RoialignRoiAlign" for op in model.get_ops()), "not our op"
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        np.save(sys.argv[4], compiled(feeds)[0])
    print(json.dumps(nodes, default=lambda v: v.decode() if isinstance(v, bytes) else str(v)))
""")


def run_onnx(path, feeds, tmp_path):
    """(the RoiAlign nodes of the model at path, ONNX Runtime's output, OpenVINO's output or None) on feeds."""
    import json

    import numpy as np

    files = [str(tmp_path / n) for n in ("feeds.npz", "ort.npy", "openvino.npy")]
    np.savez(files[0], **{name: t.numpy() for name, t in feeds.items()})
    run = subprocess.run([sys.executable, "-c", ONNX_RUNNER, path] + files, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    nodes = json.loads(run.stdout.strip().splitlines()[-1])
    openvino = None
    if os.environ.get("ROIALIGN_OPENVINO_EXTENSION"):
        openvino = torch.from_numpy(np.load(files[2]))
    elif os.environ.get("ROIALIGN_REQUIRE_TORCH_OPS") == "1":
        pytest.fail("ROIALIGN_OPENVINO_EXTENSION is not set: the export is not checked in OpenVINO")
    return nodes, torch.from_numpy(np.load(files[1])), openvino


def onnx_export(*args, **kwargs):
    """torch.onnx.export by the TorchScript exporter, which the symbolics of roialign._torch_ops serve (torch 2.x's
    default is its dynamo exporter: dynamo=False picks the other)."""
    import inspect

    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(*args, **kwargs)


@pytest.mark.parametrize("aligned", [False, True])
def test_onnx_export_runs_in_onnxruntime(gen, tmp_path, aligned):
    if not os.environ.get("ROIALIGN_PEERS_PATH"):
        pytest.skip("ROIALIGN_PEERS_PATH (onnx, onnxruntime) is not set")
    module = rnn.RoIAlign(7, 0.25, 0, aligned)
    x, rois = torch.randn(2, 8, 40, 48, generator=gen), rois_on(gen, 10, 180)
    path = str(tmp_path / "roi_align.onnx")
    onnx_export(module, (x, rois), path, opset_version=16, input_names=["x", "rois"],
                dynamic_axes={"rois": {0: "k"}})
    other = rois_on(gen, 17, 180)  # another RoI count than the export's
    nodes, ort, openvino = run_onnx(path, {"x": x, "rois": other}, tmp_path)
    assert len(nodes) == 1, nodes
    attributes = nodes[0]["attributes"]
    assert attributes["coordinate_transformation_mode"] == ("half_pixel" if aligned else "output_half_pixel")
    assert attributes["mode"] == "avg" and attributes["output_height"] == 7 and attributes["sampling_ratio"] == 0
    ours = module(x, other)
    close(ours, ort)
    if openvino is not None:
        close(ours, openvino)


class PyramidPooler(torch.nn.Module):
    """Two images' boxes pooled from four FPN levels (512x640 images), by roialign.nn.MultiScaleRoIAlign (SCALE), or
    by the op itself with the OPENVINO rule."""

    def __init__(self, rule: str):
        super().__init__()
        self.rule = rule
        self.pool = rnn.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)

    def forward(self, p2, p3, p4, p5, boxes0, boxes1):
        if self.rule == "SCALE":
            return self.pool({"0": p2, "1": p3, "2": p4, "3": p5, "pool": p5}, [boxes0, boxes1], [(512, 640)] * 2)
        rois = torch.cat([torch.cat([torch.zeros_like(boxes0[:, :1]), boxes0], 1),
                          torch.cat([torch.ones_like(boxes1[:, :1]), boxes1], 1)])
        return torch.ops.roialign.multi_scale_roi_align([p2, p3, p4, p5], rois, [0.25, 0.125, 0.0625, 0.03125], 7, 7,
                                                        2, True, level_rule="OPENVINO")


@pytest.mark.parametrize("rule", ["SCALE", "OPENVINO"])
def test_multi_scale_onnx_export_runs_in_onnxruntime(gen, tmp_path, rule):
    if not os.environ.get("ROIALIGN_PEERS_PATH"):
        pytest.skip("ROIALIGN_PEERS_PATH (onnx, onnxruntime) is not set")
    maps = [torch.randn(2, 8, 128 // 2 ** i, 160 // 2 ** i, generator=gen) for i in range(4)]

    def boxes(k, largest):
        b = boxes_on(gen, k, 500)
        b[:, 2:] = b[:, :2] + torch.rand(k, 2, generator=gen) ** 2 * largest + 0.5
        b[0, 2:] = b[0, :2]  # no area: the finest level (SCALE), not pooled (OPENVINO)
        return b

    module = PyramidPooler(rule).eval()
    names = ["p2", "p3", "p4", "p5", "boxes0", "boxes1"]
    path = str(tmp_path / "pyramid.onnx")
    onnx_export(module, tuple(maps) + (boxes(12, 600), boxes(9, 600)), path, opset_version=16,
                input_names=names, dynamic_axes={"boxes0": {0: "k0"}, "boxes1": {0: "k1"}})
    # Other boxes and counts than the export's: boxes on every level, then on the finer two only (empty levels).
    for largest, levels in ((1200, {0, 1, 2, 3}), (200, {0, 1})):
        other = tuple(maps) + (boxes(23, largest), boxes(14, largest))
        sides = torch.cat(other[4:])
        area = (sides[:, 2] - sides[:, 0]) * (sides[:, 3] - sides[:, 1])
        assert set((4 + torch.log2(area.sqrt() / 224) + 1e-6).floor().clamp(2, 5).int().tolist()) == \
            {level + 2 for level in levels}
        nodes, ort, openvino = run_onnx(path, dict(zip(names, other)), tmp_path)
        assert len(nodes) == 4 and [n["attributes"]["spatial_scale"] for n in nodes] == [0.25, 0.125, 0.0625, 0.03125]
        with torch.no_grad():
            ours = module(*other)
        assert ours.shape == (37, 8, 7, 7)
        close(ours, ort)
        if openvino is not None:
            close(ours, openvino)


def detector(name):
    builders = {"fasterrcnn": torchvision.models.detection.fasterrcnn_resnet50_fpn,
                "maskrcnn": torchvision.models.detection.maskrcnn_resnet50_fpn}
    torch.manual_seed(0)
    # Small images and few proposals keep each forward within a second or two; every pooler call still runs.
    model = builders[name](weights=None, weights_backbone=None, min_size=192, max_size=256,
                           rpn_pre_nms_top_n_test=300, rpn_post_nms_top_n_test=120, box_score_thresh=0.0,
                           box_detections_per_img=30)
    return model.eval()


class Detections(torch.nn.Module):
    """A scripted detector's detections as one list of tensors (per image: boxes, scores, labels[, masks])."""

    def __init__(self, scripted, keys: List[str]):
        super().__init__()
        self.model = scripted
        self.keys = keys

    def forward(self, images: List[torch.Tensor]) -> List[torch.Tensor]:
        _, detections = self.model(images)
        out: List[torch.Tensor] = []
        for d in detections:
            for key in self.keys:
                out.append(d[key])
        return out


class BoxBranch(torch.nn.Module):
    """A detector's box branch: the pooler, the box head and the predictor, for images of fixed sizes.

    torch.jit.trace of a whole torchvision detector does not hold on other images, whatever the pooler: torchvision
    keeps Python values of the traced images as constants (with its own MultiScaleRoIAlign too, the trace returned
    boxes up to 197 px off on another image of the same size). This part of it traces."""

    def __init__(self, roi_heads, image_shapes: List[Tuple[int, int]]):
        super().__init__()
        self.pool, self.head, self.predictor = roi_heads.box_roi_pool, roi_heads.box_head, roi_heads.box_predictor
        self.image_shapes = image_shapes

    def forward(self, features: Dict[str, torch.Tensor], proposals: List[torch.Tensor]):
        return self.predictor(self.head(self.pool(features, proposals, self.image_shapes)))


def pooler_calls(model, images):
    """The (features, proposals, image_shapes) of every call of the model's box pooler in one forward."""
    calls = []
    hook = model.roi_heads.box_roi_pool.register_forward_pre_hook(lambda m, args: calls.append(args))
    with torch.no_grad():
        model(images)
    hook.remove()
    return calls


@pytest.mark.parametrize("name", ["fasterrcnn", "maskrcnn"])
def test_detectors_with_replaced_poolers(gen, name, tmp_path):
    images = [torch.rand(3, 180, 240, generator=gen), torch.rand(3, 200, 200, generator=gen)]
    other_images = [torch.rand(3, 210, 160, generator=gen), torch.rand(3, 190, 250, generator=gen)]
    theirs = detector(name)
    ours = rnn.replace_poolers(detector(name))
    pools = [m for m in ours.modules() if isinstance(m, rnn.MultiScaleRoIAlign)]
    assert len(pools) == (2 if name == "maskrcnn" else 1)
    assert not any(isinstance(m, torchvision.ops.MultiScaleRoIAlign) for m in ours.modules())
    with torch.no_grad():
        expected, got = theirs(images), ours(images)
        scripted = torch.jit.script(ours)
        _, scripted_got = scripted(images)
        expected_other, other_got = theirs(other_images), ours(other_images)
        _, scripted_other = scripted(other_images)
        # torchvision's own detector, scripted: the reference for ours scripted. On torch 2.15 torchvision's
        # scripted detector gave other detections than its eager one on the 200 x 200 image, with its own pooler;
        # on torch 1.13 they agree bit for bit.
        _, scripted_theirs = torch.jit.script(theirs)(images)
        _, scripted_theirs_other = torch.jit.script(theirs)(other_images)

    def assert_matches(g, e):
        assert e["boxes"].shape == g["boxes"].shape and e["boxes"].shape[0] > 0
        torch.testing.assert_close(g["boxes"], e["boxes"], atol=1e-3, rtol=0)
        torch.testing.assert_close(g["scores"], e["scores"], atol=1e-4, rtol=0)
        assert torch.equal(g["labels"], e["labels"])
        if "masks" in e:
            torch.testing.assert_close(g["masks"], e["masks"], atol=1e-3, rtol=0)

    # On the first images and on others (other sizes): eager against eager and scripted against scripted, ours
    # against torchvision's; and ours scripted bit for bit ours eager wherever torchvision's scripted detector gives
    # its eager one's bits.
    pairs = list(zip(expected, got, scripted_theirs, scripted_got)) + \
        list(zip(expected_other, other_got, scripted_theirs_other, scripted_other))
    for e, g, st, sg in pairs:
        assert_matches(g, e)
        assert_matches(sg, st)
        if all(torch.equal(st[key], e[key]) for key in e):
            for key in g:
                assert torch.equal(sg[key], g[key]), key

    # The scripted detector saved, then loaded in a fresh process and in LibTorch, on the other images: the results
    # of the scripted model in this process.
    keys = ["boxes", "scores", "labels"] + (["masks"] if name == "maskrcnn" else [])
    flat = [d[key] for d in scripted_other for key in keys]
    check_deployments(torch.jit.script(Detections(scripted, keys)), (other_images,), flat,
                      (Tuple[List[torch.Tensor]], List[torch.Tensor]), tmp_path, torchvision_ops=True)

    # The box branch traced on one pair of images, run on the pooler inputs of another pair of the same sizes.
    (traced_on,) = pooler_calls(ours, images)
    (other,) = pooler_calls(ours, [torch.rand(i.shape, generator=gen) for i in images])
    assert [p.shape[0] for p in other[1]] != [p.shape[0] for p in traced_on[1]] or not torch.equal(
        other[1][0], traced_on[1][0])
    branch = BoxBranch(ours.roi_heads, list(traced_on[2]))
    with torch.no_grad():
        traced = torch.jit.trace(branch, (traced_on[0], traced_on[1]), strict=False)
        assert "roialign::multi_scale_roi_align" in str(traced.inlined_graph)
        for a, b in zip(traced(other[0], other[1]), branch(other[0], other[1])):
            assert torch.equal(a, b)


# ---- A library for another torch is refused at import, for module and functional users alike ----

IMPORT_AND_CALL = textwrap.dedent("""
    import sys
    import roialign  # before torch: the numpy path needs no operators
    import torch
    x, rois = torch.rand(1, 2, 8, 8), torch.tensor([[0, 1.0, 1, 6, 6]])
    for what in sys.argv[1:]:
        try:
            if what == "functional":
                roialign.roi_align(x, rois, 2)
            else:
                import roialign.nn
            print(what, "ok")
        except ImportError as e:
            print(what, "ImportError", e)
""")


_FIX_HINT = "pip install --force-reinstall --no-deps"


def library_with_recorded_release(tmp_path, source, release):
    """A copy of the operator library at ``source`` whose recorded LibTorch release reads ``release`` (of the same
    length as the one recorded: the bytes are overwritten in place)."""
    from roialign import _torch_ops

    data = bytearray(open(source, "rb").read())
    marker = _torch_ops._BUILT_WITH + _torch_ops.built_with(source).encode() + b"\0"
    if len(release) + len(_torch_ops._BUILT_WITH) + 1 != len(marker):
        pytest.skip("the library records %r, not as long as %r" % (marker, release))
    at = data.index(marker)
    data[at:at + len(marker)] = _torch_ops._BUILT_WITH + release.encode() + b"\0"
    path = tmp_path / "libroialign_torch.so"
    path.write_bytes(bytes(data))
    return str(path)


def import_with_library(path, *what):
    env = dict(os.environ, ROIALIGN_TORCH_LIBRARY=path)
    run = subprocess.run([sys.executable, "-c", IMPORT_AND_CALL] + list(what), capture_output=True, text=True,
                         env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip().splitlines()


def test_the_library_records_the_torch_it_was_built_for():
    from roialign import _torch_ops

    release = _torch_ops._release(torch.__version__)
    assert _torch_ops.built_with(_torch_ops.library_path()) == release


def test_the_library_links_the_libtorch_that_torch_runs_on():
    # ldd resolves the library's LibTorch on its own, outside this process: each of its libc10 and libtorch_cpu must
    # be the very file this torch has mapped (a pip torch's on a machine with Debian's libtorch-dev too).
    from roialign import _torch_ops

    running = _torch_ops._mapped_libtorch()
    assert running and len(running) == 2, running  # one libc10 and one libtorch_cpu, torch's own
    lines = subprocess.run(["ldd", _torch_ops.library_path()], capture_output=True, text=True, check=True).stdout
    linked = {}
    for line in lines.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if _torch_ops._LIBTORCH_FILE.search(name):
            linked[name] = os.path.realpath(rest.split(" (")[0])
    assert len(linked) == 2 and set(linked.values()) == running, (linked, running)


def test_a_library_built_for_another_torch_is_an_import_error(tmp_path):
    from roialign import _torch_ops

    running = _torch_ops._release(torch.__version__)
    other = ("9" if running[0] != "9" else "8") + running[1:]
    path = library_with_recorded_release(tmp_path, _torch_ops.library_path(), other)
    lines = import_with_library(path, "functional", "module")
    assert len(lines) == 2
    for line, what in zip(lines, ["functional", "module"]):
        # Both kinds of user get the same error: no fallback for one and a failure for the other.
        assert line.startswith(what + " ImportError"), line
        assert "built for torch %s, but torch %s is running" % (other, torch.__version__) in line, line
        assert _FIX_HINT in line, line


def test_a_library_linked_against_another_libtorch_is_an_import_error(tmp_path):
    # ROIALIGN_MISMATCHED_TORCH_LIBRARY: an operator library built against another LibTorch (.ci/test.sh: Debian's
    # 1.13 build in the torch 2.x stage). Its recorded release is rewritten to the running one, as a build that
    # named one torch and linked another would record it: then it must still be refused, with both releases named.
    mismatched = os.environ.get("ROIALIGN_MISMATCHED_TORCH_LIBRARY")
    if not mismatched:
        pytest.skip("ROIALIGN_MISMATCHED_TORCH_LIBRARY (a library built against another LibTorch) is not set")
    from roialign import _torch_ops

    running = _torch_ops._release(torch.__version__)
    assert _torch_ops.built_with(mismatched) != running
    lines = import_with_library(mismatched, "module")
    assert lines[0].startswith("module ImportError") and "built for torch %s, but torch %s is running" % (
        _torch_ops.built_with(mismatched), torch.__version__) in lines[0], lines
    path = library_with_recorded_release(tmp_path, mismatched, running)
    (line,) = import_with_library(path, "module")
    assert line.startswith("module ImportError"), line
    # Refused before loading (loading it would start a second LibTorch, which can crash the process): the
    # LibTorch files it needs are not the ones this torch runs on.
    assert "but the library links another LibTorch" in line and running in line and _FIX_HINT in line, line


# ---- torch 2.x tooling: torch.compile, torch.export, torch.fx ----

needs_compile = pytest.mark.skipif(not hasattr(torch, "compile"), reason="torch.compile is torch 2.x's")
needs_export = pytest.mark.skipif(not hasattr(torch, "export"), reason="torch.export is torch 2.x's")


class PoolBoth(torch.nn.Module):
    """Both operators in one model, with the boxes as a [K, 5] tensor and as a list per image."""

    def __init__(self):
        super().__init__()
        self.single = rnn.RoIAlign(5, 0.25, 2, True)
        self.nhwc = rnn.RoIAlign(3, 0.25, 2, False, layout="NHWC")
        self.multi = rnn.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)

    def forward(self, x, rois, f0, f1, f2, f3, b0, b1):
        feats = {"0": f0, "1": f1, "2": f2, "3": f3}
        return self.single(x, rois), self.nhwc(x, rois), self.multi(feats, [b0, b1], [(256, 320), (256, 320)])


def both_inputs(gen, k):
    feats = fpn_features(gen)
    return (torch.randn(2, 8, 40, 40, generator=gen), rois_on(gen, k, 150), feats["0"], feats["1"], feats["2"],
            feats["3"], boxes_on(gen, k, 200), boxes_on(gen, k + 3, 220))


def assert_all_equal(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and torch.equal(g, e)


@needs_compile
def test_compile_fullgraph_has_no_graph_break_and_gives_eager_results(gen):
    model = PoolBoth().eval()
    inputs = both_inputs(gen, 9)
    explained = torch._dynamo.explain(model)(*inputs)
    assert explained.graph_break_count == 0 and explained.graph_count == 1, explained
    ops = [str(n.target) for g in explained.graphs for n in g.graph.nodes if n.op == "call_function"]
    assert sum("roialign.roi_align" in o for o in ops) == 2 and sum("multi_scale_roi_align" in o for o in ops) == 1
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, dynamic=True)
    with torch.no_grad():
        for k in (9, 17):  # the Meta kernels take a symbolic RoI count: one graph serves both
            inputs = both_inputs(gen, k)
            assert_all_equal(compiled(*inputs), model(*inputs))


@needs_compile
def test_compile_trains_with_eager_gradients(gen):
    # AOTAutograd traces the Autograd kernels' backward through the backward ops' Meta kernels: the compiled
    # training step gives eager's gradients, for the single- and the multi-level op in both layouts.
    model = PoolBoth()
    inputs = both_inputs(gen, 9)
    differentiable = [0, 2, 3, 4, 5]  # the maps

    def step(fn):
        leaves = [leaf(t) if i in differentiable else t for i, t in enumerate(inputs)]
        sum(o.square().sum() for o in fn(*leaves)).backward()
        return [leaves[i].grad for i in differentiable]

    torch._dynamo.reset()
    assert_all_equal(step(torch.compile(model, fullgraph=True)), step(model))


@needs_export
def test_export_runs_and_gives_eager_results(gen):
    model = PoolBoth().eval()
    inputs = both_inputs(gen, 9)
    k, k0, k1 = torch.export.Dim("k", min=2), torch.export.Dim("k0", min=2), torch.export.Dim("k1", min=2)
    dynamic = (None, {0: k}, None, None, None, None, {0: k0}, {0: k1})
    exported = torch.export.export(model, inputs, dynamic_shapes=dynamic)
    targets = [str(n.target) for n in exported.graph.nodes if n.op == "call_function"]
    assert any("roialign.roi_align" in t for t in targets) and any("multi_scale_roi_align" in t for t in targets)
    with torch.no_grad():
        for k in (9, 23):  # on the traced RoI counts and on others
            inputs = both_inputs(gen, k)
            assert_all_equal(exported.module()(*inputs), model(*inputs))


class BackboneAndPooler(torch.nn.Module):
    """Two maps of a small backbone pooled by a torchvision-shaped pooler, for torch.fx's tools."""

    def __init__(self, pooler):
        super().__init__()
        self.body = torch.nn.Conv2d(3, 8, 3, stride=4, padding=1)
        self.down = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.pooler = pooler

    def forward(self, images, b0, b1):
        f0 = self.body(images)
        feats = OrderedDict([("0", f0), ("1", self.down(f0))])
        return self.pooler(feats, [b0, b1], [(128, 160), (128, 160)])


def test_fx_traces_multi_scale_roi_align_as_torchvision_does(gen):
    from torchvision.models.feature_extraction import create_feature_extractor, get_graph_node_names

    torch.manual_seed(3)
    model = BackboneAndPooler(torchvision.ops.MultiScaleRoIAlign(["0", "1"], 5, 2)).eval()
    theirs = get_graph_node_names(model)
    rnn.replace_poolers(model)
    assert isinstance(model.pooler, rnn.MultiScaleRoIAlign)
    # Without leaf_modules: the pooler's inner function is one node. torchvision's own pooler is one of the modules
    # that get_graph_node_names takes as leaves (those of torchvision.ops); ours is traced into its one call.
    ours = get_graph_node_names(model)
    expected = [name if name != "pooler" else "pooler._multi_scale_roi_align" for name in theirs[1]]
    assert ours[0] == ours[1] == expected, (ours, theirs)
    inputs = (torch.randn(2, 3, 128, 160, generator=gen), boxes_on(gen, 6, 120), boxes_on(gen, 4, 120))
    extractor = create_feature_extractor(model, return_nodes={"pooler": "pooled", "down": "map"})
    with torch.no_grad():
        got, eager = extractor(*inputs), model(*inputs)
    assert torch.equal(got["pooled"], eager)
    graph = torch.fx.symbolic_trace(model).graph
    assert any("_multi_scale_roi_align" in str(n.target) for n in graph.nodes if n.op == "call_function")


def test_replaced_poolers_of_mobilenet_fpn_with_two_maps_of_one_stride(gen):
    # fasterrcnn_mobilenet_v3_large_fpn pools '0' and '1', both at stride 32: scales [1/32, 1/32], which torchvision's
    # LevelMapper takes as k_min = k_max = 5.
    def build():
        torch.manual_seed(0)
        return torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
            weights=None, weights_backbone=None, min_size=224, max_size=288, rpn_pre_nms_top_n_test=200,
            rpn_post_nms_top_n_test=100, box_score_thresh=0.0, box_detections_per_img=30).eval()

    images = [torch.rand(3, 200, 240, generator=gen), torch.rand(3, 230, 200, generator=gen)]
    theirs, ours = build(), rnn.replace_poolers(build())
    assert isinstance(ours.roi_heads.box_roi_pool, rnn.MultiScaleRoIAlign)
    (call,) = pooler_calls(ours, images)
    shapes = [tuple(f.shape[-2:]) for name, f in call[0].items() if name in ("0", "1")]
    assert shapes[0] == shapes[1]  # two maps of one stride
    with torch.no_grad():
        expected, got = theirs(images), ours(images)
    for e, g in zip(expected, got):
        assert e["boxes"].shape == g["boxes"].shape and e["boxes"].shape[0] > 0
        torch.testing.assert_close(g["boxes"], e["boxes"], atol=1e-3, rtol=0)
        torch.testing.assert_close(g["scores"], e["scores"], atol=1e-4, rtol=0)
        assert torch.equal(g["labels"], e["labels"])



# The detection builders that test_detectors_with_replaced_poolers and the MobileNet test above do not build, with
# the number of poolers replace_poolers must replace in each. All exist in torchvision 0.14 (Debian's) and later.
OTHER_BUILDERS = {
    "fasterrcnn_resnet50_fpn_v2": 1,
    "fasterrcnn_mobilenet_v3_large_320_fpn": 1,
    "maskrcnn_resnet50_fpn_v2": 2,
    "keypointrcnn_resnet50_fpn": 2,
}


@pytest.mark.parametrize("name", sorted(OTHER_BUILDERS))
def test_replaced_poolers_of_the_other_detection_builders(gen, name):
    torch.manual_seed(0)
    # Small images, few proposals and detections keep the heads cheap (Keypoint R-CNN's runs eight 512-channel
    # convolutions on each detection); every pooler still runs.
    theirs = getattr(torchvision.models.detection, name)(
        weights=None, weights_backbone=None, min_size=128, max_size=160, rpn_pre_nms_top_n_test=60,
        rpn_post_nms_top_n_test=30, box_score_thresh=0.0, box_detections_per_img=2).eval()
    tv_poolers = [m for m in theirs.modules() if isinstance(m, torchvision.ops.MultiScaleRoIAlign)]
    for m in tv_poolers:
        m.canonical_scale = 56  # boxes of these images (< 160 px) then reach P2 to P5, not only P2 and P3
    ours = rnn.replace_poolers(copy.deepcopy(theirs))
    names = [n for n in ("box_roi_pool", "mask_roi_pool", "keypoint_roi_pool")
             if getattr(theirs.roi_heads, n) is not None]
    assert len(names) == OTHER_BUILDERS[name]
    assert all(isinstance(getattr(ours.roi_heads, n), rnn.MultiScaleRoIAlign) for n in names)
    assert not any(isinstance(m, (torchvision.ops.MultiScaleRoIAlign, torchvision.ops.RoIAlign))
                   for m in ours.modules())
    calls = []  # (pooler name, inputs, result) of each call of our poolers
    for n in names:
        getattr(ours.roi_heads, n).register_forward_hook(
            lambda m, args, out, n=n: calls.append((n, args, out)))
    images = [torch.rand(3, 128, 160, generator=gen), torch.rand(3, 150, 140, generator=gen)]
    with torch.no_grad():
        expected, got = theirs(images), ours(images)
        # Each of our pooler calls against torchvision's pooler on the same inputs (the mask and keypoint poolers
        # get the detections, which differ between the two models within the tolerance below).
        assert [c[0] for c in calls] == names
        for n, args, out in calls:
            close(out, getattr(theirs.roi_heads, n)(*args))
    # torchvision's rule sent the box pooler's RoIs to every level its scales give.
    box_pooler, box_rois = theirs.roi_heads.box_roi_pool, calls[0][1][1]
    reached = set(box_pooler.map_levels(box_rois).tolist())
    assert len(reached) == len(box_pooler.scales) or len(set(box_pooler.scales)) == 1, reached
    for e, g in zip(expected, got):
        assert sorted(g) == sorted(e)
        assert e["boxes"].shape == g["boxes"].shape and e["boxes"].shape[0] > 0
        torch.testing.assert_close(g["boxes"], e["boxes"], atol=1e-3, rtol=0)
        torch.testing.assert_close(g["scores"], e["scores"], atol=1e-4, rtol=0)
        assert torch.equal(g["labels"], e["labels"])
        if "masks" in e:  # mask probabilities, pasted into the image
            torch.testing.assert_close(g["masks"], e["masks"], atol=1e-3, rtol=0)
        if "keypoints" in e:  # from the heatmaps' maxima
            torch.testing.assert_close(g["keypoints"], e["keypoints"], atol=1e-2, rtol=0)
            torch.testing.assert_close(g["keypoints_scores"], e["keypoints_scores"], atol=1e-3, rtol=0)
