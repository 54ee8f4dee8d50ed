#!/usr/bin/env python3
"""Noise-free A/B of roi_align_benchmark binaries: instructions executed inside roialign's Run, under callgrind.

Wall time on a shared machine moves with its neighbours; the number of instructions a single-threaded call
executes does not (the same binary, input and environment give the same count). Use this to decide on changes
smaller than the machine's noise, and bench/ab.py (alternating wall-time runs) for effects on memory traffic
and threads, which instruction counts do not see.

  bench/ab_instructions.py FILTER OLD_BINARY NEW_BINARY [MORE_BINARIES...]
  e.g. bench/ab_instructions.py '^(default|l3)/roi_align_n(hwc|chw).avx2/threads:1/' /tmp/old build/bench/roi_align_benchmark

Each benchmark that FILTER selects (use threads:1 rows: OpenMP threads would count their spinning) runs for
one iteration per binary, binaries in parallel, without the roofline peaks (ROIALIGN_BENCH_NO_ROOFLINE=1;
binaries older than that variable measure them too, which only takes longer). Prints per benchmark the instructions of each binary (in
millions) and each one's ratio to the first binary's. Needs valgrind.
"""
import os
import re
import subprocess
import sys
import tempfile


def instructions(binary, benchmark, workdir):
    out = os.path.join(workdir, re.sub(r"\W", "_", binary + benchmark))
    return subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--toggle-collect=roialign::Kernel::Run*",
         "--toggle-collect=roialign::MultiLevelKernel::Run*",
         binary, f"--benchmark_filter=^{re.escape(benchmark)}$", "--benchmark_min_time=0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, ROIALIGN_BENCH_NO_ROOFLINE="1"))


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pattern, binaries = argv[1], argv[2:]
    listed = subprocess.run([binaries[0], f"--benchmark_filter={pattern}", "--benchmark_list_tests"],
                            capture_output=True, text=True, check=True).stdout.split()
    if not listed:
        print(f"no benchmark matches {pattern}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as workdir:
        for benchmark in listed:
            runs = [instructions(b, benchmark, workdir) for b in binaries]
            counts = []
            for run in runs:
                _, err = run.communicate()
                found = re.search(r"Collected : (\d+)", err)
                if run.returncode != 0 or found is None:
                    print(f"{benchmark}: callgrind failed:\n{err[-2000:]}", file=sys.stderr)
                    return 1
                counts.append(int(found.group(1)))
            cells = [f"{b}: {c / 1e6:.2f}M ({c / counts[0]:.4f}x)" for b, c in zip(binaries, counts)]
            print(" | ".join([benchmark.split("/min_time")[0]] + cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
