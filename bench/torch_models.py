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

--floor adds the memory floor of the same calls: the bytes any NCHW pooler must move (every cache line of a map
plane that some RoI's taps read, once, and the result, written once) at this machine's single-thread bandwidth
(a sum over 512 MiB, beyond the last-level cache, and a fill of 128 MiB). At these bandwidths no pooler on these
maps takes less time, so torchvision's time over the floor bounds any speed-up over it.

  ROIALIGN_TORCH_LIBRARY=build/engines/torch/libroialign_torch.so python3 bench/torch_models.py [--threads 1]
"""
import argparse
import math
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


def taps(start, end, pooled, sampling_ratio, size):
    """The sorted map indices that the taps of one axis of a RoI read (torchvision's LEGACY coordinates)."""
    length = max(end - start, 1.0)
    bin_size = length / pooled
    grid = sampling_ratio if sampling_ratio > 0 else max(1, math.ceil(bin_size))
    read = set()
    for p in range(pooled):
        for i in range(grid):
            v = start + (p + (i + 0.5) / grid) * bin_size
            if v < -1.0 or v > size:
                continue  # outside the map: the sample is 0, nothing read
            low = int(max(v, 0.0))
            read.update((size - 1,) if low >= size - 1 else (low, low + 1))
    return sorted(read)


def floor_bytes(calls):
    """(map bytes, result bytes) that the calls must read and write at the least, NCHW: per level and image, the
    cache lines of each plane's rows that any RoI's taps touch, each line once, in every channel."""
    read = write = 0
    for m, (x, boxes, _) in calls:
        features = [v for k, v in x.items() if k in m.featmap_names]
        levels = m.map_levels(boxes)
        ph, pw = m.output_size
        per_box = [(i, b) for i, bs in enumerate(boxes) for b in bs.tolist()]
        for level, (f, scale) in enumerate(zip(features, m.scales)):
            n, c, h, w = f.shape
            line = 64 // f.element_size()
            touched = torch.zeros(n, h, (w + line - 1) // line * line, dtype=torch.bool)
            for (image, (x1, y1, x2, y2)), lv in zip(per_box, levels.tolist()):
                if lv != level:
                    continue
                rows = taps(y1 * scale, y2 * scale, ph, m.sampling_ratio, h)
                cols = taps(x1 * scale, x2 * scale, pw, m.sampling_ratio, w)
                if rows and cols:
                    touched[image, torch.tensor(rows)[:, None], torch.tensor(cols)[None, :]] = True
            read += int(touched.view(n, h, -1, line).any(-1).sum()) * 64 * c
        write += sum(b.shape[0] for b in boxes) * features[0].shape[1] * ph * pw * features[0].element_size()
    return read, write


def bandwidth():
    """(read, write) bytes per second of one thread: the best of 5 sums of 512 MiB and fills of 128 MiB."""
    big, out = torch.ones(1 << 27), torch.zeros(1 << 25)
    read = min(cpu_seconds(big.sum) for _ in range(5))
    write = min(cpu_seconds(lambda: out.fill_(1.0)) for _ in range(5))
    return big.numel() * 4 / read, out.numel() * 4 / write


def cpu_seconds(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default=",".join(BUILDERS))
    parser.add_argument("--floor", action="store_true", help="also the memory floor of the calls (above)")
    args = parser.parse_args()
    floors = []
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
        if args.floor:
            floors.append((name, floor_bytes(calls), best))
    if floors:
        read_bw, write_bw = bandwidth()
        print("\nMemory floor at %.1f GB/s read and %.1f GB/s write (one thread):\n" % (read_bw / 1e9, write_bw / 1e9))
        print("| model | map lines read MB | result MB | floor ms | torchvision ms | torchvision / floor | "
              "roialign NCHW ms | roialign NCHW / floor |")
        print("|---|---|---|---|---|---|---|---|")
        for name, (read, write), best in floors:
            floor = read / read_bw + write / write_bw
            print("| %s | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f |" % (
                name, read / 1e6, write / 1e6, 1e3 * floor, 1e3 * best["tv"], best["tv"] / floor, 1e3 * best["nchw"],
                best["nchw"] / floor))


if __name__ == "__main__":
    main()
