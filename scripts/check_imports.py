#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks that every Python import of the repository can be satisfied on a
fresh Debian 12 machine after scripts/build.sh and scripts/test.sh.

Every `import x`, `from x import ...` and `sinkcert.require("x")` (any
depth: inside functions too; relative imports are the package's own) in the .py files under tests/,
scripts/, examples/ and python/ must name a top-level module that is
  - standard library (sys.stdlib_module_names of the running Python), or
  - the project's own: the package sinkcert, or a module a .py file of
    those folders defines (scripts put scripts/ on sys.path), or
  - provided by a Debian package that scripts/debian_packages.txt lists
    (the "build" or "test" packages), through MODULE_PACKAGES below.
A module none of these covers is an error: a test, script or example that
fails with `No module named ...` on a fresh machine.

Usage: scripts/check_imports.py [ROOT]   (exit 1 listing every problem)
"""
import ast
import os
import sys

FOLDERS = ("tests", "scripts", "examples", "python")

# The Debian package of every third-party module the tree imports.
MODULE_PACKAGES = {
    "numpy": "python3-numpy",
    "mpmath": "python3-mpmath",
    "torch": "python3-torch",
    "pytest": "python3-pytest",
    "setuptools": "python3-setuptools",
    "pybind11": "python3-pybind11",
}

OWN_PACKAGES = {"sinkcert"}


def python_files(root):
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames
                                 if not d.startswith(".") and d != "build" and d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    yield os.path.join(dirpath, name)


def imports(path):
    """(line, top-level module) of every absolute import of the file."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and _is_sinkcert_require(node.func)):
            yield node.lineno, node.args[0].value.split(".")[0]  # sinkcert.require("torch")


def _is_sinkcert_require(func):
    """sinkcert.require(...) or, inside the package, a bare require(...); not
    another object's method of that name (a test's checks.require)."""
    if isinstance(func, ast.Attribute):
        return func.attr == "require" and isinstance(func.value, ast.Name) and \
            func.value.id == "sinkcert"
    return isinstance(func, ast.Name) and func.id == "require"


def listed_packages(root):
    """The packages of scripts/debian_packages.txt (every script's)."""
    packages = set()
    with open(os.path.join(root, "scripts", "debian_packages.txt"), encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) >= 2:
                packages.add(words[1])
    return packages


def problems(root, packages=None, module_packages=None, stdlib=None):
    """One line per import that nothing provides (empty: all good)."""
    packages = listed_packages(root) if packages is None else packages
    module_packages = MODULE_PACKAGES if module_packages is None else module_packages
    stdlib = sys.stdlib_module_names if stdlib is None else stdlib
    files = list(python_files(root))
    own = set(OWN_PACKAGES) | {os.path.splitext(os.path.basename(p))[0] for p in files}
    found = []
    for path in files:
        for line, module in imports(path):
            if module in stdlib or module in own:
                continue
            where = f"{os.path.relpath(path, root)}:{line}: import {module}"
            package = module_packages.get(module)
            if package is None:
                found.append(f"{where}: neither standard library, the project's own, nor a "
                             f"module with a Debian package in scripts/check_imports.py's map")
            elif package not in packages:
                found.append(f"{where}: its Debian package {package} is not in "
                             f"scripts/debian_packages.txt")
    return found


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))
    if not hasattr(sys, "stdlib_module_names"):
        sys.exit("check_imports.py: needs Python 3.10 or later (sys.stdlib_module_names)")
    found = problems(root)
    for p in found:
        print(p)
    if found:
        print(f"check_imports.py: {len(found)} import(s) a fresh machine cannot satisfy")
        return 1
    print("check_imports.py: every import is standard library, the project's own or from a "
          "listed Debian package")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
