"""Regular expressions run on RE2, as TensorFlow's do: patterns that make a backtracking
engine take exponential (or quadratic) time finish, what RE2 rejects is an
InvalidArgumentError naming the pattern, and replacements follow RE2's rules."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.ops import regex

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Generous: these finish in well under a second on RE2; a backtracking engine needs hours.
# The bound only tells a hang from an answer; no test asserts how fast anything is.
_HANG = 20


def _run_bounded(code):
    """Runs `code` in a fresh interpreter; fails the test if it does not finish."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=_HANG, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("the regex op did not finish: catastrophic backtracking")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_catastrophic_patterns_finish():
    out = _run_bounded("""
        import tensorlite as tf
        S = tf.strings
        print(S.regex_full_match("a" * 30 + "!", "(a+)+$").numpy())
        print(S.regex_full_match(["x" * 5000], "(x+x+)+y").numpy()[0])
        print(S.regex_replace("a" * 40 + "!", "(a|aa)+$", "z").numpy().decode())
        print(S.regex_replace("a" * 40 + "!", "(a|a)*b", "z", replace_global=False)
              .numpy().decode())
    """)
    assert out == ["False", "False", "a" * 40 + "!", "a" * 40 + "!"]


def test_text_vectorization_standardize_runs_on_re2():
    out = _run_bounded("""
        import tensorlite as tf
        layer = tf.keras.layers.TextVectorization(output_mode="int",
                                                  standardize="lower_and_strip_punctuation")
        layer.adapt(["a b c"])
        print(layer(["A, b!" + "a" * 20000]).numpy().shape[0])
    """)
    assert out == ["1"]


def test_string_to_number_is_linear_on_long_digit_runs():
    out = _run_bounded("""
        import tensorlite as tf
        from tensorlite.framework import errors
        try:
            tf.strings.to_number("1" * 200000 + "x")
        except errors.InvalidArgumentError:
            print("refused")
    """)
    assert out == ["refused"]


@pytest.mark.parametrize("pattern", [r"a(?=b)", r"(?<!a)b", r"(a)\1", r"a\Z", "a{2000}",
                                     "[", "(ab", "*a", r"\p{NotAScript}"])
@pytest.mark.parametrize("op", ["full_match", "replace"])
def test_patterns_re2_rejects_are_invalid_argument_naming_them(pattern, op):
    with pytest.raises(errors.InvalidArgumentError) as info:
        if op == "full_match":
            tf.strings.regex_full_match(["ab"], pattern)
        else:
            tf.strings.regex_replace(["ab"], pattern, "")
    assert "invalid pattern" in str(info.value) and repr(pattern) in str(info.value)


@pytest.mark.parametrize("rewrite", ["\\n", "\\", "x\\a", "\\2"])
def test_bad_rewrites_are_invalid_argument(rewrite):
    with pytest.raises(errors.InvalidArgumentError, match="Invalid rewrite pattern"):
        tf.strings.regex_replace(["ab"], "(a)", rewrite)


def test_re2_meaning():
    S = tf.strings
    assert S.regex_replace("abxd", "x*", "-").numpy() == b"-a-b-d-"  # RE2::GlobalReplace
    assert S.regex_replace("h\xe9llo", "", "-").numpy() == "-h-\xe9-l-l-o-".encode()
    assert S.regex_replace("hello world", r"(\w+) (\w+)", r"\2 \1\\").numpy() == \
        b"world hello\\"
    assert S.regex_replace("aaa", "a", "b", replace_global=False).numpy() == b"baa"
    assert list(S.regex_full_match(["a\n", "a"], "a$").numpy()) == [False, True]
    assert list(S.regex_full_match(["\u03a9mega", "1"], r"\pL+").numpy()) == [True, False]
    assert S.regex_replace("a.b", "[[:punct:]]", "").numpy() == b"ab"
    assert S.regex_full_match("\xe9", ".").numpy()  # one character, two bytes


_CLASS_CHARS = list("!\"#$%&'()*+,-./:;<=>?@^_`{|}~abcXYZ019 ") + \
    ["\\d", "\\w", "\\s", "\\.", "\\]", "\\\\"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_CLASS_CHARS), min_size=1, max_size=6), st.booleans(),
       st.lists(st.text(alphabet="ab.,!-_ \u00e9\u03a9\n\\]0", max_size=12), min_size=1,
                max_size=4))
def test_fast_deletion_equals_re2_replacement(chars, plus, texts):
    """Deleting a class's bytes with bytes.translate (the Keras punctuation fast path) gives
    exactly what RE2's global replacement by "" gives."""
    pattern = ("[" + "".join(chars) + "]" + ("+" if plus else "")).encode()
    try:
        compiled = regex.compile_pattern(pattern, "RegexReplace")
    except errors.InvalidArgumentError:
        assume(False)  # "[^]" and the like: RE2 rejects them (tested above)
    deleted = compiled.deleted_bytes((), 0)
    data = [t.encode() for t in texts]
    slow = [compiled.subber((), 0)(b) for b in data]
    if deleted is not None:
        assert [b.translate(None, deleted) for b in data] == slow
    got = tf.strings.regex_replace(np.array(data, dtype=object), pattern, "").numpy()
    assert list(got) == slow


class _PublicOnly:
    """The binding's public interface only (no RE2::Match underneath)."""

    def __init__(self, compiled):
        self.search, self.fullmatch, self.groups = \
            compiled.search, compiled.fullmatch, compiled.groups


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([rb"x*", rb"(a)|(b)", rb"\s+", rb"(\w+) (\w+)", rb"\b", rb"$", rb"."]),
       st.text(alphabet="ab x\u00e9\n", max_size=10))
def test_fast_matcher_equals_the_public_interface(pattern, text):
    """The replacement loop gives the same on the binding's RE2::Match and on its public
    search (the fallback for bindings without it)."""
    import re2
    compiled = re2.compile(pattern)
    data = text.encode()
    for anchor in ("UNANCHORED", "ANCHOR_BOTH"):
        fast = regex._span_matcher(compiled, anchor)
        public = regex._span_matcher(_PublicOnly(compiled), anchor)
        for pos in range(len(data) + 1):
            assert fast(data, pos) == public(data, pos) if anchor == "UNANCHORED" \
                else fast(data) == public(data)
