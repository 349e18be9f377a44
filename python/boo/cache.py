"""The kernel cache from Python, with iree-turbine BOO's names.

boo caches compiled kernels on disk by default (BOO_CACHE_ON=1, BOO_CACHE_DIR,
default ~/.cache/boo); BOO's cache is off by default. Changes apply to kernels
compiled from then on: kernels this process already loaded stay loaded, as
BOO's in-memory launchables do.
"""
import contextlib
from pathlib import Path

from . import _C

__all__ = ["set_cache_dir", "use_cache_dir", "clear_cache", "is_cache_enabled", "toggle_cache_on"]


def set_cache_dir(cache_dir=None):
    """Sets the cache folder when `cache_dir` is given; returns the folder in use."""
    folder, enabled = _C.cache_settings()
    if cache_dir:
        folder = str(Path(cache_dir))
        _C.set_cache_settings(folder, enabled)
    return Path(folder)


def is_cache_enabled():
    """Whether compiled kernels are stored in and loaded from the cache folder."""
    return _C.cache_settings()[1]


def toggle_cache_on(enabled):
    """Turns the cache on (1) or off (0)."""
    if enabled not in (0, 1):  # True and False compare equal to 1 and 0
        raise ValueError(f"expected `enabled` to be either 0 or 1, got {enabled!r}")
    folder, _ = _C.cache_settings()
    _C.set_cache_settings(folder, bool(enabled))


@contextlib.contextmanager
def use_cache_dir(cache_dir):
    """Enables the cache in `cache_dir` inside the `with` block; the previous settings come back after it."""
    previous = _C.cache_settings()
    folder = Path(cache_dir)
    _C.set_cache_settings(str(folder), True)
    try:
        yield folder
    finally:
        _C.set_cache_settings(*previous)


def clear_cache():
    """Removes every kernel from the cache folder (the folder itself stays)."""
    _C.clear_cache()
