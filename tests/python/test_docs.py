"""Every ```python example of docs/python.md runs (in order, in one namespace, from the
repository root), so the documentation cannot drift from the module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

DOC = REPO / "docs" / "python.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_docs_have_an_example_per_function() -> None:
    text = "\n".join(blocks())
    for call in ("pipelens.Config(", "pipelens.run(", ".save(", ".plot(", "pipelens.gantt(",
                 "pipelens.schedule(", "pipelens.delays(", "pipelens.sweep(",
                 "pipelens.reproduce(", ".replace(", "Config.default("):
        assert call in text, f"docs/python.md has no example of {call}"


def test_docs_examples_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    for i, code in enumerate(blocks()):
        try:
            exec(compile(code, f"docs/python.md block {i + 1}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - the failing block is named
            raise AssertionError(f"docs/python.md block {i + 1} failed: {e!r}\n{code}") from e
    import matplotlib.pyplot as plt

    plt.close("all")
