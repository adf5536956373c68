"""`tf.autograph`: to_code, to_graph, experimental.do_not_convert / set_loop_options
(tensorlite/graph/autograph/ does the work)."""
from tensorlite.graph.autograph import do_not_convert, experimental, to_code, to_graph

__all__ = ["do_not_convert", "experimental", "to_code", "to_graph"]
