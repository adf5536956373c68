"""Every code block in README.md and docs/*.md runs, with its shown outputs checked (Sybil).

- ```python blocks run in order in one namespace per page; a block written as a doctest
  (`>>>` lines followed by the output) has that output compared, as doctest compares it.
- ```bash blocks run in bash (`set -e`) in the page's working directory, with `python` the
  interpreter running these tests and the repository importable.
- A block that is deliberately not run is preceded by `<!-- skip: next "why not" -->`
  (Sybil's marker); the reason is required and shown as the skip reason.
- ```text blocks are not code (shown output, file contents) and are not run; ```js blocks
  (TF.js's side of a page) are not run here and need a `<!-- shown: "where it is run" -->`.
Each page runs in a fresh temporary directory, so files one block writes are there for the
next block of the same page only.
"""
import doctest
import os
import re
import subprocess
import sys
import unittest

import pytest

sybil = pytest.importorskip("sybil", reason="the docs extra: pip install '.[docs]'")
from sybil import Sybil  # noqa: E402
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
RUN_LANGUAGES = {"python", "bash"}
NOT_CODE = {"text"}
# other languages (TF.js's side of a page): shown, never run here, so each is preceded by
# <!-- shown: "where it is run" --> (not Sybil's skip marker, which would skip the next
# python or bash block instead)
SHOWN_WITH_REASON = {"js", "javascript", "html"}
SHOWN = re.compile(r'<!--\s*shown:\s*"[^"]{10,}"\s*-->')
FENCE = re.compile(r"^(\s*)```(\S*)", re.M)
SKIP = re.compile(r"<!--\s*skip:\s*(\w+)(.*?)-->", re.S)
BASH_TIMEOUT_S = 300


def _bash(example):
    """Runs a ```bash block; a failing command fails the page with its output."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["PATH"] = example.namespace["_bin_dir"] + os.pathsep + env["PATH"]
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", example.parsed],
                          capture_output=True, text=True, env=env, timeout=BASH_TIMEOUT_S)
    if proc.returncode != 0:
        raise AssertionError(f"exit status {proc.returncode}\n{proc.stdout[-3000:]}"
                             f"{proc.stderr[-3000:]}")


def _sybil():
    return Sybil(parsers=[
        PythonCodeBlockParser(doctest_optionflags=doctest.NORMALIZE_WHITESPACE
                              | doctest.ELLIPSIS),
        CodeBlockParser(language="bash", evaluator=_bash),
        SkipParser(),
    ])


def _python_shim(tmp_path):
    """A bin directory whose `python` is this interpreter, for the bash blocks."""
    bin_dir = tmp_path / "_bin"
    bin_dir.mkdir()
    for name in ("python", "python3"):
        # a script, not a symlink: a venv's interpreter finds its venv by the path it was
        # started as
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


@pytest.mark.parametrize("page", PAGES)
def test_code_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from pathlib import Path
    document = _sybil().parse(Path(ROOT) / page)
    document.namespace["_bin_dir"] = _python_shim(tmp_path)
    starts, skipped = [], []
    for example in document:
        starts.append(example.region.start)
        try:
            example.evaluate()
        except unittest.SkipTest as why:
            skipped.append(f"line {example.line}: {why}")
        except Exception as error:
            raise AssertionError(f"{page}, the example at line {example.line} failed:\n"
                                 f"{error}") from error
    # every ```python and ```bash block was found and run (or skipped by its marker): a
    # block the parsers silently missed would otherwise pass unrun
    for line, (begin, end) in _run_blocks(document.text):
        assert any(begin <= start < end for start in starts), (
            f"{page}:{line}: this block was not run")
    if skipped:
        print(f"{page}: skipped", *skipped, sep="\n  ")


def _run_blocks(text):
    """(line, (start, end)) of each ```python or ```bash block of a page."""
    fences = list(FENCE.finditer(text))
    return [(text.count("\n", 0, opening.start()) + 1, (opening.start(), closing.end()))
            for opening, closing in zip(fences[::2], fences[1::2])
            if opening.group(2) in RUN_LANGUAGES]


@pytest.mark.parametrize("page", PAGES)
def test_every_block_is_run_or_marked(page):
    """A block in another language would silently not run; a skip must say why."""
    with open(os.path.join(ROOT, page)) as f:
        text = f.read()
    fences = list(FENCE.finditer(text))
    assert len(fences) % 2 == 0, f"{page}: an unclosed ``` fence"
    for opening in fences[::2]:
        lang = opening.group(2)
        line = text.count("\n", 0, opening.start()) + 1
        if lang in SHOWN_WITH_REASON:
            before = text[:opening.start()].rstrip()
            assert SHOWN.fullmatch(before[before.rfind("<!--"):]), (
                f"{page}:{line}: a ```{lang} block is not run here: precede it with "
                f'<!-- shown: "where it is run" -->')
            continue
        assert lang in RUN_LANGUAGES | NOT_CODE, (
            f"{page}:{line}: a ```{lang or '(no language)'} block: write ```python or ```bash "
            f"(run by this test) or ```text (shown output, not code)")
    for match in SKIP.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        assert match.group(1) in ("next", "start", "end"), f"{page}:{line}: {match.group(0)}"
        if match.group(1) != "end":
            assert re.fullmatch(r'\s*"[^"]{10,}"\s*', match.group(2)), (
                f'{page}:{line}: a skip marker needs its reason: <!-- skip: next "why" -->')


@pytest.mark.parametrize("page", PAGES)
def test_shown_outputs_are_doctests(page):
    """An output shown as a comment (`print(x)  # tf.Tensor(...)`) would not be checked:
    pages show outputs as doctests (`>>> print(x)` then the output line), which are."""
    with open(os.path.join(ROOT, page)) as f:
        text = f.read()
    for block in re.finditer(r"```python\n(.*?)```", text, re.S):
        if block.group(1).lstrip().startswith(">>>"):
            continue
        for line in block.group(1).splitlines():
            assert not re.search(r"#\s*(tf\.Tensor\(|<tf\.|array\(|\[\[)", line), (
                f"{page}: an output shown as a comment is not checked; write the block as a "
                f"doctest:\n{line}")


def test_the_all_extra_and_the_extras_table_name_every_runtime_extra():
    """`.[all]` installs every runtime extra (not the test or docs tools), and the README's
    table of extras describes each one, so a new extra cannot be left out of either."""
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    tools = {"test", "docs", "all"}
    runtime = set(extras) - tools
    (all_spec,) = extras["all"]
    named = set(re.fullmatch(r"tensorlite\[([\w,]+)\]", all_spec).group(1).split(","))
    assert named == runtime
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    in_table = set(re.findall(r"^\|[^|\n]*?`(\w+)`(?:, `(\w+)`)?", readme, re.M))
    in_table = {name for pair in in_table for name in pair if name}
    assert runtime | {"docs"} <= in_table, sorted(runtime | {"docs"} - in_table)
