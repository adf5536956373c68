"""The NumPy core of tf.estimator.BoostedTrees*: per-bucket gradient/hessian histograms,
TF's split gain, layer growth and routing examples through trees.

Trees are dicts of lists (JSON-able): `feature` (-1 for a leaf), `threshold` (an example
goes left when its bucket id <= threshold), `left`, `right`, `value` (the node's logits:
its parent's plus learning_rate times its own Newton step, as TF's layer-by-layer growth
sets them) and `gain` (the split's gain, for feature importances).

Example:
    >>> tree = new_tree(1)
    >>> route(tree, np.zeros((3, 2), np.int64)).tolist()
    [0, 0, 0]
"""
import numpy as np


def new_tree(dim, root_value=None):
    """A tree of one leaf whose logits are `root_value` (zeros by default)."""
    value = [0.0] * dim if root_value is None else [float(v) for v in root_value]
    return {"feature": [-1], "threshold": [0], "left": [-1], "right": [-1],
            "value": [value], "gain": [0.0]}


def route(tree, buckets):
    """The leaf (node id) each row of `buckets` ([n, features] ids) reaches."""
    feature, threshold = np.asarray(tree["feature"]), np.asarray(tree["threshold"])
    left, right = np.asarray(tree["left"]), np.asarray(tree["right"])
    node = np.zeros(len(buckets), np.int64)
    rows = np.arange(len(buckets))
    while True:
        f = feature[node]
        inner = f >= 0
        if not inner.any():
            return node
        b = buckets[rows, np.maximum(f, 0)]
        node = np.where(inner, np.where(b <= threshold[node], left[node], right[node]), node)


def ensemble_logits(trees, buckets, dim):
    """[n, dim] logits: the sum over trees of the leaf each example reaches."""
    out = np.zeros((len(buckets), dim))
    for tree in trees:
        out += np.asarray(tree["value"])[route(tree, buckets)]
    return out


def histograms(buckets, node_pos, n_nodes, n_buckets, grads, hess):
    """Per (frontier node, feature, bucket): summed gradients and hessians [.., dim] and
    example counts. `node_pos` is each example's frontier index (-1: not growing)."""
    n, n_features = buckets.shape
    dim = grads.shape[1]
    keep = node_pos >= 0
    key = (node_pos[keep, None] * n_features + np.arange(n_features)[None, :]) * n_buckets \
        + buckets[keep]
    key, size = key.ravel(), n_nodes * n_features * n_buckets
    shape = (n_nodes, n_features, n_buckets)
    g = np.stack([np.bincount(key, np.repeat(grads[keep, d], n_features), size)
                  for d in range(dim)], -1).reshape(shape + (dim,))
    h = np.stack([np.bincount(key, np.repeat(hess[keep, d], n_features), size)
                  for d in range(dim)], -1).reshape(shape + (dim,))
    count = np.bincount(key, minlength=size).reshape(shape)
    return g, h, count


_EPS = 1e-15     # TF's kEps: no step where h + l2 is this small


def weights_and_gains(g, h, l1, l2):
    """TF's leaf weight -g'/(h + l2) and gain g'^2/(h + l2), both 0 where h + l2 <= 1e-15.
    g' is g shrunk toward 0 by l1 for one logit; TF applies no l1 to multi-dimensional
    (diagonal hessian) logits. The last axis (logits) is summed for the gain."""
    if g.shape[-1] == 1:
        g = np.sign(g) * np.maximum(np.abs(g) - l1, 0.0)
    denom = h + l2
    ok = denom > _EPS
    weight = np.where(ok, -g / np.where(ok, denom, 1.0), 0.0)
    return weight, np.sum(-g * weight, axis=-1)


def best_splits(g, h, count, hp):
    """For each frontier node: (gain, feature, threshold, left weight, right weight) of its
    best split, or None. As TF, a node whose hessian (its norm over logits) is below
    min_node_weight does not split, and 'pre' pruning drops negative gains; unlike TF's
    scan, which may pick a threshold that sends every example one way when nothing
    better exists, a split here needs examples on both sides."""
    gl, hl, cl = (np.cumsum(a, axis=2)[:, :, :-1] for a in (g, h, count))
    gt, ht, ct = g.sum(2, keepdims=True), h.sum(2, keepdims=True), count.sum(2, keepdims=True)
    gr, hr, cr = gt - gl, ht - hl, ct - cl
    _, gain_l = weights_and_gains(gl, hl, hp["l1"], hp["l2"])
    _, gain_r = weights_and_gains(gr, hr, hp["l1"], hp["l2"])
    _, gain_p = weights_and_gains(gt, ht, hp["l1"], hp["l2"])
    gain = gain_l + gain_r - gain_p - hp["tree_complexity"]
    heavy = np.linalg.norm(ht, axis=-1) >= hp["min_node_weight"]
    gain = np.where((cl > 0) & (cr > 0) & heavy, gain, -np.inf)
    out = []
    for node in range(g.shape[0]):
        flat = int(np.argmax(gain[node]))     # ties: the first feature, lowest threshold
        f, t = np.unravel_index(flat, gain[node].shape)
        best = gain[node, f, t]
        if not np.isfinite(best) or (hp["pruning_mode"] == "pre" and best < 0):
            out.append(None)
            continue
        wl, _ = weights_and_gains(gl[node, f, t], hl[node, f, t], hp["l1"], hp["l2"])
        wr, _ = weights_and_gains(gr[node, f, t], hr[node, f, t], hp["l1"], hp["l2"])
        out.append((float(best), int(f), int(t), wl, wr))
    return out


def grow_layer(tree, frontier, splits, learning_rate):
    """Splits the frontier nodes as `splits` says; returns the new frontier (the children).
    A child's logits are its parent's plus learning_rate times its Newton step."""
    children = []
    for node, split in zip(frontier, splits):
        if split is None:
            continue
        gain, f, t, wl, wr = split
        parent = np.asarray(tree["value"][node])
        tree["feature"][node], tree["threshold"][node], tree["gain"][node] = f, t, gain
        for side, w in (("left", wl), ("right", wr)):
            tree[side][node] = len(tree["feature"])
            children.append(len(tree["feature"]))
            for key, v in (("feature", -1), ("threshold", 0), ("left", -1), ("right", -1),
                           ("gain", 0.0)):
                tree[key].append(v)
            tree["value"].append((parent + learning_rate * np.asarray(w)).tolist())
    return children


def post_prune(tree, node=0):
    """TF's post-pruning of a finished tree: bottom-up, a split of negative gain whose
    children are (now) leaves becomes a leaf again with its own logits. The children stay
    in the arrays, unreachable."""
    f = tree["feature"][node]
    if f < 0:
        return
    left, right = tree["left"][node], tree["right"][node]
    post_prune(tree, left)
    post_prune(tree, right)
    if tree["gain"][node] < 0 and tree["feature"][left] < 0 and tree["feature"][right] < 0:
        tree["feature"][node], tree["gain"][node] = -1, 0.0
        tree["left"][node] = tree["right"][node] = -1
