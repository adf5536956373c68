"""Regular expressions with TensorFlow's (RE2's) meaning, run by Python's `re`.

TensorFlow's regex ops use RE2. Python's `re` is 10-20x faster per call from Python than the
`google-re2` binding (measured: `sub` on a 56-byte line, 2.0 us vs 37 us), so patterns run on
`re`, compiled to agree with RE2 where the two differ:

- strings are matched as UTF-8 text (decoded with `surrogateescape`, so invalid bytes pass
  through unchanged): `.` matches one character, not one byte, as in RE2;
- `\\w \\d \\s \\b` are ASCII-only (`re.ASCII`), as in RE2;
- RE2's `\\z` (end of text) is written `\\Z` for `re`, and RE2's POSIX classes inside
  brackets (`[[:alpha:]]`, `[[:digit:]_]`) become their ASCII ranges (`re` would silently
  read them as a set of the characters `[:alph`);
- what RE2 rejects, we reject too: backreferences (`\\1` in a pattern) and lookaround
  (`(?=`, `(?!`, `(?<=`, `(?<!`) are InvalidArgumentError, as TensorFlow reports them;
- what `re` cannot parse but RE2 can (`\\pL`, `\\p{Greek}`, `[[:alpha:]]`) runs on the
  `google-re2` binding when it is installed (the `text` extra).

Known remaining difference: without flags, RE2's `$` matches only at the end of the text;
`re`'s `$` also matches before a final newline (use `\\z` for RE2's meaning in both).

Example:
    >>> compile_pattern(r"\\w+").fullmatch(b"abc")
    True
"""
import functools
import re
import warnings

from tensorlite.framework import errors

_POSIX = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
          "lower": "a-z", "space": r" \t\n\r\f\v", "blank": r" \t", "xdigit": "0-9A-Fa-f",
          "word": r"\w", "cntrl": r"\x00-\x1f\x7f", "print": r"\x20-\x7e",
          "graph": r"\x21-\x7e", "punct": r"!-/:-@\[-`{-~", "ascii": r"\x00-\x7f"}
_POSIX_CLASS = re.compile(r"\[:(\^?)([a-z]+):\]")


def _posix_classes(pattern):
    def one(m):
        if m.group(1) or m.group(2) not in _POSIX:
            raise errors.InvalidArgumentError(
                None, None, f"invalid pattern {pattern!r}: unsupported character class "
                f"{m.group(0)!r}")
        return _POSIX[m.group(2)]
    return _POSIX_CLASS.sub(one, pattern)


_RE2_ONLY_REJECTS = re.compile(r"\(\?<?[=!]|(?<!\\)\\[1-9]")


# Constructs that could match part of a multi-byte UTF-8 character if run byte by byte. A
# pattern without them (and ASCII itself) matches exactly the same on the UTF-8 bytes as on
# the decoded text, since no byte of a multi-byte character is ASCII; such patterns run on
# the bytes directly, skipping a decode and an encode per string.
def _safe_on_bytes(pattern):
    """ASCII, and no '.' outside a class, no negated class, no \\W \\S \\D \\B \\p."""
    if not pattern.isascii():
        return False
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if pattern[i + 1:i + 2] in ("W", "S", "D", "B", "p", "P", "X", "C"):
                return False
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            if pattern[i + 1:i + 2] == "^":
                return False
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1  # a leading ']' is a literal
        elif c == ".":
            return False
        i += 1
    return True


# One pattern atom that matches exactly one byte (optionally repeated): a bracket class, an
# escaped byte or \d \w \s, or a plain byte; zero-width escapes (\b \A \Z) are excluded.
_ONE_ATOM = re.compile(rb"(?:\[(?:\\.|[^\\\]])+\]|\\[^bBAZzG0-9]|[^\\\[\]().*+?{}|^$])\+?")


class Pattern:
    """A compiled RE2-meaning pattern that works on bytes (TensorFlow strings)."""

    def __init__(self, compiled, on_bytes):
        self._c = compiled
        self._on_bytes = on_bytes
        self._deleted = {}  # (template, count) -> deleted_bytes

    def fullmatch(self, b):
        if self._on_bytes:
            return self._c.fullmatch(b) is not None
        return self._c.fullmatch(b.decode("utf-8", "surrogateescape")) is not None

    def sub(self, template, b, count=0):
        if self._on_bytes:
            return self._c.sub(template.encode("utf-8", "surrogateescape"), b, count=count)
        out = self._c.sub(template, b.decode("utf-8", "surrogateescape"), count=count)
        return out.encode("utf-8", "surrogateescape")

    def deleted_bytes(self, template, count):
        """The bytes a replacement deletes when it is exactly "delete every byte of a
        class" (a global replacement by "" of one single-byte atom, optionally `+`: Keras's
        punctuation stripping), else None; bytes.translate then does it ~4x faster than
        re.sub."""
        key = (template, count)
        if key not in self._deleted:
            one = (not template and count == 0 and self._on_bytes
                   and _ONE_ATOM.fullmatch(self._c.pattern) is not None)
            self._deleted[key] = bytes(c for c in range(256) if self._c.fullmatch(
                bytes([c]))) if one else None
        return self._deleted[key]

    def subber(self, template, count=0):
        """A function bytes -> bytes doing `sub` (the hot loop of regex_replace)."""
        if self._on_bytes:
            tb = template.encode("utf-8", "surrogateescape")
            sub = self._c.sub
            if count == 0:
                return lambda b: sub(tb, b)
            return lambda b: sub(tb, b, count=count)
        return lambda b: self.sub(template, b, count)


class _Re2Pattern:
    """The google-re2 binding behind `re`'s interface (text in, text out)."""

    def __init__(self, compiled):
        self._c = compiled

    def fullmatch(self, s):
        return self._c.fullmatch(s)

    def search(self, s):
        return self._c.search(s)

    def sub(self, repl, s, count=0):
        return self._c.sub(repl, s, count=count)


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern, op_name="Regex"):
    """A compiled pattern with RE2's meaning; InvalidArgumentError naming the op for a
    pattern RE2 would reject."""
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8", "surrogateescape")
    if _RE2_ONLY_REJECTS.search(pattern):
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: invalid pattern {pattern!r}: RE2 (TensorFlow's regex "
            f"engine) supports neither backreferences nor lookaround; rewrite the pattern "
            f"without them")
    py_pattern = _posix_classes(pattern.replace(r"\z", r"\Z"))
    on_bytes = _safe_on_bytes(py_pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # re's FutureWarning on "[[" (RE2: a literal)
            compiled = re.compile(py_pattern.encode() if on_bytes else py_pattern, re.ASCII)
        return Pattern(compiled, on_bytes)
    except re.error as e:
        re2 = _re2_compile(pattern)
        if re2 is not None:
            return Pattern(re2, False)
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: invalid pattern {pattern!r}: {e}; fix the regular "
            f"expression (RE2 syntax)") from None


def _re2_compile(pattern):
    try:
        import re2  # noqa: PLC0415 - optional (the `text` extra)
    except ImportError:
        return None
    try:
        return _Re2Pattern(re2.compile(pattern))
    except Exception:  # noqa: BLE001 - re2 rejects it too: report re's message
        return None


def rewrite_template(rewrite):
    """RE2's rewrite string (`\\1` groups, `\\\\` a backslash) as a `re.sub` template."""
    if isinstance(rewrite, bytes):
        rewrite = rewrite.decode("utf-8", "surrogateescape")
    return re.sub(r"\\(\d)", r"\\g<\1>", rewrite)
