"""`kt.HyperParameters`: the search space a model-building function declares as it runs.

`hp.Int`, `hp.Float`, `hp.Choice`, `hp.Boolean` and `hp.Fixed` register a hyperparameter
(the first time) and return its value in the current trial (its default while the space is
being discovered). Inside `with hp.conditional_scope(parent, values):` hyperparameters are
active only when the parent's value is one of `values`; inactive ones return None and are
not part of the trial's values.

Example:
    >>> hp = kt.HyperParameters()
    >>> hp.Int("units", 32, 256, step=32)
    32
    >>> hp.Float("lr", 1e-4, 1e-2, sampling="log")
    0.0001
"""
import contextlib
import math

import numpy as np

__all__ = ["HyperParameters", "Int", "Float", "Choice", "Boolean", "Fixed"]


class _HP:
    kind = ""

    def __init__(self, name, default=None, conditions=()):
        self.name = name
        self.default = default
        self.conditions = list(conditions)  # [(parent name, [values])]

    def config(self):
        return {"default": self.default, "conditions": [
            {"class_name": "Parent", "config": {"name": n, "values": v}}
            for n, v in self.conditions]}

    def grid(self):
        raise NotImplementedError

    def contains(self, v):
        """Whether `v` (read back from a trial file) is a value of this hyperparameter."""
        raise NotImplementedError(f"{type(self).__name__}.contains")

    def __repr__(self):
        return f"{self.kind}(name={self.name!r})"


def _check_sampling(sampling, lo, hi, name):
    sampling = (sampling or "linear").lower()
    if sampling not in ("linear", "log", "reverse_log"):
        raise ValueError(f"`sampling` must be one of 'linear', 'log' or 'reverse_log', got "
                         f"{sampling!r} (hyperparameter {name!r})")
    if sampling != "linear" and lo <= 0:
        raise ValueError(f"`sampling='{sampling}'` needs min_value > 0 (hyperparameter "
                         f"{name!r}, min_value={lo})")
    return sampling


class _Range(_HP):
    def __init__(self, name, min_value, max_value, step, sampling, default, conditions):
        if min_value > max_value:
            raise ValueError(f"{self.kind} {name!r}: min_value {min_value} > max_value "
                             f"{max_value}")
        self.min_value, self.max_value, self.step = min_value, max_value, step
        self.sampling = _check_sampling(sampling, min_value, max_value, name)
        super().__init__(name, min_value if default is None else default, conditions)

    def from_unit(self, u):
        """The value at u in [0, 1] of the (linear, log or reverse-log) range."""
        lo, hi = self.min_value, self.max_value
        if self.sampling == "log":
            v = lo * (hi / lo) ** u
        elif self.sampling == "reverse_log":
            v = hi + lo - lo * (hi / lo) ** (1 - u)
        else:
            v = lo + u * (hi - lo)
        return self._snap(v)

    def to_unit(self, v):
        lo, hi = self.min_value, self.max_value
        if hi == lo:
            return 0.5
        if self.sampling == "log":
            return math.log(v / lo) / math.log(hi / lo)
        if self.sampling == "reverse_log":
            return 1 - math.log((hi + lo - v) / lo) / math.log(hi / lo)
        return (v - lo) / (hi - lo)

    def _snap(self, v):
        if self.step:
            if self.sampling == "linear":
                v = self.min_value + round((v - self.min_value) / self.step) * self.step
            else:  # log steps multiply
                k = round(math.log(v / self.min_value) / math.log(self.step))
                v = self.min_value * self.step ** k
        return min(max(v, self.min_value), self.max_value)

    def grid(self):
        if self.step:
            if self.sampling == "linear":
                n = int(round((self.max_value - self.min_value) / self.step)) + 1
                return [self._cast(self.min_value + i * self.step) for i in range(n)
                        if self.min_value + i * self.step <= self.max_value + 1e-12]
            out, v = [], self.min_value
            while v <= self.max_value * (1 + 1e-12):
                out.append(self._cast(v))
                v *= self.step
            return out
        return sorted({self._cast(self.from_unit(u)) for u in np.linspace(0, 1, 10)})

    def contains(self, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return False
        slack = 1e-9 * max(abs(self.min_value), abs(self.max_value), 1)
        return self.min_value - slack <= v <= self.max_value + slack and \
            (self.kind != "Int" or float(v).is_integer())

    def config(self):
        return {**super().config(), "min_value": self.min_value, "max_value": self.max_value,
                "step": self.step, "sampling": self.sampling}


class Int(_Range):
    kind = "Int"

    def __init__(self, name, min_value, max_value, step=None, sampling="linear",
                 default=None, conditions=()):
        super().__init__(name, int(min_value), int(max_value), step, sampling,
                         None if default is None else int(default), conditions)
        if self.step is None and self.sampling == "linear":
            self.step = 1

    def _cast(self, v):
        return int(round(v))

    def random(self, rng):
        return self._cast(self.from_unit(rng.random()))

    def from_unit(self, u):
        return self._cast(super().from_unit(u))


class Float(_Range):
    kind = "Float"

    def __init__(self, name, min_value, max_value, step=None, sampling="linear",
                 default=None, conditions=()):
        super().__init__(name, float(min_value), float(max_value), step, sampling,
                         None if default is None else float(default), conditions)

    def _cast(self, v):
        return float(v)

    def random(self, rng):
        return self.from_unit(rng.random())


class Choice(_HP):
    kind = "Choice"

    def __init__(self, name, values, ordered=None, default=None, conditions=()):
        values = list(values)
        if not values:
            raise ValueError(f"Choice {name!r} needs at least one value")
        kinds = {type(v) for v in values}
        if len(kinds) > 1 and not kinds <= {int, float}:
            raise TypeError(f"Choice {name!r}: values must be of one type (int, float, str "
                            f"or bool), got {values}")
        if default is not None and default not in values:
            raise ValueError(f"Choice {name!r}: the default {default!r} is not one of "
                             f"{values}")
        self.values = values
        self.ordered = ordered if ordered is not None else kinds <= {int, float}
        super().__init__(name, values[0] if default is None else default, conditions)

    def random(self, rng):
        return self.values[int(rng.integers(len(self.values)))]

    def from_unit(self, u):
        return self.values[min(int(u * len(self.values)), len(self.values) - 1)]

    def to_unit(self, v):
        return (self.values.index(v) + 0.5) / len(self.values)

    def grid(self):
        return list(self.values)

    def contains(self, v):
        return any(type(v) is type(c) and v == c for c in self.values) or (
            self.ordered and isinstance(v, (int, float)) and not isinstance(v, bool) and
            v in self.values)

    def config(self):
        return {**super().config(), "values": self.values, "ordered": self.ordered}


class Boolean(Choice):
    kind = "Boolean"

    def __init__(self, name, default=False, conditions=()):
        super().__init__(name, [False, True], ordered=False, default=bool(default),
                         conditions=conditions)

    def config(self):
        return _HP.config(self)


class Fixed(_HP):
    kind = "Fixed"

    def __init__(self, name, value, conditions=()):
        super().__init__(name, value, conditions)
        self.value = value

    def random(self, rng):
        return self.value

    def from_unit(self, u):
        return self.value

    def to_unit(self, v):
        return 0.5

    def grid(self):
        return [self.value]

    def contains(self, v):
        return v == self.value

    def config(self):
        return {**super().config(), "value": self.value}


_KINDS = {c.kind: c for c in (Int, Float, Choice, Boolean, Fixed)}


class HyperParameters:
    """A search space (`space`) and one point of it (`values`)."""

    def __init__(self):
        self._space = {}  # name -> _HP, in registration order
        self.values = {}
        self._conditions = []  # the stack of active conditional scopes

    # -- declaring -----------------------------------------------------------------------
    def _register(self, hp):
        known = self._space.get(hp.name)
        if known is None:
            self._space[hp.name] = hp
            known = hp
        if not self.is_active(known):
            return None
        if known.name not in self.values:
            self.values[known.name] = known.value if isinstance(known, Fixed) else \
                known.default
        return self.values[known.name]

    def _conds(self):
        return [tuple(c) for c in self._conditions]

    def Int(self, name, min_value, max_value, step=None, sampling="linear",  # noqa: N802
            default=None, parent_name=None, parent_values=None):
        """An integer in [min_value, max_value] (step 1 by default for linear sampling)."""
        return self._declare(Int(name, min_value, max_value, step, sampling, default,
                                 self._conds()), parent_name, parent_values)

    def Float(self, name, min_value, max_value, step=None, sampling="linear",  # noqa: N802
              default=None, parent_name=None, parent_values=None):
        """A float in [min_value, max_value], sampled linearly, log or reverse-log."""
        return self._declare(Float(name, min_value, max_value, step, sampling, default,
                                   self._conds()), parent_name, parent_values)

    def Choice(self, name, values, ordered=None, default=None,  # noqa: N802
               parent_name=None, parent_values=None):
        """One of `values`."""
        return self._declare(Choice(name, values, ordered, default, self._conds()),
                             parent_name, parent_values)

    def Boolean(self, name, default=False, parent_name=None, parent_values=None):  # noqa: N802
        return self._declare(Boolean(name, default, self._conds()), parent_name,
                             parent_values)

    def Fixed(self, name, value, parent_name=None, parent_values=None):  # noqa: N802
        """A constant recorded with the trial."""
        return self._declare(Fixed(name, value, self._conds()), parent_name, parent_values)

    def _declare(self, hp, parent_name, parent_values):
        if parent_name is not None:
            hp.conditions.append((parent_name, list(_as_list(parent_values))))
        return self._register(hp)

    @contextlib.contextmanager
    def conditional_scope(self, parent_name, parent_values):
        """Hyperparameters declared inside are active only when `parent_name`'s value is
        in `parent_values`."""
        if parent_name not in self._space:
            raise ValueError(f"`HyperParameter` named: {parent_name} not defined.")
        self._conditions.append((parent_name, list(_as_list(parent_values))))
        try:
            yield
        finally:
            self._conditions.pop()

    # -- reading -------------------------------------------------------------------------
    def is_active(self, hp):
        hp = self._space[hp] if isinstance(hp, str) else hp
        for parent, allowed in hp.conditions:
            parent_hp = self._space.get(parent)
            if parent_hp is None or not self.is_active(parent_hp):
                return False
            value = self.values.get(parent, parent_hp.default)
            if value not in allowed:
                return False
        return True

    def get(self, name):
        if name in self.values:
            return self.values[name]
        if name in self._space:
            return None if not self.is_active(name) else self._space[name].default
        raise KeyError(f"{name} does not exist.")

    def __getitem__(self, name):
        return self.get(name)

    def __contains__(self, name):
        return name in self._space or name in self.values

    @property
    def space(self):
        return list(self._space.values())

    def active_values(self):
        return {n: v for n, v in self.values.items()
                if n not in self._space or self.is_active(n)}

    # -- copies and storage --------------------------------------------------------------
    def copy(self):
        hp = HyperParameters()
        hp._space = dict(self._space)
        hp.values = dict(self.values)
        return hp

    def with_values(self, values):
        hp = self.copy()
        hp.values = dict(values)
        return hp

    def get_config(self):
        return {"space": [{"class_name": h.kind, "config": {"name": h.name, **h.config()}}
                          for h in self._space.values()], "values": dict(self.values)}

    @classmethod
    def from_config(cls, config):
        """Rebuilds from get_config's dict (data only: the kinds are looked up in a fixed
        table, nothing named in the data is imported or called)."""
        hp = cls()
        for entry in config.get("space", []):
            kind = _KINDS.get(entry.get("class_name"))
            if kind is None:
                raise ValueError(f"unknown hyperparameter kind {entry.get('class_name')!r}")
            c = dict(entry["config"])
            conds = [(d["config"]["name"], d["config"]["values"])
                     for d in c.pop("conditions", [])]
            name = c.pop("name")
            if kind is Fixed:
                obj = Fixed(name, c["value"], conds)
            elif kind is Boolean:
                obj = Boolean(name, c.get("default", False), conds)
            elif kind is Choice:
                obj = Choice(name, c["values"], c.get("ordered"), c.get("default"), conds)
            else:
                obj = kind(name, c["min_value"], c["max_value"], c.get("step"),
                           c.get("sampling", "linear"), c.get("default"), conds)
            hp._space[name] = obj
        hp.values = dict(config.get("values", {}))
        return hp


def _as_list(v):
    return v if isinstance(v, (list, tuple)) else [v]
