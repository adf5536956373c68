"""AutoGraph's first pass: `return`, `break` and `continue` inside control flow become
assignments to flags, and the statements after them are guarded by `if not flag:`.

Once lowered, every `if` and loop is a plain statement with no jumps, so the control-flow
pass can turn it into a function call (tf.cond / tf.while_loop when its condition is a
tensor). A loop that a `break` or `return` leaves gets the flag in `_ag_extra_test`, which
the control-flow pass adds to its condition, as TensorFlow's AutoGraph does.

Example (schematically)::

    for x in xs:              break_ = False
        if x > 3:             for x in xs:   # extra test: not break_
            break      ->         if x > 3:
        s += x                        break_ = True
                                  if not break_:
                                      s += x
"""
import ast

RETURN_FLAG, RETVAL = "do_return", "retval_"
_LOOPS = (ast.For, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _contains(node, kinds, into_loops):
    """Whether `node` holds a statement of `kinds` at this level (not inside nested
    functions, nor inside nested loops unless `into_loops`)."""
    if isinstance(node, _SCOPES):
        return False
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, _SCOPES) or (isinstance(n, _LOOPS) and not into_loops):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def _assign(name, value, like):
    node = ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
    return ast.copy_location(node, like)


def _not(name, like):
    test = ast.UnaryOp(op=ast.Not(), operand=ast.Name(name, ast.Load()))
    return ast.copy_location(test, like)


class _Names:
    """Fresh flag names that clash with nothing in the function."""

    def __init__(self, fn):
        self.used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}

    def new(self, base):
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name


def _guard(stmts, kinds, replace, flag, into_loops):
    """Replaces the jumps of `kinds` in `stmts` (via `replace(stmt)` -> statements) and
    wraps what follows a statement that may jump in `if not flag:`."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, kinds):
            out.extend(replace(s))
            return out  # the rest is unreachable
        if isinstance(s, _LOOPS) and not into_loops or not _contains(s, kinds, into_loops):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if block:
                setattr(s, field, _guard(block, kinds, replace, flag, into_loops))
        for h in getattr(s, "handlers", ()):
            h.body = _guard(h.body, kinds, replace, flag, into_loops)
        out.append(s)
        rest = stmts[i + 1:]
        if rest:
            out.append(ast.copy_location(
                ast.If(test=_not(flag, rest[0]), body=_guard(rest, kinds, replace, flag,
                                                             into_loops), orelse=[]),
                rest[0]))
        return out
    return out


def _mark_loops_exited_by(stmts, flag):
    """Loops holding a lowered `return` stop when `flag` is set: they get it as an extra
    test (loops nested in them too)."""
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, _LOOPS) and _assigns_flag(n, flag):
                n._ag_extra_test = getattr(n, "_ag_extra_test", []) + [flag]


def _assigns_flag(loop, flag):
    return any(isinstance(n, ast.Name) and n.id == flag and isinstance(n.ctx, ast.Store)
               for n in ast.walk(loop))


class _LoopJumps(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_FunctionDef(self, node):  # nested functions are lowered on their own
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def _loop(self, node):
        self.generic_visit(node)  # inner loops first
        pre, post = [], []
        if _contains(node, ast.Continue, False):
            flag = self.names.new("continue_")
            node.body = [_assign(flag, ast.Constant(False), node)] + _guard(
                node.body, ast.Continue, lambda s, f=flag: [_assign(f, ast.Constant(True), s)],
                flag, False)
        if _contains(node, ast.Break, False):
            flag = self.names.new("break_")
            pre.append(_assign(flag, ast.Constant(False), node))
            node.body = _guard(node.body, ast.Break,
                               lambda s, f=flag: [_assign(f, ast.Constant(True), s)],
                               flag, False)
            node._ag_extra_test = getattr(node, "_ag_extra_test", []) + [flag]
            if node.orelse:  # `else` runs when no break happened
                post.append(ast.copy_location(ast.If(test=_not(flag, node), body=node.orelse,
                                                     orelse=[]), node.orelse[0]))
                node.orelse = []
        return pre + [node] + post

    visit_For = visit_While = _loop


def lower(fn):
    """Lowers jumps in the function definition `fn` (an ast.FunctionDef), in place."""
    names = _Names(fn)
    fn.body = [s for stmt in fn.body for s in _as_list(_LoopJumps(names).visit(stmt))]
    if not _needs_return_lowering(fn):
        return fn
    flag, retval = names.new(RETURN_FLAG), names.new(RETVAL)

    def replace(s):
        value = s.value if s.value is not None else ast.Constant(None)
        return [_assign(flag, ast.Constant(True), s), _assign(retval, value, s)]
    first = fn.body[0]
    init = [_assign(flag, ast.Constant(False), first),
            _assign(retval, _ag_call("UndefinedReturnValue", []), first)]
    body = _guard(fn.body, ast.Return, replace, flag, True)
    _mark_loops_exited_by(body, flag)
    last = fn.body[-1]
    fn.body = init + body + [ast.copy_location(
        ast.Return(value=_ag_call("retval", [ast.Name(retval, ast.Load())])), last)]
    fn._ag_retval = retval
    return fn


def _as_list(x):
    return x if isinstance(x, list) else [x]


def _ag_call(name, args):
    return ast.Call(func=ast.Attribute(value=ast.Name("ag__", ast.Load()), attr=name,
                                       ctx=ast.Load()), args=args, keywords=[])


def _needs_return_lowering(fn):
    """Only a return nested in control flow needs flags; a function whose returns are all
    its last top-level statement keeps them."""
    for i, s in enumerate(fn.body):
        if isinstance(s, ast.Return):
            return i != len(fn.body) - 1
        if _contains(s, ast.Return, True):
            return True
    return False
