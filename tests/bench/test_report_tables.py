# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""bench/report_tables.py on the saved report: unstable rows marked, no negative share."""
import json
import os
import re
import shutil

import report_tables

DATA = os.path.join(os.path.dirname(__file__), "data")


def test_marks_unstable_rows(capsys):
    assert report_tables.main(["report_tables.py", DATA]) == 0
    out = capsys.readouterr().out
    assert "Unstable rows: 52 of 52" in out
    assert "(unstable)" in out
    assert "!" in out.split("| workload | ISA | threads | NCHW ms (lim)")[1]
    assert not re.search(r"-\d+%", out)


def test_a_conversion_faster_than_its_kernel_has_no_share(tmp_path, report_json, capsys):
    # NCHW8c's data on the NHWC kernel ran faster than the NHWC kernel alone: noise, never a negative share.
    for r in report_json["results"]:
        if r["isa"] == "avx2" and r["threads"] == 1 and r["path"] == "NCHW8c->NHWC kernel->NCHW8c":
            nhwc = next(x for x in report_json["results"]
                        if x["isa"] == "avx2" and x["threads"] == 1 and x["path"] == "NHWC")
            r["ms_min"] = nhwc["ms_min"] * 0.8
    (tmp_path / "layout_report.json").write_text(json.dumps(report_json))
    shutil.copy(os.path.join(DATA, "peers.json"), tmp_path / "peers.json")
    assert report_tables.main(["report_tables.py", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "n/m" in out
    assert not re.search(r"-\d+%", out)


def test_share_is_never_negative():
    assert report_tables.share(10.0, 4.0) == "60%"
    assert report_tables.share(4.0, 10.0) == "n/m"
    assert report_tables.share(4.0, 4.0) == "n/m"


def test_a_report_without_backward_prints_no_backward_table(capsys):
    assert report_tables.main(["report_tables.py", DATA]) == 0
    assert "Backward" not in capsys.readouterr().out


def test_backward_tables(capsys):
    assert report_tables.main(["report_tables.py", os.path.join(DATA, "backward")]) == 0
    out = capsys.readouterr().out
    assert "Unstable backward rows: 20 of 20" in out
    limits = out.split("Backward limits")[1].split("Backward, dX from dY")[0]
    assert len([l for l in limits.splitlines() if l.startswith("| rois20 |")]) == 4
    table = out.split("Backward, dX from dY")[1]
    lines = [l for l in table.splitlines() if l.startswith("| rois20 |")]
    assert len(lines) == 4  # avx2 and sse4, 1 and 2 threads
    for line in lines:
        cells = line.split(" | ")
        assert len(cells) == 4 + 5 + 1  # the key, the five kernel layouts, the fastest
        assert all("x)" in c or "x)!" in c for c in cells[4:9])  # each layout against its forward
