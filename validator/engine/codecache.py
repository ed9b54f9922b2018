"""Compiled code of the backend's generated functions kept across processes (``core.blobcache``).

A fresh process writes the source of each definition it calls as the warm one did, but need not
compile it again: the code compiled from a source text is found by a digest of that text (with
ruleval's own code and the Python version, ``blobcache.name``), signed with the user's key. This is
the one cache whose content is run: docs/security.md ("Caches") says why that is safe and what it
does not cover. What is read back must be a code object compiled from a file of the name asked
for, else it is ignored and the source compiled.
"""

from __future__ import annotations

import marshal
import types
from typing import Callable

from ..core import blobcache

KIND = "code"
MAX_CODE_BYTES = 4_000_000


def compiled(source: str, filename: str, compile_text: Callable[[str, str], types.CodeType]) -> types.CodeType:
    """The code of ``source``: from the cache if a signed entry for this very text is there, else
    ``compile_text(source, filename)``, kept for the next process."""
    if not blobcache.in_use(KIND):
        return compile_text(source, filename)
    entry = blobcache.name(KIND, filename, source)
    kept = blobcache.load(KIND, entry, MAX_CODE_BYTES)
    if kept is not None:
        try:
            code = marshal.loads(kept)
        except (ValueError, EOFError, TypeError):
            code = None
        if isinstance(code, types.CodeType) and code.co_filename == filename:
            return code
    code = compile_text(source, filename)
    blobcache.store(KIND, entry, marshal.dumps(code))
    return code
