"""The API's promises: dtypes and shapes, errors, progress, Ctrl-C, schedules and delays."""

from __future__ import annotations

import _thread
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import pipelens
from conftest import small_config


@pytest.fixture(scope="module")
def small_result() -> pipelens.Result:
    return pipelens.run(small_config())


def test_curves_are_float64_views(small_result: pipelens.Result) -> None:
    pd, rpd, local = small_result.methods
    assert [m.method for m in small_result] == ["pd", "rpd", "localsgd"]
    for m in (pd, local):
        c = m.objective_per_slot
        assert c.dtype == np.float64 and c.ndim == 1
        assert len(c) == m.total_slots + 1
        assert not c.flags.writeable and not c.flags.owndata  # the engine's storage, no copy
    assert len(rpd.objective_per_slot) == 0
    for m in small_result:
        assert m.objective_per_update.dtype == np.float64
        assert len(m.objective_per_update) == m.updates
        np.testing.assert_array_equal(m.gap_per_update,
                                      m.objective_per_update - small_result.optimum)
        assert m.final_gap == pytest.approx(m.final_objective - small_result.optimum)
        assert m.step_size == 0.05


def test_timeline_and_delays(small_result: pipelens.Result) -> None:
    pd = small_result[small_result[0].label]
    assert pd is small_result[0]
    tl = pd.timeline
    assert tl.dtype == pipelens.TIMELINE_DTYPE
    assert set(np.unique(tl["op"])) == {"F", "B"}
    assert (tl["method"] == 0).all()
    assert tl["stage"].min() == 1 and tl["stage"].max() == 4
    backward = tl[tl["op"] == "B"]
    assert (backward["staleness"] >= 0).all() and (tl[tl["op"] == "F"]["staleness"] == -1).all()
    assert backward["staleness"].max() == pd.max_delay
    d = pd.delays
    assert d.dtype == np.int64 and d.shape == (pd.updates, 4)
    assert pd.delay_updates.shape == (pd.updates,)
    assert small_result[1].timeline is None and small_result[1].delays is None
    both = small_result.timeline
    assert set(np.unique(both["method"])) == {0, 2}


def test_grid_and_chosen_step() -> None:
    cfg = small_config(methods=[{"method": "pd", "step_size": {"grid": [-6, -2]}}])
    m = pipelens.run(cfg).methods[0]
    assert m.grid.dtype.names == ("step_size", "final_gap", "diverged")
    np.testing.assert_array_equal(m.grid["step_size"], 2.0 ** np.arange(-6, -1))
    assert m.step_size in m.grid["step_size"]
    ok = m.grid[~m.grid["diverged"]]
    assert m.final_gap == pytest.approx(ok["final_gap"].min())


@pytest.mark.parametrize(
    "change, words",
    [
        ({"stages": 0}, ["stages", "0"]),
        ({"batch_size": -1}, ["batch_size", "-1"]),
        ({"methods": [{"method": "nope", "step_size": 0.1}]}, ["method", "nope", "pd"]),
        ({"colour": "red"}, ["colour"]),
    ],
)
def test_bad_config_names_field_and_value(change: dict, words: list[str]) -> None:
    with pytest.raises(ValueError) as e:
        pipelens.Config(small_config(**change))
    for w in words:
        assert w in str(e.value)


def test_config_sources_agree(tmp_path: Path) -> None:
    cfg = pipelens.Config(small_config())
    path = tmp_path / "c.json"
    path.write_text(cfg.to_json())
    assert pipelens.Config(path) == cfg
    assert pipelens.Config(str(path)) == cfg
    assert pipelens.Config(cfg.to_json()) == cfg
    assert cfg.replace({"stages": 2}).stages == 2
    with pytest.raises(ValueError, match="is not valid JSON|JSON"):
        pipelens.Config("{not json")
    with pytest.raises(ValueError):
        pipelens.Config(tmp_path / "missing.json")
    with pytest.raises(TypeError):
        pipelens.Config(42)  # type: ignore[arg-type]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="threads"):
        pipelens.run(small_config(), threads=-1)
    with pytest.raises(TypeError, match="progress"):
        pipelens.run(small_config(), progress="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stages"):
        pipelens.schedule("pd", stages=0, microbatches=4)
    with pytest.raises(ValueError, match="kind|nope"):
        pipelens.schedule("nope", stages=4, microbatches=4)
    with pytest.raises(ValueError, match="from_fraction"):
        pipelens.delays(4, from_fraction=1.5)
    with pytest.raises(ValueError):
        pipelens.reproduce("E9")


def test_save_refuses_a_folder_that_is_not_results(tmp_path: Path,
                                                   small_result: pipelens.Result) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises((ValueError, OSError)):
        small_result.save(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def slow_config(microbatches: int = 20000) -> dict:
    # 20000 microbatches: about ten seconds on two cores, long enough to be interrupted.
    return small_config(
        data={"source": "synthetic", "kind": "logistic", "rows": 600, "dim": 512, "seed": 1},
        objective={"kind": "logistic", "l2": 1e-4},
        stages=32,
        budget={"microbatches": microbatches},
        methods=[{"method": "pd", "step_size": {"grid": [-8, 0]}}],
    )


def engine_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def test_progress_is_reported_on_the_calling_thread() -> None:
    seen: list[tuple[float, int]] = []
    pipelens.run(slow_config(400), progress=lambda f: seen.append((f, threading.get_ident())))
    fractions = [f for f, _ in seen]
    assert len(fractions) >= 3 and fractions[-1] == 1.0 and fractions.count(1.0) == 1
    assert fractions == sorted(fractions)
    assert {t for _, t in seen} == {threading.get_ident()}


def test_keyboard_interrupt_stops_cleanly() -> None:
    before = engine_threads()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        pipelens.run(slow_config())
    took = time.monotonic() - start
    timer.join()
    assert took < 5.0, f"the run stopped {took:.1f} s after the start, 0.5 s after Ctrl-C"
    assert engine_threads() == before  # every engine thread has ended


def test_exception_in_progress_cancels_the_run(tmp_path: Path) -> None:
    before = engine_threads()

    def boom(fraction: float) -> None:
        if fraction > 0.0:
            raise RuntimeError("stop here")

    start = time.monotonic()
    with pytest.raises(RuntimeError, match="stop here"):
        pipelens.run(slow_config(), progress=boom)
    assert time.monotonic() - start < 5.0
    assert engine_threads() == before
    assert list(tmp_path.iterdir()) == []


def test_gil_is_released_while_running() -> None:
    ticks = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    start = time.monotonic()
    pipelens.run(slow_config(400))
    took = time.monotonic() - start
    stop.set()
    t.join()
    # A thread that waited for the GIL the whole run would tick once.
    assert len(ticks) >= min(5, int(took / 0.02)), f"{len(ticks)} ticks in {took:.2f} s"


def test_schedule() -> None:
    s = pipelens.schedule("pd", stages=4, microbatches=8)
    assert s.cells.dtype == pipelens.TIMELINE_DTYPE
    assert len(s.cells) == 2 * 4 * 8
    assert s.total_slots == s.cells["end_slot"].max() + 1
    assert 0.0 < s.bubble_fraction < 1.0
    z = pipelens.schedule("zb-h1", stages=4, microbatches=8, backward_slots=2)
    assert set(np.unique(z.cells["op"])) == {"F", "I", "W"}
    lsgd = pipelens.schedule("localsgd", stages=4, microbatches=8, local_steps=2)
    assert len(lsgd.averaging_slots) > 0


def test_delays_formula() -> None:
    d = pipelens.delays(range(2, 13))
    assert d.dtype == pipelens.DELAY_STATS_DTYPE
    np.testing.assert_array_equal(d["stages"], np.arange(2, 13))
    s = d["stages"].astype(float)
    np.testing.assert_array_equal(d["formula"], np.floor(s ** 2 - s / 2))
    assert (d["max"] == d["formula"]).all()
    assert pipelens.max_delay_formula(8) == 60
    one = pipelens.delays(8, microbatches=40)
    assert one.shape == (1,) and one["microbatches"][0] == 40


def test_reproduce_quick_e1() -> None:
    rep = pipelens.reproduce("E1", quick=True)
    assert rep.id == "E1"
    assert rep.figures and rep.tables
    for f in rep.figures:
        for s in f["series"]:
            assert s["x"].dtype == np.float64 and s["x"].shape == s["y"].shape
        assert rep.tables[f["file"]].dtype.names == ("series", "x", "y")
    assert isinstance(rep.summary, dict)


def test_to_pandas(small_result: pipelens.Result) -> None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            small_result.to_pandas()
        return
    df = small_result.to_pandas()
    assert list(df.columns) == ["method", "axis", "x", "objective", "gap"]
    assert set(df["method"]) == {m.label for m in small_result}


def test_sweep_progress_and_table(chdir_repo) -> None:
    seen: list[float] = []
    sw = pipelens.sweep("examples/quick-noise-sweep.json", progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    t = sw.table
    assert t.dtype["gradient_noise"] == np.float64 and t.dtype["final_gap_mean"] == np.float64
    assert t.dtype["point"] == np.int64 and t.dtype["method"].kind == "U"
    assert len(t) == 4 * 2  # points x methods


def test_progress_true_drives_tqdm(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in for tqdm.auto.tqdm (tqdm is not a dependency): progress=True must drive it.
    import sys
    import types

    bars = []

    class FakeBar:
        def __init__(self, total: float, **kwargs: object) -> None:
            self.total, self.n, self.closed = total, 0.0, False
            bars.append(self)

        def update(self, step: float) -> None:
            self.n += step

        def close(self) -> None:
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeBar  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    pipelens.run(small_config(), progress=True)
    assert len(bars) == 1 and bars[0].n == pytest.approx(1.0) and bars[0].closed


def test_progress_true_without_tqdm(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    pipelens.run(small_config(), progress=True)
    assert "pipelens: 100.0 %" in capsys.readouterr().err


def test_optimizers_and_correctors() -> None:
    """The optimizer and the correctors are config keys; they change the run, label it, and
    accumulation's effective delays come back beside the schedule's."""
    methods = [
        {"method": "pd", "step_size": 0.05},
        {"method": "pd", "step_size": 0.05, "optimizer": {"kind": "momentum", "beta": 0.5},
         "correctors": [{"kind": "prediction"}, {"kind": "accumulate", "k": 2}]},
    ]
    plain, corrected = pipelens.run(small_config(methods=methods)).methods
    assert corrected.label == "PipeDream + momentum (beta=0.5) + prediction (exact s) + " \
                              "accumulate (k=2)"
    assert not np.array_equal(plain.objective_per_slot, corrected.objective_per_slot)
    assert plain.effective_delays is None
    eff = corrected.effective_delays
    assert eff is not None and eff.shape == corrected.delays.shape
    # About half the updates take effect, so reads cross fewer of them on the whole (a gradient
    # that waits for its group can cross more than the schedule's count, so not cell by cell).
    assert eff.mean() < 0.75 * corrected.delays.mean()
    assert not np.array_equal(eff, corrected.delays)
    with pytest.raises(ValueError, match=r"correctors\[0\]\.k = 0 is not allowed"):
        pipelens.run(small_config(methods=[{"method": "pd", "step_size": 0.05,
                                            "correctors": [{"kind": "accumulate", "k": 0}]}]))
