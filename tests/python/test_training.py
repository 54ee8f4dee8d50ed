# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""A real training step: torchvision's Faster and Mask R-CNN (ResNet-50 FPN, untrained, seeded) in train mode on
synthetic targets, with roialign's poolers (roialign.nn.replace_poolers) against torchvision's own, over a few SGD
steps; and the same steps bit for bit with roialign's poolers at 1 and 2 threads.

Needs the operator library; ROIALIGN_REQUIRE_TORCH_OPS=1 (.ci/test.sh) turns its absence into a failure.
"""
import copy
import os

import pytest

from conftest import torch

if torch is None:
    pytest.skip("torch/torchvision not importable", allow_module_level=True)

import torchvision  # noqa: E402  (conftest imported it, or skipped above)

try:
    import roialign.nn as rnn
except ImportError as e:  # pragma: no cover - depends on the build
    if os.environ.get("ROIALIGN_REQUIRE_TORCH_OPS") == "1":
        raise
    pytest.skip("roialign's torch operators are not available (%s)" % e, allow_module_level=True)

STEPS = 2
# Everything before the poolers is computed by the same code on the same bits in both models; roialign's pooled
# values differ from torchvision's by float32 rounding (docs/semantics.md), and so, through the heads, do the losses.
LOSS_RTOL, LOSS_ATOL = 1e-5, 1e-6
# Each backbone parameter's gradient (relative error of its norm). Looser than rounding: a ReLU of the heads whose
# input is within rounding of zero can switch between the two models and move a RoI's gradient. The poolers' own
# gradients are held to DX_RTOL.
GRAD_RTOL = 2e-3
# Each pooler call of a step against torchvision's pooler on the same maps and boxes: the result
# (docs/semantics.md#accuracy), and the gradient to each map given the same dY (relative error of its norm).
POOL_RTOL, POOL_ATOL = 1e-4, 1e-5
DX_RTOL = 1e-5

BUILDERS = {"fasterrcnn": torchvision.models.detection.fasterrcnn_resnet50_fpn,
            "maskrcnn": torchvision.models.detection.maskrcnn_resnet50_fpn}


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    # torch's own CPU ops (convolutions, batch norm) round differently at other thread counts; every run here has
    # them at 1 thread, and only the poolers' thread count is varied (PoolerThreads).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def build(name):
    torch.manual_seed(0)
    # Small images, few proposals and sampled RoIs keep a step within seconds at 1 thread; every pooler still runs
    # forward and backward on both images and on two FPN levels.
    return BUILDERS[name](weights=None, weights_backbone=None, num_classes=4, min_size=128, max_size=192,
                          rpn_pre_nms_top_n_train=300, rpn_post_nms_top_n_train=100, rpn_batch_size_per_image=64,
                          box_batch_size_per_image=16).train()


def batch(name):
    """Two images of different sizes and their targets: 3 boxes each, the first large enough to be pooled from
    another FPN level than the others, and for Mask R-CNN a mask per box."""
    g = torch.Generator().manual_seed(1)
    images = [torch.rand(3, 150, 200, generator=g), torch.rand(3, 140, 190, generator=g)]
    targets = []
    for image in images:
        h, w = image.shape[1:]
        corner = torch.rand(3, 2, generator=g) * torch.tensor([w * 0.6, h * 0.6])
        size = torch.rand(3, 2, generator=g) * torch.tensor([w * 0.3, h * 0.3]) + 12
        boxes = torch.cat([corner, corner + size], dim=1)
        boxes[0] = torch.tensor([0.05 * w, 0.1 * h, 0.9 * w, 0.95 * h])
        target = {"boxes": boxes, "labels": torch.randint(1, 4, (3,), generator=g)}
        if name == "maskrcnn":
            masks = torch.zeros(3, h, w, dtype=torch.uint8)
            for i, (x1, y1, x2, y2) in enumerate(boxes.round().long().tolist()):
                masks[i, y1:y2, (x1 + x2) // 2:x2] = 1  # half the box: the mask is not the box
            target["masks"] = masks
        targets.append(target)
    return images, targets


class _SetThreads(torch.autograd.Function):
    """The identity on tensors; sets torch's intra-op threads to `forward` in the forward and `backward` in the
    backward, where it also appends the gradients it passes on to `grads` (if a list)."""

    @staticmethod
    def forward(ctx, forward, backward, grads, *tensors):
        torch.set_num_threads(forward)
        ctx.backward_threads, ctx.grads = backward, grads
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        torch.set_num_threads(ctx.backward_threads)
        if ctx.grads is not None:
            ctx.grads.append([g.clone() for g in grads])
        return (None, None, None) + grads


class PoolerThreads(torch.nn.Module):
    """Runs a pooler, forward and backward, at `threads` of torch's intra-op threads, and the rest at 1.

    Autograd runs the backward of the identity on the pooler's result just before the pooler's backward (it is
    the pooler's only consumer), and the backward of the identity on the maps just after (the pooler is their only
    consumer). Records, per call, the thread counts the pooler ran at, its inputs and result, the gradient it was
    given (dY) and the gradients it gave the maps (dX)."""

    def __init__(self, pooler, threads):
        super().__init__()
        self.pooler, self.threads = pooler, threads
        self.ran_at, self.calls, self.dy, self.dx = [], [], [], []

    def forward(self, x, boxes, image_shapes):
        names = [k for k in x if k in self.pooler.featmap_names]
        maps = _SetThreads.apply(self.threads, 1, self.dx, *[x[k] for k in names])
        self.ran_at.append(torch.get_num_threads())
        result = self.pooler(dict(zip(names, maps)), boxes, image_shapes)
        self.calls.append(({k: m.detach() for k, m in zip(names, maps)}, [b.detach().clone() for b in boxes],
                           list(image_shapes), result.detach()))
        if result.requires_grad:
            result.register_hook(self._record_dy)
        (result,) = _SetThreads.apply(1, self.threads, None, result)
        return result

    def _record_dy(self, grad):  # runs just before the pooler's backward
        self.ran_at.append(torch.get_num_threads())
        self.dy.append(grad.clone())


def with_roialign(model, threads):
    rnn.replace_poolers(model)
    heads = model.roi_heads
    names = ["box_roi_pool"] + (["mask_roi_pool"] if heads.has_mask() else [])
    for name in names:
        assert isinstance(getattr(heads, name), rnn.MultiScaleRoIAlign)
        setattr(heads, name, PoolerThreads(getattr(heads, name), threads))
    return model, [getattr(heads, n) for n in names]


def record_boxes(model):
    """torchvision's poolers, each recording the boxes of its calls as PoolerThreads does."""
    heads, poolers = model.roi_heads, []
    for name in ["box_roi_pool"] + (["mask_roi_pool"] if heads.has_mask() else []):
        pooler = getattr(heads, name)
        pooler.boxes = []
        pooler.register_forward_pre_hook(lambda m, args: m.boxes.append([b.detach().clone() for b in args[1]]))
        poolers.append(pooler)
    return poolers


def step(model, images, targets, seed):
    """One forward and backward in train mode; the loss terms and every parameter's gradient."""
    # The samplers of the RPN and of the RoI heads draw from torch's global generator (torch.randperm).
    torch.manual_seed(seed)
    model.zero_grad(set_to_none=True)
    losses = model(images, targets)
    sum(losses.values()).backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return {k: v.detach().clone() for k, v in losses.items()}, grads


def relative_error(got, ref):
    return float((got - ref).norm() / ref.norm().clamp_min(1e-30))


def check_pooler_call(pooler, call):
    """The pooler's result and its gradients to the maps in a step, against torchvision's pooler on the same maps,
    boxes and dY; returns how many maps got a gradient."""
    maps, boxes, image_shapes, result = pooler.calls[call]
    inner = pooler.pooler
    theirs = torchvision.ops.MultiScaleRoIAlign(inner.featmap_names, inner.output_size, inner.sampling_ratio)
    maps = {k: m.clone().requires_grad_() for k, m in maps.items()}
    expected = theirs(maps, boxes, image_shapes)
    torch.testing.assert_close(result, expected, rtol=POOL_RTOL, atol=POOL_ATOL)
    (expected * pooler.dy[call]).sum().backward()
    dx = pooler.dx[call]
    assert len(dx) == len(maps)
    for (name, m), got in zip(maps.items(), dx):
        assert bool(got.any()) == bool(m.grad.any()), name
        error = relative_error(got, m.grad) if m.grad.any() else 0.0
        assert error <= DX_RTOL, (name, error)
    return sum(int(m.grad.any()) for m in maps.values())


# The roialign model's losses and gradients per step, by model, for test_same_bits_at_1_and_2_pooler_threads.
_trajectories = {}


def train(name, threads, reference=None):
    """STEPS SGD steps of the model with roialign's poolers at `threads`; per step, its losses and gradients.

    With a `reference` (the same model with torchvision's poolers), checks each step against it: one trajectory,
    driven by roialign's gradients, and at every step torchvision's model gets its weights and the same seed. Two
    trajectories would part at the second step whatever the poolers: the untrained RPN's objectness scores are near
    ties, so weights that differ by rounding change which proposals survive its top-k and NMS (torchvision's own
    model pools other proposals at 2 threads than at 1)."""
    images, targets = batch(name)
    model, poolers = with_roialign(build(name), threads)
    reference_poolers = record_boxes(reference) if reference is not None else []
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    trajectory, levels = [], 0
    for s in range(STEPS):
        if reference is not None:
            reference.load_state_dict(model.state_dict())
            ref_losses, ref_grads = step(reference, images, targets, 100 + s)
        losses, grads = step(model, images, targets, 100 + s)
        trajectory.append((losses, grads))
        if reference is not None:
            # The same proposals, sampled the same way, reached the poolers of both models.
            for ours, theirs in zip(poolers, reference_poolers):
                assert len(ours.calls) == len(theirs.boxes) == s + 1
                assert len(ours.calls[s][1]) == len(theirs.boxes[s]) == 2
                for a, b in zip(ours.calls[s][1], theirs.boxes[s]):
                    assert torch.equal(a, b)
                levels = max(levels, check_pooler_call(ours, s))
            # The RPN's losses come before the poolers: the same bits.
            for k in ("loss_objectness", "loss_rpn_box_reg"):
                assert torch.equal(losses[k], ref_losses[k]), k
            assert losses.keys() == ref_losses.keys()
            for k in losses:
                torch.testing.assert_close(losses[k], ref_losses[k], rtol=LOSS_RTOL, atol=LOSS_ATOL, msg=k)
            assert grads.keys() == ref_grads.keys()
            backbone = [n for n in grads if n.startswith("backbone.")]
            assert len(backbone) > 100
            error, worst = max((relative_error(grads[n], ref_grads[n]), n) for n in backbone)
            assert error <= GRAD_RTOL, (s, worst, error)
        optimizer.step()
    if reference is not None:
        assert levels >= 2  # the boxes reached more than one FPN level
    for pooler in poolers:  # a forward and a backward per step
        assert pooler.ran_at == [threads] * (2 * STEPS)
    return trajectory


@pytest.mark.parametrize("name", ["fasterrcnn", "maskrcnn"])
def test_sgd_steps_match_torchvision(name):
    _trajectories[name] = train(name, threads=1, reference=build(name))


def test_same_bits_at_1_and_2_pooler_threads():
    # Mask R-CNN has both poolers (Faster R-CNN's box pooler and a mask pooler). Its steps with the poolers at 2
    # threads, forward and backward, and everything else at 1: the bits of its steps at 1 thread.
    name = "maskrcnn"
    expected = _trajectories.get(name) or train(name, threads=1)
    got = train(name, threads=2)
    for s in range(STEPS):
        (losses, grads), (expected_losses, expected_grads) = got[s], expected[s]
        assert losses.keys() == expected_losses.keys() and grads.keys() == expected_grads.keys()
        for k in losses:
            assert torch.equal(losses[k], expected_losses[k]), (s, k)
        for n in grads:
            assert torch.equal(grads[n], expected_grads[n]), (s, n)
