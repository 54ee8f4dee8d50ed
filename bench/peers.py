#!/usr/bin/python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Times peer RoIAlign implementations on the workloads that the layout report dumped, in the same run.

Usage:
    /usr/bin/python3 bench/peers.py --data DIR --out peers.json [--repeats 5] [--threads 1,2] [--only NAME]
                                    [--peers torchvision,onnxruntime,openvino,tvm]

DIR holds, per workload NAME (written by the C++ layout report's dump option):
    NAME.json       {"name", "batch", "channels", "height", "width", "num_rois", "pooled_height", "pooled_width",
                     "spatial_scale", "sampling_ratio" (<= 0 adaptive), "coordinate_mode", "pool_mode", "threads"}
    NAME.map.f32    float32 NCHW feature map, raw little-endian
    NAME.rois.f32   float32 [K,5] rows (batch_index, x1, y1, x2, y2)
    NAME.ref.f32    float32 [K,C,PH,PW], roialign's own result: every peer must reproduce it before it is timed
A rotated workload (NAME.json "roi_kind": "ROTATED", e.g. `rotated`) has [K,6] rows (batch, cx, cy, w, h, angle) in
NAME.rois.f32, and the same boxes axis-aligned in NAME.rois_axis.f32 ([K,5]) with roialign's axis-aligned
HALF_PIXEL result on them in NAME.ref_axis.f32 (bench/workload_data.py). Peers without rotated RoIs skip it, except
torchvision, which runs its axis-aligned roi_align on those boxes (aligned=True) and is checked against
NAME.ref_axis.f32 ("compared_with": "ref_axis"): the issue's speed target compares our rotated kernel with it.

Peers (each optional; one that cannot be imported or cannot express a workload's mode is recorded as
"skipped: <reason>", never given a number):
    torchvision   torchvision.ops.roi_align on NCHW and on channels_last input. AVG only; LEGACY (aligned=False)
                  and HALF_PIXEL (aligned=True) only. torch.set_num_threads(t). Note: torchvision's CPU kernel
                  (0.14) is a plain loop over RoIs, so it does not get faster with more threads. On a feature
                  pyramid (NAME.json has "levels", maps NAME.map<i>.f32): torchvision.ops.MultiScaleRoIAlign.
    onnxruntime   a one-node ONNX model (opset 16 RoiAlign) on the CPU execution provider, intra_op_num_threads=t.
                  coordinate_transformation_mode "output_half_pixel" == LEGACY, "half_pixel" == HALF_PIXEL;
                  mode "avg" == AVG, "max" == MAX_ONNX (max over samples of the max over the 4 weighted taps).
                  HALF_PIXEL_CENTERED and MAX (max of the bilinear sums) cannot be expressed.
    openvino      opset9 ROIAlign compiled for "CPU" with INFERENCE_NUM_THREADS=t and f32 inference precision.
                  aligned_mode "asymmetric" == LEGACY, "half_pixel_for_nn" == HALF_PIXEL, "half_pixel" ==
                  HALF_PIXEL_CENTERED; mode "avg" == AVG. Its "max" is max(0, our MAX): the CPU plugin starts the
                  max accumulator at 0 instead of -inf (measured, and so written in its source). So it equals
                  our MAX exactly when the feature map is non-negative (e.g. after a ReLU); MAX workloads are timed
                  only then, and MAX_ONNX never.
                  A second row, variant NCHW+roialign: OpenVINO with this library's extension
                  (ROIALIGN_OPENVINO_EXTENSION=libroialign_openvino.so) reading the onnxruntime peer's ONNX model, so
                  its RoiAlign runs roialign's kernel on the CPU plugin's threads (docs/openvino.md).

    openvino      (rotated workloads) variant ROIAlignRotated-15: opset15 ROIAlignRotated compiled for "CPU" as above,
                  [K,5] rows and batch indices, angles in radians (a DEGREES workload's angle converted as roialign
                  converts it: in double, rounded once to float32), clockwise_mode from the workload's rotation.
                  AVG only; always aligned (HALF_PIXEL). Its CPU implementation takes tens of seconds on the rotated
                  workload, so it is timed ONCE per thread count: the checked run is the timed run ("runs": 1), on
                  all the workload's RoIs, nothing scaled.
                  Variants "mmcv ONNX+roialign" (an ONNX model with mmcv's MMCVRoIAlignRotated, [K,6] rows in radians,
                  read with the extension) and "ROIAlignRotated-15+roialign" (the ROIAlignRotated-15 model after
                  python/roialign/openvino.py's replace_roi_align_rotated): roialign's kernel on the CPU plugin's
                  threads, timed as the other peers.

    tvm           Apache TVM (apache-tvm 0.27): a Relax module with one R.vision.roi_align, built by relax.build
                  for llvm with the host CPU (-mcpu from LLVM's host detection) and TVM's default lowering (topi's
                  roi_align_nchw/_nhwc, no schedule: a serial scalar loop), variants NCHW and NHWC (the map is
                  transposed once, untimed). aligned=False == LEGACY, aligned=True == LEGACY_UNCLAMPED; avg == AVG, max == MAX. Variants
                  NCHW+roialign and NHWC+roialign run the same module after roialign.tvm.dispatch_roi_align: our
                  kernel through call_dps_packed (libroialign_tvm.so from $ROIALIGN_TVM_LIBRARY) on TVM's thread
                  pool. Threads: TVM_NUM_THREADS is set to the CPU count before TVM starts its pool (by default
                  TVM takes half the logical CPUs on x86), then runtime.config_threadpool picks t per row.

onnxruntime, onnx and openvino are pip packages that Debian's python3 does not have. Install them beside it with
    /usr/bin/python3 -m pip install --target /opt/roialign-peers onnxruntime onnx openvino "numpy<2"
and point ROIALIGN_PEERS_PATH at that directory (os.pathsep-separated list; the entries go to the FRONT of
sys.path, before numpy is imported). "numpy<2" matters: current onnx needs numpy >= 1.25 (Debian 12 has 1.24),
and Debian's torch 1.13 cannot use numpy 2 ("Numpy is not available"); numpy 1.26 suits both.

Output JSON: {"peers": [{"peer", "variant", "version", "workload", "threads", "ms" (median, or null), "status"
("ok" | "skipped: ..." | "mismatch: max err X ..."), "max_err" (vs NAME.ref.f32, or null), "runs" (timed runs of
the median), "compared_with" ("ref", or "ref_axis": NAME.ref_axis.f32)}]}.
Progress goes to stderr, a table to stdout.
"""
import argparse
import json
import os
import statistics
import sys
import time

# Extra package directories first (see the module docstring): they must win over dist-packages, numpy included.
for _p in reversed([p for p in os.environ.get("ROIALIGN_PEERS_PATH", "").split(os.pathsep) if p]):
    if _p not in sys.path:
        sys.path.insert(0, _p)

try:
    import numpy as np
except ImportError as _e:
    sys.stderr.write("peers.py: cannot import numpy (%s); run with Debian's /usr/bin/python3 (python3-numpy)\n" % _e)
    sys.exit(2)

from workload_data import find_workloads  # noqa: E402 (after numpy from the extra directories)

# Peers must reproduce NAME.ref.f32 within |peer - ref| <= ABS_TOL + REL_TOL * |ref|. This is looser than the
# 1e-5 + 1e-4*|ref| that our own SIMD kernels must meet against our scalar reference, because peers accumulate in a
# different order (torchvision and OpenVINO sum the 4 taps then the samples, ONNX Runtime precomputes weights, some
# multiply by 1/count instead of dividing) and float32 rounding then differs by a few ulps per sample. A wrong
# sample, tap or coordinate convention shows up as an error near 1e-2 or more, so this still catches any semantic
# difference.
ABS_TOL = 1e-4
REL_TOL = 1e-3

PIP_HINT = ('pip install onnxruntime onnx (for /usr/bin/python3: /usr/bin/python3 -m pip install --target DIR '
            'onnxruntime onnx openvino "numpy<2", then ROIALIGN_PEERS_PATH=DIR)')
OV_PIP_HINT = PIP_HINT.replace("pip install onnxruntime onnx (", "pip install openvino (")

def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def short_exc(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0][:200] if text else "")


class Skip(Exception):
    """The peer cannot run this workload (import failure, inexpressible mode): becomes "skipped: <reason>"."""


# ---------------------------------------------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------------------------------------------



# ---------------------------------------------------------------------------------------------------------------
# Peers. Each has: peer, variant, version (None until imported), unavailable (import failure reason or None),
# check_mode(wl) -> None or a reason it cannot express wl, prepare(wl, threads) -> (run, fetch):
# run() computes once (what is timed), fetch() returns the last result as float32 [K,C,PH,PW].
# ---------------------------------------------------------------------------------------------------------------

class TorchvisionPeer:
    peer = "torchvision"
    rotated = "axis"  # on a rotated workload: roi_align on the same boxes axis-aligned (see the module docstring)

    def __init__(self, channels_last):
        self.variant = "channels_last" if channels_last else "NCHW"
        self.channels_last = channels_last
        self.version = None
        self.unavailable = None
        try:
            import torch
            import torchvision
            from torchvision.ops import roi_align
        except Exception as e:  # ImportError, or a broken torch install
            self.unavailable = ("cannot import torch/torchvision (%s); run with Debian's /usr/bin/python3 "
                                "(apt-get install python3-torchvision)" % short_exc(e))
            return
        self.torch, self.roi_align = torch, roi_align
        self.version = "torchvision %s (torch %s)" % (torchvision.__version__, torch.__version__)

    def check_mode(self, wl):
        if wl.pool != "AVG":
            return "torchvision.ops.roi_align has no max pooling (pool_mode %s)" % wl.pool
        if wl.coord not in ("LEGACY", "HALF_PIXEL"):
            return "torchvision.ops.roi_align has no %s coordinates (aligned=False/True only)" % wl.coord
        return None

    def prepare(self, wl, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        try:
            x = torch.from_numpy(wl.x)
            rois = torch.from_numpy(wl.rois)
        except Exception as e:  # e.g. torch built for numpy 1.x meeting numpy 2
            raise Skip("torch cannot take numpy %s arrays (%s); install \"numpy<2\" in ROIALIGN_PEERS_PATH"
                       % (np.__version__, short_exc(e)))
        if wl.rotated:  # the same boxes axis-aligned, checked against our axis-aligned result (HALF_PIXEL)
            rois = torch.from_numpy(wl.rois_axis)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        aligned = wl.coord == "HALF_PIXEL"
        result = [None]
        roi_align = self.roi_align

        def run():
            with torch.no_grad():
                result[0] = roi_align(x, rois, output_size=(wl.ph, wl.pw), spatial_scale=wl.scale,
                                      sampling_ratio=wl.ratio, aligned=aligned)

        def fetch():
            return np.ascontiguousarray(result[0].contiguous().numpy(), dtype=np.float32)

        return run, fetch


class TorchvisionMultiScalePeer(TorchvisionPeer):
    """torchvision.ops.MultiScaleRoIAlign on a feature pyramid (its level rule is roialign's SCALE rule)."""
    pyramid = True
    rotated = None

    def __init__(self, channels_last):
        super().__init__(channels_last)
        self.variant = "MultiScale " + self.variant

    def prepare(self, wl, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        from torchvision.ops import MultiScaleRoIAlign
        names = ["p%d" % i for i in range(len(wl.maps))]
        fmt = torch.channels_last if self.channels_last else torch.contiguous_format
        features = {n: torch.from_numpy(m).contiguous(memory_format=fmt) for n, m in zip(names, wl.maps)}
        boxes = [torch.from_numpy(wl.rois4[wl.batch_indices == b]) for b in range(wl.n)]
        if any(np.diff(wl.batch_indices) < 0):
            raise Skip("RoIs are not grouped by image (MultiScaleRoIAlign takes one box list per image)")
        pooler = MultiScaleRoIAlign(names, (wl.ph, wl.pw), wl.ratio)
        result = [None]

        def run():
            with torch.no_grad():
                result[0] = pooler(features, boxes, [wl.image_hw] * wl.n)

        def fetch():
            return np.ascontiguousarray(result[0].contiguous().numpy(), dtype=np.float32)

        return run, fetch


class OnnxRuntimePeer:
    peer = "onnxruntime"
    variant = "NCHW"
    OPSET = 16

    def __init__(self):
        self.version = None
        self.unavailable = None
        try:
            import onnx
            from onnx import helper, TensorProto
            import onnxruntime as ort
        except Exception as e:
            self.unavailable = "cannot import onnxruntime/onnx (%s); %s" % (short_exc(e), PIP_HINT)
            return
        self.onnx, self.helper, self.TensorProto, self.ort = onnx, helper, TensorProto, ort
        # Quiet ORT's per-session warning for mode "max" ("The existing summation for max mode and sampling
        # ratios besides 1 is incorrect and will be fixed in the next ORT 1.13 release"): as of 1.32 the max is
        # still the max over the 4 weighted taps, i.e. our MAX_ONNX, and the check below verifies it per workload.
        ort.set_default_logger_severity(3)
        self.version = "onnxruntime %s (onnx %s, opset %d, CPUExecutionProvider)" % (
            ort.__version__, onnx.__version__, self.OPSET)

    def check_mode(self, wl):
        if wl.coord not in ("LEGACY", "HALF_PIXEL"):
            return "ONNX RoiAlign has no %s coordinates (output_half_pixel/half_pixel only)" % wl.coord
        if wl.pool == "MAX":
            return ("ONNX RoiAlign's max is our MAX_ONNX (max over the 4 weighted taps), it cannot express MAX "
                    "(max of the bilinear sums)")
        return None

    def _model(self, wl):
        helper, TP = self.helper, self.TensorProto
        node = helper.make_node(
            "RoiAlign", ["X", "rois", "batch_indices"], ["Y"],
            mode="avg" if wl.pool == "AVG" else "max",
            output_height=wl.ph, output_width=wl.pw,
            sampling_ratio=max(wl.ratio, 0),  # ONNX: 0 is adaptive; negative values are not allowed
            spatial_scale=wl.scale,
            coordinate_transformation_mode="output_half_pixel" if wl.coord == "LEGACY" else "half_pixel")
        graph = helper.make_graph(
            [node], "roialign",
            [helper.make_tensor_value_info("X", TP.FLOAT, [wl.n, wl.c, wl.h, wl.w]),
             helper.make_tensor_value_info("rois", TP.FLOAT, [wl.k, 4]),
             helper.make_tensor_value_info("batch_indices", TP.INT64, [wl.k])],
            [helper.make_tensor_value_info("Y", TP.FLOAT, [wl.k, wl.c, wl.ph, wl.pw])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.OPSET)],
                                  producer_name="roialign-peers")
        model.ir_version = 8  # the IR version of opset 16; newer onnx packages default to an IR ORT may not read
        self.onnx.checker.check_model(model)
        return model.SerializeToString()

    def prepare(self, wl, threads):
        ort = self.ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        sess = ort.InferenceSession(self._model(wl), so, providers=["CPUExecutionProvider"])
        out = np.empty((wl.k, wl.c, wl.ph, wl.pw), dtype=np.float32)
        # IOBinding: inputs and the output buffer are bound once, so a timed run is the kernel plus ORT's
        # per-run overhead (tens of microseconds), without copies or output allocation.
        io = sess.io_binding()
        io.bind_cpu_input("X", wl.x)
        io.bind_cpu_input("rois", wl.rois4)
        io.bind_cpu_input("batch_indices", wl.batch_indices)
        io.bind_output("Y", "cpu", 0, np.float32, list(out.shape), out.ctypes.data)

        def run():
            sess.run_with_iobinding(io)

        def fetch():
            return out.copy()

        run._keep = (sess, io, out)  # keep alive
        return run, fetch


class OpenVinoPeer:
    peer = "openvino"
    variant = "NCHW"
    ALIGNED = {"LEGACY": "asymmetric", "HALF_PIXEL": "half_pixel_for_nn", "HALF_PIXEL_CENTERED": "half_pixel"}

    def __init__(self):
        self.version = None
        self.unavailable = None
        try:
            import openvino as ov
            try:
                import openvino.opset9 as ops
            except ImportError:  # releases before 2025 keep the opsets under openvino.runtime
                import openvino.runtime.opset9 as ops
            core = ov.Core()
        except Exception as e:
            self.unavailable = "cannot import openvino (%s); %s" % (short_exc(e), OV_PIP_HINT)
            return
        self.ov, self.ops, self.core = ov, ops, core
        ver = getattr(ov, "__version__", None) or ov.get_version()
        self.version = "openvino %s (opset9 ROIAlign, CPU plugin, f32)" % ver

    def check_mode(self, wl):
        if wl.coord not in self.ALIGNED:
            return "OpenVINO's ROIAlign has no %s coordinates" % wl.coord
        if wl.pool == "MAX_ONNX":
            return "OpenVINO's max pools the bilinear sums (our MAX family), not the max over taps (MAX_ONNX)"
        if wl.pool == "MAX" and wl.map_min < 0:
            return ("OpenVINO's CPU max is max(0, MAX) (its accumulator starts at 0), equal to our MAX only for "
                    "a non-negative map; this map's minimum is %.3g" % wl.map_min)
        return None

    def prepare(self, wl, threads):
        ov, ops = self.ov, self.ops
        x = ops.parameter([wl.n, wl.c, wl.h, wl.w], ov.Type.f32, name="X")
        rois = ops.parameter([wl.k, 4], ov.Type.f32, name="rois")
        bidx = ops.parameter([wl.k], ov.Type.i32, name="batch_indices")
        node = ops.roi_align(x, rois, bidx, wl.ph, wl.pw, max(wl.ratio, 0), wl.scale,
                             "avg" if wl.pool == "AVG" else "max", self.ALIGNED[wl.coord])
        model = ov.Model([node], [x, rois, bidx], "roialign")
        compiled = openvino_compile(self.core, model, threads)
        bidx32 = np.ascontiguousarray(wl.batch_indices.astype(np.int32))
        return openvino_run(ov, compiled, (wl.x, wl.rois4, bidx32))


class OpenVinoRotatedPeer(OpenVinoPeer):
    """OpenVINO's opset15 ROIAlignRotated on a rotated workload, timed once per thread count (see the docstring)."""
    variant = "ROIAlignRotated-15"
    rotated = "rotated"
    single_run = True

    def __init__(self):
        super().__init__()
        if self.unavailable:
            return
        try:
            try:
                import openvino.opset15 as ops15
            except ImportError:
                import openvino.runtime.opset15 as ops15
        except Exception as e:
            self.unavailable = "this openvino has no opset15 (%s)" % short_exc(e)
            return
        self.ops15 = ops15
        self.version = self.version.replace("opset9 ROIAlign", "opset15 ROIAlignRotated")

    def check_mode(self, wl):
        if not wl.rotated:
            return "ROIAlignRotated takes rotated RoIs; the opset9 ROIAlign row covers axis-aligned workloads"
        if wl.pool != "AVG":
            return "OpenVINO's ROIAlignRotated averages only (pool_mode %s)" % wl.pool
        if wl.coord != "HALF_PIXEL":
            return "OpenVINO's ROIAlignRotated is always aligned (HALF_PIXEL), not %s" % wl.coord
        return None

    def prepare(self, wl, threads):
        ov, ops = self.ov, self.ops
        x = ops.parameter([wl.n, wl.c, wl.h, wl.w], ov.Type.f32, name="X")
        rois = ops.parameter([wl.k, 5], ov.Type.f32, name="rois")
        bidx = ops.parameter([wl.k], ov.Type.i32, name="batch_indices")
        node = self.ops15.roi_align_rotated(x, rois, bidx, wl.ph, wl.pw, max(wl.ratio, 0), wl.scale,
                                            wl.rotation == "CLOCKWISE")
        model = ov.Model([node], [x, rois, bidx], "roialign_rotated")
        compiled = openvino_compile(self.core, model, threads)
        rois5 = wl.rois5.copy()
        if wl.angle_unit == "DEGREES":  # as roialign converts: in double, rounded once to float32
            rois5[:, 4] = (wl.rois5[:, 4].astype(np.float64) * np.pi / 180.0).astype(np.float32)
        bidx32 = np.ascontiguousarray(wl.batch_indices.astype(np.int32))
        return openvino_run(ov, compiled, (wl.x, np.ascontiguousarray(rois5), bidx32))


class OpenVinoRotatedExtensionPeer(OpenVinoRotatedPeer):
    """OpenVINO with libroialign_openvino.so on a rotated workload: variant "mmcv ONNX+roialign" reads an ONNX model
    with mmcv's MMCVRoIAlignRotated ([K,6] rows, radians), variant "ROIAlignRotated-15+roialign" is the
    ROIAlignRotated-15 model after python/roialign/openvino.py's replace_roi_align_rotated (docs/openvino.md). Both
    run roialign's kernel on the CPU plugin's threads; timed as the other peers (median of the repeats)."""
    single_run = False

    def __init__(self, form):
        super().__init__()
        self.form = form
        self.variant = "mmcv ONNX+roialign" if form == "mmcv" else "ROIAlignRotated-15+roialign"
        path = os.environ.get("ROIALIGN_OPENVINO_EXTENSION", "")
        if self.unavailable:
            return
        try:
            if not os.path.isfile(path):
                raise ImportError("ROIALIGN_OPENVINO_EXTENSION=%r is not a file" % path)
            self.core = self.ov.Core()
            self.core.add_extension(path)
            if form == "mmcv":
                import onnx
                from onnx import helper, TensorProto
                self.onnx, self.helper, self.TensorProto = onnx, helper, TensorProto
            else:
                import importlib.util
                here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "roialign",
                                    "openvino.py")
                spec = importlib.util.spec_from_file_location("roialign_openvino_helper", here)
                self.helper_module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(self.helper_module)
        except Exception as e:
            self.unavailable = "no roialign extension: %s" % short_exc(e)
            return
        self.extension = path
        self.version = self.version.replace("opset15 ROIAlignRotated", "%s + %s" % (
            "ONNX mmcv::MMCVRoIAlignRotated" if form == "mmcv" else "ROIAlignRotated-15 replaced",
            os.path.basename(path)))

    @staticmethod
    def _radians(wl, rows):
        rows = rows.copy()
        if wl.angle_unit == "DEGREES":  # as roialign converts: in double, rounded once to float32
            rows[:, -1] = (rows[:, -1].astype(np.float64) * np.pi / 180.0).astype(np.float32)
        return np.ascontiguousarray(rows)

    def prepare(self, wl, threads):
        ov = self.ov
        if self.form != "mmcv":
            ops = self.ops
            x = ops.parameter([wl.n, wl.c, wl.h, wl.w], ov.Type.f32, name="X")
            rois = ops.parameter([wl.k, 5], ov.Type.f32, name="rois")
            bidx = ops.parameter([wl.k], ov.Type.i32, name="batch_indices")
            node = self.ops15.roi_align_rotated(x, rois, bidx, wl.ph, wl.pw, max(wl.ratio, 0), wl.scale,
                                                wl.rotation == "CLOCKWISE")
            model = ov.Model([node], [x, rois, bidx], "roialign_rotated")
            if self.helper_module.replace_roi_align_rotated(model, self.extension) != 1:
                raise Skip("the pass did not replace ROIAlignRotated-15")
            compiled = openvino_compile(self.core, model, threads)
            bidx32 = np.ascontiguousarray(wl.batch_indices.astype(np.int32))
            return openvino_run(ov, compiled, (wl.x, self._radians(wl, wl.rois5), bidx32))
        helper, TP = self.helper, self.TensorProto
        node = helper.make_node("MMCVRoIAlignRotated", ["features", "rois"], ["Y"], domain="mmcv",
                                output_height=wl.ph, output_width=wl.pw, spatial_scale=wl.scale,
                                sampling_ratio=max(wl.ratio, 0), aligned=1, clockwise=int(wl.rotation == "CLOCKWISE"))
        graph = helper.make_graph(
            [node], "mmcv_roi_align_rotated",
            [helper.make_tensor_value_info("features", TP.FLOAT, [wl.n, wl.c, wl.h, wl.w]),
             helper.make_tensor_value_info("rois", TP.FLOAT, [wl.k, 6])],
            [helper.make_tensor_value_info("Y", TP.FLOAT, [wl.k, wl.c, wl.ph, wl.pw])])
        onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11),
                                                             helper.make_opsetid("mmcv", 1)])
        onnx_model.ir_version = 7
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:  # read_model takes ONNX from a file
            path = os.path.join(tmp, "rotated.onnx")
            self.onnx.save(onnx_model, path)
            model = self.core.read_model(path)
        if not any(op.get_type_name() == "RoialignRoiAlignRotated" for op in model.get_ops()):
            raise Skip("the extension did not convert MMCVRoIAlignRotated")
        compiled = openvino_compile(self.core, model, threads)
        return openvino_run(ov, compiled, (wl.x, self._radians(wl, wl.rois)))


def openvino_compile(core, model, threads):
    """`model` compiled for the CPU plugin as every OpenVINO peer is timed: `threads` threads, f32, one stream."""
    return core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": int(threads), "INFERENCE_PRECISION_HINT": "f32",
                                             "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})


def openvino_run(ov, compiled, inputs):
    """(run, fetch) of one infer request of an OpenVINO compiled model on `inputs`, shared without a copy per run."""
    req = compiled.create_infer_request()
    for i, a in enumerate(inputs):
        req.set_input_tensor(i, ov.Tensor(a, shared_memory=True))

    def run():
        req.infer()

    def fetch():
        return np.array(req.get_output_tensor(0).data, dtype=np.float32, copy=True)

    run._keep = (compiled, req, inputs)
    return run, fetch


class TvmPeer:
    """TVM's own Relax roi_align (dispatch=False) or the same module after roialign's dispatch pass."""
    peer = "tvm"

    def __init__(self, layout, dispatch):
        self.layout, self.dispatch = layout, dispatch
        self.variant = layout + ("+roialign" if dispatch else "")
        self.version = None
        self.unavailable = None
        try:
            tvm, relax = _import_tvm()
            if dispatch:
                self.dispatcher = _load_tvm_dispatch()
                self.dispatcher.load_library()
        except Exception as e:
            self.unavailable = "cannot use apache-tvm%s (%s)" % (" with roialign's dispatch" if dispatch else "",
                                                                 short_exc(e))
            return
        from tvm.target import codegen
        self.tvm, self.relax = tvm, relax
        mcpu = codegen.llvm_get_system_cpu()
        self.target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
        self.version = "apache-tvm %s (Relax roi_align, llvm -mcpu=%s)" % (tvm.__version__, mcpu)

    def check_mode(self, wl):
        if wl.coord not in ("LEGACY", "LEGACY_UNCLAMPED"):
            return ("TVM's roi_align has LEGACY (aligned=False) and LEGACY_UNCLAMPED (aligned=True) coordinates, "
                    "not %s" % wl.coord)
        if wl.pool not in ("AVG", "MAX"):
            return "TVM's roi_align pools avg and max (the max of bilinear samples), not %s" % wl.pool
        return None

    def prepare(self, wl, threads):
        tvm, relax = self.tvm, self.relax
        tvm.get_global_func("runtime.config_threadpool")(1, threads)  # 1: kBig, all cores
        if tvm.runtime.num_threads() != threads:
            raise Skip("TVM runs %d threads when asked for %d" % (tvm.runtime.num_threads(), threads))
        nhwc = self.layout == "NHWC"
        x = np.ascontiguousarray(wl.x.transpose(0, 2, 3, 1)) if nhwc else wl.x
        bb = relax.BlockBuilder()
        xv = relax.Var("x", relax.TensorType(x.shape, "float32"))
        rv = relax.Var("rois", relax.TensorType(wl.rois.shape, "float32"))
        with bb.function("main", [xv, rv]):
            aligned = wl.coord == "LEGACY_UNCLAMPED"
            y = bb.emit(relax.op.vision.roi_align(xv, rv, (wl.ph, wl.pw), wl.scale, wl.ratio, aligned, self.layout,
                                                  "avg" if wl.pool == "AVG" else "max"))
            bb.emit_func_output(y)
        mod = bb.get()
        if self.dispatch:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("error", self.dispatcher.DispatchWarning)  # a refusal is not a TVM+roialign row
                mod = self.dispatcher.dispatch_roi_align(mod)
        vm = relax.VirtualMachine(relax.build(mod, self.target), tvm.cpu())
        main = vm["main"]
        args = (tvm.runtime.tensor(x), tvm.runtime.tensor(wl.rois))
        result = [None]

        def run():
            result[0] = main(*args)

        def fetch():
            out = result[0].numpy()
            return np.ascontiguousarray(out.transpose(0, 3, 1, 2) if nhwc else out, dtype=np.float32)

        run._keep = (vm, args)
        return run, fetch


def _import_tvm():
    # TVM's pool is sized once, from TVM_NUM_THREADS (default: half the logical CPUs on x86); make it the whole
    # machine so that config_threadpool can pick any t. tvm-ffi would JIT-compile a torch addon on import (it fails
    # against Debian's torch 1.13 and costs seconds); tvm.relax calls that loader itself, hence the stub too.
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
    import tvm_ffi._optional_torch_c_dlpack as addon
    addon.load_torch_c_dlpack_extension = lambda: None
    import tvm
    from tvm import relax
    return tvm, relax


def _load_tvm_dispatch():
    """python/roialign/tvm.py on its own (it needs tvm and libroialign_tvm.so, not the built roialign package)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "roialign", "tvm.py")
    spec = importlib.util.spec_from_file_location("roialign_tvm_dispatch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class OpenVinoExtensionPeer(OpenVinoPeer):
    """OpenVINO with libroialign_openvino.so: the ONNX model of the onnxruntime peer, read by core.read_model after
    core.add_extension (ROIALIGN_OPENVINO_EXTENSION), so RoiAlign runs roialign's kernel on the CPU plugin's threads.
    The ONNX model cannot express HALF_PIXEL_CENTERED or MAX (see onnxruntime)."""
    variant = "NCHW+roialign"
    OPSET = OnnxRuntimePeer.OPSET
    _model = OnnxRuntimePeer._model
    check_mode = OnnxRuntimePeer.check_mode

    def __init__(self):
        super().__init__()
        path = os.environ.get("ROIALIGN_OPENVINO_EXTENSION", "")
        if self.unavailable:
            return
        try:
            import onnx
            from onnx import helper, TensorProto
            if not os.path.isfile(path):
                raise ImportError("ROIALIGN_OPENVINO_EXTENSION=%r is not a file (bench/run_layout_report.sh builds "
                                  "it when the openvino wheel's SDK is in .peers/)" % path)
            self.core.add_extension(path)
        except Exception as e:
            self.unavailable = "no roialign extension: %s" % short_exc(e)
            return
        self.onnx, self.helper, self.TensorProto = onnx, helper, TensorProto
        self.version = self.version.replace("opset9 ROIAlign", "ONNX opset %d RoiAlign + %s" % (
            self.OPSET, os.path.basename(path)))

    def prepare(self, wl, threads):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:  # read_model takes ONNX from a file
            path = os.path.join(tmp, "roialign.onnx")
            with open(path, "wb") as f:
                f.write(self._model(wl))
            model = self.core.read_model(path)
        if not any(op.get_type_name() == "RoialignRoiAlign" for op in model.get_ops()):
            raise Skip("the extension did not convert RoiAlign")
        compiled = openvino_compile(self.core, model, threads)
        return openvino_run(self.ov, compiled, (wl.x, wl.rois4, wl.batch_indices))


# ---------------------------------------------------------------------------------------------------------------
# Checking and timing
# ---------------------------------------------------------------------------------------------------------------

def compare(out, ref):
    """Returns (ok, max_abs_err, detail)."""
    out = np.asarray(out)
    if out.shape != ref.shape:
        return False, float("inf"), "shape %s, expected %s" % (out.shape, ref.shape)
    if ref.size == 0:
        return True, 0.0, ""
    a = out.astype(np.float64)
    b = ref.astype(np.float64)
    err = np.abs(a - b)
    err = np.where(np.isfinite(err), err, np.inf)
    ratio = err / (ABS_TOL + REL_TOL * np.abs(b))
    idx = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    max_err = float(err.max())
    ok = bool(ratio[idx] <= 1.0)
    detail = "worst at (k=%d, c=%d, ph=%d, pw=%d): peer %r, ref %r" % (
        idx[0], idx[1], idx[2], idx[3], float(a[idx]), float(b[idx]))
    return ok, max_err, detail


def time_median_ms(run, repeats):
    # Untimed warm-up beyond the checked run, for peers whose first calls are slow (lazy allocations, thread
    # pools starting): up to 2 more runs, but stop after 0.2 s so large workloads do not pay twice.
    t_end = time.perf_counter() + 0.2
    for _ in range(2):
        run()
        if time.perf_counter() > t_end:
            break
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def measure(peer, wl, threads, repeats):
    row = {"peer": peer.peer, "variant": peer.variant, "version": peer.version, "workload": wl.name,
           "threads": threads, "ms": None, "status": None, "max_err": None, "runs": None, "compared_with": None}
    if peer.unavailable:
        row["status"] = "skipped: " + peer.unavailable
        return row
    serves = getattr(peer, "rotated", None)  # None: axis-aligned RoIs only; "axis"; "rotated" (rotated only)
    if wl.rotated and serves is None:
        row["status"] = "skipped: %s %s has no rotated RoIs" % (peer.peer, peer.variant)
        return row
    ref, row["compared_with"] = (wl.ref_axis, "ref_axis") if wl.rotated and serves == "axis" else (wl.ref, "ref")
    if bool(wl.levels) != bool(getattr(peer, "pyramid", False)):
        row["status"] = "skipped: " + ("a single-map peer; this workload is a feature pyramid" if wl.levels else
                                       "a pyramid peer; this workload has one map")
        return row
    reason = peer.check_mode(wl)
    if reason:
        row["status"] = "skipped: " + reason
        return row
    single = getattr(peer, "single_run", False)
    try:
        run, fetch = peer.prepare(wl, threads)
        t0 = time.perf_counter()
        run()  # the checked run doubles as the warm-up (and is the timed run of a peer timed once)
        once_ms = (time.perf_counter() - t0) * 1e3
        out = fetch()
    except Skip as e:
        row["status"] = "skipped: %s" % e
        return row
    except Exception as e:  # the peer refused the model or failed at run time: say so, never fake a number
        row["status"] = "skipped: %s failed: %s" % (peer.peer, short_exc(e))
        return row
    ok, max_err, detail = compare(out, ref)
    row["max_err"] = max_err
    if not ok:
        row["status"] = "mismatch: max err %.3g (tolerance %g + %g*|ref|; %s)" % (max_err, ABS_TOL, REL_TOL, detail)
        return row
    row["ms"] = round(once_ms if single else time_median_ms(run, repeats), 4)
    row["runs"] = 1 if single else max(1, repeats)
    row["status"] = "ok"
    return row


# ---------------------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------------------

def make_peers(names):
    peers = []
    for name in names:
        if name == "torchvision":
            peers += [TorchvisionPeer(channels_last=False), TorchvisionPeer(channels_last=True),
                      TorchvisionMultiScalePeer(channels_last=False), TorchvisionMultiScalePeer(channels_last=True)]
        elif name == "onnxruntime":
            peers.append(OnnxRuntimePeer())
        elif name == "openvino":
            peers += [OpenVinoPeer(), OpenVinoExtensionPeer(), OpenVinoRotatedPeer(),
                      OpenVinoRotatedExtensionPeer("mmcv"), OpenVinoRotatedExtensionPeer("ov15")]
        elif name == "tvm":
            peers += [TvmPeer(layout, dispatch) for dispatch in (False, True) for layout in ("NCHW", "NHWC")]
        else:
            raise SystemExit("unknown peer %r (known: torchvision, onnxruntime, openvino, tvm)" % name)
    return peers


def print_table(rows, peers):
    wn = max([len("workload")] + [len(r["workload"]) for r in rows])
    print("%-*s %-12s %-14s %3s %10s  %s" % (wn, "workload", "peer", "variant", "thr", "ms", "status"))
    for r in rows:
        ms = "%10.3f" % r["ms"] if r["ms"] is not None else "%10s" % "-"
        status = r["status"] if len(r["status"]) <= 110 else r["status"][:107] + "..."
        print("%-*s %-12s %-14s %3d %s  %s" % (wn, r["workload"], r["peer"], r["variant"], r["threads"], ms, status))
    seen = set()
    for p in peers:
        if p.peer in seen:
            continue
        seen.add(p.peer)
        print("version %-12s %s" % (p.peer, p.version or "(not available: %s)" % p.unavailable))


def parse_threads(text):
    try:
        threads = sorted({int(t) for t in text.split(",") if t.strip()})
    except ValueError:
        raise SystemExit("--threads wants a comma-separated list of integers, got %r" % text)
    if not threads or min(threads) < 1:
        raise SystemExit("--threads wants positive integers, got %r" % text)
    return threads


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="directory with NAME.json/.map.f32/.rois.f32/.ref.f32")
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per measurement; the median is reported")
    ap.add_argument("--threads", help="comma-separated thread counts, overriding each workload's list")
    ap.add_argument("--only", action="append", help="workload NAME to run (repeatable, or comma-separated)")
    ap.add_argument("--peers", default="torchvision,onnxruntime,openvino,tvm",
                    help="comma-separated peers to run (default: all)")
    args = ap.parse_args(argv)

    only = set()
    for o in args.only or []:
        only.update(s for s in o.split(",") if s)
    override = parse_threads(args.threads) if args.threads else None

    workloads = find_workloads(args.data, only)
    if not workloads:
        log("no workloads found in %s%s" % (args.data, " matching %s" % sorted(only) if only else ""))
        return 1

    peers = make_peers([p.strip() for p in args.peers.split(",") if p.strip()])
    for p in peers:
        log("peer %-12s %-14s %s" % (p.peer, p.variant, p.version or "skipped: " + p.unavailable))

    rows = []
    for wl in workloads:
        log("workload %s: %s" % (wl.name, wl.describe()))
        for threads in override or wl.threads:
            for p in peers:
                t0 = time.perf_counter()
                row = measure(p, wl, threads, args.repeats)
                rows.append(row)
                status = row["status"] if len(row["status"]) <= 150 else row["status"][:147] + "..."
                log("  %-12s %-14s %d thread(s): %s%s (%.1f s)"
                    % (p.peer, p.variant, threads, "%.3f ms " % row["ms"] if row["ms"] is not None else "",
                       status, time.perf_counter() - t0))

    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"peers": rows}, f, indent=1)
        f.write("\n")
    log("wrote %s" % args.out)
    print_table(rows, peers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
