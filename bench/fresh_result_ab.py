#!/usr/bin/env python3
"""What a new result costs a roialign.roi_align call, in one process: the default workload's NHWC call at one thread
into a new torch or numpy result whose memory the package recycles (the default), into new memory (recycling off:
a torch result with the package's huge-page advice and without it, a numpy result), and into a reused out= tensor,
in alternation. Prints the minimum and median wall time of each.

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
    kept = roialign._RESULT_MEMORY
    none_kept = roialign._result_memory.ResultMemory(0)  # new memory every call, without releasing `kept`'s buffers

    def torch_new(recycled, advised=True):
        roialign._RESULT_MEMORY = kept if recycled else none_kept
        roialign._HUGE_PAGE_RESULT_BYTES = advice if advised else 1 << 62
        return roialign.roi_align(x, boxes, size, scale, ratio, layout="NHWC", num_threads=1)

    def numpy_new(recycled):
        roialign._RESULT_MEMORY = kept if recycled else none_kept
        return roialign.roi_align(x_np, boxes.numpy(), size, scale, ratio, layout="NHWC", num_threads=1)

    runs = {
        "torch, new result, recycled": lambda: torch_new(True),
        "torch, new memory, advised": lambda: torch_new(False),
        "torch, new memory, not advised": lambda: torch_new(False, advised=False),
        "numpy, new result, recycled": lambda: numpy_new(True),
        "numpy, new memory": lambda: numpy_new(False),
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
                del result  # free for the next recycled result
    finally:
        roialign._HUGE_PAGE_RESULT_BYTES = advice
        roialign._RESULT_MEMORY = kept
    print("default workload, NHWC f32, 1 thread, %d rounds" % rounds)
    for name in names:
        print("  %-32s min %6.1f ms  median %6.1f ms" % (name, min(times[name]), float(np.median(times[name]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
