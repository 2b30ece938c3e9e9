#!/usr/bin/python3
"""Writes tests/data/random/*.json: NumPy's own draws, which tst_random compares to NumpyRandom.

Run with Debian's python3-numpy from the repository root: scripts/make_random_vectors.py
Every double is stored as float.hex() so the test can compare bits. The streams are those of
np.random.default_rng(seed) (PCG64 seeded through SeedSequence), SPEC section 6.
"""
import ctypes
import json
import os

import numpy as np

SEEDS = [0, 1, 42, 2**32 + 5, 0xFFFFFFFFFFFFFFC5, 2**64 - 1]
# Bounds for integers(0, high): tiny, odd, heavy rejection (2^32 mod high = 2^30), full range.
HIGHS = [1, 2, 5, 7, 1000, 3 * 2**30, 2**31 + 1, 2**32 - 1, 2**32]
SHUFFLE_SIZES = [1, 2, 3, 10, 64, 257]
LONG_NORMAL_COUNT = 200_000
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = 2**64 - 1
OUT = os.path.join("tests", "data", "random")


def hexes(values):
    return [float(v).hex() for v in np.asarray(values, dtype=np.float64).ravel()]


def ints(values):
    return [int(v) for v in np.asarray(values).ravel()]


def fnv1a_words(values):
    """FNV-1a over the 64-bit patterns of the doubles, one word at a time."""
    h = FNV_OFFSET
    for word in np.asarray(values, dtype=np.float64).view(np.uint64).tolist():
        h = ((h ^ word) * FNV_PRIME) & MASK64
    return h


def words_consumed(seed, draw):
    """How many 64-bit outputs `draw(rng)` used: find the next output in a fresh stream."""
    rng = np.random.default_rng(seed)
    draw(rng)
    following = int(rng.bit_generator.random_raw())
    stream = np.random.default_rng(seed).bit_generator.random_raw(3 * LONG_NORMAL_COUNT)
    return int(np.nonzero(stream == following)[0][0]), following


def u32_mix(seed):
    """next_u32 and next_u64 interleaved through the bit generator's C interface."""
    bits = np.random.default_rng(seed).bit_generator
    api = bits.ctypes
    u32 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)(
        ctypes.cast(api.next_uint32, ctypes.c_void_p).value)
    u64 = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(
        ctypes.cast(api.next_uint64, ctypes.c_void_p).value)
    pattern = "33633336366333"
    return pattern, [int(u32(api.state_address) if k == "3" else u64(api.state_address))
                     for k in pattern]


def interleaved(seed):
    """One generator, the authors' kinds of draws one after another (RPD-like and data-like)."""
    rng = np.random.default_rng(seed)
    steps = []
    steps.append({"draw": "integers", "high": 5, "values": ints([rng.integers(0, 5)])})
    steps.append({"draw": "normal", "scale": 1.0, "values": hexes(rng.normal(size=3))})
    arr = np.arange(7)
    rng.shuffle(arr)
    steps.append({"draw": "shuffle", "size": 7, "values": ints(arr)})
    steps.append({"draw": "integers", "high": 10, "values": ints(rng.integers(0, 10, size=4))})
    steps.append({"draw": "random", "values": hexes([rng.random()])})
    p = [0.3, 0.9, 0.0, 1.0, 0.5]
    steps.append({"draw": "binomial", "p": hexes(p), "values": ints(rng.binomial(1, p))})
    steps.append({"draw": "normal", "scale": 0.5, "values": hexes(rng.normal(0.0, 0.5, 5))})
    steps.append({"draw": "integers", "high": 3, "values": ints([rng.integers(0, 3)])})
    for k in range(1, 5):  # RPD's pattern: stage, batch index, then S delays
        steps.append({"draw": "integers", "high": 4, "values": ints([rng.integers(0, 4)])})
        steps.append({"draw": "integers", "high": 12, "values": ints([rng.integers(0, 12)])})
        steps.append({"draw": "integers", "high": min(3, k) + 1,
                      "values": ints(rng.integers(0, min(3, k) + 1, size=4))})
        steps.append({"draw": "normal", "scale": 0.5, "values": hexes(rng.normal(0.0, 0.5, 2))})
    return steps, int(rng.bit_generator.random_raw())


def binomial_probabilities():
    rng = np.random.default_rng(2024)
    special = [0.0, 1.0, 0.5, 0.5000000000000001, 0.49999999999999994, 1e-300, 1 - 2**-53,
               2**-53, 0.25, 0.75]
    return np.concatenate([special, rng.random(150), rng.random(40) ** 8])


def seed_vectors(seed, elementwise_normals):
    rng = np.random.default_rng(seed)
    case = {
        "seed": seed,
        "seed_state32": ints(np.random.SeedSequence(seed).generate_state(8, np.uint32)),
        "raw_u64": ints(rng.bit_generator.random_raw(8)),
    }
    case["random"] = hexes(np.random.default_rng(seed).random(8))
    pattern, values = u32_mix(seed)
    case["u32_u64_pattern"], case["u32_u64_values"] = pattern, values
    # integers: every bound on one generator in turn, scalar calls then size-k calls.
    rng = np.random.default_rng(seed)
    case["integers"] = [{"high": h, "scalar": ints([rng.integers(0, h) for _ in range(3)]),
                         "sized": ints(rng.integers(0, h, size=9))} for h in HIGHS]
    case["integers_next_u64"] = int(rng.bit_generator.random_raw())
    rng = np.random.default_rng(seed)
    shuffles = []
    for m in SHUFFLE_SIZES:
        arr = np.arange(m)
        rng.shuffle(arr)
        shuffles.append(ints(arr))
    case["shuffles"] = shuffles
    case["shuffles_next_u64"] = int(rng.bit_generator.random_raw())
    case["normal"] = hexes(np.random.default_rng(seed).standard_normal(elementwise_normals))
    rng = np.random.default_rng(seed)
    case["normal_scaled"] = {"scale": 0.5, "rows": 4, "cols": 3,
                             "values": hexes(rng.normal(scale=0.5, size=(4, 3)))}
    p = binomial_probabilities()
    rng = np.random.default_rng(seed)
    case["binomial"] = {"p": hexes(p), "values": ints(rng.binomial(1, p)),
                        "next_u64": int(rng.bit_generator.random_raw())}
    case["interleaved"], case["interleaved_next_u64"] = interleaved(seed)
    return case


def long_normal(seed):
    z = np.random.default_rng(seed).standard_normal(LONG_NORMAL_COUNT)
    used, following = words_consumed(seed, lambda g: g.standard_normal(LONG_NORMAL_COUNT))
    return {"seed": seed, "count": LONG_NORMAL_COUNT, "fnv1a": fnv1a_words(z),
            "next_u64": following, "u64_used": used,
            "tail_draws": int(np.count_nonzero(np.abs(z) > 3.6541528853610088)),
            "last": float(z[-1]).hex()}


def sigmoid(z):
    # The two-branch logistic function: no overflow for large |z|.
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def synthetic_cases():
    cases = []
    for kind, n, d, seed, noise in [("random", 7, 3, 0, 0.0), ("random", 6, 4, 42, 0.1),
                                    ("logistic", 40, 5, 3, 0.0), ("logistic", 25, 3, 0, 0.0)]:
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, d))
        w_true = rng.normal(size=d)
        if kind == "random":
            y = X @ w_true
            if noise > 0:
                y = y + noise * rng.normal(size=n)
        else:
            y = rng.binomial(1, sigmoid(X @ w_true)).astype(np.float64)
        cases.append({"kind": kind, "rows": n, "dim": d, "seed": seed, "label_noise": noise,
                      "X": hexes(X), "w_true": hexes(w_true), "y": hexes(y)})
    return cases


def write_json(name, payload):
    path = os.path.join(OUT, name)
    with open(path + ".tmp", "w") as out:
        json.dump(payload, out, separators=(",", ":"))
        out.write("\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {"numpy": np.__version__, "generator": "np.random.default_rng(seed)"}
    cases = [seed_vectors(s, 3000 if s == 0 else 400) for s in SEEDS]
    write_json("streams.json", dict(meta, cases=cases))
    write_json("long_normal.json", dict(meta, runs=[long_normal(s) for s in (0, 2**32 + 5)]))
    write_json("synthetic.json", dict(meta, cases=synthetic_cases()))


if __name__ == "__main__":
    main()
