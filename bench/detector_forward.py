#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Whole forwards of torchvision's Faster R-CNN with torchvision's pooler and with roialign's, NCHW and channels_last.

One fasterrcnn_resnet50_fpn (weights=None, seeded, eval) in four variants:

  NCHW           torchvision's pooler | replace_poolers(model)
  channels_last  torchvision's pooler | replace_poolers(model, layout="NHWC")

where channels_last is the whole model after model.to(memory_format=torch.channels_last), so that the backbone and
the FPN hand the pooler channels_last maps (printed), which roialign's NHWC path reads in place and torchvision's
pooler converts. Each round runs one forward of every variant, in an order that reverses from round to round, so
that a busy neighbour slows all of them alike; the pooler's own time inside each forward comes from hooks on the box
pooler. Prints, per thread count, the median wall time of the forward and of the pooler over the rounds, and the
ratio of torchvision's to roialign's in each memory format. Detections of roialign's variants are checked against
torchvision's first.

  python -I bench/detector_forward.py [--rounds 5] [--threads 1,2] [--size 800] [--proposals 300]

Needs roialign's torch operators (the package's own, or ROIALIGN_TORCH_LIBRARY).
"""
import argparse
import copy
import statistics
import time

import torch
import torchvision

import roialign.nn as rnn


def build(size, proposals):
    torch.manual_seed(0)
    return torchvision.models.detection.fasterrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, min_size=size, max_size=size, rpn_pre_nms_top_n_test=2 * proposals,
        rpn_post_nms_top_n_test=proposals).eval()


class PoolerClock:
    """Wall time spent in a module's forward, summed over calls, from a pre-hook and a hook."""

    def __init__(self, module):
        self.seconds = 0.0
        self.started = 0.0
        self.formats = set()
        module.register_forward_pre_hook(self.start)
        module.register_forward_hook(self.stop)

    def start(self, module, args):
        maps = [v for k, v in args[0].items() if k in module.featmap_names]
        self.formats.update("channels_last" if m.is_contiguous(memory_format=torch.channels_last) and
                            not m.is_contiguous() else "NCHW" for m in maps)
        self.started = time.perf_counter()

    def stop(self, module, args, result):
        self.seconds += time.perf_counter() - self.started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--size", type=int, default=800, help="the image's side (min_size = max_size)")
    parser.add_argument("--proposals", type=int, default=300, help="RPN proposals kept per image (the pooler's RoIs)")
    args = parser.parse_args()

    base = build(args.size, args.proposals)
    channels_last = copy.deepcopy(base).to(memory_format=torch.channels_last)
    variants = {
        ("NCHW", "torchvision"): base,
        ("NCHW", "roialign"): rnn.replace_poolers(copy.deepcopy(base)),
        ("channels_last", "torchvision"): channels_last,
        ("channels_last", "roialign"): rnn.replace_poolers(copy.deepcopy(channels_last), layout="NHWC"),
    }
    clocks = {key: PoolerClock(model.roi_heads.box_roi_pool) for key, model in variants.items()}
    image = [torch.rand(3, args.size, args.size, generator=torch.Generator().manual_seed(1))]

    with torch.no_grad():
        detections = {key: model(image)[0] for key, model in variants.items()}
    for fmt in ("NCHW", "channels_last"):
        e, g = detections[(fmt, "torchvision")], detections[(fmt, "roialign")]
        assert e["boxes"].shape == g["boxes"].shape, (fmt, e["boxes"].shape, g["boxes"].shape)
        torch.testing.assert_close(g["boxes"], e["boxes"], atol=1e-2, rtol=0)
        torch.testing.assert_close(g["scores"], e["scores"], atol=1e-3, rtol=0)
    print("torch %s, torchvision %s; one %dx%d image, %d proposals; maps the pooler got: %s" % (
        torch.__version__, torchvision.__version__, args.size, args.size, args.proposals,
        ", ".join("%s %s: %s" % (k[0], k[1], "/".join(sorted(c.formats))) for k, c in clocks.items())))

    print("\n| threads | memory format | forward, torchvision ms | forward, roialign ms | x | pooler, torchvision ms "
          "| pooler, roialign ms | x |")
    print("|---|---|---|---|---|---|---|---|")
    keys = list(variants)
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        forward = {key: [] for key in keys}
        pooler = {key: [] for key in keys}
        with torch.no_grad():
            for r in range(args.rounds):
                for key in (keys if r % 2 == 0 else keys[::-1]):
                    clocks[key].seconds = 0.0
                    start = time.perf_counter()
                    variants[key](image)
                    forward[key].append(time.perf_counter() - start)
                    pooler[key].append(clocks[key].seconds)
        for fmt in ("NCHW", "channels_last"):
            tv, ra = (fmt, "torchvision"), (fmt, "roialign")
            f_tv, f_ra = statistics.median(forward[tv]), statistics.median(forward[ra])
            p_tv, p_ra = statistics.median(pooler[tv]), statistics.median(pooler[ra])
            print("| %d | %s | %.0f | %.0f | %.2f | %.1f | %.1f | %.1f |" % (
                threads, fmt, 1e3 * f_tv, 1e3 * f_ra, f_tv / f_ra, 1e3 * p_tv, 1e3 * p_ra, p_tv / p_ra), flush=True)


if __name__ == "__main__":
    main()
