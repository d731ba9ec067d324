#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks that the documentation quotes committed results only from results/.

1. docs/results.md and docs/benchmarks.md are what scripts/results_doc.py
   writes from the committed files now (regenerated into a temporary
   folder and compared byte for byte).
2. No other page (README.md, every other docs/*.md) quotes a number that
   looks like a result by hand unless a committed file under results/ holds
   it. A number looks like a result when it is an end of an interval
   `[a, b]` written with a decimal point or an exponent (`[0.25, 1e-6]`),
   is in scientific notation with a fractional mantissa (`1.188e-10`), or
   has a decimal point and at least three significant digits (`0.708`,
   `6.92`). Each such number must equal, at the significant digits it is
   written with, some number of a text file under results/ (rounded to
   those digits). Thresholds and formula constants are written so that
   they do not look like results (`1e-6`, `0.5`, `2^-53`); literals of more
   than 20 significant digits are examples of the exact-decimal file
   format, not quotations (no result is printed with so many). Blocks of
   real program output between `<!-- OUTPUT name -->` and
   `<!-- /OUTPUT -->` are exempt: they are replaced by what the program
   prints, not typed.
3. README.md says nothing of the kind "Measured" or "this machine"
   (timings belong to docs/benchmarks.md).

The rule of 2 is itself tested on planted lines: an enclosure that no
committed file holds must be flagged, one that a table holds must pass.

Usage: results_doc_test.py ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

# Ends of an interval "[a, b]" whose ends are decimal numbers.
INTERVAL = re.compile(
    r"\[\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*,\s*"
    r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*\]")
# Scientific notation with a fractional mantissa: 1.188e-10, 2.6e-117.
SCIENTIFIC = re.compile(r"(?<![\w.])(-?\d+\.\d+[eE][-+]?\d+)(?![\w.])")
# A decimal with a point: 0.708, 6.92 (result-like from three digits on).
DECIMAL = re.compile(r"(?<![\w.])(-?\d+\.\d+)(?![\w.])")
# Longer literals are file-format examples, not quoted results.
FORMAT_EXAMPLE_DIGITS = 20
# Any number token in a results file.
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
OUTPUT_BLOCK = re.compile(r"<!-- OUTPUT[^>]*-->.*?<!-- /OUTPUT -->", re.S)
# Larger files under results/ are weight files and figure data whose
# entries are not quoted results; skipping them keeps the check strict.
TEXT_SUFFIXES = (".json", ".csv", ".tex", ".txt", ".md")
MAX_DIGITS = 8


def significant_digits(literal):
    mantissa = re.split(r"[eE]", literal.lstrip("-"))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return max(1, len(digits))


def rounded(value, digits):
    return "%.*e" % (digits - 1, value)


def committed_numbers(root):
    """Every number of the text files under results/, rounded to 1..8 digits."""
    keys = set()
    for folder, _, files in os.walk(os.path.join(root, "results")):
        for name in files:
            if not name.endswith(TEXT_SUFFIXES) or name.endswith(".weights.json"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8",
                      errors="replace") as f:
                text = f.read()
            for token in set(NUMBER.findall(text)):
                try:
                    value = abs(float(token))
                except ValueError:
                    continue
                for d in range(1, MAX_DIGITS + 1):
                    keys.add(rounded(value, d))
    return keys


def is_result_like(literal):
    return "." in literal or "e" in literal.lower()


def unbacked_numbers(text, keys):
    """The result-like numbers of `text` that no committed file holds."""
    text = OUTPUT_BLOCK.sub("", text)
    found = []
    for match in INTERVAL.finditer(text):
        found += [x for x in match.groups() if is_result_like(x)]
    found += SCIENTIFIC.findall(text)
    found += [x for x in DECIMAL.findall(text) if significant_digits(x) >= 3]
    bad = []
    for literal in dict.fromkeys(found):  # each literal once, in order
        if significant_digits(literal) > FORMAT_EXAMPLE_DIGITS:
            continue
        digits = min(significant_digits(literal), MAX_DIGITS)
        if rounded(abs(float(literal)), digits) not in keys:
            bad.append(literal)
    return bad


def check_generated(root, failures):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(root, "scripts",
                                                     "results_doc.py"),
                        "--root", root, "--out-dir", tmp], check=True)
        for name in ("results.md", "benchmarks.md"):
            with open(os.path.join(tmp, name), encoding="utf-8") as f:
                fresh = f.read()
            committed_path = os.path.join(root, "docs", name)
            committed = ""
            if os.path.exists(committed_path):
                with open(committed_path, encoding="utf-8") as f:
                    committed = f.read()
            if fresh != committed:
                failures.append("docs/%s differs from what scripts/results_doc.py "
                                "writes now; run python3 scripts/results_doc.py"
                                % name)


def hand_written_pages(root):
    pages = ["README.md"]
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        if name.endswith(".md") and name not in ("results.md", "benchmarks.md"):
            pages.append(os.path.join("docs", name))
    return pages


def main(root):
    failures = []
    keys = committed_numbers(root)

    # The rule must catch a hand-copied enclosure that no file holds, and
    # pass one that the committed C1 table holds.
    planted_bad = "1 - min BOS in [1.036e-10, 1.042e-10] (CERTIFIED)"
    planted_good = "E in [1.188e-10, 1.205e-10] (CERTIFIED)"
    if unbacked_numbers(planted_bad, keys) != ["1.036e-10", "1.042e-10"]:
        failures.append("self-test: a planted stale enclosure was not flagged")
    if unbacked_numbers(planted_good, keys):
        failures.append("self-test: a committed enclosure was flagged")
    if unbacked_numbers("gaps of 0.4 to 6.913", keys) != ["6.913"]:
        failures.append("self-test: a plain decimal of four digits was not checked")
    if unbacked_numbers("<!-- OUTPUT x -->\n[1.036e-10, 1.042e-10]\n"
                        "<!-- /OUTPUT -->", keys):
        failures.append("self-test: program output blocks must be exempt")

    check_generated(root, failures)

    for page in hand_written_pages(root):
        with open(os.path.join(root, page), encoding="utf-8") as f:
            text = f.read()
        for literal in unbacked_numbers(text, keys):
            failures.append("%s: %s looks like a result but no file under "
                            "results/ holds it (quote it in docs/results.md "
                            "through scripts/results_doc.py, or cite the "
                            "table)" % (page, literal))

    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for word in ("Measured", "this machine"):
        if word in readme:
            failures.append("README.md: says '%s'; timings belong in "
                            "docs/benchmarks.md" % word)

    for failure in failures:
        print("results_doc_test: " + failure)
    print("results_doc_test: %d pages checked, %d failures"
          % (len(hand_written_pages(root)), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: results_doc_test.py ROOT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(os.path.abspath(sys.argv[1])))
