#!/usr/bin/python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Draws the layout report as two charts: which layout to run roi_align in, and what a conversion costs.

    .ci/python bench/plot_layouts.py --report out/layout_report.json [--peers out/peers.json] --out out/layouts.png
                                     [--blocked-out out/layouts-blocked.png] [--backward-out out/layouts-backward.png]

The files are read through bench/report_schema.py (schema in docs/layouts.md).

--out: one row of panels per workload, one panel per (ISA, dtype, threads), every panel of a row on one shared log
axis of ms per call (the median of the rounds; a thin line spans the rounds' minimum to maximum). In each panel one
bar per kernel layout: the kernel on data in its own layout (solid), and stacked on it the transforms of the
conversion that feeds it (NCHW data for the NHWC and blocked kernels, NHWC data for the NCHW kernel; paler): the
bar's top is the whole conversion row, transform + kernel + transform back. The stable kernel with the least time
is outlined and labelled "best". An unstable row (bench/stability.h) is hatched and its label ends in "!". The last
panel of a row holds the peers that ran on the workload (bench/peers.py), per thread count, with our best stable
path at that thread count (the host's ISA, f32) beside them, labelled with how many times slower each peer is.

--blocked-out (drawn when the report has blocked rows): the same axes; per blocked layout b a pair of bars, the NCHWb
kernel on NCHWb data, and the NHWC kernel with the transforms from NCHWb data and back stacked on it: whether a
graph that holds NCHWb data should run the blocked kernel or convert.

--backward-out (drawn when the report has backward rows, schema 3): the same axes for the backward (dX from dY),
one bar per kernel layout, the best stable one outlined; no transforms and no peers.
Uses matplotlib's Agg backend (Debian's python3-matplotlib); no display needed.
"""
import argparse
import math
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
except ImportError as _e:
    sys.stderr.write("plot_layouts.py: cannot import matplotlib (%s); run with .ci/python\n" % _e)
    sys.exit(2)

from report_schema import (BLOCKS, KERNELS, SchemaError, conversion, feeding, isa_ranker, load_peers, load_report,
                           peer_label)

KERNEL_COLOR = "#1f5fa8"
TRANSFORM_COLOR = "#f2a65a"
PEER_COLOR = "#8c8c8c"
BEST_EDGE = "#d4a017"
UNSTABLE_HATCH = "xxx"
PANEL_W, PANEL_H = 2.6, 2.7  # inches per panel


def unique(seq):
    out = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out


def fmt_ms(v):
    return "%.0f" % v if v >= 100 else "%.3g" % v


def draw_bar(ax, x, row, color, bottom=None, label=None, gid="kernel", width=0.72):
    """One bar from `bottom` (or the axis floor) to the row's median, hatched if the row is unstable, with the
    rounds' min-max span as a thin line. Returns the bar's Rectangle."""
    base = bottom if bottom is not None else 0
    height = row["ms"] - base
    rect = ax.bar(x, height, bottom=bottom, width=width, color=color,
                  hatch=None if row["stable"] else UNSTABLE_HATCH, edgecolor="white" if row["stable"] else "#333333",
                  linewidth=0.5)[0]
    rect.set_gid(gid)
    if bottom is None:  # the whisker of a stacked segment would hide the kernel's
        ax.plot([x, x], [row["ms_min"], row["ms_max"]], color="black", linewidth=0.7, solid_capstyle="butt",
                gid="spread")
    if label is not None:
        ax.annotate(label + ("" if row["stable"] else " !"), (x, max(row["ms"], row["ms_max"])), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", rotation=90, fontsize=6.5)
    return rect


def layout_panel(ax, rows, pairs):
    """Draws `pairs` [(tick label, bottom row or None, stacked row or None)] on `ax`: the bottom row solid, the
    stacked one as a transforms segment from the bottom row's top. Returns the bars drawn."""
    stable_bottoms = [(b["ms"], i) for i, (_, b, _) in enumerate(pairs) if b is not None and b["stable"]]
    best = min(stable_bottoms)[1] if stable_bottoms else None
    for i, (tick, bottom, stacked) in enumerate(pairs):
        if bottom is None:
            continue
        rect = draw_bar(ax, i, bottom, KERNEL_COLOR, label=fmt_ms(bottom["ms"]) if stacked is None else None)
        if i == best:
            rect.set_edgecolor(BEST_EDGE)
            rect.set_linewidth(2.0)
            rect.set_gid("kernel best")
        if stacked is not None:
            extra = stacked["ms"] - bottom["ms"]
            if extra > 0:
                draw_bar(ax, i, stacked, TRANSFORM_COLOR, bottom=bottom["ms"], gid="transforms",
                         label="%s+%s" % (fmt_ms(bottom["ms"]), fmt_ms(extra)))
            else:  # no slower than the kernel alone: noise, no segment and no negative figure
                ax.annotate(fmt_ms(bottom["ms"]) + " (+n/m)" + ("" if stacked["stable"] else " !"),
                            (i, bottom["ms"]), xytext=(0, 2), textcoords="offset points", ha="center",
                            va="bottom", rotation=90, fontsize=6.5)
    ax.set_xticks(range(len(pairs)))
    ax.set_xticklabels([p[0] for p in pairs], fontsize=6.5, rotation=45, ha="right")
    ax.set_xlim(-0.6, len(pairs) - 0.4)
    if best is not None:
        ax.annotate("best", (best, pairs[best][1]["ms"]), xytext=(0, -10), textcoords="offset points",
                    ha="center", fontsize=6.5, color="white", fontweight="bold")


def peer_panel(ax, report, workload, peers):
    """Peers that ran on `workload`, per thread count, with our best stable path (host ISA, f32) beside them."""
    results = [r for r in report["results"] if r["workload"] == workload and r["dtype"] == "F32"]
    host = min({r["isa"] for r in results}, key=isa_ranker(report)) if results else None
    bars, x = [], 0
    ticks = []
    for t in sorted({p["threads"] for p in peers}):
        ours = [r for r in results if r["isa"] == host and r["threads"] == t
                and (r["path"] in KERNELS or r["path"].startswith(("NCHW->", "NHWC->")))]
        # The best stable path; if every one is unstable, the best of them, hatched as such.
        best = min(ours, key=lambda r: (not r["stable"], r["ms"])) if ours else None
        if best is not None:
            rect = draw_bar(ax, x, best, KERNEL_COLOR, gid="ours", label=fmt_ms(best["ms"]))
            if best["stable"]:
                rect.set_edgecolor(BEST_EDGE)
                rect.set_linewidth(2.0)
            ticks.append("ours: %s\n%s, %d thr" % (best["path"].replace(" kernel->", " k->"), host, t))
            bars.append(rect)
            x += 1
        for p in sorted((p for p in peers if p["threads"] == t), key=lambda p: p["ms"]):
            rect = ax.bar(x, p["ms"], width=0.72, color=PEER_COLOR, edgecolor="white", hatch="//")[0]
            rect.set_gid("peer")
            slower = " (%.0fx)" % (p["ms"] / best["ms"]) if best is not None else ""
            ax.annotate(fmt_ms(p["ms"]) + slower, (x, p["ms"]), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", rotation=90, fontsize=6.5, style="italic")
            ticks.append("%s\n%d thr" % (peer_label(p), t))
            bars.append(rect)
            x += 1
    ax.set_xticks(range(len(ticks)))
    ax.set_xticklabels(ticks, fontsize=6, rotation=45, ha="right")
    ax.set_xlim(-0.6, max(len(ticks), 1) - 0.4)
    ax.set_title("peers, %s" % workload, fontsize=8.5, loc="left")
    return bars


def group_keys(rows, report):
    rank = isa_ranker(report)
    return sorted(unique((r["isa"], r["dtype"], r["threads"]) for r in rows),
                  key=lambda k: (rank(k[0]), k[1] != "F32", k[1], k[2]))


def grid(report, peers, pairs_of, title, with_peers, rows_key="results", kernel_label="kernel on its own layout"):
    """A figure with one row per workload that has bars from `pairs_of(rows of a group)` and one panel per group,
    plus a peers panel per row when `with_peers`; every panel of a row on one log axis. `rows_key`: the report's
    rows drawn ("results", or "backward_results", which has no transforms to stack)."""
    results = report[rows_key]
    if not results:
        return None
    workloads = []
    for w in unique(r["workload"] for r in results):
        keys = [k for k in group_keys([r for r in results if r["workload"] == w], report)
                if any(b is not None for _, b, _ in pairs_of([r for r in results if r["workload"] == w
                                                              and (r["isa"], r["dtype"], r["threads"]) == k]))]
        if keys:
            workloads.append((w, keys))
    if not workloads:
        return None
    ok_peers = {w: [p for p in peers if p["workload"] == w and p["status"] == "ok"] for w, _ in workloads}
    peer_col = with_peers and any(ok_peers.values())
    cols = max(len(keys) for _, keys in workloads) + (1 if peer_col else 0)
    fig, axes = plt.subplots(len(workloads), cols, figsize=(0.9 + PANEL_W * cols, 1.4 + PANEL_H * len(workloads)),
                             squeeze=False)
    for row_axes, (w, keys) in zip(axes, workloads):
        shared = row_axes[0]
        used = []
        for ax, key in zip(row_axes, keys):
            rows = [r for r in results if r["workload"] == w and (r["isa"], r["dtype"], r["threads"]) == key]
            layout_panel(ax, rows, pairs_of(rows))
            ax.set_title("%s: %s %s, %d thr" % (w, key[0], key[1], key[2]), fontsize=8.5, loc="left")
            ax.set_gid("group")
            used.append(ax)
        if peer_col and ok_peers[w]:
            ax = row_axes[-1]
            peer_panel(ax, report, w, ok_peers[w])
            ax.set_gid("peers")
            used.append(ax)
        for ax in row_axes:
            if ax not in used:
                ax.set_visible(False)
                ax.set_gid("unused")
        values = [v for ax in used for p in ax.patches for v in (p.get_y() + p.get_height(),) if v > 0]
        values += [r["ms_min"] for r in results if r["workload"] == w]
        lo, hi = min(values), max(values)
        for ax in used:
            if ax is not shared:
                ax.sharey(shared)
            ax.set_yscale("log")
            ax.grid(axis="y", which="both", alpha=0.3)
            ax.set_axisbelow(True)
        shared.set_ylim(lo / 1.5, hi * 25)  # headroom for the rotated labels
        shared.set_ylabel("ms per call (log)", fontsize=8)
    handles = [Patch(facecolor=KERNEL_COLOR, label="%s (median; line: min-max of rounds)" % kernel_label)]
    if rows_key == "results":
        handles.append(Patch(facecolor=TRANSFORM_COLOR, label="+ transforms of the conversion feeding it"))
    handles += [Patch(facecolor="white", edgecolor=BEST_EDGE, linewidth=2, label="best stable path"),
                Patch(facecolor="white", edgecolor="#333333", hatch=UNSTABLE_HATCH, label="unstable row (!)")]
    if peer_col:
        handles.append(Patch(facecolor=PEER_COLOR, hatch="//", edgecolor="white", label="peer (x: over our best)"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7.5, frameon=False)
    m = report["machine"]
    unstable = sum(1 for r in results if not r["stable"])
    fig.suptitle("%s\n%s, %s hw threads; %d of %d rows unstable%s" % (
        title, m.get("cpu", "?"), m.get("threads", "?"), unstable, len(results),
        "" if results[0]["judged"] else " (not judged: report before schema 2)"), fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.93))
    return fig


def kernel_pairs(rows):
    by = {r["path"]: r for r in rows}
    return [(k if feeding(k) not in by else "%s\n(from %s)" % (k, feeding(k).split("->")[0]), by.get(k),
             by.get(feeding(k))) for k in KERNELS if k in by]


def blocked_pairs(rows):
    by = {r["path"]: r for r in rows}
    pairs = []
    for b in BLOCKS:
        if b in by and "NHWC" in by and conversion(b, "NHWC") in by:
            pairs.append(("%s kernel" % b, by[b], None))
            pairs.append(("%s data on\nNHWC kernel" % b, by["NHWC"], by[conversion(b, "NHWC")]))
    return pairs


def backward_pairs(rows):
    by = {r["path"]: r for r in rows}
    return [(k, by[k], None) for k in KERNELS if k in by]


def render(report, peers):
    """{"layouts": the main figure, "blocked": the blocked figure or None, "backward": the backward's or None}."""
    return {"layouts": grid(report, peers, kernel_pairs,
                            "roi_align per layout: ms per call (lower is better); conversions stacked on the kernel "
                            "they feed", with_peers=True),
            "blocked": grid(report, [], blocked_pairs,
                            "Data held in a blocked layout: its own kernel, or transforms to NHWC and the NHWC "
                            "kernel", with_peers=False),
            "backward": grid(report, [], backward_pairs,
                             "The backward, dX from dY, per kernel layout: ms per call (lower is better)",
                             with_peers=False, rows_key="backward_results",
                             kernel_label="backward kernel on its own layout")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", required=True)
    ap.add_argument("--peers")
    ap.add_argument("--out", required=True, help="PNG of the layouts and peers")
    ap.add_argument("--blocked-out", help="PNG of the blocked layouts' conversions")
    ap.add_argument("--backward-out", help="PNG of the backward rows (dX from dY)")
    ap.add_argument("--dpi", type=int, default=110)
    args = ap.parse_args(argv)
    try:
        report = load_report(args.report)
        peers = load_peers(args.peers) if args.peers else []
    except SchemaError as e:
        raise SystemExit(str(e))
    figures = render(report, peers)
    if figures["layouts"] is None:
        raise SystemExit("%s: no kernel rows to draw" % args.report)
    figures["layouts"].savefig(args.out, dpi=args.dpi)
    sys.stderr.write("wrote %s\n" % args.out)
    if args.blocked_out:
        if figures["blocked"] is None:
            sys.stderr.write("no blocked rows: %s not written\n" % args.blocked_out)
        else:
            figures["blocked"].savefig(args.blocked_out, dpi=args.dpi)
            sys.stderr.write("wrote %s\n" % args.blocked_out)
    if args.backward_out:
        if figures["backward"] is None:
            sys.stderr.write("no backward rows: %s not written\n" % args.backward_out)
        else:
            figures["backward"].savefig(args.backward_out, dpi=args.dpi)
            sys.stderr.write("wrote %s\n" % args.backward_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
