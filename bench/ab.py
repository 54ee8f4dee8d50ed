#!/usr/bin/env python3
"""A/B comparison of roi_align_benchmark runs on a noisy machine.

Two or more binaries: runs them in alternation for several rounds, so that slow and fast phases of a shared
machine hit every binary alike, and reports per benchmark the minimum and median wall time of each binary with
the speed-up of its minimum over the first binary's.

One binary: compares dtypes inside it. Each round runs every matched benchmark in a process of its own, in an
order that reverses from round to round, and each f16 or bf16 benchmark is reported against its f32 twin (the
same name with /f32/): the speed-up of the minima and of the medians.

A difference inside the spread of the medians is noise.

  bench/ab.py ROUNDS FILTER OLD_BINARY NEW_BINARY [MORE_BINARIES...]
  bench/ab.py ROUNDS FILTER BINARY
  e.g. bench/ab.py 4 '^default/roi_align_nhwc.avx2/f32/threads:1' /tmp/old_benchmark build/bench/roi_align_benchmark
       bench/ab.py 5 '^default/roi_align_nhwc.avx2/' build/bench/roi_align_benchmark

A binary may be a wrapper script that sets an environment variable before exec'ing the real benchmark.
"""
import collections
import json
import re
import statistics
import subprocess
import sys


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
    listed = subprocess.run([binary, f"--benchmark_filter={pattern}", "--benchmark_list_tests"],
                            capture_output=True, text=True, check=True).stdout.split()
    times = collections.defaultdict(list)  # benchmark -> wall times in ms
    for r in range(rounds):
        for full in (listed if r % 2 == 0 else reversed(listed)):
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


def main(argv):
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
