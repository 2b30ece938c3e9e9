"""PipeLens from Python: pipeline-parallel training experiments, results as NumPy arrays.

The same engine as ``pipelens-cli`` (the C++ core, called in-process): runs, schedules, delay
statistics, sweeps and the paper's reproductions. See docs/python.md for a tour::

    import pipelens
    result = pipelens.run(pipelens.Config.default())
    result.methods[0].objective_per_slot   # float64 NumPy array
    result.save("results")                 # exactly what `pipelens-cli run --out results` writes
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union

import importlib.util

# NumPy is needed, but imported on first use (it costs about 80 ms, more than a run of the
# default experiment): `import pipelens; pipelens.run(...).save(...)` never loads it. Its absence
# is still an ImportError here, at import, and not a crash later.
try:
    _numpy_spec = importlib.util.find_spec("numpy")
except (ImportError, ValueError):
    _numpy_spec = None
if _numpy_spec is None:
    raise ImportError(
        "pipelens needs NumPy, which this Python (" + sys.executable + ") does not have: "
        "install it (Debian: apt-get install python3-numpy, then use /usr/bin/python3; "
        "elsewhere: python -m pip install numpy)"
    )


class _LazyNumpy:
    """Stands for the numpy module until first used, then puts the module in its place."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        globals()["np"] = numpy
        return getattr(numpy, name)


np: Any = _LazyNumpy()

from . import _core

__all__ = [
    "Config",
    "Result",
    "MethodResult",
    "Schedule",
    "SweepResult",
    "Reproduction",
    "run",
    "schedule",
    "delays",
    "sweep",
    "reproduce",
    "gantt",
    "max_delay_formula",
    "TIMELINE_DTYPE",
    "DELAY_STATS_DTYPE",
]
__version__ = "0.1.0"

#: TIMELINE_DTYPE: one row per busy cell of a timeline. ``method`` is the index in
#: ``Result.methods``; stages count from 1 and slots and microbatches from 0 (as
#: timeline_<i>.csv); ``op`` is F, B, or for split backwards I and W; ``version_read`` and
#: ``staleness`` are -1 where there is none (a forward has no staleness: it is the delay of the
#: block update its backward makes).
_TIMELINE_FIELDS = [
    ("method", "i4"),
    ("slot", "i4"),
    ("end_slot", "i4"),
    ("stage", "i4"),
    ("op", "U1"),
    ("microbatch", "i4"),
    ("version_read", "i4"),
    ("staleness", "i8"),
]

#: DELAY_STATS_DTYPE: one row per S of :func:`delays`.
_DELAY_STATS_FIELDS = [
    ("stages", "i4"),
    ("microbatches", "i8"),
    ("max", "i8"),
    ("mean", "f8"),
    ("p10", "i8"),
    ("p50", "i8"),
    ("p90", "i8"),
    ("formula", "f8"),
    ("formula_mean", "f8"),
    ("samples", "i8"),
]

_OP_LETTERS = ("F", "B", "I", "W")


def __getattr__(name: str) -> Any:
    """TIMELINE_DTYPE and DELAY_STATS_DTYPE, made on first use (they need NumPy)."""
    if name == "TIMELINE_DTYPE":
        return np.dtype(_TIMELINE_FIELDS)
    if name == "DELAY_STATS_DTYPE":
        return np.dtype(_DELAY_STATS_FIELDS)
    raise AttributeError(f"module 'pipelens' has no attribute {name!r}")


ConfigSource = Union["Config", Mapping[str, Any], str, "os.PathLike[str]"]
Progress = Union[None, bool, Callable[[float], Any]]


def _threads(threads: Optional[int]) -> int:
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or not 0 <= threads <= 256:
        raise ValueError(
            f"threads = {threads!r} is not allowed: None (one per core) or an integer in [0, 256]"
        )
    return threads


def _progress_callback(progress: Progress) -> Optional[Callable[[float], Any]]:
    """None, a callable taking the fraction done (0 ... 1), or True for a bar (tqdm if installed)."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return _default_bar()
    if not callable(progress):
        raise TypeError(
            f"progress = {progress!r} is not allowed: None, True, or a callable taking the "
            "fraction done (a float from 0 to 1)"
        )
    return progress


def _default_bar() -> Callable[[float], Any]:
    try:
        from tqdm.auto import tqdm
    except ImportError:

        def text(fraction: float) -> None:
            sys.stderr.write(f"\rpipelens: {100 * fraction:5.1f} %")
            if fraction >= 1.0:
                sys.stderr.write("\n")
            sys.stderr.flush()

        return text
    bar = tqdm(total=1.0, bar_format="{l_bar}{bar}| {elapsed}<{remaining}")

    def update(fraction: float) -> None:
        bar.update(fraction - bar.n)
        if fraction >= 1.0:
            bar.close()

    return update


# ---------------------------------------------------------------------------------------------
# Config


class Config:
    """An experiment config (docs/config.md), validated exactly as ``pipelens-cli run`` does.

    ``source`` is a dict (the JSON object), a JSON string, or the path of a config file
    (relative data paths then resolve against the file's folder). A bad value raises
    ``ValueError`` naming the field, the value and what is allowed::

        cfg = pipelens.Config({"stages": 4, "methods": [{"method": "pd", "step_size": 0.1}]})
        cfg = pipelens.Config("examples/pd.json")
    """

    __slots__ = ("_cfg",)

    def __init__(self, source: ConfigSource) -> None:
        if isinstance(source, Config):
            self._cfg = source._cfg
        elif isinstance(source, Mapping):
            self._cfg = _core.Config.from_text(json.dumps(dict(source)), "config")
        elif isinstance(source, str) and source.lstrip().startswith("{"):
            self._cfg = _core.Config.from_text(source, "config")
        elif isinstance(source, (str, os.PathLike)):
            self._cfg = _core.Config.from_file(os.fspath(source))
        else:
            raise TypeError(
                f"Config source {source!r} is not allowed: a dict, a JSON string or a file path"
            )

    @classmethod
    def default(cls) -> "Config":
        """The default experiment (``pipelens-cli run --default``): PD vs RPD vs LocalSGD."""
        out = cls.__new__(cls)
        out._cfg = _core.Config.default()
        return out

    def to_dict(self) -> dict:
        """The config as the JSON object a file holds (every key, defaults filled in)."""
        return json.loads(self._cfg.to_json())

    def to_json(self) -> str:
        """The config as JSON text (what results' config.json holds)."""
        return str(self._cfg.to_json())

    def replace(self, changes: Mapping[str, Any]) -> "Config":
        """A new config with ``changes`` merged in (nested dicts merge key by key; lists and
        values replace), validated again::

            cfg.replace({"stages": 16, "budget": {"microbatches": 200}})
        """
        merged = _merge(self.to_dict(), changes)
        out = Config(merged)
        if self._cfg.base_dir:
            out._cfg = _core.Config.from_text(json.dumps(merged), "config", self._cfg.base_dir)
        return out

    @property
    def name(self) -> str:
        """The experiment's name."""
        return str(self._cfg.name)

    @property
    def stages(self) -> int:
        """S, the pipeline's stages."""
        return int(self._cfg.stages)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and bool(self._cfg == other._cfg)

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __repr__(self) -> str:
        return f"pipelens.Config(name={self.name!r}, stages={self.stages})"


def _merge(base: dict, changes: Mapping[str, Any]) -> dict:
    out = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


# ---------------------------------------------------------------------------------------------
# Results


class MethodResult:
    """One method of a :class:`Result`: its curves as float64 arrays, chosen step size, final
    values, timeline and delays.

    The curves are read-only views of the engine's own storage (no copy); ``gap_*`` subtract f*
    and so are new arrays, as are ``timeline`` and ``delays`` (built from the engine's tables).
    """

    def __init__(self, result: "Result", index: int) -> None:
        self._result = result
        self._index = index
        info = result._r.method_info(index)
        self.label: str = info["label"]
        self.method: str = info["method"]
        self.step_size: float = info["step_size"]
        self.final_objective: float = info["final_objective"]
        self.final_gap: float = info["final_gap"]
        self.initial_objective: float = info["initial_objective"]
        self.updates: int = info["updates"]
        self.total_slots: int = info["total_slots"]
        self.microbatches: int = info["microbatches"]
        self.max_delay: int = info["max_delay"]
        self.diverged: bool = info["diverged"]
        self.divergence: Optional[str] = info["divergence"]
        self.all_diverged: bool = info["all_diverged"]
        self.pipeline: bool = info["pipeline"]
        self.theorem: Optional[dict] = info["theorem"]
        self._grid = (info["grid_step_size"], info["grid_final_gap"], info["grid_diverged"])
        self._timeline: Optional[np.ndarray] = None
        self._delays: Optional[dict] = None

    @property
    def grid(self) -> np.ndarray:
        """Every step size of the grid (sweep.csv): a structured array step_size f8, final_gap
        f8, diverged ?; empty for a fixed step size."""
        steps, gaps, diverged = self._grid
        out = np.empty(len(steps), [("step_size", "f8"), ("final_gap", "f8"), ("diverged", "?")])
        out["step_size"] = steps
        out["final_gap"] = gaps
        out["diverged"] = diverged
        return out

    def _curve(self, name: str) -> np.ndarray:
        return self._result._r.curve(self._index, name)

    @property
    def objective_per_slot(self) -> np.ndarray:
        """f after each slot, [0] the start (pipeline methods; empty for RPD). float64, read-only."""
        return self._curve("objective_per_slot")

    @property
    def objective_per_update(self) -> np.ndarray:
        """f after block update k at [k - 1] (when sampling.objective_per_update). float64."""
        return self._curve("objective_per_update")

    @property
    def gap_per_slot(self) -> np.ndarray:
        """f - f* after each slot (a new array)."""
        return self.objective_per_slot - self._result.optimum

    @property
    def gap_per_update(self) -> np.ndarray:
        """f - f* after each block update (a new array; gap_per_update.csv)."""
        return self.objective_per_update - self._result.optimum

    @property
    def block_grad_norm_sq(self) -> np.ndarray:
        """||g||^2 of each applied block gradient. float64, read-only."""
        return self._curve("block_grad_norm_sq")

    @property
    def grad_norm(self) -> np.ndarray:
        """||grad f(w_k)||^2 where sampled (sampling.grad_norm_every): a structured array
        (block_update int64, grad_norm_sq float64, running_mean float64), as grad_norm.csv."""
        k = self._curve("grad_norm_updates")
        out = np.empty(len(k), [("block_update", "i8"), ("grad_norm_sq", "f8"),
                                ("running_mean", "f8")])
        out["block_update"] = k
        out["grad_norm_sq"] = self._curve("grad_norm_sq")
        out["running_mean"] = self._curve("grad_norm_running_mean")
        return out

    @property
    def timeline(self) -> Optional[np.ndarray]:
        """The schedule's cells as a structured array of :data:`TIMELINE_DTYPE` (None for RPD)."""
        if self._timeline is None:
            cols = self._result._r.timeline(self._index)
            if cols is None:
                return None
            self._timeline = _timeline_array(cols, self._result_index_for_timeline())
        return self._timeline

    def _result_index_for_timeline(self) -> int:
        return self._index

    @property
    def update_slots(self) -> np.ndarray:
        """The slot in which each block update happened (int32, K): a pipeline method's own; for
        RPD, which has no slots, those of PipeDream's run with the same K (as the app draws it)."""
        return self._result._r.update_slots(self._index)

    @property
    def delays(self) -> Optional[np.ndarray]:
        """Delays per block: an int64 array of shape (K, S), row k the staleness of each block's
        read for block update k (delays_<i>.csv's delay_block columns; None for RPD)."""
        d = self._delay_table()
        return None if d is None else d["delays"]

    @property
    def effective_delays(self) -> Optional[np.ndarray]:
        """With the ``accumulate`` corrector (k > 1): :attr:`delays` counted in the block updates
        that took effect, up to the update that applied each gradient (docs/correctors.md);
        None otherwise."""
        d = self._delay_table()
        return None if d is None else d.get("effective_delays")

    @property
    def delay_updates(self) -> Optional[np.ndarray]:
        """Per block update k: updated_stage (from 1), microbatch and slot (int32 columns)."""
        d = self._delay_table()
        if d is None:
            return None
        out = np.empty(len(d["slot"]), [("updated_stage", "i4"), ("microbatch", "i4"),
                                        ("slot", "i4")])
        for name in ("updated_stage", "microbatch", "slot"):
            out[name] = d[name]
        return out

    def _delay_table(self) -> Optional[dict]:
        if self._delays is None:
            self._delays = self._result._r.delays(self._index)
        return self._delays

    def __repr__(self) -> str:
        return (
            f"MethodResult({self.label!r}, step_size={self.step_size:g}, "
            f"final_gap={self.final_gap:.4g}, updates={self.updates})"
        )


def _timeline_array(cols: Mapping[str, Any], method: int) -> np.ndarray:
    out = np.empty(len(cols["slot"]), _TIMELINE_FIELDS)
    out["method"] = method
    for name in ("slot", "end_slot", "stage", "microbatch", "version_read", "staleness"):
        out[name] = cols[name]
    out["op"] = np.array(_OP_LETTERS)[cols["op"]]
    return out


class Result:
    """What :func:`run` returns: one :class:`MethodResult` per method (in config order), f*, L,
    the budget, and the writers of the CLI's results folder."""

    def __init__(self, core_result: Any) -> None:
        self._r = core_result
        self.methods: list[MethodResult] = [
            MethodResult(self, i) for i in range(core_result.method_count)
        ]

    @property
    def config(self) -> Config:
        """The config that ran."""
        out = Config.__new__(Config)
        out._cfg = self._r.config
        return out

    @property
    def optimum(self) -> float:
        """f*, the objective's minimum (0 for the language model)."""
        return float(self._r.optimum)

    @property
    def smoothness(self) -> float:
        """L, the objective's smoothness constant."""
        return float(self._r.smoothness)

    @property
    def slot_budget(self) -> int:
        """The simulated slots every pipeline method gets."""
        return int(self._r.slot_budget)

    @property
    def update_budget(self) -> int:
        """The block updates of the budget (RPD's K)."""
        return int(self._r.update_budget)

    @property
    def engine(self) -> str:
        """What the run ran on, e.g. "CPU engine"."""
        return str(self._r.engine)

    @property
    def notices(self) -> list[str]:
        """Notices of the engine choice (as the CLI prints)."""
        return list(self._r.notices)

    @property
    def warnings(self) -> list[str]:
        """Settings that do not do what they say (as the CLI prints)."""
        return list(self._r.warnings)

    @property
    def summary(self) -> dict:
        """summary.json's content as a dict."""
        return json.loads(self._r.summary_json())

    @property
    def timeline(self) -> np.ndarray:
        """Every pipeline method's cells in one structured array (:data:`TIMELINE_DTYPE`), the
        ``method`` field telling which."""
        parts = [m.timeline for m in self.methods if m.timeline is not None]
        return np.concatenate(parts) if parts else np.empty(0, _TIMELINE_FIELDS)

    def __getitem__(self, key: Union[int, str]) -> MethodResult:
        """A method by index or by label."""
        if isinstance(key, str):
            for m in self.methods:
                if m.label == key:
                    return m
            labels = ", ".join(repr(m.label) for m in self.methods)
            raise KeyError(f"method {key!r} is not in this result: one of {labels}")
        return self.methods[key]

    def __len__(self) -> int:
        return len(self.methods)

    def __iter__(self) -> Iterator[MethodResult]:
        return iter(self.methods)

    def save(self, folder: Union[str, "os.PathLike[str]"]) -> list[str]:
        """Writes exactly what ``pipelens-cli run --out FOLDER`` writes (same writer, same
        checks: FOLDER must be new, empty or earlier PipeLens results). Returns the writer's
        warnings. Raises ValueError for a bad path and OSError when writing fails."""
        return list(self._r.save(os.fspath(folder)))

    def to_pandas(self) -> Any:
        """The curves as a pandas DataFrame in long form: method, axis ("slot" or "update"),
        x, objective, gap. Needs pandas (ImportError otherwise)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError(
                "Result.to_pandas needs pandas (apt-get install python3-pandas, or pip install "
                "pandas); the arrays are on Result.methods without it"
            ) from e
        frames = []
        for m in self.methods:
            for axis, values, start in (
                ("slot", m.objective_per_slot, 0),
                ("update", m.objective_per_update, 1),
            ):
                if len(values) == 0:
                    continue
                frames.append(
                    pd.DataFrame(
                        {
                            "method": m.label,
                            "axis": axis,
                            "x": np.arange(start, start + len(values)),
                            "objective": values,
                            "gap": values - self.optimum,
                        }
                    )
                )
        if not frames:
            return pd.DataFrame(columns=["method", "axis", "x", "objective", "gap"])
        return pd.concat(frames, ignore_index=True)

    def plot(self, ax: Any = None, *, x: str = "slot", gap: bool = True, log: bool = True) -> Any:
        """Draws each method's curve with matplotlib, in the desktop app's colours: f - f* (or
        f with ``gap=False``) against slots (``x="slot"``; RPD, which has no slots, against
        its updates' slots is left out) or block updates (``x="update"``). Returns the axes."""
        from ._plot import plot_result

        return plot_result(self, ax, x=x, gap=gap, log=log)

    def __repr__(self) -> str:
        return str(self._r.summary_text()).rstrip()


def run(config: ConfigSource, *, threads: Optional[int] = None, progress: Progress = None) -> Result:
    """Runs an experiment (``pipelens-cli run``) and returns its :class:`Result`.

    ``threads``: worker threads (None: one per core). ``progress``: a callable getting the
    fraction done (0 ... 1) now and then, on the calling thread, or True for a bar. The GIL is
    released while the engine runs; Ctrl-C (KeyboardInterrupt) stops it between chunks, drops
    the partial result and returns only once every engine thread has ended::

        result = pipelens.run("examples/pd.json", progress=True)
    """
    cfg = Config(config)
    callback = _progress_callback(progress)
    r = _core.run(cfg._cfg, _threads(threads), callback)
    if callback is not None:
        callback(1.0)
    return Result(r)


# ---------------------------------------------------------------------------------------------
# Schedules and delays


class Schedule:
    """A schedule's timeline (:func:`schedule`): ``cells`` (TIMELINE_DTYPE, method 0), total
    slots, utilization, bubble fraction, peak stashed weight copies per stage."""

    def __init__(self, cols: Mapping[str, Any]) -> None:
        self.kind: str = cols["kind"]
        self.stages: int = cols["stages"]
        self.microbatches: int = cols["microbatches"]
        self.total_slots: int = cols["total_slots"]
        self.utilization: float = cols["utilization"]
        self.bubble_fraction: float = cols["bubble_fraction"]
        self.per_stage_utilization: np.ndarray = cols["per_stage_utilization"]
        self.peak_stash: np.ndarray = cols["peak_stash"]
        self.averaging_slots: np.ndarray = cols["averaging_slots"]
        self.cells: np.ndarray = _timeline_array(cols, 0)

    def __len__(self) -> int:
        return len(self.cells)

    def __repr__(self) -> str:
        return (
            f"Schedule(kind={self.kind!r}, stages={self.stages}, microbatches="
            f"{self.microbatches}, total_slots={self.total_slots}, "
            f"bubble_fraction={self.bubble_fraction:.3f})"
        )


def schedule(
    kind: str,
    stages: int,
    microbatches: int,
    *,
    noam: Optional[int] = None,
    replicas: Optional[int] = None,
    local_steps: int = 1,
    flush_group: Optional[int] = None,
    virtual_stages: int = 2,
    forward_slots: int = 1,
    backward_slots: int = 1,
    weight_slots: int = 1,
    latency_slots: int = 0,
) -> Schedule:
    """The slot timeline of a run of ``microbatches`` microbatches, as a config's method runs
    them: kind pd, fill-drain, localsgd, 1f1b, zb-h1, 2bw or interleaved; None for noam,
    replicas and flush_group means "from S" as in a config (the flushing kinds repeat steps of
    flush_group microbatches; ``pipelens-cli schedule --kind 1f1b`` prints one flush of N, which
    is ``flush_group=microbatches`` here). Bad values raise ValueError naming the field::

        s = pipelens.schedule("pd", stages=4, microbatches=8)
        s.cells[s.cells["op"] == "B"]["staleness"]
    """
    cols = _core.schedule(
        kind, stages, microbatches, noam or 0, replicas or 0, local_steps, flush_group or 0,
        virtual_stages, forward_slots, backward_slots, weight_slots, latency_slots, True,
    )
    return Schedule(cols)


def max_delay_formula(stages: int) -> int:
    """floor(S^2 - S/2): PipeDream's steady-state maximum delay with NOAM = S."""
    return int(_core.max_delay_formula(stages))


def delays(
    stages: Union[int, Iterable[int]],
    *,
    microbatches: Optional[int] = None,
    from_fraction: float = 0.5,
    threads: Optional[int] = None,
) -> np.ndarray:
    """PipeDream's delay statistics (``pipelens-cli delays``) for one S or several: a structured
    array of :data:`DELAY_STATS_DTYPE`, one row per S (max, mean, percentiles over every block
    read of the updates from ``from_fraction`` K on, and the formula S^2 - S/2)::

        d = pipelens.delays(range(2, 17))
        (d["max"] == d["formula"]).all()
    """
    wanted = [stages] if isinstance(stages, int) else [int(s) for s in stages]
    if not wanted:
        raise ValueError("stages = [] is not allowed: an integer >= 1 or a non-empty list of them")
    lo, hi = min(wanted), max(wanted)
    rows = _core.delay_stats(lo, hi, microbatches or 0, float(from_fraction), _threads(threads))
    by_s = {r["stages"]: r for r in rows}
    out = np.empty(len(wanted), _DELAY_STATS_FIELDS)
    for i, s in enumerate(wanted):
        out[i] = tuple(by_s[s][name] for name, _ in _DELAY_STATS_FIELDS)
    return out


# ---------------------------------------------------------------------------------------------
# Sweeps and reproductions


def _csv_table(text: str) -> np.ndarray:
    """A CSV (header row) as a structured array: numeric columns as float64 (int64 where every
    value is an integer), the others as str."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    columns: list[np.ndarray] = []
    for j in range(len(header)):
        values = [row[j] if j < len(row) else "" for row in body]
        columns.append(_column(values))
    dtype = [(name, col.dtype) for name, col in zip(header, columns)]
    out = np.empty(len(body), dtype)
    for name, col in zip(header, columns):
        out[name] = col
    return out


def _column(values: Sequence[str]) -> np.ndarray:
    try:
        ints = [int(v) for v in values]
        return np.array(ints, dtype=np.int64)
    except ValueError:
        pass
    try:
        return np.array([float(v) if v != "" else np.nan for v in values], dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=str)


class SweepResult:
    """What :func:`sweep` returns: ``table`` (summary.csv as a structured array: one row per
    point and method), ``summary`` (summary.json as a dict) and the engine's notices."""

    def __init__(self, csv_text: str, json_text: str, notices: Sequence[str]) -> None:
        self.csv: str = csv_text
        self.table: np.ndarray = _csv_table(csv_text)
        self.summary: dict = json.loads(json_text)
        self.notices: list[str] = list(notices)

    def __repr__(self) -> str:
        return f"SweepResult({len(self.table)} rows: {', '.join(self.table.dtype.names or ())})"


def sweep(
    spec: Union[Mapping[str, Any], str, "os.PathLike[str]"],
    *,
    threads: Optional[int] = None,
    progress: Progress = None,
) -> SweepResult:
    """Runs a sweep (``pipelens-cli sweep``, docs/sweeps.md): the spec as a dict, JSON text or
    a file. Returns its summary table. Progress, GIL and Ctrl-C as :func:`run`::

        t = pipelens.sweep("examples/quick-noise-sweep.json").table
    """
    if isinstance(spec, Mapping):
        core_spec = _core.SweepSpec.from_text(json.dumps(dict(spec)), "sweep")
    elif isinstance(spec, str) and spec.lstrip().startswith("{"):
        core_spec = _core.SweepSpec.from_text(spec, "sweep")
    else:
        core_spec = _core.SweepSpec.from_file(os.fspath(spec))
    callback = _progress_callback(progress)
    csv_text, json_text, notices = _core.sweep(core_spec, _threads(threads), callback)
    if callback is not None:
        callback(1.0)
    return SweepResult(csv_text, json_text, notices)


class Reproduction:
    """What :func:`reproduce` returns: ``summary`` (summary.json's key numbers), ``figures``
    (each a dict: file, title, x_title, y_title, log_x, log_y, series: [{name, x, y, y_error,
    reference}]) and ``tables`` (file -> structured array series, x, y: the figure CSVs)."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.id: str = raw["id"]
        self.summary: dict = json.loads(raw["summary"])
        self.figures: list[dict] = [dict(f) for f in raw["figures"]]
        self.tables: dict[str, np.ndarray] = {
            f["file"]: _csv_table(f.pop("csv")) for f in self.figures
        }

    def __repr__(self) -> str:
        return f"Reproduction({self.id!r}, figures={[f['file'] for f in self.figures]})"


def reproduce(
    experiment: str,
    *,
    quick: bool = True,
    threads: Optional[int] = None,
    protocol: str = "notebook",
    seeds: int = 1,
) -> Reproduction:
    """Runs one of the paper's experiments E1 ... E5 (``pipelens-cli reproduce``) and returns
    its figures' data and summary (``quick``: the small CI version of the same protocol)::

        e4 = pipelens.reproduce("E4", quick=True)
    """
    raw = _core.reproduce(experiment, bool(quick), _threads(threads), protocol, seeds)
    return Reproduction(raw)


def gantt(result: Union[Result, Schedule], ax: Any = None, *, method: Union[int, str] = 0,
          slots: Optional[int] = None) -> Any:
    """Draws a schedule as a Gantt chart with matplotlib (the app's colours: forward sky blue,
    backward orange, I and W their own): one row per stage, one box per cell with its
    microbatch. ``result`` is a :class:`Result` (``method`` picks which, by index or label) or a
    :class:`Schedule`; ``slots`` limits the slots drawn. Returns the axes."""
    from ._plot import plot_gantt

    return plot_gantt(result, ax, method=method, slots=slots)
