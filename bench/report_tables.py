#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Markdown tables of a layout report run, as docs/layouts.md shows them.

  bench/report_tables.py [OUT_DIR]        (default: out; reads layout_report.json and, if present, peers.json)

Prints: the limits and peaks, the layout table (every ISA), the blocked layouts against NHWC and the issue's criteria,
the conversions around each block, the transforms' bandwidth against a copy's, then for the best ISA of the run (the one target "host"
selects, e.g. AVX-512 or AVX2) the summary (workload x layout x threads: ms min and median, fraction_of_limit at
each, speed-up against every peer), the detail table (GFMA/s, load GB/s, targets), thread scaling, all of them f32; the 16-bit dtypes against f32 when the run had them (--dtypes); the
peers against our faster kernel; and, when the report has them (schema 3), the backward's limits and rows (dX from dY,
every ISA and dtype, each kernel layout's time against its forward's). Every ratio in it comes from the one run. Times are medians of the rounds unless
marked min; speed-ups are a peer's median over ours.
"""
import sys

from report_schema import BLOCKS, KERNELS, conversion, isa_ranker, load_run

ORDER = ["default", "pooled14", "adaptive", "rois100", "rois20", "l3", "rotated", "fpn"]
# The targets for rotated RoIs: our rotated NHWC within 1.5x of axis-aligned NHWC on the same boxes, and
# at 1 thread at least these multiples faster than a peer (the peer's time over ours).
ROTATED_RATIO = 1.5
ROTATED_PEER_TARGETS = {("torchvision", "NCHW"): 20, ("torchvision", "channels_last"): 20,
                        ("openvino", "ROIAlignRotated-15"): 100}
TARGETS = {("default", "NHWC"): "50%", ("default", "NCHW"): "33%", ("pooled14", "NHWC"): "50%",
           ("pooled14", "NCHW"): "33%", ("adaptive", "NHWC"): "40%", ("adaptive", "NCHW"): "25%"}
TRANSFORMS = (conversion("NHWC", "NCHW"), conversion("NCHW", "NHWC"))
# The block that matches each ISA's vector of f32 (the 1.15x criterion against NHWC).
MATCHING = {"avx512": "NCHW16c", "avx10_2": "NCHW16c", "avx2": "NCHW8c", "sse4": "NCHW4c", "neon": "NCHW4c"}


def rank(workload):
    return ORDER.index(workload) if workload in ORDER else len(ORDER)


def mark(r):
    """"!" after a figure of an unstable row (its reasons are listed under "Unstable rows")."""
    return "" if r["stable"] else "!"


def share(row_ms, inner_ms):
    """The transforms' share of a conversion row: the row minus the kernel it wraps, over the row. Never negative:
    a row no slower than its kernel has no measurable share ("n/m")."""
    return f"{100 * (row_ms - inner_ms) / row_ms:.0f}%" if row_ms > inner_ms else "n/m"


def print_unstable(results, what="rows"):
    """The unstable rows and why, grouped by reason, so that no figure marked "!" is read without its warning."""
    bad = [r for r in results if not r["stable"]]
    if not results or not results[0]["judged"]:
        print("\nStability: not judged (a report written before schema version 2).")
        return
    print(f"\nUnstable {what}: {len(bad)} of {len(results)} (marked ! below; the verdict leaves them out).")
    groups = {}
    for r in bad:
        key = (r["workload"], r["isa"], r["dtype"], r["threads"])
        groups.setdefault(key, []).append(r)
    for (w, isa, dtype, t), rows in groups.items():
        reasons = sorted({why for r in rows for why in r["unstable_reasons"]})
        print(f"- {w} {isa} {dtype} {t} thread(s): {len(rows)} row(s): " + "; ".join(reasons))


def print_summary(rows, peers):
    """workload x layout x threads -> ms (min / median), fraction_of_limit (at the min / at the median), and the
    speed-up against every peer that ran (its median time over our median time, same workload and threads)."""
    labels = sorted({(p["peer"], p["variant"]) for p in peers})
    times = {(p["workload"], p["threads"], p["peer"], p["variant"]): p["ms"] for p in peers}
    print("\n| workload | layout | threads | ms min / median | fraction_of_limit min / median |"
          + "".join(f" {peer} {variant} / ours |" for peer, variant in labels))
    print("|---|---|---|---|---|" + "---|" * len(labels))
    for r in rows:
        cells = [r["workload"], r["path"], str(r["threads"]), f"{r['ms_min']:.1f} / {r['ms']:.1f}{mark(r)}",
                 f"{100 * r['fraction_of_limit']:.1f}% / {100 * r['fraction_of_limit_median']:.1f}%"]
        for peer, variant in labels:
            t = times.get((r["workload"], r["threads"], peer, variant))
            cells.append(f"{t / r['ms']:.1f}x" if t else "")
        print("| " + " | ".join(cells) + " |")


def main(argv):
    out = argv[1] if len(argv) > 1 else "out"
    report, peers = load_run(out)
    ok = [p for p in peers if p["status"] == "ok"]
    everything = report["results"]
    isa_rank = isa_ranker(report)
    results = [r for r in everything if r["dtype"] == "F32"]  # the tables below are f32
    by = {(r["workload"], r["isa"], r["threads"], r["path"]): r for r in results}

    print_unstable(everything)
    limits = report["limits"]
    if limits:
        print(f"Limits (lower bounds on any kernel's time; peaks measured in each of {report['machine'].get('rounds')} "
              "rounds beside the kernels; best of the rounds, then the rounds' median):")
        print("\n| workload | ISA | dtype | threads | limit ms | rounds' median ms | compute ms | memory ms "
              "| GFMA/s | GADD/s | move GB/s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for l in sorted(limits, key=lambda l: (rank(l["workload"]), l["isa"], l["dtype"], l["threads"])):
            moved = (l["read_bytes"] + l["write_bytes"]) / 1e6
            print(f"| {l['workload']} | {l['isa']} | {l['dtype']} | {l['threads']} | {l['limit_ms']:.2f} | "
                  f"{l['limit_ms_rounds_median']:.2f} | {l['compute_ms']:.2f} | {l['memory_ms']:.2f} | "
                  f"{l['gfma_per_s']['best']:.0f} / {l['gfma_per_s']['median']:.0f} | "
                  f"{l['gadd_per_s']['best']:.0f} / {l['gadd_per_s']['median']:.0f} | "
                  f"{moved / l['move_ms']['best']:.1f} / {moved / l['move_ms']['median']:.1f} |")
    else:  # a run of the earlier model
        print("Peaks measured at the start of the run:")
        for p in report["machine"]["peaks_by_threads"]:
            print(f"- {p['threads']} thread(s): {p['peak_gfma_per_s']:.0f} GFMA/s, write {p['write_gb_per_s']:.1f} "
                  f"GB/s, read {p['read_gb_per_s']:.1f} GB/s")

    def cell(r):  # min / median ms (fraction_of_limit at the min), "!" if unstable
        return f"{r['ms_min']:.1f} / {r['ms']:.1f} ({100 * r['fraction_of_limit']:.1f}%){mark(r)}"

    print("\n| workload | ISA | threads | NCHW ms (lim) | NHWC ms (lim) | NHWC data → NCHW kernel ms "
          "| NCHW data → NHWC kernel ms | faster kernel |")
    print("|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["workload"], r["isa"], r["threads"]) for r in results},
                  key=lambda k: (rank(k[0]), isa_rank(k[1]), k[2]))
    # "Ours" below is the ISA that target "host" selects: the best one this run timed.
    host_isa = min({r["isa"] for r in results}, key=isa_rank)
    for w, isa, t in keys:
        a, b = by.get((w, isa, t, "NCHW")), by.get((w, isa, t, "NHWC"))
        if not a or not b:
            continue
        x1, x2 = by.get((w, isa, t, TRANSFORMS[0])), by.get((w, isa, t, TRANSFORMS[1]))
        faster = f"NHWC {a['ms'] / b['ms']:.2f}x" if b["ms"] <= a["ms"] else f"NCHW {b['ms'] / a['ms']:.2f}x"
        faster += "" if a["stable"] and b["stable"] else " (unstable)"
        print(f"| {w} | {isa} | {t} | {cell(a)} | {cell(b)} | {x1['ms'] if x1 else float('nan'):.1f} | "
              f"{x2['ms'] if x2 else float('nan'):.1f} | {faster} |")

    tv1 = {(p["workload"], p["threads"]): p["ms"] for p in ok
           if p["peer"] == "torchvision" and p["variant"] in ("NCHW", "MultiScale NCHW")}
    print("\n| workload | ISA | threads | NHWC ms | NCHW4c ms (/ NHWC) | NCHW8c ms (/ NHWC) | NCHW16c ms (/ NHWC) "
          "| matching block / NHWC | torchvision NCHW / slowest block |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w, isa, t in keys:
        b = by.get((w, isa, t, "NHWC"))
        blocks = [by.get((w, isa, t, p)) for p in BLOCKS]
        if not b or not all(blocks):
            continue
        cells = [f"{x['ms_min']:.1f} / {x['ms']:.1f} ({x['ms_min'] / b['ms_min']:.2f}x)" for x in blocks]
        match = by.get((w, isa, t, MATCHING.get(isa, "")))
        tvt = tv1.get((w, t))
        print(f"| {w} | {isa} | {t} | {b['ms_min']:.1f} / {b['ms']:.1f} | " + " | ".join(cells) +
              f" | {match['ms_min'] / b['ms_min'] if match else float('nan'):.2f}x "
              f"| {tvt / max(x['ms'] for x in blocks) if tvt else float('nan'):.1f}x |")

    # The criteria for the blocked layouts: the block matching the ISA's vector within 1.15x of NHWC (minimum
    # times), every block >= 10x faster than torchvision NCHW (its median over ours).
    print("\n| workload | ISA | threads | NHWC ms min | matching block ms min | match / NHWC (≤ 1.15) | torchvision ms "
          "| tv / NCHW4c | tv / NCHW8c | tv / NCHW16c (≥ 10) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for w, isa, t in keys:
        b, match = by.get((w, isa, t, "NHWC")), by.get((w, isa, t, MATCHING.get(isa, "")))
        blocks = [by.get((w, isa, t, p)) for p in BLOCKS]
        if not b or not match or not all(blocks):
            continue
        tvt = tv1.get((w, t))
        ratios = [f"{tvt / x['ms']:.1f}x" if tvt else "" for x in blocks]
        print(f"| {w} | {isa} | {t} | {b['ms_min']:.1f} | {match['path']} {match['ms_min']:.1f} | "
              f"{match['ms_min'] / b['ms_min']:.2f}x | {f'{tvt:.0f}' if tvt else ''} | " + " | ".join(ratios) + " |")

    # Conversions around each block: its data on the NHWC kernel, and NCHW data on its kernel, each against the
    # kernel on the data's own layout (minimum times; the transforms' share is the row minus the kernel it wraps).
    print("\n| workload | ISA | threads | block b | NCHWb kernel ms | NCHWb → NHWC kernel → NCHWb ms (/ NCHWb kernel, "
          "transforms' share) | NCHW kernel ms | NCHW → NCHWb kernel → NCHW ms (/ NCHW kernel, transforms' share) |")
    print("|---|---|---|---|---|---|---|---|")
    for w, isa, t in keys:
        nhwc, nchw = by.get((w, isa, t, "NHWC")), by.get((w, isa, t, "NCHW"))
        for block in BLOCKS:
            kernel = by.get((w, isa, t, block))
            to_nhwc = by.get((w, isa, t, conversion(block, "NHWC")))
            from_nchw = by.get((w, isa, t, conversion("NCHW", block)))
            if not (nhwc and nchw and kernel and to_nhwc and from_nchw):
                continue
            print(f"| {w} | {isa} | {t} | {block} | {kernel['ms_min']:.1f} | "
                  f"{to_nhwc['ms_min']:.1f} / {to_nhwc['ms']:.1f} ({to_nhwc['ms_min'] / kernel['ms_min']:.2f}x, "
                  f"{share(to_nhwc['ms_min'], nhwc['ms_min'])}){mark(to_nhwc)} | {nchw['ms_min']:.1f} | "
                  f"{from_nchw['ms_min']:.1f} / {from_nchw['ms']:.1f} ({from_nchw['ms_min'] / nchw['ms_min']:.2f}x, "
                  f"{share(from_nchw['ms_min'], kernel['ms_min'])}){mark(from_nchw)} |")

    transforms = report["transforms"]
    if transforms:
        print("\n| workload | threads | transform | ms min / median | GB/s (read + written), at min / median "
              "| copy GB/s, best / median of the rounds | of copy: best / best, rounds' median |")
        print("|---|---|---|---|---|---|---|")
        for x in sorted(transforms, key=lambda x: (rank(x["workload"]), x["threads"])):
            print(f"| {x['workload']} | {x['threads']} | {x['from']} → {x['to']} | {x['ms_min']:.2f} / {x['ms']:.2f} | "
                  f"{x['gb_per_s']:.1f} / {x['gb_per_s_median']:.1f} | {x['copy_gb_per_s']['best']:.1f} / "
                  f"{x['copy_gb_per_s']['median']:.1f} | {100 * x['fraction_of_copy']:.0f}% / "
                  f"{100 * x['fraction_of_copy_median']:.0f}%{mark(x)} |")

    rows = sorted((r for r in results if r["isa"] == host_isa and r["path"] in KERNELS),
                  key=lambda r: (rank(r["workload"]), r["path"] != "NHWC", r["path"], r["threads"]))
    print_summary(rows, ok)

    tv = {(p["workload"], p["threads"]): p["ms"] for p in ok if p["peer"] == "torchvision" and p["variant"] == "NCHW"}
    print("\n| workload | layout | threads | ms | GFMA/s (direct count) | load GB/s | fraction_of_limit "
          "| target (2 threads) | torchvision NCHW ms / ours |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = tv.get((r["workload"], r["threads"]))
        target = TARGETS.get((r["workload"], r["path"]), "") if r["threads"] > 1 else ""
        speedup = f"{t / r['ms']:.1f}x" if t else ""
        print(f"| {r['workload']} | {r['path']} | {r['threads']} | {r['ms']:.1f} | {r['gfma_per_s']:.1f} | "
              f"{r['load_gb_per_s']:.1f} | {100 * r['fraction_of_limit']:.1f}% | {target} | {speedup} |")

    ms = {}
    for r in rows:
        ms.setdefault((r["workload"], r["path"]), {})[r["threads"]] = r["ms"]
    print("\n| workload | NHWC, 1 → 2 threads | NCHW, 1 → 2 threads |")
    print("|---|---|---|")
    for w in sorted({r["workload"] for r in rows}, key=rank):
        cells = []
        for path in ("NHWC", "NCHW"):
            m = ms.get((w, path), {})
            cells.append(f"{m[1] / m[2]:.2f}x" if 1 in m and 2 in m else "")
        print(f"| {w} | {cells[0]} | {cells[1]} |")

    dtypes = sorted({r["dtype"] for r in everything} - {"F32"})
    if dtypes:
        kernels = {(r["workload"], r["isa"], r["dtype"], r["threads"], r["path"]): r["ms"]
                   for r in everything if r["path"] in ("NCHW", "NHWC")}
        print("\n| workload | ISA | threads | dtype | NCHW ms | NHWC ms | NCHW: f32 ms / this | NHWC: f32 ms / this "
              "| faster kernel |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (w, isa, dtype, t, path), ms in sorted(kernels.items(), key=lambda kv: (rank(kv[0][0]), kv[0][1:])):
            if path != "NCHW" or dtype not in dtypes or (w, isa, dtype, t, "NHWC") not in kernels:
                continue
            a, b = ms, kernels[(w, isa, dtype, t, "NHWC")]
            fa, fb = kernels.get((w, isa, "F32", t, "NCHW")), kernels.get((w, isa, "F32", t, "NHWC"))
            faster = f"NHWC {a / b:.2f}x" if b <= a else f"NCHW {b / a:.2f}x"
            print(f"| {w} | {isa} | {t} | {dtype} | {a:.1f} | {b:.1f} | {fa / a if fa else float('nan'):.2f}x | "
                  f"{fb / b if fb else float('nan'):.2f}x | {faster} |")

    if ok:
        print(f"\n| workload | peer | input | threads | ms | our faster {host_isa} kernel, same threads, ms "
              "| peer / ours |")
        print("|---|---|---|---|---|---|---|")
        for p in sorted(ok, key=lambda p: (rank(p["workload"]), p["threads"])):
            ours = [by[k]["ms"] for k in [(p["workload"], host_isa, p["threads"], "NCHW"),
                                          (p["workload"], host_isa, p["threads"], "NHWC")] if k in by]
            if not ours:
                continue
            best = min(ours)
            note = " (timed once)" if p["runs"] == 1 else ""
            if p["compared_with"] == "ref_axis":
                note += " (axis-aligned, same boxes)"
            print(f"| {p['workload']} | {p['peer']} | {p['variant']}{note} | {p['threads']} | {p['ms']:.0f} | "
                  f"{best:.1f} | {p['ms'] / best:.1f}x |")
    print_rotated(report, ok, by, host_isa)
    print_backward(report, isa_rank)
    return 0


def print_rotated(report, peers, by, host_isa):
    """The rotated workloads against the issue's targets: rotated NHWC over axis-aligned NHWC on the same boxes
    (with the workload's angles and with every angle 0), and, at 1 thread, each peer's time over our rotated
    NHWC kernel's (medians)."""
    rows = report["rotated_vs_axis_aligned"]
    if rows:
        print(f"\nRotated RoIs: our NHWC kernel over the axis-aligned NHWC kernel on the same boxes (HALF_PIXEL), "
              f"same rounds, minimum times (target ≤ {ROTATED_RATIO}x; ! unstable):")
        print("\n| workload | ISA | dtype | threads | rotated ms | angles 0 ms | axis-aligned ms | rotated / axis "
              "| angles 0 / axis |")
        print("|---|---|---|---|---|---|---|---|---|")
        for c in rows:
            print(f"| {c['workload']} | {c['isa']} | {c['dtype']} | {c['threads']} | {c['rotated_ms_min']:.1f} | "
                  f"{c['angle0_ms_min']:.1f} | {c['axis_aligned_ms_min']:.1f} | {c['ratio']:.2f}x{mark(c)} | "
                  f"{c['ratio_angle0']:.2f}x{mark(c)} |")
    targets = []
    for p in peers:
        target = ROTATED_PEER_TARGETS.get((p["peer"], p["variant"]))
        ours = by.get((p["workload"], host_isa, 1, "NHWC"))
        if p["workload"] != "rotated" or p["threads"] != 1 or target is None or ours is None:
            continue
        targets.append((p, target, ours))
    if targets:
        print(f"\nRotated RoIs, 1 thread: peer / our rotated NHWC {host_isa} kernel (medians; torchvision runs its "
              "axis-aligned roi_align on the same boxes):")
        print("\n| peer | input | ms | ours ms | peer / ours | target |")
        print("|---|---|---|---|---|---|")
        for p, target, ours in targets:
            once = " (timed once)" if p["runs"] == 1 else ""
            speedup = p["ms"] / ours["ms"]
            print(f"| {p['peer']} | {p['variant']}{once} | {p['ms']:.0f} | {ours['ms']:.1f} | {speedup:.1f}x | "
                  f"≥ {target}x: {'met' if speedup >= target else 'NOT met'} |")


def print_backward(report, isa_rank):
    """The backward (dX from dY): its limits, then per workload, ISA, dtype and threads each kernel layout's min /
    median ms (fraction_of_limit at the min) and its minimum over the forward kernel's of the same layout."""
    rows, limits = report["backward_results"], report["backward_limits"]
    if not rows:
        return

    def ms(v):  # two decimals below 10 ms, where one would hide the differences
        return f"{v:.2f}" if v < 10 else f"{v:.1f}"

    print_unstable(rows, "backward rows")
    print("\nBackward limits (dX from dY; the same model as the forward's over the backward's bytes and operations):")
    print("\n| workload | ISA | dtype | threads | limit ms | rounds' median ms | compute ms | memory ms | dY MB "
          "| map MB | dX MB | move GB/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for l in sorted(limits, key=lambda l: (rank(l["workload"]), isa_rank(l["isa"]), l["dtype"], l["threads"])):
        moved = (l["read_bytes"] + l["write_bytes"]) / 1e6
        print(f"| {l['workload']} | {l['isa']} | {l['dtype']} | {l['threads']} | {l['limit_ms']:.2f} | "
              f"{l['limit_ms_rounds_median']:.2f} | {l['compute_ms']:.2f} | {l['memory_ms']:.2f} | "
              f"{l.get('dy_bytes', 0) / 1e6:.1f} | {l.get('map_bytes', 0) / 1e6:.1f} | {l['write_bytes'] / 1e6:.1f} | "
              f"{moved / l['move_ms']['best']:.1f} |")
    forward = {(r["workload"], r["isa"], r["dtype"], r["threads"], r["path"]): r for r in report["results"]}
    by = {(r["workload"], r["isa"], r["dtype"], r["threads"], r["path"]): r for r in rows}
    layouts = [k for k in KERNELS if any(r["path"] == k for r in rows)]
    print("\nBackward, dX from dY: ms min / median (fraction_of_limit at the min), then the minimum over the forward "
          "kernel's minimum (same layout, ISA, dtype and threads):")
    print("\n| workload | ISA | dtype | threads | " + " | ".join(f"{k} ms (lim; / forward)" for k in layouts)
          + " | fastest |")
    print("|---|---|---|---|" + "---|" * len(layouts) + "---|")
    keys = sorted({k[:4] for k in by}, key=lambda k: (rank(k[0]), isa_rank(k[1]), k[2] != "F32", k[2], k[3]))
    for key in keys:
        cells, ran = [], []
        for k in layouts:
            r = by.get(key + (k,))
            if r is None:
                cells.append("–")
                continue
            ran.append(r)
            f = forward.get(key + (k,))
            over = f"; {r['ms_min'] / f['ms_min']:.1f}x" if f else ""
            cells.append(f"{ms(r['ms_min'])} / {ms(r['ms'])} ({100 * r['fraction_of_limit']:.1f}%{over}){mark(r)}")
        best = min(ran, key=lambda r: r["ms_min"])
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(cells) + f" | {best['path']}"
              + ("" if all(r["stable"] for r in ran) else " (unstable)") + " |")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
