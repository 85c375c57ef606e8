#!/usr/bin/env python3
# Golden test runner for tests/lang/*.vnt: runs pprun on one program and checks the expectations written in it.
# SPDX-License-Identifier: Apache-2.0
"""usage: golden.py PPRUN FILE.vnt

Runs `PPRUN FILE.vnt --seed 1 --quiet ARGS...` where ARGS come from a `; args: ...` line of the file, then
checks the expectations written in the file's comments:

  ;=> text            the next line of stdout is exactly `text` (in file order; may follow a directive on the
                      same line or stand on its own line). stdout must hold exactly these lines, no more.
  ;!error L:C message the first line of stderr is exactly `FILE:L:C: error: message` (FILE as given on the
                      command line; `<FILE>` inside the message stands for it too) and the exit status is 2
                      (unless `;!exit` says otherwise).
  ;!exit N            the exit status is N.
  ;!warning L:C msg   stderr has the line `warning: FILE:L:C: msg`. The warnings on stderr (lines starting with
                      `warning: `) must be exactly those expected, in file order; the other lines are checked as
                      above.

Without `;!error` or `;!exit` the program must exit 0 with an empty stderr. Exits 0 on success, 1 on failure.
"""
import difflib
import shlex
import signal
import subprocess
import sys

TIMEOUT_S = 20


def parse_expectations(path, text):
    exp = {"stdout": [], "error": None, "exit": None, "args": [], "warnings": []}
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("; args:"):
            exp["args"] += shlex.split(stripped[len("; args:"):])
        pos = line.find(";=>")
        if pos >= 0:
            exp["stdout"].append(line[pos + 3:].strip())
        pos = line.find(";!error ")
        if pos >= 0:
            if exp["error"] is not None:
                sys.exit(f"{path}:{n}: golden: more than one ;!error (a program stops at its first error)")
            loc, _, message = line[pos + len(";!error "):].strip().partition(" ")
            exp["error"] = f"{path}:{loc}: error: " + message.replace("<FILE>", path)
        pos = line.find(";!warning ")
        if pos >= 0:
            loc, _, message = line[pos + len(";!warning "):].strip().partition(" ")
            exp["warnings"].append(f"warning: {path}:{loc}: " + message.replace("<FILE>", path))
        pos = line.find(";!exit ")
        if pos >= 0:
            exp["exit"] = int(line[pos + len(";!exit "):].split()[0])
    if exp["exit"] is None:
        exp["exit"] = 2 if exp["error"] is not None else 0
    return exp


def show(label, lines):
    return f"--- {label} ---\n" + "".join(f"  | {l}\n" for l in lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pprun, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        exp = parse_expectations(path, f.read())
    cmd = [pprun, path, "--seed", "1", "--quiet"] + exp["args"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f"FAIL {path}: timed out after {TIMEOUT_S} s\ncommand: {shlex.join(cmd)}")
        return 1
    out = proc.stdout.splitlines()
    all_err = proc.stderr.splitlines()
    warnings = [l for l in all_err if l.startswith("warning: ")]
    err = [l for l in all_err if not l.startswith("warning: ")]
    problems = []
    if warnings != exp["warnings"]:
        diff = difflib.unified_diff(exp["warnings"], warnings, "expected warnings", "actual warnings", lineterm="", n=2)
        problems.append("warnings differ:\n" + "\n".join(diff))
    if proc.returncode < 0:
        problems.append(f"CRASH: killed by signal {-proc.returncode} ({signal.Signals(-proc.returncode).name})")
    elif proc.returncode not in (0, 1, 2):
        problems.append(f"CRASH: exit status {proc.returncode} (pprun only exits 0, 1 or 2)")
    if proc.returncode != exp["exit"]:
        problems.append(f"exit status: expected {exp['exit']}, got {proc.returncode}")
    if out != exp["stdout"]:
        diff = difflib.unified_diff(exp["stdout"], out, "expected stdout", "actual stdout", lineterm="", n=2)
        problems.append("stdout differs:\n" + "\n".join(diff))
    if exp["error"] is not None:
        first = err[0] if err else "<empty stderr>"
        if first != exp["error"]:
            problems.append(f"first line of stderr differs:\n  expected: {exp['error']}\n  actual:   {first}")
    elif exp["exit"] == 0 and err:
        problems.append("unexpected stderr (the program should succeed)")
    if not problems:
        return 0
    print(f"FAIL {path}\ncommand: {shlex.join(cmd)}")
    for p in problems:
        print(p)
    print(show("stdout", out) + show("stderr", all_err), end="")
    return 1


if __name__ == "__main__":
    sys.exit(main())
