#!/usr/bin/python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Renders the layout report (and optionally the peers' timings) as a PNG bar chart.

Usage:
    /usr/bin/python3 bench/plot_layouts.py --report report.json [--peers peers.json] --out layouts.png

--report is the layout report's JSON:
    {"machine": {"cpu", "threads", "peak_gfma_per_s", "write_gb_per_s", "read_gb_per_s"},
     "results": [{"workload", "isa", "dtype" (optional, default F32), "threads", "path", "ms", "fraction_of_limit",
                  "gfma_per_s"}]}
--peers is bench/peers.py's JSON: {"peers": [{"peer", "variant", "version", "workload", "threads", "ms", "status"}]}

The report's "transforms" (map transforms against a copy's bandwidth) are not drawn; bench/report_tables.py prints
them. One panel per workload. Bars are milliseconds per call (log scale when the values span more than 20x), grouped by
(isa, dtype, threads), one bar per path; each of our bars is labelled with fraction_of_limit (the limit of
docs/performance-model.md / measured time) as a percentage. Peers whose status is "ok" follow each thread count as a
group of their own, in a distinct (grey/hatched) palette; peers that were skipped or mismatched are listed under the
panel, without bars.
Uses matplotlib's Agg backend (Debian's python3-matplotlib), no display needed.
"""
import argparse
import json
import math
import sys
import textwrap

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
except ImportError as _e:
    sys.stderr.write("plot_layouts.py: cannot import matplotlib (%s); run with Debian's /usr/bin/python3 "
                     "(apt-get install python3-matplotlib)\n" % _e)
    sys.exit(2)

BLOCKS = ["NCHW4c", "NCHW8c", "NCHW16c"]
# Kernels, then the conversion rows ("D->K kernel->D": data in D run by K's kernel), those around each block beside
# each other.
PATH_ORDER = (["NCHW", "NHWC"] + BLOCKS + ["NHWC->NCHW kernel->NHWC", "NCHW->NHWC kernel->NCHW"]
              + [p for b in BLOCKS for p in ("%s->NHWC kernel->%s" % (b, b), "NCHW->%s kernel->NCHW" % b)]
              + ["NCHW level by level", "NHWC level by level"])
# One colour per path in PATH_ORDER: the kernels strong; a conversion from NHWC or a blocked layout a paler kin of
# its data's layout, one from NCHW a colour of its own (three of them would not tell apart as shades of blue); the
# fpn workload's level-by-level baselines dark.
PATH_COLORS = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#2ca02c", "#ffbb78", "#aec7e8",
               "#c5b0d5", "#e377c2", "#c49c94", "#bcbd22", "#98df8a", "#17becf", "#393b79", "#ad494a"]
PEER_COLORS = ["#4d4d4d", "#8c8c8c", "#b07aa1", "#9c755f", "#bab0ac", "#6b4c9a"]
LOG_RANGE = 20.0  # log scale when max/min of a panel's bars exceeds this


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("cannot read %s %s: %s" % (what, path, e))


def validate_report(report, path):
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        raise SystemExit("%s: not a layout report (no \"results\" list)" % path)
    rows = []
    for i, r in enumerate(report["results"]):
        try:
            row = {"workload": str(r["workload"]), "isa": str(r["isa"]), "threads": int(r["threads"]),
                   "path": str(r["path"]), "ms": float(r["ms"]),
                   "fraction_of_limit": (float(r["fraction_of_limit"])
                                         if r.get("fraction_of_limit") is not None else None)}
        except (KeyError, TypeError, ValueError) as e:
            raise SystemExit("%s: results[%d] is malformed (%s: %s)" % (path, i, type(e).__name__, e))
        # 16-bit dtypes are groups of their own beside f32 (reports before the dtype dimension are all f32).
        dtype = str(r.get("dtype") or "F32")
        if dtype != "F32":
            row["isa"] = "%s %s" % (row["isa"], dtype)
        if not (row["ms"] > 0 and math.isfinite(row["ms"])):
            sys.stderr.write("%s: results[%d] has ms=%r, not drawn\n" % (path, i, r["ms"]))
            continue
        rows.append(row)
    return rows


def load_peers(path):
    data = load_json(path, "peers file")
    if not isinstance(data, dict) or not isinstance(data.get("peers"), list):
        raise SystemExit("%s: not a peers file (no \"peers\" list)" % path)
    rows = []
    for i, r in enumerate(data["peers"]):
        try:
            rows.append({"peer": str(r["peer"]), "variant": str(r.get("variant") or ""),
                         "workload": str(r["workload"]), "threads": int(r["threads"]),
                         "ms": float(r["ms"]) if r.get("ms") is not None else None,
                         "status": str(r.get("status", ""))})
        except (KeyError, TypeError, ValueError) as e:
            raise SystemExit("%s: peers[%d] is malformed (%s: %s)" % (path, i, type(e).__name__, e))
    return rows


def unique(seq):
    seen, out = set(), []
    for x in seq:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def peer_label(p):
    return "%s %s" % (p["peer"], p["variant"]) if p["variant"] else p["peer"]


def fmt_pct(f):
    if f is None or not math.isfinite(f):
        return "?"
    pct = 100.0 * f
    return "%.1f%%" % pct if pct < 10 else "%.0f%%" % pct


def build_panel(ax, workload, ours, peers, paths, path_color, peer_color, bar_w=0.8):
    """Draws one workload; returns the list of not-drawn peer notes."""
    isas = unique(r["isa"] for r in ours)
    ok_peers = [p for p in peers if p["status"] == "ok" and p["ms"] is not None and p["ms"] > 0]
    thread_counts = sorted(set(r["threads"] for r in ours) | set(p["threads"] for p in ok_peers))

    groups = []  # (label, [(value, color, hatch, is_ours, fraction, legend_key)])
    for t in thread_counts:
        for isa in isas:
            bars = []
            for path in paths:
                match = [r for r in ours if r["isa"] == isa and r["threads"] == t and r["path"] == path]
                if match:
                    r = match[0]
                    bars.append((r["ms"], path_color[path], None, True, r["fraction_of_limit"], path))
            if bars:
                groups.append(("%s\n%d thr" % (isa, t), bars))
        pbars = [(p["ms"], peer_color[peer_label(p)], "//", False, None, peer_label(p))
                 for p in ok_peers if p["threads"] == t]
        if pbars:
            groups.append(("peers\n%d thr" % t, pbars))

    values = [b[0] for _, bars in groups for b in bars]
    x = 0.0
    ticks, tick_labels = [], []
    for label, bars in groups:
        n = len(bars)
        w = bar_w / max(n, 1)
        for j, (v, color, hatch, is_ours, frac, _) in enumerate(bars):
            xc = x - bar_w / 2 + w * (j + 0.5)
            ax.bar(xc, v, width=w * 0.92, color=color, hatch=hatch, edgecolor="white" if hatch else color,
                   linewidth=0.0 if not hatch else 0.5)
            text = fmt_pct(frac) if is_ours else ("%.0f" % v if v >= 100 else "%.3g" % v)
            ax.annotate(text, (xc, v), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                        rotation=90, fontsize=7, color="black" if is_ours else "#555555",
                        style="normal" if is_ours else "italic")
        ticks.append(x)
        tick_labels.append(label)
        x += 1.0
    ax.set_xticks(ticks)
    ax.set_xticklabels(tick_labels, fontsize=8)
    ax.set_xlim(-0.6, max(x - 0.4, 0.6))
    if values:
        lo, hi = min(values), max(values)
        if hi / lo > LOG_RANGE:
            ax.set_yscale("log")
            ax.set_ylim(lo / 1.6, hi * 2.8)  # headroom for the rotated labels
            ax.set_ylabel("ms per call (log scale)")
        else:
            ax.set_ylim(0, hi * 1.3)
            ax.set_ylabel("ms per call")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title("workload %s" % workload, fontsize=10, loc="left")

    notes = []
    for p in peers:
        if p["status"] != "ok" or p["ms"] is None:
            kind = p["status"].split(":", 1)[0] or "no status"
            detail = p["status"].split(":", 1)[1].strip() if ":" in p["status"] else ""
            notes.append((peer_label(p), p["threads"], kind, detail))
    return notes


def summarize_notes(notes):
    """Collapses per-thread notes of the same peer into one line each."""
    by_peer = {}
    for label, t, kind, detail in notes:
        key = (label, kind, detail)
        by_peer.setdefault(key, []).append(t)
    lines = []
    for (label, kind, detail), ts in by_peer.items():
        d = detail if len(detail) <= 90 else detail[:87] + "..."
        lines.append("%s (%s thr): %s%s" % (label, ",".join(str(t) for t in sorted(set(ts))), kind,
                                            " - " + d if d else ""))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", required=True, help="layout report JSON (from the C++ layout report)")
    ap.add_argument("--peers", help="bench/peers.py JSON (optional)")
    ap.add_argument("--out", required=True, help="PNG file to write")
    ap.add_argument("--dpi", type=int, default=110)
    args = ap.parse_args(argv)

    report = load_json(args.report, "report")
    ours = validate_report(report, args.report)
    peers = load_peers(args.peers) if args.peers else []
    if not ours:
        raise SystemExit("%s: no results to draw" % args.report)

    workloads = unique(r["workload"] for r in ours)
    extra = sorted(set(p["workload"] for p in peers) - set(workloads))
    if extra:
        sys.stderr.write("peers for workloads not in the report are not drawn: %s\n" % ", ".join(extra))

    present = set(r["path"] for r in ours)
    paths = [p for p in PATH_ORDER if p in present] + sorted(present - set(PATH_ORDER))
    path_color = {p: PATH_COLORS[i % len(PATH_COLORS)] for i, p in enumerate(PATH_ORDER + sorted(present - set(PATH_ORDER)))}
    peer_labels = unique(peer_label(p) for p in peers if p["status"] == "ok" and p["workload"] in workloads)
    peer_color = {lab: PEER_COLORS[i % len(PEER_COLORS)] for i, lab in enumerate(peer_labels)}
    for p in peers:
        peer_color.setdefault(peer_label(p), PEER_COLORS[-1])

    # Size: width follows the widest panel's bar count, height the number of panels.
    def n_bars(w):
        n = sum(1 for r in ours if r["workload"] == w)
        n += sum(1 for p in peers if p["workload"] == w and p["status"] == "ok")
        return n
    widest = max(n_bars(w) for w in workloads)
    fig_w = min(max(9.0, 2.5 + 0.28 * widest), 30.0)
    n_panels = len(workloads)
    n_legend = len(paths) + len(peer_labels)
    legend_rows = (n_legend + 3) // 4
    # Fixed sizes in inches: panel plot area, gap between panels (tick labels, note, next title), title block,
    # bottom block (last panel's tick labels and note, then the legend).
    axes_in, gap_in, top_in, bottom_in = 2.9, 1.15, 1.1, 0.85 + 0.22 * legend_rows
    fig_h = n_panels * axes_in + (n_panels - 1) * gap_in + top_in + bottom_in
    fig, axes = plt.subplots(n_panels, 1, figsize=(fig_w, fig_h), squeeze=False)
    fig.subplots_adjust(left=0.8 / fig_w, right=1 - 0.25 / fig_w, top=1 - top_in / fig_h, bottom=bottom_in / fig_h,
                        hspace=gap_in / axes_in)

    all_notes = {}
    for ax, w in zip(axes[:, 0], workloads):
        notes = build_panel(ax, w, [r for r in ours if r["workload"] == w],
                            [p for p in peers if p["workload"] == w], paths, path_color, peer_color)
        lines = summarize_notes(notes)
        if lines:
            all_notes[w] = lines
            ax.text(0.0, -0.58 / axes_in * 1.0 - 0.02, "not drawn: " + "; ".join(lines[:4]) + ("; ..." if len(lines) > 4 else ""),
                    transform=ax.transAxes, fontsize=6.5, color="#666666", va="top", ha="left", wrap=True)

    m = report.get("machine") or {}
    machine = []
    if m.get("cpu"):
        machine.append(str(m["cpu"]))
    if m.get("threads") is not None:
        machine.append("%s hw threads" % m["threads"])
    if m.get("peak_gfma_per_s") is not None:
        machine.append("peak %.1f GFMA/s" % float(m["peak_gfma_per_s"]))
    if m.get("write_gb_per_s") is not None and m.get("read_gb_per_s") is not None:
        machine.append("write %.1f GB/s, read %.1f GB/s" % (float(m["write_gb_per_s"]), float(m["read_gb_per_s"])))
    fig.suptitle("RoIAlign: time per call by layout path, ms (lower is better)\n"
                 "labels on our bars: fraction of the limit, a lower bound on any kernel's time (higher is better); "
                 "peers hatched, labelled with ms\n" +
                 "\n".join(textwrap.wrap(" | ".join(machine), width=int(fig_w * 13))[:2]), fontsize=9.5)

    handles = [Patch(facecolor=path_color[p], label=p) for p in paths]
    handles += [Patch(facecolor=peer_color[lab], hatch="//", edgecolor="white", label=lab) for lab in peer_labels]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.05 / fig_h))
    fig.savefig(args.out, dpi=args.dpi)
    sys.stderr.write("wrote %s (%d workload panel(s), %d of our bars, %d peer bars)\n"
                     % (args.out, len(workloads), len(ours),
                        sum(1 for p in peers if p["status"] == "ok" and p["workload"] in workloads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
