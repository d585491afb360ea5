"""The artifacts a run leaves under a session, as typed values: each format and its one reader.

`record` is `.judge/run.json`'s format (`RunRecord`); `read` holds the one reader of each
artifact (the run record, the citation report, the samples), each of which checks this
installation's seal and that the artifact was written for the session being read. The
file names are `harness.fs.names`'; the fetched-text cache's reader is `harness.fs.cache`.
"""
