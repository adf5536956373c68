"""`tf.estimator.BoostedTreesClassifier` / `BoostedTreesRegressor`: gradient-boosted trees
grown as TF's estimator grows them.

Each train step consumes one batch of input_fn. Numeric columns first get quantile bucket
boundaries from n_batches_per_layer batches (boosted_trees_features.py); with
center_bias the first tree's root is then set by Newton steps (each over
n_batches_per_layer batches) until a step moves it by less than 1% (TF's bias
centering; TF's kernel centers one logit, here each of a multi-class head's logits).
Then trees grow layer by layer: every layer sums the gradients and hessians of the loss
(divided by the batch size, TF's SUM_OVER_BATCH_SIZE, and averaged over
n_batches_per_layer batches, so l2_regularization, tree_complexity and min_node_weight
are per-instance values as TF documents) per frontier node, feature and bucket, splits
each node at its best gain and sets each child's logits to its parent's plus
learning_rate times its Newton step (boosted_trees_grow.py); a layer where no node can
split is tried again on the next batches. A tree is finished at max_depth; training
stops after n_trees trees or 2 * n_trees * max_depth layer attempts (TF's stop hook), at
max_steps, or when input_fn's data ends. pruning_mode='pre' drops negative-gain splits;
'post' grows the tree whole, then turns back into leaves the splits of negative gain whose
children are leaves, bottom-up, as TF's PostPruneTree.

Checkpoints are JSON files model_dir/model.ckpt-<step>.json (the ensemble, the bucket
boundaries, the layer's partial sums), named by model_dir/checkpoint; a new instance on
the same model_dir resumes from the latest. train_in_memory=True (n_batches_per_layer=1)
trains the same way, so input_fn must give the whole data set in each batch as TF asks;
weight_column scales each example's gradient and hessian (evaluation metrics are
weighted means; numeric quantiles are not weighted).

Example:
    >>> cols = [tf.feature_column.numeric_column("x")]
    >>> est = tf.estimator.BoostedTreesClassifier(cols, n_batches_per_layer=1, n_trees=10)
    >>> est.train(input_fn)                # input_fn: repeated (features, labels) batches
    >>> est.experimental_feature_importances(normalize=True)
    OrderedDict([('x', 1.0)])
"""
import collections
import json
import os

import numpy as np

from tensorlite.estimator import eval_events
from tensorlite.estimator.boosted_trees_features import FeatureLayout
from tensorlite.estimator.boosted_trees_grow import (best_splits, ensemble_logits,
                                                     grow_layer, histograms, new_tree,
                                                     post_prune, route)
from tensorlite.estimator.boosted_trees_heads import Head
from tensorlite.estimator.estimator import Estimator
from tensorlite.feature_column import NumericColumn, _raw
from tensorlite.framework.atomic_files import write_bytes

_MIN_DELTA_FOR_CENTER_BIAS = 0.01    # TF stops centering when the bias moves less (relative)
_MAX_CENTERING_ROUNDS = 100          # bounds the centering loop (Newton converges long before)


def _check_params(n_batches_per_layer, n_trees, max_depth, learning_rate, regs,
                  pruning_mode, quantile_sketch_epsilon, train_in_memory):
    for name, value in (("n_batches_per_layer", n_batches_per_layer), ("n_trees", n_trees),
                        ("max_depth", max_depth)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"BoostedTrees: {name} must be a positive integer, got {value!r}")
    if not learning_rate > 0:
        raise ValueError(f"BoostedTrees: learning_rate must be > 0, got {learning_rate!r}")
    for name, value in regs.items():
        if value < 0:
            raise ValueError(f"BoostedTrees: {name} must be >= 0, got {value!r}")
    if pruning_mode not in ("none", "pre", "post"):
        raise ValueError(f"BoostedTrees: pruning_mode must be 'none', 'pre' or 'post', got "
                         f"{pruning_mode!r}")
    if pruning_mode != "none" and regs["tree_complexity"] <= 0:
        raise ValueError(f"For pruning, tree_complexity must be positive "
                         f"(pruning_mode={pruning_mode!r}, tree_complexity=0)")
    if pruning_mode == "none" and regs["tree_complexity"] > 0:
        raise ValueError("Tree complexity have no effect unless pruning mode is chosen: "
                         "set pruning_mode='pre' or 'post', or tree_complexity=0")
    if not 0 < quantile_sketch_epsilon < 1:
        raise ValueError(f"BoostedTrees: quantile_sketch_epsilon must be in (0, 1), got "
                         f"{quantile_sketch_epsilon!r}")
    if train_in_memory and n_batches_per_layer != 1:
        raise ValueError("BoostedTrees: train_in_memory=True needs n_batches_per_layer=1 "
                         "(input_fn gives the whole data set as one batch)")


class _BoostedTrees(Estimator):
    """The estimator both canned BoostedTrees classes are."""

    def __init__(self, head, feature_columns, n_batches_per_layer, model_dir, weight_column,
                 hparams, config):
        if not feature_columns:
            raise ValueError("BoostedTrees: feature_columns must not be empty")
        _check_params(n_batches_per_layer, hparams["n_trees"], hparams["max_depth"],
                      hparams["learning_rate"],
                      {k: hparams[k] for k in ("l1", "l2", "tree_complexity",
                                               "min_node_weight")},
                      hparams["pruning_mode"], hparams["quantile_sketch_epsilon"],
                      hparams["train_in_memory"])
        self._head, self._n_batches = head, int(n_batches_per_layer)
        self._columns, self._hp = list(feature_columns), dict(hparams)
        self._weight_key = weight_column.key if isinstance(weight_column, NumericColumn) \
            else weight_column
        self._state = None
        self._layout = FeatureLayout(self._columns, hparams["quantile_sketch_epsilon"])
        super().__init__(self._no_model_fn, model_dir=model_dir, config=config)

    def _no_model_fn(self, features, labels, mode):
        raise NotImplementedError("BoostedTrees estimators train their trees directly; they "
                                  "have no model_fn to call")

    # -- state and checkpoints --------------------------------------------------------------
    def _fresh_state(self):
        return {"global_step": 0, "boundaries": {}, "sketch": {}, "sketch_batches": 0,
                "trees": [new_tree(self._head.dim)], "frontier": [0], "depth": 0,
                "finalized": 0, "attempted_layers": 0,
                "centering": bool(self._hp["center_bias"]),
                "centering_rounds": 0, "acc": None}

    def _load(self):
        """Reads the latest checkpoint (or starts fresh) and rebuilds the feature layout."""
        path = self.latest_checkpoint()
        if path is None:
            self._state = self._fresh_state()
        else:
            with open(path, encoding="utf-8") as f:
                self._state = json.load(f)
        self._layout = FeatureLayout(self._columns, self._hp["quantile_sketch_epsilon"])
        self._layout.boundaries = dict(self._state["boundaries"])
        self._global_step = self._state["global_step"]
        return path is not None

    def _save(self):
        state = self._state
        state["boundaries"] = self._layout.boundaries
        state["global_step"] = self._global_step
        if state["acc"] is not None:
            state["acc"]["parts"] = [np.asarray(p).tolist() for p in state["acc"]["parts"]]
        os.makedirs(self._model_dir, exist_ok=True)
        name = f"model.ckpt-{self._global_step}.json"
        write_bytes(os.path.join(self._model_dir, name), json.dumps(state).encode())
        write_bytes(os.path.join(self._model_dir, "checkpoint"), name.encode())

    def latest_checkpoint(self):
        """The latest checkpoint's path in model_dir, or None."""
        marker = os.path.join(self._model_dir, "checkpoint")
        if not os.path.exists(marker):
            return None
        with open(marker, encoding="utf-8") as f:
            name = f.read().strip()
        if os.sep in name or not (name.startswith("model.ckpt-") and name.endswith(".json")):
            raise ValueError(f"{marker}: names {name!r}, not a BoostedTrees checkpoint "
                             f"(model.ckpt-<step>.json); was model_dir written by another "
                             f"estimator?")
        return os.path.join(self._model_dir, name)

    def get_variable_names(self):
        """TensorFlow keeps the ensemble in one resource; tensorlite has no variables."""
        raise NotImplementedError("BoostedTrees keep their ensemble in a JSON checkpoint, not "
                                  "in variables; read experimental_feature_importances() or "
                                  "predict instead")

    get_variable_value = get_variable_names

    def export_saved_model(self, *args, **kwargs):
        """Not available: see the NotImplementedError."""
        raise NotImplementedError("BoostedTrees estimators cannot be exported as a "
                                  "SavedModel in tensorlite yet")

    # -- training ----------------------------------------------------------------------------
    def _done(self):
        """TF's stop rule: n_trees finished, or more than 2 * n_trees * max_depth layer
        attempts (layers where no node could split count as attempts too)."""
        hp = self._hp
        return self._state["finalized"] >= hp["n_trees"] or \
            self._state["attempted_layers"] > 2 * hp["n_trees"] * hp["max_depth"]

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains for `steps` more batches, up to global step `max_steps`, until n_trees
        trees are grown or input_fn's data ends; then writes a checkpoint."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and value <= 0:
                raise ValueError(f"Must specify {name} > 0, given: {value}")
        if hooks or saving_listeners:
            raise NotImplementedError("BoostedTrees in tensorlite run no SessionRunHooks or "
                                      "saving_listeners")
        self._load()
        stop = max_steps if max_steps is not None else \
            (self._global_step + steps if steps is not None else None)
        if self._done() or (stop is not None and self._global_step >= stop):
            return self
        for features, labels in self._batches(input_fn, "train"):
            if labels is None:
                raise ValueError("BoostedTrees.train: input_fn must yield (features, labels)")
            self._train_batch(features, labels)
            self._global_step += 1
            if self._done() or (stop is not None and self._global_step >= stop):
                break
        self._save()
        return self

    def _weights(self, features, n):
        if self._weight_key is None:
            return np.ones(n)
        return _raw(features, self._weight_key).astype(np.float64).reshape(-1)

    def _train_batch(self, features, labels):
        state, layout = self._state, self._layout
        if layout.needs_sketch:
            self._sketch_batch(features)
            return
        buckets = layout.buckets(features)
        y = self._head.label_ids(labels)
        scale = self._weights(features, len(y)) / len(y)    # TF's SUM_OVER_BATCH_SIZE
        logits = ensemble_logits(state["trees"], buckets, self._head.dim)
        g, h, _ = self._head.grads(logits, y)
        g, h = g * scale[:, None], h * scale[:, None]
        if state["centering"]:
            self._accumulate([g.sum(0), h.sum(0)])
            if state["acc"]["batches"] == self._n_batches:
                self._center_bias()
            return
        lookup = np.full(len(state["trees"][-1]["feature"]), -1)
        lookup[state["frontier"]] = np.arange(len(state["frontier"]))
        pos = lookup[route(state["trees"][-1], buckets)]
        self._accumulate(histograms(buckets, pos, len(state["frontier"]), layout.n_buckets,
                                    g, h))
        if state["acc"]["batches"] == self._n_batches:
            self._grow()

    def _sketch_batch(self, features):
        """Collects numeric values until n_batches_per_layer batches give the boundaries."""
        state, layout = self._state, self._layout
        layout._sketch = {k: [np.asarray(v)] for k, v in state["sketch"].items()}
        layout.add_sketch(features)
        state["sketch_batches"] += 1
        if state["sketch_batches"] >= self._n_batches:
            layout.finish_sketch()
            state["sketch"] = {}
        else:
            state["sketch"] = {k: np.concatenate(v).tolist() for k, v in layout._sketch.items()}

    def _accumulate(self, parts):
        acc = self._state["acc"]
        if acc is None:
            acc = self._state["acc"] = {"batches": 0, "parts": [np.zeros_like(p, np.float64)
                                                                for p in parts]}
        acc["parts"] = [np.asarray(a) + p for a, p in zip(acc["parts"], parts)]
        acc["batches"] += 1

    def _take_accumulated(self):
        """The layer's sums, each batch's mean averaged over the batches (TF's accumulator);
        example counts stay totals."""
        acc, self._state["acc"] = self._state["acc"], None
        parts = [np.asarray(p) for p in acc["parts"]]
        return [p / acc["batches"] for p in parts[:2]] + parts[2:]

    def _center_bias(self):
        state, hp = self._state, self._hp
        g, h = self._take_accumulated()
        g = np.sign(g) * np.maximum(np.abs(g) - hp["l1"], 0.0)
        step = np.where(h + hp["l2"] > 0, -g / np.where(h + hp["l2"] > 0, h + hp["l2"], 1), 0)
        root = state["trees"][0]["value"]
        bias = np.asarray(root[0])
        root[0] = (bias + step).tolist()
        state["centering_rounds"] += 1
        # TF's rule: a first round always, then on while a step moves the bias by more
        # than 1% of itself
        relative = np.abs(step) / np.where(bias != 0, np.abs(bias), np.nan)
        moving = state["centering_rounds"] == 1 or \
            np.any(np.where(bias != 0, relative, step != 0) > _MIN_DELTA_FOR_CENTER_BIAS)
        if not moving or state["centering_rounds"] >= _MAX_CENTERING_ROUNDS:
            state["centering"] = False

    def _grow(self):
        state, hp = self._state, self._hp
        g, h, count = self._take_accumulated()
        splits = best_splits(g, h, count, {"l1": hp["l1"], "l2": hp["l2"],
                                           "tree_complexity": hp["tree_complexity"],
                                           "min_node_weight": hp["min_node_weight"],
                                           "pruning_mode": hp["pruning_mode"]})
        state["attempted_layers"] += 1
        if all(split is None for split in splits):
            return     # as TF: retry the same nodes on the next batches
        tree = state["trees"][-1]
        state["frontier"] = grow_layer(tree, state["frontier"], splits, hp["learning_rate"])
        state["depth"] += 1
        if state["depth"] >= hp["max_depth"]:
            if hp["pruning_mode"] == "post":
                post_prune(tree)
            state["finalized"] += 1
            if state["finalized"] < hp["n_trees"]:
                state["trees"].append(new_tree(self._head.dim))
                state["frontier"], state["depth"] = [0], 0

    # -- inference ---------------------------------------------------------------------------
    def _logits(self, features):
        buckets = self._layout.buckets(features)
        return ensemble_logits(self._state["trees"], buckets, self._head.dim)

    def _require_boundaries(self):
        if self._layout.needs_sketch:      # untrained: one bucket until boundaries exist
            self._layout.boundaries.update(
                {c.name: [[] for _ in range(c.width)] for c in self._layout.columns
                 if isinstance(c, NumericColumn)})

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """TF's head metrics over input_fn's data (at most `steps` batches) plus
        global_step; also written as summaries in eval_dir(name)."""
        if hooks or checkpoint_path:
            raise NotImplementedError("BoostedTrees.evaluate: hooks and checkpoint_path are "
                                      "not implemented in tensorlite")
        if not self._load():
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}. "
                             f"Train the estimator first")
        self._require_boundaries()
        logits, ys, ws = [], [], []
        for i, (features, labels) in enumerate(self._batches(input_fn, "eval")):
            if steps is not None and i >= steps:
                break
            logits.append(self._logits(features))
            ys.append(self._head.label_ids(labels))
            ws.append(self._weights(features, len(ys[-1])))
        if not ys:
            raise ValueError("evaluate: input_fn produced no data")
        metrics = self._head.metrics(np.concatenate(logits), np.concatenate(ys),
                                     np.concatenate(ws))
        out = {k: np.float32(v) for k, v in sorted(metrics.items())}
        out["global_step"] = np.int64(self._global_step)
        eval_events.write(self.eval_dir(name), self._global_step, out)
        return out

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields TF's prediction dicts (one example at a time by default); an untrained
        estimator predicts from zero logits, as TF's does after initialization."""
        if hooks or checkpoint_path:
            raise NotImplementedError("BoostedTrees.predict: hooks and checkpoint_path are "
                                      "not implemented in tensorlite")
        self._load()
        self._require_boundaries()
        for features, _ in self._batches(input_fn, "infer"):
            preds = self._head.predictions(self._logits(features))
            if predict_keys is not None:
                keys = [predict_keys] if isinstance(predict_keys, str) else predict_keys
                preds = {k: v for k, v in preds.items() if k in keys}
            if not yield_single_examples:
                yield preds
                continue
            for i in range(len(next(iter(preds.values())))):
                yield {k: v[i] for k, v in preds.items()}

    def experimental_feature_importances(self, normalize=False):
        """Gain-based importances: each feature column's summed split gains over all trees,
        an OrderedDict sorted by decreasing importance (summing to 1 if `normalize`)."""
        if not self._load():
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}")
        per_feature = np.zeros(len(self._layout.names))
        for tree in self._state["trees"]:
            for f, gain in zip(tree["feature"], tree["gain"]):
                if f >= 0:
                    per_feature[f] += gain
        if normalize:
            total = per_feature.sum()
            if total == 0:
                raise ValueError("Cannot normalize feature importances: the ensemble is empty "
                                 "or its trees have no splits")
            if np.any(per_feature < 0):
                raise ValueError("Cannot normalize feature importances: some are negative "
                                 "(splits of negative gain; use pruning_mode='pre')")
            per_feature = per_feature / total
        summed = collections.defaultdict(float)
        for name, value in zip(self._layout.names, per_feature):
            summed[name] += value
        return collections.OrderedDict(sorted(summed.items(), key=lambda kv: -kv[1]))


def _hparams(n_trees, max_depth, learning_rate, l1, l2, tree_complexity, min_node_weight,
             center_bias, pruning_mode, quantile_sketch_epsilon, train_in_memory):
    return {"n_trees": n_trees, "max_depth": max_depth, "learning_rate": learning_rate,
            "l1": l1, "l2": l2, "tree_complexity": tree_complexity,
            "min_node_weight": min_node_weight, "center_bias": center_bias,
            "pruning_mode": pruning_mode, "quantile_sketch_epsilon": quantile_sketch_epsilon,
            "train_in_memory": train_in_memory}


class BoostedTreesClassifier(_BoostedTrees):
    """A gradient-boosted trees classifier: logistic loss for two classes (one logit),
    softmax over n_classes logits (vector leaves, diagonal hessian) for more."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0.0, l2_regularization=0.0,
                 tree_complexity=0.0, min_node_weight=0.0, config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01, train_in_memory=False):
        if not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer > 1, got {n_classes!r}")
        if label_vocabulary is not None and len(label_vocabulary) != n_classes:
            raise ValueError(f"label_vocabulary has {len(label_vocabulary)} entries but "
                             f"n_classes is {n_classes}")
        head = Head("binary" if n_classes == 2 else "multi", n_classes, label_vocabulary)
        super().__init__(head, feature_columns, n_batches_per_layer, model_dir, weight_column,
                         _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                                  l2_regularization, tree_complexity, min_node_weight,
                                  center_bias, pruning_mode, quantile_sketch_epsilon,
                                  train_in_memory), config)


class BoostedTreesRegressor(_BoostedTrees):
    """A gradient-boosted trees regressor on the squared error (label_dimension 1)."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None,
                 label_dimension=1, weight_column=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0.0, l2_regularization=0.0,
                 tree_complexity=0.0, min_node_weight=0.0, config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01, train_in_memory=False):
        if label_dimension != 1:
            raise NotImplementedError(f"BoostedTreesRegressor: label_dimension "
                                      f"{label_dimension} is not implemented in tensorlite "
                                      f"(only 1)")
        super().__init__(Head("regression", 0, None), feature_columns, n_batches_per_layer,
                         model_dir, weight_column,
                         _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                                  l2_regularization, tree_complexity, min_node_weight,
                                  center_bias, pruning_mode, quantile_sketch_epsilon,
                                  train_in_memory), config)
