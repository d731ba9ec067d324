#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scripts/check_imports.py: the repository's imports pass, and planted
bad ones fail.

1. On a planted tree (a temporary folder with tests/, scripts/, examples/,
   python/ and scripts/debian_packages.txt):
   - standard library, the project's own (sinkcert, a sibling script) and a
     mapped module whose package is listed pass;
   - a module no map entry covers (`import surely_not_a_module`, also in a
     function body and as `from x.y import z`) is reported with file and line;
   - a mapped module whose package the list lacks (numpy without
     python3-numpy) is reported naming the package;
   - the command exits 1 on such a tree.
2. The repository itself passes (exit 0).

Usage: check_imports_test.py ROOT
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_imports  # noqa: E402

CHECKER = os.path.join(ROOT, "scripts", "check_imports.py")


def planted(files, packages):
    tmp = tempfile.mkdtemp(prefix="check_imports_test.")
    atexit.register(shutil.rmtree, tmp, True)
    for folder in check_imports.FOLDERS:
        os.makedirs(os.path.join(tmp, folder), exist_ok=True)
    for path, text in files.items():
        with open(os.path.join(tmp, path), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(tmp, "scripts", "debian_packages.txt"), "w", encoding="utf-8") as f:
        f.write("# script package\n" + "".join(f"build {p}  # why\n" for p in packages))
    return tmp


def run(root):
    return subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)


failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


good = {
    "scripts/helper.py": "import os\n",
    "tests/a_test.py": "import json, sys\nfrom fractions import Fraction\nimport helper\n"
                       "import numpy as np\nimport sinkcert\nfrom sinkcert import convert\n",
    "python/mod.py": "from . import sibling\n",
}
root = planted(good, ["python3-numpy"])
check(check_imports.problems(root) == [], f"a good tree: {check_imports.problems(root)}")
check(run(root).returncode == 0, "a good tree: exit 0")

bad = dict(good)
bad["examples/fake.py"] = ("import os\n\n\ndef f():\n    import surely_not_a_module\n\n\n"
                           "from another_fake.sub import thing\n"
                           "fake3 = sinkcert.require(\"third_fake\")\n")
root = planted(bad, ["python3-numpy"])
found = check_imports.problems(root)
check(any("examples/fake.py:5: import surely_not_a_module" in p for p in found),
      f"a fake import inside a function is reported with its line: {found}")
check(any("examples/fake.py:8: import another_fake" in p for p in found),
      f"a fake `from x.y import z` is reported: {found}")
check(any("examples/fake.py:9: import third_fake" in p for p in found),
      f"a fake sinkcert.require(\"x\") is reported: {found}")
check(len(found) == 3, f"exactly the three fake imports: {found}")
r = run(root)
check(r.returncode == 1 and "surely_not_a_module" in r.stdout,
      f"the command fails on the fake import: {r.returncode} {r.stdout}")

root = planted(good, [])
found = check_imports.problems(root)
check(len(found) == 1 and "python3-numpy is not in scripts/debian_packages.txt" in found[0],
      f"numpy without python3-numpy in the list is reported: {found}")

r = run(ROOT)
check(r.returncode == 0, f"the repository's imports: {r.stdout}{r.stderr}")
print(r.stdout, end="")

if failures:
    print(f"check_imports_test: {len(failures)} failure(s)")
    sys.exit(1)
print("check_imports_test: all checks passed")
