# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign inside Apache TVM: a Relax pass that sends ``R.vision.roi_align`` to roialign's kernels.

    import tvm, roialign.tvm
    mod = roialign.tvm.dispatch_roi_align(mod)      # before relax.build; NCHW and NHWC calls alike
    ex = tvm.relax.build(mod, target)

Each ``relax.vision.roi_align`` call whose attributes roialign serves becomes
``R.call_dps_packed("roialign.roi_align_dps", ...)``: TVM allocates the output and the packed function, from
``libroialign_tvm.so`` (engines/tvm, built with -DROIALIGN_BUILD_TVM_EXTENSION=ON), writes it on TVM's own thread
pool. An NHWC call stays NHWC: no layout transform is inserted. A call roialign refuses is left to TVM's own lowering,
with a :class:`DispatchWarning` that says why. How TVM's attributes map to roialign's: docs/tvm.md.

Channel-blocked maps: where an NCHW call's map is ``R.layout_transform`` of an NCHW[b]c tensor ``[N, C/b, H, W, b]``
(b = 4, 8, 16; what ``relax.transform.ConvertLayout`` with an NCHW[b]c conv2d leaves before roi_align), the call runs
roialign's blocked kernel on that tensor instead, and the transform of the map goes. Its blocked result
``[K, C/b, PH, PW, b]`` is transformed back to NCHW, unless every consumer transforms the result to the same NCHW[b]c
layout (a following NCHW[b]c conv2d): then those consumers take the blocked result and neither transform is left.
By default only NCHW16c folds: roialign's NCHW4c and NCHW8c kernels are slower than its NCHW kernel by more than the
transform costs (docs/tvm.md has the figures); ``fold_blocks`` chooses.

This module imports tvm; ``import roialign`` does not. It uses nothing else of the package (the library itself
answers whether it serves an attribute set, and which layouts are blocked, with which block), so it also works
loaded on its own from its file.
"""
import ctypes
import os
import warnings

import tvm
from tvm import relax

__all__ = ["dispatch_roi_align", "load_library", "coordinate_mode_of", "DispatchWarning", "FUNCTION"]

FUNCTION = "roialign.roi_align_dps"
_CHECK = "roialign.roi_align_check"
LIBRARY_ENV = "ROIALIGN_TVM_LIBRARY"
_ROI_ALIGN = "relax.vision.roi_align"
_libraries = []  # loaded libraries stay loaded: their functions are registered in TVM's global table
_SONAME = "libroialign_tvm.so"  # engines/tvm/CMakeLists.txt sets no version: the file's name is its soname
_ENUM_LAYOUT = 0  # ROIALIGN_ENUM_LAYOUT of roialign.h, the ABI's value


class DispatchWarning(UserWarning):
    """A roi_align call was left to TVM's own lowering; the message says why."""


def load_library(path=None):
    """Registers roialign's TVM functions from libroialign_tvm.so, once per process. ``path`` defaults to
    $ROIALIGN_TVM_LIBRARY. Raises RuntimeError when the functions are missing and no library is given."""
    if tvm.get_global_func(FUNCTION, allow_missing=True) is not None:
        return
    path = path or os.environ.get(LIBRARY_ENV)
    if not path:
        raise RuntimeError("roialign.tvm: %s is not registered; build libroialign_tvm.so "
                           "(-DROIALIGN_BUILD_TVM_EXTENSION=ON) and pass its path to load_library() or set %s"
                           % (FUNCTION, LIBRARY_ENV))
    # RTLD_GLOBAL is not needed: loading runs the library's static initializer, which registers the functions.
    _libraries.append(ctypes.CDLL(os.path.abspath(path)))
    if tvm.get_global_func(FUNCTION, allow_missing=True) is None:
        raise RuntimeError("roialign.tvm: %s loaded but did not register %s" % (path, FUNCTION))


def coordinate_mode_of(aligned):
    """roialign's coordinate mode for TVM's ``aligned`` attribute.

    TVM's topi.vision.roi_align scales the box with no offset and no -0.5 shift in both settings; ``aligned`` only
    drops the ``max(size, 1)`` clamp of the RoI's extent. So aligned=False is LEGACY and aligned=True is
    LEGACY_UNCLAMPED, both exactly (not HALF_PIXEL, which is what aligned=True means in torchvision).
    """
    return "legacy_unclamped" if aligned else "legacy"


def _static_int_tuple(values):
    return tuple(int(v) for v in values)


def _channel_blocks():
    """{b: layout name} of the channel-blocked layouts ({4: "NCHW4c", 8: "NCHW8c", 16: "NCHW16c"}), from the
    libroialign.so the registered functions run on (roialign_enum_name, roialign_layout_channel_block), through
    the libroialign_tvm.so that load_library loaded or, when the functions were registered without it, the one
    already in the process; dlsym on its handle also searches the libraries it links."""
    if _libraries:
        library = _libraries[0]
    else:
        try:
            library = ctypes.CDLL(_SONAME, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            raise RuntimeError("roialign.tvm: %s is registered, but no %s is loaded to ask which layouts are blocked; "
                               "pass its path to load_library()" % (FUNCTION, _SONAME)) from None
    name_of, block_of = library.roialign_enum_name, library.roialign_layout_channel_block
    name_of.argtypes, name_of.restype = [ctypes.c_int, ctypes.c_int32], ctypes.c_char_p
    block_of.argtypes, block_of.restype = [ctypes.c_int], ctypes.c_int32
    blocks = {}
    value = 0
    while True:
        name = name_of(_ENUM_LAYOUT, value)
        if name is None:
            return blocks
        b = block_of(value)
        if b > 0:
            blocks[b] = name.decode()
        value += 1


def _analyzer():
    from tvm.sym.analyzer import Analyzer  # TVM 0.27's home of arith.Analyzer
    return Analyzer()


def _is_layout_transform(expr, op):
    return isinstance(expr, relax.Call) and expr.op.same_as(op) and expr.attrs.pad_value is None


def _static_shape(expr):
    """The tensor's shape as ints, or None when it is not static."""
    ty = expr.ty
    if not isinstance(ty, relax.TensorType) or not isinstance(ty.shape, relax.ShapeExpr):
        return None
    values = list(ty.shape.values)
    if not all(isinstance(v, tvm.tirx.IntImm) for v in values):  # a symbolic dimension
        return None
    return tuple(int(v) for v in values)


def _block_of_unblocking(index_map, blocks):
    """b of ``blocks`` when ``index_map`` is NCHW[b]c -> NCHW, ``(n, c1, h, w, c0) -> (n, c1 * b + c0, h, w)``, else
    None."""
    ins, outs = index_map.initial_indices, index_map.final_indices
    if len(ins) != 5 or len(outs) != 4:
        return None
    analyzer = _analyzer()
    for b in blocks:
        expected = (ins[0], ins[1] * b + ins[4], ins[2], ins[3])
        if all(analyzer.can_prove_equal(o, e) for o, e in zip(outs, expected)):
            return b
    return None


def _is_blocking(index_map, b):
    """Whether ``index_map`` is NCHW -> NCHW[b]c, ``(n, c, h, w) -> (n, c // b, h, w, c % b)``."""
    ins, outs = index_map.initial_indices, index_map.final_indices
    if len(ins) != 4 or len(outs) != 5:
        return False
    n, c, h, w = ins
    expected = (n, tvm.tirx.floordiv(c, b), h, w, tvm.tirx.floormod(c, b))
    analyzer = _analyzer()
    return all(analyzer.can_prove_equal(o, e) for o, e in zip(outs, expected))


def _unblocking_map(b):
    return lambda k, c1, ph, pw, c0: (k, c1 * b + c0, ph, pw)


def _refusal(call, check, data=None, layout=None):
    """(args for roi_align_dps, None), or (None, reason) when the call stays with TVM. ``data`` and ``layout``
    replace the call's map and layout (a blocked map in place of its NCHW transform)."""
    attrs = call.attrs
    if data is None:
        data = call.args[0]
    rois = call.args[1]
    data_si, rois_si = data.ty, rois.ty
    if not isinstance(data_si, relax.TensorType) or not isinstance(rois_si, relax.TensorType):
        return None, "data and rois must be tensors with known dtype"
    data_dtype, rois_dtype = str(data_si.dtype), str(rois_si.dtype)
    if rois_dtype != "float32":
        return None, "roialign takes float32 RoIs; these are %s" % rois_dtype
    if data_dtype not in ("float32", "float16", "bfloat16"):
        return None, "roialign serves float32, float16 and bfloat16 maps; this one is %s" % data_dtype
    mode = str(attrs.mode)
    if layout is None:
        layout = str(attrs.layout)
        if layout not in ("NCHW", "NHWC"):
            return None, "layout %s (roialign serves NCHW and NHWC)" % layout
    if mode not in ("avg", "max"):
        return None, "mode %r (TVM's avg and max map to roialign's avg and max)" % mode
    coordinate_mode = coordinate_mode_of(bool(attrs.aligned))
    ph, pw = _static_int_tuple(attrs.pooled_size)
    scale, ratio = float(attrs.spatial_scale), int(attrs.sample_ratio)
    # TVM's max is the max of the bilinear samples: roialign's "max" (not "max_onnx", the max of weighted taps).
    reason = str(check(ph, pw, scale, ratio, coordinate_mode, mode, layout, data_dtype))
    if reason:
        return None, "roialign refuses these attributes: " + reason
    args = [data, rois, relax.prim_value(ph), relax.prim_value(pw), relax.prim_value(scale, "float64"),
            relax.prim_value(ratio), tvm.ir.StringImm(coordinate_mode), tvm.ir.StringImm(mode),
            tvm.ir.StringImm(layout)]
    return args, None


@relax.expr_functor.visitor
class _UseCounter(relax.PyExprVisitor):
    """How many times each variable is used (not counting its definition)."""

    def __init__(self):
        super().__init__()
        self.uses = {}

    def visit_var_(self, var):
        self.uses[var] = self.uses.get(var, 0) + 1

    def visit_dataflow_var_(self, var):
        self.uses[var] = self.uses.get(var, 0) + 1


class _BlockedPlan:
    """The blocked folds of one function, decided before it is rewritten.

    folds: roi_align's var -> (the NCHW[b]c map, b, the args for roi_align_dps); rebind: a consumer's var (an
    NCHW -> NCHW[b]c transform of a folded result) -> the roi_align var whose blocked result it takes; drop: the vars
    whose bindings go (transforms that no longer have a consumer, folded results that only fed such consumers)."""

    def __init__(self, func, check, roi_align_op, transform_op, blocks):
        """``blocks``: {b: the library's name of the NCHW[b]c layout} of the blocks to fold."""
        self.folds, self.rebind, self.drop = {}, {}, set()
        var2val = relax.analysis.get_var2val(func)
        counter = _UseCounter()
        counter.visit_expr(func)
        uses = counter.uses
        consumers = {}  # var -> the vars bound to a layout_transform of it
        for var, value in var2val.items():
            if _is_layout_transform(value, transform_op) and isinstance(value.args[0], relax.Var):
                consumers.setdefault(value.args[0], []).append(var)
        folded_uses = {}  # the map transform's var -> how many folded calls read it
        for var, value in var2val.items():
            if not (isinstance(value, relax.Call) and value.op.same_as(roi_align_op)):
                continue
            if str(value.attrs.layout) != "NCHW" or not isinstance(value.args[0], relax.Var):
                continue
            unblock = var2val.get(value.args[0])
            if not _is_layout_transform(unblock, transform_op):
                continue
            b = _block_of_unblocking(unblock.attrs.index_map, blocks)
            blocked = unblock.args[0]
            shape = _static_shape(blocked)
            if b is None or shape is None or len(shape) != 5 or shape[4] != b or _static_shape(var) is None:
                continue
            args, reason = _refusal(value, check, data=blocked, layout=blocks[b])
            if args is None:  # the blocked kernels refuse these attributes: the NCHW dispatch stays
                continue
            self.folds[var] = (blocked, b, args)
            folded_uses[value.args[0]] = folded_uses.get(value.args[0], 0) + 1
            blocking = [u for u in consumers.get(var, []) if _is_blocking(var2val[u].attrs.index_map, b)]
            for u in blocking:
                self.rebind[u] = var
            if blocking and len(blocking) == uses.get(var, 0):
                self.drop.add(var)
        for var, count in folded_uses.items():
            if count == uses.get(var, 0):
                self.drop.add(var)


@relax.expr_functor.mutator
class _Dispatcher(relax.PyExprMutator):
    def __init__(self, mod, check, blocks):
        super().__init__(mod)
        self.check = check
        self.blocks = blocks
        self.op = tvm.ir.Op.get(_ROI_ALIGN)
        self.transform_op = tvm.ir.Op.get("relax.layout_transform")
        self.rewritten = 0
        self.plan = None
        self.blocked = {}  # a folded roi_align var -> the var of its blocked result

    def rewrite(self, func):
        self.plan = _BlockedPlan(func, self.check, self.op, self.transform_op, self.blocks)
        self.blocked = {}
        return self.visit_expr(func)

    def visit_var_binding_(self, binding):
        var, plan = binding.var, self.plan
        if var in plan.folds:
            blocked, b, args = plan.folds[var]
            args = [self.visit_expr(a) for a in args]
            k, c, ph, pw = _static_shape(var)
            out_ty = relax.TensorType((k, c // b, ph, pw, b), str(var.ty.dtype))
            call = relax.call_dps_packed(relax.ExternFunc(FUNCTION), relax.Tuple(args), out_ty)
            self.blocked[var] = self.builder_.emit(call, name_hint=var.name + "_blocked")
            self.rewritten += 1
            if var not in plan.drop:
                value = relax.op.layout_transform(self.blocked[var], index_map=_unblocking_map(b))
                self.builder_.emit_normalized(relax.VarBinding(var, self.builder_.normalize(value)))
            return
        if var in plan.rebind:
            self.builder_.emit_normalized(relax.VarBinding(var, self.blocked[plan.rebind[var]]))
            return
        if var in plan.drop:
            return
        super().visit_var_binding_(binding)

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not isinstance(call, relax.Call) or not call.op.same_as(self.op):
            return call
        args, reason = _refusal(call, self.check)
        if args is None:
            warnings.warn("roialign.tvm: %s(%s) left to TVM's lowering: %s"
                          % (_ROI_ALIGN, call.attrs, reason), DispatchWarning, stacklevel=4)
            return call
        self.rewritten += 1
        return relax.call_dps_packed(relax.ExternFunc(FUNCTION), relax.Tuple(args), call.ty)


def dispatch_roi_align(mod, library=None, fold_blocks=(16,)):
    """Returns ``mod`` with every ``relax.vision.roi_align`` call that roialign serves rewritten into
    ``R.call_dps_packed("roialign.roi_align_dps", ...)`` (NCHW and NHWC, no layout transform). Calls it does not
    serve stay as they are, each with a DispatchWarning. ``library``: see :func:`load_library`.

    ``fold_blocks``: the channel blocks b (of 4, 8, 16) for which an NCHW call on the layout_transform of an
    NCHW[b]c tensor runs roialign's blocked kernel on that tensor instead (see the module's doc); () folds none."""
    load_library(library)
    layouts = _channel_blocks()
    blocks = {int(b): layouts.get(int(b)) for b in fold_blocks}
    if None in blocks.values():
        known = sorted(layouts)
        raise ValueError("roialign.tvm: fold_blocks %r: the blocked layouts have blocks of %s and %d"
                         % (fold_blocks, ", ".join(map(str, known[:-1])), known[-1]))
    check = tvm.get_global_func(_CHECK)
    dispatcher = _Dispatcher(mod, check, blocks)
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function):
            dispatcher.builder_.update_func(gvar, dispatcher.rewrite(func))
    return dispatcher.builder_.get()
