# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""The workloads that `layout_report --dump-dir=DIR` writes, loaded for the Python tools of bench/ (peers.py), and
64-byte aligned arrays.

Per workload NAME, DIR holds NAME.json (its attributes, with the library's names of its modes), NAME.map.f32 (the
float32 NCHW map; a pyramid has NAME.map<i>.f32 per level and "levels" in NAME.json), NAME.rois.f32 ([K, 5] rows)
and NAME.ref.f32 (roialign's result, [K, C, PH, PW]), all raw little-endian. A rotated workload (NAME.json has
"roi_kind": "ROTATED", with "angle_unit" and "rotation") has [K, 6] rows (batch, cx, cy, w, h, angle) in
NAME.rois.f32, and the same boxes axis-aligned in NAME.rois_axis.f32 ([K, 5]) with roialign's axis-aligned
HALF_PIXEL result on them in NAME.ref_axis.f32, for axis-aligned peers.
"""
import glob
import json
import os
import sys

import numpy as np

REQUIRED_KEYS = ("batch", "channels", "height", "width", "num_rois", "pooled_height", "pooled_width",
                 "spatial_scale", "sampling_ratio", "coordinate_mode", "pool_mode")


class Workload:
    def __init__(self, json_path):
        with open(json_path) as f:
            meta = json.load(f)
        self.levels = meta.get("levels") if isinstance(meta, dict) else None
        if self.levels:  # a feature pyramid (the fpn workload): one map per level; level 0 fills the single-map keys
            meta = dict(meta, **{k: self.levels[0][k] for k in ("height", "width", "spatial_scale")})
        if not isinstance(meta, dict) or any(k not in meta for k in REQUIRED_KEYS):
            raise ValueError("not a workload description (needs %s)" % ", ".join(REQUIRED_KEYS))
        base = json_path[:-len(".json")]
        self.name = str(meta.get("name", os.path.basename(base)))
        self.n, self.c, self.h, self.w = (int(meta[k]) for k in ("batch", "channels", "height", "width"))
        self.k = int(meta["num_rois"])
        self.ph, self.pw = int(meta["pooled_height"]), int(meta["pooled_width"])
        self.scale = float(meta["spatial_scale"])
        self.ratio = int(meta["sampling_ratio"])
        self.coord = str(meta["coordinate_mode"])
        self.pool = str(meta["pool_mode"])
        self.threads = [int(t) for t in meta.get("threads", [1])] or [1]
        self.roi_kind = str(meta.get("roi_kind", "AXIS_ALIGNED"))
        self.rotated = self.roi_kind == "ROTATED"
        self.angle_unit = str(meta.get("angle_unit", "RADIANS"))
        self.rotation = str(meta.get("rotation", "COUNTER_CLOCKWISE"))
        if self.levels:
            self.image_hw = (int(meta["image_height"]), int(meta["image_width"]))
            self.maps = [self._load("%s.map%d.f32" % (base, i), (self.n, self.c, int(l["height"]), int(l["width"])))
                         for i, l in enumerate(self.levels)]
        self.x = self.maps[0] if self.levels else self._load(base + ".map.f32", (self.n, self.c, self.h, self.w))
        self.rois = self._load(base + ".rois.f32", (self.k, 6 if self.rotated else 5))
        self.ref = self._load(base + ".ref.f32", (self.k, self.c, self.ph, self.pw))
        if self.rotated:  # (cx, cy, w, h, angle) rows; the axis-aligned boxes and result for axis-aligned peers
            self.rois5 = np.ascontiguousarray(self.rois[:, 1:6])
            self.rois_axis = self._load(base + ".rois_axis.f32", (self.k, 5))
            self.ref_axis = self._load(base + ".ref_axis.f32", (self.k, self.c, self.ph, self.pw))
            self.rois4 = np.ascontiguousarray(self.rois_axis[:, 1:5])
        else:
            self.rois4 = np.ascontiguousarray(self.rois[:, 1:5])
        self.batch_indices = np.ascontiguousarray(self.rois[:, 0].astype(np.int64))
        if self.k and not np.array_equal(self.batch_indices.astype(np.float32), self.rois[:, 0]):
            raise ValueError("non-integral batch index in %s.rois.f32" % base)
        self.map_min = float(self.x.min()) if self.x.size else 0.0

    @staticmethod
    def _load(path, shape):
        expected = int(np.prod(shape, dtype=np.int64))
        a = np.fromfile(path, dtype="<f4")
        if a.size != expected:
            raise ValueError("%s holds %d floats, expected %d for shape %s" % (path, a.size, expected, shape))
        return aligned64(a.reshape(shape).astype(np.float32, copy=False))

    def describe(self):
        return ("N=%d C=%d H=%d W=%d K=%d %dx%d scale=%g ratio=%d %s %s%s"
                % (self.n, self.c, self.h, self.w, self.k, self.ph, self.pw, self.scale, self.ratio, self.coord,
                   self.pool, " rotated (%s, %s)" % (self.angle_unit, self.rotation) if self.rotated else ""))


def aligned64(a):
    """A C-contiguous copy of `a` starting on a 64-byte boundary. Engines allocate tensors so (PyTorch, ONNX
    Runtime, OpenVINO, TVM), and so does layout_report for our kernels; numpy starts large arrays 16 bytes past one,
    where every 64-byte load straddles two cache lines (docs/layouts.md, "Alignment")."""
    buffer = np.empty(a.nbytes + 64, dtype=np.uint8)
    start = -buffer.ctypes.data % 64
    out = buffer[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def find_workloads(data_dir, only):
    paths = sorted(glob.glob(os.path.join(data_dir, "*.json")))
    workloads = []
    for p in paths:
        stem = os.path.basename(p)[:-len(".json")]
        if not any(os.path.exists(p[:-len(".json")] + m) for m in (".map.f32", ".map0.f32")):
            continue  # some other JSON file (e.g. a report) in the same directory
        if only:
            try:
                with open(p) as f:
                    name = json.load(f).get("name", stem)
            except (ValueError, OSError, AttributeError):
                name = stem
            if stem not in only and name not in only:
                continue
        try:
            workloads.append(Workload(p))
        except (ValueError, OSError) as e:
            sys.stderr.write("skipping %s: %s\n" % (p, e))
    return workloads
