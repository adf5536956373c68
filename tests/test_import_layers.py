"""The layering rule of docs/design.md, as import-linter's contracts in pyproject.toml say it:
the checkout keeps them, and an upward import breaks them (so the contract can fail)."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(cwd):
    assert LINT_IMPORTS.exists(), "lint-imports is missing: pip install '.[test]'"
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_the_checkout_keeps_every_layer_contract():
    run = _lint(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_an_upward_import_breaks_the_layer_contract(tmp_path):
    shutil.copytree(ROOT / "tensorlite", tmp_path / "tensorlite",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "tensorlite" / "framework" / "dtypes.py", "a") as f:
        f.write("\nfrom tensorlite.keras import losses  # an upward import\n")
    run = _lint(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "tensorlite.framework is not allowed to import tensorlite.keras" in run.stdout
    assert "tensorlite.framework.dtypes -> tensorlite.keras.losses" in run.stdout
