"""Shipping a pipeline to the service's workers: code and state by cloudpickle, and when
that fails, an error naming the stage and the object that cannot travel.

Example:
    >>> blob = dumps(tf.data.Dataset.range(3).map(lambda x: x + 1))
    >>> [int(x) for x in loads(blob)]
    [1, 2, 3]
"""
import hashlib

from tensorlite.framework import errors

_SKIP = ("_inputs", "_spec")


def _cloudpickle():
    try:
        import cloudpickle  # noqa: PLC0415
    except ImportError:
        raise errors.UnavailableError(
            None, None, "the tf.data service ships pipelines with cloudpickle, which is not "
            "installed: pip install cloudpickle distributed (or pip install '.[distributed]'"
            " in a clone of tensorlite)"
        ) from None
    return cloudpickle


def dumps(dataset):
    """The pipeline as bytes; InvalidArgumentError naming the stage and object if a part of
    it cannot be serialised."""
    from tensorlite.data.service.splits import copy_graph  # noqa: PLC0415
    cp = _cloudpickle()
    if hasattr(dataset, "_inputs"):
        dataset = copy_graph(dataset)
    try:
        return cp.dumps(dataset)
    except Exception as e:  # noqa: BLE001 - re-raised below with the culprit named
        stage, name, obj, err = _culprit(dataset, cp) or ("the pipeline", "?", dataset, e)
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: cannot ship the pipeline to the workers: stage "
            f"{stage} holds {name} = {_short(obj)}, which cannot be serialised "
            f"({type(err).__name__}: {err}). Create that object inside the function that "
            f"uses it, or make it picklable") from None


def loads(blob):
    """The pipeline back from `dumps`' bytes (on a worker: bytes from our own client)."""
    return _cloudpickle().loads(blob)


def dataset_id(blob):
    return hashlib.sha256(blob).hexdigest()[:24]


def _short(obj):
    text = repr(obj)
    return text if len(text) < 80 else text[:77] + "..."


def _nodes(dataset):
    """Every node of the pipeline, leaves first."""
    seen, order = set(), []

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for child in getattr(node, "_inputs", ()):
            visit(child)
        order.append(node)
    visit(dataset)
    return order


def _culprit(dataset, cp):
    """(stage label, attribute path, object, error) of the first unserialisable part."""
    for node in _nodes(dataset):
        for attr, value in vars(node).items():
            if attr in _SKIP:
                continue
            found = _innermost(value, attr, cp, depth=4)
            if found is not None:
                return (node._label(),) + found
    return None


def _innermost(value, path, cp, depth):
    try:
        cp.dumps(value)
        return None
    except Exception as e:  # noqa: BLE001 - we are looking for it
        err = e
    if depth > 0:
        for sub_path, sub in _parts(value, path):
            found = _innermost(sub, sub_path, cp, depth - 1)
            if found is not None:
                return found
    return path, value, err


def _parts(value, path):
    """Named parts of an object: a function's closure and globals, an object's attributes,
    a container's items."""
    code = getattr(value, "__code__", None)
    if code is not None:
        for name, cell in zip(code.co_freevars, value.__closure__ or ()):
            try:
                yield name, cell.cell_contents
            except ValueError:
                continue
        glb = getattr(value, "__globals__", {})
        for name in code.co_names:
            if name in glb:
                yield name, glb[name]
        return
    if isinstance(value, (list, tuple)):
        yield from ((f"{path}[{i}]", v) for i, v in enumerate(value))
    elif isinstance(value, dict):
        yield from ((f"{path}[{k!r}]", v) for k, v in value.items())
    elif hasattr(value, "__dict__"):
        yield from ((f"{path}.{k}", v) for k, v in vars(value).items())
