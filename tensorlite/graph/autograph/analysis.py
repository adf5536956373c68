"""Static analysis of a function's AST for AutoGraph: which names a block assigns, and
which names are live (may be read before being written) at each control-flow statement.

The control-flow converter needs both: a branch or loop outputs only the names it assigns
that are read afterwards (or, for a loop, read by the next iteration), as in TensorFlow's
AutoGraph, so that a temporary defined in one branch only is no error while a result used
after the `if` is.

Example:
    >>> import ast
    >>> assigned(ast.parse("x = 1\\nfor i in y: z += i").body)
    {'x', 'i', 'z'}
"""
import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _walk_scope(node):
    """Nodes of `node` in its own scope (nested functions and classes contribute only the
    names they are bound to; their bodies are theirs)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, _COMPREHENSIONS):  # their targets are their own scope's
            todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, ast.comprehension))
            for gen in n.generators:
                todo.extend([gen.iter, *gen.ifs])
            continue
        todo.extend(ast.iter_child_nodes(n))


def assigned(stmts):
    """Names the statements bind in the current scope (assignments, loop targets, with-as,
    imports, nested defs), excluding those declared global."""
    out, glob = set(), set()
    for s in stmts:
        for n in _walk_scope(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, ast.alias):
                out.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.Global):
                glob.update(n.names)
    return out - glob


def globals_of(stmts):
    out = set()
    for s in stmts:
        for n in _walk_scope(s):
            if isinstance(n, ast.Global):
                out.update(n.names)
    return out


def loads(node):
    """Names a node reads, nested functions' free reads included (conservatively)."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
    return out


def _target_loads_and_stores(target):
    stores, reads = set(), set()
    for n in ast.walk(target):
        if isinstance(n, ast.Name):
            (stores if isinstance(n.ctx, ast.Store) else reads).add(n.id)
    return stores, reads


def live_in(stmts, live_out):
    """Names live before `stmts` given those live after; annotates each If/While/For with
    `_ag_live_out` and each loop with `_ag_live_body` (names live at the top of its body)."""
    live = set(live_out)
    for s in reversed(stmts):
        live = _live_stmt(s, live)
    return live


def _live_stmt(s, live):
    if isinstance(s, ast.If):
        s._ag_live_out = set(live)
        return loads(s.test) | live_in(s.body, live) | live_in(s.orelse, live)
    if isinstance(s, (ast.While, ast.For)):
        s._ag_live_out = set(live)
        after = live_in(s.orelse, live)
        head = loads(s.test) if isinstance(s, ast.While) else set()
        loop = after | head
        for _ in range(3):  # a fixpoint: names read by the next iteration stay live
            body = live_in(s.body, loop | after)
            if isinstance(s, ast.For):
                stores, reads = _target_loads_and_stores(s.target)
                body = (body - stores) | reads
            new = after | head | body | set(getattr(s, "_ag_extra_test", ()))
            if new == loop:
                break
            loop = new
        s._ag_live_body = loop
        return loop | (loads(s.iter) if isinstance(s, ast.For) else set())
    if isinstance(s, (ast.With, ast.AsyncWith)):
        inner = live_in(s.body, live)
        for item in s.items:
            if item.optional_vars is not None:
                inner -= _target_loads_and_stores(item.optional_vars)[0]
            inner |= loads(item.context_expr)
        return inner
    if isinstance(s, ast.Try):
        out = live_in(s.finalbody, live)
        out = live_in(s.body, live_in(s.orelse, out) | out)
        for h in s.handlers:
            out |= live_in(h.body, live)
        return out | live
    if isinstance(s, (ast.Return, ast.Raise)):
        return loads(s)
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (live - {s.name}) | loads(s)
    if isinstance(s, ast.AugAssign):
        return live | loads(s.value) | _target_loads_and_stores(s.target)[0] | \
            loads(s.target)
    kill = set()
    reads = set()
    for n in _walk_scope(s):
        if isinstance(n, ast.Name):
            (kill if isinstance(n.ctx, ast.Store) else reads).add(n.id)
    if isinstance(s, ast.Delete):
        kill, reads = set(), reads | {n.id for n in ast.walk(s) if isinstance(n, ast.Name)}
    return (live - kill) | reads
