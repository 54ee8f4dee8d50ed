# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""bench/report_schema.py: the one reader of the layout report's JSON."""
import copy

import pytest

from report_schema import KERNELS, SCHEMA_VERSION, SchemaError, feeding, parse_peers, parse_report


def check_rows(rows):
    for r in rows:
        for key in ("workload", "isa", "dtype", "threads", "path", "ms", "ms_min", "ms_max", "spread", "stable",
                    "unstable_reasons", "judged", "machine"):
            assert key in r, key
        assert r["ms_min"] <= r["ms"] <= r["ms_max"]
        assert r["stable"] == (not r["unstable_reasons"])
        assert r["judged"]


def test_every_row_has_every_field(report_json):
    report = parse_report(report_json)
    assert report["schema_version"] == 2
    check_rows(report["results"])
    assert report["transforms"] and all(t["stable"] == (not t["unstable_reasons"]) for t in report["transforms"])
    # Before schema 3 there is no backward: both lists come back empty.
    assert report["backward_results"] == [] and report["backward_limits"] == []


def test_backward_rows_have_every_field(backward_report_json):
    report = parse_report(backward_report_json)
    assert report["schema_version"] == 3 and SCHEMA_VERSION == 4
    # Before schema 4 there is no rotated comparison.
    assert report["rotated_vs_axis_aligned"] == []
    check_rows(report["results"])
    rows = report["backward_results"]
    check_rows(rows)
    # Every kernel layout of every (ISA, threads) group, each against a limit of its group, none beaten.
    groups = {(r["isa"], r["dtype"], r["threads"]) for r in rows}
    assert len(rows) == 5 * len(groups) == 20
    assert {r["path"] for r in rows} == set(KERNELS)
    limits = {(l["isa"], l["dtype"], l["threads"]): l for l in report["backward_limits"]}
    assert set(limits) == groups
    for l in limits.values():
        assert l["read_bytes"] == pytest.approx(l["dy_bytes"] + l["map_bytes"], rel=1e-3)
        assert l["limit_ms"] == pytest.approx(max(l["compute_ms"], l["memory_ms"]), rel=1e-3)
    assert all(0 < r["fraction_of_limit"] <= 1 for r in rows)


def test_rotated_comparisons_are_read_and_checked(backward_report_json):
    data = copy.deepcopy(backward_report_json)
    data["schema_version"] = 4
    entry = {"workload": "rotated", "isa": "avx2", "dtype": "F32", "threads": 1, "rotated_ms_min": 30.0,
             "rotated_ms": 31.0, "angle0_ms_min": 27.0, "angle0_ms": 27.5, "axis_aligned_ms_min": 20.0,
             "axis_aligned_ms": 20.5, "ratio": 1.5, "ratio_angle0": 1.35, "stable": True, "unstable_reasons": []}
    data["rotated_vs_axis_aligned"] = [entry]
    (c,) = parse_report(data)["rotated_vs_axis_aligned"]
    assert c["ratio"] == 1.5 and c["stable"]
    contradictory = copy.deepcopy(data)
    contradictory["rotated_vs_axis_aligned"][0]["unstable_reasons"] = ["load"]
    with pytest.raises(SchemaError, match="rotated_vs_axis_aligned\\[0\\].*stable"):
        parse_report(contradictory)
    broken = copy.deepcopy(data)
    broken["rotated_vs_axis_aligned"][0]["axis_aligned_ms_min"] = 0
    with pytest.raises(SchemaError, match="positive"):
        parse_report(broken)
    # A peer timed once says so.
    (row,) = parse_peers({"peers": [{"peer": "openvino", "variant": "ROIAlignRotated-15", "workload": "rotated",
                                     "threads": 1, "ms": 25000.0, "status": "ok", "runs": 1}]})
    assert row["runs"] == 1 and row["compared_with"] is None


def test_a_broken_backward_row_is_refused(backward_report_json):
    broken = copy.deepcopy(backward_report_json)
    broken["backward_results"][0]["ms"] = 0
    with pytest.raises(SchemaError, match="backward_results\\[0\\].*positive"):
        parse_report(broken)


def test_a_report_before_version_2_is_not_judged(report_json):
    old = copy.deepcopy(report_json)
    del old["schema_version"]
    for r in old["results"]:
        for key in ("stable", "unstable_reasons", "ms_max", "spread", "attempts", "machine", "dtype", "ms_min"):
            del r[key]
    report = parse_report(old)
    r = report["results"][0]
    assert r["stable"] and r["unstable_reasons"] == [] and not r["judged"]
    assert r["dtype"] == "F32" and r["ms_min"] == r["ms"] == r["ms_max"] and r["spread"] == 0


def test_refuses_what_it_cannot_read(report_json):
    with pytest.raises(SchemaError, match="no \"results\""):
        parse_report({"machine": {}})
    newer = copy.deepcopy(report_json)
    newer["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(SchemaError, match="newer"):
        parse_report(newer)
    contradictory = copy.deepcopy(report_json)
    contradictory["results"][0]["stable"] = True  # while its reasons stay
    with pytest.raises(SchemaError, match="stable"):
        parse_report(contradictory)
    negative = copy.deepcopy(report_json)
    negative["results"][1]["ms"] = -1
    with pytest.raises(SchemaError, match="positive"):
        parse_report(negative)


def test_peers(peers_json):
    peers = parse_peers(peers_json)
    assert {p["status"].split(":")[0] for p in peers} == {"ok", "skipped"}
    assert all(p["ms"] > 0 for p in peers if p["status"] == "ok")
    bad = copy.deepcopy(peers_json)
    bad["peers"][0]["ms"] = None  # "ok" without a time
    with pytest.raises(SchemaError, match="positive ms"):
        parse_peers(bad)


def test_the_conversion_that_feeds_each_kernel():
    assert feeding("NCHW") == "NHWC->NCHW kernel->NHWC"
    assert feeding("NHWC") == "NCHW->NHWC kernel->NCHW"
    assert feeding("NCHW8c") == "NCHW->NCHW8c kernel->NCHW"
