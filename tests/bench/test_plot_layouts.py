# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""bench/plot_layouts.py, rendered from the saved report: its structure, not only that it runs."""
import copy
import os

import pytest
from conftest import make_stable

import plot_layouts
from report_schema import KERNELS, feeding, parse_peers, parse_report


@pytest.fixture(autouse=True)
def close_figures():
    """Each render opens up to three figures; close them so that a run of these tests does not pile them up."""
    yield
    plot_layouts.plt.close("all")


def bars(ax, *gids):
    return [p for p in ax.patches if p.get_gid() in gids]


def title(ax):
    return ax.get_title(loc="left")


def panels(fig, gid):
    return [ax for ax in fig.axes if ax.get_gid() == gid]


def test_one_panel_per_group_and_one_for_the_peers(report_json, peers_json):
    report, peers = parse_report(report_json), parse_peers(peers_json)
    fig = plot_layouts.render(report, peers)["layouts"]
    groups = {(r["isa"], r["dtype"], r["threads"]) for r in report["results"]}
    assert len(panels(fig, "group")) == len(groups) == 4
    assert len(panels(fig, "peers")) == 1
    # One bar per kernel layout in every group, and a transforms segment on each whose conversion row is slower.
    for ax in panels(fig, "group"):
        isa, rest = title(ax).split(": ")[1].split(" ", 1)
        threads = int(rest.split(", ")[1].split(" ")[0])
        rows = {r["path"]: r for r in report["results"] if r["isa"] == isa and r["threads"] == threads}
        assert len(bars(ax, "kernel", "kernel best")) == len(KERNELS)
        slower = sum(1 for k in KERNELS if rows[feeding(k)]["ms"] > rows[k]["ms"])
        assert len(bars(ax, "transforms")) == slower
        # A stacked segment starts at its kernel's median and ends at the conversion row's.
        for seg in bars(ax, "transforms"):
            tops = {round(r["ms"], 6) for r in rows.values()}
            assert round(seg.get_y() + seg.get_height(), 6) in tops
    # The peers that ran, and our best path at their thread count beside them.
    peer_ax = panels(fig, "peers")[0]
    ok = [p for p in peers if p["status"] == "ok" and p["workload"] == "rois20"]
    assert len(bars(peer_ax, "peer")) == len(ok) == 6
    assert len(bars(peer_ax, "ours")) == 1


def test_every_panel_on_the_rows_shared_log_axis(report_json, peers_json):
    fig = plot_layouts.render(parse_report(report_json), parse_peers(peers_json))["layouts"]
    visible = [ax for ax in fig.axes if ax.get_visible()]
    first = panels(fig, "group")[0]
    for ax in visible:
        assert ax.get_yscale() == "log"
        assert ax.get_ylim() == first.get_ylim()
        assert first.get_shared_y_axes().joined(first, ax)


def test_a_short_legend(report_json, peers_json):
    fig = plot_layouts.render(parse_report(report_json), parse_peers(peers_json))["layouts"]
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert len(labels) == 5
    assert any("transforms" in l for l in labels) and any("unstable" in l for l in labels)
    assert any(l.startswith("peer") for l in labels)
    # Without peers, no peers' panel and no peers' entry.
    fig = plot_layouts.render(parse_report(report_json), [])["layouts"]
    assert not panels(fig, "peers")
    assert len([t for legend in fig.legends for t in legend.get_texts()]) == 4


def test_unstable_rows_are_hatched_and_never_best(report_json):
    report = parse_report(report_json)
    assert not any(r["stable"] for r in report["results"])  # the saved run was on a busy machine
    fig = plot_layouts.render(report, [])["layouts"]
    for ax in panels(fig, "group"):
        assert not bars(ax, "kernel best")
        assert all(p.get_hatch() for p in bars(ax, "kernel", "transforms"))


def test_the_best_stable_kernel_is_outlined(report_json):
    report = parse_report(make_stable(report_json, "avx2", 1))
    fig = plot_layouts.render(report, [])["layouts"]
    stable_ax = [ax for ax in panels(fig, "group") if title(ax).endswith("avx2 F32, 1 thr")]
    assert len(stable_ax) == 1
    best = bars(stable_ax[0], "kernel best")
    assert len(best) == 1
    fastest = min((r for r in report["results"] if r["isa"] == "avx2" and r["threads"] == 1 and r["path"] in KERNELS),
                  key=lambda r: r["ms"])
    assert best[0].get_height() == pytest.approx(fastest["ms"])
    assert not best[0].get_hatch()
    others = [ax for ax in panels(fig, "group") if ax is not stable_ax[0]]
    assert all(not bars(ax, "kernel best") for ax in others)


def test_a_conversion_faster_than_its_kernel_gets_no_segment(report_json):
    data = make_stable(report_json, "avx2", 1)
    for r in data["results"]:
        if r["isa"] == "avx2" and r["threads"] == 1 and r["path"] == feeding("NHWC"):
            nhwc = next(x for x in data["results"] if x["isa"] == "avx2" and x["threads"] == 1 and x["path"] == "NHWC")
            r["ms"] = r["ms_min"] = r["ms_max"] = nhwc["ms"] * 0.9
    fig = plot_layouts.render(parse_report(data), [])["layouts"]
    ax = [ax for ax in panels(fig, "group") if title(ax).endswith("avx2 F32, 1 thr")][0]
    assert len(bars(ax, "transforms")) == len(KERNELS) - 1
    texts = [t.get_text() for t in ax.texts]
    assert any("+n/m" in t for t in texts)
    assert not any("+-" in t for t in texts)


def test_the_blocked_figure_pairs_each_block_with_its_conversion(report_json):
    fig = plot_layouts.render(parse_report(report_json), [])["blocked"]
    groups = panels(fig, "group")
    assert len(groups) == 4
    for ax in groups:
        assert len(bars(ax, "kernel", "kernel best")) == 6  # NCHWb kernel, NHWC kernel under NCHWb's transforms
        assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()][::2] == [
            "NCHW4c kernel", "NCHW8c kernel", "NCHW16c kernel"]
    no_blocks = copy.deepcopy(report_json)
    no_blocks["results"] = [r for r in no_blocks["results"] if "c" not in r["path"].replace("NCHW", "").replace(
        "kernel", "")]
    assert plot_layouts.render(parse_report(no_blocks), [])["blocked"] is None


def test_writes_the_files(report_json, tmp_path):
    report = os.path.join(os.path.dirname(__file__), "data", "layout_report.json")
    peers = os.path.join(os.path.dirname(__file__), "data", "peers.json")
    out, blocked = tmp_path / "l.png", tmp_path / "b.png"
    assert plot_layouts.main(["--report", report, "--peers", peers, "--out", str(out),
                              "--blocked-out", str(blocked)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and blocked.stat().st_size > 0


def test_the_backward_figure_has_one_bar_per_kernel_layout(backward_report_json, report_json):
    report = parse_report(backward_report_json)
    fig = plot_layouts.render(report, [])["backward"]
    groups = panels(fig, "group")
    assert len(groups) == len({(r["isa"], r["dtype"], r["threads"]) for r in report["backward_results"]}) == 4
    for ax in groups:
        assert len(bars(ax, "kernel", "kernel best")) == len(KERNELS)
        assert not bars(ax, "transforms")
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert len(labels) == 3 and labels[0].startswith("backward")
    # The forward's figure of the same report is unchanged by the backward rows.
    assert len(panels(plot_layouts.render(report, [])["layouts"], "group")) == 4
    # A report without backward rows has no backward figure.
    assert plot_layouts.render(parse_report(report_json), [])["backward"] is None


def test_writes_the_backward_file(tmp_path):
    report = os.path.join(os.path.dirname(__file__), "data", "backward", "layout_report.json")
    out, backward = tmp_path / "l.png", tmp_path / "bw.png"
    assert plot_layouts.main(["--report", report, "--out", str(out), "--backward-out", str(backward)]) == 0
    assert backward.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
