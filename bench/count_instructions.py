#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Instructions one roi_align call executes, per output element: ARM ISAs under qemu-user, x86 under callgrind.

    .ci/python bench/count_instructions.py check --arm-build DIR --x86-build DIR
    .ci/python bench/count_instructions.py table --arm-build DIR --x86-build DIR [--workloads default]
                                          [--layouts NCHW,NHWC,NCHW4c] [--dtypes F32,F16] [--isas LABELS]
                                          [--full-channels] [--json FILE]
    .ci/python bench/count_instructions.py show --json FILE      (the tables of an earlier run, not counted again)

DIR is a build with bench/kernel_calls (-DROIALIGN_BUILD_BENCHMARKS=ON; the ARM one cross-built with
cmake/aarch64-linux-gnu.cmake). Either build may be left out; its rows are then not counted.

How a count is taken: kernel_calls (one thread, the workload scaled down as its --help says) selects the kernel,
runs it once untimed, then once inside a counted region; only the region is counted, so start-up, the workload's
construction, selection and first-call effects stay out (a whole process's count moves by tens of thousands of
instructions from run to run with address randomization).
- ARM: qemu-aarch64 -d in_asm,exec,nochain logs every translated block once with its instructions, and every
  execution of a block ("Trace" lines; nochain makes each execution pass through the logger). The count is the sum
  over the executions between the region's two marker functions of each block's instructions. Debian's qemu 7.2 has no instruction-count plugin. CPUs: NEON on
  cortex-a72, SVE at 128, 256 and 512 bits on max with sve-max-vq=1, 2, 4, SVE2 on max at 128 bits; the portable
  fallback (Highway's EMU128) and the scalar reference (generic) on cortex-a72.
- x86: valgrind --tool=callgrind's "Collected" total with collection toggled on the region's function: AVX2, the
  portable fallback, the scalar reference.
"check" runs kernel_calls' loop of exactly 3 instructions for N1 and N2 iterations under each counter and fails
unless the difference is exactly 3 * (N2 - N1). "table" runs the check first, then prints the markdown table
(instructions per output element, and each ISA's count over the scalar reference's and over NEON's or AVX2's).
A count shows the work the core is given; it says nothing about memory behaviour (cache misses, bandwidth) or
about how many instructions a core retires per cycle.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading

CROSS = "/usr/aarch64-linux-gnu"
# (label, qemu -cpu, Select target)
ARM_CONFIGS = [("neon", "cortex-a72", "arm-neon"), ("sve 128", "max,sve-max-vq=1", "arm-sve"),
               ("sve 256", "max,sve-max-vq=2", "arm-sve"), ("sve 512", "max,sve-max-vq=4", "arm-sve"),
               ("sve2 128", "max,sve-max-vq=1", "arm-sve2"), ("portable (arm)", "cortex-a72", "portable"),
               ("scalar reference (arm)", "cortex-a72", "generic")]
X86_CONFIGS = [("avx2", "x86-avx2"), ("portable (x86)", "portable"), ("scalar reference (x86)", "generic")]
LOOP = (1000, 101000)
# kernel_calls' counted region: its markers (qemu) and the function that holds them (callgrind).
BEGIN, END, REGION = "roialign_count_begin", "roialign_count_end", "roialign_counted_region"  # iterations of the known loop: the counts' difference must be 3 * 100000


class CountError(RuntimeError):
    pass


def count_qemu_log(lines, begin=BEGIN, end=END):
    """Instructions executed between the block of function `begin` and the block of function `end`, from the lines
    of a qemu -d in_asm,exec,nochain log: each "IN:" block's address lines give the instructions of the block at its
    first address (the latest translation of that address); each "Trace" line is one execution of the block at the
    address inside its brackets [cs_base/pc/flags/cflags], in the function named after them. The region must be
    entered and left exactly once."""
    sizes, total, block, inside, regions = {}, 0, None, False, 0
    for line in lines:
        if line.startswith("Trace "):
            try:
                pc = int(line.split("[", 1)[1].split("/", 2)[1], 16)
                symbol = line.rsplit("] ", 1)[1].strip()
            except (IndexError, ValueError):
                raise CountError("unreadable trace line: %r" % line)
            if symbol == begin:
                if inside or regions:
                    raise CountError("the region was entered twice")
                inside = True
            elif symbol == end:
                if not inside:
                    raise CountError("the region ended before it began")
                inside, regions = False, regions + 1
            elif inside:
                if pc not in sizes:
                    raise CountError("block 0x%x executed before it was logged" % pc)
                total += sizes[pc]
        elif line.startswith("IN:"):
            block = []
        elif block is not None:
            if line.startswith("0x"):
                block.append(int(line.split(":", 1)[0], 16))
            else:  # the blank line after a block
                if block:
                    # A64 instructions are 4 bytes: one line per instruction, or the log cannot be trusted.
                    if (block[-1] - block[0]) // 4 + 1 != len(block):
                        raise CountError("block at 0x%x: %d lines for %d bytes" % (block[0], len(block),
                                                                                  block[-1] - block[0] + 4))
                    sizes[block[0]] = len(block)
                block = None
    if regions != 1:
        raise CountError("no complete counted region in the log (%s ... %s)" % (begin, end))
    return total


def qemu_count(build, cpu, args):
    """Instructions a kernel_calls process executes under qemu-aarch64 -cpu `cpu`, counted from its log."""
    binary = os.path.join(build, "bench", "kernel_calls")
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "log")
        os.mkfifo(fifo)
        cmd = ["qemu-aarch64", "-L", CROSS, "-E", "LD_LIBRARY_PATH=%s/lib" % CROSS, "-E", "OMP_NUM_THREADS=1",
               "-E", "OMP_WAIT_POLICY=passive", "-E", "GLIBC_TUNABLES=glibc.cpu.name=generic", "-cpu", cpu,
               "-d", "in_asm,exec,nochain", "-D", fifo, binary] + args
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def unblock():  # if qemu exits without opening the log, give the reader an end of file
            proc.wait()
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        threading.Thread(target=unblock, daemon=True).start()
        with open(fifo, errors="replace") as log:
            total = count_qemu_log(log)
        out, err = proc.communicate()
    if proc.returncode != 0:
        raise CountError("%s: status %d: %s" % (" ".join(cmd[-len(args) - 1:]), proc.returncode, err.strip()))
    return total, out.strip()


def callgrind_count(build, args):
    """Instructions a kernel_calls process executes under callgrind (its "Collected" total)."""
    binary = os.path.join(build, "bench", "kernel_calls")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--toggle-collect=" + REGION,
           binary] + args
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if proc.returncode != 0:
        raise CountError("%s: status %d: %s" % (" ".join(args), proc.returncode, proc.stderr.strip()[-2000:]))
    found = [l for l in proc.stderr.splitlines() if "Collected :" in l]
    if not found:
        raise CountError("callgrind printed no total:\n" + proc.stderr[-2000:])
    return int(found[-1].split("Collected :")[1].split()[0]), proc.stdout.strip()


def one_call(counter, args):
    """(instructions of one warm call, kernel_calls' line): the counted region holds one call after an untimed one."""
    return counter(args + ["--calls=1"])


def check(counters):
    """Each counter on the known loop; returns [(counter, measured difference, expected)], raises if any differ."""
    results = []
    for name, counter in counters:
        a, _ = counter(["--loop=%d" % LOOP[0]])
        b, _ = counter(["--loop=%d" % LOOP[1]])
        results.append((name, b - a, 3 * (LOOP[1] - LOOP[0])))
        print("check %-9s loop of 3 instructions: %d - %d iterations -> %d instructions (expected %d)%s"
              % (name, LOOP[1], LOOP[0], b - a, 3 * (LOOP[1] - LOOP[0]),
                 "" if b - a == 3 * (LOOP[1] - LOOP[0]) else "  MISMATCH"), flush=True)
    bad = [r for r in results if r[1] != r[2]]
    if bad:
        raise CountError("the counter does not reproduce a known count: %r" % bad)
    return results


def counters_of(args):
    counters = []
    if args.arm_build:
        counters.append(("qemu", lambda a: qemu_count(args.arm_build, "cortex-a72", a)))
    if args.x86_build:
        counters.append(("callgrind", lambda a: callgrind_count(args.x86_build, a)))
    if not counters:
        raise SystemExit("give --arm-build, --x86-build or both")
    return counters


def table(args):
    rows = []
    configs = []
    if args.arm_build:
        configs += [(label, target, lambda a, cpu=cpu: qemu_count(args.arm_build, cpu, a))
                    for label, cpu, target in ARM_CONFIGS]
    if args.x86_build:
        configs += [(label, target, lambda a: callgrind_count(args.x86_build, a)) for label, target in X86_CONFIGS]
    if args.isas:
        wanted = args.isas.split(",")
        configs = [c for c in configs if c[0] in wanted]
    for workload in args.workloads.split(","):
        for layout in args.layouts.split(","):
            for dtype in args.dtypes.split(","):
                if dtype != "F32" and layout not in ("NCHW", "NHWC"):
                    continue  # the blocked layouts are f32 only
                for label, target, counter in configs:
                    call = ["--workload=" + workload, "--target=" + target, "--layout=" + layout, "--dtype=" + dtype]
                    call += ["--full-channels"] if args.full_channels else []
                    try:
                        n, line = one_call(counter, call)
                        kernel, elements = line.split()
                        rows.append({"workload": workload, "layout": layout, "dtype": dtype, "isa": label,
                                     "kernel": kernel, "instructions": n, "elements": int(elements),
                                     "per_element": n / int(elements)})
                        print("  %s %s %s %-22s %-28s %12d instructions, %.1f per output element"
                              % (workload, layout, dtype, label, kernel, n, n / int(elements)), file=sys.stderr,
                              flush=True)
                    except CountError as e:
                        rows.append({"workload": workload, "layout": layout, "dtype": dtype, "isa": label,
                                     "error": str(e).splitlines()[-1][:200]})
                        print("  %s %s %s %s: %s" % (workload, layout, dtype, label, rows[-1]["error"]),
                              file=sys.stderr, flush=True)
    return rows


def print_table(rows):
    isas = []
    for r in rows:
        if r["isa"] not in isas:
            isas.append(r["isa"])
    keys = []
    for r in rows:
        k = (r["workload"], r["layout"], r["dtype"])
        if k not in keys:
            keys.append(k)
    at = {(r["workload"], r["layout"], r["dtype"], r["isa"]): r for r in rows}
    print("\nInstructions per output element of one warm call (one thread):\n")
    print("| workload | layout | dtype | " + " | ".join(isas) + " |")
    print("|---|---|---|" + "---|" * len(isas))
    for k in keys:
        cells = []
        for isa in isas:
            r = at.get(k + (isa,))
            cells.append("" if r is None else ("refused" if "error" in r else "%.1f" % r["per_element"]))
        print("| %s | %s | %s | " % k + " | ".join(cells) + " |")
    print("\nEach ISA against the scalar reference on the same architecture (reference / ISA: what SIMD saves):\n")
    print("| workload | layout | dtype | " + " | ".join(i for i in isas if "reference" not in i) + " |")
    print("|---|---|---|" + "---|" * len([i for i in isas if "reference" not in i]))
    for k in keys:
        cells = []
        for isa in isas:
            if "reference" in isa:
                continue
            ref = at.get(k + ("scalar reference (x86)" if isa in ("avx2", "portable (x86)")
                              else "scalar reference (arm)",))
            r = at.get(k + (isa,))
            ok = r is not None and ref is not None and "error" not in r and "error" not in ref
            cells.append("%.1fx" % (ref["per_element"] / r["per_element"]) if ok else "")
        print("| %s | %s | %s | " % k + " | ".join(cells) + " |")


def print_verdict(rows):
    """Per ISA and dtype: the layout with the fewest instructions per output element over the workloads counted,
    and how many times fewer than the scalar reference of its architecture executes there."""
    ok = [r for r in rows if "error" not in r]
    print("\nVerdict by instruction count (what a count does not show: cache misses, bandwidth, how many "
          "instructions a core retires per cycle; time those where the hardware is):\n")
    for isa in [i for i in dict.fromkeys(r["isa"] for r in ok) if "reference" not in i]:
        ref_isa = "scalar reference (x86)" if isa in ("avx2", "portable (x86)") else "scalar reference (arm)"
        for dtype in dict.fromkeys(r["dtype"] for r in ok):
            mine = [r for r in ok if r["isa"] == isa and r["dtype"] == dtype]
            if not mine:
                continue
            per = {}
            for r in mine:
                per.setdefault(r["layout"], []).append(r)
            total = {l: sum(r["instructions"] for r in rs) / sum(r["elements"] for r in rs) for l, rs in per.items()}
            best = min(total, key=total.get)
            refs = [r for r in ok if r["isa"] == ref_isa and r["dtype"] == dtype and r["layout"] == best]
            gain = ""
            if refs:
                ref = sum(r["instructions"] for r in refs) / sum(r["elements"] for r in refs)
                gain = ", %.1fx fewer than the scalar reference's %.1f" % (ref / total[best], ref)
            others = ", ".join("%s %.2fx" % (l, v / total[best]) for l, v in total.items() if l != best)
            print("- %s %s: %s, %.1f per output element%s%s" % (isa, dtype, best, total[best], gain,
                                                                  "; " + others if others else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("check", "table", "show"))
    ap.add_argument("--arm-build")
    ap.add_argument("--x86-build")
    ap.add_argument("--workloads", default="default")
    ap.add_argument("--layouts", default="NCHW,NHWC,NCHW4c")
    ap.add_argument("--dtypes", default="F32,F16")
    ap.add_argument("--isas", help="only these labels, e.g. 'neon,sve 256,avx2' (default: all)")
    ap.add_argument("--full-channels", action="store_true",
                    help="keep the workloads' channels (kernel_calls --full-channels); slower to count")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.mode == "show":  # the tables of an earlier "table --json FILE", without counting again
        with open(args.json) as f:
            rows = json.load(f)["rows"]
        print_table(rows)
        print_verdict(rows)
        return 0
    try:
        checked = check(counters_of(args))
        if args.mode == "check":
            return 0
        rows = table(args)
    except CountError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    print_table(rows)
    print_verdict(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"check": [{"counter": c, "instructions": n, "expected": e} for c, n, e in checked],
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
