#!/usr/bin/env python3
"""Mutation check of the readers' error paths (issue 21, acceptance 3).

Each line of tests/mutations/mutations.txt names a check in a reader (a unique substring of the
line holding its `return err(`) and the tests that must notice when it is gone. For each, this
script turns that `return err(` into `if (false) return err(` (the refusal disappears, the code
around it stays), rebuilds the test binary, runs the named tests, and requires them to fail. The
source file is restored after every mutation (and on Ctrl-C); the binaries are rebuilt from the
clean sources at the end.

  scripts/mutation-check.py [--build DIR] [--only N[,N...]]   # apply and test (10-20 s each)
  scripts/mutation-check.py --list-only                       # every substring still names one line

Exit status: 0 when every mutation was killed (or, with --list-only, every entry is sound).
"""
import argparse
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "tests", "mutations", "mutations.txt")
MARK = "return err("


def entries():
    out = []
    with open(LIST, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 4:
                raise SystemExit(f"{LIST}:{n}: expected 'FILE | SUBSTRING | BINARY | FILTER', found {line!r}")
            out.append((n, *parts))
    return out


def locate(path, needle):
    """The index of the one line holding needle and a `return err(`, or an error text."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    hits = [i for i, l in enumerate(lines) if needle in l]
    if len(hits) != 1:
        return lines, f"{path}: {len(hits)} lines hold {needle!r} (need exactly one)"
    if MARK not in lines[hits[0]]:
        return lines, f"{path}:{hits[0] + 1}: the line holding {needle!r} has no `{MARK}`"
    return lines, hits[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--list-only", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated entry numbers (1-based, in file order)")
    a = ap.parse_args()

    es = entries()
    bad = []
    for n, path, needle, _, _ in es:
        _, at = locate(path, needle)
        if isinstance(at, str):
            bad.append(f"{LIST}:{n}: {at}")
    if bad:
        print("\n".join(bad))
        return 1
    if a.list_only:
        print(f"{len(es)} mutations, each naming one `return err(` line")
        return 0

    pick = {int(x) for x in a.only.split(",") if x.strip()}
    current = {}  # path -> original text, while mutated

    def restore(*_):
        for p, text in current.items():
            with open(os.path.join(ROOT, p), "w", encoding="utf-8") as f:
                f.write(text)
        current.clear()

    signal.signal(signal.SIGINT, lambda *x: (restore(), sys.exit(130)))
    rows, survived, binaries = [], 0, set()
    for k, (n, path, needle, binary, gfilter) in enumerate(es, 1):
        if pick and k not in pick:
            continue
        full = os.path.join(ROOT, path)
        with open(full, encoding="utf-8") as f:
            original = f.read()
        lines, at = locate(path, needle)
        lines[at] = lines[at].replace(MARK, "if (false) " + MARK, 1)
        current[path] = original
        t0 = time.time()
        try:
            with open(full, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            b = subprocess.run(["cmake", "--build", a.build, "--target", binary], capture_output=True, text=True)
            if b.returncode != 0:
                result = "did not build (fix the entry)"
                survived += 1
            else:
                exe = os.path.join(a.build, "tests", binary)
                r = subprocess.run([exe, f"--gtest_filter={gfilter}"], capture_output=True, text=True)
                killed = r.returncode != 0
                result = "killed" if killed else "SURVIVED"
                survived += 0 if killed else 1
        finally:
            restore()
        binaries.add(binary)
        rows.append((k, f"{path}:{at + 1}", gfilter, result, time.time() - t0))
        print(f"| {k} | {path}:{at + 1} | {gfilter} | {result} | {rows[-1][4]:.0f} s |", flush=True)

    for binary in sorted(binaries):  # back to the clean sources
        subprocess.run(["cmake", "--build", a.build, "--target", binary], capture_output=True)
    print(f"\n{len(rows) - survived} of {len(rows)} mutations killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
