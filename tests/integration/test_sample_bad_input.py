"""``--sample`` larger than the data, zero or negative: one line on stderr, exit 2, nothing written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from culturebias.bootstrap.cli import main


def replay(tmp_path: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_bbq_cli import kobbq_replay

    return kobbq_replay(tmp_path / "answers.jsonl", limit=6)


@pytest.mark.parametrize("n", ["0", "-3", "100000"])
def test_a_sample_the_data_cannot_give_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, n):
    out = tmp_path / "out"
    answers = replay(tmp_path)
    code = None
    try:
        code = main(["run", "kobbq", "--out", str(out), "--set", "model.backend=replay", "--set", f"model.path={answers}",
                     "--set", "run.progress=false", f"--sample={n}"])
    except SystemExit as exit_:  # argparse refuses 0 and -3 itself
        code = exit_.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert code == 2 and len(lines) == 1 and "usage:" not in err
    assert ("2,280 items" in lines[0]) if n == "100000" else ("at least 1" in lines[0])
    assert not out.exists()
