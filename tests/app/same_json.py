#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whether two JSON outputs of sinkcert are the same apart from timings.

  same_json.py A.json B.json PATTERN [KEY]

Drops every "seconds", "elapsed" and "provenance" member, and in every
string value (only under members named KEY, when given) replaces the
matches of the regular expression PATTERN (a time such as "1.2 s") by
"T s"; then compares. Exit 0 when equal; else prints the path of the first
difference and exits 1. Shared by the MPI tests (one process against
several ranks).
"""
import json
import re
import sys


def strip(x, pattern, key):
    if isinstance(x, dict):
        return {k: (re.sub(pattern, "T s", v) if isinstance(v, str) and key in (None, k)
                    else strip(v, pattern, key))
                for k, v in x.items() if k not in ("seconds", "elapsed", "provenance")}
    if isinstance(x, list):
        return [strip(v, pattern, key) for v in x]
    return x


def first(a, b, path="$"):
    if type(a) != type(b):
        return path
    if isinstance(a, dict):
        for k in a:
            if k not in b or a[k] != b[k]:
                return first(a[k], b.get(k), path + "." + k)
    if isinstance(a, list):
        for i, (u, v) in enumerate(zip(a, b)):
            if u != v:
                return first(u, v, "%s[%d]" % (path, i))
    return path


def main(argv):
    pattern, key = argv[3], (argv[4] if len(argv) > 4 else None)
    a, b = (strip(json.load(open(p)), pattern, key) for p in argv[1:3])
    if a != b:
        print("first difference at", first(a, b))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
