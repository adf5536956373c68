"""AutoGraph's control-flow pass: each `if`, `while` and `for` becomes a call of an
operator in operators.py (`ag__.if_stmt`, `ag__.while_stmt`, `ag__.for_stmt`) that runs
it as Python or stages tf.cond / tf.while_loop, depending on what the condition or the
iterable is when the code runs; `a if c else b`, `and`, `or` and `not` become `ag__.if_exp`,
`ag__.and_`, `ag__.or_`, `ag__.not_`; calls go through `ag__.converted_call` so that the
user's helpers are converted too.

Branches and loop bodies become nested functions that rebind the enclosing variables with
`nonlocal`; `get_state`/`set_state` functions carry the names the statement outputs (those
it assigns and that are read afterwards, or by the next iteration: analysis.py). Every
generated node carries the line of the statement it replaces, so errors and tracebacks
point at the user's source.

Example: `to_code` shows the result::

    >>> def f(x):
    ...     if x > 0:
    ...         x = x * x
    ...     return x
    >>> print(tf.autograph.to_code(f))  # doctest: +SKIP
"""
import ast

from tensorlite.graph.autograph import analysis, lowering

_NO_CONVERT_CALLS = {"super", "locals", "globals", "vars", "eval", "exec", "dir"}


def _name(id_, store=False):
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _ag(attr):
    return ast.Attribute(value=_name("ag__"), attr=attr, ctx=ast.Load())


def _call(func, args, keywords=()):
    return ast.Call(func=func, args=list(args), keywords=list(keywords))


def _strs(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _tuple(names, store=False):
    return ast.Tuple(elts=[_name(n, store) for n in names],
                     ctx=ast.Store() if store else ast.Load())


def _located(nodes, like):
    """Gives every generated node without a location the location of `like`."""
    for top in nodes:
        for n in ast.walk(top):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                n.lineno, n.col_offset = like.lineno, like.col_offset
                n.end_lineno, n.end_col_offset = like.lineno, like.col_offset
    return nodes


def _def(name, params, body):
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=body or [ast.Pass()],
                           decorator_list=[], returns=None)


def _lambda(expr):
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    return ast.Lambda(args=args, body=expr)


class _Scope:
    """One function being converted: its parameters, globals and a name counter."""

    def __init__(self, fn, used):
        a = fn.args
        self.params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        self.params |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        self.globals = analysis.globals_of(fn.body)
        self.used = used

    def fresh(self, base):
        k = 0
        while f"{base}_{k}" in self.used:
            k += 1
        self.used.add(f"{base}_{k}")
        return f"{base}_{k}"


class ControlFlow(ast.NodeTransformer):
    def __init__(self):
        self.scopes = []
        self.used = set()

    # -- functions -----------------------------------------------------------------------
    def visit_FunctionDef(self, node):
        if not self.used:
            self.used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        lowering.lower(node)
        analysis.live_in(node.body, set())
        self.scopes.append(_Scope(node, self.used))
        try:
            node.body = self._block(node.body)
        finally:
            self.scopes.pop()
        return node

    def _block(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    # -- statements ----------------------------------------------------------------------
    def _scope_decls(self, names):
        """`nonlocal`/`global` lines rebinding `names` of the enclosing function."""
        scope = self.scopes[-1]
        glob = sorted(n for n in names if n in scope.globals)
        local = sorted(n for n in names if n not in scope.globals)
        out = [ast.Nonlocal(names=local)] if local else []
        return out + ([ast.Global(names=glob)] if glob else [])

    def _state_fns(self, names, like):
        scope = self.scopes[-1]
        get, set_ = scope.fresh("get_state"), scope.fresh("set_state")
        get_fn = _def(get, [], [ast.Return(value=_tuple(names))])
        body = self._scope_decls(names)
        if names:
            body.append(ast.Assign(targets=[_tuple(names, store=True)],
                                   value=_name("vars_")))
        set_fn = _def(set_, ["vars_"], body)
        return _located([get_fn, set_fn], like), get, set_

    def _defaults(self, names, like):
        """Binds the names in this function (nested functions rebind them with nonlocal):
        a name not yet set becomes `ag__.Undefined(name)`."""
        scope = self.scopes[-1]
        names = sorted(n for n in names if n not in scope.params and n not in scope.globals)
        if not names:
            return []
        value = _call(_ag("ld"), [_call(_name("locals"), []), _strs(names)])
        return _located([ast.Assign(targets=[_tuple(names, store=True)], value=value)], like)

    def visit_If(self, node):
        node.test = self.visit(node.test)
        body, orelse = self._block(node.body), self._block(node.orelse)
        changed = analysis.assigned(node.body + node.orelse)
        outputs = sorted(changed & node._ag_live_out)
        scope = self.scopes[-1]
        tname, fname = scope.fresh("if_body"), scope.fresh("else_body")
        decls = self._scope_decls(changed)
        fns = [_def(tname, [], decls + body),
               _def(fname, [], self._scope_decls(changed) + orelse)]
        state, get, set_ = self._state_fns(outputs, node)
        call = ast.Expr(_call(_ag("if_stmt"), [node.test, _name(tname), _name(fname),
                                               _name(get), _name(set_), _strs(outputs)]))
        return self._defaults(changed, node) + _located(fns, node) + state + \
            _located([call], node)

    def _loop_parts(self, node, extra_params=()):
        body = self._block(node.body)
        opts, body = _loop_options(body)
        changed = analysis.assigned(node.body) | (
            analysis.assigned([ast.Assign(targets=[node.target], value=ast.Constant(0))])
            if isinstance(node, ast.For) else set())
        live = node._ag_live_body | node._ag_live_out
        loop_vars = sorted(changed & live)
        scope = self.scopes[-1]
        bname = scope.fresh("loop_body")
        head = []
        if isinstance(node, ast.For):
            itr = extra_params[0]
            head = [ast.Assign(targets=[node.target], value=_name(itr))]
        fn = _def(bname, list(extra_params), self._scope_decls(changed) + head + body)
        state, get, set_ = self._state_fns(loop_vars, node)
        return (self._defaults(changed, node), _located([fn], node) + state, bname, get,
                set_, loop_vars, opts)

    def _extra_test(self, node):
        flags = getattr(node, "_ag_extra_test", [])
        if not flags:
            return None
        expr = _call(_ag("not_"), [_name(flags[0])])
        for f in flags[1:]:
            expr = _call(_ag("and_"), [_lambda(expr),
                                       _lambda(_call(_ag("not_"), [_name(f)]))])
        return expr

    def visit_While(self, node):
        node.test = self.visit(node.test)
        inits, fns, bname, get, set_, loop_vars, opts = self._loop_parts(node)
        test = node.test
        extra = self._extra_test(node)
        if extra is not None:
            test = _call(_ag("and_"), [_lambda(extra), _lambda(test)])
        tname = self.scopes[-1].fresh("loop_test")
        test_fn = _def(tname, [], [ast.Return(value=test)])
        call = ast.Expr(_call(_ag("while_stmt"), [_name(tname), _name(bname), _name(get),
                                                  _name(set_), _strs(loop_vars), opts]))
        orelse = self._block(node.orelse)
        return inits + _located([test_fn], node) + fns + _located([call], node) + orelse

    def visit_For(self, node):
        node.iter = self.visit(node.iter)
        itr = self.scopes[-1].fresh("itr")
        inits, fns, bname, get, set_, loop_vars, opts = self._loop_parts(node, (itr,))
        extra = self._extra_test(node)
        extra_fn = []
        extra_ref = ast.Constant(None)
        if extra is not None:
            ename = self.scopes[-1].fresh("extra_test")
            extra_fn = _located([_def(ename, [], [ast.Return(value=extra)])], node)
            extra_ref = _name(ename)
        call = ast.Expr(_call(_ag("for_stmt"), [node.iter, extra_ref, _name(bname),
                                                _name(get), _name(set_), _strs(loop_vars),
                                                opts]))
        orelse = self._block(node.orelse)
        return inits + extra_fn + fns + _located([call], node) + orelse

    # -- expressions ---------------------------------------------------------------------
    def visit_IfExp(self, node):
        self.generic_visit(node)
        new = _call(_ag("if_exp"), [node.test, _lambda(node.body), _lambda(node.orelse)])
        return _located([ast.copy_location(new, node)], node)[0]

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        new = _call(_ag(fn), [_lambda(v) for v in node.values])
        return _located([ast.copy_location(new, node)], node)[0]

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return _located([ast.copy_location(_call(_ag("not_"), [node.operand]), node)],
                        node)[0]

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _NO_CONVERT_CALLS or \
                isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == "ag__":
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        kw = ast.Dict(keys=[None if k.arg is None else ast.Constant(k.arg)
                            for k in node.keywords], values=[k.value for k in node.keywords])
        new = _call(_ag("converted_call"), [f, args, kw] if node.keywords else [f, args])
        return _located([ast.copy_location(new, node)], node)[0]


def _loop_options(body):
    """`tf.autograph.experimental.set_loop_options(...)` at the top of a loop body becomes
    the loop's options (a dict expression); it is removed from the body."""
    for i, s in enumerate(body):
        call = s.value if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) else None
        if call is not None and isinstance(call.func, ast.Attribute) and \
                call.func.attr == "converted_call" and call.args:
            target = call.args[0]
            name = getattr(target, "attr", getattr(target, "id", None))
            if name == "set_loop_options":
                kw = call.args[2] if len(call.args) > 2 else ast.Dict(keys=[], values=[])
                return kw, body[:i] + body[i + 1:]
    return ast.Constant(None), body


def convert_function_def(fn):
    """Converts an ast.FunctionDef in place (its nested functions too)."""
    return ControlFlow().visit(fn)
