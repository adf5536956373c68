"""A SavedModel's protocol buffer checked before anything is built from it.

`saved_model.pb` comes from whoever wrote the directory; the loader indexes lists by the ids
it holds, follows the node names its functions give and allocates the tensors its constants
claim. Each of those is checked here first, so that a corrupt or crafted file is a
DataLossError (structure: an id out of range, an input naming no node, a function calling
itself) or a ResourceExhaustedError (a constant whose repeated value expands past the
decompression cap) naming the file, never a raw IndexError/KeyError/RecursionError or an
attempted allocation of what the file only claims.

Example:
    >>> check_meta_graph(meta, "/models/m/saved_model.pb")
"""
import numpy as np

from tensorlite.framework import errors, size_limits
from tensorlite.summary.graph_def import dtype_from_datatype

# Deepest chain of calls a library may have: the loader's walks and the runner recurse once per
# call (TensorFlow's own nest a handful deep).
MAX_CALL_DEPTH = 64
# What a concrete function's bound inputs may be (TensorFlow's captures).
_CAPTURABLE = ("variable", "resource", "asset", "constant", "captured_tensor")


def _corrupt(source, what):
    return errors.DataLossError(None, None, f"{source}: {what}; the SavedModel is corrupt or "
                                            f"was not written by TensorFlow/tensorlite")


# -- constants --------------------------------------------------------------------------------
def _np_dtype(dtype):
    try:
        return np.dtype(dtype.as_numpy_dtype)
    except TypeError:  # a dtype NumPy cannot hold (bfloat16 without ml_dtypes): 2 bytes
        return np.dtype(np.uint16)


def _itemsize(dtype):
    """Bytes one element of `dtype` takes once built (a string: one object pointer)."""
    return 8 if dtype.is_string else _np_dtype(dtype).itemsize


def _field_count(proto):
    """How many values a TensorProto holds in its repeated value fields."""
    return max((len(getattr(proto, f.name)) for f in proto.DESCRIPTOR.fields
                if f.name.endswith("_val")), default=0)  # (all repeated)


def check_tensor_proto(proto, source, what="constant"):
    """Checks a TensorProto's claimed shape against its bytes before it is built: packed
    bytes (`tensor_content`) shorter than the shape needs are a DataLossError; a value
    repeated to fill the shape (TensorFlow's splat) is an expansion, a
    ResourceExhaustedError past `size_limits.decompression_cap()`."""
    dtype = dtype_from_datatype(proto.dtype)
    if dtype is None:
        return  # (resource, variant: running such a constant is an UnimplementedError)
    shape = [d.size for d in proto.tensor_shape.dim]
    if any(d < 0 for d in shape):
        raise _corrupt(source, f"{what} has shape {shape}, with a negative dimension")
    if proto.tensor_content and not dtype.is_string:
        size_limits.check_shape(shape, _np_dtype(dtype), len(proto.tensor_content), what,
                                source)
        return
    need = size_limits.shape_bytes(shape, np.uint8) * _itemsize(dtype)
    present = _field_count(proto) * _itemsize(dtype)
    if need > present:
        size_limits.check_inflated(need, f"{what} of shape {shape} (from {_field_count(proto)} "
                                         f"stored values)", source)


def _tensors_of(node):
    """The TensorProtos among a node's attributes (a Const's value, a list of them)."""
    for value in node.attr.values():
        kind = value.WhichOneof("value")
        if kind == "tensor":
            yield value.tensor
        elif kind == "list":
            yield from value.list.tensor


# -- functions --------------------------------------------------------------------------------
def _called(node):
    """Names of the library functions a node runs (a call's `f`, a branch, a loop body)."""
    for value in node.attr.values():
        kind = value.WhichOneof("value")
        if kind == "func":
            yield value.func.name
        elif kind == "list":
            yield from (f.name for f in value.list.func)


def _check_refs(fdef, source):
    """Every input of every node and every return value names an argument or a node."""
    name = fdef.signature.name
    known = {a.name for a in fdef.signature.input_arg} | {n.name for n in fdef.node_def}
    refs = [(n.name, ref) for n in fdef.node_def for ref in n.input]
    refs += [("its return value", ref) for ref in fdef.ret.values()]
    for where, ref in refs:
        parts = ref.lstrip("^").split(":")
        if parts[0] not in known:
            raise _corrupt(source, f"function {name}: {where} takes input {ref!r}, which names "
                                   f"no node or argument of the function")
        if len(parts) > 1 and not parts[-1].isdigit():
            raise _corrupt(source, f"function {name}: {where} takes input {ref!r}, whose "
                                   f"output index is not a number")


def _check_acyclic(name, edges, source, what):
    """DataLossError naming the cycle if the directed graph `edges` (node -> successors)
    has one; iterative, so a long chain cannot exhaust Python's stack."""
    state = {}  # 1: on the current path, 2: done
    for start in edges:
        if state.get(start):
            continue
        path, stack = [], [(start, iter(edges.get(start, ())))]
        state[start] = 1
        path.append(start)
        while stack:
            node, succ = stack[-1]
            nxt = next(succ, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise _corrupt(source, f"{name}: {what} form a cycle "
                                       f"({' -> '.join(cycle)})")
            elif not state.get(nxt) and nxt in edges:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(edges.get(nxt, ()))))
    return True


def check_library(library, source):
    """Every function's inputs resolve, no function's nodes depend on each other in a
    cycle, and no function calls itself directly or through others (TensorFlow has no
    recursive functions; running one would only exhaust the stack)."""
    calls = {}
    for fdef in library.function:
        _check_refs(fdef, source)
        deps = {n.name: [r.lstrip("^").split(":")[0] for r in n.input] for n in fdef.node_def}
        _check_acyclic(f"function {fdef.signature.name}", deps, source, "its nodes' inputs")
        calls[fdef.signature.name] = [c for n in fdef.node_def for c in _called(n)]
        for node in fdef.node_def:
            for tensor in _tensors_of(node):
                check_tensor_proto(tensor, source, f"constant {node.name!r} of function "
                                                   f"{fdef.signature.name}")
    _check_acyclic("the function library", calls, source, "function calls")
    deepest = max(_call_depths(calls).values(), default=0)
    if deepest > MAX_CALL_DEPTH:
        raise _corrupt(source, f"the function library nests calls {deepest} deep, more than "
                               f"{MAX_CALL_DEPTH}")


def _call_depths(calls):
    """function -> length of the longest chain of calls from it (`calls` is acyclic),
    without recursion."""
    depth = {}
    for start in calls:
        stack = [start]
        while stack:
            name = stack[-1]
            callees = [c for c in calls.get(name, ()) if c in calls]
            pending = [c for c in callees if c not in depth]
            if name in depth or not pending:
                depth.setdefault(name, 1 + max((depth[c] for c in callees), default=0))
                stack.pop()
            else:
                stack.extend(pending)
    return depth


def check_graph_constants(graph_def, source):
    """The outer graph's constants (a TF1 graph, a TF2 model's captured constants) fit
    their bytes."""
    for node in graph_def.node:
        for tensor in _tensors_of(node):
            check_tensor_proto(tensor, source, f"constant {node.name!r}")


# -- the object graph -------------------------------------------------------------------------
def _check_ids(i, proto, count, source):
    for ref in list(proto.children) + list(proto.dependencies):
        if not 0 <= ref.node_id < count:
            raise _corrupt(source, f"object {i} names child {ref.local_name!r} with node id "
                                   f"{ref.node_id}, but the object graph has {count} nodes")
        name = ref.local_name
        if name.startswith("__") and name.endswith("__") and name != "__call__" or \
                name == "_trackable_children":
            raise _corrupt(source, f"object {i} names a child {name!r}, which would replace "
                                   f"a Python attribute of the restored object")


def _function_names(proto):
    kind = proto.WhichOneof("kind")
    if kind == "function":
        return list(proto.function.concrete_functions)
    if kind == "bare_concrete_function":
        return [proto.bare_concrete_function.concrete_function_name]
    return []


def check_object_graph(meta, source):
    """Every node id, concrete function name and bound input of the object graph refers to
    something that exists."""
    graph = meta.object_graph_def
    count = len(graph.nodes)
    library = {f.signature.name for f in meta.graph_def.library.function}
    for i, proto in enumerate(graph.nodes):
        _check_ids(i, proto, count, source)
        for name in _function_names(proto):
            if name not in graph.concrete_functions or name not in library:
                raise _corrupt(source, f"object {i} names concrete function {name!r}, which "
                                       f"is not in the object graph and function library")
        if proto.WhichOneof("kind") == "variable" and \
                dtype_from_datatype(proto.variable.dtype) is None:
            raise _corrupt(source, f"variable {proto.variable.name!r} (object {i}) has "
                                   f"DataType {proto.variable.dtype}, which tensorlite cannot "
                                   f"hold")
    for name, saved in graph.concrete_functions.items():
        for node_id in saved.bound_inputs:
            if not 0 <= node_id < count:
                raise _corrupt(source, f"concrete function {name} binds node {node_id}, but "
                                       f"the object graph has {count} nodes")
            kind = graph.nodes[node_id].WhichOneof("kind")
            if kind not in _CAPTURABLE:
                raise _corrupt(source, f"concrete function {name} binds node {node_id}, a "
                                       f"{kind or 'empty'} object; a function captures only "
                                       f"variables, resources, assets and constants")


def check_meta_graph(meta, source):
    """All the checks above, for one MetaGraphDef read from file `source`."""
    check_library(meta.graph_def.library, source)
    check_graph_constants(meta.graph_def, source)
    check_object_graph(meta, source)


__all__ = ["check_meta_graph", "check_tensor_proto", "check_library", "check_object_graph"]
