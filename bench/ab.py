#!/usr/bin/env python3
"""A/B comparison of roi_align_benchmark binaries on a noisy machine.

Runs the binaries in alternation for several rounds, so that slow and fast phases of a shared machine hit
every binary alike, and reports per benchmark the minimum and median wall time of each binary with the
speed-up of its minimum over the first binary's. A difference inside the spread of the medians is noise.

  bench/ab.py ROUNDS FILTER OLD_BINARY NEW_BINARY [MORE_BINARIES...]
  e.g. bench/ab.py 4 '^default/roi_align_nhwc.avx2/threads:1' /tmp/old_benchmark build/bench/roi_align_benchmark

A binary may be a wrapper script that sets an environment variable before exec'ing the real benchmark.
"""
import collections
import json
import statistics
import subprocess
import sys


def main(argv):
    if len(argv) < 4 or not argv[1].isdigit():
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rounds, pattern, binaries = int(argv[1]), argv[2], argv[3:]
    times = collections.defaultdict(list)  # (benchmark, binary) -> wall times in ms
    for _ in range(rounds):
        for binary in binaries:
            run = subprocess.run([binary, f"--benchmark_filter={pattern}", "--benchmark_format=json",
                                  "--benchmark_min_time=0.1"], capture_output=True, text=True, check=True)
            for b in json.loads(run.stdout)["benchmarks"]:
                times[(b["name"].split("/min_time")[0], binary)].append(b["real_time"])
    for name in sorted({name for name, _ in times}):
        base = min(times[(name, binaries[0])])
        cells = [f"{binary}: min {min(times[(name, binary)]):.2f} med {statistics.median(times[(name, binary)]):.2f} "
                 f"({base / min(times[(name, binary)]):.2f}x)" for binary in binaries]
        print(" | ".join([name] + cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
