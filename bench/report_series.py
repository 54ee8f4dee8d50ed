#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Runs the layout report several times and prints each run's speed-ups against the peers, then their spread.

A ratio against a peer is only meaningful inside one run (the machine changes between runs), but one run's ratio
moves with the minute on a shared machine. This repeats the same focused run, a pause between runs, and shows
how far the ratio moves: each row is one complete run of bench/run_layout_report.sh (ours, then the peers).

  bench/report_series.py RUNS PAUSE_S OUT_BASE -- REPORT_ARGS...
  e.g. bench/report_series.py 12 45 /tmp/series -- --workloads=fpn --isas=avx512 --threads=1

Run k writes OUT_BASE/k. The first run builds as run_layout_report.sh does; the others reuse that build. For every
(workload, layout, threads) of our best ISA in the run: our min / median ms, and each peer's median over our
median; at the end, per column, the median, minimum and maximum over the runs.
"""
import os
import statistics
import subprocess
import sys
import time

from report_schema import isa_ranker, load_run

HERE = os.path.dirname(os.path.abspath(__file__))


def ratios(out_dir):
    """{(workload, layout, threads): {"ours min ms": ms, "ours median ms": ms, "<peer> <variant> / ours": speed-up}}."""
    report, peers = load_run(out_dir)
    rows = [r for r in report["results"] if r["dtype"] == "F32" and r["path"] in ("NCHW", "NHWC")]
    if not rows:
        return {}
    best = min({r["isa"] for r in rows}, key=isa_ranker(report))
    table = {}
    for r in rows:
        if r["isa"] != best:
            continue
        cells = {"ours min ms": r["ms_min"], "ours median ms": r["ms"], "unstable": 0 if r["stable"] else 1}
        for p in peers:
            if p["status"] == "ok" and p["workload"] == r["workload"] and p["threads"] == r["threads"]:
                cells[f"{p['peer']} {p['variant']} / ours"] = p["ms"] / r["ms"]
        table[(r["workload"], r["path"], r["threads"])] = cells
    return table


def fmt(column, v):
    if column == "unstable":  # 1: the layout report judged the row unstable (bench/report_schema.py)
        return "yes" if v else "no"
    return f"{v:.2f}" if column.endswith("ms") else f"{v:.1f}x"


def main(argv):
    try:
        if len(argv) < 4 or (len(argv) > 4 and argv[4] != "--"):
            raise ValueError
        runs, pause = int(argv[1]), float(argv[2])
        if runs < 1 or pause < 0:
            raise ValueError
    except ValueError:
        print(__doc__)
        return 2
    # run_layout_report.sh changes to the repository's root, so the output directories must be absolute.
    base, report_args = os.path.abspath(argv[3]), argv[5:]
    series = []  # (time the run ended, ratios() of the run); {} for a run that failed
    for k in range(1, runs + 1):
        out = os.path.join(base, str(k))
        rebuild = os.environ.get("ROIALIGN_REBUILD", "1") if k == 1 else "0"
        env = dict(os.environ, ROIALIGN_OUT_DIR=out, ROIALIGN_REBUILD=rebuild)
        os.makedirs(out, exist_ok=True)
        for name in ("layout_report.json", "peers.json"):  # never read an earlier series' results
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
        with open(out + ".log", "w") as log:
            status = subprocess.run([os.path.join(HERE, "run_layout_report.sh")] + report_args, env=env,
                                    stdout=log, stderr=subprocess.STDOUT).returncode
        ended = time.strftime("%H:%M:%S")
        if status != 0:
            print(f"run {k} of {runs} failed (status {status}): see {out}.log", file=sys.stderr)
            series.append((ended, {}))
        else:
            if not os.path.exists(os.path.join(out, "peers.json")):
                print(f"run {k}: no peers.json (no peer installed?): see {out}.log", file=sys.stderr)
            series.append((ended, ratios(out)))
            print(f"run {k} of {runs} done at {ended}", file=sys.stderr)
        if k < runs:
            time.sleep(pause)
    # NHWC first, as report_tables.py prints it.
    for key in sorted({key for _, t in series for key in t}, key=lambda w: (w[0], w[1] != "NHWC", w[2])):
        columns = []
        for _, t in series:
            columns += [c for c in t.get(key, {}) if c not in columns]
        print(f"\n{key[0]}, {key[1]}, {key[2]} thread(s): {runs} runs of bench/run_layout_report.sh {' '.join(report_args)}")
        print("\n| run | ended | " + " | ".join(columns) + " |")
        print("|---|---|" + "---|" * len(columns))
        for k, (ended, t) in enumerate(series, 1):
            cells = [fmt(c, t[key][c]) if c in t.get(key, {}) else "" for c in columns]
            print(f"| {k} | {ended} | " + " | ".join(cells) + " |")
        for name, f in (("median", statistics.median), ("min", min), ("max", max)):
            cells = []
            for c in columns:
                values = [t[key][c] for _, t in series if c in t.get(key, {})]
                cells.append(fmt(c, f(values)) if values else "")
            print(f"| {name} | | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
