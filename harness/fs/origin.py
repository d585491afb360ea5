"""Proof of origin: which artifacts under a session this installation wrote.

Everything under ``SESSION/`` — ``.judge/`` included — comes from the research pipeline,
that is from web content. A run record, a citation report or a cached source text found
there is trusted only when it carries a keyed MAC (HMAC-SHA256) made with this
installation's key, which never lives inside a session:

- ``$JUDGE_KEY_FILE`` if set (a path: shards and machines that share the key share it);
- else ``$JUDGE_STATE_DIR/key``;
- else the platform's user state folder (``~/.local/state/judge/key`` on Linux).

The key is 32 random bytes, created on first use (the folder and each folder made for it
0700 whatever the umask, the file 0600, made atomically: a temp file linked into place, so
two runs starting together agree on one key). A reader never creates it: with no key,
nothing verifies, and every artifact is treated as absent. A key is used only when it and
its folder belong to the user running judge, the key readable by no one else and the folder
writable by no one else: a key another user wrote or could replace would let them seal
judgments this installation then trusts. Otherwise it is refused and said, like an
unreadable key.

Each MAC binds a *kind* (``run``, ``citations``, ``cache``…) so a proof made for one kind
of artifact never vouches for another, and covers the canonical JSON of the document
(``sort_keys``, no whitespace, ASCII) without its ``origin`` field.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "ORIGIN_FIELD",
    "OriginKeyError",
    "canonical",
    "ephemeral_reason",
    "forget_keys",
    "key_id",
    "key_path",
    "load_key",
    "mac",
    "seal",
    "sealed_artifact",
    "sealed_by_us",
    "verify",
]

ORIGIN_FIELD = "origin"
KEY_BYTES = 32
_SCHEME = "hmac-sha256"
_lock = threading.Lock()
_cache: dict[str, bytes] = {}
_ephemeral: dict[str, str] = {}  # key path -> why this process seals with a key of its own


class OriginKeyError(OSError):
    """The key cannot be read or created; the message names the path and the fix."""


def key_path() -> Path:
    """Where this installation's key is (see the module)."""
    explicit = os.environ.get("JUDGE_KEY_FILE")
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("JUDGE_STATE_DIR")
    if state:
        return Path(state).expanduser() / "key"
    from platformdirs import user_state_dir

    return Path(user_state_dir("judge", appauthor=False)) / "key"


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OriginKeyError(
            exc.errno or errno.EIO,
            f"cannot read the origin key {path} ({exc.strerror or exc}); fix its permissions "
            "or point JUDGE_KEY_FILE at a readable key",
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OriginKeyError(errno.EINVAL, f"the origin key {path} is not a regular file")
        _check_private(path, st, "key")
        _check_private(path.parent, os.stat(path.parent), "folder")
        data = os.read(fd, 4 * KEY_BYTES + 1)
    finally:
        os.close(fd)
    text = data.strip()
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < 16:
        raise OriginKeyError(
            errno.EINVAL,
            f"the origin key {path} is not a key this installation wrote (expected "
            f"{2 * KEY_BYTES} hex digits); remove it to make a new one",
        )
    return key


def _check_private(path: Path, st: os.stat_result, what: str) -> None:
    """A key another user wrote, or could replace, proves nothing: refuse the key unless it
    and its folder belong to the user running judge, the key readable by no one else and the
    folder writable by no one else. Said as an unusable key is (`ephemeral_reason`)."""
    me = os.geteuid()
    if st.st_uid != me:
        raise OriginKeyError(
            errno.EPERM,
            f"the origin key's {what} {path} belongs to user {st.st_uid}, not to the user "
            f"running judge ({me}): another user could have written the key; use a key of your "
            "own (JUDGE_STATE_DIR or JUDGE_KEY_FILE in a folder you own)",
        )
    loose = st.st_mode & (0o077 if what == "key" else 0o022)
    if loose:
        fix = f"chmod 600 {path}" if what == "key" else f"chmod go-w {path}"
        who = "read or written" if what == "key" else "written"
        raise OriginKeyError(
            errno.EPERM,
            f"the origin key's {what} {path} can be {who} by other users (mode "
            f"{stat.S_IMODE(st.st_mode):04o}), so the key is not used; run `{fix}`",
        )


def _private_folders(folder: Path) -> None:
    """Make `folder` and each missing parent 0700, whatever the umask (mkdir's `parents`
    gives the parents the umask's mode: 0777 under umask 000)."""
    missing: list[Path] = []
    at = folder
    while not at.exists():
        missing.append(at)
        if at.parent == at:
            break
        at = at.parent
    for made in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(made, 0o700)
            os.chmod(made, 0o700)  # a umask never adds bits, but an ACL default might


def _create_key(path: Path) -> bytes:
    folder = path.parent
    try:
        _private_folders(folder)
        _check_private(folder, os.stat(folder), "folder")
        tmp = folder / f".key.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, secrets.token_hex(KEY_BYTES).encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # never replaces a key another run made meanwhile
        except FileExistsError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        with contextlib.suppress(OSError):
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
    except OriginKeyError:
        raise
    except OSError as exc:
        raise OriginKeyError(
            exc.errno or errno.EIO,
            f"cannot create the origin key {path} ({exc.strerror or exc}); set "
            "JUDGE_STATE_DIR to a writable folder or JUDGE_KEY_FILE to a key",
        ) from None
    key = _read_key(path)
    assert key is not None
    return key


def load_key(*, create: bool) -> bytes | None:
    """This installation's key; None if there is none and ``create`` is false."""
    path = key_path()
    where = str(path)
    with _lock:
        if where in _cache:
            return _cache[where]
        try:
            key = _read_key(path)
            if key is None and create:
                key = _create_key(path)
        except OriginKeyError as exc:
            if not create:
                raise
            # The judge is advisory and never blocks: with no key to keep, this process
            # seals with one of its own, which no later run can verify (its artifacts are
            # then as good as absent to them); `ephemeral_reason` says why.
            key = secrets.token_bytes(KEY_BYTES)
            _ephemeral[where] = str(exc.strerror or exc)
        if key is not None:
            _cache[where] = key
        return key


def ephemeral_reason() -> str | None:
    """Why this process seals with a key no later run can verify, or None."""
    with _lock:
        return _ephemeral.get(str(key_path()))


def forget_keys() -> None:
    """Drop the keys read so far (a test that moves JUDGE_STATE_DIR)."""
    with _lock:
        _cache.clear()
        _ephemeral.clear()


def key_id(key: bytes) -> str:
    """A short public name of a key, for messages (not the key)."""
    return hashlib.sha256(b"judge-key-id\0" + key).hexdigest()[:12]


def canonical(document: Any) -> bytes:
    """The bytes a MAC covers: sorted keys, no whitespace, ASCII only."""
    return json.dumps(
        document, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False
    ).encode("ascii")


def mac(kind: str, data: bytes, *, key: bytes | None = None) -> str:
    """``hmac-sha256:<hex>`` over ``kind`` and ``data`` with this installation's key
    (created if needed). OriginKeyError when there is no key and none can be made."""
    key = key if key is not None else load_key(create=True)
    assert key is not None
    tag = hmac.new(key, kind.encode("ascii") + b"\0" + data, hashlib.sha256).hexdigest()
    return f"{_SCHEME}:{tag}"


def verify(kind: str, data: bytes, tag: object) -> bool:
    """Whether ``tag`` is this installation's MAC of ``kind`` and ``data``."""
    if not isinstance(tag, str) or not tag.startswith(f"{_SCHEME}:"):
        return False
    try:
        key = load_key(create=False)
    except OriginKeyError:
        return False
    if key is None:
        return False
    return hmac.compare_digest(mac(kind, data, key=key), tag)


def seal(kind: str, document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with an ``origin`` field: the MAC over the rest of it."""
    body = {k: v for k, v in document.items() if k != ORIGIN_FIELD}
    key = load_key(create=True)
    assert key is not None
    return {**body, ORIGIN_FIELD: {"mac": mac(kind, canonical(body), key=key), "key": key_id(key)}}


def sealed_by_us(kind: str, document: object) -> bool:
    """Whether ``document`` (parsed JSON) carries this installation's seal for ``kind``."""
    if not isinstance(document, dict):
        return False
    origin = document.get(ORIGIN_FIELD)
    # Exactly what `seal` writes: the MAC and the key's public name, nothing else. The MAC
    # covers the body, so the seal itself is checked whole: a changed or added field of
    # `origin` (the key's name, say) is not this installation's seal either.
    if not isinstance(origin, dict) or set(origin) != {"mac", "key"}:
        return False
    body = {k: v for k, v in document.items() if k != ORIGIN_FIELD}
    try:
        data = canonical(body)
    except (TypeError, ValueError):
        return False
    if not verify(kind, data, origin.get("mac")):
        return False
    key = load_key(create=False)  # verified above: there is a key
    return key is not None and origin.get("key") == key_id(key)


def sealed_artifact(kind: str, document: dict[str, Any], *, indent: int | None = 2) -> bytes:
    """The bytes of an artifact as written: redacted and ASCII-safe (harness.redact), then
    sealed, so the MAC covers exactly what a reader will parse."""
    from harness.redact import artifact_bytes, redact

    body = json.loads(artifact_bytes(document, indent=None))
    sealed = seal(kind, body)
    written = json.dumps(sealed, indent=indent, ensure_ascii=True)
    text = redact(written)  # harness.redact.artifact_text, its input kept
    data = (text + "\n").encode("ascii")
    # Redaction must not touch the seal. Where it changed nothing (the body was redacted
    # before it was sealed), the bytes are `sealed` as JSON writes it and parse back to it:
    # sealed by us by construction, with no second parse, serialisation and MAC to prove it.
    if text != written and not sealed_by_us(kind, json.loads(data)):
        raise OriginKeyError(errno.EINVAL, f"the {kind} artifact could not be sealed")
    return data
