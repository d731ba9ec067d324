#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Train attention models by the paper's PyTorch recipe (float32, torch):
single-layer single-head ones and residual 2 x 2 ones; convert them to
sinkcert weight files, and check the conversion against a float64 torch
forward.

Model (the fused layout of the paper's code, H = 1 head of width n):
nn.Linear weights W_Q, W_K, W_V of shape (H n) x n and W_O of shape
n x (H n), no biases. For a batch X (B, L, n), causal, no 1/sqrt(d):
  Q = X W_Q^T,  K = X W_K^T,  V = X W_V^T,  S_ik = Q_i . K_k  (k <= i)
  softmax: P_ik = exp(S_ik) / sum_{m<=i} exp(S_im)
  relu:    P_ik = max(S_ik, 0) / max(i, 1)   (sinkcert's `relu`, src/attention.h:
           row i divides by the number of non-BOS positions it sees, row 0 by 1)
  f(X) = (P V) W_O^T.
Residual models (the paper's multi-layer form): blocks.0, blocks.1 of H = 2 heads
of width n in the fused layout (W_Q, W_K, W_V (H n) x n, head h in rows
h n .. (h+1) n - 1; W_O n x (H n)), x^(l+1) = x^(l) + blocks[l](x^(l)), output the
last stream; lr 1e-4 (the recipe's rate for more than one layer).
Target (single layer): y_i = 0 for i != j, y_j = (1/j) sum_{k=1..j} x_k;
residual: y = x plus that.
Loss l = mean((f(X) - Y)^2); Adam, betas (0.9, 0.95), eps 1e-8, lr 1e-3,
batch 128; a fresh batch per step: content uniform in [-1, 1)
(torch.rand * 2 - 1), trigger uniform over the convention's range
(paper: 1..L-1, reference-code: 2..L-1). Stop when one batch has
max |f(X) - Y| < 5e-3 (measured before that step's update) or after
--max-steps steps. Init: every entry normal(0, 0.02); the "content" models
draw the entries of every matrix whose row and column are both content
coordinates (2..n-2 within each head block) from normal(0, 0.2) instead
(an init choice; training then runs as for the others).

The fifteen models (n = L = 16):
  softmax_s{0..4}, relu_s{0..4}: seeds 0, 1, 2 reference-code, 3, 4 paper;
  softmax_content_s5 (paper), softmax_content_s6 (reference-code);
  softmax_2x2_s7, softmax_2x2_s8: residual 2 x 2, paper;
  softmax_4x4_s9: residual 4 x 4, paper.
Reproducible: torch.manual_seed(seed), deterministic algorithms, one thread.

Output: OUT/<name>.pt (state dict), OUT/<name>.weights.json (by
scripts/convert_pytorch.py with --layout fused --score-scale 1 --L --trigger-range),
OUT/README.md (one line per model). With --sinkcert BIN, each file is also
evaluated by `BIN eval --input` on a few sampled inputs and compared with the
torch forward in float64 on the float32 weights: relative difference
max|f_sinkcert - f_torch64| / max(max|f_torch64|, 1e-300) <= 1e-12 (two
double evaluations of the same model in different orders; the file stores
the float32 values exactly).

  /usr/bin/python3 scripts/train_pytorch_models.py --out DIR [--sinkcert build/sinkcert]
      [--only NAME ...] [--max-steps 20000] [--reuse] [--n 16] [--L 16]
--n and --L train the same recipe at another token dimension and sequence
length (the committed models are n = L = 16; larger ones measure the
attack's cost, docs/benchmarks.md).
--reuse loads the models already in OUT (their .pt and .train.json) instead of
training them again (the same seed gives the same model).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

N = 16
L = 16
BATCH = 128
LR = 1e-3
STOP_LINF = 5e-3
INIT_STD = 0.02
CONTENT_STD = 0.2
# Two double evaluations of one model (sinkcert's and torch float64) differ
# by rounding only: a few ulps of the largest terms, far below 1e-12.
CONVERSION_TOLERANCE = 1e-12
CHECK_SAMPLES = 3  # sampled inputs per model in the conversion check
PROGRESS_SECONDS = 10  # a progress line on stderr at most this often while training

# (name, attention, seed, trigger range, content init, layers, heads)
MODELS = ([(f"softmax_s{s}", "softmax", s, "reference-code" if s < 3 else "paper", False, 1, 1)
           for s in range(5)] +
          [(f"relu_s{s}", "relu", s, "reference-code" if s < 3 else "paper", False, 1, 1)
           for s in range(5)] +
          [("softmax_content_s5", "softmax", 5, "paper", True, 1, 1),
           ("softmax_content_s6", "softmax", 6, "reference-code", True, 1, 1)] +
          [(f"softmax_2x2_s{s}", "softmax", s, "paper", False, 2, 2) for s in (7, 8)] +
          [("softmax_4x4_s9", "softmax", 9, "paper", False, 4, 4)])
# Adam's learning rate for residual models of more than one layer (the
# paper's recipe as sinkcert's search/paper_recipe.h runs it)
DEEP_LR = 1e-4


README_TEXT = f"""# Models trained by the paper's PyTorch recipe

Single layer, single head, and residual 2 x 2 (`softmax_2x2_*`) and 4 x 4
(`softmax_4x4_*`), n = L = {N},
written by `scripts/train_pytorch_models.py`
(its docstring gives the recipe: fused layout, causal attention without
1/sqrt(d) scaling, MSE loss, Adam betas (0.9, 0.95), eps 1e-8, lr {LR:g}
(residual: {DEEP_LR:g}, residual target),
batch {BATCH}, stop at batch l_inf < {STOP_LINF:g}) and converted by
`scripts/convert_pytorch.py --layout fused --score-scale 1`. Each
`<model>.weights.json` denotes exactly the float32 weights torch trained;
`<model>.train.json` records the run. `steps` counts optimizer steps; the
final batch l_inf is that of the batch that met the stop rule (measured
before an update), NUMERIC(24) (float32). The `content` models draw the
content block (rows and columns 2..n-2) of every matrix from normal(0,
{CONTENT_STD:g}) at init instead of normal(0, {INIT_STD:g}); the column
`content std` shows that their scores still read the content after
training. The last column, when present, is the largest relative
difference between `sinkcert eval` and a float64 torch forward of the
float32 weights over {CHECK_SAMPLES} sampled inputs (tolerance {CONVERSION_TOLERANCE:g}).

"""


class Attention(torch.nn.Module):
    """One layer of H heads of width n, fused layout of the paper's code:
    W_Q, W_K, W_V of shape (H n) x n, W_O of shape n x (H n); head h reads
    rows h n .. (h+1) n - 1 of W_Q, W_K, W_V and those columns of W_O."""

    def __init__(self, n, attention, heads=1):
        super().__init__()
        self.attention = attention
        self.heads = heads
        self.W_Q = torch.nn.Linear(n, heads * n, bias=False)
        self.W_K = torch.nn.Linear(n, heads * n, bias=False)
        self.W_V = torch.nn.Linear(n, heads * n, bias=False)
        self.W_O = torch.nn.Linear(heads * n, n, bias=False)

    def forward(self, x):
        Lx, n = x.shape[-2], x.shape[-1]
        # (..., L, H n) -> (..., H, L, n)
        split = lambda t: t.reshape(*t.shape[:-1], self.heads, n).transpose(-2, -3)
        q, k, v = split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x))
        # S^h_ik = Q^h_i . K^h_k, causal, no scaling
        s = q @ k.transpose(-1, -2)
        mask = torch.tril(torch.ones(Lx, Lx, dtype=torch.bool))
        if self.attention == "softmax":
            p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        else:
            # P_ik = max(S_ik, 0) / max(i, 1)
            div = torch.clamp(torch.arange(Lx, dtype=x.dtype), min=1).unsqueeze(-1)
            p = torch.relu(s).masked_fill(~mask, 0.0) / div
        # sum_h W_O^h (P^h V^h): the heads side by side, then W_O
        o = (p @ v).transpose(-2, -3)
        return self.W_O(o.reshape(*o.shape[:-2], self.heads * n))


class Residual(torch.nn.Module):
    """Layers blocks.0, blocks.1, ... of Attention with the residual stream
    x^(l+1) = x^(l) + blocks[l](x^(l)); the output is the last stream."""

    def __init__(self, n, attention, layers, heads):
        super().__init__()
        self.attention = attention
        self.layers, self.heads = layers, heads
        self.blocks = torch.nn.ModuleList(Attention(n, attention, heads) for _ in range(layers))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x


def make_model(attention, layers, heads):
    return (Attention(N, attention) if layers == 1 and heads == 1
            else Residual(N, attention, layers, heads))


def linears(model):
    if isinstance(model, Residual):
        return [lin for b in model.blocks for lin in (b.W_Q, b.W_K, b.W_V, b.W_O)]
    return [model.W_Q, model.W_K, model.W_V, model.W_O]


def trigger_range(convention):
    return (1 if convention == "paper" else 2, L - 1)


def sample_batch(gen, convention, batch=BATCH, dtype=torch.float32, residual=False):
    lo, hi = trigger_range(convention)
    X = torch.zeros(batch, L, N, dtype=dtype)
    X[:, 0, 0] = 1.0
    # content uniform in [-1, 1)
    X[:, 1:, 2:N - 1] = torch.rand(batch, L - 1, N - 3, generator=gen, dtype=dtype) * 2 - 1
    j = torch.randint(lo, hi + 1, (batch,), generator=gen)
    X[:, 1:, N - 1] = 1.0
    rows = torch.arange(batch)
    X[rows, j, N - 1] = 0.0
    X[rows, j, 1] = 1.0
    # y_j = (1/j) sum_{k=1..j} x_k, y_i = 0 otherwise; residual: y = x + that
    Y = X.clone() if residual else torch.zeros_like(X)
    csum = torch.cumsum(X[:, 1:, :], dim=1)
    Y[rows, j, :] += csum[rows, j - 1, :] / j.unsqueeze(-1).to(dtype)
    return X, Y, j


def init_model(model, seed, content):
    torch.manual_seed(seed)
    with torch.no_grad():
        for lin in linears(model):
            lin.weight.normal_(0.0, INIT_STD)
        if content:
            for lin in linears(model):
                lin.weight[2:N - 1, 2:N - 1].normal_(0.0, CONTENT_STD)


def train(name, attention, seed, convention, content, max_steps, layers=1, heads=1):
    torch.manual_seed(seed)
    model = make_model(attention, layers, heads)
    init_model(model, seed, content)
    gen = torch.Generator().manual_seed(seed)
    residual = isinstance(model, Residual)
    opt = torch.optim.Adam(model.parameters(), lr=DEEP_LR if layers > 1 else LR,
                           betas=(0.9, 0.95), eps=1e-8)
    start = time.time()
    said = start
    steps, linf = 0, float("inf")
    while steps < max_steps:
        X, Y, _ = sample_batch(gen, convention, residual=residual)
        out = model(X)
        r = out - Y
        linf = r.abs().max().item()
        if linf < STOP_LINF:
            break
        if time.time() - said >= PROGRESS_SECONDS:
            said = time.time()
            print(f"{name}: step {steps}, batch l_inf {linf:.3e}, {said - start:.0f} s",
                  file=sys.stderr, flush=True)
        loss = torch.mean(r * r)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    return model, steps, linf, time.time() - start


def forward64(model, X):
    """The torch forward in float64 on the float32 weights (widened exactly)."""
    m64 = (Residual(N, model.attention, model.layers, model.heads)
           if isinstance(model, Residual) else Attention(N, model.attention))
    m64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    m64 = m64.double()
    with torch.no_grad():
        return m64(X.double())


def check_conversion(model, convention, weights, sinkcert, samples=None):
    samples = samples or CHECK_SAMPLES
    gen = torch.Generator().manual_seed(12345)
    worst = 0.0
    for _ in range(samples):
        X, _, _ = sample_batch(gen, convention, batch=1, dtype=torch.float64)
        ref = forward64(model, X)[0]
        with tempfile.TemporaryDirectory() as tmp:
            xpath = os.path.join(tmp, "X.json")
            with open(xpath, "w") as f:
                json.dump({"format": "sinkcert-input", "version": 1,
                           "tokens": X[0].tolist()}, f)
            res = json.loads(subprocess.run(
                [sinkcert, "eval", "--weights", weights, "--input", xpath, "--json"],
                check=True, capture_output=True, text=True).stdout)
        got = torch.tensor(res["output"], dtype=torch.float64)
        # relative difference to the largest output entry
        rel = ((got - ref).abs().max() / max(ref.abs().max().item(), 1e-300)).item()
        worst = max(worst, rel)
    return worst


def main(argv):
    global N, L
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--sinkcert", default=None)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--max-steps", type=int, default=20000)
    p.add_argument("--reuse", action="store_true",
                   help="load OUT/<name>.pt and .train.json when present instead of training")
    p.add_argument("--n", type=int, default=N, help="token dimension (default 16)")
    p.add_argument("--L", type=int, default=L, help="sequence length (default 16)")
    args = p.parse_args(argv)
    N, L = args.n, args.L
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    # the command as the README shows it: the output folder as DIR, --reuse dropped
    # (it reloads the same models)
    shown = ["--out", "DIR"] + (["--sinkcert", "build/sinkcert"] if args.sinkcert else []) + \
        (["--only"] + args.only if args.only else []) + \
        (["--max-steps", str(args.max_steps)] if args.max_steps != 20000 else []) + \
        (["--n", str(N)] if N != 16 else []) + (["--L", str(L)] if L != 16 else [])
    command = "/usr/bin/python3 scripts/train_pytorch_models.py " + " ".join(shown)
    lines = []
    failed = False
    for name, attention, seed, convention, content, layers, heads in MODELS:
        if args.only and name not in args.only:
            continue
        pt = os.path.join(args.out, f"{name}.pt")
        info_path = os.path.join(args.out, f"{name}.train.json")
        if args.reuse and os.path.exists(pt) and os.path.exists(info_path):
            model = make_model(attention, layers, heads)
            model.load_state_dict(torch.load(pt))
            with open(info_path) as f:
                info = json.load(f)
            steps, linf, secs = info["steps"], info["final_batch_linf"], info["seconds"]
        else:
            model, steps, linf, secs = train(name, attention, seed, convention, content,
                                             args.max_steps, layers, heads)
            torch.save(model.state_dict(), pt)
            with open(info_path, "w") as f:
                json.dump({"name": name, "attention": attention, "seed": seed,
                           "layers": layers, "heads": heads,
                           "trigger_range": convention, "content_init": content,
                           "steps": steps, "final_batch_linf": linf, "seconds": secs,
                           "max_steps": args.max_steps}, f, indent=1)
        weights = os.path.join(args.out, f"{name}.weights.json")
        subprocess.run([sys.executable, os.path.join(here, "convert_pytorch.py"), pt, weights,
                        "--layout", "fused", "--attention", attention, "--score-scale", "1",
                        "--L", str(L), "--trigger-range", convention], check=True,
                       stdout=subprocess.DEVNULL)
        # std of the content block (rows and columns 2..n-2) of W_Q and W_K after training:
        # how much the scores read the content
        first = model.blocks[0] if isinstance(model, Residual) else model
        qk_std = "/".join(f"{lin.weight.detach()[2:N - 1, 2:N - 1].double().std().item():.3f}"
                          for lin in (first.W_Q, first.W_K))
        stopped = "stop rule" if linf < STOP_LINF else f"step cap {args.max_steps}"
        init = (f"init normal std {INIT_STD}, content block std {CONTENT_STD}" if content
                else f"init normal std {INIT_STD}")
        line = (f"| {name} | {attention} {layers} x {heads} | {convention} | {seed} | {steps} | "
                f"{linf:.3e} | "
                f"{stopped} | {init} | {qk_std} |")
        if args.sinkcert:
            rel = check_conversion(model, convention, weights, args.sinkcert)
            ok = rel <= CONVERSION_TOLERANCE
            failed |= not ok
            line += f" {rel:.1e} |"
        lines.append(line)
        print(f"{name}: {attention} {convention} seed {seed}: {steps} steps ({secs:.1f} s), "
              f"final batch l_inf {linf:.3e} ({stopped})" +
              (f", sinkcert eval vs torch float64: {rel:.1e} relative" if args.sinkcert else ""),
              flush=True)
    header = ("| model | attention | trigger range | seed | steps | final batch l_inf | stopped by "
              "| init | content std W_Q/W_K trained |" +
              (" eval vs torch64 (rel.) |" if args.sinkcert else ""))
    sep = "|" + "|".join("---" for _ in range(header.count("|") - 1)) + "|"
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(README_TEXT.replace("n = L = 16", f"n = {N}, L = {L}"))
        f.write(f"Command: `{command}` (torch {torch.__version__}, float32, one thread)"
                + ("; conversion checked with `sinkcert eval`" if args.sinkcert else "")
                + ".\n\n")
        f.write(header + "\n" + sep + "\n" + "\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
