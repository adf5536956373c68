"""Keras 3's checkpoint object graph, written beside tf.keras 2's so that a
`tf.train.Checkpoint` of a tensorlite model restores in both, and read from Keras 3's files.

TensorFlow matches a checkpoint to live objects by the local names of object-graph edges, and
a node may be reached by several names. Keras 3 (TF 2.16+) names things differently from
tf.keras 2 (checked against TF 2.21 / Keras 3.15 with `tf.train.list_variables`):

    tf.keras 2                              Keras 3
    model/layer_with_weights-0/kernel       model/_operations/1/_kernel          (functional)
    model/layer_with_weights-0/kernel       model/_functional/_operations/1/_kernel (Sequential)
    model/d1/kernel                         model/d1/_kernel                     (subclassed)
    optimizer/_variables/1 (= m of var 0)   optimizer/_variables/2 (1 is the learning rate)

So a model also lists its layers as `_operations` (Keras 3's functional graph order: the
InputLayers, then the layers, which is tf.keras's `model.layers` order for the graphs both
build), a Sequential also holds a `_functional` node, a layer's `kernel` and `embeddings`
are also `_kernel` and `_embeddings`, and an optimizer's slots are named by the per-slot
lists both Keras versions track (`_momentums`, `_velocities`, ...) instead of `_variables`,
whose numbering differs between the two and cannot be shared.

What cannot be shared: Keras 3's functional `_operations` also numbers operations that are
not layers (`keras.ops` calls in a functional graph); its numbers then differ from the
layer list here, and TensorFlow reports the mismatched shapes when it restores.
"""

# add_weight names that Keras 3 keeps under a private attribute (a property reads them)
KERAS3_WEIGHT_ALIASES = {"kernel": "_kernel", "embeddings": "_embeddings"}

# optimizer slot name (tensorlite / tf.keras 1-2 `add_slot`) -> the list attribute tf.keras 2's
# new optimizers and Keras 3 keep those slots in, one per trainable variable, in order
_SLOT_LISTS = {"m": "_momentums", "v": "_velocities", "vhat": "_velocity_hats",
               "momentum": "_momentums", "rms": "_velocities", "mg": "_average_gradients",
               "accumulator": "_accumulators", "linear": "_linears",
               "accum_grad": "_accumulated_grads", "accum_var": "_accumulated_delta_vars",
               "average": "_model_variables_moving_average"}
_CLASS_SLOT_LISTS = {"SGD": {"momentum": "momentums"}, "Adamax": {"m": "_m", "v": "_u"}}


# public attributes of tensorlite layers that tf.keras 2 and Keras 3 both keep private
_ATTRIBUTE_ALIASES = {
    "MultiHeadAttention": {"query_dense": "_query_dense", "key_dense": "_key_dense",
                           "value_dense": "_value_dense", "output_dense": "_output_dense"},
}


def attribute_aliases(layer):
    """{tensorlite attribute: the name both Kerases track it by} of a layer's class."""
    for klass in type(layer).__mro__:
        found = _ATTRIBUTE_ALIASES.get(klass.__name__)
        if found is not None:
            return found
    return {}


class _Node:
    """An object-graph node that holds no values itself, only named edges (Keras 3's
    `_functional` of a Sequential; its InputLayer when tensorlite has none)."""

    def __init__(self, children=()):
        self._children = list(children)

    def _trackable_children(self):
        return self._children


def weight_aliases(name, variable):
    """The Keras 3 edge, if any, beside a layer's weight edge `name`."""
    alias = KERAS3_WEIGHT_ALIASES.get(name)
    return [(alias, variable)] if alias is not None else []


def model_aliases(model, sequential):
    """Keras 3's edges of a functional or Sequential model: `_operations` (or
    `_functional/_operations`), listing its InputLayers then its layers."""
    if sequential:
        return [("_functional", _Node([("_operations", [_Node()] + list(model.layers))]))]
    return [("_operations", list(model.layers))]


def _list_names(optimizer):
    return {**_SLOT_LISTS, **_CLASS_SLOT_LISTS.get(type(optimizer).__name__, {})}


def slot_list_names(optimizer):
    """Every per-slot list name this optimizer's class may have (built or not)."""
    return set(_list_names(optimizer).values())


def slot_lists(optimizer):
    """[(list name, [slot variable per trainable variable])] of the optimizer's slots, as both
    tf.keras 2's new optimizers and Keras 3 track them; None when a slot has no known list
    (then only tf.keras 2's `_variables` layout is written)."""
    names = _list_names(optimizer)
    out = []
    for slot_name in optimizer._slot_names:
        list_name = names.get(slot_name)
        if list_name is None:
            return None
        slots = [optimizer._slots.get(var_id, {}).get(slot_name)
                 for var_id in optimizer._slot_owner]
        out.append((list_name, [s for s in slots if s is not None]))
    return out
