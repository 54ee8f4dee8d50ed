# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Loads roialign's PyTorch operator library (engines/torch/) into torch, once.

After :func:`load`, ``torch.ops.roialign.roi_align`` and ``torch.ops.roialign.multi_scale_roi_align`` exist, and
models that use them can be traced, scripted, saved and exported to ONNX (the symbolic is registered here too).
The library is the file that ``ROIALIGN_TORCH_LIBRARY`` names, or else ``libroialign_torch.so`` beside this file,
which the package build puts there when it finds the LibTorch of the interpreter's torch (python/CMakeLists.txt).
That one is loaded only into the torch release it was built for (``_torch_ops_build.txt``): LibTorch's C++ ABI
changes between releases.
"""
import os
import re
import threading

_lock = threading.Lock()
_loaded = None
_failure = None  # why the library cannot be loaded, once a load failed


def _here(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def library_path():
    """The operator library this package would load, or None if there is none."""
    path = os.environ.get("ROIALIGN_TORCH_LIBRARY")
    if path:
        return path
    here = _here("libroialign_torch.so")
    return here if os.path.exists(here) else None


def _release(version):
    match = re.match(r"[0-9]+\.[0-9]+\.[0-9]+", version)
    return match.group(0) if match else version


def _check_torch_release(torch):
    """ImportError if the package's own library was built for another torch release than the one running."""
    try:
        with open(_here("_torch_ops_build.txt")) as f:
            built_for = f.read().strip()
    except OSError:
        return  # a library named by ROIALIGN_TORCH_LIBRARY, or a build tree: the caller's to match
    if built_for != _release(torch.__version__):
        raise ImportError("roialign's torch operators were built for torch %s, but torch %s is running; rebuild "
                          "the package (pip install .) against this torch" % (built_for, torch.__version__))


def load():
    """Registers the ops with torch (idempotent); returns ``torch.ops.roialign``. Raises ImportError without them."""
    global _loaded, _failure
    with _lock:
        if _loaded is None:
            import torch

            try:
                path = library_path()
                if path is None:
                    raise ImportError("roialign's torch operators are not installed: this package was built without "
                                      "LibTorch (libroialign_torch.so), and ROIALIGN_TORCH_LIBRARY is not set")
                if not os.environ.get("ROIALIGN_TORCH_LIBRARY"):
                    _check_torch_release(torch)
                try:
                    torch.ops.load_library(path)
                except OSError as e:
                    raise ImportError("roialign's torch operators (%s) do not load: %s" % (path, e)) from None
            except ImportError as e:
                _failure = e
                raise
            _register_onnx_symbolic(torch)
            _loaded = torch.ops.roialign
        return _loaded


def available():
    """``torch.ops.roialign`` if the operators are loaded or load now, else None (a failed load is not retried)."""
    if _loaded is not None:
        return _loaded
    if _failure is not None:
        return None
    try:
        return load()
    except ImportError:
        return None


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
