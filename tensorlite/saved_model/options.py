"""`tf.saved_model.SaveOptions` and `LoadOptions`: TensorFlow's option objects, with the
options tensorlite acts on and a NotImplementedError naming any it cannot honour yet.

Example:
    >>> tf.saved_model.save(m, "/tmp/m", options=tf.saved_model.SaveOptions(
    ...     extra_tags=["gpu"]))   # doctest: +SKIP
"""


def _refuse(kind, name, why):
    raise NotImplementedError(f"tf.saved_model.{kind}({name}=...): {why}; leave it at its "
                              f"default")


class SaveOptions:
    """Options of `tf.saved_model.save`. Acted on: `extra_tags` (written beside "serve").
    Accepted as they change nothing here: `namespace_whitelist` (every op tensorlite writes
    is a core TensorFlow op), `experimental_io_device`, `experimental_variable_policy`,
    `experimental_skip_saver`. `experimental_custom_gradients` (TensorFlow's default True)
    saves tf.custom_gradient's gradients as TensorFlow does (custom_gradients.py; one whose
    gradient uses the forward's values is left out with a warning); False writes the
    forward ops only. Not written yet (NotImplementedError when set):
    `save_debug_info`, `function_aliases`, `experimental_image_format`,
    `experimental_sharding_callback`, `experimental_debug_stripper`."""

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        refused = {"save_debug_info": (save_debug_info, "the debug info file is not written"),
                   "function_aliases": (function_aliases, "aliases are not written"),
                   "experimental_image_format": (experimental_image_format,
                                                 "only the saved_model.pb format is written"),
                   "experimental_sharding_callback": (experimental_sharding_callback,
                                                      "variables are written in one shard"),
                   "experimental_debug_stripper": (experimental_debug_stripper,
                                                   "nothing is stripped")}
        for name, (value, why) in refused.items():
            if value:
                _refuse("SaveOptions", name, why)
        if extra_tags is not None and (isinstance(extra_tags, str) or not all(
                isinstance(t, str) for t in extra_tags)):
            raise TypeError(f"SaveOptions(extra_tags=...) must be a list of strings, got "
                            f"{extra_tags!r}")
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = False
        self.function_aliases = {}
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_custom_gradients = bool(experimental_custom_gradients)
        self.experimental_image_format = False
        self.experimental_skip_saver = bool(experimental_skip_saver)
        self.extra_tags = list(extra_tags or [])


class LoadOptions:
    """Options of `tf.saved_model.load`. Accepted: `allow_partial_checkpoint`,
    `experimental_io_device`, `experimental_variable_policy`. Not supported yet
    (NotImplementedError when set): `experimental_skip_checkpoint`,
    `experimental_load_function_aliases`."""

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        if experimental_skip_checkpoint:
            _refuse("LoadOptions", "experimental_skip_checkpoint",
                    "variables are always restored")
        if experimental_load_function_aliases:
            _refuse("LoadOptions", "experimental_load_function_aliases",
                    "aliases are not read")
        self.allow_partial_checkpoint = bool(allow_partial_checkpoint)
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_skip_checkpoint = False
        self.experimental_load_function_aliases = False
