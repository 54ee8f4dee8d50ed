# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Loads roialign's PyTorch operator library (engines/torch/) into torch, once.

After :func:`load`, ``torch.ops.roialign.roi_align``, ``torch.ops.roialign.multi_scale_roi_align`` and
``torch.ops.roialign.roi_align_rotated`` exist, and
models that use them can be traced, scripted, saved and exported to ONNX (the symbolic is registered here too).
The library is the file that ``ROIALIGN_TORCH_LIBRARY`` names, or else ``libroialign_torch.so`` beside this file,
which the package build puts there when it finds the LibTorch of the interpreter's torch (python/CMakeLists.txt).

LibTorch's C++ ABI changes between releases, so a library is loaded only into the torch it was compiled against,
and what loaded is checked: the release the file records against ``torch.__version__`` before loading, then that
the load resolved against the running LibTorch (no second libc10 or libtorch_cpu mapped beside it) and registered
the operators with it. Any mismatch is an ImportError that names both releases and the fix.
"""
import math
import os
import re
import threading

_lock = threading.Lock()
_loaded = None
_failure = None  # the ImportError of a failed load, raised again on every later attempt

# roialign_torch.cc records the LibTorch release it was compiled against as this prefix and the version, in .rodata.
_BUILT_WITH = b"roialign-torch-built-with-libtorch "
# The files of a LibTorch that a second copy in the process would show (Debian's carry the release in the name).
_LIBTORCH_FILE = re.compile(r"lib(c10|torch_cpu)\.so(\.[0-9.]+)?$")
_FIX = ("reinstall roialign from its source in this environment, so that it builds against the torch it runs with "
        "(pip install --force-reinstall --no-deps <roialign checkout>)")


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


def built_with(path):
    """The LibTorch release (``"2.15.0"``) that the operator library at ``path`` was compiled against, as the file
    records it; None if it records none. Reads the file without loading it."""
    with open(path, "rb") as f:
        data = f.read()
    start = data.find(_BUILT_WITH)
    if start < 0:
        return None
    start += len(_BUILT_WITH)
    return data[start:data.find(b"\0", start)].decode("ascii", "replace")


def _mapped_libtorch():
    """The real paths of the LibTorch files mapped into this process (Linux's /proc/self/maps), or None elsewhere."""
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    paths = set()
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) == 6 and _LIBTORCH_FILE.search(os.path.basename(fields[5])):
            paths.add(os.path.realpath(fields[5]))
    return paths


def _elf_dynamic(path):
    """(DT_NEEDED names, DT_SONAME or None) of the 64-bit little-endian ELF file at ``path``; None for other files.
    Reads the section headers and the dynamic section only (LibTorch's files are hundreds of MB)."""
    import struct

    with open(path, "rb") as f:
        header = f.read(64)
        if header[:6] != b"\x7fELF\x02\x01":
            return None
        shoff, = struct.unpack_from("<Q", header, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", header, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        for _, kind, _, _, offset, size, link, _, _, _ in sections:
            if kind != 6:  # SHT_DYNAMIC; its sh_link is the string table
                continue
            f.seek(offset)
            entries = f.read(size)
            strings = sections[link]
            f.seek(strings[4])
            text = f.read(strings[5])
            name = lambda at: text[at:text.index(b"\0", at)].decode("utf-8", "replace")  # noqa: E731
            needed, soname = [], None
            for i in range(0, len(entries) - 15, 16):
                tag, value = struct.unpack_from("<qQ", entries, i)
                if tag == 1:  # DT_NEEDED
                    needed.append(name(value))
                elif tag == 14:  # DT_SONAME
                    soname = name(value)
            return needed, soname
    return None


def _foreign_libtorch(path, running_files):
    """The LibTorch files that the library at ``path`` needs and the running torch has not loaded (by SONAME, as the
    dynamic loader matches them), or None where ELF files cannot be read. Loading such a library would map a second
    LibTorch into the process, whose start-up can crash it before any error could be raised."""
    try:
        ours = _elf_dynamic(path)
        loaded = set()
        for f in running_files:
            dynamic = _elf_dynamic(f)
            loaded.add(dynamic[1] if dynamic and dynamic[1] else os.path.basename(f))
    except (OSError, ValueError, IndexError):
        return None
    if ours is None:
        return None
    return sorted(n for n in ours[0] if _LIBTORCH_FILE.search(n) and n not in loaded)


def _check_and_load(torch, path):
    """Loads the library at ``path`` into ``torch``, or ImportError: built for another release, symbols that do not
    resolve, a second LibTorch pulled in, or operators that did not reach this torch's dispatcher."""
    running = torch.__version__
    where = "roialign's torch operators (%s)" % path
    try:
        built = built_with(path)
    except OSError as e:
        raise ImportError("%s cannot be read: %s" % (where, e)) from None
    if built is None:
        raise ImportError("%s record no LibTorch release (a library from an older roialign); torch %s is running: %s"
                          % (where, running, _FIX))
    if built != _release(running):
        raise ImportError("%s were built for torch %s, but torch %s is running: %s"
                          % (where, built, running, _FIX))
    before = _mapped_libtorch()
    foreign = _foreign_libtorch(path, before) if before else None
    if foreign:
        raise ImportError("%s were built for torch %s and torch %s is running, but the library links another LibTorch "
                          "(%s; torch runs on %s), which loading it would map beside this one: %s"
                          % (where, built, running, ", ".join(foreign), ", ".join(sorted(before)), _FIX))
    try:
        torch.ops.load_library(path)
    except OSError as e:
        raise ImportError("%s were built for torch %s and torch %s is running, but the library does not load against "
                          "it (%s): %s" % (where, built, running, e, _FIX)) from None
    after = _mapped_libtorch()
    if before is not None and after is not None and after - before:
        raise ImportError("%s were built for torch %s and torch %s is running, but loading them mapped another "
                          "LibTorch beside it (%s; torch runs on %s): the library was linked against the wrong "
                          "LibTorch. %s" % (where, built, running, ", ".join(sorted(after - before)),
                                            ", ".join(sorted(before)) or "?", _FIX[0].upper() + _FIX[1:]))
    try:
        torch.ops.roialign.roi_align.default
    except (AttributeError, RuntimeError):
        raise ImportError("%s loaded into torch %s (built for %s) but registered no roialign::roi_align with it: %s"
                          % (where, running, built, _FIX)) from None


def load():
    """Registers the ops with torch (idempotent); returns ``torch.ops.roialign``. Raises ImportError without them,
    and for a library that does not match the running torch (the same error on every call)."""
    global _loaded, _failure
    with _lock:
        if _loaded is None:
            if _failure is not None:
                raise _failure
            import torch

            try:
                path = library_path()
                if path is None:
                    raise ImportError("roialign's torch operators are not installed: this package was built without "
                                      "LibTorch (libroialign_torch.so), and ROIALIGN_TORCH_LIBRARY is not set")
                _check_and_load(torch, path)
            except ImportError as e:
                _failure = e
                raise
            _register_onnx_symbolic(torch)
            _loaded = torch.ops.roialign
        return _loaded


def available():
    """``torch.ops.roialign`` if the operators are loaded or load now; None if the package has no operator library.
    A library that exists but does not match the running torch raises its ImportError: the package does not fall
    back to another path for one kind of caller and fail for another."""
    if _loaded is not None:
        return _loaded
    if library_path() is None:
        return None
    return load()


def _register_onnx_symbolic(torch):
    """torch.onnx.export writes roialign::roi_align as ONNX RoiAlign (opset 16), where the attributes allow it,
    roialign::multi_scale_roi_align as torchvision's own export writes its pooler: each box's level, then one RoiAlign
    per level over that level's boxes, scattered into the result; and roialign::roi_align_rotated as mmcv's custom
    node mmcv::MMCVRoIAlignRotated (opset 11 and later)."""
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
            # floor(k0 + log2(sqrt(area) / s0) + 1e-6) clamped to [k_min, k_max] of the first and last scales, as
            # torchvision's LevelMapper; a box without area pools from the first map (log2(0) = -inf). A level that
            # names no map (scales that skip a level) matches no map below, and its rows stay zero.
            k_min, k_max = -int(round(math.log2(scales[0]))), -int(round(math.log2(scales[-1])))
            level = g.op("Floor", g.op("Add", g.op("Add", tensor(g, float(level0), torch.float), log2(ratio)),
                                       tensor(g, 1e-6, torch.float)))
            level = g.op("Clip", level, tensor(g, float(k_min), torch.float), tensor(g, float(k_max), torch.float))
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

    def roi_align_rotated(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned,
                          clockwise, angle_unit, layout, pool_mode):
        """mmcv's custom node mmcv::MMCVRoIAlignRotated (what mmcv's exporter writes and its ONNX Runtime and TensorRT
        plugins read): the [K, 6] rois in radians, the attributes of mmcv's RoIAlignRotated. output_width is the
        true width (mmcv's own exporter writes the height there). DEGREES (detectron2) become radians in the graph:
        the rois times (1, 1, 1, 1, 1, pi/180)."""
        layout, pool_mode, unit = const(layout, "s"), const(pool_mode, "s"), const(angle_unit, "s")
        if layout.upper() != "NCHW":
            raise RuntimeError("roialign: mmcv's MMCVRoIAlignRotated reads NCHW maps; export with layout='NCHW' "
                               "(got %r)" % layout)
        if pool_mode.upper() != "AVG":
            raise RuntimeError("roialign: mmcv's MMCVRoIAlignRotated averages; it has no pool mode for %s"
                               % pool_mode.upper())
        if unit.upper() == "DEGREES":
            scalar = rois.type().scalarType() if rois.isCompleteTensor() else None
            row = [1.0, 1.0, 1.0, 1.0, 1.0, math.pi / 180.0]
            if scalar in ("Float", "Double"):
                factor = tensor(g, row, torch.float64 if scalar == "Double" else torch.float32)
            else:  # the rois' dtype is not known here: the graph casts the factor (opset 15 and later)
                factor = g.op("CastLike", tensor(g, row, torch.float64), rois)
            rois = g.op("Mul", rois, factor)
        elif unit.upper() != "RADIANS":
            raise RuntimeError("roialign: unknown angle_unit %r" % unit)
        # A negative sampling ratio (adaptive) is mmcv's 0.
        return g.op("mmcv::MMCVRoIAlignRotated", input, rois, output_height_i=const(pooled_height, "i"),
                    output_width_i=const(pooled_width, "i"), spatial_scale_f=const(spatial_scale, "f"),
                    sampling_ratio_i=max(int(const(sampling_ratio, "i")), 0), aligned_i=int(bool(const(aligned, "b"))),
                    clockwise_i=int(bool(const(clockwise, "b"))))

    torch.onnx.register_custom_op_symbolic("roialign::roi_align", roi_align, 16)
    torch.onnx.register_custom_op_symbolic("roialign::multi_scale_roi_align", multi_scale_roi_align, 16)
    # mmcv exports its rotated RoIAlign at opset 11 (its deployments' default); the node is the same at every opset.
    torch.onnx.register_custom_op_symbolic("roialign::roi_align_rotated", roi_align_rotated, 11)
