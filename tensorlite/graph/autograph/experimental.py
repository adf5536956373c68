"""`tf.autograph.experimental`: do_not_convert and set_loop_options."""
from tensorlite.graph.autograph.conversion import do_not_convert
from tensorlite.graph.autograph.operators import set_loop_options

__all__ = ["do_not_convert", "set_loop_options"]
