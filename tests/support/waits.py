"""The tests' two hang bounds, in wall-clock seconds: one home for "a wait that must end"
and "a fake that hangs".

A test that shows a wait ended by its limit (a timeout, a deadline, a signal) puts a fake
that holds for HANG seconds behind it and checks that the wait ended within WITHIN. The
limit under test is a few seconds, so a bounded wait ends far inside WITHIN on any machine,
however loaded, and an unbounded one could not end before HANG. Limits passed to the
product (`--max-seconds`, a request's `--timeout`) are the test's own values, not these.

The suite's per-test timeout (pyproject's `timeout`) is 120 s, WITHIN itself: a test that
waits up to WITHIN carries `@pytest.mark.timeout(2 * WITHIN)` (or more, for a test that
waits WITHIN after a time limit, or over many examples), so that a wait that overran fails
on its own assertion, naming what took too long, and not on pytest-timeout's dump.
"""

from __future__ import annotations

WITHIN = 120.0
"""How long a test waits for something that must end: a process to exit, a thread to
finish, a call cut short by its limit to return. A bound no loaded machine reaches (the
waits it guards take a second or a few); the wait itself ends as soon as its thing does,
so a quick machine pays nothing for its size. One value for every such wait: the batch's
waits (a whole `judge batch` process under load) needed 120 s, and nothing gains from a
smaller one elsewhere."""

HANG = 600.0
"""How long a fake holds or hangs: an answer held back, a body or a header dripped, a
resolver that does not answer, a results file that stalls, a lock held by another run. Far
beyond WITHIN, so that a wait that ignored its limit is caught by the WITHIN bound, never
mistaken for a slow one; every fake that holds this long is released when its test ends."""
