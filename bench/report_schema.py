# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""The one reader of the layout report's JSON (bench/report_json.cc writes it; docs/layouts.md has the schema)
and of bench/peers.py's. bench/plot_layouts.py, bench/report_tables.py and bench/report_series.py read through it.

Every result row comes back with every field of the current schema, so no script fills a missing field its own
way: reports written before version 2 (no stability judgement) get "stable": True, "unstable_reasons": [] and
"judged": False; before the dtype dimension, "dtype": "F32"; before minimum times, "ms_min" = "ms".
Version 3 adds the backward (dX from dY): "backward_results", rows of the same fields per kernel layout ("path" is
the layout), and "backward_limits", the forward's limit fields plus "dy_bytes" and "map_bytes"; a report before
version 3 comes back with both empty.
Version 4 adds the rotated workload (rotated RoIs: its rows are like any workload's) and "rotated_vs_axis_aligned":
per rotated workload, ISA, dtype and thread count, its NHWC kernel against the axis-aligned NHWC kernel on the same
boxes, timed in the same rounds ("rotated_ms_min", "angle0_ms_min", "axis_aligned_ms_min" and the medians, "ratio" =
rotated over axis-aligned at the minimum, "ratio_angle0" the same with every angle 0, "stable",
"unstable_reasons"); a report before version 4 comes back with it empty. Peers rows may carry "runs" (the timed runs
of the median: 1 for a peer timed once, its single run's time) and "compared_with" (what the peer's output was
checked against: "ref", or "ref_axis" for an axis-aligned peer on a rotated workload's boxes); both default to None.
"""
import json
import math
import os

SCHEMA_VERSION = 4  # kReportSchemaVersion in bench/report_json.h
BLOCKS = ("NCHW4c", "NCHW8c", "NCHW16c")
KERNELS = ("NCHW", "NHWC") + BLOCKS


class SchemaError(ValueError):
    """A file that is not a layout report or a peers file; the message names the file and the field."""


def conversion(data, kernel):
    """The path name of data in layout `data` run by `kernel`'s kernel: transforms there and back around it."""
    return "%s->%s kernel->%s" % (data, kernel, data)


def feeding(kernel):
    """The conversion drawn on `kernel`'s bar: the NCHW kernel from NHWC data, every other kernel from NCHW data."""
    return conversion("NHWC" if kernel == "NCHW" else "NCHW", kernel)


def _load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SchemaError("cannot read %s %s: %s" % (what, path, e))


def _number(row, key, where, default=None):
    v = row.get(key, default)
    if v is None:
        raise SchemaError("%s: no %r" % (where, key))
    try:
        return float(v)
    except (TypeError, ValueError):
        raise SchemaError("%s: %r is not a number (%r)" % (where, key, v))


def normalize_result(r, where, judged):
    """One "results" entry with every field of the current schema."""
    if not isinstance(r, dict):
        raise SchemaError("%s: not an object" % where)
    try:
        row = {"workload": str(r["workload"]), "isa": str(r["isa"]), "threads": int(r["threads"]),
               "path": str(r["path"])}
    except (KeyError, TypeError, ValueError) as e:
        raise SchemaError("%s: %s: %s" % (where, type(e).__name__, e))
    row["dtype"] = str(r.get("dtype") or "F32")
    row["ms"] = _number(r, "ms", where)
    row["ms_min"] = _number(r, "ms_min", where, r["ms"])
    row["ms_max"] = _number(r, "ms_max", where, r["ms"])
    for key in ("fraction_of_limit", "fraction_of_limit_median", "gfma_per_s", "load_gb_per_s"):
        row[key] = float(r[key]) if r.get(key) is not None else float("nan")
    row["spread"] = _number(r, "spread", where, row["ms"] / row["ms_min"] - 1 if row["ms_min"] > 0 else 0)
    row["judged"] = judged
    row["stable"] = bool(r.get("stable", True))
    row["unstable_reasons"] = [str(x) for x in r.get("unstable_reasons", [])]
    if row["stable"] != (not row["unstable_reasons"]):
        raise SchemaError("%s: \"stable\" is %s but the reasons are %r" % (where, row["stable"],
                                                                           row["unstable_reasons"]))
    row["attempts"] = int(r.get("attempts", 1))
    row["machine"] = dict(r.get("machine") or {})
    if not (row["ms"] > 0 and math.isfinite(row["ms"]) and row["ms_min"] > 0):
        raise SchemaError("%s: times must be positive (ms=%r, ms_min=%r)" % (where, row["ms"], row["ms_min"]))
    return row


def parse_report(data, path="report"):
    """A layout report's parsed JSON, checked and completed (see the module's docstring)."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise SchemaError("%s: not a layout report (no \"results\" list)" % path)
    version = int(data.get("schema_version", 1))
    if version > SCHEMA_VERSION:
        raise SchemaError("%s: schema version %d is newer than this reader's %d" % (path, version, SCHEMA_VERSION))
    judged = version >= 2
    report = dict(data)
    report["schema_version"] = version
    report["machine"] = dict(data.get("machine") or {})
    report["limits"] = list(data.get("limits") or [])
    report["transforms"] = []
    for i, t in enumerate(data.get("transforms") or []):
        t = dict(t)
        t["stable"] = bool(t.get("stable", True))
        t["unstable_reasons"] = [str(x) for x in t.get("unstable_reasons", [])]
        if t["stable"] != (not t["unstable_reasons"]):
            raise SchemaError("%s: transforms[%d]: \"stable\" is %s but the reasons are %r"
                              % (path, i, t["stable"], t["unstable_reasons"]))
        report["transforms"].append(t)
    report["results"] = [normalize_result(r, "%s: results[%d]" % (path, i), judged)
                         for i, r in enumerate(data["results"])]
    report["backward_results"] = [normalize_result(r, "%s: backward_results[%d]" % (path, i), judged)
                                  for i, r in enumerate(data.get("backward_results") or [])]
    report["backward_limits"] = list(data.get("backward_limits") or [])
    report["rotated_vs_axis_aligned"] = []
    for i, c in enumerate(data.get("rotated_vs_axis_aligned") or []):
        where = "%s: rotated_vs_axis_aligned[%d]" % (path, i)
        if not isinstance(c, dict):
            raise SchemaError("%s: not an object" % where)
        c = dict(c)
        for key in ("rotated_ms_min", "angle0_ms_min", "axis_aligned_ms_min", "ratio", "ratio_angle0"):
            c[key] = _number(c, key, where)
            if not c[key] > 0:
                raise SchemaError("%s: %r must be positive" % (where, key))
        c["stable"] = bool(c.get("stable", True))
        c["unstable_reasons"] = [str(x) for x in c.get("unstable_reasons", [])]
        if c["stable"] != (not c["unstable_reasons"]):
            raise SchemaError("%s: \"stable\" is %s but the reasons are %r" % (where, c["stable"],
                                                                                c["unstable_reasons"]))
        report["rotated_vs_axis_aligned"].append(c)
    return report


def load_report(path):
    return parse_report(_load(path, "report"), path)


def parse_peers(data, path="peers"):
    """bench/peers.py's rows, each with peer, variant, version, workload, threads, ms (None unless ok), status."""
    if not isinstance(data, dict) or not isinstance(data.get("peers"), list):
        raise SchemaError("%s: not a peers file (no \"peers\" list)" % path)
    rows = []
    for i, p in enumerate(data["peers"]):
        try:
            row = {"peer": str(p["peer"]), "variant": str(p.get("variant") or ""), "version": p.get("version"),
                   "workload": str(p["workload"]), "threads": int(p["threads"]),
                   "ms": float(p["ms"]) if p.get("ms") is not None else None, "status": str(p.get("status", "")),
                   "max_err": p.get("max_err"),
                   "runs": int(p["runs"]) if p.get("runs") is not None else None,
                   "compared_with": p.get("compared_with")}
        except (KeyError, TypeError, ValueError) as e:
            raise SchemaError("%s: peers[%d]: %s: %s" % (path, i, type(e).__name__, e))
        if row["status"] == "ok" and not (row["ms"] is not None and row["ms"] > 0):
            raise SchemaError("%s: peers[%d] is ok without a positive ms" % (path, i))
        rows.append(row)
    return rows


def load_peers(path):
    return parse_peers(_load(path, "peers file"), path)


def load_run(out):
    """(the report, the peers or [] when no peer ran) of the run in directory `out`."""
    report = load_report(os.path.join(out, "layout_report.json"))
    peers_file = os.path.join(out, "peers.json")
    return report, load_peers(peers_file) if os.path.exists(peers_file) else []


def isa_ranker(report):
    """A sort key of ISA names, best first, as target "host" ranks them (machine.isa_order)."""
    order = report["machine"].get("isa_order", [])
    return lambda isa: order.index(isa) if isa in order else len(order)


def peer_label(p):
    return "%s %s" % (p["peer"], p["variant"]) if p["variant"] else p["peer"]
