#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign's poolers inside torchvision's detectors: every pooler call of a real forward, replayed.

For Faster R-CNN, Mask R-CNN and Keypoint R-CNN (ResNet-50 FPN, weights=None, seeded), one forward on two images
records every MultiScaleRoIAlign call's inputs. Each call is then replayed, alternating, with torchvision's pooler,
roialign.nn.MultiScaleRoIAlign on the NCHW maps, and on NHWC maps including the maps' conversion to
channels_last; CPU time (time.process_time) summed over the calls, best of --repeats. The whole forward is timed
with torchvision's poolers and with replace_poolers. Needs roialign's torch ops (ROIALIGN_TORCH_LIBRARY or the
package's own).

  ROIALIGN_TORCH_LIBRARY=build/engines/torch/libroialign_torch.so python3 bench/torch_models.py [--threads 1]
"""
import argparse
import time

import torch
import torchvision

import roialign.nn as rnn

BUILDERS = {
    "Faster R-CNN": torchvision.models.detection.fasterrcnn_resnet50_fpn,
    "Mask R-CNN": torchvision.models.detection.maskrcnn_resnet50_fpn,
    "Keypoint R-CNN": torchvision.models.detection.keypointrcnn_resnet50_fpn,
}


def build(name):
    torch.manual_seed(0)
    return BUILDERS[name](weights=None, weights_backbone=None).eval()


def record_pooler_calls(model, images):
    """Runs the model once; returns [(pooler module, (x, boxes, image_shapes))] for every pooler call."""
    calls = []

    def hook(module, args):
        x, boxes, shapes = args
        calls.append((module, (dict(x), [b.clone() for b in boxes], list(shapes))))

    handles = [m.register_forward_pre_hook(hook) for m in model.modules()
               if isinstance(m, torchvision.ops.MultiScaleRoIAlign)]
    with torch.no_grad():
        model(images)
    for h in handles:
        h.remove()
    return calls


def cpu_seconds(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default=",".join(BUILDERS))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    images = [torch.rand(3, 800, 1066, generator=gen), torch.rand(3, 800, 1200, generator=gen)]
    print("| model | pooler calls | RoIs | torchvision pooler ms | roialign NCHW ms | x | roialign NHWC incl. "
          "conversion ms | x | forward, torchvision ms | forward, roialign ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model = build(name)
        calls = record_pooler_calls(model, images)
        ours = {id(m): (rnn.MultiScaleRoIAlign(m.featmap_names, m.output_size, m.sampling_ratio,
                                               canonical_scale=m.canonical_scale,
                                               canonical_level=m.canonical_level),
                        rnn.MultiScaleRoIAlign(m.featmap_names, m.output_size, m.sampling_ratio,
                                               canonical_scale=m.canonical_scale,
                                               canonical_level=m.canonical_level, layout="NHWC"))
                for m, _ in calls}

        def theirs_all():
            for m, a in calls:
                m(*a)

        def nchw_all():
            for m, a in calls:
                ours[id(m)][0](*a)

        def nhwc_all():
            for m, (x, boxes, shapes) in calls:
                nhwc = {k: v.contiguous(memory_format=torch.channels_last) for k, v in x.items()}
                ours[id(m)][1](nhwc, boxes, shapes)

        best = {"tv": float("inf"), "nchw": float("inf"), "nhwc": float("inf")}
        with torch.no_grad():
            for _ in range(args.repeats):  # alternating, so that a busy neighbour slows all three alike
                best["tv"] = min(best["tv"], cpu_seconds(theirs_all))
                best["nchw"] = min(best["nchw"], cpu_seconds(nchw_all))
                best["nhwc"] = min(best["nhwc"], cpu_seconds(nhwc_all))
            forward_theirs = cpu_seconds(lambda: model(images))
            rnn.replace_poolers(model)
            forward_ours = cpu_seconds(lambda: model(images))
        rois = sum(sum(b.shape[0] for b in a[1]) for _, a in calls)
        print("| %s | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f |" % (
            name, len(calls), rois, 1e3 * best["tv"], 1e3 * best["nchw"], best["tv"] / best["nchw"],
            1e3 * best["nhwc"], best["tv"] / best["nhwc"], 1e3 * forward_theirs, 1e3 * forward_ours), flush=True)


if __name__ == "__main__":
    main()
