"""The main README's Python example runs as written."""

from __future__ import annotations

import os
import re

from conftest import ROOT


def test_the_readme_example_runs(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    here = os.getcwd()
    os.chdir(ROOT)  # the example scans examples/docs
    try:
        exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(here)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "['install.md']"
    assert out[-1] == "['a', 'c']"
