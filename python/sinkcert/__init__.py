# SPDX-License-Identifier: MIT
"""sinkcert for Python: attention sinks in softmax transformers, checked.

A model is a sinkcert weight file: causal self-attention without positional
encoding, each head a score matrix A = W_Q^T W_K and a value-output matrix
M = W_O W_V, every entry an exact rational. Build one from PyTorch, numpy or
a file, then ask the same questions as the `sinkcert` program:

    import sinkcert
    m = sinkcert.Model.from_torch(module, L=16, score_scale=1.0)
    out = m.eval(X)                  # EvalResult: output, attention, error  NUMERIC(53)
    out = m.eval(Xs)                 # Xs: [B, L, n], every array with a leading batch axis
    p = m.probe()                    # BOS mass and sampled error over a probe set
    r = m.attack(seconds=5)          # AttackResult: worst input found       SEARCH(lower bound)
    b = m.bound(gap=0.01)            # BoundResult: lo <= E <= hi            CERTIFIED
    b = m.bound(claim=1e-3)          # VERIFIED / NOT VERIFIED (witness) / UNDECIDED
    s = m.bos_bound()                # min non-trigger BOS mass enclosed     CERTIFIED
    s = m.bos_bound(layer=1, head=0) # one head of a residual model          CERTIFIED
    c = m.check(seconds=60, out="runs/check")  # the model report and `sinkcert check`'s files

The task T(n, L): n is the model's; L and the trigger range come from the
call, else from the model (from_torch / from_numpy arguments, or the weight
file's metadata "task"), else it is an error (no silent default for L; the
trigger range defaults to "paper", j in 1..L-1).

Every number carries its evidence label (`evidence`: "EXACT", "CERTIFIED",
"NUMERIC(53)", "SEARCH(lower bound)", ...), and a verdict answers a claim
only: without a claim a bound is ENCLOSED (the requested gap was reached)
or NOT_ENCLOSED (it was not; the enclosure is still true).

Long calls (attack, bound, bos_bound, check) release the GIL and accept
`progress=callable`, called with one line of text now and then.

The conversion from PyTorch is sinkcert.convert (pure Python, usable
without the compiled extension; scripts/convert_pytorch.py is its command
line).
"""
import decimal
import enum
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

_DEBIAN_PACKAGES = {"numpy": "python3-numpy", "torch": "python3-torch",
                    "mpmath": "python3-mpmath"}


class MissingDependency(ImportError):
    """A module sinkcert needs is missing from this Python: the message is
    one line naming the interpreter to use instead."""


def _excepthook(previous):
    def hook(kind, value, tb):
        if isinstance(value, MissingDependency):
            print(value, file=sys.stderr)  # the one line, not a traceback
        else:
            previous(kind, value, tb)
    hook.sinkcert = True
    return hook


def _missing_dependency(module):
    system = "/usr/bin/python3"
    package = _DEBIAN_PACKAGES.get(module, "python3-" + module)
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    other = (not os.path.exists(system) or in_venv
             or os.path.realpath(sys.executable or "") != os.path.realpath(system))
    if other and os.path.exists(system):
        advice = (f"use {system} (Debian's, which scripts/build.sh set up) or install {module} "
                  f"into this Python")
    else:
        advice = f"install {module} (Debian: apt-get install {package})"
    # uncaught, it prints as this one line (a script, an example, python -c)
    if not getattr(sys.excepthook, "sinkcert", False):
        sys.excepthook = _excepthook(sys.excepthook)
    return MissingDependency(f"sinkcert: this Python ({sys.executable}) has no {module}; {advice}",
                             name=module)


def require(module):
    """Imports and returns `module` (e.g. "torch"); if this Python lacks it,
    raises MissingDependency, whose one line names the Python to use."""
    import importlib
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        raise _missing_dependency(module) from None


def _source_version():
    """The project version of the source tree's CMakeLists.txt (the package
    run from python/ without a build)."""
    import re
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                        "CMakeLists.txt")
    try:
        with open(path, encoding="utf-8") as f:
            m = re.search(r"project\(sinkcert\s+VERSION\s+([0-9.]+)", f.read())
    except OSError:
        m = None
    return m.group(1) if m else "unknown"


try:
    from ._version import __version__  # written by CMake from the project version
except ImportError:
    __version__ = _source_version()

np = require("numpy")

from . import convert

try:
    from . import _sinkcert as _ext
    _EXT_ERROR = None
except ImportError as _e:  # the pure-Python parts still work
    _ext = None
    _EXT_ERROR = _e

__all__ = ["__version__", "require", "MissingDependency", "Model", "Verdict", "EvalResult",
           "CertifiedEvalResult", "ReluResult", "AttackResult", "Witness", "BoundResult",
           "CheckResult", "ConvertError", "convert"]

ConvertError = convert.ConvertError


class Verdict(enum.Enum):
    """A checker's answer; the value is the word the reports print."""
    VERIFIED = "VERIFIED"
    NOT_VERIFIED = "NOT VERIFIED"
    UNDECIDED = "UNDECIDED"
    ENCLOSED = "ENCLOSED"
    NOT_ENCLOSED = "NOT ENCLOSED"
    NOT_APPLICABLE = "NOT APPLICABLE"

    def __str__(self):
        return self.value


@dataclass
class EvalResult:
    """One forward pass in double: f(X), the target y, every attention
    matrix (attention[layer][head], L x L, row i = a_i0 .. a_i(L-1)) and
    e(X) = max_{i,d} |f(X) - y| at (error_position, error_coordinate).
    For a batch X[B, L, n]: output and target [B, L, n], attention[layer][head]
    [B, L, L], and trigger, error, error_position, error_coordinate arrays of
    length B."""
    output: np.ndarray
    target: np.ndarray
    attention: List[List[np.ndarray]]
    trigger: Any  # int (one input) or an int array (a batch)
    error: Any  # float or a float array
    error_position: Any
    error_coordinate: Any
    target_kind: str
    evidence: str  # "NUMERIC(53)"


@dataclass
class CertifiedEvalResult:
    """One forward pass in MPFI at adaptive precision (sinkcert eval
    --certify): output_lo <= f(X) <= output_hi entrywise and error_lo <=
    e(X) <= error_hi (doubles rounded outward), at the lowest multiple of 64
    bits where e(X) and every non-trigger BOS deficit 1 - a_i0 certify
    `digits` relative digits (reached False when the 8192-bit cap came
    first). json holds every enclosure as an exact "[lo, hi]" string,
    including the BOS deficits per layer and head."""
    output_lo: np.ndarray
    output_hi: np.ndarray
    error_lo: float
    error_hi: float
    error_position: int
    error_coordinate: int
    trigger: int
    bits: int
    digits: int
    reached: bool
    evidence: str  # "CERTIFIED" (or with "fewer digits than requested")
    summary: str
    json: Dict[str, Any] = field(repr=False)

    def __str__(self):
        return self.summary


@dataclass
class ReluResult:
    """Theorem 3's exact checker (sinkcert verify relu): VERIFIED when the
    model's worst-case error is exactly 0 and its BOS attention is exactly 0
    over the whole content box; NOT_VERIFIED with an exact witness input
    (a box vertex) otherwise; NOT_APPLICABLE (with the reason) for a model
    that is not ReLU attention. margin is the exact max |error| as "p/q"."""
    verdict: Verdict
    evidence: str  # "EXACT"
    reason: str
    margin: str
    margin_value: float
    witness: Optional[np.ndarray]
    seconds: float
    summary: str
    json: Dict[str, Any] = field(repr=False)

    def __str__(self):
        return self.summary


@dataclass
class Witness:
    """An input the attack found: X (L x n), its trigger, the value there
    certified on the exact model (rounded in the bound's direction; NaN if
    it could not be certified) and in double, and where it is attained
    (position i; coordinate d for an error, head for a BOS mass)."""
    X: Optional[np.ndarray]
    trigger: int
    value: float
    value_double: float
    position: int
    coordinate: int
    layer: int
    certified_bits: int
    double_disagrees: bool


@dataclass
class AttackResult:
    """The strongest search for bad inputs. quantity "error": value is a
    lower bound on the worst-case error E; "min BOS mass": an upper bound on
    the smallest non-trigger BOS mass. Either way a SEARCH bound, certified
    at its witness."""
    quantity: str
    value: float
    witness: Optional[np.ndarray]
    best: Witness
    per_trigger: List[Witness]
    evidence: str
    evaluations: int
    rounds: int
    seconds: float
    summary: str
    json: Dict[str, Any] = field(repr=False)


@dataclass
class BoundResult:
    """A certified enclosure lo <= quantity <= hi over the whole content box
    (lo rounded down, hi rounded up; lo_exact and hi_exact are the exact
    decimal expansions of the checker's MPFR ends), with the witness input
    attaining lo (L x n, None if none), and the verdict: to the claim when
    one was given, else ENCLOSED / NOT_ENCLOSED (requested gap reached or
    not)."""
    quantity: str
    lo: float
    hi: float
    lo_exact: str
    hi_exact: str
    verdict: Verdict
    evidence: str
    claim: Optional[str]  # as written (a float claim: its repr)
    margin: Optional[float]
    relative_gap: float
    witness: Optional[np.ndarray]
    witness_trigger: int
    boxes: int
    seconds: float
    bits: int
    stop_reason: str
    summary: str
    details: Dict[str, Any] = field(repr=False, default_factory=dict)

    def __str__(self):
        return self.summary


@dataclass
class CheckResult:
    """The model report (check_model): its JSON document and summary. With
    out=DIR, `sinkcert check --out DIR`'s files written there (report.json,
    whose document `json` then is, with its provenance; report.md; the
    heat map attention_mean_std.png with its data and script; witness.json):
    `written` names them, `failures` the renders gnuplot could not make."""
    json: Dict[str, Any]
    summary: str
    markdown: str
    out: Optional[str] = None
    written: List[str] = field(default_factory=list)
    failures: List[str] = field(default_factory=list)

    def __str__(self):
        return self.summary


# What "solves the task" and "sinks" mean (docs/definitions.md, Definitions
# 7): E <= tolerance; BOS mass >= sink bar. The same defaults as the CLI's
# --tolerance and --sink-bar.
DEFAULT_TOLERANCE = "5e-3"
DEFAULT_SINK_BAR = "0.5"


def _decimal_text(name, x):
    """x as the decimal text the bars are parsed from exactly: a str or
    decimal.Decimal as written, an int, or a float by its shortest repr
    (0.005 -> "0.005", the decimal the float was written as)."""
    if isinstance(x, bool) or not isinstance(x, (str, int, float, decimal.Decimal)):
        raise ValueError(f"{name}: expected a decimal number (str, int, float or Decimal), "
                         f"got {type(x).__name__}")
    return x if isinstance(x, str) else (repr(x) if isinstance(x, float) else str(x))


def _need_extension():
    if _ext is None:
        raise ImportError(
            f"sinkcert: the compiled extension (_sinkcert) does not load in this Python "
            f"({sys.executable}, {sys.version.split()[0]}): it is built for /usr/bin/python3 by "
            f"scripts/build.sh --python (or pip install ./python for this one) ({_EXT_ERROR})")


def _witness(d):
    return Witness(X=d["X"], trigger=d["trigger"], value=d["value"],
                   value_double=d["value_double"], position=d["position"],
                   coordinate=d["coordinate"], layer=d["layer"],
                   certified_bits=d["certified_bits"], double_disagrees=d["double_disagrees"])


def _claim(claim):
    # a str is an exact decimal, kept as written; a number the decimal of its repr
    return claim if claim is None or isinstance(claim, str) else float(claim)


def _bound_result(d):
    details = {k: v for k, v in d.items() if k not in (
        "quantity", "lo", "hi", "verdict", "evidence", "claim", "margin", "relative_gap",
        "witness", "witness_trigger", "boxes", "seconds", "bits", "stop_reason", "summary")}
    return BoundResult(quantity=d["quantity"], lo=d["lo"]["value"], hi=d["hi"]["value"],
                       lo_exact=d["lo"]["exact"], hi_exact=d["hi"]["exact"],
                       verdict=Verdict(d["verdict"]), evidence=d["evidence"], claim=d["claim"],
                       margin=d["margin"], relative_gap=d["relative_gap"], witness=d["witness"],
                       witness_trigger=d["witness_trigger"], boxes=d["boxes"],
                       seconds=d["seconds"], bits=d["bits"], stop_reason=d["stop_reason"],
                       summary=d["summary"], details=details)


def _head_text(name, m):
    a = np.asarray(m, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite entries, got NaN or infinity")
    return convert._matrix_text(a)


class Model:
    """A sinkcert model: the exact model a weight file denotes, with a
    default task (L, trigger range) for the calls that need one."""

    def __init__(self, weights, L=None, trigger_range=None, notes=()):
        """Use the from_* constructors."""
        self._w = weights
        task = {}
        meta = weights.metadata
        if isinstance(meta, dict) and isinstance(meta.get("task"), dict):
            task = meta["task"]
        if weights.task is not None:  # the file's own "task" first
            task = {**task, **weights.task}
        self.L = L if L is not None else task.get("L")
        self.trigger_range = (trigger_range if trigger_range is not None
                              else task.get("trigger_range", "paper"))
        self.notes = list(notes)

    # --- constructors -----------------------------------------------------

    @classmethod
    def from_file(cls, path, L=None, trigger_range=None):
        """A weight file (sinkcert-weights JSON)."""
        _need_extension()
        return cls(_ext.WeightFile.read(str(path)), L, trigger_range)

    @classmethod
    def from_text(cls, text, name="(text)", L=None, trigger_range=None):
        """A weight file's text; `name` names it in errors."""
        _need_extension()
        return cls(_ext.WeightFile.from_text(text, name), L, trigger_range)

    @classmethod
    def from_torch(cls, module_or_state_dict, layout="auto", L=None, trigger_range=None,
                   score_scale=None, attention=None, heads=None, kind=None, key_map=None,
                   name=None, allow_pickle=False, forward=None):
        """An nn.Module, a state dict, or a path to a .pt/.pth/.npz file,
        through sinkcert.convert (see its docstring for the layouts, what
        is refused and why score_scale is required unless the layout
        implies it) and the C++ reader. attention defaults to "softmax";
        L and trigger_range become the model's default task and are written
        into the file's metadata. A path to a whole saved module loads only
        with allow_pickle=True (unpickling runs code: files you trust).

        Given a module (not only its state dict), the module itself and the
        converted model are run on task inputs of length L (8 when L is not
        given: every trigger position, random contents and box vertices),
        and a ConvertError naming the largest difference is raised when
        they differ beyond the rounding of the module's dtype. The module is
        called as forward(module, X) when given (X: a B x L x n tensor in
        the module's dtype, returning f(X) of the same shape); else an
        nn.MultiheadAttention as causal self-attention, any other module on
        the batch or on each sequence. The self-test's tolerance, inputs and
        largest difference are in metadata["self_test"] ("ran": False for a
        state dict). The conversion's notes (zero biases accepted, rounding
        of the score scale) are in `notes`."""
        if isinstance(module_or_state_dict, str):
            source = convert.load_source(module_or_state_dict, allow_pickle=allow_pickle)
        else:
            source = convert.from_torch_object(
                module_or_state_dict, name or type(module_or_state_dict).__name__)
        result = convert.convert(source, layout=layout, attention=attention or "softmax",
                                 kind=kind, heads=heads, score_scale=score_scale, L=L,
                                 trigger_range=trigger_range, key_map=key_map, forward=forward)
        _need_extension()
        return cls(_ext.WeightFile.from_text(result.text, source.name), L, trigger_range,
                   result.notes)

    @classmethod
    def from_numpy(cls, heads, attention="softmax", kind=None, L=None, trigger_range=None):
        """A model from numpy matrices, taken as exact float64 values, in
        the file's form y = W x (rows = outputs), no score scale:

        heads: one head (a dict), one layer (a list of dicts), or layers
        (a list of lists of dicts, every layer the same head count). A head
        is {"W_Q", "W_K" (d_k x n), "W_V" (d_v x n), "W_O" (n x d_v)} or
        {"A", "M"} (n x n: s_ik = x_i^T A x_k, o_i = M sum_k a_ik x_k),
        plus "gate" (W_g, n x n) for attention "gated".
        kind defaults to single-layer for one layer, residual otherwise."""
        if isinstance(heads, dict):
            layers = [[heads]]
        elif isinstance(heads, (list, tuple)) and heads and all(isinstance(h, dict)
                                                                 for h in heads):
            layers = [list(heads)]
        elif isinstance(heads, (list, tuple)) and heads and all(
                isinstance(l, (list, tuple)) and l and all(isinstance(h, dict) for h in l)
                for l in heads):
            layers = [list(l) for l in heads]
        else:
            raise ValueError("heads: expected a dict of matrices, a list of them (one layer) or "
                             "a list of lists (layers of heads)")
        if kind is None:
            kind = "single-layer" if len(layers) == 1 else "residual"
        first = layers[0][0]
        some = first.get("W_Q", first.get("A"))
        if some is None:
            raise ValueError("heads[0][0]: expected W_Q, W_K, W_V, W_O or A, M")
        n = np.shape(some)[1]
        allowed = ({"W_Q", "W_K", "W_V", "W_O"}, {"A", "M"})
        rows = []
        for l, layer in enumerate(layers):
            if len(layer) != len(layers[0]):
                raise ValueError(f"heads[{l}]: expected {len(layers[0])} heads like layer 0")
            texts = []
            for h, head in enumerate(layer):
                keys = set(head) - {"gate"}
                if keys not in allowed:
                    raise ValueError(f"heads[{l}][{h}]: expected the keys W_Q, W_K, W_V, W_O or "
                                     f"A, M (and gate), got {sorted(head)}")
                order = ["W_Q", "W_K", "W_V", "W_O"] if "W_Q" in keys else ["A", "M"]
                if "gate" in head:
                    order.append("gate")
                texts.append("{" + ", ".join(
                    f'"{k}": {_head_text(f"heads[{l}][{h}].{k}", head[k])}' for k in order) + "}")
            rows.append("[" + ", ".join(texts) + "]")
        task = {}
        if L is not None:
            task["L"] = int(L)
        if trigger_range is not None:
            task["trigger_range"] = trigger_range
        meta = {"converter": "sinkcert.Model.from_numpy"}
        import json
        # the task in the file's own "task" (what save() writes and from_file reads back)
        task_member = f'"task": {json.dumps(task)}, ' if task else ""
        text = ('{"format": "sinkcert-weights", "version": 1, '
                f'"kind": {json.dumps(kind)}, "attention": {json.dumps(attention)}, '
                f'"n": {n}, "layers": {len(layers)}, "heads": {len(layers[0])}, {task_member}'
                f'"weights": [{", ".join(rows)}], "metadata": {json.dumps(meta)}}}')
        _need_extension()
        return cls(_ext.WeightFile.from_text(text, "(numpy)"), L, trigger_range)

    # --- what it is -------------------------------------------------------

    @property
    def n(self):
        return self._w.n

    @property
    def kind(self):
        return self._w.kind

    @property
    def attention(self):
        return self._w.attention

    @property
    def layers(self):
        return self._w.layers

    @property
    def heads(self):
        return self._w.heads

    @property
    def metadata(self):
        return self._w.metadata

    def weight_file_text(self):
        """The weight file (every entry its exact decimal expansion)."""
        return self._w.text()

    def save(self, path):
        """Writes the weight file atomically."""
        convert.write_atomically(str(path), self._w.text())

    def __repr__(self):
        return f"sinkcert.Model({self._w.describe()}, L={self.L}, " \
               f"trigger_range={self.trigger_range!r})"

    def _task(self, L, trigger_range):
        L = L if L is not None else self.L
        if L is None:
            raise ValueError("L: required (the model has no default task length; pass L=...)")
        return int(L), trigger_range if trigger_range is not None else self.trigger_range

    # --- calls ------------------------------------------------------------

    def eval(self, X, certify=None):
        """f(X) on one task input X (L x n: BOS row, one trigger, content
        in [-1, 1]), in double: NUMERIC(53); on a batch X (B x L x n) one
        EvalResult whose arrays have a leading batch axis. A weight entry
        or a value that is NaN or infinite in double is a ValueError naming
        it (the CLI exits 5 there), never a silent error = nan. With
        certify=DIGITS (one input), MPFI enclosures instead
        (CertifiedEvalResult, CERTIFIED), at the precision where e(X) and
        every BOS deficit have DIGITS digits."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        if certify is not None:
            if X.ndim != 2:
                raise ValueError(f"X: certify takes one input (L x n), got shape {X.shape}")
            d = self._w.eval_certified(X, int(certify))
            return CertifiedEvalResult(**d)
        if X.ndim == 3:
            if X.shape[0] == 0:
                raise ValueError("X: expected a batch of at least one input, got shape "
                                 f"{X.shape}")
            rows = []
            for b in range(X.shape[0]):
                try:
                    rows.append(self._w.eval(X[b]))
                except ValueError as e:
                    raise ValueError(f"X[{b}]: {e}") from None
            first = rows[0]
            return EvalResult(
                output=np.stack([r["output"] for r in rows]),
                target=np.stack([r["target"] for r in rows]),
                attention=[[np.stack([r["attention"][l][h] for r in rows])
                            for h in range(len(first["attention"][l]))]
                           for l in range(len(first["attention"]))],
                trigger=np.array([r["trigger"] for r in rows]),
                error=np.array([r["error"] for r in rows]),
                error_position=np.array([r["error_position"] for r in rows]),
                error_coordinate=np.array([r["error_coordinate"] for r in rows]),
                target_kind=first["target_kind"], evidence=first["evidence"])
        if X.ndim != 2:
            raise ValueError(f"X: expected one input (L x n) or a batch (B x L x n), got shape "
                             f"{X.shape}")
        return EvalResult(**self._w.eval(X))

    def verify_relu(self, L=None, trigger_range=None):
        """Theorem 3's exact check over the whole content box (ReluResult,
        EXACT); NOT_APPLICABLE for attention other than ReLU."""
        L, rng = self._task(L, trigger_range)
        d = self._w.verify_relu(L, rng)
        d["verdict"] = Verdict(d["verdict"])
        return ReluResult(**d)

    def probe(self, samples=1000, seed=None, fixed_trigger=None, L=None, trigger_range=None):
        """BOS-mass statistics a_i0 (non-trigger i >= 1, per layer, head and
        position: min, mean, quantiles) and the sampled error over a probe
        set of task inputs (sinkcert eval --samples), NUMERIC(53): the
        sampled error is a lower bound on the worst case, not an upper one.
        seed: the documented probe seed by default; fixed_trigger: the
        paper's figure fixes the trigger at 0-indexed 7. Returns the JSON
        document of `sinkcert eval --samples --json` as a dict."""
        L, rng = self._task(L, trigger_range)
        seed = _ext.WeightFile.default_probe_seed if seed is None else int(seed)
        return self._w.probe(L, rng, int(samples), seed, fixed_trigger)["json"]

    def attack(self, seconds=0.0, seed=0, L=None, trigger_range=None, bos=False,
               progress: Optional[Callable[[str], None]] = None):
        """The attack (sinkcert attack): with seconds = 0 one reproducible
        round, else rounds until the budget is spent. bos=True minimizes
        the non-trigger BOS mass instead of maximizing the error."""
        L, rng = self._task(L, trigger_range)
        d = self._w.attack(L, rng, int(seed), float(seconds), bool(bos), progress)
        best = _witness(d["best"])
        return AttackResult(quantity=d["quantity"], value=best.value, witness=best.X, best=best,
                            per_trigger=[_witness(w) for w in d["per_trigger"]],
                            evidence=d["evidence"], evaluations=d["evaluations"],
                            rounds=d["rounds"], seconds=d["seconds"], summary=d["summary"],
                            json=d["json"])

    def bound(self, seconds=60.0, gap=0.01, claim=None, L=None, trigger_range=None,
              boxes=200000, bits=128, tolerance=DEFAULT_TOLERANCE,
              progress: Optional[Callable[[str], None]] = None):
        """The certified worst-case error E over the whole content box
        (sinkcert verify bound): lo <= E <= hi to the relative gap, or with
        claim whether E <= claim (VERIFIED / NOT_VERIFIED with a witness /
        UNDECIDED). claim: a float, or a str compared as the exact decimal
        it writes ("0.1" is 1/10, not the double nearest it).
        details["meaning"]: whether the model solves the task, E <= tolerance
        (verify bound --tolerance; a decimal, see DEFAULT_TOLERANCE)."""
        L, rng = self._task(L, trigger_range)
        return _bound_result(self._w.bound(L, rng, _claim(claim),
                                           float(gap), float(seconds), int(boxes), int(bits),
                                           _decimal_text("tolerance", tolerance), progress))

    def bos_bound(self, seconds=60.0, gap=0.01, claim=None, max=False, layer=None, head=None,
                  L=None, trigger_range=None, boxes=200000, bits=128, sink_bar=DEFAULT_SINK_BAR,
                  progress: Optional[Callable[[str], None]] = None):
        """The certified smallest non-trigger BOS mass over the whole box
        (sinkcert verify bos), enclosed (quantity "min BOS mass"), or with
        claim whether min BOS >= claim; with max=True the largest one (a BOS
        cap), or whether max BOS <= claim. layer, head: None every one.
        details["meaning"]: whether it sinks, min BOS >= sink_bar (verify
        bos --sink-bar; a decimal, see DEFAULT_SINK_BAR).

        A residual model (theorems/bounds/deep_bos_bound.h) as `verify bos
        --layer --head`: with layer and head, that head's enclosure (and
        claim); otherwise every selected head enclosed within one shared
        budget, lo and hi then enclosing the min (max=True: the max) over
        them, each head's own result in details["heads"]. A claim on a
        residual model needs layer and head (it is about one head)."""
        L, rng = self._task(L, trigger_range)
        return _bound_result(self._w.bos_bound(L, rng, _claim(claim),
                                               bool(max), -1 if layer is None else int(layer),
                                               -1 if head is None else int(head), float(gap),
                                               float(seconds), int(boxes), int(bits),
                                               _decimal_text("sink_bar", sink_bar), progress))

    def check(self, seconds=60.0, seed=0, threads=0, L=None, trigger_range=None, out=None,
              tolerance=DEFAULT_TOLERANCE, sink_bar=DEFAULT_SINK_BAR,
              progress: Optional[Callable[[str], None]] = None):
        """The model report (theorems/reports/model_check.h, check_model),
        "solves" and "sinks" against tolerance and sink_bar (check
        --tolerance, --sink-bar; decimals): json["conclusion"]["solves_text"]
        and ["sinks_text"]; with out=DIR, `sinkcert check --out DIR`'s files
        written into DIR by the same library function
        (theorems/reports/check_files.h; outside results/).
        NotImplementedError when this build does not have the report."""
        _need_extension()
        if not getattr(_ext, "HAVE_CHECK", False):
            raise NotImplementedError("Model.check: this build of sinkcert has no model check "
                                      "(theorems/reports/model_check.h)")
        L, rng = self._task(L, trigger_range)
        d = _ext.check(self._w, L, rng, float(seconds), int(seed), int(threads),
                       _decimal_text("tolerance", tolerance), _decimal_text("sink_bar", sink_bar),
                       None if out is None else os.fspath(out), progress)
        return CheckResult(json=d["json"], summary=d["summary"], markdown=d["markdown"],
                           out=d["out"], written=list(d["written"]),
                           failures=list(d["failures"]))
