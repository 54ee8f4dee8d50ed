# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""RoIAlign (roi_align) for CPUs, with SIMD kernels for NCHW, NHWC and channel-blocked feature maps.

``roialign.roi_align`` is a drop-in for ``torchvision.ops.roi_align`` that also takes numpy arrays, the NHWC layout
(torch's channels_last memory format), max pooling and the other coordinate conventions; on torch tensors it has a
gradient (through roialign's torch operators, docs/torch.md), and ``roialign.roi_align_backward`` computes the
gradient of the map directly, for any kind of array. ``roialign.select`` picks one implementation for a target and
returns a reusable :class:`Kernel`.

What the operator computes is in docs/semantics.md; this package's API in docs/python.md.

Array conventions (the same for ``roi_align`` and ``Kernel.run``):

======================  ==========================================  ==================================================
input                   ``layout="NCHW"``                           ``layout="NHWC"``
======================  ==========================================  ==================================================
``torch.Tensor``        ``[N, C, H, W]``, contiguous                ``[N, C, H, W]`` in ``torch.channels_last`` memory
                        -> ``[K, C, PH, PW]``, contiguous           -> ``[K, C, PH, PW]`` in ``torch.channels_last``
numpy, other DLPack     ``[N, C, H, W]`` -> ``[K, C, PH, PW]``      ``[N, H, W, C]`` -> ``[K, PH, PW, C]``
======================  ==========================================  ==================================================

A torch tensor is always indexed N, C, H, W, as in torch and torchvision; ``layout`` names its memory format. Any
other array has no memory format of its own, so its shape is the memory order. Input in that memory order (C-
contiguous for numpy) is used in place; any other strides are first copied into it.

The channel-blocked layouts ``"NCHW4c"``, ``"NCHW8c"`` and ``"NCHW16c"`` (b = 4, 8, 16) take
``[N, ceil(C/b), H, W, b]`` arrays of every kind (torch tensors too: torch has no memory format for them) and give
``[K, ceil(C/b), PH, PW, b]``; ``channels=`` gives the logical C when it is not a multiple of b. The map's padded
lanes are never read; the result's are written as 0.
"""
import functools
import numbers
import sys

import numpy as np

from . import _roialign

__version__ = _roialign.__version__
__all__ = ["roi_align", "roi_align_backward", "roi_align_rotated", "roi_align_rotated_backward",
           "multi_scale_roi_align", "multi_scale_roi_align_backward", "select", "Kernel", "query_target", "targets",
           "implementations", "DTypeError"]


class DTypeError(TypeError, RuntimeError):
    """An array of a dtype roialign does not compute in (integers, complex, float128, ...): roialign takes float32,
    float16, bfloat16 and float64. A TypeError, as for any argument of the wrong type, and a RuntimeError, as
    torchvision's operators and roialign's own torch operators (``roialign.nn``) raise for a tensor of a dtype they
    have no kernel for, so that ``roialign.roi_align`` and ``roialign.nn.RoIAlign`` refuse an integer tensor alike."""


def _table(kind):
    """{name in this API: value} for one of the library's enums, from its own names (roialign_enum_name): lower
    case ("avg", "half_pixel", "scale"), except layouts ("NCHW"); dtypes as numpy and torch spell them ("F32" ->
    "float32", "BF16" -> "bfloat16")."""
    table = {}
    for value, name in enumerate(_roialign.enum_names(kind)):
        if kind == "dtype":
            name = name.lower().replace("f", "float")
        elif kind != "layout":
            name = name.lower()
        table[name] = value
    return table


_LAYOUTS = _table("layout")
_DTYPES = _table("dtype")
# The library's own dtype names ("f32", "f16", "bf16", "f64", any case) as aliases of this API's, so that
# select(dtype="f64") works; they take precedence over numpy's spellings ("f16" is float128 to numpy).
_DTYPE_ALIASES = {name.lower(): api for name, api in zip(_roialign.enum_names("dtype"), _DTYPES)}
_DTYPE_LIST = ", ".join(list(_DTYPES)[:-1]) + " or " + list(_DTYPES)[-1]  # "float32, float16, bfloat16 or float64"
_POOL_MODES = _table("pool_mode")
_COORDINATE_MODES = _table("coordinate_mode")
_LEVEL_RULES = _table("level_rule")
# Rotated RoIs (docs/semantics.md#rotated-rois): the angle's unit ("radians", "degrees") and its direction.
_ANGLE_UNITS = _table("angle_unit")
_ROTATIONS = _table("rotation")
_ROI_KINDS = _table("roi_kind")
# The channel block b of each blocked layout, from the library (roialign_layout_channel_block): the map is
# [N, ceil(C/b), H, W, b], the result [K, ceil(C/b), PH, PW, b] (docs/semantics.md).
_BLOCKS = {name: b for name, b in zip(_LAYOUTS, _roialign.layout_channel_blocks()) if b > 0}


def _names(table):
    return {value: name for name, value in table.items()}


def _choose(value, table, what):
    if not isinstance(value, str):
        raise TypeError("%s must be a string, one of %s; got %r" % (what, ", ".join(map(repr, table)), value))
    for name in table:
        if name.lower() == value.lower():
            return name
    raise ValueError("unknown %s %r; expected one of %s" % (what, value, ", ".join(map(repr, table))))


def _torch():
    """torch if the process has imported it (a torch tensor cannot exist otherwise), else None."""
    return sys.modules.get("torch")


def _is_tensor(obj):
    torch = _torch()
    return torch is not None and isinstance(obj, torch.Tensor)


# Why a call on the extension refuses an input that requires grad (_no_autograd).
_EXTENSION_HAS_NO_GRADIENT = (
    "roialign: this call runs on roialign's extension, which records no gradient, and an input requires grad. "
    "Tensor calls with the defaults target='host', num_threads=0, no out and layout NCHW or NHWC run on roialign's "
    "torch operators, which have a backward (docs/torch.md); or run this one under torch.no_grad(), or compute the "
    "gradient with roialign.roi_align_backward")
_DOUBLE_BACKWARD = ("roialign: double backwards on roi_align not supported: grad_output requires grad, and the "
                    "gradient roialign computes has no backward of its own")


def _no_autograd(message, *objs):
    """Refuses what would silently go wrong in torch: a result without the gradient an input asks for (``message``
    says why there is none), or a result that torch.jit.trace would record as a constant. The torch operators
    (roialign.nn, docs/torch.md) trace, and have a backward."""
    torch = _torch()
    if torch is None:
        return
    tensors = []
    for o in objs:
        tensors.extend(o if isinstance(o, (list, tuple)) else [o])
    tensors = [t for t in tensors if isinstance(t, torch.Tensor)]
    if not tensors:
        return
    if torch.jit.is_tracing():
        raise RuntimeError("roialign: under torch.jit.trace this call's result would be stored as a constant; use "
                           "torch.ops.roialign.roi_align or the roialign.nn modules, which trace (docs/torch.md)")
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(message)


def _torch_ops_for(input, boxes, target, num_threads, out):
    """``torch.ops.roialign`` when this call goes through roialign's torch operators (docs/torch.md), else None.

    Torch tensors do, with the defaults target="host", num_threads=0 (torch's intra-op threads run the kernel) and
    no ``out``, when the package has its operator library: torch.jit.trace then records the operator, and an input
    that requires grad gets its gradient from it. Any other call runs on the extension, as numpy arrays do."""
    if out is not None or target != "host" or isinstance(num_threads, bool) or num_threads != 0:
        return None
    if not _is_tensor(input):
        return None
    parts = boxes if isinstance(boxes, (list, tuple)) else [boxes]
    if not all(_is_tensor(b) for b in parts):
        return None
    from . import _torch_ops

    return _torch_ops.available()


def _op_rois(torch, boxes, dtype, rotated=False):
    """[K, 5] rows (batch_index, x1, y1, x2, y2) of torch boxes in either form, checked as _boxes checks them; the
    list form is assembled in float64 for a float64 map (``dtype``), else in float32, as the operator reads it.
    ``rotated``: rows of rotated boxes, [K, 6] (batch_index, cx, cy, w, h, angle) or a list of [L, 5]."""
    width, row = (5, "(cx, cy, w, h, angle)") if rotated else (4, "(x1, y1, x2, y2)")
    def floating(b, what):
        if b.device.type != "cpu":
            raise ValueError("roialign runs on the CPU; %s is on %s (move it with .cpu())" % (what, b.device))
        if not b.is_floating_point():
            raise TypeError("%s must hold floating-point coordinates; got %s" % (what, b.dtype))
        return b

    if isinstance(boxes, (list, tuple)):
        rows = []
        for i, b in enumerate(boxes):
            floating(b, "boxes[%d]" % i)
            # Traced, sizes are tensors: the operator and torch.cat check them instead (without a TracerWarning).
            if b.dim() != 2 or (not torch.jit.is_tracing() and b.shape[-1] != width):
                raise ValueError("boxes[%d] must be [L, %d] %s: a list of boxes holds one such array per image, as "
                                 "torchvision's List[Tensor]; got shape %s (for rows that carry their batch index pass "
                                 "one [K, %d] array)" % (i, width, row, tuple(b.shape), width + 1))
            b = b.to(_rois_torch_dtype(torch, dtype))
            rows.append(torch.cat([torch.full_like(b[:, :1], float(i)), b], dim=1))
        return torch.cat(rows, dim=0) if rows else torch.zeros((0, width + 1), dtype=_rois_torch_dtype(torch, dtype))
    floating(boxes, "boxes")
    if boxes.dim() != 2:
        raise ValueError("boxes must be [K, %d] (batch_index, %s) or a list of [L, %d] per image; got shape %s"
                         % (width + 1, row[1:-1], width, tuple(boxes.shape)))
    return boxes


def _rois_torch_dtype(torch, dtype):
    """The torch dtype of the RoIs for a map of dtype name ``dtype``: float64 kernels read them in float64."""
    return torch.float64 if dtype == "float64" else torch.float32


def _op_map(input, what):
    """Checks a torch map as _Map does (ValueError, TypeError); returns its dtype name. The operator reads it."""
    if input.device.type != "cpu":
        raise ValueError("roialign runs on the CPU; %s is on %s (move it with .cpu())" % (what, input.device))
    if input.dim() != 4:
        raise ValueError("%s must be a 4-D tensor [N, C, H, W] (for either layout); got shape %s"
                         % (what, tuple(input.shape)))
    return _dtype_name(input.dtype)


def _op_channels(channels, c, what):
    """channels= with a torch operator's NCHW or NHWC map: its C, else ValueError (as the extension's CheckMap)."""
    if channels is not None and channels != int(c):
        raise ValueError("channels=%d but %s has %d channels (channels= is for the blocked layouts, where C is not a "
                         "multiple of the block)" % (channels, what, int(c)))


def _call_op(op, *args, **kwargs):
    """The operator's result; its refusals of data (RuntimeError with the library's message) as ValueError, as the
    extension raises them."""
    try:
        return op(*args, **kwargs)
    except RuntimeError as e:
        raise ValueError(str(e)) from None


def _dtype_name(dtype):
    """'float32', 'float16', 'bfloat16' or 'float64' for a dtype of numpy or torch, or a name (numpy's, or the
    library's: 'f32', 'f16', 'bf16', 'f64'); else DTypeError."""
    torch = _torch()
    if torch is not None and isinstance(dtype, torch.dtype):
        name = str(dtype).replace("torch.", "")
    elif isinstance(dtype, str) and dtype.lower() in _DTYPE_ALIASES:
        name = _DTYPE_ALIASES[dtype.lower()]
    elif isinstance(dtype, str) and dtype.lower() == "bfloat16":
        name = "bfloat16"
    else:
        try:
            np_dtype = np.dtype(dtype)
        except TypeError:
            raise DTypeError("dtype must be %s; got %r" % (_DTYPE_LIST, dtype)) from None
        name = np_dtype.name if np_dtype.isnative else str(np_dtype)
    if name not in _DTYPES:
        raise DTypeError("roialign computes in %s; got %s" % (_DTYPE_LIST, name))
    return name


def _pair(output_size):
    if isinstance(output_size, numbers.Integral) and not isinstance(output_size, bool):
        return int(output_size), int(output_size)
    try:
        ph, pw = output_size
    except (TypeError, ValueError):
        raise TypeError("output_size must be an int or a pair (height, width); got %r" % (output_size,)) from None
    for v in (ph, pw):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError("output_size must be an int or a pair of ints; got %r" % (output_size,))
    return int(ph), int(pw)


# ---------------------------------------------------------------------------------------------------------------
# Arrays: what each kind of input is, and its buffer in memory order
# ---------------------------------------------------------------------------------------------------------------

def _channels_arg(channels):
    """``channels=``: None or an int (its value is checked against the map by the extension, CheckMap)."""
    if channels is None:
        return None
    if isinstance(channels, bool) or not isinstance(channels, numbers.Integral):
        raise TypeError("channels must be an int (the logical channel count C) or None; got %r" % (channels,))
    if not 0 <= channels < 2 ** 63:
        raise ValueError("channels must be >= 0 and fit int64 (the logical channel count C); got %d" % channels)
    return int(channels)


def _map_form(layout):
    return "[N, ceil(C/b), H, W, b] with b = %d" % _BLOCKS[layout] if layout in _BLOCKS else \
        "[N, H, W, C]" if layout == "NHWC" else "[N, C, H, W]"


class _Map:
    """The feature map of one call: its kind ('torch' or 'numpy'), dtype name, a dense array in memory order
    (numpy array or torch tensor; [N,C,H,W] for NCHW, [N,H,W,C] for NHWC, [N,ceil(C/b),H,W,b] for the blocked
    layouts) that the extension reads in place; ``channels``, the caller's ``channels=`` (None or the logical C); and
    ``extent``, the channels the array's shape holds (C, or ceil(C/b)*b for a blocked map), which sizes the result:
    the extension checks the extents against the layout and ``channels`` (CheckMap) before the kernel writes
    anything. This class checks the rank, for a message in the package's terms."""

    __slots__ = ("kind", "dtype", "memory", "channels", "extent")

    def __init__(self, input, layout, channels=None, what="input"):
        block = _BLOCKS.get(layout)
        nhwc = layout == "NHWC"
        if _is_tensor(input):
            torch = _torch()
            if input.device.type != "cpu":
                raise ValueError("roialign runs on the CPU; %s is on %s (move it with .cpu())" % (what, input.device))
            if block:
                # torch has no memory format for the blocked layouts: the tensor's shape is its memory order, as
                # for numpy arrays.
                if input.dim() != 5:
                    raise ValueError("%s must be a 5-D tensor %s for layout=%r; got shape %s"
                                     % (what, _map_form(layout), layout, tuple(input.shape)))
            elif input.dim() != 4:
                raise ValueError("%s must be a 4-D tensor [N, C, H, W] (for either layout); got shape %s"
                                 % (what, tuple(input.shape)))
            self.kind = "torch"
            self.dtype = _dtype_name(input.dtype)
            x = input.detach()  # the extension records no autograd history (_no_autograd refuses to lose one)
            # NHWC: the channels_last tensor seen as [N, H, W, C] is dense; .contiguous() copies only otherwise.
            self.memory = x.permute(0, 2, 3, 1).contiguous() if nhwc else x.contiguous()
            shape = tuple(self.memory.shape)
            del torch
        else:
            x = input if isinstance(input, np.ndarray) else _to_numpy_array(input, what)
            if x.ndim != (5 if block else 4):
                raise ValueError("%s must be %d-D, %s for layout=%r; got shape %s"
                                 % (what, 5 if block else 4, _map_form(layout), layout, x.shape))
            self.kind = "numpy"
            self.dtype = _dtype_name(x.dtype)
            self.memory = np.ascontiguousarray(x)  # the same array when it is already C-contiguous
            shape = self.memory.shape
        self.channels = channels
        self.extent = int(shape[1] * block if block else shape[3] if nhwc else shape[1])


class _MapInfo:
    """What a call checks of a map that the torch operator reads (kind and dtype); the operator checks the rest."""

    __slots__ = ("kind", "dtype")

    def __init__(self, dtype):
        self.kind = "torch"
        self.dtype = dtype


def _to_numpy(a, what, rows_dtype=np.float32):
    """Boxes of any kind as a numpy array (torch: zero-copy for CPU tensors of ``rows_dtype``)."""
    if _is_tensor(a):
        torch = _torch()
        if a.device.type != "cpu":
            raise ValueError("roialign runs on the CPU; %s is on %s (move it with .cpu())" % (what, a.device))
        a = a.detach()
        if not a.is_floating_point():
            raise TypeError("%s must hold floating-point coordinates; got %s" % (what, a.dtype))
        want = torch.float64 if rows_dtype == np.float64 else torch.float32
        if a.dtype != want:
            a = a.to(want)  # numpy has no bfloat16; boxes are float32 (float64 for a float64 kernel) anyway
        return a.contiguous().numpy()
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__"):
        return np.from_dlpack(a)
    return np.asarray(a)


def _rows(a, what, rows_dtype):
    if a.dtype.kind != "f":
        raise TypeError("%s must hold floating-point coordinates; got %s" % (what, a.dtype))
    return np.ascontiguousarray(a, dtype=rows_dtype)


def _boxes(boxes, dtype="float32", rotated=False):
    """(rois, batch_indices): [K, 5] and None, or [K, 4] and int64 [K] for the list form; the rows in float32, or in
    float64 for a kernel of dtype float64 (which reads its RoIs in double: docs/semantics.md). Rotated boxes
    (``rotated``) have one column more: [K, 6] rows (batch_index, cx, cy, w, h, angle), or [K, 5] and the indices."""
    rows_dtype = np.float64 if dtype == "float64" else np.float32
    width, row = (5, "(cx, cy, w, h, angle)") if rotated else (4, "(x1, y1, x2, y2)")
    if isinstance(boxes, (list, tuple)):
        per_image = []
        for i, b in enumerate(boxes):
            b = _to_numpy(b, "boxes[%d]" % i, rows_dtype)
            if b.ndim != 2 or b.shape[-1] != width:
                raise ValueError("boxes[%d] must be [L, %d] %s: a list of boxes holds one such array per image, as "
                                 "torchvision's List[Tensor]; got shape %s (for rows that carry their batch index pass "
                                 "one [K, %d] array)" % (i, width, row, b.shape, width + 1))
            per_image.append(_rows(b, "boxes[%d]" % i, rows_dtype))
        if per_image:
            rois = np.ascontiguousarray(np.concatenate(per_image, axis=0))
        else:
            rois = np.empty((0, width), dtype=rows_dtype)
        counts = [b.shape[0] for b in per_image]
        batch_indices = np.repeat(np.arange(len(per_image), dtype=np.int64), counts)
        return rois, batch_indices
    b = _to_numpy(boxes, "boxes", rows_dtype)
    if b.ndim != 2:  # the extents are the extension's to check, with the library's other checks
        raise ValueError("boxes must be [K, %d] (batch_index, %s) or a list of [L, %d] per image; got shape %s"
                         % (width + 1, row[1:-1], width, b.shape))
    return _rows(b, "boxes", rows_dtype), None


# The one huge-page policy for new torch results (docs/python.md, "New results"): a new result of at least this size
# is advised MADV_HUGEPAGE before its first write, here and in the torch operators' result pool, whose threshold
# (kPooledResultBytes, engines/torch/result_pool.h) is the same 4 MiB. numpy advises its own arrays from 4 MiB too.
_HUGE_PAGE_RESULT_BYTES = 4 << 20


def _aligned_empty(shape, dtype):
    """numpy.empty starting on a 64-byte boundary, as torch allocates. numpy starts large arrays 16 bytes past one,
    where the kernels cannot stream their stores into the result (docs/python.md, "Arrays")."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buffer = np.empty(nbytes + 64, dtype=np.uint8)
    start = -buffer.ctypes.data % 64
    return buffer[start:start + nbytes].view(dtype).reshape(shape)


def _result(out, kind, k, c, output_size, layout, dtype):
    """(what the call returns, the dense array in memory order that the kernel writes) for k boxes of c channels
    (a blocked layout: c = ceil(C/b)*b): ``out`` when given (checked by _out_memory), else a new array of the
    input's kind."""
    ph, pw = output_size
    nhwc = layout == "NHWC"
    block = _BLOCKS.get(layout)
    if block:
        memory_shape = (k, -(-c // block), ph, pw, block)  # the shape of the result in either kind
    else:
        memory_shape = (k, ph, pw, c) if nhwc else (k, c, ph, pw)
    if out is not None:
        return out, _out_memory(out, layout, dtype)
    if kind != "torch":
        # numpy has no bfloat16: its bits travel as int16.
        memory = _aligned_empty(memory_shape, np.dtype(np.int16 if dtype == "bfloat16" else dtype))
        return memory, memory
    torch = _torch()
    memory = torch.empty(memory_shape, dtype=getattr(torch, dtype))
    nbytes = memory.numel() * memory.element_size()
    if nbytes >= _HUGE_PAGE_RESULT_BYTES:  # before the kernel's first touch (_roialign.advise_huge_pages)
        _roialign.advise_huge_pages(memory.data_ptr(), nbytes)
    return (memory.permute(0, 3, 1, 2) if nhwc else memory), memory  # NHWC: [K, C, PH, PW] channels_last


def _out_memory(out, layout, kernel_dtype, dims=("K", "PH", "PW")):
    """``out`` seen as a dense array in memory order, or TypeError / ValueError (nothing is written). ``dims`` name
    its outer and spatial dimensions in messages: a result's (K, PH, PW) or a map gradient's (N, H, W)."""
    k, ph, pw = dims
    nhwc = layout == "NHWC"
    block = _BLOCKS.get(layout)
    rank = 5 if block else 4
    if _is_tensor(out):
        if out.device.type != "cpu":
            raise ValueError("out is on %s; roialign writes CPU memory" % out.device)
        if out.requires_grad:
            raise ValueError("out requires grad; roialign cannot write it in place")
        dtype = _dtype_name(out.dtype)
        if block:
            form = "[%s, ceil(C/b), %s, %s, b] with b = %d, contiguous" % (k, ph, pw, block)
        else:
            form = "[%s, C, %s, %s] %s" % (k, ph, pw, "in channels_last memory" if nhwc else "contiguous")
    elif isinstance(out, np.ndarray):
        dtype = _dtype_name(out.dtype)
        if block:
            form = "[%s, ceil(C/b), %s, %s, b] with b = %d, C-contiguous" % (k, ph, pw, block)
        else:
            form = ("[%s, %s, %s, C], C-contiguous" if nhwc else "[%s, C, %s, %s], C-contiguous") % (k, ph, pw)
        if not out.flags.writeable:
            raise ValueError("out is read-only")
    else:
        raise TypeError("out must be a numpy array or a torch tensor; got %s" % type(out).__name__)
    if dtype != kernel_dtype:
        raise TypeError("out has dtype %s; this kernel writes %s" % (dtype, kernel_dtype))
    if len(out.shape) != rank:  # its extents are the extension's to check
        raise ValueError("out must be %s; got shape %s" % (form, tuple(out.shape)))
    if not _is_dense(out, nhwc and _is_tensor(out)):
        raise ValueError("out must be %s (roialign writes it in place, so it cannot copy it)" % form)
    return out.permute(0, 2, 3, 1) if nhwc and _is_tensor(out) else out


def _is_dense(array, torch_nhwc):
    if _is_tensor(array):
        return array.permute(0, 2, 3, 1).is_contiguous() if torch_nhwc else array.is_contiguous()
    return array.flags.c_contiguous


def _grad_result(out, fmap, layout, dtype):
    """(what the backward returns, the dense array in memory order that the kernel writes) for the gradient of the
    map ``fmap`` (a _Map): ``out`` when given, else a new array of the map's kind, shape and memory order."""
    if out is not None:
        return out, _out_memory(out, layout, dtype, dims=("N", "H", "W"))
    shape = tuple(fmap.memory.shape)
    if fmap.kind != "torch":
        memory = _aligned_empty(shape, np.dtype(np.int16 if dtype == "bfloat16" else dtype))
        return memory, memory
    torch = _torch()
    memory = torch.empty(shape, dtype=getattr(torch, dtype))
    return (memory.permute(0, 3, 1, 2) if layout == "NHWC" else memory), memory


def _grad_output_memory(grad_output, kind, layout, dtype, what="grad_output"):
    """dY of a backward call on the extension as a dense array in memory order, like the forward's result: a tensor
    for a torch map (indexed [K, C, PH, PW] in either layout), an array for others; the extension checks its shape
    (and a numpy array's dtype)."""
    if kind == "torch":
        _check_grad_tensor(grad_output, dtype, what)
        g = grad_output.detach()
        if layout == "NHWC":
            if g.dim() != 4:
                raise ValueError("%s must be a 4-D tensor [K, C, PH, PW]; got shape %s" % (what, tuple(g.shape)))
            return g.permute(0, 2, 3, 1).contiguous()
        return g.contiguous()
    if _is_tensor(grad_output):
        raise TypeError("%s is a torch tensor but the map is not; give both as the same kind of array" % what)
    g = grad_output if isinstance(grad_output, np.ndarray) else _to_numpy_array(grad_output, what)
    _dtype_name(g.dtype)
    return np.ascontiguousarray(g)


def _to_numpy_array(a, what):
    """An array that is neither numpy's nor a torch tensor, read through DLPack as a numpy array; else TypeError."""
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a)
        except Exception as e:
            raise TypeError("cannot read %s of type %s through DLPack as a numpy array (%s: %s)"
                            % (what, type(a).__name__, type(e).__name__, e)) from None
    raise TypeError("%s must be a numpy array, a torch tensor or an object with __dlpack__; got %s"
                    % (what, type(a).__name__))


# ---------------------------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------------------------

class Kernel:
    """One selected implementation of roi_align for one set of attributes (from :func:`select`).

    Immutable and thread-safe: one kernel may run from many threads at once, each call with its own arrays. It keeps
    its working memory between calls, so an operator that runs many times should select once and keep the kernel.

    Attributes: ``name`` (the implementation, e.g. ``"roi_align_nhwc.avx2"``), ``target``, ``layout`` (``"NCHW"``,
    ``"NHWC"``, ``"NCHW4c"``, ``"NCHW8c"`` or ``"NCHW16c"``), ``dtype`` (``"float32"``, ``"float16"``, ``"bfloat16"`` or
    ``"float64"``), ``output_size`` ((PH, PW)), ``spatial_scale`` (the scale the kernel computes with: as float32
    holds it, or the Python float itself for a float64 kernel), ``sampling_ratio``, ``coordinate_mode``, ``pool`` and ``backward`` (whether it was selected
    with ``backward=True`` and so also runs :meth:`run_backward`); ``rotated`` (its boxes are rotated ones,
    ``[K, 6]`` rows (batch_index, cx, cy, w, h, angle)), and for those ``angle_unit`` (``"radians"`` or
    ``"degrees"``) and ``clockwise``.
    """

    __slots__ = ("_kernel", "target", "layout", "dtype", "output_size", "spatial_scale", "sampling_ratio",
                 "coordinate_mode", "pool", "backward", "rotated", "angle_unit", "clockwise")

    def __init__(self, kernel, target):
        self._kernel = kernel
        self.target = target
        self.layout = _names(_LAYOUTS)[kernel.layout]
        self.dtype = _names(_DTYPES)[kernel.dtype]
        self.output_size = (kernel.pooled_height, kernel.pooled_width)
        self.spatial_scale = kernel.spatial_scale
        self.sampling_ratio = kernel.sampling_ratio
        self.coordinate_mode = _names(_COORDINATE_MODES)[kernel.coordinate_mode]
        self.pool = _names(_POOL_MODES)[kernel.pool_mode]
        self.backward = kernel.backward
        self.rotated = kernel.roi_kind == _ROI_KINDS["rotated"]
        self.angle_unit = _names(_ANGLE_UNITS)[kernel.angle_unit]
        self.clockwise = kernel.rotation == _ROTATIONS["clockwise"]

    @property
    def name(self):
        return self._kernel.name

    def __repr__(self):
        rotated = ", rotated=True, angle_unit=%r, clockwise=%r" % (self.angle_unit, self.clockwise) \
            if self.rotated else ""
        return ("roialign.Kernel(%r, target=%r, layout=%r, dtype=%r, output_size=%r, spatial_scale=%r, "
                "sampling_ratio=%r, coordinate_mode=%r, pool=%r, backward=%r%s)"
                % (self.name, self.target, self.layout, self.dtype, self.output_size, self.spatial_scale,
                   self.sampling_ratio, self.coordinate_mode, self.pool, self.backward, rotated))

    def run(self, input, boxes, out=None, num_threads=0, *, channels=None):
        """Computes roi_align of ``input`` over ``boxes`` and returns the result (``out`` when given).

        ``input``: the feature map, in this kernel's layout and dtype (see the module's table of array
        conventions): a numpy array, a torch tensor, or another object with ``__dlpack__`` (read as a numpy array).
        It is used in place when it is dense in memory order, and copied otherwise.

        ``boxes``: float ``[K, 5]`` rows ``(batch_index, x1, y1, x2, y2)``, or a list (or tuple) of ``[L_i, 4]``
        rows ``(x1, y1, x2, y2)``, one per image, whose position in the list is the batch index (torchvision's two
        forms). Coordinates are in input-image pixels; any floating dtype is converted to float32, or to float64 for
        a float64 kernel.

        ``out``: optional, the array to write: ``[K, C, PH, PW]`` for NCHW or a torch tensor of either layout
        (contiguous, or channels_last for NHWC), ``[K, PH, PW, C]`` for NHWC numpy arrays, ``[K, ceil(C/b), PH, PW,
        b]`` (contiguous, any kind) for the blocked layouts; the kernel's dtype, dense
        in memory order, writable, and not overlapping the input. Without it, a new array of the input's kind is
        returned (numpy in, numpy out; torch in, torch out; other DLPack input gives numpy).

        ``num_threads``: > 0 uses at most that many threads; <= 0 uses OpenMP's default (``OMP_NUM_THREADS``).
        The result is bit-identical for any value. The GIL is released while the kernel runs.

        ``channels``: the logical channel count C of a blocked map (``[N, ceil(C/b), H, W, b]``) when it is not a
        multiple of b; None takes ``ceil(C/b) * b``. With NCHW and NHWC it may be given only equal to the map's C.

        Raises TypeError (wrong kind of array, or dtype) and ValueError (wrong rank or shape) before anything runs,
        ValueError with the library's message for bad data (a batch index outside [0, N), a non-finite coordinate,
        a limit exceeded), NotImplementedError when the target cannot serve the request, MemoryError. When anything
        is raised, ``out`` is untouched.
        """
        _no_autograd(_EXTENSION_HAS_NO_GRADIENT, input, boxes)
        fmap = _Map(input, self.layout, _channels_arg(channels))
        if fmap.dtype != self.dtype:
            raise TypeError("input has dtype %s; this kernel takes %s (select it with dtype=%r)"
                            % (fmap.dtype, self.dtype, fmap.dtype))
        return self._run(fmap, boxes, out, num_threads)

    def _run(self, fmap, boxes, out, num_threads):
        if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
            raise TypeError("num_threads must be an int; got %r" % (num_threads,))
        rois, batch_indices = _boxes(boxes, self.dtype, self.rotated)
        result, out_memory = _result(out, fmap.kind, rois.shape[0], fmap.extent, self.output_size, self.layout,
                                     self.dtype)
        self._kernel.run(fmap.memory, rois, batch_indices, out_memory, int(num_threads), fmap.channels)
        return result

    def run_backward(self, grad_output, input, boxes, out=None, num_threads=0, *, channels=None):
        """The gradient of the map: dX of ``sum(run(input, boxes) * grad_output)`` with respect to ``input``
        (docs/semantics.md, "Backward"). The kernel must have been selected with ``backward=True``.

        ``grad_output``: dY, shaped and typed as :meth:`run`'s result for these boxes, of the input's kind (a torch
        tensor for a torch map: ``[K, C, PH, PW]`` in either layout; any strides). ``input`` and ``boxes``: the
        forward's (the max modes find each bin's maximum in the map again). ``out``: optional, the array to write,
        shaped, typed and laid out as ``input`` (dense in memory order); else a new one of the input's kind. Every
        element is written, 0 where no box reaches. The result has the same bits for any ``num_threads``.

        Raises as :meth:`run` does; ValueError if the kernel was selected without ``backward=True``.
        """
        if not self.backward:
            raise ValueError("this kernel was selected without backward=True; select(..., backward=True) gives one "
                             "that also runs the backward")
        _no_autograd(_DOUBLE_BACKWARD, grad_output)
        fmap = _Map(input, self.layout, _channels_arg(channels))
        if fmap.dtype != self.dtype:
            raise TypeError("input has dtype %s; this kernel takes %s (select it with dtype=%r)"
                            % (fmap.dtype, self.dtype, fmap.dtype))
        return self._run_backward(grad_output, fmap, boxes, out, num_threads)

    def _run_backward(self, grad_output, fmap, boxes, out, num_threads):
        if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
            raise TypeError("num_threads must be an int; got %r" % (num_threads,))
        dy = _grad_output_memory(grad_output, fmap.kind, self.layout, self.dtype)
        rois, batch_indices = _boxes(boxes, self.dtype, self.rotated)
        result, out_memory = _grad_result(out, fmap, self.layout, self.dtype)
        self._kernel.run_backward(dy, fmap.memory, rois, batch_indices, out_memory, int(num_threads), fmap.channels)
        return result

@functools.lru_cache(maxsize=16)
def _select_cached(target, ph, pw, spatial_scale, sampling_ratio, coordinate_mode, pool, layout, dtype, backward,
                   rotated=False, angle_unit="radians", clockwise=False):
    kernel = _roialign.select(target, ph, pw, spatial_scale, sampling_ratio, _COORDINATE_MODES[coordinate_mode],
                              _POOL_MODES[pool], _LAYOUTS[layout], _DTYPES[dtype], backward,
                              _ROI_KINDS["rotated" if rotated else "axis_aligned"], _ANGLE_UNITS[angle_unit],
                              _ROTATIONS["clockwise" if clockwise else "counter_clockwise"])
    return Kernel(kernel, target)


def _flag(value, what):
    """A bool argument (``aligned``, ``clockwise``): a bool, or an int 0 or 1 (numpy's and torch's too)."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise TypeError("%s must be a bool; got %r" % (what, value))


def select(target="host", *, output_size=7, spatial_scale=1.0, sampling_ratio=-1, aligned=False,
           coordinate_mode=None, pool="avg", layout="NCHW", dtype="float32", backward=False, rotated=False,
           angle_unit="radians", clockwise=False):
    """Selects the best implementation of roi_align on ``target`` for these attributes; returns a :class:`Kernel`.

    ``target``: ``"host"`` (the best this CPU runs), ``"generic"`` (the scalar reference), ``"x86"``, ``"arm"``,
    one ISA (``"x86-avx2"``, ``"arm-sve"``, ...) or ``"portable"``; :func:`targets` lists them.
    The attributes are those of :func:`roi_align`, plus ``dtype`` (``"float32"``, ``"float16"``, ``"bfloat16"``,
    ``"float64"``, the library's names ``"f32"``, ``"f16"``, ``"bf16"``, ``"f64"``, or a numpy or torch dtype) and
    ``backward``: True selects an implementation that also runs the backward
    (:meth:`Kernel.run_backward`). ``rotated=True`` selects one for rotated boxes (:func:`roi_align_rotated`), whose
    angles are in ``angle_unit`` (``"radians"`` or ``"degrees"``) and turn ``clockwise`` or not; its coordinate mode
    is ``aligned`` (``"half_pixel"``) or not (``"legacy"``). ``angle_unit`` and ``clockwise`` must keep their defaults
    without ``rotated``.

    Raises ValueError for a malformed request (an unknown target, output_size < 1, spatial_scale not finite and
    > 0, sampling_ratio above the limit) and NotImplementedError when the target cannot serve it (an ISA this CPU
    lacks, a dtype no implementation serves); both carry the library's message, which says what is supported.
    Successful selections are cached (the last 16), so selecting the same attributes again is cheap.
    """
    if not isinstance(target, str):
        raise TypeError("target must be a string; got %r" % (target,))
    ph, pw = _pair(output_size)
    if coordinate_mode is None:
        coordinate_mode = "half_pixel" if aligned else "legacy"
    else:
        coordinate_mode = _choose(coordinate_mode, _COORDINATE_MODES, "coordinate_mode")
        if aligned and coordinate_mode == "legacy":
            raise ValueError("aligned=True contradicts coordinate_mode='legacy' (aligned=False is LEGACY)")
    if isinstance(sampling_ratio, bool) or not isinstance(sampling_ratio, numbers.Integral):
        raise TypeError("sampling_ratio must be an int (<= 0: adaptive); got %r" % (sampling_ratio,))
    try:
        spatial_scale = float(spatial_scale)
    except (TypeError, ValueError):
        raise TypeError("spatial_scale must be a number; got %r" % (spatial_scale,)) from None
    if not isinstance(backward, bool):
        raise TypeError("backward must be a bool; got %r" % (backward,))
    rotated, clockwise = _flag(rotated, "rotated"), _flag(clockwise, "clockwise")
    angle_unit = _choose(angle_unit, _ANGLE_UNITS, "angle_unit")
    if not rotated and (angle_unit != "radians" or clockwise):
        raise ValueError("angle_unit and clockwise are attributes of rotated boxes; select(..., rotated=True)")
    return _select_cached(target, ph, pw, spatial_scale, int(sampling_ratio), coordinate_mode,
                          _choose(pool, _POOL_MODES, "pool"), _choose(layout, _LAYOUTS, "layout"), _dtype_name(dtype),
                          backward, rotated, angle_unit, clockwise)


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False, *, layout="NCHW",
              pool="avg", coordinate_mode=None, target="host", num_threads=0, out=None, channels=None):
    """RoIAlign: pools each box of ``input`` into ``output_size`` bins of bilinear samples (docs/semantics.md).

    A drop-in for ``torchvision.ops.roi_align`` (same positional arguments and defaults) that also takes numpy arrays
    and other layouts, pooling modes and coordinate conventions. On torch tensors with the defaults ``target="host"``,
    ``num_threads=0`` and no ``out``, in layout NCHW or NHWC, it runs roialign's torch operator and the result has a
    gradient with respect to ``input`` (none for the boxes, as in torchvision); other calls with an input that
    requires grad raise RuntimeError. :func:`roi_align_backward` computes the gradient for any kind of array.

    ``input``: the feature map, float32, float64 (computed in double, with the boxes and ``spatial_scale`` in double
    too), or float16 and bfloat16 where the target serves them, as a numpy array, a torch tensor, or any object with
    ``__dlpack__`` (read through numpy). Its shape and memory follow ``layout``:

    - ``layout="NCHW"``: ``[N, C, H, W]``; the result is ``[K, C, PH, PW]``.
    - ``layout="NHWC"``: a torch tensor is ``[N, C, H, W]`` in ``torch.channels_last`` memory (torch's convention:
      shapes are always NCHW) and the result is a ``[K, C, PH, PW]`` tensor in channels_last memory; any other
      array is ``[N, H, W, C]`` and the result ``[K, PH, PW, C]``.
    - ``layout="NCHW4c"``, ``"NCHW8c"``, ``"NCHW16c"`` (channel blocks of b = 4, 8, 16): ``[N, ceil(C/b), H, W, b]``
      for every kind of array, torch tensors included; the result is ``[K, ceil(C/b), PH, PW, b]``. ``channels``
      gives the logical C when it is not a multiple of b (None: ``ceil(C/b) * b``); the map's padded lanes are
      never read, the result's are written as 0.

    An input already dense in that memory order is read in place (zero-copy); other strides (e.g. a channels_last
    tensor with ``layout="NCHW"``) are copied first. The result has the input's kind and dtype: numpy in, numpy out;
    torch in, torch out (on the CPU); other DLPack input gives numpy.

    ``boxes``: float ``[K, 5]`` rows ``(batch_index, x1, y1, x2, y2)``, or a list of ``[L_i, 4]`` rows ``(x1, y1, x2,
    y2)`` per image (the list position is the batch index), as torchvision takes them; numpy arrays or tensors. Box
    coordinates are in input-image pixels; ``spatial_scale`` maps them onto the feature map (1/16 for stride 16).

    ``output_size``: ``PH = PW = output_size``, or ``(PH, PW)``.

    ``sampling_ratio``: > 0, a fixed ``sampling_ratio x sampling_ratio`` grid of samples per bin; <= 0 (the default
    -1, as in torchvision) adaptive, ``ceil(roi_size / output_size)`` per axis.

    ``aligned``: False is ``coordinate_mode="legacy"`` (torchvision's default: no half-pixel shift, RoI sizes at
    least 1), True is ``"half_pixel"`` (pixel centers at +0.5, as torchvision's ``aligned=True``). ``coordinate_mode``,
    when given, is used instead: ``"legacy"``, ``"half_pixel"``, ``"half_pixel_centered"`` (OpenVINO's
    ``half_pixel``) or ``"legacy_unclamped"`` (TVM's ``aligned=True``); ``aligned=True`` with ``"legacy"`` is a contradiction and raises ValueError.

    ``pool``: ``"avg"`` (torchvision), ``"max"`` (max of the bilinear samples, as mmcv and TVM) or ``"max_onnx"``
    (max of the weighted taps, as ONNX RoiAlign).

    ``target``: where to run (:func:`targets`); ``"host"`` is the best implementation this CPU runs.
    ``num_threads``: > 0 uses at most that many threads; <= 0 uses OpenMP's default (``OMP_NUM_THREADS``). The GIL
    is released while the kernel runs.

    ``out``: optional, the array to write and return instead of a new one, as for :meth:`Kernel.run`. A caller that
    pools in a loop saves the first touch of a fresh result's pages on every call (a large part of a call's time for
    outputs of tens of MB).

    ``channels``: the logical channel count of a blocked map, as above; with NCHW and NHWC it may be given only
    equal to the map's C (else ValueError).

    Raises TypeError (not an array) and :class:`DTypeError` (a TypeError and a RuntimeError, as torchvision's: an
    unsupported dtype such as int32) and ValueError (wrong rank or box shape) before the library is called; ValueError with the library's message for bad attributes or data (a batch index
    outside [0, N), a non-finite coordinate, a limit exceeded); NotImplementedError with the library's message when
    the target cannot serve the request (e.g. float16 on a target without float16 kernels).
    """
    return _roi_align_call(None, input, boxes, output_size, spatial_scale, sampling_ratio, aligned, layout, pool,
                           coordinate_mode, target, num_threads, out, channels)


def _roi_align_call(grad_output, input, boxes, output_size, spatial_scale, sampling_ratio, aligned, layout, pool,
                    coordinate_mode, target, num_threads, out, channels, rotation=None):
    """roi_align (``grad_output`` None) or its backward: the arguments checked once, then the torch operator or the
    extension. ``rotation``: None for axis-aligned boxes, or (angle_unit, clockwise) for rotated ones
    (roi_align_rotated), which differ only in the rows of the boxes and the attributes of the selection."""
    backward = grad_output is not None
    rotated = rotation is not None
    layout = _choose(layout, _LAYOUTS, "layout")
    channels = _channels_arg(channels)
    attributes = dict(output_size=output_size, spatial_scale=spatial_scale, sampling_ratio=sampling_ratio,
                      aligned=aligned, coordinate_mode=coordinate_mode, pool=pool, layout=layout, backward=backward)
    if rotated:
        attributes.update(rotated=True, angle_unit=rotation[0], clockwise=rotation[1])
    ops, (fmap,) = _route(grad_output, [input], ["input"], boxes, layout, channels, target, num_threads, out)
    kernel = select(target, dtype=fmap.dtype, **attributes)
    if ops is not None:
        dtype = fmap.dtype
        args = (_op_rois(_torch(), boxes, dtype, rotated), kernel.spatial_scale, kernel.output_size[0],
                kernel.output_size[1], kernel.sampling_ratio, bool(aligned))
        kwargs = dict(layout=kernel.layout, pool_mode=kernel.pool.upper())
        if rotated:
            args += (kernel.clockwise,)
            kwargs["angle_unit"] = kernel.angle_unit.upper()
            if not backward:
                return _call_op(ops.roi_align_rotated, input, *args, **kwargs)
            _check_grad_tensor(grad_output, dtype)
            return _call_op(ops.roi_align_rotated_backward, grad_output, input, *args, **kwargs)
        kwargs["coordinate_mode"] = kernel.coordinate_mode.upper()
        if not backward:
            return _call_op(ops.roi_align, input, *args, **kwargs)
        _check_grad_tensor(grad_output, dtype)
        return _call_op(ops.roi_align_backward, grad_output, input, *args, **kwargs)
    if backward:
        return kernel._run_backward(grad_output, fmap, boxes, out, num_threads)
    return kernel._run(fmap, boxes, out, num_threads)


def _route(grad_output, features, names, boxes, layout, channels, target, num_threads, out, op_serves=True):
    """Where a call runs, and its maps checked: ``(torch.ops.roialign, [_MapInfo])`` when roialign's torch operators
    run it, else ``(None, [_Map])`` for the extension. One path for roi_align and its rotated form (one map, named
    ``input``) and multi_scale_roi_align (one map per level, ``names`` label them in errors), forward
    (``grad_output`` None) and backward. ``op_serves``: whether an operator takes the call's other arguments."""
    ops = None
    # The operators take NCHW and NHWC maps; tensors in a blocked layout run on the extension, as numpy arrays do.
    if op_serves and layout not in _BLOCKS:
        ops = _torch_ops_for(features[0], boxes, target, num_threads, out)
        if ops is not None and not all(_is_tensor(f) for f in features):
            ops = None
    if ops is not None:
        maps = [_MapInfo(_op_map(f, what)) for f, what in zip(features, names)]
        for f, what in zip(features, names):
            _op_channels(channels, f.shape[1], what)
        return ops, maps
    if grad_output is not None:
        _no_autograd(_DOUBLE_BACKWARD, grad_output)
    else:
        _no_autograd(_EXTENSION_HAS_NO_GRADIENT, features, boxes)
    return None, [_Map(f, layout, channels, what) for f, what in zip(features, names)]


def _check_grad_tensor(grad_output, dtype, what="grad_output"):
    """Checks dY for a torch map: a CPU tensor of the map's dtype (its shape is checked where it is read)."""
    if not _is_tensor(grad_output):
        raise TypeError("%s must be a torch tensor, as the map is; got %s" % (what, type(grad_output).__name__))
    if grad_output.device.type != "cpu":
        raise ValueError("roialign runs on the CPU; %s is on %s (move it with .cpu())" % (what, grad_output.device))
    if _dtype_name(grad_output.dtype) != dtype:
        raise TypeError("%s has dtype %s; the map's is %s (the gradient has the result's dtype)"
                        % (what, _dtype_name(grad_output.dtype), dtype))


def roi_align_backward(grad_output, input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False,
                       *, layout="NCHW", pool="avg", coordinate_mode=None, target="host", num_threads=0, out=None,
                       channels=None):
    """The gradient of :func:`roi_align` with respect to the map: dX of ``sum(roi_align(input, boxes, ...) *
    grad_output)`` (docs/semantics.md, "Backward"), for any kind of array.

    ``grad_output``: dY, of the forward result's shape and dtype and of the input's kind (for a torch map a tensor
    ``[K, C, PH, PW]`` in either layout, any strides; for other arrays the forward result's shape in memory order).
    Every other argument is :func:`roi_align`'s, with the same conventions, and must be the forward's: the max modes
    find each bin's maximum in ``input`` again; the average reads only its shape.

    Returns dX, a new array of the input's kind, shape, layout (a channels_last tensor for NHWC) and dtype, or ``out``
    (given: dense in that memory order, writable). Every element is written, 0 where no box reaches; the bits are the
    same for any ``num_threads``. The boxes get no gradient. On torch tensors with the defaults (``target="host"``,
    ``num_threads=0``, no ``out``, NCHW or NHWC) this is ``torch.ops.roialign.roi_align_backward``, the operator
    autograd runs for ``roi_align``; other calls run on the extension.

    Raises as :func:`roi_align` does; TypeError for a ``grad_output`` of another kind or dtype than the map, ValueError
    for one of another shape than the forward's result.
    """
    if grad_output is None:
        raise TypeError("grad_output must be an array (the gradient of roi_align's result); got None")
    return _roi_align_call(grad_output, input, boxes, output_size, spatial_scale, sampling_ratio, aligned, layout,
                           pool, coordinate_mode, target, num_threads, out, channels)


def roi_align_rotated(input, rois, output_size, spatial_scale=1.0, sampling_ratio=0, *, angle_unit="radians",
                      clockwise=False, aligned=True, layout="NCHW", pool="avg", target="host", num_threads=0, out=None,
                      channels=None):
    """RoIAlign over rotated boxes (ROIAlignRotated; docs/semantics.md, "Rotated RoIs"): each box of width ``w`` and
    height ``h`` centred on ``(cx, cy)`` and turned by ``angle`` about its centre is pooled into ``output_size`` bins of
    bilinear samples.

    ``rois``: float ``[K, 6]`` rows ``(batch_index, cx, cy, w, h, angle)``, or a list of ``[L_i, 5]`` rows ``(cx, cy,
    w, h, angle)`` per image (the list position is the batch index); numpy arrays or tensors, in input-image pixels.

    ``angle_unit``: ``"radians"`` (mmcv, OpenVINO) or ``"degrees"`` (detectron2). ``clockwise``: False turns a
    positive angle from x towards y (counter-clockwise on a y-up picture); True turns it the other way (mmcv's
    ``clockwise=True``). ``aligned``: True moves the box by -0.5 pixel (detectron2, mmcv's default; coordinate mode
    ``"half_pixel"``), False is mmcv's ``aligned=False`` (no shift, w and h at least 1 pixel; ``"legacy"``).

    ``sampling_ratio``: > 0, a fixed grid per bin; <= 0 (the default 0, as in detectron2 and mmcv) adaptive,
    ``ceil(h / PH)`` by ``ceil(w / PW)`` samples. ``input``, ``output_size``, ``spatial_scale``, ``layout``,
    ``pool``, ``target``, ``num_threads``, ``out`` and ``channels``: as in :func:`roi_align`, with the same array
    conventions; every layout and dtype that :func:`roi_align` takes. On torch tensors with the defaults
    ``target="host"``, ``num_threads=0`` and no ``out``, in layout NCHW or NHWC, it runs
    ``torch.ops.roialign.roi_align_rotated`` and the result has a gradient with respect to ``input`` (none for the
    boxes).

    ``roialign.nn.ROIAlignRotated`` (detectron2's) and ``roialign.nn.RoIAlignRotated`` (mmcv's) are its modules.
    Raises as :func:`roi_align` does; ValueError with the library's message for a negative ``w`` or ``h`` of an aligned
    box or a non-finite value, naming the box.
    """
    return _roi_align_call(None, input, rois, output_size, spatial_scale, sampling_ratio, aligned, layout, pool, None,
                           target, num_threads, out, channels, _rotation(angle_unit, clockwise, aligned))


def roi_align_rotated_backward(grad_output, input, rois, output_size, spatial_scale=1.0, sampling_ratio=0, *,
                               angle_unit="radians", clockwise=False, aligned=True, layout="NCHW", pool="avg",
                               target="host", num_threads=0, out=None, channels=None):
    """The gradient of :func:`roi_align_rotated` with respect to the map: dX of ``sum(roi_align_rotated(input, rois,
    ...) * grad_output)`` (docs/semantics.md, "Backward"), for any kind of array, as :func:`roi_align_backward` is for
    :func:`roi_align`: the arguments after ``grad_output`` are the forward's and must be the forward's values. On torch
    tensors with the defaults this is ``torch.ops.roialign.roi_align_rotated_backward``, the operator autograd runs.
    """
    if grad_output is None:
        raise TypeError("grad_output must be an array (the gradient of roi_align_rotated's result); got None")
    return _roi_align_call(grad_output, input, rois, output_size, spatial_scale, sampling_ratio, aligned, layout, pool,
                           None, target, num_threads, out, channels, _rotation(angle_unit, clockwise, aligned))


def _rotation(angle_unit, clockwise, aligned):
    """(angle_unit, clockwise) of roi_align_rotated's arguments, checked."""
    _flag(aligned, "aligned")
    return _choose(angle_unit, _ANGLE_UNITS, "angle_unit"), _flag(clockwise, "clockwise")


@functools.lru_cache(maxsize=16)
def _select_multi_level_cached(target, ph, pw, scales, sampling_ratio, coordinate_mode, layout, dtype, rule,
                               canonical_size, canonical_level, backward):
    return _roialign.select_multi_level(target, ph, pw, list(scales), sampling_ratio,
                                        _COORDINATE_MODES[coordinate_mode], _POOL_MODES["avg"], _LAYOUTS[layout],
                                        _DTYPES[dtype], _LEVEL_RULES[rule], canonical_size, canonical_level, backward)


def multi_scale_roi_align(features, boxes, output_size, spatial_scales, sampling_ratio=-1, aligned=False, *,
                          layout="NCHW", canonical_scale=224, canonical_level=4, levels=None, target="host",
                          num_threads=0, out=None, channels=None):
    """RoIAlign over a feature pyramid in one call: each box pooled from one level (docs/multi-level.md).

    The forward of torchvision's ``MultiScaleRoIAlign`` as one function, without its per-level loop and scatter.

    ``features``: a list (or tuple) of feature maps, one per level, finest first, all of one kind and dtype, with the
    same batch size and channels and each its own height and width; each follows ``layout`` as in :func:`roi_align`.

    ``boxes``: as in :func:`roi_align` (``[K, 5]`` rows, or a list of ``[L_i, 4]`` per image), in image pixels.

    ``spatial_scales``: one scale per level (e.g. ``[1/4, 1/8, 1/16, 1/32]`` for P2-P5), each finite and > 0.

    ``levels``: which level pools each box.

    - ``None`` (default): torchvision's rule, ``floor(canonical_level + log2(sqrt(area) / canonical_scale) +
      1e-6)`` clamped to the levels of the first and last scales, as torchvision's ``LevelMapper``; the scales must
      then be powers of two (repeated ones too, as MobileNet v3's FPN has).
    - ``"openvino"``: OpenVINO ExperimentalDetectronROIFeatureExtractor's rule: level 0 is P2, ``floor(
      canonical_level - 2 + log2(sqrt(area) / canonical_scale + 1e-6))`` clamped to the levels; boxes of zero or
      negative area are not pooled and give zeros.
    - an int array of one level index in ``[0, len(features))`` per box: any other rule (Detectron2's, TensorRT's).

    ``output_size``, ``sampling_ratio``, ``aligned``, ``layout``, ``target``, ``num_threads``, ``out``, ``channels``:
    as in :func:`roi_align`. The result is ``[K, C, PH, PW]`` (NHWC numpy: ``[K, PH, PW, C]``; blocked layouts:
    ``[K, ceil(C/b), PH, PW, b]``), in the boxes' order, of the features' kind and dtype.

    On torch tensors with the defaults (``target="host"``, ``num_threads=0``, no ``out``, NCHW or NHWC, ``levels``
    None or ``"openvino"``) the result has a gradient with respect to every level's map, through roialign's torch
    operator; other calls with an input that requires grad raise RuntimeError.

    Raises TypeError and ValueError for malformed arguments, ValueError with the library's message for bad
    attributes or data (e.g. a level outside the pyramid), NotImplementedError when the target cannot serve them.
    """
    return _multi_scale_call(None, features, boxes, output_size, spatial_scales, sampling_ratio, aligned, layout,
                             canonical_scale, canonical_level, levels, target, num_threads, out, channels)


def multi_scale_roi_align_backward(grad_output, features, boxes, output_size, spatial_scales, sampling_ratio=-1,
                                   aligned=False, *, layout="NCHW", canonical_scale=224, canonical_level=4,
                                   levels=None, target="host", num_threads=0, out=None, channels=None):
    """The gradient of :func:`multi_scale_roi_align` with respect to every level's map: a list with one dX per level,
    each the gradient of ``sum(multi_scale_roi_align(features, boxes, ...) * grad_output)`` with respect to
    ``features[l]`` (docs/semantics.md, "Backward").

    ``grad_output``: dY, of the forward result's shape and dtype and of the features' kind, as in
    :func:`roi_align_backward`. Every other argument is :func:`multi_scale_roi_align`'s and must be the forward's:
    each box's gradient goes to the level its forward pooled from; a level no box chose gets zeros.

    Returns a list of new arrays, one per level, each of its map's kind, shape, layout and dtype; or ``out`` (given: a
    list of one such array per level, dense in memory order). On torch tensors with the defaults this is
    ``torch.ops.roialign.multi_scale_roi_align_backward``, the operator autograd runs.

    Raises as :func:`multi_scale_roi_align` does, and as :func:`roi_align_backward` for ``grad_output`` and ``out``.
    """
    if grad_output is None:
        raise TypeError("grad_output must be an array (the gradient of multi_scale_roi_align's result); got None")
    return _multi_scale_call(grad_output, features, boxes, output_size, spatial_scales, sampling_ratio, aligned,
                             layout, canonical_scale, canonical_level, levels, target, num_threads, out, channels)


def _multi_scale_call(grad_output, features, boxes, output_size, spatial_scales, sampling_ratio, aligned, layout,
                      canonical_scale, canonical_level, levels, target, num_threads, out, channels):
    """multi_scale_roi_align (``grad_output`` None) or its backward: the arguments checked once, then the torch
    operator or the extension."""
    backward = grad_output is not None
    if not isinstance(target, str):
        raise TypeError("target must be a string; got %r" % (target,))
    if not isinstance(features, (list, tuple)) or not features:
        raise TypeError("features must be a non-empty list of feature maps, one per level; got %s"
                        % type(features).__name__)
    layout = _choose(layout, _LAYOUTS, "layout")
    channels = _channels_arg(channels)
    # The operator takes a rule, not per-box levels.
    ops, maps = _route(grad_output, features, ["features[%d]" % i for i in range(len(features))], boxes, layout,
                       channels, target, num_threads, out, op_serves=levels is None or isinstance(levels, str))
    for i, m in enumerate(maps[1:], 1):
        if m.kind != maps[0].kind or m.dtype != maps[0].dtype:
            raise TypeError("features[%d] is a %s %s map; features[0] is %s %s (levels share kind and dtype)"
                            % (i, m.kind, m.dtype, maps[0].kind, maps[0].dtype))
    try:
        scales = tuple(float(s) for s in spatial_scales)
    except (TypeError, ValueError):
        raise TypeError("spatial_scales must be a sequence of numbers; got %r" % (spatial_scales,)) from None
    if len(scales) != len(maps):
        raise ValueError("spatial_scales has %d values for %d feature maps" % (len(scales), len(maps)))
    if isinstance(sampling_ratio, bool) or not isinstance(sampling_ratio, numbers.Integral):
        raise TypeError("sampling_ratio must be an int (<= 0: adaptive); got %r" % (sampling_ratio,))
    if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
        raise TypeError("num_threads must be an int; got %r" % (num_threads,))
    level_array = None
    if levels is None:
        rule = "scale"
    elif isinstance(levels, str):
        if levels != "openvino":
            raise ValueError("levels must be None, 'openvino' or one level index per box; got %r" % (levels,))
        rule = "openvino"
    else:
        rule = "given"
        a = levels.detach().cpu().numpy() if _is_tensor(levels) else np.asarray(levels)
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise TypeError("levels must be a 1-D integer array (one level index per box); got %s %s"
                            % (a.dtype, a.shape))
        level_array = np.ascontiguousarray(a, dtype=np.int32)
        if level_array.size and not np.array_equal(level_array, a):
            raise ValueError("levels hold values outside int32")
    ph, pw = _pair(output_size)
    kernel = _select_multi_level_cached(target, ph, pw, scales, int(sampling_ratio),
                                        "half_pixel" if aligned else "legacy", layout, maps[0].dtype, rule,
                                        float(canonical_scale), int(canonical_level), backward)
    if ops is not None:
        args = (list(features), _op_rois(_torch(), boxes, maps[0].dtype), list(scales), ph, pw, int(sampling_ratio), bool(aligned))
        kwargs = dict(level_rule=rule.upper(), canonical_size=float(canonical_scale),
                      canonical_level=int(canonical_level), layout=layout)
        if not backward:
            return _call_op(ops.multi_scale_roi_align, *args, **kwargs)
        _check_grad_tensor(grad_output, maps[0].dtype)
        return list(_call_op(ops.multi_scale_roi_align_backward, grad_output, *args, **kwargs))
    rois, batch_indices = _boxes(boxes, maps[0].dtype)
    memories = [m.memory for m in maps]
    if backward:
        if out is not None and (not isinstance(out, (list, tuple)) or len(out) != len(maps)):
            raise TypeError("out must be a list of one array per level (%d); got %r" % (len(maps), type(out).__name__))
        dy = _grad_output_memory(grad_output, maps[0].kind, layout, maps[0].dtype)
        results = [_grad_result(None if out is None else out[i], m, layout, m.dtype) for i, m in enumerate(maps)]
        kernel.run_backward(dy, memories, rois, batch_indices, level_array, [r[1] for r in results],
                            int(num_threads), channels)
        return [r[0] for r in results]
    result, out_memory = _result(out, maps[0].kind, rois.shape[0], maps[0].extent, (ph, pw), layout, maps[0].dtype)
    kernel.run(memories, rois, batch_indices, level_array, out_memory, int(num_threads), channels)
    return result


def query_target(name):
    """What target ``name`` serves on this CPU and build, for layout planning.

    Returns a dict: ``layouts``, ``dtypes``, ``pool_modes``, ``coordinate_modes``, ``roi_kinds`` (lists of the names
    this API uses; ``roi_kinds`` holds ``"rotated"`` where :func:`roi_align_rotated` runs), ``preferred_layout`` (the
    layout of its best implementation) and ``implementations`` (their names, best first). Raises ValueError for an unknown name and NotImplementedError when the target exists but nothing serves
    it here (e.g. an ISA this CPU lacks).
    """
    if not isinstance(name, str):
        raise TypeError("name must be a string; got %r" % (name,))
    info = _roialign.query_target(name)
    return {
        "layouts": [_names(_LAYOUTS)[v] for v in info["layouts"]],
        "dtypes": [_names(_DTYPES)[v] for v in info["dtypes"]],
        "pool_modes": [_names(_POOL_MODES)[v] for v in info["pool_modes"]],
        "coordinate_modes": [_names(_COORDINATE_MODES)[v] for v in info["coordinate_modes"]],
        "preferred_layout": _names(_LAYOUTS)[info["preferred_layout"]],
        "roi_kinds": [_names(_ROI_KINDS)[v] for v in info["roi_kinds"]],
        "implementations": implementations(name),
    }


def targets():
    """Every known target name: the built-in ones (some may be unsupported on this CPU; see query_target)."""
    return list(_roialign.known_targets())


def implementations(target="host"):
    """Names of the implementations ``target`` can run on this CPU and build, best first."""
    return list(_roialign.implementation_names(target))


if "torch" in sys.modules:
    # torch is already imported: register the operators now, so that torch.jit.load finds them in a model that
    # uses them (without torch, they load on the first call with a tensor).
    from . import _torch_ops

    _torch_ops.available()
