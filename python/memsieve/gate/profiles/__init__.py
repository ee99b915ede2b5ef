"""The gate's profiles by name: one class per scoring method, chosen once from ``GateConfig.profile``.

``kde`` (``KernelDensityGate``, the default; ``memsieve`` is its older name
and means the same), ``sage`` (``SageGate``), ``maxcos`` (``MaxCosineGate``)
and ``none`` (``StoreEverythingGate``). ``register_profile`` adds one: a
``GateProfile`` subclass, then usable as ``GateConfig(profile=name)``.
"""

from __future__ import annotations

from memsieve.errors import ConfigError, is_choice, short_repr
from memsieve.gate.profiles.base import GateProfile, ScopeView
from memsieve.gate.profiles.kde import KernelDensityGate
from memsieve.gate.profiles.maxcos import MaxCosineGate
from memsieve.gate.profiles.sage import SageGate
from memsieve.gate.profiles.store_everything import StoreEverythingGate

__all__ = ["GateProfile", "KernelDensityGate", "MaxCosineGate", "SageGate", "ScopeView", "StoreEverythingGate",
           "profile_class", "profile_names", "register_profile"]

# "memsieve" is kept beside "kde": stored configs, the eval harness and user
# code name the default profile by it.
_PROFILES: dict[str, type[GateProfile]] = {
    "memsieve": KernelDensityGate,
    "kde": KernelDensityGate,
    "sage": SageGate,
    "maxcos": MaxCosineGate,
    "none": StoreEverythingGate,
}


def register_profile(name: str, cls: type[GateProfile]) -> None:
    """Make ``GateConfig(profile=name)`` gate with ``cls``.

    Args:
        name: the profile's name; an existing name is replaced.
        cls: a ``GateProfile`` subclass.

    Raises:
        ConfigError: ``name`` is not a non-empty string or ``cls`` not a ``GateProfile`` subclass.
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"a gate profile's name must be a non-empty string, got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, GateProfile)):
        raise ConfigError(f"gate profile {name!r} must be a GateProfile subclass, got {cls!r}; "
                          "subclass memsieve.gate.profiles.GateProfile")
    _PROFILES[name] = cls


def profile_names() -> tuple[str, ...]:
    """Every registered profile name, in registration order."""
    return tuple(_PROFILES)


def profile_class(name: str) -> type[GateProfile]:
    """The class a profile name routes to.

    Raises:
        ConfigError: no profile has that name.
    """
    if not is_choice(name, tuple(_PROFILES)):
        raise ConfigError(f"unknown gate profile {short_repr(name)}; use one of {', '.join(_PROFILES)}")
    return _PROFILES[str.__str__(name)]
