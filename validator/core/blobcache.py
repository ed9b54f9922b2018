"""Signed binary entries in ruleval's private cache folder: what a fresh process would otherwise
work out again from texts that have not changed (a module's parsed form, the backend's compiled code).

An entry is found by a name made from everything it depends on (the text it was made from, ruleval's
own code and grammar, the Python that reads it: ``name``), and holds an HMAC-SHA256 of its kind, name
and body under the per-user key of the check cache (``checkcache.signing_key``) before the body:

- entries live in a sub-folder of ruleval's private cache folder (``checkcache.private_dir``: made
  with mode 0700, not used at all when it is not the user's own or others may write to it);
- an entry is read through ``confine`` (a regular file of that folder, bounded) and used only if its
  signature is right for the name it was looked up by: one that anyone else wrote, edited, cut short
  or copied under another name is ignored, and the work done afresh;
- ``RULEVAL_NO_CACHE=1`` turns these off with the check cache (a cold run is cold).

What each kind holds, and what is done with it, is said where it is used (``lang/astcache``,
``engine/backend``) and in docs/security.md.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from . import checkcache, confine

MAC_BYTES = 32
# per kind: past either the folder is emptied (entries of old texts are never read again)
MAX_ENTRIES = 20_000
MAX_FOLDER_BYTES = 256_000_000
_CHECKED: set[Path] = set()  # folders whose size was looked at by this process


def _folder(kind: str, always: bool = False) -> Path | None:
    if os.environ.get("RULEVAL_NO_CACHE") and not always:
        return None
    return checkcache.private_dir(kind)


def in_use(kind: str) -> bool:
    """Whether entries of ``kind`` may be kept and read in this process (not with ``RULEVAL_NO_CACHE``,
    nor without a private cache folder)."""
    return _folder(kind) is not None


def name(*parts: str | bytes) -> str:
    """An entry's name: a digest of ``parts`` with ruleval's own code and grammar
    (``checkcache._tool_key``) and the Python that will read the entry."""
    h = hashlib.sha256()
    for part in (checkcache._tool_key(), sys.version, *parts):
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()[:40]


def _mac(key: bytes, kind: str, entry: str, body: bytes) -> bytes:
    import hmac  # (here: a check with the cache off imports it nowhere)

    return hmac.new(key, f"{kind}\0{entry}\0".encode() + body, hashlib.sha256).digest()


def load(kind: str, entry: str, limit: int, always: bool = False) -> bytes | None:
    """The body of entry ``entry`` of ``kind``, or None when there is none, or it is too large, not a
    regular file of the folder, or not signed with this user's key for that kind and name. With
    ``always``, even with ``RULEVAL_NO_CACHE`` (what depends on ruleval alone: the parser's tables)."""
    folder = _folder(kind, always)
    key = checkcache.signing_key(folder.parent) if folder is not None else None
    if folder is None or key is None:
        return None
    try:
        data = confine.read_bytes(folder / entry, limit + MAC_BYTES, folder)
    except confine.Refused:
        return None
    body = data[MAC_BYTES:]
    import hmac

    if len(data) < MAC_BYTES or not hmac.compare_digest(data[:MAC_BYTES], _mac(key, kind, entry, body)):
        return None
    return body


def store(kind: str, entry: str, body: bytes, always: bool = False) -> None:
    """Keep ``body`` as entry ``entry`` of ``kind``, signed, written whole (a failure only means no entry);
    ``always`` as for ``load``."""
    folder = _folder(kind, always)
    key = checkcache.signing_key(folder.parent) if folder is not None else None
    if folder is None or key is None:
        return
    if folder not in _CHECKED:
        _CHECKED.add(folder)
        _bound(folder)
    try:
        confine.write_atomic(folder / entry, _mac(key, kind, entry, body) + body, durable=False)
    except confine.WriteFailed:
        pass


def _bound(folder: Path) -> None:
    """Empty ``folder`` when it holds ``MAX_ENTRIES`` entries or ``MAX_FOLDER_BYTES`` or more (looked at
    once per process, before its first write there)."""
    try:
        with os.scandir(folder) as it:
            found = [(e.name, e.stat(follow_symlinks=False).st_size) for e in it]
        names = [n for n, _ in found]
        if len(names) < MAX_ENTRIES and sum(size for _, size in found) < MAX_FOLDER_BYTES:
            return
        for n in names:
            os.unlink(folder / n)
    except OSError:
        pass
