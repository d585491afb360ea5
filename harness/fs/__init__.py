"""The file-system layer: confined reads of a session, confined writes of its artifacts.

`confined` is the one reader of a session folder (loader, listing, digest, Read, stored
WebFetch, audit snapshots and `show` all read through it); `artifacts` is the one writer
of the artifact folder `.judge/` and of judge.json.
"""
