# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""bench/count_instructions.py: counting a qemu -d in_asm,exec,nochain log between the region's markers."""
import pytest

from count_instructions import CountError, count_qemu_log


def block(pc, n, symbol):
    lines = ["----------------", "IN: " + symbol]
    lines += ["0x%016x:  d503201f  nop" % (pc + 4 * i) for i in range(n)]
    return lines + [""]


def trace(pc, symbol):
    return "Trace 0: 0x7f0000001000 [0000000000000000/%016x/00000001/00000200] %s" % (pc, symbol)


def region(body):
    """A log: start-up blocks, the begin marker, `body`, the end marker, then exit blocks."""
    return (block(0x1000, 7, "_start") + [trace(0x1000, "_start")]
            + block(0x2000, 1, "roialign_count_begin") + [trace(0x2000, "roialign_count_begin")]
            + body + block(0x3000, 1, "roialign_count_end") + [trace(0x3000, "roialign_count_end")]
            + [trace(0x1000, "_start")] * 5)


def test_sums_the_blocks_executed_inside_the_region_only():
    # A block of 5 entered once, then a 3-instruction loop block run 10 times: 5 + 30.
    body = block(0x4000, 5, "kernel") + [trace(0x4000, "kernel")] + block(0x4100, 3, "kernel")
    body += [trace(0x4100, "kernel")] * 10
    assert count_qemu_log(region(body)) == 35


def test_a_retranslated_block_counts_its_latest_translation():
    body = block(0x4000, 4, "k") + [trace(0x4000, "k")] * 2 + block(0x4000, 2, "k") + [trace(0x4000, "k")] * 3
    assert count_qemu_log(region(body)) == 4 * 2 + 2 * 3


def test_refuses_a_log_it_cannot_trust():
    with pytest.raises(CountError, match="before it was logged"):
        count_qemu_log(region([trace(0x9000, "k")]))
    gap = ["IN: k", "0x0000000000004000:  d503201f  nop", "0x0000000000004008:  d503201f  nop", "",
           trace(0x4000, "k")]  # a line missing between two instructions
    with pytest.raises(CountError, match="2 lines for 12 bytes"):
        count_qemu_log(region(gap))
    with pytest.raises(CountError, match="no complete counted region"):
        count_qemu_log(block(0x1000, 3, "_start") + [trace(0x1000, "_start")])
    twice = region([]) + [trace(0x2000, "roialign_count_begin")]
    with pytest.raises(CountError, match="entered twice"):
        count_qemu_log(twice)
