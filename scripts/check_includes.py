#!/usr/bin/env python3
"""Checks that every source file and header of the project compiles on its own.

The build compiles 8 files to a unit (VNT_UNITY_BUILD), where a file that uses a name without including its
header still compiles if an earlier file of its unit included it; the next build with other units, or without
them, then fails. This configures a build tree without units (no compiling), generates the parser's headers, and
runs each compile command of compile_commands.json with -fsyntax-only, and each header alone with the flags of a
file of its directory. Prints the compiler's errors and exits 1 if any file fails.

Usage: scripts/check_includes.py [BUILD_DIR] [-- extra cmake flags]   (BUILD_DIR defaults to build/includes)
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_DIRS = ("runtime/", "parser/", "stdlib/", "tests/", "bench/")


def own(path):
    rel = os.path.relpath(path, ROOT)
    return rel.startswith(OWN_DIRS)


def syntax_only(command):
    """The compile command with its output dropped and -fsyntax-only added."""
    args = shlex.split(command)
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        else:
            out.append(a)
    return out + ["-fsyntax-only"]


def header_command(header, source_args):
    """A command compiling `#include "header"` alone, with the flags of a source file near it."""
    args = [a for a in source_args if a not in ("-c",) and not a.endswith((".cpp", ".cxx"))]
    return args + ["-x", "c++", "-"], f'#include "{os.path.relpath(header, ROOT)}"\n'


def nearest(by_dir, dirpath):
    """The flags of a compiled file in dirpath or the closest directory above it; else of the runtime's engine
    (whose flags reach every header: the public one's directory has no source file)."""
    while dirpath.startswith(ROOT + "/"):
        if dirpath in by_dir:
            return by_dir[dirpath]
        dirpath = os.path.dirname(dirpath)
    return by_dir.get(os.path.join(ROOT, "runtime", "engine"))


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    build = os.path.abspath(argv[0]) if argv else os.path.join(ROOT, "build", "includes")
    subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Debug", "-DVNT_UNITY_BUILD=OFF",
                    *extra], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build, "--target", "vnt_parser_sources"], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if own(e["file"])]

    jobs = []  # (what, args, stdin, cwd)
    by_dir = {}
    for e in entries:
        args = syntax_only(e["command"])
        jobs.append((os.path.relpath(e["file"], ROOT), args, None, e["directory"]))
        if f"-I{ROOT}" in args:  # not the test runner's main, which includes nothing of ours
            by_dir.setdefault(os.path.dirname(e["file"]), (args, e["directory"]))
    for top in OWN_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            near = nearest(by_dir, dirpath)
            for name in sorted(files):
                if not name.endswith(".hpp"):
                    continue
                if near is None:
                    print(f"check_includes: no compile command near {dirpath} for {name}", file=sys.stderr)
                    return 1
                args, cwd = near
                command, stdin = header_command(os.path.join(dirpath, name), args)
                jobs.append((os.path.relpath(os.path.join(dirpath, name), ROOT), command, stdin, cwd))

    def run(job):
        what, args, stdin, cwd = job
        r = subprocess.run(args, input=stdin, cwd=cwd, capture_output=True, text=True)
        return what, r.returncode, r.stdout + r.stderr

    start = time.monotonic()
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for what, code, output in pool.map(run, jobs):
            if code != 0 or output.strip():
                failed += code != 0
                print(f"== {what}\n{output}", end="" if output.endswith("\n") else "\n")
    print(f"check_includes: {len(jobs)} files, {failed} failed ({time.monotonic() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
