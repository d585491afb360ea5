"""The file system: the confined reader of a session, atomic writes, the lock."""
