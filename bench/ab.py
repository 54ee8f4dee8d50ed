#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""A/B comparison of roi_align_benchmark binaries on a noisy machine, over wall time or instruction counts.

Wall time (ROUNDS first):

  bench/ab.py ROUNDS FILTER OLD_BINARY NEW_BINARY [MORE_BINARIES...]
  bench/ab.py ROUNDS FILTER BINARY

Two or more binaries: runs them in alternation for several rounds, so that slow and fast phases of a shared
machine hit every binary alike, and reports per benchmark the minimum and median wall time of each binary with
the speed-up of its minimum over the first binary's. One binary: compares dtypes inside it. Each round runs every
matched benchmark in a process of its own, in an order that reverses from round to round, and each f16 or bf16
benchmark is reported against its f32 twin (the same name with /f32/): the speed-up of the minima and of the
medians. A difference inside the spread of the medians is noise.

Instruction counts (--instructions first):

  bench/ab.py --instructions FILTER OLD_BINARY NEW_BINARY [MORE_BINARIES...]

The instructions of one call of roialign's Run under callgrind: the same binary, input and environment give the
same count, whatever the neighbours do. Use it to decide on changes smaller than the machine's noise, and wall time
for effects on memory traffic and threads, which instruction counts do not see. Each benchmark that FILTER selects
(use threads:1 rows: OpenMP threads would count their spinning) runs under callgrind once per binary, binaries in
parallel, without the roofline peaks (ROIALIGN_BENCH_NO_ROOFLINE=1); it makes as many calls as its minimum time
takes, and the count is the cheapest call's (the first calls also set up working memory). Prints per benchmark
the instructions of each binary (in millions) and each one's ratio to the first binary's. Needs valgrind.

  e.g. bench/ab.py 4 '^default/roi_align_nhwc.avx2/f32/threads:1' /tmp/old_benchmark build/bench/roi_align_benchmark
       bench/ab.py 5 '^default/roi_align_nhwc.avx2/' build/bench/roi_align_benchmark
       bench/ab.py --instructions '^l3/roi_align_nhwc.avx2/f32/threads:1/' /tmp/old build/bench/roi_align_benchmark

A binary may be a wrapper script that sets an environment variable before exec'ing the real benchmark (callgrind
follows the exec).
"""
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def listed(binary, pattern):
    return subprocess.run([binary, f"--benchmark_filter={pattern}", "--benchmark_list_tests"],
                          capture_output=True, text=True, check=True).stdout.split()


def run(binary, pattern):
    """{benchmark name: wall ms} for the benchmarks of `binary` matching `pattern`."""
    out = subprocess.run([binary, f"--benchmark_filter={pattern}", "--benchmark_format=json",
                          "--benchmark_min_time=0.1"], capture_output=True, text=True, check=True)
    return {b["name"].split("/min_time")[0]: b["real_time"] for b in json.loads(out.stdout)["benchmarks"]}


def compare_binaries(rounds, pattern, binaries):
    times = collections.defaultdict(list)  # (benchmark, binary) -> wall times in ms
    for _ in range(rounds):
        for binary in binaries:
            for name, ms in run(binary, pattern).items():
                times[(name, binary)].append(ms)
    for name in sorted({name for name, _ in times}):
        base = min(times[(name, binaries[0])])
        cells = [f"{binary}: min {min(times[(name, binary)]):.2f} med {statistics.median(times[(name, binary)]):.2f} "
                 f"({base / min(times[(name, binary)]):.2f}x)" for binary in binaries]
        print(" | ".join([name] + cells))


def compare_dtypes(rounds, pattern, binary):
    names = listed(binary, pattern)
    times = collections.defaultdict(list)  # benchmark -> wall times in ms
    for r in range(rounds):
        for full in (names if r % 2 == 0 else reversed(names)):
            for name, ms in run(binary, "^" + re.escape(full) + "$").items():
                times[name].append(ms)
    for name in sorted(times):
        ms = times[name]
        cells = [name, f"min {min(ms):.2f} med {statistics.median(ms):.2f}"]
        twin = re.sub(r"/(f16|bf16)/", "/f32/", name)
        if twin != name and twin in times:
            cells.append(f"vs f32: {min(times[twin]) / min(ms):.2f}x (min), "
                         f"{statistics.median(times[twin]) / statistics.median(ms):.2f}x (median)")
        print(" | ".join(cells))


# The Run entry points: KernelHandle and PyramidKernelHandle, and Kernel and MultiLevelKernel, their names before the
# internal API was renamed, so that builds of older commits compare. callgrind keeps one --dump-before, and ignores
# it when its pattern is the same text as a --toggle-collect's, so the two patterns are written differently.
COLLECT_IN = "roialign::*Kernel*::Run*"
DUMP_BEFORE = "*Kernel*::Run*"


def instructions(binary, benchmark, workdir):
    out = os.path.join(workdir, re.sub(r"\W", "_", binary + benchmark))
    # A profile is dumped before every call, so each dump holds the call before it (the last call is in the final
    # profile): the benchmark runs as many calls as its minimum time takes, which varies with the machine's load,
    # and the first calls also set up the kernel's working memory.
    return out, subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--trace-children=yes", f"--callgrind-out-file={out}",
         f"--toggle-collect={COLLECT_IN}", f"--dump-before={DUMP_BEFORE}",
         binary, f"--benchmark_filter=^{re.escape(benchmark)}$", "--benchmark_min_time=0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, ROIALIGN_BENCH_NO_ROOFLINE="1"))


def per_call(out):
    """The instructions of each Run call, from the profiles dumped between calls."""
    counts = []
    for path in glob.glob(out) + glob.glob(out + ".*"):
        with open(path) as f:
            found = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
        if found and int(found.group(1)) > 0:
            counts.append(int(found.group(1)))
    return counts


def compare_instructions(pattern, binaries):
    names = listed(binaries[0], pattern)
    if not names:
        print(f"no benchmark matches {pattern}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as workdir:
        for benchmark in names:
            runs = [instructions(b, benchmark, workdir) for b in binaries]
            counts = []
            for out, proc in runs:
                _, err = proc.communicate()
                if proc.returncode != 0:
                    print(f"{benchmark}: callgrind failed:\n{err[-2000:]}", file=sys.stderr)
                    return 1
                calls = per_call(out)
                # The cheapest call: the steady state, once the working memory is set up.
                counts.append(min(calls) if calls else 0)
            if counts[0] == 0:  # the benchmark skipped itself: valgrind emulates no AVX-512, for one
                print(f"{benchmark.split('/min_time')[0]}: no instructions counted (target unsupported under valgrind)")
                continue
            cells = [f"{b}: {c / 1e6:.4f}M ({c / counts[0]:.4f}x)" for b, c in zip(binaries, counts)]
            print(" | ".join([benchmark.split("/min_time")[0]] + cells), flush=True)
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "--instructions":
        return compare_instructions(argv[2], argv[3:])
    if len(argv) < 4 or not argv[1].isdigit():
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rounds, pattern, binaries = int(argv[1]), argv[2], argv[3:]
    if len(binaries) == 1:
        compare_dtypes(rounds, pattern, binaries[0])
    else:
        compare_binaries(rounds, pattern, binaries)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
