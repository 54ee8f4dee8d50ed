#!/usr/bin/env python3
# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""torchvision's own RoIAlign tests (its test/test_ops.py), run with roialign substituted (docs/testing.md).

PyPI's torchvision ships no tests, so they come from Debian's source package of torchvision (``pytorch-vision``,
0.14.1 on Debian 12), fetched with apt from the machine's own Debian mirror. Nothing of torchvision's test code is
in this repository: it is read where it was downloaded.

    run.py --fetch DIR               download Debian's pytorch-vision source into DIR and unpack its tests there
                                     (.ci/setup-debian.sh does this into .peers/torchvision-tests)
    run.py --tests DIR [PYTEST ARGS] run the RoIAlign tests of DIR/test/test_ops.py with this interpreter (which must
                                     import roialign with its torch operators, torch and torchvision) and the plugin
                                     roialign_swap.py beside this file

The run selects TestRoIAlign and TestMultiScaleRoIAlign and deselects the quantized tests (test_qroialign,
test_qroi_align_multiple_images): roialign has no kernels for quantized tensors, and its operator has no
QuantizedCPU kernel, so those tests would only show that; the CUDA tests skip themselves on a machine without CUDA.
The exit status is pytest's.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_FILES = ("test_ops.py", "common_utils.py", "conftest.py", "_utils_internal.py")
# Why each deselected test is left out (printed with the run).
DESELECTED = {
    "test_qroialign": "quantized tensors: roialign has no quantized kernels (no QuantizedCPU kernel of its op)",
    "test_qroi_align_multiple_images": "quantized tensors, as above",
}


def apt_sources(tmp):
    """deb-src entries for the machine's own Debian mirrors, from its apt sources (deb822 or one-line form)."""
    entries = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            text = f.read()
        if "Types: deb" in text:
            entries.append(("%s/%s" % (tmp, os.path.basename(path)),
                            text.replace("Types: deb\n", "Types: deb-src\n").replace("Types: deb deb-src\n",
                                                                                         "Types: deb-src\n")))
    lines = []
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        if os.path.exists(path):
            with open(path) as f:
                lines += ["deb-src " + line.split(None, 1)[1] for line in f if line.startswith("deb ")]
    return entries, lines


def fetch(dest):
    """Downloads Debian's pytorch-vision source with a private apt state (the system's is not changed) and unpacks
    its test files into dest/test."""
    os.makedirs(dest, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="roialign-tv-src-")
    try:
        parts = os.path.join(tmp, "sources.list.d")
        os.makedirs(parts)
        entries, lines = apt_sources(parts)
        for path, text in entries:
            with open(path, "w") as f:
                f.write(text)
        with open(os.path.join(tmp, "sources.list"), "w") as f:
            f.writelines(lines)
        if not entries and not lines:
            sys.exit("run.py: no Debian apt sources found in /etc/apt")
        for d in ("lists/partial", "cache/archives/partial"):
            os.makedirs(os.path.join(tmp, d))
        options = ["-o", "Dir::Etc::SourceList=" + os.path.join(tmp, "sources.list"),
                   "-o", "Dir::Etc::SourceParts=" + parts,
                   "-o", "Dir::State::Lists=" + os.path.join(tmp, "lists"),
                   "-o", "Dir::Cache=" + os.path.join(tmp, "cache"),
                   "-o", "APT::Sandbox::User=root",  # the private directories are root's
                   "-qq"]
        subprocess.run(["apt-get"] + options + ["update"], check=True)
        download = os.path.join(tmp, "download")
        os.makedirs(download)
        # Only the upstream tarball is needed; apt fails the whole command when another file of the source package
        # (its debian/ tarball) cannot be had, so its status is not the test.
        status = subprocess.run(["apt-get"] + options + ["source", "--download-only", "pytorch-vision"],
                                cwd=download).returncode
        tarballs = glob.glob(os.path.join(download, "pytorch-vision_*.orig.tar.*"))
        if len(tarballs) != 1:
            sys.exit("run.py: apt-get source pytorch-vision exited %d without the upstream tarball "
                     "(pytorch-vision_*.orig.tar.*); got %s" % (status, os.listdir(download)))
        with tarfile.open(tarballs[0]) as tar:
            members = [m for m in tar.getmembers()
                       if m.isfile() and m.name.count("/") == 2 and m.name.split("/")[1] == "test"
                       and m.name.split("/")[2] in TEST_FILES]
            if len(members) != len(TEST_FILES):
                sys.exit("run.py: %s lacks some of test/%s" % (tarballs[0], ", test/".join(TEST_FILES)))
            os.makedirs(os.path.join(dest, "test"), exist_ok=True)
            for m in members:
                with tar.extractfile(m) as src, open(os.path.join(dest, "test", m.name.split("/")[2]), "wb") as dst:
                    shutil.copyfileobj(src, dst)
        with open(os.path.join(dest, "SOURCE"), "w") as f:
            f.write(os.path.basename(tarballs[0]) + "\n")
        print("run.py: torchvision's tests from %s are in %s/test" % (os.path.basename(tarballs[0]), dest))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tests, pytest_args):
    test_dir = os.path.join(tests, "test")
    if not os.path.exists(os.path.join(test_dir, "test_ops.py")):
        sys.exit("run.py: no %s/test_ops.py: fetch torchvision's tests first (run.py --fetch %s, or "
                 ".ci/setup-debian.sh for .peers/torchvision-tests)" % (test_dir, tests))
    with open(os.path.join(tests, "SOURCE")) as f:
        print("run.py: torchvision's tests from %s" % f.read().strip(), flush=True)
    for name, why in DESELECTED.items():
        print("run.py: deselected %s: %s" % (name, why), flush=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    selection = "(TestRoIAlign or TestMultiScaleRoIAlign) and not " + " and not ".join(DESELECTED)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "roialign_swap", "-q", "-rfE",
               "-k", selection, "test_ops.py"] + pytest_args
    return subprocess.run(command, cwd=test_dir, env=env).returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--fetch", metavar="DIR", help="download torchvision's tests into DIR")
    group.add_argument("--tests", metavar="DIR", help="run the tests of DIR (from --fetch)")
    args, rest = parser.parse_known_args()
    if args.fetch:
        fetch(args.fetch)
        return 0
    return run(args.tests, rest)


if __name__ == "__main__":
    sys.exit(main())
