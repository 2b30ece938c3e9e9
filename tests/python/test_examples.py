"""Every example in examples/: Python's results equal the CLI's files, value for value.

Result.save calls the CLI's own writer, so the folders are compared byte for byte (no file in
them holds a time or a process id once finished); the arrays are compared with the CSV values
too, so that what Python hands out is what the files say.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import pipelens
from conftest import example_configs, example_sweeps, run_cli


def read_folder(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def csv_columns(path: Path) -> dict[str, list[str]]:
    with path.open() as f:
        rows = list(csv.reader(f))
    return {name: [r[j] for r in rows[1:]] for j, name in enumerate(rows[0])}


def as_floats(values: list[str]) -> np.ndarray:
    return np.array([float(v) if v else np.nan for v in values])


@pytest.mark.parametrize("config", example_configs(), ids=lambda p: p.stem)
def test_run_matches_cli(config: Path, tmp_path: Path, chdir_repo: Path) -> None:
    cli_dir = tmp_path / "cli"
    py_dir = tmp_path / "python"
    run_cli("run", str(config), "--out", str(cli_dir), "--quiet")
    result = pipelens.run(config)
    result.save(py_dir)

    cli_files = read_folder(cli_dir)
    py_files = read_folder(py_dir)
    assert sorted(py_files) == sorted(cli_files)
    for name, content in cli_files.items():
        assert py_files[name] == content, f"{config.name}: {name} differs from the CLI's"

    summary = json.loads(cli_files["summary.json"])
    if result.config.to_dict()["objective"]["kind"] == "char_transformer":
        return  # the language model writes its own files (docs/language-model.md)
    assert result.summary == summary
    per_slot = csv_columns(cli_dir / "objective_per_slot.csv")
    per_update = csv_columns(cli_dir / "objective_per_update.csv")
    for i, m in enumerate(result.methods):
        if len(m.objective_per_slot):
            expected = as_floats(per_slot[m.label])[: len(m.objective_per_slot)]
            np.testing.assert_array_equal(m.objective_per_slot, expected)
        if len(m.objective_per_update):
            expected = as_floats(per_update[m.label])[: len(m.objective_per_update)]
            np.testing.assert_array_equal(m.objective_per_update, expected)
        timeline_csv = cli_dir / f"timeline_{i}.csv"
        if m.timeline is None:
            assert not timeline_csv.exists()
            continue
        cols = csv_columns(timeline_csv)
        cells = [j for j, op in enumerate(cols["op"]) if op != "average"]
        tl = m.timeline
        assert len(tl) == len(cells)
        for name in ("slot", "end_slot", "stage", "microbatch"):
            np.testing.assert_array_equal(tl[name], [int(cols[name][j]) for j in cells])
        # The CSV writes every backward-family cell (B, and ZB-H1's I and W) as B.
        np.testing.assert_array_equal(np.where(tl["op"] == "F", "F", "B"),
                                      [cols["op"][j] for j in cells])
        versions = [int(cols["version_read"][j]) if cols["version_read"][j] else -1 for j in cells]
        np.testing.assert_array_equal(tl["version_read"], versions)
        delays_csv = cli_dir / f"delays_{i}.csv"
        if m.delays is not None:
            d = csv_columns(delays_csv)
            stages = m.delays.shape[1]
            for j in range(stages):
                np.testing.assert_array_equal(m.delays[:, j],
                                              [int(v) for v in d[f"delay_block{j + 1}"]])
            np.testing.assert_array_equal(m.delay_updates["slot"], [int(v) for v in d["slot"]])


@pytest.mark.parametrize("spec", example_sweeps(), ids=lambda p: p.stem)
def test_sweep_matches_cli(spec: Path, tmp_path: Path, chdir_repo: Path) -> None:
    cli_dir = tmp_path / "cli"
    run_cli("sweep", str(spec), "--out", str(cli_dir), "--quiet")
    result = pipelens.sweep(spec)
    assert result.csv == (cli_dir / "summary.csv").read_text()
    assert result.summary == json.loads((cli_dir / "summary.json").read_text())
    assert len(result.table) == len(csv_columns(cli_dir / "summary.csv")["method"])
