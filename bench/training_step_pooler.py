#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""The poolers' time inside a training step of torchvision's Faster or Mask R-CNN: roialign against torchvision.

Two copies of one model (ResNet-50 FPN, weights=None, seeded, train mode, synthetic targets on two images), one
with torchvision's poolers and one after roialign.nn.replace_poolers, run a forward and backward in turn, --rounds
times each, at --threads of torch's threads. Each pooler call is timed inside the step (time.perf_counter): its
forward by a clock around the call, its backward between two identity autograd functions around it, on its maps
and on its result, whose backwards autograd runs just before and just after the pooler's (they are its only
neighbours in the graph, and autograd runs the ready node created last first). Both models see the same weights
and seed every round, so the same proposals; there is no optimizer step. Prints each round, then the medians and
torchvision's median over roialign's (the --warmup rounds left out: a process's first calls allocate).

  python -I bench/training_step_pooler.py --model maskrcnn --rounds 5 [--min-size 800 --max-size 1333]

The defaults are torchvision's training sizes (800 x 1333, 512 sampled RoIs per image); smaller --min-size and
--max-size make a step faster but pool the same number of RoIs from smaller maps. Needs roialign's torch ops.
"""
import argparse
import copy
import statistics
import time

import torch
import torchvision

import roialign.nn as rnn

BUILDERS = {"fasterrcnn": torchvision.models.detection.fasterrcnn_resnet50_fpn,
            "maskrcnn": torchvision.models.detection.maskrcnn_resnet50_fpn}


class _Clock(torch.autograd.Function):
    """The identity; its backward appends the time to `stamps`."""

    @staticmethod
    def forward(ctx, stamps, *tensors):
        ctx.stamps = stamps
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        ctx.stamps.append(time.perf_counter())
        return (None,) + grads


class TimedPooler(torch.nn.Module):
    """A pooler whose forward and backward times, per call, go to `forward_s` and `backward_s`."""

    def __init__(self, pooler):
        super().__init__()
        self.pooler = pooler
        self.forward_s, self.backward_s, self._stamps = [], [], []

    def forward(self, x, boxes, image_shapes):
        names = [k for k in x if k in self.pooler.featmap_names]
        maps = _Clock.apply(self._stamps, *[x[k] for k in names])  # its backward runs after the pooler's
        start = time.perf_counter()
        result = self.pooler(dict(zip(names, maps)), boxes, image_shapes)
        self.forward_s.append(time.perf_counter() - start)
        (result,) = _Clock.apply(self._stamps, result)  # its backward runs before the pooler's
        return result

    def collect(self):
        """Pairs the stamps of the last backward into a backward time."""
        assert len(self._stamps) == 2, self._stamps
        self.backward_s.append(self._stamps[1] - self._stamps[0])
        self._stamps.clear()


def poolers(model):
    heads = model.roi_heads
    names = ["box_roi_pool"] + (["mask_roi_pool"] if heads.has_mask() else [])
    for name in names:
        setattr(heads, name, TimedPooler(getattr(heads, name)))
    return {name: getattr(heads, name) for name in names}


def batch(name, generator):
    images = [torch.rand(3, 600, 800, generator=generator), torch.rand(3, 640, 760, generator=generator)]
    targets = []
    for image in images:
        h, w = image.shape[1:]
        n = 6
        corner = torch.rand(n, 2, generator=generator) * torch.tensor([w * 0.6, h * 0.6])
        size = torch.rand(n, 2, generator=generator) * torch.tensor([w * 0.4, h * 0.4]) + 16
        boxes = torch.cat([corner, corner + size], dim=1)
        target = {"boxes": boxes, "labels": torch.randint(1, 4, (n,), generator=generator)}
        if name == "maskrcnn":
            masks = torch.zeros(n, h, w, dtype=torch.uint8)
            for i, (x1, y1, x2, y2) in enumerate(boxes.round().long().tolist()):
                masks[i, y1:y2, x1:x2] = 1
            target["masks"] = masks
        targets.append(target)
    return images, targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(BUILDERS), default="maskrcnn")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="rounds run first and left out of the medians")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min-size", type=int, default=800)
    parser.add_argument("--max-size", type=int, default=1333)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    theirs = BUILDERS[args.model](weights=None, weights_backbone=None, num_classes=4, min_size=args.min_size,
                                  max_size=args.max_size).train()
    ours = rnn.replace_poolers(copy.deepcopy(theirs))
    models = {"torchvision": (theirs, poolers(theirs)), "roialign": (ours, poolers(ours))}
    images, targets = batch(args.model, torch.Generator().manual_seed(1))
    print("torch %s, torchvision %s, %s, %d thread(s), min_size %d, max_size %d" % (
        torch.__version__, torchvision.__version__, args.model, args.threads, args.min_size, args.max_size))

    for r in range(args.warmup + args.rounds):
        for label, (model, timed) in models.items():
            torch.manual_seed(r)
            model.zero_grad(set_to_none=True)
            start = time.perf_counter()
            losses = model(images, targets)
            sum(losses.values()).backward()
            step_s = time.perf_counter() - start
            parts = []
            for name, pooler in timed.items():
                pooler.collect()
                parts.append("%s %.1f + %.1f ms" % (name, 1e3 * pooler.forward_s[-1], 1e3 * pooler.backward_s[-1]))
            print("%s %d %-11s step %.2f s; forward + backward: %s" % (
                "warm-up" if r < args.warmup else "round", r, label, step_s, ", ".join(parts)), flush=True)

    print("medians over %d rounds after %d warm-up (ms), and torchvision / roialign:" % (args.rounds, args.warmup))
    w = args.warmup
    for name in models["roialign"][1]:
        medians = {}
        for label, (_, timed) in models.items():
            f, b = timed[name].forward_s[w:], timed[name].backward_s[w:]
            medians[label] = [1e3 * statistics.median(f), 1e3 * statistics.median(b),
                              1e3 * statistics.median([x + y for x, y in zip(f, b)])]
        t, o = medians["torchvision"], medians["roialign"]
        print("  %-13s forward %8.1f vs %6.1f (%.1fx)  backward %8.1f vs %6.1f (%.1fx)  both %8.1f vs %6.1f (%.1fx)"
              % (name, t[0], o[0], t[0] / o[0], t[1], o[1], t[1] / o[1], t[2], o[2], t[2] / o[2]))
        tv, ra = models["torchvision"][1][name], models["roialign"][1][name]
        ratios = [(f + b) / (g + c) for f, b, g, c in zip(tv.forward_s[w:], tv.backward_s[w:], ra.forward_s[w:],
                                                           ra.backward_s[w:])]
        print("  %-13s per-round ratios of forward + backward: %s" % ("", " ".join("%.1f" % x for x in ratios)))


if __name__ == "__main__":
    main()
