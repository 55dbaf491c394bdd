"""The house style holds mechanically: ruff (pyflakes, import order, the common bug rules; the rule
sets and the reasons for each exception are in pyproject.toml) passes over every Python file of the
tree, in every lane, so a slip fails here before review."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_passes_over_the_whole_tree():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, f"ruff found (fix, or `ruff check --fix` where it offers one):\n{done.stdout}{done.stderr}"


def test_ruff_would_catch_an_unused_import_and_an_unsorted_block(tmp_path):
    """The check is live: the configuration's rules fire on a file that breaks them."""
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nimport os\n\nprint(os.sep)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(REPO / "pyproject.toml"),
                           "--output-format", "concise", str(bad)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "F401" in done.stdout and "I001" in done.stdout, done.stdout


def test_the_type_checker_passes():
    """mypy over the packages pyproject.toml's [tool.mypy] lists (the configuration says which and why)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    assert done.returncode == 0, f"mypy found:\n{done.stdout}{done.stderr}"


def test_the_type_checker_would_catch_a_wrong_argument(tmp_path):
    """The check is live: a call against a function's annotation fails it."""
    bad = tmp_path / "bad.py"
    bad.write_text("def half(n: int) -> int:\n    return n // 2\n\n\ndef main() -> None:\n    half('two')\n",
                   encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--config-file",
                           str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"), str(bad)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "[arg-type]" in done.stdout, done.stdout
