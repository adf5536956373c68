"""The order in which tf.keras 2 lists a functional model's layers (`model.layers`), which is
the order of the layers in the HDF5 weights files it writes and the order its
`load_weights` matches them in: layers by decreasing depth from the outputs (a layer's depth
is its deepest call's), ties broken by first visit in a depth-first walk from the outputs
that enters each call's inputs in argument order.

It is also the order of the `layer_with_weights-N` keys of its checkpoints. So
`Functional.layers` lists layers in this order, and files move between tf.keras 2 and
tensorlite with each weight in its layer even on branching graphs (a plain topological
order differs there); Keras's published application weights, whose layers carry generated
names (InceptionV3's conv2d_N), can only be matched in this order.
"""

__all__ = ["keras_layer_order"]


def _walk(outputs):
    """(calls in depth-first post-order, {id(layer): first visit}) from the outputs."""
    order, first_visit, done = [], {}, set()
    for out in outputs:
        if out.node is None or id(out.node) in done:
            continue
        first_visit.setdefault(id(out.node.layer), len(first_visit))
        stack = [(out.node, iter(out.node.parents()))]
        while stack:  # iterative: deep models would pass Python's recursion limit
            node, parents = stack[-1]
            parent = next((p for p in parents if id(p) not in done), None)
            if parent is None:
                stack.pop()
                done.add(id(node))
                order.append(node)
            else:
                first_visit.setdefault(id(parent.layer), len(first_visit))
                stack.append((parent, iter(parent.parents())))
    return order, first_visit


def keras_layer_order(model):
    """`model`'s called layers (not its InputLayers) in tf.keras 2's `model.layers` order."""
    order, first_visit = _walk(model.outputs)
    node_depth, layer_depth, layers = {}, {}, {}
    for node in reversed(order):  # outputs first: each call's depth reaches its inputs
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        layers[id(node.layer)] = node.layer
        for parent in node.parents():
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    return sorted(layers.values(),
                  key=lambda layer: (-layer_depth[id(layer)], first_visit[id(layer)]))
