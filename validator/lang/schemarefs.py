"""A state schema's ``$ref``s: followed to files of the ruleset root only, never to the network.

jsonschema resolves a ``$ref`` it does not hold by *retrieving* it (by default over HTTP, from any
host, with no time limit), and ``file://`` URIs name any file. A ruleset's schema is untrusted, so:

- when the ruleset loads, ``collect`` walks the schema (and every file it refers to) the way
  jsonschema resolves references (relative to the enclosing ``$id``, else to the schema's own file),
  and reads each referenced file through ``confine`` (inside the root, a regular file, bounded, YAML
  through ``safeyaml``); any other reference (``http:``, ``https:``, a ``file:`` outside the root, an
  unknown scheme, a missing file) is a C025 diagnostic and nothing is fetched;
- at run time the validator gets a ``referencing`` registry holding those files and nothing else,
  whose ``retrieve`` refuses every URI (``registry``): a reference the walk did not foresee can only
  fail (C025), never reach the file system or the network.

References to the JSON Schema meta-schemas resolve from the copies jsonschema ships.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from ..core import confine
from ..core.confine import Refused

MAX_SCHEMA_FILES = 200
REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


class RefProblem(Exception):
    """A reference that is not followed: ``ref`` as written, ``message`` why (no file content); ``file``
    the schema file that makes it (None: not known), ``missing`` the path it names when no file is there
    (a file appearing there later changes the answer: ``Loaded.missing``)."""

    def __init__(self, ref: str, message: str, file: Path | None = None, missing: Path | None = None):
        super().__init__(message)
        self.ref = ref
        self.message = message
        self.file = file
        self.missing = missing


def _walk(node: Any, base: str, depth: int = 0) -> Iterator[tuple[str, str, str]]:
    """(keyword, reference as written, its absolute form) for every reference under ``node``, and
    ("$id", id, absolute id) for every resource it embeds; ``base`` is the enclosing base URI."""
    if depth > 200:  # deeper than any schema; the state check refuses deeper states anyway
        return
    if isinstance(node, dict):
        ident = node.get("$id")
        if isinstance(ident, str):
            base = urljoin(base, ident)
            yield "$id", ident, urldefrag(base)[0]
        for key in REF_KEYWORDS:
            ref = node.get(key)
            if isinstance(ref, str):
                yield key, ref, urldefrag(urljoin(base, ref))[0]
        for value in node.values():
            yield from _walk(value, base, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value, base, depth + 1)


def _is_meta_schema(uri: str) -> bool:
    if not uri.startswith(("http://json-schema.org/", "https://json-schema.org/")):
        return False
    from jsonschema_specifications import REGISTRY

    try:
        REGISTRY.contents(uri)
        return True
    except LookupError:
        return False


def _local_path(uri: str, schema_file: Path) -> Path | None:
    """The file a reference names, or None when it names no file (another scheme)."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            return None
        return Path(unquote(parts.path))
    if parts.scheme or parts.netloc:
        return None
    return schema_file.parent / unquote(parts.path)


# schema values (by id, each kept with its entry) found to refer to no file: a schema's references
# are walked once per process, not once per ruleset that imports data with it (each variant of a base)
_SELF_CONTAINED: dict[int, Any] = {}


def collect(schema: Any, schema_file: Path, root: confine.Root, load: Any) -> dict[str, Any]:
    """The files ``schema`` refers to (transitively), by the URI jsonschema will ask for, read with
    ``load(path) -> value`` (which raises ``RefProblem``); raises ``RefProblem`` for the first reference
    that is not a file in ``root``. A schema that refers to no file gives the same answer whatever its
    path and root (its own references are found within it), so that answer is kept with its value."""
    if _SELF_CONTAINED.get(id(schema)) is schema:
        return {}
    resources = _collect(schema, schema_file, root, load)
    if not resources:
        if len(_SELF_CONTAINED) >= 256:
            _SELF_CONTAINED.clear()
        _SELF_CONTAINED[id(schema)] = schema
    return resources


def _collect(schema: Any, schema_file: Path, root: confine.Root, load: Any) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    files: dict[str, Path] = {"": schema_file}  # each document's file, by its URI
    todo: list[tuple[Any, str, str]] = [(schema, "", "")]  # (node, base URI, its document's URI)
    ids: set[str] = {""}
    while todo:
        node, base, doc = todo.pop()
        found = list(_walk(node, base))
        ids.update(absolute for key, _, absolute in found if key == "$id")
        for key, ref, target in found:
            if key == "$id" or target in ids or target in resources:
                continue
            if _is_meta_schema(target):
                continue
            path = _local_path(target, schema_file)
            if path is None:
                scheme = urlsplit(target).scheme
                where = "the network" if scheme in ("http", "https", "ftp", "ws", "wss") else f"a `{scheme}:` URI"
                raise RefProblem(ref, f"`{key}` `{_short(ref)}` points to {where}; ruleval never fetches schemas",
                                 files[doc])
            try:
                confine.check_file(path, root, _short(ref))
            except Refused as exc:
                raise RefProblem(ref, f"`{key}` {exc.message}", files[doc],
                                 path if exc.reason == "missing" else None) from None
            if len(resources) >= MAX_SCHEMA_FILES:
                raise RefProblem(ref, f"the schema refers to more than {MAX_SCHEMA_FILES} files", files[doc])
            try:
                value = load(path, ref)
            except RefProblem as problem:  # (a file that cannot be read: told at the reference to it)
                problem.file = problem.file or files[doc]
                raise
            if not isinstance(value, (dict, bool)):
                raise RefProblem(ref, f"`{key}` `{_short(ref)}` names a file that holds no schema (a JSON object)",
                                 files[doc])
            resources[target] = value
            files[target] = path
            todo.append((value, target, target))
    documents = {"": schema, **resources}
    todo = [(schema, "", "")] + [(v, uri, uri) for uri, v in resources.items()]
    while todo:  # every reference's JSON pointer leads somewhere in its document
        node, base, doc = todo.pop()
        for key, ref, target in _walk(node, base):
            if key == "$id" or target not in documents:
                continue
            fragment = unquote(urldefrag(urljoin(base, ref))[1])
            if fragment.startswith("/") and not _pointer_found(documents[target], fragment):
                raise RefProblem(ref, f"`{key}` `{_short(ref)}` points to nothing in its schema", files[doc])
    return resources


def _pointer_found(document: Any, pointer: str) -> bool:
    node = document
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def locate(text: str, ref: str) -> tuple[int, int] | None:
    """Line and column (1-based) of a reference in a schema's text, to point at it."""
    for needle in (json.dumps(ref), ref):
        at = text.find(needle)
        if at >= 0:
            return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
    return None


def registry(schema: Any, resources: dict[str, Any]) -> Any:
    """A ``referencing`` registry with the schema's referenced files and no way to retrieve more."""
    import referencing
    import referencing.jsonschema

    from referencing.exceptions import NoSuchResource

    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    spec = referencing.jsonschema.specification_with(dialect or "", default=referencing.jsonschema.DRAFT202012)

    def refuse(uri: str) -> Any:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg] # nothing is fetched: not from the network, nor from any file

    reg: Any = referencing.Registry(retrieve=refuse)  # type: ignore[call-arg]
    return reg.with_resources((uri, referencing.Resource.from_contents(value, default_specification=spec))
                              for uri, value in resources.items())
