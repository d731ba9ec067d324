#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Convert PyTorch attention weights (a state dict, a saved module, or a
numpy .npz) into a sinkcert weight file.

The conversion is sinkcert.convert (python/sinkcert/convert.py, pure
Python: numpy, and torch for .pt files), whose docstring describes the
layouts, the exactness of the written entries and what is refused. This
script is its command line; it runs from a source checkout without the
compiled extension.

Usage:
  /usr/bin/python3 scripts/convert_pytorch.py STATE.npz|STATE.pt (OUT.json | --out OUT.json)
      [--layout auto|fused|qkvo|mha|map] [--map KEYS.json]
      [--attention softmax|relu|...|softpick|gated] [--kind single-layer|residual]
      [--heads H] [--score-scale S] [--L L] [--trigger-range paper|reference-code]
      [--allow-pickle]
  --score-scale is required unless the layout implies it (mha: 1/sqrt(d));
  --heads defaults to rows / n for the fused layout (heads of width n) and
  is required for qkvo, mha and map state dicts; --kind defaults to
  single-layer for one layer and residual otherwise; --L and
  --trigger-range are written as the file's task metadata. --allow-pickle
  loads a whole saved module (unpickling runs code: only files you trust).
A whole module (--allow-pickle) is run on task inputs of length --L (8
when not given) against the converted model, and the conversion is refused
when they differ beyond the rounding of the module's dtype (the self-test,
recorded in the file's metadata); a state dict cannot be run, and the
metadata says that no self-test ran.
Errors are one line on stderr naming the file, the key and what was
expected, exit code 2; notes (zero biases accepted, rounding of the score
scale, no self-test) go to stderr too.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from sinkcert import convert as conv  # noqa: E402  (after the path is set)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("state", help="STATE.npz, or STATE.pt / .pth (needs torch)")
    p.add_argument("out", nargs="?", default=None,
                   help="the sinkcert weight file to write (or --out)")
    p.add_argument("--out", dest="out_option", default=None, metavar="OUT",
                   help="the sinkcert weight file to write")
    p.add_argument("--layout", choices=conv.LAYOUTS, default="auto")
    p.add_argument("--map", default=None, help="JSON key map (with --layout map)")
    p.add_argument("--attention", choices=conv.ATTENTIONS, default="softmax")
    p.add_argument("--kind", choices=conv.KINDS, default=None)
    p.add_argument("--heads", type=int, default=None)
    p.add_argument("--score-scale", type=float, default=None,
                   help="multiply W_Q by this: 1 for unscaled scores, 1/sqrt(d_k) for scaled "
                        "dot-product (required unless the layout implies it)")
    p.add_argument("--L", type=int, default=None, help="task length, written as metadata")
    p.add_argument("--trigger-range", choices=conv.TRIGGER_RANGES, default=None)
    p.add_argument("--allow-pickle", action="store_true",
                   help="load a whole saved module (runs the pickle's code)")
    args = p.parse_intermixed_args(argv)
    if (args.out is None) == (args.out_option is None):
        p.error("the weight file to write: give it once, as OUT or --out OUT")
    args.out = args.out if args.out is not None else args.out_option
    try:
        if args.heads is not None and args.heads < 1:
            raise conv.ConvertError(f"command line: --heads: expected an integer >= 1, got "
                                    f"{args.heads}")
        if args.score_scale is not None and (not math.isfinite(args.score_scale) or
                                             args.score_scale == 0):
            raise conv.ConvertError("command line: --score-scale: expected a finite nonzero "
                                    f"number, got {args.score_scale}")
        if args.L is not None and args.L < 2:
            raise conv.ConvertError(f"command line: --L: expected an integer >= 2, got {args.L}")
        if (args.map is not None) != (args.layout == "map"):
            raise conv.ConvertError("command line: --map: expected exactly with --layout map")
        key_map = conv.read_key_map(args.map) if args.map is not None else None
        source = conv.load_source(args.state, allow_pickle=args.allow_pickle)
        result = conv.convert(source, layout=args.layout, attention=args.attention,
                              kind=args.kind, heads=args.heads, score_scale=args.score_scale,
                              L=args.L, trigger_range=args.trigger_range, key_map=key_map)
        conv.write_atomically(args.out, result.text)
    except conv.ConvertError as e:
        print(f"convert_pytorch: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"convert_pytorch: error: {args.out}: cannot write it ({e.strerror})",
              file=sys.stderr)
        return 2
    for note in result.notes:
        print(f"convert_pytorch: note: {note}", file=sys.stderr)
    test = result.self_test
    if test["ran"]:
        print(f"convert_pytorch: self-test: the module ({test['dtype']}) and the converted model "
              f"agree on {test['inputs']} task inputs of length L = {test['L']}: largest "
              f"difference {test['largest_difference']:.3e} [{test['evidence']}] <= tolerance "
              f"{test['tolerance']:.3e}")
    else:
        print("convert_pytorch: note: no module self-test ran (a state dict was converted, not a "
              "module: the head count, kind, score scale and attention kind are as declared)",
              file=sys.stderr)
    print(f"convert_pytorch: wrote {args.out} ({result.layout} layout, {result.layers} layer(s) x "
          f"{result.heads} head(s), n = {result.n}, score scale {result.score_scale!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
