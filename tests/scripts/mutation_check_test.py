#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/mutation_check.py --check-lines: every mutant's line occurs
exactly once in the tree, and the check fails, naming the mutant, on a
copy of the tree where one line is gone or appears twice (so an edit of a
bound cannot retire a mutant unseen)."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "mutation_check.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.dont_write_bytecode = True
import mutation_check  # noqa: E402


def check(root):
    return subprocess.run(["/usr/bin/python3", SCRIPT, "--check-lines", "--root", root],
                          capture_output=True, text=True)


def main():
    p = check(ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"({len(mutation_check.MUTANTS)} mutants)" in p.stdout, p.stdout
    name, path, old, _new, _tests, _term = mutation_check.MUTANTS[0]
    files = sorted({m[1] for m in mutation_check.MUTANTS})
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, f), os.path.join(tmp, f))
        assert check(tmp).returncode == 0
        with open(os.path.join(ROOT, path)) as f:
            text = f.read()
        for edited, times in ((text.replace(old, "", 1), 0), (text.replace(old, old + old, 1), 2)):
            with open(os.path.join(tmp, path), "w") as f:
                f.write(edited)
            p = check(tmp)
            assert p.returncode != 0, f"a line held {times} times passed"
            assert f"{name}: {path} holds its line {times} times" in p.stderr, p.stderr
    print("mutation_check_test: passed")


if __name__ == "__main__":
    main()
