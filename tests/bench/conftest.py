# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""What the tests of bench/'s Python tools share: bench/ on sys.path, and a saved report to read.

data/layout_report.json and data/peers.json are one real run of the main job's tools, kept small:
    layout_report --workloads=rois20 --best-isas=2 --threads=1,2 --repeats=3 --json=... --dump-dir=...
    bench/peers.py --only rois20 --threads 1
on a 2-core AVX-512 VM shared with other builds (so every row of it is unstable), numbers rounded to 4 digits.
It is a schema 2 report, without backward rows. data/backward/layout_report.json is a schema 3 report with them, from
    layout_report --workloads=rois20 --best-isas=2 --threads=1,2 --repeats=3 --json=...
on a 2-vCPU AMD EPYC VM (Zen 3, AVX2, no AVX-512) shared with a build (load average 2.75), rounded the same way.
Run: .ci/python -m pytest -p no:cacheprovider -q tests/bench
"""
import copy
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

DATA = os.path.join(HERE, "data")


@pytest.fixture
def report_json():
    """The saved report's parsed JSON, a fresh copy per test (tests may change it)."""
    with open(os.path.join(DATA, "layout_report.json")) as f:
        return json.load(f)


@pytest.fixture
def backward_report_json():
    """The saved schema 3 report (with backward rows), a fresh copy per test."""
    with open(os.path.join(DATA, "backward", "layout_report.json")) as f:
        return json.load(f)


@pytest.fixture
def peers_json():
    with open(os.path.join(DATA, "peers.json")) as f:
        return json.load(f)


def make_stable(data, isa, threads):
    """A copy of report JSON `data` whose rows of (isa, threads) are marked stable: the chart's stable drawing."""
    data = copy.deepcopy(data)
    for r in data["results"]:
        if r["isa"] == isa and r["threads"] == threads:
            r["stable"], r["unstable_reasons"] = True, []
    return data
