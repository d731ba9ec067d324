# SPDX-License-Identifier: MIT
"""The Python quickstart of README.md and docs/pytorch.md, run as written.

Each page's first ```python block is executed with `module` bound to a
causal nn.MultiheadAttention model at n = 5 (L = 16 as the snippet says is
too slow for a test, so L=16 becomes L=4 and seconds=60 becomes seconds=3;
nothing else of the text changes). A snippet that calls something the
package does not have (a method that is an attribute, a renamed keyword)
fails here before a reader meets it.
"""
import contextlib
import io
import os
import re

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def first_python_block(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"```python\n(.*?)```", text, re.S)
    assert m, f"{page}: no ```python block"
    return m.group(1)


@pytest.mark.parametrize("page", ["README.md", "docs/pytorch.md"])
def test_quickstart_runs_as_written(page):
    code = first_python_block(page)
    assert "L=16" in code and "seconds=60" in code, f"{page}: the snippet changed; update this test"
    code = code.replace("L=16", "L=4").replace("seconds=60", "seconds=3")
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(embed_dim=5, num_heads=1, bias=False).double()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, page, "exec"), {"module": module})
    printed = out.getvalue()
    # the one-screen summary: the worst-case loss line with its evidence label
    assert "worst-case loss E:" in printed and "[CERTIFIED" in printed, printed
