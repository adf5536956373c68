"""The files a loaded SavedModel's graph may touch: its own `assets/` (read) and
`variables/` (read; written only by TensorFlow's saver ops), nothing else.

A SavedModel's functions are data from whoever wrote the directory: a table initializer
whose filename is a `Const` holding `/etc/passwd`, or a `WriteFile` into the user's home,
would otherwise run with the server's rights. Two checks keep them in:

- at load (`check_static`), every file-naming node reachable from the object graph (or a
  TF1 signature) must name its path by a constant or by the SavedModel's asset, resolved
  through calls, and the path must lie inside the allowed directory after
  `os.path.realpath` (so neither `..` nor a symlink escapes); anything else is a
  PermissionDeniedError naming the node and function;
- at run time (`Roots.check`), the op's actual path is checked again before it runs, since a
  path could still be computed in ways the static pass does not follow.

Example:
    >>> roots = Roots("/models/m")
    >>> roots.check(b"/models/m/assets/vocab.txt", "read", "node 'init' of f")  # fine
"""
import os

import numpy as np

from tensorlite.framework import errors
from tensorlite.protos.tf_graph_format import CALL_OPS, FILE_OPS, file_inputs  # noqa: F401

# FILE_OPS (the TensorFlow ops that name a file) and file_inputs are TensorFlow format facts,
# not registry ones: protos/tf_graph_format.py says why; they are re-exported here.


class Roots:
    """The directories a SavedModel's graph may read (`assets/`, `variables/`) and write
    (`variables/`), resolved once: the export directory through `realpath`, the
    subdirectories by name, so a symlinked `assets/` pointing elsewhere is not trusted."""

    def __init__(self, export_dir):
        base = os.path.realpath(os.fspath(export_dir))
        self.export_dir = export_dir
        self.read = (os.path.join(base, "assets"), os.path.join(base, "variables"))
        self.write = (os.path.join(base, "variables"),)

    def allows(self, path, mode):
        """Whether `path` (str or bytes) resolves inside one of the roots for `mode`."""
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str) or not path or "\0" in path:
            return False
        real = os.path.realpath(path)
        return any(real.startswith(root + os.sep) for root in
                   (self.read if mode == "read" else self.write))

    def check(self, path, mode, where):
        """PermissionDeniedError unless `path` lies inside the roots for `mode`."""
        if not self.allows(path, mode):
            allowed = " or ".join(self.read if mode == "read" else self.write)
            raise errors.PermissionDeniedError(
                None, None, f"SavedModel {self.export_dir}: {where} would {mode} {path!r}, "
                            f"outside the SavedModel's own {allowed}; a loaded model may only "
                            f"touch its own files. Rewrite the model to use "
                            f"tf.saved_model.Asset for the file it needs")

    def check_tensor(self, value, mode, where):
        """Checks every path a string tensor (or NumPy array) holds."""
        try:
            array = np.asarray(value.numpy() if hasattr(value, "numpy") else value,
                               dtype=object)
        except Exception:  # noqa: BLE001 - a symbolic tensor inside a trace has no value
            raise errors.PermissionDeniedError(
                None, None, f"SavedModel {self.export_dir}: {where} names its file by a "
                            f"value that is not known when it runs; a loaded model may only "
                            f"touch its own assets/ and variables/") from None
        for path in array.reshape(-1):
            self.check(path, mode, where)


# -- the static pass ----------------------------------------------------------------------------
def const_paths(node):
    """The strings of a Const node's value, or None if it holds none."""
    tensor = node.attr["value"].tensor if "value" in node.attr else None
    if tensor is None or not tensor.string_val:
        return None
    return list(tensor.string_val)


def resolve(ref, env, nodes, depth=0):
    """The paths a node input `ref` statically holds: a list of path strings, or None
    when it is computed (a placeholder, a user argument, any op other than Const and
    Identity)."""
    if depth > 64:
        return None
    name = ref.lstrip("^")
    if name in env:
        return env[name]
    node = nodes.get(name.split(":")[0])
    if node is None:
        return None
    if node.op == "Const":
        return const_paths(node)
    if node.op == "Identity" and node.input:
        return resolve(node.input[0], env, nodes, depth + 1)
    return None


class StaticCheck:
    """Walks functions from their entry points with what each argument statically holds,
    checking every file op on the way (each function once per distinct argument binding)."""

    def __init__(self, functions, roots):
        self.functions, self.roots = functions, roots
        self.seen = set()

    def check_node(self, node, env, nodes, where):
        """Checks the path inputs of one node; follows the functions it calls."""
        data = [r for r in node.input if not r.startswith("^")]
        for index, mode in file_inputs(node.op):
            place = f"node {node.name!r} ({node.op}) in {where}"
            paths = resolve(data[index], env, nodes) if index < len(data) else None
            if paths is None:
                raise errors.PermissionDeniedError(
                    None, None, f"SavedModel {self.roots.export_dir}: {place} names its file "
                                f"by a value computed at run time, not by a constant or the "
                                f"SavedModel's asset; a loaded model may only touch its own "
                                f"assets/ and variables/")
            for path in paths:
                self.roots.check(path, mode, place)
        for key, value in node.attr.items():
            kind = value.WhichOneof("value")
            if kind == "func":
                args = None
                if node.op in CALL_OPS and key == "f":
                    args = [resolve(r, env, nodes) for r in data]
                self.function(value.func.name, args)
            elif kind == "list":
                for func in value.list.func:
                    self.function(func.name, None)

    def function(self, name, args):
        """Checks function `name` called with statically known `args` (None: unknown)."""
        fdef = self.functions.get(name)
        if fdef is None:
            return  # (a missing function is the runner's NotFoundError when called)
        names = [a.name for a in fdef.signature.input_arg]
        args = list(args or [])[:len(names)]
        args += [None] * (len(names) - len(args))
        key = (name, tuple(tuple(a) if a is not None else None for a in args))
        if key in self.seen:
            return
        self.seen.add(key)
        env = dict(zip(names, args))
        nodes = {n.name: n for n in fdef.node_def}
        for node in fdef.node_def:
            self.check_node(node, env, nodes, f"function {name}")


def check_static(meta, roots, bound_paths):
    """Checks every function the object graph can call. `bound_paths(node_id)` gives the
    paths an object-graph node stands for as a bound input (an asset's file), or None."""
    check = StaticCheck({f.signature.name: f for f in meta.graph_def.library.function}, roots)
    graph = meta.object_graph_def
    for name, saved in graph.concrete_functions.items():
        fdef = check.functions.get(name)
        if fdef is None:
            continue
        n_args = len(fdef.signature.input_arg)
        bound = [bound_paths(i) for i in saved.bound_inputs]
        check.function(name, [None] * max(n_args - len(bound), 0) + bound)


def check_static_graph(graph_nodes, order, functions, roots, fed_paths):
    """Checks the nodes `order` of a TF1 graph; `fed_paths` maps node names to the paths
    they stand for (the asset constants TensorFlow feeds with the asset's path)."""
    check = StaticCheck(functions, roots)
    env = {name: paths for name, paths in fed_paths.items()}
    env.update({f"{name}:0": paths for name, paths in fed_paths.items()})
    for name in order:
        if name in graph_nodes and name not in fed_paths:
            check.check_node(graph_nodes[name], env, graph_nodes, "the TF1 graph")


__all__ = ["FILE_OPS", "Roots", "check_static", "check_static_graph", "const_paths",
           "file_inputs", "resolve"]
