"""The README's two quick-start commands, copied from README.md itself, so they cannot drift.

The first command (make a venv, install `.[examples]`, run the main job) runs verbatim in
a fresh copy of the repository. The second, `bash .ci/run`, is CI itself, which runs this
test: running it here would recurse, so the test checks that the README's command is
exactly that and that the script it names is there to run.
"""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
CI_COMMAND = "bash .ci/run"
MAIN_JOB_TIMEOUT_S = 1800   # a venv and its packages, then about 10 s of training


def quick_start_commands(readme_text):
    """The ```bash blocks of the README's "## Quick start" section, in order."""
    match = re.search(r"^## Quick start\n(.*?)(?=^## )", readme_text, re.S | re.M)
    assert match, "README.md has no '## Quick start' section"
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", match.group(1), re.S)]


def _commands():
    with open(README) as f:
        return quick_start_commands(f.read())


def test_readme_has_the_two_quick_start_commands():
    commands = _commands()
    assert len(commands) == 2, commands
    main_job, ci = commands
    assert "examples/train_digits_cnn.py" in main_job and "\n" not in main_job
    # the second command is CI: this test runs inside it, so it checks the command instead
    assert ci == CI_COMMAND, f"README's test command changed: {ci!r}"
    script = os.path.join(ROOT, ".ci", "run")
    assert os.path.isfile(script) and os.access(script, os.X_OK)
    with open(script) as f:
        assert "pytest" in f.read()


def test_quick_start_parser_reads_only_that_section():
    text = ("# x\n## Quick start\n\n```bash\na\n```\n\n```bash\nb c\n```\n"
            "## Next\n```bash\nnot this\n```\n")
    assert quick_start_commands(text) == ["a", "b c"]


def _copy_of_the_repository(dest):
    """The files git tracks or would track (no venvs, caches or build output)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))


@pytest.mark.slow
def test_main_job_command_runs_verbatim_in_a_fresh_venv(tmp_path):
    if shutil.which("git") is None or not os.path.exists(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout: the copy of the repository is made from git ls-files")
    main_job = _commands()[0]
    repo = tmp_path / "tensorlite"
    _copy_of_the_repository(str(repo))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(["bash", "-e", "-c", main_job], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=MAIN_JOB_TIMEOUT_S)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-5000:]
    assert os.path.isfile(repo / ".venv" / "bin" / "python")
    accuracy = re.search(r"held-out loss [\d.]+, accuracy ([\d.]+)", output)
    assert accuracy, output[-3000:]
    # the README promises accuracy above 0.95
    assert float(accuracy.group(1)) > 0.95, output[-3000:]
    assert "the reloaded model agrees on 100%" in output, output[-3000:]
