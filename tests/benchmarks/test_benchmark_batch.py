"""benchmarks/batch.py end to end on a tiny node budget: every executor compiles every filter to the same
programs."""

import pytest

from benchmarks import batch


@pytest.mark.long
def test_batch_benchmark_runs_and_the_executors_agree(tmp_path, capsys):
    assert batch.main(["--samples", "2", "--budget", "60", "--out", str(tmp_path), "--quiet"]) == 0
    summary = (tmp_path / "summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "executor" not in line]
    assert len(rows) >= 2 and all(" 2 " in r and r.rstrip(" |").endswith("yes") for r in rows)
    assert "every program verified" in capsys.readouterr().out
