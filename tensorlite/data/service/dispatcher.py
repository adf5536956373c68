"""The dispatcher's state, kept inside the Dask scheduler as a scheduler plugin: registered
datasets, jobs (shared by job_name), and for distributed_epoch jobs the split table that
makes delivery exactly-once.

A split is pending, leased to one consumer, or done. A consumer leases splits, has Dask run
them on any worker, and commits each split before delivering its elements; only the holder
of a live lease can commit, so no split is delivered twice. A worker killed mid-split loses
only work in flight: Dask re-runs the task elsewhere, or the consumer re-submits it. Leases a
consumer neither commits nor releases within `lease_timeout` return to pending.

Consumers call in with `call(client, method, **kwargs)` (Dask's run_on_scheduler); the plugin
installs itself on first use, so any Dask scheduler (`dask scheduler` on a cluster) serves.

Example:
    >>> state = DispatcherState()
    >>> job = state.get_or_create_job("ds1", None, "distributed_epoch", 2, None, [])
    >>> state.lease(job, "c1", 5)["splits"], state.commit(job, "c1", 0)
    ([0, 1], True)
"""
import itertools
import time

from tensorlite.framework import errors

PLUGIN_NAME = "tensorlite-data-service"
# what consumers may call (`call`): DispatcherState's public methods, and "workers"
CALLS = frozenset({"register_dataset", "get_dataset", "get_or_create_job", "job_info",
                   "lease", "commit", "commit_and_lease", "release", "renew", "workers"})


class Job:
    def __init__(self, job_id, name, dataset_id, mode, num_splits, num_consumers, workers):
        self.id, self.name, self.dataset_id, self.mode = job_id, name, dataset_id, mode
        self.num_consumers = num_consumers
        self.pending = list(range(num_splits))
        self.leased = {}            # split -> (consumer, lease time)
        self.done = set()
        self.workers = list(workers)  # parallel_epochs: the workers running an epoch each
        self.commits = 0


class DispatcherState:
    """Datasets and jobs; every method is called on the scheduler's event loop."""

    def __init__(self, lease_timeout=120.0):
        self.datasets = {}
        self.jobs = {}
        self.job_names = {}
        self.lease_timeout = lease_timeout
        self._ids = itertools.count(1)

    def register_dataset(self, dataset_id, blob, element_spec_blob):
        self.datasets.setdefault(dataset_id, (blob, element_spec_blob))
        return dataset_id

    def get_dataset(self, dataset_id):
        if dataset_id not in self.datasets:
            return None
        return self.datasets[dataset_id]

    def get_or_create_job(self, dataset_id, job_name, mode, num_splits, num_consumers,
                          workers, done=()):
        if job_name is not None and job_name in self.job_names:
            job = self.jobs[self.job_names[job_name]]
            if job.dataset_id != dataset_id or job.mode != mode:
                return {"error": f"job_name {job_name!r} is already used by a job over "
                                 f"another dataset or processing mode ({job.mode})"}
            return job.id
        job_id = next(self._ids)
        job = self.jobs[job_id] = Job(job_id, job_name, dataset_id, mode, num_splits,
                                      num_consumers, workers)
        # a consumer restored from a checkpoint has already delivered these splits
        job.done.update(done)
        job.pending = [s for s in job.pending if s not in job.done]
        if job_name is not None:
            self.job_names[job_name] = job_id
        return job_id

    def _job(self, job_id):
        job = self.jobs.get(job_id)
        if job is None:
            raise errors.NotFoundError(
                None, None, f"tf.data service: the dispatcher has no job {job_id!r} (it was "
                f"restarted, or the id is not one it gave out); start a new iterator")
        return job

    def job_info(self, job_id):
        job = self._job(job_id)
        return {"workers": job.workers, "mode": job.mode, "done": len(job.done),
                "pending": len(job.pending), "leased": len(job.leased),
                "commits": job.commits}

    def _expire(self, job):
        now = time.monotonic()
        for split, (_, t) in list(job.leased.items()):
            if now - t > self.lease_timeout:
                del job.leased[split]
                job.pending.append(split)

    def lease(self, job_id, consumer, n, consumer_index=None):
        """Up to n pending splits for `consumer` (with coordinated reads, only splits with
        split % num_consumers == consumer_index); finished once none is pending or leased."""
        job = self._job(job_id)
        self._expire(job)

        def mine(split):
            return consumer_index is None or split % job.num_consumers == consumer_index
        out = [s for s in job.pending if mine(s)][:n]
        for s in out:
            job.pending.remove(s)
            job.leased[s] = (consumer, time.monotonic())
        left = [s for s in job.pending if mine(s)] + [s for s in job.leased if mine(s)]
        return {"splits": out, "finished": not left and not out}

    def commit(self, job_id, consumer, split):
        """True once for the consumer holding split's lease: it may deliver the split."""
        job = self._job(job_id)
        holder = job.leased.get(split)
        if holder is None or holder[0] != consumer or split in job.done:
            return False
        del job.leased[split]
        job.done.add(split)
        job.commits += 1
        return True

    def commit_and_lease(self, job_id, consumer, splits, n, consumer_index=None):
        """Commits the consumer's finished `splits` and leases up to n more in one round
        trip: {"committed": the splits it may deliver, "splits": new leases, "finished"}."""
        committed = [s for s in splits if self.commit(job_id, consumer, s)]
        return dict(self.lease(job_id, consumer, n, consumer_index), committed=committed)

    def release(self, job_id, consumer):
        """Returns the consumer's uncommitted splits to pending (an iterator closed early)."""
        job = self.jobs.get(job_id)
        if job is None:
            return 0
        back = [s for s, (c, _) in job.leased.items() if c == consumer]
        for s in back:
            del job.leased[s]
            job.pending.append(s)
        return len(back)

    def renew(self, job_id, consumer):
        job = self._job(job_id)
        now = time.monotonic()
        for s, (c, _) in list(job.leased.items()):
            if c == consumer:
                job.leased[s] = (c, now)


def _plugin_class():
    from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: PLC0415

    class DispatcherPlugin(SchedulerPlugin):
        name = PLUGIN_NAME

        def __init__(self):
            self.state = DispatcherState()
    return DispatcherPlugin


def install(scheduler):
    """The dispatcher plugin of `scheduler`, added if missing."""
    plugin = scheduler.plugins.get(PLUGIN_NAME)
    if plugin is None:
        plugin = _plugin_class()()
        scheduler.add_plugin(plugin)
    return plugin


def _on_scheduler(method, kwargs, dask_scheduler=None):
    if method not in CALLS:
        raise errors.InvalidArgumentError(
            None, None, f"tf.data service: the dispatcher has no call {method!r}")
    state = install(dask_scheduler).state
    if method == "workers":
        return sorted(dask_scheduler.workers)
    return getattr(state, method)(**kwargs)


def call(client, method, **kwargs):
    """Calls DispatcherState.method(**kwargs) on the dispatcher ('workers' lists workers)."""
    return client.run_on_scheduler(_on_scheduler, method, kwargs)
