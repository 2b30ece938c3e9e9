#!/usr/bin/python3
"""Whole-process time of one job in the paper authors' Python simulator and in pipelens-cli.

The job (issue 7, "Setup cost"): PipeDream on logistic regression, n = 600, d = 512, l2 = 1e-4,
batch 10, 300 microbatches, step 0.05, synthetic data from NumPy's default_rng(1), f after every
block update, f* and L computed; S = 8, 32, 64 by default. Each side runs as a fresh process
(import/start-up, data, f*, L, schedule, replay), timed from outside; the best and median of
--reps runs are reported. Both runs must finish with 300 S block updates and agree on the final f.

The authors' simulator is not part of PipeLens: pass the path of a checkout of
github.com/vectozavr/randomized-pipedream (its package `src/` at the top).

    scripts/compare_authors.py /tmp/authors [--cli build/app/pipelens-cli] [--stages 8,32,64]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS, DIM, L2, BATCH, MICROBATCHES, STEP, SEED = 600, 512, 1e-4, 10, 300, 0.05, 1

# Runs in the authors' checkout: their objective, scheduler and PD method with their defaults,
# except the full gradient norm after every update (log_grad_norms), which PipeLens's job skips.
AUTHORS_JOB = """
import json, sys
from src.objectives.logistic import LogisticRegressionObjective
from src.schedulers.pipedream_1f1b import PipeDream1F1BScheduler
from src.methods.pipedream import PipeDreamMethod
S, n, d, l2, b, N, step, seed = (float(a) if '.' in a or 'e' in a else int(a) for a in sys.argv[1:])
obj = LogisticRegressionObjective.synthetic(num_examples=n, num_parameters=d, num_stages=S,
                                            batch_size=b, seed=seed, l2_reg=l2)
L = obj.smoothness_constant
f_star = obj.optimal_objective_value
timeline = PipeDream1F1BScheduler(noam=None).generate(num_stages=S, num_microbatches=N)
M = len(obj.get_batches())
method = PipeDreamMethod(timeline=timeline, learning_rate=step,
                         training_batch_indices=[j % M for j in range(N)], log_grad_norms=False)
trace = method.run(obj)
print(json.dumps({"updates": len(trace.block_update_objective),
                  "final": float(trace.block_update_objective[-1]),
                  "f_star": f_star, "L": L}))
"""

BLAS_PROBE = """
import io, contextlib, json, numpy
out = io.StringIO()
with contextlib.redirect_stdout(out):
    numpy.show_config()
info = []
try:
    import threadpoolctl
    info = [{k: p.get(k) for k in ("internal_api", "version", "num_threads", "filepath")}
            for p in threadpoolctl.threadpool_info()]
except ImportError:
    pass
print(json.dumps({"numpy": numpy.__version__, "show_config": out.getvalue(), "threadpools": info}))
"""


def timed(cmd, cwd=None):
    """Wall and CPU (user + sys of the child) seconds of one process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return wall, cpu, done.stdout


def pipelens_config(stages):
    return {
        "name": f"compare-authors-S{stages}", "seed": SEED,
        "objective": {"kind": "logistic", "l2": L2},
        "data": {"source": "synthetic", "kind": "logistic", "rows": ROWS, "dim": DIM, "seed": SEED},
        "stages": stages, "batch_size": BATCH, "budget": {"microbatches": MICROBATCHES},
        "methods": [{"method": "pd", "step_size": STEP}],
        "sampling": {"objective_per_update": True},
    }


def run_pipelens(cli, stages, work):
    config = work / f"pd-S{stages}.json"
    config_dict = pipelens_config(stages)
    config.write_text(json.dumps(config_dict))
    out = work / f"out-S{stages}"
    # The default backend (auto), as a user runs it; it picks the CPU engine for this small run.
    cmd = [cli, "run", str(config), "--out", str(out), "--quiet"]
    wall, cpu, _ = timed(cmd)
    summary = json.loads((out / "summary.json").read_text())
    method = summary["methods"][0]
    ok = method["finished"] and method["block_updates"] == MICROBATCHES * stages
    return wall, cpu, {"updates": method["block_updates"], "final": method["final_objective"],
                       "f_star": summary["f_star"], "L": summary["L"], "ok": ok,
                       "backend": summary["backend"],
                       "config": config_dict, "command": " ".join(cmd)}


def run_authors(python, authors, stages):
    args = [str(v) for v in (stages, ROWS, DIM, L2, BATCH, MICROBATCHES, STEP, SEED)]
    cmd = [python, "-c", AUTHORS_JOB, *args]
    wall, cpu, out = timed(cmd, cwd=authors)
    result = json.loads(out.strip().splitlines()[-1])
    result["ok"] = result["updates"] == MICROBATCHES * stages
    return wall, cpu, result


def blas_report(python, authors):
    _, _, out = timed([python, "-c", BLAS_PROBE], cwd=authors)
    probe = json.loads(out)
    alt = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"],
                         capture_output=True, text=True).stdout
    selected = next((l.split(":", 1)[1].strip() for l in alt.splitlines()
                     if l.startswith("Value:")), "unknown")
    return probe, selected


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("authors", type=Path, help="checkout of vectozavr/randomized-pipedream")
    parser.add_argument("--cli", default="build/app/pipelens-cli")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--stages", default="8,32,64")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if not (args.authors / "src" / "methods" / "pipedream.py").exists():
        sys.exit(f"{args.authors} is not a checkout of the authors' simulator (no src/methods/pipedream.py)")
    cli = str(Path(args.cli).resolve())

    probe, selected = blas_report(args.python, args.authors)
    print(f"NumPy {probe['numpy']}; libblas.so.3 alternative: {selected}")
    for pool in probe["threadpools"]:
        print(f"threadpoolctl: {pool}")
    if not probe["threadpools"]:
        print("threadpoolctl not installed; numpy.show_config():\n" + probe["show_config"])
    print(f"load average: {os.getloadavg()}\n")

    print("| S | authors: best / median wall | CPU | PipeLens: best / median wall | CPU "
          "| ratio (best wall) | ratio (CPU) | final f authors / PipeLens | f* authors / PipeLens |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for stages in (int(s) for s in args.stages.split(",")):
            ours = [run_pipelens(cli, stages, Path(tmp)) for _ in range(args.reps)]
            theirs = [run_authors(args.python, args.authors, stages) for _ in range(args.reps)]
            a, p = theirs[-1][2], ours[-1][2]
            agree = abs(a["final"] - p["final"]) <= 1e-6 * abs(p["final"])
            failed = failed or not (a["ok"] and p["ok"] and agree)
            aw = [w for w, _, _ in theirs]
            pw = [w for w, _, _ in ours]
            ac = statistics.median(c for _, c, _ in theirs)
            pc = statistics.median(c for _, c, _ in ours)
            print(f"| {stages} | {min(aw):.3f} / {statistics.median(aw):.3f} s | {ac:.3f} s "
                  f"| {min(pw):.3f} / {statistics.median(pw):.3f} s | {pc:.3f} s "
                  f"| {min(aw) / min(pw):.1f}x | {ac / pc:.1f}x "
                  f"| {a['final']:.10g} / {p['final']:.10g}{'' if agree else ' (DISAGREE)'} "
                  f"| {a['f_star']:.10g} / {p['f_star']:.10g} |", flush=True)
        print(f"\nPipeLens command: {ours[-1][2]['command']} (backend: {ours[-1][2]['backend']})")
    if failed:
        sys.exit("a run did not finish with 300 S block updates, or the final values disagree")


if __name__ == "__main__":
    main()
