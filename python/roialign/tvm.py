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

This module imports tvm; ``import roialign`` does not. It uses nothing else of the package (the library itself
answers whether it serves an attribute set), so it also works loaded on its own from its file.
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


def _refusal(call, check):
    """(args for roi_align_dps, None), or (None, reason) when the call stays with TVM."""
    attrs = call.attrs
    data, rois = call.args
    data_si, rois_si = data.ty, rois.ty
    if not isinstance(data_si, relax.TensorType) or not isinstance(rois_si, relax.TensorType):
        return None, "data and rois must be tensors with known dtype"
    data_dtype, rois_dtype = str(data_si.dtype), str(rois_si.dtype)
    if rois_dtype != "float32":
        return None, "roialign takes float32 RoIs; these are %s" % rois_dtype
    if data_dtype not in ("float32", "float16", "bfloat16"):
        return None, "roialign serves float32, float16 and bfloat16 maps; this one is %s" % data_dtype
    layout, mode = str(attrs.layout), str(attrs.mode)
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


@relax.expr_functor.mutator
class _Dispatcher(relax.PyExprMutator):
    def __init__(self, mod, check):
        super().__init__(mod)
        self.check = check
        self.op = tvm.ir.Op.get(_ROI_ALIGN)
        self.rewritten = 0

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


def dispatch_roi_align(mod, library=None):
    """Returns ``mod`` with every ``relax.vision.roi_align`` call that roialign serves rewritten into
    ``R.call_dps_packed("roialign.roi_align_dps", ...)`` (NCHW and NHWC, no layout transform). Calls it does not
    serve stay as they are, each with a DispatchWarning. ``library``: see :func:`load_library`."""
    load_library(library)
    check = tvm.get_global_func(_CHECK)
    dispatcher = _Dispatcher(mod, check)
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function):
            dispatcher.builder_.update_func(gvar, dispatcher.visit_expr(func))
    return dispatcher.builder_.get()
