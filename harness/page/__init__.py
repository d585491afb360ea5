"""`judge report`: a self-contained, inert HTML page of a session's audit, or an index
over a folder of sessions. `inputs` reads, `render` draws, `build` decides and writes."""

from harness.page.build import Written, build, write_index, write_session_page
from harness.page.inputs import SessionPage, load_page, run_view
from harness.page.render import render_index, render_session

__all__ = [
    "SessionPage",
    "Written",
    "build",
    "load_page",
    "render_index",
    "render_session",
    "run_view",
    "write_index",
    "write_session_page",
]
