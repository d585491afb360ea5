"""Where the harness finds its schemas and briefs.

The top-level ``briefs/`` and ``schemas/`` folders of the repository are the source of truth;
a built wheel carries copies of them as ``harness/_data/briefs`` and ``harness/_data/schemas``
(``[tool.hatch.build.targets.wheel.force-include]`` in pyproject.toml).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any


@functools.cache
def _data_root() -> Path:
    # Found on first use, not at import: importlib.resources (and the zipfile it loads) is
    # 5 ms that `judge validate` of a valid judge.json never needs.
    from importlib.resources import files

    packaged = files("harness") / "_data"
    if packaged.is_dir():
        if isinstance(packaged, Path):
            return packaged
        raise RuntimeError(
            f"harness is installed in a form that is not plain files ({packaged!r}); "
            "install the wheel with pip so that its data files are on disk."
        )
    # A source checkout or an editable install imports harness/ from the checkout, where no
    # _data/ copy exists (the build makes it only inside the wheel, so it cannot drift from
    # the top-level folders); the checkout's own briefs/ and schemas/ are the files then.
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "briefs").is_dir() and (checkout / "schemas").is_dir():
        return checkout
    raise RuntimeError(
        f"harness data not found: neither {packaged} nor {checkout}/briefs and "
        f"{checkout}/schemas exist; reinstall the package (pip install judge-harness)."
    )


_NAMES = {
    "ROOT": lambda root: root,
    "SCHEMAS": lambda root: root / "schemas",
    "BRIEFS": lambda root: root / "briefs",
    "DEFAULT_BRIEF": lambda root: root / "briefs" / "judge-deep.md",
}


def __getattr__(name: str) -> Any:
    """`ROOT`, `SCHEMAS`, `BRIEFS` and `DEFAULT_BRIEF`, located when first asked for."""
    if name in _NAMES:
        return _NAMES[name](_data_root())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def schema_path(name: str) -> Path:
    return _data_root() / "schemas" / name
