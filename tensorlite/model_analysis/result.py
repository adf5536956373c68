"""tfma.EvalResult: the metrics of every (slice, model), the validation against thresholds,
and the files `run_model_analysis(output_path=...)` writes: metrics.json, validations.json,
report.html, and the blessing (a `BLESSED` or `NOT_BLESSED` file, as TFX's Evaluator).

Slice keys are tuples of (feature, value) pairs, () for the whole dataset; TFMA's own metrics
protos (tensorflow_model_analysis/proto) are not written: the metrics file is JSON.
"""
import json
import os

from tensorlite.model_analysis.report import slicing_metrics_html


def slice_name(key):
    """'Overall', or 'city:NYC' / 'city:NYC, age:3' for a slice key."""
    return "Overall" if not key else ", ".join(f"{k}:{v}" for k, v in key)


class EvalResult:
    """The result of run_model_analysis."""

    def __init__(self, rows, specs, eval_config):
        self._rows = rows  # (slice key, model name, example count, {metric: {...}})
        self.eval_config = eval_config
        self.candidate_name = next((s.name for s in specs if not s.is_baseline), specs[0].name)
        self.baseline_name = next((s.name for s in specs if s.is_baseline), None)
        self.validation = None

    @property
    def slicing_metrics(self):
        """[(slice key, {metric: {'value', ...}})] of the candidate model."""
        return [(key, metrics) for key, model, _, metrics in self._rows
                if model == self.candidate_name]

    def slice_keys(self, model_name=None):
        """The slice keys evaluated for a model (default: the candidate)."""
        model_name = self.candidate_name if model_name is None else model_name
        return [key for key, model, _, _ in self._rows if model == model_name]

    def metrics_for_slice(self, slice_key, model_name=None):
        """{metric: {'value', ...}} of one slice; KeyError naming the slices otherwise."""
        model_name = self.candidate_name if model_name is None else model_name
        for key, model, _, metrics in self._rows:
            if model == model_name and tuple(key) == tuple(slice_key):
                return metrics
        raise KeyError(f"no slice {slice_key!r} for model {model_name!r}; the slices are "
                       f"{self.slice_keys(model_name)}")

    def to_json(self):
        """The results as a JSON-serializable dict."""
        return {"slices": [{"slice": [list(kv) for kv in key], "slice_name": slice_name(key),
                            "model": model, "example_count": count, "metrics": metrics}
                           for key, model, count, metrics in self._rows],
                "candidate": self.candidate_name, "baseline": self.baseline_name}

    def write(self, output_path):
        """Writes metrics.json, validations.json, report.html and BLESSED / NOT_BLESSED."""
        os.makedirs(output_path, exist_ok=True)
        with open(os.path.join(output_path, "metrics.json"), "w") as f:
            json.dump(self.to_json(), f, indent=1, allow_nan=True)
        with open(os.path.join(output_path, "validations.json"), "w") as f:
            json.dump({"validation_ok": self.validation.validation_ok,
                       "failures": self.validation.failures}, f, indent=1)
        with open(os.path.join(output_path, "report.html"), "w") as f:
            f.write(slicing_metrics_html(self))
        for name in ("BLESSED", "NOT_BLESSED"):
            if os.path.exists(os.path.join(output_path, name)):
                os.remove(os.path.join(output_path, name))
        blessing = "BLESSED" if self.validation.validation_ok else "NOT_BLESSED"
        open(os.path.join(output_path, blessing), "w").close()


def load_eval_result(output_path):
    """The metrics.json of an evaluation output directory, as a dict."""
    with open(os.path.join(output_path, "metrics.json")) as f:
        return json.load(f)


def load_validation_result(output_path):
    """The validations.json of an evaluation output directory, as a dict."""
    with open(os.path.join(output_path, "validations.json")) as f:
        return json.load(f)
