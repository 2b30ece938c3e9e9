#!/usr/bin/python3
"""PipeLens's CPU engine against PyTorch on the character transformer, in one run, one table.

Both train the same model (../shared/golden-lm/README.md, "Model": written here from those
equations with torch.nn.functional, no nn.Module) from the same w0 (PipeLens's seeded
initialisation, written by bench_lm_cpu --write-w0) on the same batches of the same corpus
(Tiny Shakespeare: batch i is ids[i b T : (i+1) b T], microbatch k uses batch k mod M), with
plain SGD at the same step size. PyTorch (Debian's python3-torch, installed when missing) runs
in float32 on OpenBLAS: the script makes sure
OpenBLAS is the BLAS that Debian's python3-torch loads (installing libopenblas0-pthread and
selecting it when it can) and reads the library actually mapped into the process, which it
prints. PyTorch trains in three thread layouts on the 2 cores, each in a process of its own
(torch.set_num_threads x OPENBLAS_NUM_THREADS: 2 x 1, 1 x 2, and 2 x 2, its default here, which
oversubscribes the cores); every layout is printed and PipeLens is compared with the fastest.
Then bench_lm_cpu runs with the fastest layout's losses and fails unless its float sequential
losses agree with them on the first steps, every run finishes, the loss falls, every threaded
loop is bit-identical to one thread and the stashes match SPEC section 3.

  cmake --build build -j2 --target bench_lm_cpu
  /usr/bin/python3 scripts/compare_torch_lm.py [--bench build/tests/bench/bench_lm_cpu]
      [--steps-small 200] [--steps-paper 8] [--threads 2] [--corpus FILE] [--out DIR]

Exit status: 0 when every check passed, 1 otherwise (the table is printed either way).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLAS_ALTERNATIVE = "libblas.so.3-x86_64-linux-gnu"
CONFIGS = [  # key, S, C (T = 32, b = 16, 4 heads)
    ("small", 4, 64),
    ("paper", 16, 256),
]
T, B, HEADS, STEP = 32, 16, 4, 0.125


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def current_blas():
    q = run(["update-alternatives", "--query", BLAS_ALTERNATIVE])
    for line in q.stdout.splitlines():
        if line.startswith("Value:"):
            return line.split(":", 1)[1].strip()
    return ""


def apt_install(packages):
    """apt-get install, with an update first when the package lists are stale; True on success."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if run(["apt-get", "install", "-y", "-qq"] + packages, env=env).returncode == 0:
        return True
    run(["apt-get", "update", "-qq"], env=env)
    return run(["apt-get", "install", "-y", "-qq"] + packages, env=env).returncode == 0


def ensure_torch():
    """PyTorch and NumPy from Debian (python3-torch, python3-numpy), installed when missing."""
    import importlib.util
    missing = [pkg for module, pkg in (("torch", "python3-torch"), ("numpy", "python3-numpy"))
               if importlib.util.find_spec(module) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        raise SystemExit("PyTorch is not installed and this is not root: apt-get install "
                         + " ".join(missing))
    print("installing " + " ".join(missing) + " (Debian's archive)", file=sys.stderr, flush=True)
    if not apt_install(missing):
        raise SystemExit("apt-get install " + " ".join(missing) + " failed")


def ensure_openblas():
    """Makes OpenBLAS the system's libblas.so.3 (what Debian's libtorch links); returns a note."""
    value = current_blas()
    if "openblas" in value:
        return "already selected: " + value
    if os.geteuid() != 0:
        return "not root: cannot select OpenBLAS (libblas.so.3 is %s)" % (value or "unknown")
    if not os.path.exists("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"):
        apt_install(["libopenblas0-pthread"])
    target = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
    if os.path.exists(target):
        run(["update-alternatives", "--set", BLAS_ALTERNATIVE, target])
    return "selected now: " + current_blas()


def loaded_blas():
    """The BLAS libraries mapped into this process (after torch ran a product)."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if "/" in line else ""
            name = os.path.basename(path)
            if "blas" in name or "lapack" in name:
                libs.add(os.path.realpath(path))
    return sorted(libs)


def corpus_ids(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    return [index[c] for c in text], len(vocab)


def layout(S, C, V):
    """(name, shape) of every tensor, stage by stage, in PipeLens's flat order."""
    stages = [[("tok_emb.weight", (V, C)), ("pos_emb.weight", (T, C))]]
    for _ in range(S - 2):
        stages.append([("ln_1.weight", (C,)), ("ln_1.bias", (C,)),
                       ("attn.c_attn.weight", (3 * C, C)), ("attn.c_attn.bias", (3 * C,)),
                       ("attn.c_proj.weight", (C, C)), ("attn.c_proj.bias", (C,)),
                       ("ln_2.weight", (C,)), ("ln_2.bias", (C,)),
                       ("mlp.0.weight", (4 * C, C)), ("mlp.0.bias", (4 * C,)),
                       ("mlp.2.weight", (C, 4 * C)), ("mlp.2.bias", (C,))])
    stages.append([("ln_f.weight", (C,)), ("ln_f.bias", (C,)), ("lm_head.weight", (V, C))])
    return stages


def train_torch(torch, key, S, C, ids, V, w0_path, steps, out_csv):
    import numpy as np
    F = torch.nn.functional
    w0 = np.load(w0_path)
    stages, offset = [], 0
    for tensors in layout(S, C, V):
        params = {}
        for name, shape in tensors:
            n = int(np.prod(shape))
            t = torch.tensor(w0[offset:offset + n].reshape(shape), dtype=torch.float32)
            params[name] = t.requires_grad_(True)
            offset += n
        stages.append(params)
    if offset != len(w0):
        raise SystemExit("%s: w0 has %d values, the layout %d" % (key, len(w0), offset))
    every = [p for st in stages for p in st.values()]
    hd = C // HEADS
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    positions = torch.arange(T)
    data = torch.tensor(ids, dtype=torch.long)
    M = (len(ids) - 1) // (B * T)

    def block(p, h):
        a = F.layer_norm(h, (C,), p["ln_1.weight"], p["ln_1.bias"], 1e-5)
        qkv = F.linear(a, p["attn.c_attn.weight"], p["attn.c_attn.bias"])
        q, k, v = qkv.split(C, dim=2)
        q = q.view(B, T, HEADS, hd).transpose(1, 2)
        k = k.view(B, T, HEADS, hd).transpose(1, 2)
        v = v.view(B, T, HEADS, hd).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / (hd ** 0.5)
        prob = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (prob @ v).transpose(1, 2).reshape(B, T, C)
        h = h + F.linear(y, p["attn.c_proj.weight"], p["attn.c_proj.bias"])
        u = F.linear(F.layer_norm(h, (C,), p["ln_2.weight"], p["ln_2.bias"], 1e-5),
                     p["mlp.0.weight"], p["mlp.0.bias"])
        return h + F.linear(F.gelu(u), p["mlp.2.weight"], p["mlp.2.bias"])

    def loss_of(x, y):
        h = stages[0]["tok_emb.weight"][x] + stages[0]["pos_emb.weight"][positions]
        for p in stages[1:-1]:
            h = block(p, h)
        head = stages[-1]
        h = F.layer_norm(h, (C,), head["ln_f.weight"], head["ln_f.bias"], 1e-5)
        logits = F.linear(h, head["lm_head.weight"])
        return F.cross_entropy(logits.view(-1, V), y.view(-1))

    losses = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for k in range(steps):
        i = k % M
        chunk = data[i * B * T:(i + 1) * B * T + 1]
        x, y = chunk[:-1].view(B, T), chunk[1:].view(B, T)
        loss = loss_of(x, y)
        for p in every:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in every:
                p.sub_(STEP * p.grad)
        losses.append(loss.item())
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    with open(out_csv, "w") as f:
        f.write("step,loss\n")
        for k, l in enumerate(losses):
            f.write("%d,%.17g\n" % (k, l))
    q = max(1, len(losses) // 4)
    return {"tokens": steps * B * T, "wall_s": wall, "cpu_s": cpu,
            "first": sum(losses[:q]) / q, "last": sum(losses[-q:]) / q}


# PyTorch's thread layouts on 2 cores, (intra-op threads, OpenBLAS threads): its own threads
# with a single-threaded BLAS, one op thread over a 2-thread BLAS, and what it does by default
# (both at 2, which oversubscribes the cores). The comparison takes the fastest per model.
LAYOUTS = [(2, 1), (1, 2), (2, 2)]


def torch_worker(args):
    """Trains every configuration in this process (the parent set OPENBLAS_NUM_THREADS) and
    writes DIR/torch-<intra>x<blas>.json and the loss CSVs."""
    import torch
    torch.set_num_threads(args.torch_threads)
    torch.ones(64, 64) @ torch.ones(64, 64)
    ids, V = corpus_ids(args.corpus)
    tag = "%dx%s" % (args.torch_threads, os.environ.get("OPENBLAS_NUM_THREADS", "default"))
    steps = {"small": args.steps_small, "paper": args.steps_paper}
    rows = {}
    for key, S, C in CONFIGS:
        if steps[key] < 2:
            continue
        rows[key] = train_torch(torch, key, S, C, ids, V, os.path.join(args.worker, key + "_w0.npy"),
                                steps[key], os.path.join(args.worker, "%s_torch_%s.csv" % (key, tag)))
    result = {"intra_op_threads": torch.get_num_threads(),
              "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
              "version": torch.__version__, "blas": loaded_blas(), "rows": rows}
    with open(os.path.join(args.worker, "torch-%s.json" % tag), "w") as f:
        json.dump(result, f)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build/tests/bench/bench_lm_cpu"))
    ap.add_argument("--steps-small", type=int, default=200)
    ap.add_argument("--steps-paper", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2, help="PipeLens threads (threaded loops)")
    ap.add_argument("--torch-threads", type=int, default=2, help=argparse.SUPPRESS)
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "../shared/corpora/tinyshakespeare.txt"))
    ap.add_argument("--out", default="", help="folder for w0, losses and the bench's JSON")
    args = ap.parse_args()
    if args.worker:
        return torch_worker(args)
    if not os.path.exists(args.bench):
        raise SystemExit("no benchmark at %s: cmake --build build --target bench_lm_cpu" % args.bench)
    if not os.path.exists(args.corpus):
        raise SystemExit("no corpus at %s" % args.corpus)
    out = args.out or tempfile.mkdtemp(prefix="pipelens-torch-lm-")
    os.makedirs(out, exist_ok=True)

    ensure_torch()
    load_start = os.getloadavg()
    blas_note = ensure_openblas()
    r = run([args.bench, "--write-w0", out, "--corpus", args.corpus])
    if r.returncode != 0:
        raise SystemExit("bench_lm_cpu --write-w0 failed:\n" + r.stdout + r.stderr)
    # One process per layout: OpenBLAS reads its thread count when it loads.
    layouts = []
    for intra, blas_threads in LAYOUTS:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", out, "--torch-threads", str(intra),
               "--steps-small", str(args.steps_small), "--steps-paper", str(args.steps_paper),
               "--corpus", args.corpus]
        w = run(cmd, env=env)
        path = os.path.join(out, "torch-%dx%d.json" % (intra, blas_threads))
        if w.returncode != 0 or not os.path.exists(path):
            raise SystemExit("PyTorch worker %dx%d failed:\n%s%s" % (intra, blas_threads, w.stdout, w.stderr))
        with open(path) as f:
            layouts.append(json.load(f))
        for key, row in sorted(layouts[-1]["rows"].items()):
            print("PyTorch %s, %d op threads, OpenBLAS %d threads: %.0f tokens/s" % (
                key, intra, blas_threads, row["tokens"] / row["wall_s"]), flush=True)
    blas = layouts[0]["blas"]
    if not any("openblas" in b for b in blas):
        print("warning: PyTorch is not on OpenBLAS (%s); its figures are far lower" % blas)
    torch_rows, best_layout = {}, {}
    for key, S, C in CONFIGS:
        candidates = [(l["rows"][key]["tokens"] / l["rows"][key]["wall_s"], i)
                      for i, l in enumerate(layouts) if key in l["rows"]]
        if not candidates:
            continue
        _, i = max(candidates)
        best_layout[key] = layouts[i]
        torch_rows[key] = layouts[i]["rows"][key]
        tag = "%dx%s" % (layouts[i]["intra_op_threads"], layouts[i]["openblas_threads"])
        shutil.copyfile(os.path.join(out, "%s_torch_%s.csv" % (key, tag)),
                        os.path.join(out, key + "_torch.csv"))

    bench_json = os.path.join(out, "bench.json")
    cmd = [args.bench, "--steps-small", str(args.steps_small), "--steps-paper", str(args.steps_paper),
           "--threads", str(args.threads), "--precision", "float", "--corpus", args.corpus,
           "--torch", out, "--json", bench_json]
    bench = run(cmd)
    if not os.path.exists(bench_json):
        raise SystemExit("bench_lm_cpu failed:\n" + bench.stdout + bench.stderr)
    with open(bench_json) as f:
        result = json.load(f)

    load = os.getloadavg()
    print()
    print("machine: %s, %d CPUs; load average (1, 5, 15 min) %.2f %.2f %.2f at the start, "
          "%.2f %.2f %.2f at the end" % (" ".join(os.uname()[i] for i in (2, 4)), os.cpu_count(),
                                         *load_start, *load))
    print("PyTorch %s, float32; BLAS: %s (%s); thread layouts (op threads x OpenBLAS threads): %s; "
          "PipeLens is compared with the fastest" % (
              layouts[0]["version"], ", ".join(blas) or "none found", blas_note,
              ", ".join("%dx%d" % lt for lt in LAYOUTS)))
    print("PipeLens kernels: %s; corpus %s; T=%d b=%d heads=%d, SGD step %g" % (
        result["kernels"], args.corpus, T, B, HEADS, STEP))
    print()
    print("| configuration | engine | loop | tokens/s (wall) | tokens/CPU-s | wall s | CPU s | "
          "loss first -> last quarter | vs PyTorch (wall) |")
    print("|---|---|---|---:|---:|---:|---:|---|---:|")
    for key, S, C in CONFIGS:
        if key not in torch_rows:
            continue
        tw = torch_rows[key]["tokens"] / torch_rows[key]["wall_s"]
        name = "%s: S=%d C=%d" % (key, S, C)
        for l in layouts:
            t = l["rows"][key]
            how = "sequential SGD, %d op thr x OpenBLAS %s%s" % (
                l["intra_op_threads"], l["openblas_threads"], " (fastest)" if l is best_layout[key] else "")
            print("| %s | PyTorch | %s | %.0f | %.0f | %.2f | %.2f | %.3f -> %.3f | %.2f |" % (
                name, how, t["tokens"] / t["wall_s"], t["tokens"] / t["cpu_s"], t["wall_s"], t["cpu_s"],
                t["first"], t["last"], t["tokens"] / t["wall_s"] / tw))
        for row in result["rows"]:
            if not row["config"].startswith(key + ":"):
                continue
            print("| %s | PipeLens | %s | %.0f | %.0f | %.2f | %.2f | %.3f -> %.3f | %.2f |" % (
                name, row["loop"], row["tokens_per_s"], row["tokens_per_cpu_s"], row["wall_s"],
                row["cpu_s"], row["loss_first_quarter"], row["loss_last_quarter"],
                row["tokens_per_s"] / tw))
    print()
    for key, a in sorted(result.get("torch_agreement", {}).items()):
        print("%s: first %d losses agree to %.1e relative (tolerance %.0e): %s" % (
            key, a["steps"], a["max_rel_diff"], a["tolerance"], "ok" if a["ok"] else "FAILED"))
    mem = {}
    for m in result["memory"]:
        mem.setdefault(m["config"], []).append(m)
    for key, rows in mem.items():
        print("%s PD stash per stage (peak/predicted): %s; weights %.1f MiB, activations %.1f MiB" % (
            key, " ".join("%d/%d" % (m["stash_peak"], m["stash_predicted"]) for m in rows),
            sum(m["weight_stash_bytes"] for m in rows) / 2 ** 20,
            sum(m["activation_bytes"] for m in rows) / 2 ** 20))
    print("files: %s" % (out if args.out else "(temporary, removed)"))
    if bench.returncode != 0:
        print(bench.stdout[-3000:])
        print("bench_lm_cpu FAILED (exit %d)" % bench.returncode)
        return 1
    print("all checks passed")
    if not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
