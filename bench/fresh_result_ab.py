#!/usr/bin/env python3
"""What a new result costs a roialign.roi_align call, in one process: the default workload's NHWC call at one thread
into a new torch result with the package's huge-page advice and without it, into a new numpy result, and into a
reused out= tensor, in alternation. Prints the minimum and median wall time of each.

Reads what `layout_report --workloads=default --dump-dir=DIR` wrote.

  .ci/venv V && V/bin/pip install . && V/bin/python bench/fresh_result_ab.py DIR [ROUNDS]
"""
import json
import os
import sys
import time

import numpy as np
import torch

import roialign


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    base, rounds = os.path.join(argv[1], "default"), int(argv[2]) if len(argv) > 2 else 12
    with open(base + ".json") as f:
        meta = json.load(f)
    n, c, h, w, k = (meta[key] for key in ("batch", "channels", "height", "width", "num_rois"))
    size, scale, ratio = meta["pooled_height"], meta["spatial_scale"], meta["sampling_ratio"]
    torch.set_num_threads(1)
    nchw = np.fromfile(base + ".map.f32", "<f4").reshape(n, c, h, w)
    x = torch.from_numpy(nchw).clone(memory_format=torch.channels_last)  # torch's own, 64-byte aligned memory
    boxes = torch.from_numpy(np.fromfile(base + ".rois.f32", "<f4").reshape(k, 5))
    x_np = np.ascontiguousarray(x.permute(0, 2, 3, 1).numpy())  # the same map as a numpy [N, H, W, C] array
    out = torch.empty((k, c, size, size)).contiguous(memory_format=torch.channels_last)
    advice = roialign._HUGE_PAGE_RESULT_BYTES

    def torch_new(advised):
        roialign._HUGE_PAGE_RESULT_BYTES = advice if advised else 1 << 62
        return roialign.roi_align(x, boxes, size, scale, ratio, layout="NHWC", num_threads=1)

    runs = {
        "torch, new result, advised": lambda: torch_new(True),
        "torch, new result, not advised": lambda: torch_new(False),
        "numpy, new result": lambda: roialign.roi_align(x_np, boxes.numpy(), size, scale, ratio, layout="NHWC",
                                                        num_threads=1),
        "torch, out= reused": lambda: roialign.roi_align(x, boxes, size, scale, ratio, layout="NHWC", num_threads=1,
                                                         out=out),
    }
    names = list(runs)
    times = {name: [] for name in names}
    try:
        for r in range(rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                t0 = time.perf_counter()
                result = runs[name]()
                times[name].append((time.perf_counter() - t0) * 1e3)
                del result  # the next new result is new memory again
    finally:
        roialign._HUGE_PAGE_RESULT_BYTES = advice
    print("default workload, NHWC f32, 1 thread, %d rounds" % rounds)
    for name in names:
        print("  %-32s min %6.1f ms  median %6.1f ms" % (name, min(times[name]), float(np.median(times[name]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
