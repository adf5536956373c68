"""Regular expressions as TensorFlow runs them: on RE2, in time linear in the text.

TensorFlow's regex ops (RegexFullMatch, RegexReplace, StaticRegexReplace) use RE2, which
never backtracks: `(a+)+$` on `"a" * 30 + "!"` takes microseconds, where a backtracking
engine (Python's `re`) takes hours. So every pattern a user gives runs on the `google-re2`
binding, a core dependency, with RE2's own meaning:

- strings are matched as UTF-8 bytes (`.` matches one character, invalid bytes pass
  through), `\\w \\d \\s \\b` are ASCII, `$` matches only at the end, `\\z` is end of
  text, POSIX classes (`[[:alpha:]]`) and `\\pL` work;
- what RE2 rejects (backreferences, lookaround, `\\Z`, too large a program) is an
  InvalidArgumentError naming the pattern, as in TensorFlow;
- a rewrite (`regex_replace`) is RE2's: `\\0`..`\\9` are groups, `\\\\` a backslash, any
  other escape or a group the pattern lacks is an InvalidArgumentError; a global replacement
  skips an empty match right after the previous match, as RE2::GlobalReplace does.

No tensorlite API offers Python's `re` for user patterns, so none runs there.

Example:
    >>> compile_pattern(r"\\w+").fullmatch(b"abc")
    True
"""
import functools

import re2

from tensorlite.framework import errors


def _options():
    options = re2.Options()
    options.log_errors = False  # a rejected pattern is our error, not a line on stderr
    return options


_OPTIONS = _options()


def _re2(pattern_bytes):
    return re2.compile(pattern_bytes, _OPTIONS)


# One pattern atom that matches exactly one byte (optionally repeated): a bracket class, an
# escaped byte or \d \w \s, or a plain byte; zero-width escapes (\b \A \z) are excluded.
_ONE_ATOM = _re2(rb"(?:\[(?:\\.|[^\\\]])+\]|\\[^bBAzG0-9a-zA-Z]|\\[dws]|"
                 rb"[^\\\[\]().*+?{}|^$])\+?")


def _ascii_classes_only(pattern):
    """ASCII, no '.' outside a class, no negated class, and no escape that names a
    character by number or property (\\x, \\p, \\C, \\Q, ...): then the pattern's bytes can
    only match ASCII bytes, which never occur inside a multi-byte UTF-8 character."""
    if not pattern.isascii():
        return False
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i:i + 1]
        if c == b"\\":
            nxt = pattern[i + 1:i + 2]
            if nxt.isalnum() and nxt not in (b"d", b"w", b"s", b"n", b"t", b"r", b"f", b"v"):
                return False
            i += 2
            continue
        if in_class:
            in_class = c != b"]"
        elif c == b"[":
            if pattern[i + 1:i + 2] == b"^":
                return False
            in_class = True
            if pattern[i + 1:i + 2] == b"]":
                i += 1  # a leading ']' is a literal
        elif c == b".":
            return False
        i += 1
    return True


def _span_matcher(compiled, anchor):
    """A function (bytes, pos) -> the spans of the match from `pos` (group 0 first, (-1, -1)
    for a group that did not take part), or None. The binding's own RE2::Match when it has
    one: its Python wrapper builds a generator and a match object per call, 5-10x the
    cost of the match itself; else the wrapper's public search/fullmatch."""
    regexp, anchors = getattr(compiled, "_regexp", None), getattr(re2, "_Anchor", None)
    if regexp is not None and anchors is not None and hasattr(regexp, "Match"):
        low, kind = regexp.Match, getattr(anchors, anchor)

        def match(b, pos=0):
            spans = low(kind, b, pos, len(b))
            return None if spans[0][0] < 0 else spans
        return match
    public = compiled.fullmatch if anchor == "ANCHOR_BOTH" else compiled.search

    def match(b, pos=0):
        m = public(b, pos)
        return None if m is None else [m.span(g) for g in range(compiled.groups + 1)]
    return match


class Pattern:
    """A compiled RE2 pattern that works on bytes (TensorFlow strings)."""

    def __init__(self, pattern, compiled, op_name):
        self.pattern = pattern  # bytes
        self._c = compiled
        self._op_name = op_name
        self._deleted = {}  # (template, count) -> deleted_bytes
        self._search = _span_matcher(compiled, "UNANCHORED")
        self._full = _span_matcher(compiled, "ANCHOR_BOTH")

    def fullmatch(self, b):
        return self._full(b) is not None

    def sub(self, template, b, count=0):
        """`b` with the first `count` (0: all) matches replaced by `template`
        (`rewrite_template`'s), as RE2::Replace / RE2::GlobalReplace."""
        return self.subber(template, count)(b)

    def deleted_bytes(self, template, count):
        """The bytes a replacement deletes when it is exactly "delete every byte of a
        class" (a global replacement by "" of one single-byte ASCII atom, optionally `+`:
        Keras's punctuation stripping), else None; bytes.translate then does it ~4x faster
        than a regex replacement, with the same result."""
        key = (template, count)
        if key not in self._deleted:
            one = (template == () and count == 0 and _ascii_classes_only(self.pattern)
                   and self._c.groups == 0 and _ONE_ATOM.fullmatch(self.pattern) is not None)
            self._deleted[key] = bytes(c for c in range(256) if self.fullmatch(
                bytes([c]))) if one else None
        return self._deleted[key]

    def subber(self, template, count=0):
        """A function bytes -> bytes doing `sub` (the hot loop of regex_replace)."""
        needed = max((p for p in template if isinstance(p, int)), default=0)
        if needed > self._c.groups:
            raise errors.InvalidArgumentError(
                None, None, f"{self._op_name}: Invalid rewrite pattern: it uses group "
                f"\\{needed}, but the pattern {self.pattern.decode('utf-8', 'replace')!r} "
                f"has only {self._c.groups} parenthesized subexpressions")
        search = self._search
        if count == 1:
            return lambda b: _replace_first(search, template, b)
        return lambda b: _replace_all(search, template, b)


def _expand(template, b, spans):
    """The rewrite of one match: literal pieces, and groups (empty if they took no part)."""
    if len(template) == 1 and isinstance(template[0], bytes):
        return template[0]
    out = []
    for p in template:
        if isinstance(p, bytes):
            out.append(p)
        elif spans[p][0] >= 0:
            out.append(b[spans[p][0]:spans[p][1]])
    return b"".join(out)


def _replace_first(search, template, b):
    spans = search(b)
    if spans is None:
        return b
    start, stop = spans[0]
    return b[:start] + _expand(template, b, spans) + b[stop:]


def _replace_all(search, template, b):
    """RE2::GlobalReplace: an empty match right where the previous match ended is skipped
    (one UTF-8 character is copied instead)."""
    out, p, end, last_end = [], 0, len(b), -1
    while p <= end:
        spans = search(b, p)
        if spans is None:
            break
        start, stop = spans[0]
        out.append(b[p:start])
        if start == stop == last_end:
            step = _char_len(b, p)
            out.append(b[p:p + step])
            p += max(step, 1)
            continue
        out.append(_expand(template, b, spans))
        p = last_end = stop
    if last_end < 0:
        return b
    out.append(b[p:])
    return b"".join(out)


def _char_len(b, p):
    """Bytes of the UTF-8 character at `p` (1 for an invalid byte; 0 at the end)."""
    if p >= len(b):
        return 0
    lead = b[p]
    n = 1 if lead < 0xC2 or lead > 0xF4 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if n > 1 and (p + n > len(b) or any(not 0x80 <= c <= 0xBF for c in b[p + 1:p + n])):
        return 1
    return n


def _as_bytes(text):
    return text if isinstance(text, bytes) else str(text).encode("utf-8", "surrogateescape")


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern, op_name="Regex"):
    """The RE2 pattern; InvalidArgumentError naming the op and the pattern when RE2
    rejects it (backreferences, lookaround, bad syntax, too large a program)."""
    raw = _as_bytes(pattern)
    try:
        compiled = _re2(raw)
    except re2.error as e:
        reason = e.args[0] if e.args else e
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: invalid pattern {raw.decode('utf-8', 'replace')!r}: "
            f"{reason}. TensorFlow's regex engine is RE2, which supports neither "
            f"backreferences nor lookaround; fix the regular expression (RE2 syntax)") from None
    return Pattern(raw, compiled, op_name)


@functools.lru_cache(maxsize=256)
def rewrite_template(rewrite, op_name="RegexReplace"):
    """RE2's rewrite string as a tuple of literal bytes and group numbers: `\\0`..`\\9` a
    group, `\\\\` a backslash; any other escape is an InvalidArgumentError, as RE2's
    CheckRewriteString makes it in TensorFlow."""
    raw = _as_bytes(rewrite)
    parts, literal, i = [], bytearray(), 0
    while i < len(raw):
        c = raw[i]
        if c != 0x5C:  # not a backslash
            literal.append(c)
            i += 1
            continue
        nxt = raw[i + 1:i + 2]
        if nxt == b"\\":
            literal += b"\\"
        elif nxt.isdigit():
            if literal:
                parts.append(bytes(literal))
                literal = bytearray()
            parts.append(int(nxt))
        else:
            raise errors.InvalidArgumentError(
                None, None, f"{op_name}: Invalid rewrite pattern: "
                f"{raw.decode('utf-8', 'replace')!r}: a backslash must be followed by a "
                f"digit (a group) or another backslash")
        i += 2
    if literal:
        parts.append(bytes(literal))
    return tuple(parts)
