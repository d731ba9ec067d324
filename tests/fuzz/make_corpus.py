#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the structured part of the reader fuzz corpus (tests/fuzz/corpus/):
near-valid files of every kind the tool reads back, each made from a real
file of the repository by one mutation (a value replaced by one of another
type, a key removed, a list emptied), so that the replay exercises every
field check of the readers, not only their JSON parser.

Sources: a sweep grid (tests/data/tiny_grid.json), a sweep result file, a
table JSON, a Theorem 1 hypothesis-edge theorem1.json and the Theorem 2
study theorem2.json (lists cut to their first two entries to keep the files
small). Deterministic (seed 0); rerun after a reader gains fields:
  python3 tests/fuzz/make_corpus.py
A larger set for a local replay (not committed; a file that fails there is
committed as a *_reproducer*.json):
  SINKCERT_CORPUS_OUT=/tmp/corpus SINKCERT_CORPUS_PER_SOURCE=400 \
    python3 tests/fuzz/make_corpus.py && build/tests/reader_fuzz /tmp/corpus
"""
import json
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("SINKCERT_CORPUS_OUT", os.path.join(ROOT, "tests", "fuzz", "corpus"))
SOURCES = {
    "grid": "tests/data/tiny_grid.json",
    "sweep_result": "results/normalizations/sweep_n5_L4/configs/normalization-relu-n5-L4-paper-s0.json",
    "table": "results/tables/p3_relu_certificate.json",
    "edge_run": "results/theorem1/edges/n5_L4_paper/theorem1.json",
    "theorem2": "results/theorem2/theorem2.json",
}
# Mutations per source (each file one mutation).
PER_SOURCE = int(os.environ.get("SINKCERT_CORPUS_PER_SOURCE", 12))
REPLACEMENTS = ["text", None, -1, 1e308, [], {}, 3.5, True, 2**70]


def shrink(node):
    if isinstance(node, list):
        return [shrink(x) for x in node[:2]]
    if isinstance(node, dict):
        return {k: shrink(v) for k, v in node.items()}
    return node


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, prefix + (i,))


def mutate(doc, path, rng):
    doc = json.loads(json.dumps(doc))
    if not path:
        return rng.choice(REPLACEMENTS)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    kind = rng.randrange(3)
    if kind == 0 and isinstance(parent, dict):
        del parent[key]
    elif kind == 1 and isinstance(parent[key], list):
        parent[key] = []
    else:
        old = parent[key]
        choices = [r for r in REPLACEMENTS if type(r) is not type(old)]
        parent[key] = rng.choice(choices)
    return doc


def main():
    rng = random.Random(0)
    os.makedirs(OUT, exist_ok=True)
    for name, source in SOURCES.items():
        with open(os.path.join(ROOT, source)) as f:
            doc = shrink(json.load(f))
        every = list(paths(doc))
        # the top levels first (where the readers look), then a sample
        shallow = [p for p in every if len(p) <= 2]
        deep = [p for p in every if len(p) > 2]
        chosen = shallow[:PER_SOURCE // 2] + rng.sample(deep, min(len(deep), PER_SOURCE // 2))
        rng.shuffle(shallow)
        chosen += shallow[: max(0, PER_SOURCE - len(chosen))]
        with open(os.path.join(OUT, f"{name}_valid.json"), "w") as f:
            json.dump(doc, f)
        for i, path in enumerate(chosen[:PER_SOURCE]):
            with open(os.path.join(OUT, f"{name}_mutant{i:02d}.json"), "w") as f:
                json.dump(mutate(doc, path, rng), f)


if __name__ == "__main__":
    main()
