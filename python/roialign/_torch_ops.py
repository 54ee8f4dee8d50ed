# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Loads roialign's PyTorch operator library (engines/torch/) into torch, once.

After :func:`load`, ``torch.ops.roialign.roi_align`` and ``torch.ops.roialign.multi_scale_roi_align`` exist, and
models that use them can be traced, scripted, saved and exported to ONNX (the symbolic is registered here too).
The library is ``libroialign_torch.so`` beside this file (the package builds it when LibTorch is found), or the
file that ``ROIALIGN_TORCH_LIBRARY`` names.
"""
import os
import threading

_lock = threading.Lock()
_loaded = None


def library_path():
    """The operator library this package would load, or None if there is none."""
    path = os.environ.get("ROIALIGN_TORCH_LIBRARY")
    if path:
        return path
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libroialign_torch.so")
    return here if os.path.exists(here) else None


def load():
    """Registers the ops with torch (idempotent); returns ``torch.ops.roialign``. Raises ImportError without them."""
    global _loaded
    with _lock:
        if _loaded is None:
            import torch

            path = library_path()
            if path is None:
                raise ImportError("roialign's torch operators are not installed: this package was built without "
                                  "LibTorch (libroialign_torch.so), and ROIALIGN_TORCH_LIBRARY is not set")
            torch.ops.load_library(path)
            _register_onnx_symbolic(torch)
            _loaded = torch.ops.roialign
        return _loaded


def _register_onnx_symbolic(torch):
    """torch.onnx.export writes roialign::roi_align as ONNX RoiAlign (opset 16), where the attributes allow it."""
    from torch.onnx import symbolic_helper

    def roi_align(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, layout,
                  pool_mode, coordinate_mode):
        layout = symbolic_helper._maybe_get_const(layout, "s")
        pool_mode = symbolic_helper._maybe_get_const(pool_mode, "s").upper()
        aligned = bool(symbolic_helper._maybe_get_const(aligned, "b"))
        coordinate_mode = None if symbolic_helper._is_none(coordinate_mode) else \
            symbolic_helper._maybe_get_const(coordinate_mode, "s").upper()
        if coordinate_mode is None:
            coordinate_mode = "HALF_PIXEL" if aligned else "LEGACY"
        if layout.upper() != "NCHW":
            raise RuntimeError("roialign: ONNX RoiAlign reads NCHW maps; export with layout='NCHW' (got %r)" % layout)
        # ONNX's two coordinate modes are roialign's HALF_PIXEL and LEGACY; its max is roialign's MAX_ONNX.
        modes = {"HALF_PIXEL": "half_pixel", "LEGACY": "output_half_pixel"}
        if coordinate_mode not in modes:
            raise RuntimeError("roialign: ONNX RoiAlign has no coordinate mode for %s (it has HALF_PIXEL and LEGACY)"
                               % coordinate_mode)
        pools = {"AVG": "avg", "MAX_ONNX": "max"}
        if pool_mode not in pools:
            raise RuntimeError("roialign: ONNX RoiAlign has no pool mode for %s (its max is roialign's MAX_ONNX)"
                               % pool_mode)
        ratio = symbolic_helper._maybe_get_const(sampling_ratio, "i")
        column0 = g.op("Constant", value_t=torch.tensor([0], dtype=torch.long))
        axis1 = g.op("Constant", value_t=torch.tensor([1], dtype=torch.long))
        batch = g.op("Cast", g.op("Squeeze", g.op("Gather", rois, column0, axis_i=1), axis1),
                     to_i=7)  # int64 (ONNX TensorProto.INT64)
        coords = g.op("Gather", rois, g.op("Constant", value_t=torch.tensor([1, 2, 3, 4], dtype=torch.long)),
                      axis_i=1)
        return g.op("RoiAlign", input, coords, batch,
                    spatial_scale_f=symbolic_helper._maybe_get_const(spatial_scale, "f"),
                    output_height_i=symbolic_helper._maybe_get_const(pooled_height, "i"),
                    output_width_i=symbolic_helper._maybe_get_const(pooled_width, "i"),
                    sampling_ratio_i=max(int(ratio), 0), mode_s=pools[pool_mode],
                    coordinate_transformation_mode_s=modes[coordinate_mode])

    torch.onnx.register_custom_op_symbolic("roialign::roi_align", roi_align, 16)
