"""AUTOTUNE's choice for `map(num_parallel_calls=...)` as pure functions of measurements
(data/map_autotune.py `decide`, `decide_after_gil_probe`): no threads, no processes."""
import tensorlite as tf
from tensorlite.data.map_autotune import (Measurements, decide, decide_after_gil_probe,
                                          summarize)

AUTOTUNE = tf.data.AUTOTUNE


def _runs(wall, cpu, nbytes=64, waited=0.0, count=3):
    return [(wall, cpu, nbytes, waited)] * count


def test_input_that_ended_while_probing_runs_inline():
    assert decide(Measurements([], AUTOTUNE, 8, 8, None)) == \
        ("inline", 1, "input ended or failed while probing")


def test_cheap_function_runs_inline_under_autotune_only():
    mode, n, why = decide(Measurements(_runs(5e-6, 5e-6), AUTOTUNE, 8, 8, None))
    assert (mode, n) == ("inline", 1) and "5 us" in why
    # an explicit num_parallel_calls is honoured even for a cheap function
    assert decide(Measurements(_runs(5e-6, 5e-6), 4, 4, 8, None))[:2] == ("gil_probe", 4)


def test_waiting_function_gets_more_threads_than_cores():
    mode, n, why = decide(Measurements(_runs(10e-3, 1e-3), AUTOTUNE, 2, 2, None))
    assert (mode, n) == ("thread", 8) and "waits 90%" in why
    assert decide(Measurements(_runs(10e-3, 1e-3), AUTOTUNE, 16, 16, None))[1] == 32
    assert decide(Measurements(_runs(10e-3, 1e-3), 3, 3, 16, None))[:2] == ("thread", 3)


def test_run_queue_waits_are_not_mistaken_for_io_waits():
    # wall 10 ms of which 9 ms waiting for a core held by other programs: CPU-bound
    probe = _runs(10e-3, 1e-3, waited=9e-3)
    assert decide(Measurements(probe, AUTOTUNE, 4, 4, None))[0] == "gil_probe"
    latency, own, cpu_frac, moved = summarize(probe)
    assert latency == 10e-3 and abs(own - 1e-3) < 1e-12 and abs(cpu_frac - 1) < 1e-9
    assert moved == 64


def test_forced_mechanism_and_single_call():
    probe = _runs(1e-3, 1e-3)
    assert decide(Measurements(probe, AUTOTUNE, 4, 4, "process")) == \
        ("process", 4, "forced by options.threading.worker_mechanism")
    assert decide(Measurements(probe, 1, 1, 4, None)) == ("thread", 1, "num_parallel_calls=1")


def test_gil_probe_verdicts():
    # each of 4 threads used 1 ms of CPU over a 1 ms round: 4 cores at once
    free = [(0.0, 1e-3, 1e-3)] * 4
    assert decide_after_gil_probe(free, 4, 1e-3, 64)[0] == "thread"
    # GIL-bound: 4 ms of rounds with 1 ms CPU each on one core
    bound = [(0.0, 4e-3, 1e-3)] * 4
    mode, n, why = decide_after_gil_probe(bound, 4, 1e-3, 64)
    assert (mode, n) == ("process", 4) and "1.0 cores" in why
    # ... unless moving the element costs more than computing it
    mode, _, why = decide_after_gil_probe(bound, 4, 1e-3, 8_000_000)
    assert mode == "thread" and "8.00 MB" in why
    # the input ended before every thread had work
    assert decide_after_gil_probe(bound[:2], 4, 1e-3, 64) == \
        ("thread", 4, "the input ended while probing the GIL")
