"""A trial (one point of the search space, trained and scored) and its file, written
atomically: a temp name, fsync, os.replace, so a kill leaves the old or the new state.
(Reading a trial file back is checked in project_files.py.)"""
import json
import os
import socket

from tensorlite.framework.atomic_files import write_bytes

__all__ = ["Trial", "TrialStatus", "write_json"]


class TrialStatus:
    RUNNING = "RUNNING"
    IDLE = "IDLE"
    INVALID = "INVALID"
    STOPPED = "STOPPED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


def write_json(path, data):
    """Writes `data` as JSON atomically (the old or the new file after a kill)."""
    write_bytes(path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))


def owner(tuner_id):
    return {"tuner_id": tuner_id, "host": socket.gethostname(), "pid": os.getpid()}


def owner_alive(who):
    """False only when the owner ran on this host and its process is gone."""
    if not who or who.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(who["pid"]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Trial:
    """`kt.engine.trial.Trial`: id, hyperparameters, status, score, per-epoch metrics."""

    def __init__(self, trial_id, hyperparameters, status=TrialStatus.RUNNING, score=None,
                 best_step=None, metrics=None, owner_info=None, message=None,
                 weights=None):
        self.trial_id = trial_id
        self.hyperparameters = hyperparameters
        self.status = status
        self.score = score
        self.best_step = best_step
        self.metrics = metrics or {}
        self.owner = owner_info
        self.message = message
        self.weights = weights  # the best epoch's save_weights prefix, relative to the dir

    def to_dict(self):
        return {"trial_id": self.trial_id, "values": self.hyperparameters.values,
                "status": self.status, "score": self.score, "best_step": self.best_step,
                "metrics": self.metrics, "owner": self.owner, "message": self.message,
                "weights": self.weights}

    @classmethod
    def from_dict(cls, d, space):
        return cls(str(d["trial_id"]), space.with_values(d.get("values", {})), d["status"],
                   d.get("score"), d.get("best_step"), d.get("metrics"), d.get("owner"),
                   d.get("message"), d.get("weights"))

    def summary(self):
        lines = [f"Trial {self.trial_id} summary", "Hyperparameters:"]
        lines += [f"{k}: {v}" for k, v in self.hyperparameters.active_values().items()]
        if self.score is not None:
            lines.append(f"Score: {self.score}")
        if self.status == TrialStatus.FAILED and self.message:
            lines.append(f"Failed: {self.message}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<Trial {self.trial_id} {self.status} score={self.score}>"
