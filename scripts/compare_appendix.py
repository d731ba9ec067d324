#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares two appendix folders (written by `sinkcert appendix --out DIR`)
cell by cell: every table's CSV (tables/*.csv) and every figure's data
(figures/*.dat), apart from timing columns and provenance.

  scripts/compare_appendix.py EXPECTED ACTUAL

EXPECTED is typically the committed results/, ACTUAL a fresh run's --out.
Compared:
  - the same set of tables/*.csv and figures/*.dat in both;
  - in each CSV, every cell of every row, except the timing columns
    (a header that is "seconds", "wall s" or "CPU s", or ends in " s" or
    " seconds"), and the comment lines' caption and notes (the text around
    the values); the provenance lines (command_line, revision, time_utc,
    seed, precision, inputs and any other "# key:" line but caption and note)
    are not compared;
  - in each .dat, every line that is not a comment.
Prints one line per difference (file, row, column, both values) and
"identical: N tables, M figure data files" when there is none; exit status 0
when identical, 1 when not, 2 on bad arguments.
"""
import csv
import io
import os
import sys

# Column headers that hold wall or CPU time: machine-dependent by nature.
TIMING_HEADERS = {"seconds", "wall s", "CPU s"}


def is_timing(header):
    h = header.strip()
    return h in TIMING_HEADERS or h.endswith(" s") or h.endswith(" seconds")


def read_csv(path):
    """The comment lines kept for comparison (caption, note) and the rows."""
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    kept_comments, body = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("#"):
            key = line[1:].strip().split(":", 1)[0]
            if key in ("caption", "note"):
                kept_comments.append(line.rstrip("\n"))
        else:
            body.append(line)
    rows = list(csv.reader(io.StringIO("".join(body))))
    return kept_comments, rows


def compare_lines(name, what, x, y, say):
    """Line by line; one difference per line that differs, and one if the
    counts differ."""
    differences = 0
    for i, (u, v) in enumerate(zip(x, y), start=1):
        if u != v:
            say(f"{name}: {what} {i}: expected {u!r}, got {v!r}")
            differences += 1
    if len(x) != len(y):
        say(f"{name}: {len(x)} {what}s expected, got {len(y)}")
        differences += 1
    return differences


def compare_csv(name, expected, actual, say):
    e_comments, e_rows = read_csv(expected)
    a_comments, a_rows = read_csv(actual)
    differences = compare_lines(name, "caption/note line", e_comments, a_comments, say)
    if not e_rows or not a_rows:
        if e_rows != a_rows:
            say(f"{name}: one of the tables is empty")
            return differences + 1
        return differences
    header = e_rows[0]
    if a_rows[0] != header:
        say(f"{name}: header: expected {header}, got {a_rows[0]}")
        return differences + 1
    if len(e_rows) != len(a_rows):
        say(f"{name}: {len(e_rows) - 1} rows expected, got {len(a_rows) - 1}")
        differences += 1
    timing = {c for c, h in enumerate(header) if is_timing(h)}
    for r, (x, y) in enumerate(zip(e_rows[1:], a_rows[1:]), start=1):
        if len(x) != len(y):
            say(f"{name}: row {r}: {len(x)} cells expected, got {len(y)}")
            differences += 1
            continue
        for c, (u, v) in enumerate(zip(x, y)):
            if c not in timing and u != v:
                say(f"{name}: row {r}, column {header[c]!r}: expected {u!r}, got {v!r}")
                differences += 1
    return differences


def data_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if not line.startswith("#")]


def compare_dat(name, expected, actual, say):
    return compare_lines(name, "data line", data_lines(expected), data_lines(actual), say)


def files(folder, sub, ext):
    path = os.path.join(folder, sub)
    if not os.path.isdir(path):
        return set()
    return {f for f in os.listdir(path) if f.endswith(ext) and not f.startswith(".")}


def compare(expected, actual, say=print):
    """Number of differences between the two appendix folders."""
    differences = 0
    counts = []
    for sub, ext, compare_file in (("tables", ".csv", compare_csv), ("figures", ".dat", compare_dat)):
        e, a = files(expected, sub, ext), files(actual, sub, ext)
        for f in sorted(e - a):
            say(f"{sub}/{f}: missing from {actual}")
            differences += 1
        for f in sorted(a - e):
            say(f"{sub}/{f}: not in {expected}")
            differences += 1
        for f in sorted(e & a):
            differences += compare_file(
                f"{sub}/{f}", os.path.join(expected, sub, f), os.path.join(actual, sub, f), say
            )
        counts.append(len(e & a))
    if differences == 0:
        say(f"identical: {counts[0]} tables, {counts[1]} figure data files "
            "(timing columns and provenance not compared)")
    return differences


def main(argv):
    if len(argv) != 3 or not all(os.path.isdir(d) for d in argv[1:]):
        print("usage: compare_appendix.py EXPECTED_DIR ACTUAL_DIR (two appendix folders, "
              "each holding tables/ and figures/)", file=sys.stderr)
        return 2
    return 0 if compare(argv[1], argv[2]) == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
