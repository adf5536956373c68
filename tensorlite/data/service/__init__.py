"""`tf.data.experimental.service` on Dask: offload a pipeline to a cluster of workers.

    dispatcher = tf.data.experimental.service.DispatchServer()
    workers = [tf.data.experimental.service.WorkerServer(
        tf.data.experimental.service.WorkerConfig(dispatcher_address=dispatcher.target))
        for _ in range(2)]
    ds = ds.apply(tf.data.experimental.service.distribute(
        processing_mode="distributed_epoch", service=dispatcher.target))
    # or, as the TF Dev Summit 2020 talk "Scaling TensorFlow data processing with tf.data"
    # writes it: ds = ds.distribute(dispatcher.target)

`python -m tensorlite.data.service --workers 2` starts a dispatcher with two workers and
prints its address and the credentials file other processes pass as `security=`. Every
peer authenticates with mutual TLS (credentials.py) and listens on 127.0.0.1 unless told
otherwise. On a cluster, any Dask scheduler started with the cluster's TLS credentials is a
dispatcher (`dask scheduler --protocol tls --tls-ca-file F --tls-cert F --tls-key F`, then
`dask worker tls://scheduler:8786` with the same options on each machine; F from
`python -m tensorlite.data.service --write-credentials F`; docs/distributed.md).

processing_mode="parallel_epochs": every worker runs the whole pipeline (N workers, N
epochs). "distributed_epoch": the sources are split among the workers and every element of
the epoch is delivered exactly once, even when a worker dies mid-epoch (dispatcher.py).
"""
from tensorlite.data.service.consumer import (DISTRIBUTED_EPOCH, PARALLEL_EPOCHS,  # noqa
                                              ShardingPolicy, distribute, from_dataset_id,
                                              register_dataset)
from tensorlite.data.service.servers import (DispatchServer, DispatcherConfig,  # noqa: F401
                                             WorkerConfig, WorkerServer)
