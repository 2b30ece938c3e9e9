#!/usr/bin/env python3
"""Speed of `import pipelens` against pipelens-cli (issue 32's targets, docs/benchmarks.md).

    PYTHONPATH=build/python /usr/bin/python3 tests/bench/bench_python.py --reps 15

1. PD S = 32 logistic (docs/benchmarks.md's pd-S32.json: n = 600, d = 512, b = 10, 300
   microbatches, f after every update): the CLI's whole process (`run --out DIR --quiet`)
   against pipelens.run + Result.save in a warm interpreter, and against a whole
   `python -c` process doing the same. Target: Python at most 5 % slower.
2. Import time: `python -c "import numpy"` against `python -c "import numpy, pipelens"`
   (whole processes) and `import pipelens` alone after NumPy. Target: at most 50 ms.
3. A cold interpreter running the default experiment. Target: under 1 s.
Medians (and the minimum) of --reps runs each, interleaved so that load drifts hit all alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PD_S32 = {
    "name": "pd-S32",
    "seed": 1,
    "stages": 32,
    "batch_size": 10,
    "backend": "cpu",
    "data": {"source": "synthetic", "kind": "logistic", "rows": 600, "dim": 512, "seed": 1},
    "objective": {"kind": "logistic", "l2": 0.0001},
    "budget": {"microbatches": 300},
    "sampling": {"objective_per_update": True},
    "methods": [{"method": "pd", "step_size": 0.05}],
}


def wall(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def show(name: str, times: list[float]) -> float:
    med = statistics.median(times)
    print(f"  {name:58s} median {1000 * med:7.1f} ms   min {1000 * min(times):7.1f} ms")
    return med


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--cli", default=str(REPO / "build" / "app" / "pipelens-cli"))
    args = parser.parse_args()
    import pipelens

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(pipelens.__file__).parents[1])
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="bench-python-"))
    config = tmp / "pd-S32.json"
    config.write_text(json.dumps(PD_S32))

    print(f"pipelens from {Path(pipelens.__file__).parent}, python {py}, cli {args.cli}")
    print(f"1. PD S = 32 logistic, {args.reps} runs each")
    cli, warm, whole = [], [], []
    script = (f"import pipelens; pipelens.run({str(config)!r}).save({str(tmp / 'py-proc')!r})")
    pipelens.run(str(config))  # warm the page cache and the module
    for _ in range(args.reps):
        cli.append(wall([args.cli, "run", str(config), "--out", str(tmp / "cli"), "--quiet"], env))
        start = time.perf_counter()
        pipelens.run(str(config)).save(tmp / "py")
        warm.append(time.perf_counter() - start)
        whole.append(wall([py, "-c", script], env))
    c = show("pipelens-cli run (whole process)", cli)
    w = show("pipelens.run + Result.save (warm interpreter)", warm)
    p = show("python -c 'import pipelens; run + save' (whole process)", whole)
    print(f"  warm Python / CLI = {w / c:.3f}; whole Python process / CLI = {p / c:.3f}")

    print(f"  budget: 1.05 x CLI + 50 ms = {1000 * (1.05 * c + 0.05):.1f} ms (median)")

    print(f"2. import time, {args.reps} runs each")
    empty, plain, base, with_pl, alone = [], [], [], [], []
    timed = "import time; t = time.perf_counter(); import pipelens; print(time.perf_counter() - t)"
    for _ in range(args.reps):
        empty.append(wall([py, "-c", "pass"], env))
        plain.append(wall([py, "-c", "import pipelens"], env))
        base.append(wall([py, "-c", "import numpy"], env))
        with_pl.append(wall([py, "-c", "import numpy, pipelens"], env))
        out = subprocess.run([py, "-c", timed], check=True, env=env, capture_output=True,
                             text=True)
        alone.append(float(out.stdout))
    e = show("python -c 'pass'", empty)
    i = show("python -c 'import pipelens'", plain)
    show("import pipelens (in process, perf_counter around it)", alone)
    b = show("python -c 'import numpy'", base)
    a = show("python -c 'import numpy, pipelens'", with_pl)
    print(f"  import pipelens adds {1000 * (i - e):.1f} ms to an empty interpreter, "
          f"{1000 * (a - b):.1f} ms to one that imports NumPy (NumPy alone: {1000 * (b - e):.1f} ms)")
    print(f"3. cold interpreter, default experiment, {args.reps} runs")
    cold = [wall([py, "-c", "import pipelens; pipelens.run(pipelens.Config.default())"], env)
            for _ in range(args.reps)]
    show("python -c 'import pipelens; run(Config.default())'", cold)


if __name__ == "__main__":
    main()
