#!/usr/bin/env python3
"""How much the alignment of the map and the result costs our NHWC kernel, in one process.

Reads the default workload that `layout_report --workloads=default --dump-dir=DIR` wrote, makes its NHWC map and
a result buffer both at a 64-byte boundary (as engines allocate tensors) and 16 bytes past one (where numpy starts
large arrays), and times roialign.roi_align on the four combinations in alternation, writing out= each time.
Prints per combination the minimum and median wall time and the speed-up of the median over the 16/16 case.

  .ci/venv V && V/bin/pip install . && V/bin/python bench/alignment_ab.py DIR [THREADS] [ROUNDS]
"""
import json
import os
import sys
import time

import numpy as np

import roialign


def at_offset(shape, offset):
    """An uninitialized float32 array of `shape` whose data starts `offset` bytes past a 64-byte boundary."""
    nbytes = int(np.prod(shape)) * 4
    buffer = np.empty(nbytes + 128, dtype=np.uint8)
    start = -buffer.ctypes.data % 64 + offset
    return buffer[start:start + nbytes].view(np.float32).reshape(shape)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    base = os.path.join(argv[1], "default")
    threads = int(argv[2]) if len(argv) > 2 else 1
    rounds = int(argv[3]) if len(argv) > 3 else 15
    with open(base + ".json") as f:
        meta = json.load(f)
    n, c, h, w, k = (meta[key] for key in ("batch", "channels", "height", "width", "num_rois"))
    ph, pw = meta["pooled_height"], meta["pooled_width"]
    nchw = np.fromfile(base + ".map.f32", "<f4").reshape(n, c, h, w)
    rois = np.fromfile(base + ".rois.f32", "<f4").reshape(k, 5)
    ref = np.fromfile(base + ".ref.f32", "<f4").reshape(k, c, ph, pw)
    cases = {}
    for map_offset in (0, 16):
        m = at_offset((n, h, w, c), map_offset)
        m[...] = nchw.transpose(0, 2, 3, 1)
        for out_offset in (0, 16):
            out = at_offset((k, ph, pw, c), out_offset)
            out[...] = 0  # fault the pages in before timing
            cases["map +%d, result +%d" % (map_offset, out_offset)] = (m, out)

    def call(m, out):
        roialign.roi_align(m, rois, (ph, pw), meta["spatial_scale"], meta["sampling_ratio"], False, layout="NHWC",
                           num_threads=threads, out=out)

    names = list(cases)
    for name in names:
        call(*cases[name])
        err = float(np.max(np.abs(cases[name][1].transpose(0, 3, 1, 2) - ref)))
        if err > 1e-4:
            print("%s: max error %g against the reference" % (name, err), file=sys.stderr)
            return 1
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            call(*cases[name])  # untimed: the same warm state for every case
            t0 = time.perf_counter()
            call(*cases[name])
            times[name].append((time.perf_counter() - t0) * 1e3)
    slowest = float(np.median(times[names[-1]]))
    print("default workload, NHWC f32, %d thread(s), %d rounds" % (threads, rounds))
    for name in names:
        med = float(np.median(times[name]))
        print("  %-22s min %6.2f ms  median %6.2f ms  %.2fx" % (name, min(times[name]), med, slowest / med))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
