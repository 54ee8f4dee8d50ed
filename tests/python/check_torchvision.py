#!/usr/bin/python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Independent cross-check of the roialign C API against torchvision.ops.roi_align.

Usage:  /usr/bin/python3 check_torchvision.py /path/to/libroialign.so

Uses only ctypes + numpy (+ torch/torchvision as the reference). For every random problem it selects the
"generic" (scalar reference) and "host" (best SIMD) kernels for both layouts, NCHW and NHWC, runs them through
the C API and compares each output with torchvision.ops.roi_align on the same NCHW input.

Mapping:  aligned=False <-> ROIALIGN_COORD_LEGACY, aligned=True <-> ROIALIGN_COORD_HALF_PIXEL, pool mode AVG only
(torchvision averages). Tolerance (docs/semantics.md#accuracy): |ours - ref| <= 1e-5 + 1e-4*|ref|, element-wise.
Our output buffers are pre-filled with NaN, so an element the library fails to write is reported as a mismatch.

Exit status: 0 all agree, 1 any mismatch / failed call / cannot load the library, 2 torchvision not importable.

Inverted boxes (x2 < x1 or y2 < y1): docs/semantics.md and torchvision use the same formula, so inverted boxes are compared
against torchvision with a fixed sampling ratio (both aligned settings: samples walk backwards) and with an
adaptive grid in LEGACY mode (roi size clamped to 1). They are EXCLUDED from the torchvision comparison for an
adaptive grid with aligned=True: there torchvision computes grid = ceil(negative) < 0 without clamping it to 0,
and when exactly one axis is negative it sizes a std::vector with a negative product and raises
"ValueError: cannot create std::vector larger than max_size()" (when both are negative it returns 0). docs/semantics.md
documents grid = max(ceil(roi/P), 0) -> empty grid -> 0, so that group is checked against zeros instead
(group "inverted-adaptive-half-pixel", reference = docs/semantics.md, not torchvision).
"""
import ctypes
import sys

try:
    import numpy as np
except ImportError as _e:  # e.g. the pyenv python3 first on PATH: same "cannot run here" exit status as torchvision
    print("torchvision check: SKIPPED - cannot import numpy (%s); run with Debian's /usr/bin/python3 "
          "(python3-numpy, python3-torchvision)" % _e)
    sys.exit(2)

TOL_ABS = 1e-5
TOL_REL = 1e-4
SEED = 1234

LAYOUT_NCHW, LAYOUT_NHWC = 0, 1
COORD_LEGACY, COORD_HALF_PIXEL = 0, 1
POOL_AVG = 0
DTYPE_F32 = 0
TARGETS = ("generic", "host")
LAYOUTS = ((LAYOUT_NCHW, "NCHW"), (LAYOUT_NHWC, "NHWC"))


class RoiAlignParams(ctypes.Structure):
    # Exactly as roialign_params in include/roialign/roialign.h (C enums are int).
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("pooled_height", ctypes.c_int64),
        ("pooled_width", ctypes.c_int64),
        ("spatial_scale", ctypes.c_float),
        ("sampling_ratio", ctypes.c_int32),
        ("coordinate_mode", ctypes.c_int),
        ("pool_mode", ctypes.c_int),
        ("layout", ctypes.c_int),
        ("dtype", ctypes.c_int),
    ]


class RoiAlignMap(ctypes.Structure):
    # roialign_map
    _fields_ = [("data", ctypes.c_void_p), ("height", ctypes.c_int64), ("width", ctypes.c_int64),
                ("strides", ctypes.c_int64 * 4)]


class RoiAlignInputs(ctypes.Structure):
    # roialign_inputs (ROIALIGN_MAX_LEVELS = 8 maps)
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("batch", ctypes.c_int64),
        ("channels", ctypes.c_int64),
        ("num_maps", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("maps", RoiAlignMap * 8),
        ("rois", ctypes.c_void_p),
        ("batch_indices", ctypes.c_void_p),
        ("levels", ctypes.c_void_p),
        ("num_rois", ctypes.c_int64),
    ]


class RoiAlignOptions(ctypes.Structure):
    # roialign_options
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("num_threads", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("threadpool", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_size", ctypes.c_size_t),
    ]


def load_library(path):
    lib = ctypes.CDLL(path)
    assert ctypes.sizeof(RoiAlignParams) == 48 and ctypes.sizeof(RoiAlignInputs) == 512
    assert ctypes.sizeof(RoiAlignOptions) == 40
    lib.roialign_select.argtypes = [ctypes.c_char_p, ctypes.POINTER(RoiAlignParams), ctypes.POINTER(ctypes.c_void_p)]
    lib.roialign_select.restype = ctypes.c_int
    lib.roialign_kernel_name.argtypes = [ctypes.c_void_p]
    lib.roialign_kernel_name.restype = ctypes.c_char_p
    lib.roialign_run.argtypes = [
        ctypes.c_void_p,  # kernel
        ctypes.POINTER(RoiAlignInputs),
        ctypes.c_void_p,  # output
        ctypes.POINTER(RoiAlignOptions),
    ]
    lib.roialign_run.restype = ctypes.c_int
    lib.roialign_kernel_free.argtypes = [ctypes.c_void_p]
    lib.roialign_kernel_free.restype = None
    lib.roialign_last_error.argtypes = []
    lib.roialign_last_error.restype = ctypes.c_char_p
    return lib


def last_error(lib):
    msg = lib.roialign_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


# ---------------------------------------------------------------------------------------------------------------
# Problem generation (feature-map coordinates first, then divided by spatial_scale; all scales are powers of two,
# so the image-pixel coordinates map back onto the feature map exactly).
# ---------------------------------------------------------------------------------------------------------------

def gen_box_1d(rng, kind, size):
    """Returns (start, end) along one axis in feature-map pixels, for a map of `size` pixels."""
    if kind == "inside":
        a = rng.uniform(0, size)
        b = a + rng.uniform(0.5, max(size - a, 0.5) + 0.5)
    elif kind == "partial":  # straddles the start or the end of the map
        if rng.random() < 0.5:
            a = rng.uniform(-size / 2 - 2, 0)
            b = rng.uniform(0.2, size + 1)
        else:
            a = rng.uniform(-0.5, size)
            b = rng.uniform(size, 1.5 * size + 3)
    elif kind == "outside":  # wholly outside the map, some within the inclusive [-1, size] band, some beyond it
        w = rng.uniform(0.1, size / 2 + 2)
        if rng.random() < 0.5:
            b = rng.uniform(-6, 0)
            a = b - w
        else:
            a = rng.uniform(size, size + 6)
            b = a + w
    elif kind == "tiny":
        a = rng.uniform(-1.5, size + 0.5)
        b = a + rng.choice([0.0, rng.uniform(0, 1e-3), rng.uniform(0, 0.1)])
    elif kind == "large":  # much larger than the map: big adaptive grids, many out-of-map samples
        a = rng.uniform(-2 * size - 4, 0)
        b = rng.uniform(size, 3 * size + 4)
    elif kind == "inverted":
        a = rng.uniform(-2, size + 2)
        b = a - rng.uniform(0.05, size / 2 + 3)
    elif kind == "integer":  # integral corners: samples land exactly on -1, 0, size-1, size (inclusive boundary)
        a = float(rng.integers(-3, size + 4))
        b = a + float(rng.integers(0, size + 4))
    else:
        raise ValueError(kind)
    return a, b


def gen_problem(rng, group, case_index):
    n = int(rng.integers(1, 4))
    c = int(rng.choice([1, 3, 8, 17]))
    h = int(rng.integers(1, 25))
    w = int(rng.integers(1, 25))
    k = int(rng.integers(1, 13))
    ph = int(rng.integers(1, 8))
    pw = int(rng.integers(1, 8))
    scale = float(rng.choice([1.0, 0.5, 0.25, 0.125]))
    # Cycle so that every group covers both coordinate modes and fixed/adaptive sampling evenly.
    aligned = bool(case_index % 2)
    sr_choice = (case_index // 2) % 4  # 0 -> adaptive, else 1, 2, 3
    if sr_choice == 0:
        sr = int(rng.choice([0, -1]))  # both <= 0 mean adaptive, for us and for torchvision
    else:
        sr = sr_choice

    if group == "inverted":
        if aligned and sr <= 0:
            sr = int(rng.integers(1, 4))  # see module docstring: adaptive + aligned inverted boxes excluded
    if group == "inverted-adaptive-half-pixel":
        aligned, sr = True, int(rng.choice([0, -1]))

    mixed_kinds = ["inside", "partial", "outside", "tiny", "large", "integer"]
    if not (aligned and sr <= 0):
        mixed_kinds.append("inverted")
    kind_for_group = {
        "mixed": None, "batch-indices": None,
        "outside/partial": ["outside", "partial"],
        "tiny": ["tiny"],
        "inverted": ["inverted"],
        "integer-boundary": ["integer"],
        "inverted-adaptive-half-pixel": ["inverted"],
    }[group]

    x = rng.uniform(-1.0, 1.0, size=(n, c, h, w)).astype(np.float32)
    rois = np.empty((k, 5), dtype=np.float32)
    for r in range(k):
        kinds = kind_for_group or mixed_kinds
        kx = str(rng.choice(kinds))
        ky = str(rng.choice(kinds)) if rng.random() < 0.3 else kx
        if group == "inverted-adaptive-half-pixel":
            ky = str(rng.choice(["inverted", "inside"]))  # one or both axes inverted
        x1, x2 = gen_box_1d(rng, kx, w)
        y1, y2 = gen_box_1d(rng, ky, h)
        rois[r] = (float(rng.integers(0, n)), x1 / scale, y1 / scale, x2 / scale, y2 / scale)
    return dict(n=n, c=c, h=h, w=w, k=k, ph=ph, pw=pw, scale=scale, sr=sr, aligned=aligned, x=x, rois=rois,
                use_batch_indices=(group == "batch-indices"))


# ---------------------------------------------------------------------------------------------------------------
# Running our library
# ---------------------------------------------------------------------------------------------------------------

class CallFailure(Exception):
    pass


def run_ours(lib, target, layout, prob, num_threads, kernel_names):
    params = RoiAlignParams(ctypes.sizeof(RoiAlignParams), 0, prob["ph"], prob["pw"], prob["scale"], prob["sr"],
                            COORD_HALF_PIXEL if prob["aligned"] else COORD_LEGACY, POOL_AVG, layout, DTYPE_F32)
    kernel = ctypes.c_void_p()
    st = lib.roialign_select(target.encode(), ctypes.byref(params), ctypes.byref(kernel))
    if st != 0 or not kernel.value:
        raise CallFailure("roialign_select(%r, layout=%d) returned %d: %s" % (target, layout, st, last_error(lib)))
    try:
        name = lib.roialign_kernel_name(kernel)
        kernel_names.setdefault((target, layout), set()).add(name.decode() if name else "?")
        n, c, h, w, k = prob["n"], prob["c"], prob["h"], prob["w"], prob["k"]
        x = prob["x"] if layout == LAYOUT_NCHW else np.ascontiguousarray(prob["x"].transpose(0, 2, 3, 1))
        x = np.ascontiguousarray(x, dtype=np.float32)
        if prob["use_batch_indices"]:
            rois = np.ascontiguousarray(prob["rois"][:, 1:5], dtype=np.float32)
            bidx = np.ascontiguousarray(prob["rois"][:, 0].astype(np.int64))
            bidx_ptr = bidx.ctypes.data
        else:
            rois = np.ascontiguousarray(prob["rois"], dtype=np.float32)
            bidx = None
            bidx_ptr = None
        shape = (k, c, prob["ph"], prob["pw"]) if layout == LAYOUT_NCHW else (k, prob["ph"], prob["pw"], c)
        out = np.full(shape, np.nan, dtype=np.float32)
        inputs = RoiAlignInputs(struct_size=ctypes.sizeof(RoiAlignInputs), batch=n, channels=c, num_maps=1,
                                rois=rois.ctypes.data, batch_indices=bidx_ptr, num_rois=k)
        inputs.maps[0] = RoiAlignMap(x.ctypes.data, h, w)  # strides 0: dense
        options = RoiAlignOptions(struct_size=ctypes.sizeof(RoiAlignOptions), num_threads=num_threads)
        st = lib.roialign_run(kernel, ctypes.byref(inputs), out.ctypes.data, ctypes.byref(options))
        if st != 0:
            raise CallFailure("roialign_run(%r, layout=%d) returned %d: %s" % (target, layout, st, last_error(lib)))
        del bidx
    finally:
        lib.roialign_kernel_free(kernel)
    if layout == LAYOUT_NHWC:
        out = np.ascontiguousarray(out.transpose(0, 3, 1, 2))  # [K,PH,PW,C] -> [K,C,PH,PW]
    return out


def reference(torch, roi_align, prob, zeros):
    if zeros:
        return np.zeros((prob["k"], prob["c"], prob["ph"], prob["pw"]), dtype=np.float32)
    out = roi_align(torch.from_numpy(prob["x"]), torch.from_numpy(prob["rois"]),
                    output_size=(prob["ph"], prob["pw"]), spatial_scale=prob["scale"],
                    sampling_ratio=prob["sr"], aligned=prob["aligned"])
    return out.detach().cpu().numpy().astype(np.float32)


def describe(prob):
    return ("N=%d C=%d H=%d W=%d K=%d PH=%d PW=%d spatial_scale=%g sampling_ratio=%d aligned=%s (%s) rois=%s"
            % (prob["n"], prob["c"], prob["h"], prob["w"], prob["k"], prob["ph"], prob["pw"], prob["scale"],
               prob["sr"], prob["aligned"], "HALF_PIXEL" if prob["aligned"] else "LEGACY",
               "[K,4]+batch_indices" if prob["use_batch_indices"] else "[K,5]"))


def main(argv):
    if len(argv) != 2:
        print("usage: /usr/bin/python3 %s /path/to/libroialign.so" % argv[0], file=sys.stderr)
        return 1
    try:
        import torch
        from torchvision.ops import roi_align
    except Exception as e:  # ImportError, or a broken torch install
        print("torchvision check: SKIPPED - cannot import torch/torchvision (%s: %s); run with Debian's "
              "/usr/bin/python3 and install python3-torchvision" % (type(e).__name__, e))
        return 2
    torch.set_num_threads(1)
    try:
        lib = load_library(argv[1])
    except OSError as e:
        print("torchvision check: FAIL - cannot load %s: %s" % (argv[1], e))
        return 1

    rng = np.random.default_rng(SEED)
    groups = [("mixed", 160), ("outside/partial", 40), ("tiny", 32), ("inverted", 40), ("integer-boundary", 40),
              ("batch-indices", 48), ("inverted-adaptive-half-pixel", 12)]

    total_cases = 0
    total_cmp = 0
    failures = 0
    max_abs = 0.0
    max_rel = 0.0  # over elements with |ref| >= 1e-3 (relative error of near-zero values is meaningless)
    worst = None   # (ratio err/tol, description...)
    kernel_names = {}

    for group, count in groups:
        g_abs = 0.0
        g_fail = 0
        g_cmp = 0
        g_modes = set()
        for i in range(count):
            prob = gen_problem(rng, group, i)
            g_modes.add(("HP" if prob["aligned"] else "LEG") + ("-adaptive" if prob["sr"] <= 0 else "-fixed"))
            zeros = group == "inverted-adaptive-half-pixel"
            ref = reference(torch, roi_align, prob, zeros)
            num_threads = 1 if (total_cases % 2 == 0) else 0
            total_cases += 1
            for target in TARGETS:
                for layout, lname in LAYOUTS:
                    g_cmp += 1
                    try:
                        ours = run_ours(lib, target, layout, prob, num_threads, kernel_names)
                    except CallFailure as e:
                        g_fail += 1
                        print("FAIL [%s] case %d target=%s layout=%s: %s\n  %s"
                              % (group, i, target, lname, e, describe(prob)))
                        if worst is None or worst[0] != float("inf"):
                            worst = (float("inf"), "%s (call failed: %s)" % (describe(prob), e))
                        continue
                    err = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
                    err = np.where(np.isfinite(err), err, np.inf)
                    tol = TOL_ABS + TOL_REL * np.abs(ref.astype(np.float64))
                    ratio = err / tol
                    idx = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
                    e_max = float(err.max()) if err.size else 0.0
                    g_abs = max(g_abs, e_max)
                    max_abs = max(max_abs, e_max)
                    big = np.abs(ref) >= 1e-3
                    if big.any():
                        max_rel = max(max_rel, float((err[big] / np.abs(ref[big].astype(np.float64))).max()))
                    r_max = float(ratio[idx]) if ratio.size else 0.0
                    if r_max > 1.0:
                        g_fail += 1
                        kk = idx[0]
                        msg = ("[%s] case %d target=%s layout=%s kernel=%s\n  %s\n  max abs err %.3g at "
                               "(k=%d, c=%d, ph=%d, pw=%d): ours=%r ref=%r\n  roi[%d]=%s"
                               % (group, i, target, lname, sorted(kernel_names.get((target, layout), ["?"])),
                                  describe(prob), e_max, idx[0], idx[1], idx[2], idx[3],
                                  float(ours[idx]), float(ref[idx]), kk, prob["rois"][kk].tolist()))
                        print("MISMATCH " + msg)
                        if worst is None or r_max > worst[0]:
                            worst = (r_max, msg)
        total_cmp += g_cmp
        failures += g_fail
        ref_name = "semantics.md zeros" if group == "inverted-adaptive-half-pixel" else "torchvision"
        print("group %-30s %4d cases, %4d comparisons vs %s, modes %s, max abs err %.3g, %s"
              % (group, count, g_cmp, ref_name, ",".join(sorted(g_modes)), g_abs,
                 "PASS" if g_fail == 0 else "FAIL (%d)" % g_fail))

    for (target, layout), names in sorted(kernel_names.items()):
        print("kernels: target=%-8s layout=%s -> %s" % (target, dict(LAYOUTS)[layout], ", ".join(sorted(names))))
    ok = failures == 0
    if not ok:
        print("WORST CASE: " + worst[1])
    print("torchvision check: %d cases (%d comparisons), max abs err %.3g, max rel err %.3g, %s"
          % (total_cases, total_cmp, max_abs, max_rel, "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
