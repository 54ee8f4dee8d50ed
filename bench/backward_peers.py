#!/usr/bin/python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Times roialign's backward against torchvision's CPU backward on the workloads the layout report dumped, in one run.

Usage (the package installed in the interpreter, e.g. .ci/venv V && V/bin/pip install .):
    V/bin/python bench/backward_peers.py --data DIR [--only default,pooled14] [--threads 1,2] [--rounds 5]
                                         [--out backward_peers.json]

DIR is `layout_report --dump-dir=DIR`'s (bench/workload_data.py). For each single-map AVG workload in LEGACY or
HALF_PIXEL coordinates (what torchvision expresses) and each thread count, the paths are:
    torchvision NCHW     torch.ops.torchvision._roi_align_backward, the kernel autograd runs, on a contiguous dY
    roialign NCHW, NHWC  roialign.roi_align_backward on numpy arrays of the layout, the host's best target
dY is the same array of ones for every path (as bench/roi_align_benchmark.cc's backward rows). Before any timing
each roialign dX is checked against torchvision's (|ours - theirs| <= 1e-5 + 1e-4 |theirs|; the two add the same
products in different orders). The paths then run round robin, `--rounds` times, one call each per round, so that
a machine busy for a moment slows every path alike; the table prints each path's median ms and torchvision's median
over it. torch.set_num_threads(t) and roialign's num_threads=t set the threads (torchvision's backward is serial).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workload_data import aligned64, find_workloads  # noqa: E402

ABS_TOL, REL_TOL = 1e-5, 1e-4


def torchvision_path(torch, wl, grad):
    """torchvision's backward kernel on the workload; returns run() -> dX as a torch tensor [N, C, H, W]."""
    rois = torch.from_numpy(wl.rois)
    dy = torch.from_numpy(grad)
    aligned = wl.coord == "HALF_PIXEL"
    op = torch.ops.torchvision._roi_align_backward

    def run():
        return op(dy, rois, wl.scale, wl.ph, wl.pw, wl.n, wl.c, wl.h, wl.w, wl.ratio, aligned)

    return run


def roialign_path(roialign, wl, grad, layout, threads):
    """roialign.roi_align_backward in `layout`; returns run() -> dX in NCHW order (a view)."""
    if layout == "NHWC":
        x = aligned64(np.ascontiguousarray(wl.x.transpose(0, 2, 3, 1)))
        dy = aligned64(np.ascontiguousarray(grad.transpose(0, 2, 3, 1)))
        back = (0, 3, 1, 2)
    else:
        x, dy, back = wl.x, grad, (0, 1, 2, 3)
    out = aligned64(np.empty(x.shape, np.float32))
    aligned = wl.coord == "HALF_PIXEL"

    def run():
        roialign.roi_align_backward(dy, x, wl.rois, (wl.ph, wl.pw), wl.scale, wl.ratio, aligned, layout=layout,
                                    num_threads=threads, out=out)
        return out.transpose(back)

    return run


def agrees(ours, theirs):
    err = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    return bool(np.all(err <= ABS_TOL + REL_TOL * np.abs(theirs))), float(err.max()) if err.size else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    import torch
    import torchvision  # noqa: F401  (registers torch.ops.torchvision)
    import roialign
    only = [s for s in args.only.split(",") if s]
    threads_list = [int(t) for t in args.threads.split(",") if t]
    rows = []
    print("%-10s %3s  %-16s %10s %10s" % ("workload", "thr", "path", "median ms", "tv/this"))
    for wl in find_workloads(args.data, only):
        if wl.levels or wl.pool != "AVG" or wl.coord not in ("LEGACY", "HALF_PIXEL"):
            sys.stderr.write("%s: skipped (torchvision's backward is single-map AVG, aligned False/True)\n" % wl.name)
            continue
        grad = aligned64(np.ones((wl.k, wl.c, wl.ph, wl.pw), np.float32))
        for threads in threads_list:
            torch.set_num_threads(threads)
            paths = {"torchvision NCHW": torchvision_path(torch, wl, grad)}
            for layout in ("NCHW", "NHWC"):
                paths["roialign " + layout] = roialign_path(roialign, wl, grad, layout, threads)
            theirs = paths["torchvision NCHW"]().numpy()
            for name, run in paths.items():
                if name.startswith("roialign"):
                    ok, err = agrees(run(), theirs)
                    if not ok:
                        raise SystemExit("%s %s: dX differs from torchvision's by %.3g" % (wl.name, name, err))
            seconds = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, run in paths.items():
                    t0 = time.perf_counter()
                    run()
                    seconds[name].append(time.perf_counter() - t0)
            base = statistics.median(seconds["torchvision NCHW"])
            for name, s in seconds.items():
                median = statistics.median(s)
                rows.append({"workload": wl.name, "threads": threads, "path": name, "ms": median * 1e3,
                             "ms_rounds": [x * 1e3 for x in s], "torchvision_over_this": base / median})
                print("%-10s %3d  %-16s %10.2f %10.1f" % (wl.name, threads, name, median * 1e3, base / median))
            sys.stdout.flush()
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "roialign": roialign.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
