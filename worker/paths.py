"""Files the worker reads or writes stay inside their configured directories."""

from __future__ import annotations

from pathlib import Path

from .errors import BadInput

__all__ = ["confined"]


def confined(base: Path, name: str, field: str) -> Path:
    """`name` resolved inside `base`; absolute paths and `..` escapes are refused."""
    root = base.resolve()
    if Path(name).is_absolute():
        raise BadInput(f"{field}: {name!r} is absolute; give a path inside {base}", field=field)
    path = (root / name).resolve()
    if path != root and root not in path.parents:
        raise BadInput(f"{field}: {name!r} leaves {base}", field=field)
    return path
