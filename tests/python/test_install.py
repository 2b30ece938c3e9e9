"""`cmake --install build --component python` gives an importable package (staged with DESTDIR,
so the test leaves the user's site-packages alone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_install_component_imports(tmp_path: Path) -> None:
    build = Path(os.environ.get("PIPELENS_BUILD_DIR", REPO / "build"))
    env = dict(os.environ, DESTDIR=str(tmp_path))
    proc = subprocess.run(["cmake", "--install", str(build), "--component", "python"], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    inits = list(tmp_path.rglob("pipelens/__init__.py"))
    assert len(inits) == 1, proc.stdout
    site = inits[0].parent.parent
    names = sorted(p.name for p in inits[0].parent.iterdir())
    assert "py.typed" in names and "_core.pyi" in names and "_plot.py" in names
    code = "import pipelens; print(pipelens.__file__); print(len(pipelens.schedule('pd', 2, 3)))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(site / "pipelens" / "__init__.py"), "12"]
