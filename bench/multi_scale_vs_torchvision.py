#!/usr/bin/env python3
"""roialign.multi_scale_roi_align vs torchvision's MultiScaleRoIAlign on the FPN workload, in one process.

Reads the pyramid that `layout_report --workloads=fpn --dump-dir=DIR` wrote (DIR/fpn.json, fpn.map<i>.f32,
fpn.rois.f32), checks both against fpn.ref.f32, then times them in alternation at one thread (torch.set_num_threads(1),
num_threads=1), NCHW and NHWC (channels_last tensors), ours also with a reused out= tensor (a fresh result's page
faults are a large part of a call on some machines). Reports per variant the median wall time and the median CPU
time of the process (time.process_time): on a shared machine the CPU time is the steadier of the two.

  .ci/venv V && V/bin/pip install . && V/bin/python bench/multi_scale_vs_torchvision.py DIR [ROUNDS]
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
from torchvision.ops import MultiScaleRoIAlign

import roialign


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    base, rounds = os.path.join(argv[1], "fpn"), int(argv[2]) if len(argv) > 2 else 5
    with open(base + ".json") as f:
        meta = json.load(f)
    c, k, p = meta["channels"], meta["num_rois"], meta["pooled_height"]
    maps = [np.fromfile("%s.map%d.f32" % (base, i), "<f4").reshape(1, c, lv["height"], lv["width"])
            for i, lv in enumerate(meta["levels"])]
    rois = np.fromfile(base + ".rois.f32", "<f4").reshape(k, 5)
    ref = np.fromfile(base + ".ref.f32", "<f4").reshape(k, c, p, p)
    scales = [lv["spatial_scale"] for lv in meta["levels"]]
    names = ["p%d" % i for i in range(len(maps))]
    torch.set_num_threads(1)
    pooler = MultiScaleRoIAlign(names, p, meta["sampling_ratio"])
    boxes = [torch.from_numpy(np.ascontiguousarray(rois[:, 1:]))]
    image = [(meta["image_height"], meta["image_width"])]
    runs = {}
    for layout, fmt in (("NCHW", torch.contiguous_format), ("NHWC", torch.channels_last)):
        # Copies in torch's own memory, 64-byte aligned as in a model (numpy's starts 16 bytes past a boundary).
        feats = [torch.from_numpy(m).clone(memory_format=fmt) for m in maps]
        fdict = dict(zip(names, feats))
        runs["torchvision MultiScaleRoIAlign " + layout] = (
            lambda fdict=fdict: pooler(fdict, boxes, image))
        runs["roialign.multi_scale_roi_align " + layout] = (
            lambda feats=feats, layout=layout: roialign.multi_scale_roi_align(
                feats, boxes, p, scales, meta["sampling_ratio"], layout=layout, num_threads=1))
        # The same call writing one result tensor again and again: without the page faults of a fresh result.
        out = torch.empty((k, c, p, p)).contiguous(memory_format=fmt)
        runs["roialign ... " + layout + ", out= reused"] = (
            lambda feats=feats, layout=layout, out=out: roialign.multi_scale_roi_align(
                feats, boxes, p, scales, meta["sampling_ratio"], layout=layout, num_threads=1, out=out))
    wall, cpu = {n: [] for n in runs}, {n: [] for n in runs}
    with torch.no_grad():
        for name, run in runs.items():
            err = float(np.max(np.abs(run().contiguous().numpy() - ref)))
            print("%-40s max |err| vs fpn.ref.f32: %.3g" % (name, err), file=sys.stderr)
        for _ in range(rounds):
            for name, run in runs.items():
                w0, c0 = time.perf_counter(), time.process_time()
                run()
                wall[name].append(time.perf_counter() - w0)
                cpu[name].append(time.process_time() - c0)
    print("%-40s %12s %12s" % ("1 thread, median of %d" % rounds, "wall ms", "cpu ms"))
    for name in runs:
        print("%-40s %12.1f %12.1f" % (name, 1e3 * statistics.median(wall[name]), 1e3 * statistics.median(cpu[name])))
    for layout in ("NCHW", "NHWC"):
        t = "torchvision MultiScaleRoIAlign " + layout
        for r in ("roialign.multi_scale_roi_align " + layout, "roialign ... " + layout + ", out= reused"):
            print("%s: %s %.1fx faster (wall), %.1fx (cpu)" % (
                layout, r, statistics.median(wall[t]) / statistics.median(wall[r]),
                statistics.median(cpu[t]) / statistics.median(cpu[r])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
