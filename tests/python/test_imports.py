"""The module imports without matplotlib or pandas, and says clearly when NumPy is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

# Makes `import NAME` fail for the given top-level names, as on a machine without them.
BLOCKER = textwrap.dedent(
    """
    import sys
    class Block:
        def __init__(self, names):
            self.names = names
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.names:
                raise ImportError("No module named " + repr(name) + " (blocked by the test)")
            return None
    sys.meta_path.insert(0, Block({names!r}))
    """
)


def python(code: str, blocked: set[str]) -> subprocess.CompletedProcess:
    script = BLOCKER.format(names=blocked) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ))


def test_imports_and_runs_without_matplotlib_and_pandas() -> None:
    proc = python(
        """
        import pipelens, sys
        assert "matplotlib" not in sys.modules and "pandas" not in sys.modules
        cfg = {"stages": 2, "data": {"rows": 40, "dim": 8}, "objective": {"kind": "quadratic"},
               "budget": {"epochs": 1}, "backend": "cpu",
               "methods": [{"method": "pd", "step_size": 0.05}]}
        r = pipelens.run(cfg)
        print(len(r.methods[0].objective_per_slot))
        for call in (r.plot, r.to_pandas, lambda: pipelens.gantt(r)):
            try:
                call()
            except ImportError as e:
                print("ImportError:", e)
        """,
        {"matplotlib", "pandas"},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert int(lines[0]) > 1
    assert sum("ImportError" in line and "matplotlib" in line for line in lines) == 2
    assert any("ImportError" in line and "pandas" in line for line in lines)


def test_missing_numpy_is_a_clear_import_error() -> None:
    proc = python("import pipelens", {"numpy"})
    assert proc.returncode != 0
    assert "ImportError: pipelens needs NumPy" in proc.stderr
    assert "Segmentation" not in proc.stderr and "Traceback" in proc.stderr


def test_run_and_save_do_not_load_numpy(tmp_path) -> None:
    # NumPy is imported on first use of an array: a script that only runs and saves skips its
    # ~80 ms import (docs/benchmarks.md, "Python module").
    proc = python(
        f"""
        import pipelens, sys
        r = pipelens.run({{"stages": 2, "data": {{"rows": 40, "dim": 8}}, "backend": "cpu",
                          "objective": {{"kind": "quadratic"}}, "budget": {{"epochs": 1}},
                          "methods": [{{"method": "pd", "step_size": {{"grid": [-3, -1]}}}}]}})
        r.save({str(tmp_path / "out")!r})
        print("numpy" in sys.modules)
        print(r.methods[0].grid.dtype.names, "numpy" in sys.modules)
        """,
        set(),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["False", "('step_size', 'final_gap', 'diverged') True"]
