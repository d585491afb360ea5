"""Where the harness finds its schemas and briefs.

The top-level ``briefs/`` and ``schemas/`` folders of the repository are the source of truth;
a built wheel carries copies of them as ``harness/_data/briefs`` and ``harness/_data/schemas``
(``[tool.hatch.build.targets.wheel.force-include]`` in pyproject.toml).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _data_root() -> Path:
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


ROOT = _data_root()
SCHEMAS = ROOT / "schemas"
BRIEFS = ROOT / "briefs"
DEFAULT_BRIEF = BRIEFS / "judge-deep.md"


def schema_path(name: str) -> Path:
    return SCHEMAS / name
