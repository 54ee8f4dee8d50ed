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
import math
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
    """torch.onnx.export writes roialign::roi_align as ONNX RoiAlign (opset 16), where the attributes allow it, and
    roialign::multi_scale_roi_align as torchvision's own export writes its pooler: each box's level, then one RoiAlign
    per level over that level's boxes, scattered into the result."""
    from torch.onnx import symbolic_helper

    def const(value, kind):
        return symbolic_helper._maybe_get_const(value, kind)

    def tensor(g, values, dtype=torch.long):
        return g.op("Constant", value_t=torch.tensor(values, dtype=dtype))

    def roi_align_attributes(sampling_ratio, aligned, layout, pool_mode, coordinate_mode):
        """RoiAlign's mode attributes for roialign's (constant) arguments, or RuntimeError where ONNX has none."""
        if coordinate_mode is None:
            coordinate_mode = "HALF_PIXEL" if aligned else "LEGACY"
        if layout.upper() != "NCHW":
            raise RuntimeError("roialign: ONNX RoiAlign reads NCHW maps; export with layout='NCHW' (got %r)" % layout)
        # ONNX's two coordinate modes are roialign's HALF_PIXEL and LEGACY; its max is roialign's MAX_ONNX.
        modes = {"HALF_PIXEL": "half_pixel", "LEGACY": "output_half_pixel"}
        if coordinate_mode.upper() not in modes:
            raise RuntimeError("roialign: ONNX RoiAlign has no coordinate mode for %s (it has HALF_PIXEL and LEGACY)"
                               % coordinate_mode.upper())
        pools = {"AVG": "avg", "MAX_ONNX": "max"}
        if pool_mode.upper() not in pools:
            raise RuntimeError("roialign: ONNX RoiAlign has no pool mode for %s (its max is roialign's MAX_ONNX)"
                               % pool_mode.upper())
        # A negative sampling ratio (adaptive) is ONNX's 0.
        return {"sampling_ratio_i": max(int(sampling_ratio), 0), "mode_s": pools[pool_mode.upper()],
                "coordinate_transformation_mode_s": modes[coordinate_mode.upper()]}

    def split_rois(g, rois):
        """RoiAlign's inputs from [K, 5] rows (batch_index, x1, y1, x2, y2): the [K, 4] boxes and the [K] indices."""
        batch = g.op("Cast", g.op("Squeeze", g.op("Gather", rois, tensor(g, [0]), axis_i=1), tensor(g, [1])),
                     to_i=7)  # int64 (ONNX TensorProto.INT64)
        return g.op("Gather", rois, tensor(g, [1, 2, 3, 4]), axis_i=1), batch

    def roi_align(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, layout,
                  pool_mode, coordinate_mode):
        attributes = roi_align_attributes(
            const(sampling_ratio, "i"), bool(const(aligned, "b")), const(layout, "s"), const(pool_mode, "s"),
            None if symbolic_helper._is_none(coordinate_mode) else const(coordinate_mode, "s"))
        boxes, batch = split_rois(g, rois)
        return g.op("RoiAlign", input, boxes, batch, spatial_scale_f=const(spatial_scale, "f"),
                    output_height_i=const(pooled_height, "i"), output_width_i=const(pooled_width, "i"), **attributes)

    def multi_scale_roi_align(g, features, rois, scales, pooled_height, pooled_width, sampling_ratio, aligned,
                              level_rule, canonical_size, canonical_level, layout):
        attributes = roi_align_attributes(const(sampling_ratio, "i"), bool(const(aligned, "b")), const(layout, "s"),
                                          "AVG", None)
        maps = symbolic_helper._unpack_list(features)
        scales = [float(s) for s in const(scales, "fs")]
        if len(maps) != len(scales) or not maps:
            raise RuntimeError("roialign: multi_scale_roi_align exports with one scale per map (got %d maps and %d "
                               "scales)" % (len(maps), len(scales)))
        rule, size, level0 = const(level_rule, "s").upper(), float(const(canonical_size, "f")), \
            int(const(canonical_level, "i"))
        boxes, batch = split_rois(g, rois)
        # Each box's level, as execution/pyramid_levels.h computes it (docs/multi-level.md), in float32.
        corner = lambda i: g.op("Gather", boxes, tensor(g, [i]), axis_i=1)  # noqa: E731
        area = g.op("Squeeze", g.op("Mul", g.op("Sub", corner(2), corner(0)), g.op("Sub", corner(3), corner(1))),
                    tensor(g, [1]))
        ratio = g.op("Div", g.op("Sqrt", g.op("Relu", area)), tensor(g, size, torch.float))
        log2 = lambda v: g.op("Div", g.op("Log", v), tensor(g, math.log(2.0), torch.float))  # noqa: E731
        last = len(maps) - 1
        if rule == "SCALE":
            # floor(k0 + log2(sqrt(area) / s0) + 1e-6) clamped to the maps' levels; a box without area pools from
            # the finest map (log2(0) = -inf).
            k_min = -int(round(math.log2(scales[0])))
            level = g.op("Floor", g.op("Add", g.op("Add", tensor(g, float(level0), torch.float), log2(ratio)),
                                       tensor(g, 1e-6, torch.float)))
            level = g.op("Clip", level, tensor(g, float(k_min), torch.float),
                         tensor(g, float(k_min + last), torch.float))
            level = g.op("Sub", g.op("Cast", level, to_i=7), tensor(g, k_min))
        elif rule == "OPENVINO":
            # floor(log2(sqrt(area) / s0 + 1e-6) + k0 - 2) clamped to [0, L - 1]; a box without area is not pooled
            # (its rows stay zero: level -1 matches no map).
            level = g.op("Floor", g.op("Add", log2(g.op("Add", ratio, tensor(g, 1e-6, torch.float))),
                                       tensor(g, float(level0 - 2), torch.float)))
            level = g.op("Cast", g.op("Clip", level, tensor(g, 0.0, torch.float), tensor(g, float(last), torch.float)),
                         to_i=7)
            level = g.op("Where", g.op("Greater", area, tensor(g, 0.0, torch.float)), level, tensor(g, -1))
        else:
            raise RuntimeError("roialign: multi_scale_roi_align exports the SCALE and OPENVINO level rules (got %s)"
                               % rule)
        height, width = const(pooled_height, "i"), const(pooled_width, "i")
        # The [K, C, PH, PW] result, zero, in the maps' dtype; then each level's boxes pooled and scattered into it.
        dim = lambda v, i: g.op("Gather", g.op("Shape", v), tensor(g, [i]), axis_i=0)  # noqa: E731
        shape = g.op("Concat", dim(rois, 0), dim(maps[0], 1), tensor(g, [height, width]), axis_i=0)
        result = g.op("CastLike", g.op("ConstantOfShape", shape), maps[0])
        for index, (level_map, scale) in enumerate(zip(maps, scales)):
            rows = g.op("NonZero", g.op("Equal", level, tensor(g, index)))  # [1, K_l]
            pooled = g.op("RoiAlign", level_map, g.op("Gather", boxes, g.op("Squeeze", rows, tensor(g, [0])), axis_i=0),
                          g.op("Gather", batch, g.op("Squeeze", rows, tensor(g, [0])), axis_i=0),
                          spatial_scale_f=scale, output_height_i=height, output_width_i=width, **attributes)
            result = g.op("ScatterND", result, g.op("Transpose", rows, perm_i=[1, 0]), pooled)
        return result

    torch.onnx.register_custom_op_symbolic("roialign::roi_align", roi_align, 16)
    torch.onnx.register_custom_op_symbolic("roialign::multi_scale_roi_align", multi_scale_roi_align, 16)
