"""Result.plot and pipelens.gantt draw with matplotlib in the app's colours."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

import pipelens  # noqa: E402
from conftest import small_config  # noqa: E402


def test_plot_uses_the_app_colours(tmp_path: Path) -> None:
    result = pipelens.run(small_config())
    ax = result.plot()
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [m.label for m in result]
    assert [to_hex(line.get_color()) for line in lines] == ["#0072b2", "#d55e00", "#009e73"]
    # RPD, without slots of its own, at the slots of PipeDream's updates.
    rpd_x = lines[1].get_xdata()
    assert rpd_x[0] == 0 and (rpd_x[1:] == result[1].update_slots + 1).all()
    ax.figure.savefig(tmp_path / "loss.png")
    assert (tmp_path / "loss.png").stat().st_size > 1000
    ax2 = result.plot(x="update")
    assert len(ax2.get_lines()) == 3
    plt.close("all")


def test_gantt_draws_every_cell(tmp_path: Path) -> None:
    s = pipelens.schedule("pd", stages=4, microbatches=6)
    ax = pipelens.gantt(s)
    boxes = sum(len(c.get_paths()) for c in ax.collections)
    assert boxes == len(s.cells)
    faces = {to_hex(c.get_facecolor()[0]) for c in ax.collections}
    assert faces == {"#56b4e9", "#e69f00"}
    ax.figure.savefig(tmp_path / "gantt.png")
    result = pipelens.run(small_config())
    ax = pipelens.gantt(result, method=result[0].label, slots=20)
    assert ax.get_title() == result[0].label
    plt.close("all")
