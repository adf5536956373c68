"""`tf.estimator.SessionRunHook` and its companions: how code watches and stops a
graph-mode Estimator's loop, as in TensorFlow.

The loop calls `begin()` before the Session exists (the graph may still be extended),
`after_create_session(session, coord)` once variables are initialized or restored,
`before_run(run_context)` / `after_run(run_context, run_values)` around every step (the
SessionRunArgs `before_run` returns are fetched in the same `Session.run` and handed back
as `run_values.results`), and `end(session)` at the end. `run_context.request_stop()` ends
the loop after the current step.

Example:
    >>> class StopAt(tf.estimator.SessionRunHook):
    ...     def before_run(self, run_context):
    ...         return tf.estimator.SessionRunArgs(tf.compat.v1.train.get_global_step())
    ...     def after_run(self, run_context, run_values):
    ...         if run_values.results >= 10:
    ...             run_context.request_stop()
"""
import collections


class SessionRunHook:
    """A hook into the train/evaluate/predict loop; every method does nothing by default."""

    def begin(self):
        """Called once before the Session is created."""

    def after_create_session(self, session, coord):
        """Called once the Session exists and its variables have values."""

    def before_run(self, run_context):
        """Called before each step; may return SessionRunArgs of extra fetches."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each step with the results of before_run's fetches."""

    def end(self, session):
        """Called once at the end of the loop (not when it raised)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What before_run adds to the step's Session.run: fetches (any structure)."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])


class SessionRunContext:
    """The step's context: the args of the loop's own run, the session, and a stop flag."""

    def __init__(self, original_args, session):
        self.original_args, self.session = original_args, session
        self._stop_requested = False

    def request_stop(self):
        """Ends the loop after this step."""
        self._stop_requested = True

    @property
    def stop_requested(self):
        return self._stop_requested


class CheckpointSaverListener:
    """`tf.estimator.CheckpointSaverListener`: called around each checkpoint train writes;
    after_save returning True ends training."""

    def begin(self):
        """Called once before training."""

    def before_save(self, session, global_step_value):
        """Called before each save."""

    def after_save(self, session, global_step_value):
        """Called after each save; True stops training."""
        return None

    def end(self, session, global_step_value):
        """Called once after the final save."""


class HookRunner:
    """Runs a list of hooks around the steps of one loop, with the loop's graph as the
    default graph (as TF's loop runs inside it: hooks may call get_global_step())."""

    def __init__(self, hooks, graph):
        self.graph = graph
        self.hooks = list(hooks or [])
        for h in self.hooks:
            if not isinstance(h, SessionRunHook):
                raise TypeError(f"hooks must be SessionRunHook instances, got "
                                f"{type(h).__name__}")
        self.stop = False

    def begin(self):
        with self.graph.as_default():
            for h in self.hooks:
                h.begin()

    def after_create_session(self, session):
        with self.graph.as_default():
            for h in self.hooks:
                h.after_create_session(session, None)

    def run(self, session, fetches, feed_dict):
        """One step: Session.run of `fetches` plus the hooks' fetches; returns the step's
        own results and sets `self.stop` if a hook asked to stop."""
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), session)
        extra, feeds = [], dict(feed_dict)
        with self.graph.as_default():
            for h in self.hooks:
                args = h.before_run(context)
                extra.append(None if args is None else args.fetches)
                if args is not None and args.feed_dict:
                    feeds.update(args.feed_dict)
        wanted = [(i, f) for i, f in enumerate(extra) if f is not None]
        results = session.run([fetches, [f for _, f in wanted]], feed_dict=feeds)
        by_hook = dict(zip([i for i, _ in wanted], results[1]))
        with self.graph.as_default():
            for i, h in enumerate(self.hooks):
                h.after_run(context, SessionRunValues(by_hook.get(i), None, None))
        self.stop = self.stop or context.stop_requested
        return results[0]

    def end(self, session):
        with self.graph.as_default():
            for h in self.hooks:
                h.end(session)
