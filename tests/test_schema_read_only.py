"""A schema's verdicts are kept by its identity (``engine.state``: its fast check, its validator, whether it is
usable; ``engine.facts``: the input kinds of a typed backend), so a verdict must never outlive a change
of the schema: the loader hands out read-only schemas (``core.frozen``), and a schema a caller gives
that can change is judged afresh at each call."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from validator import load_ruleset
from validator.api import RunError
from validator.lang.loader import real_path
from validator.engine.state import certainly_valid, schema_errors

_RULES = """ruleset typed.inputs
schema "state.schema.json"
input n: int at "/n"
input words: list[str] at "/words" default []
def more = n + 1
query main = [more, len(words)]
"""
_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
           "additionalProperties": False, "required": ["n"],
           "properties": {"n": {"type": "integer"}, "words": {"type": "array", "items": {"type": "string"}}}}

_CHANGES = [
    lambda s: s["properties"]["n"].__setitem__("type", "string"),
    lambda s: s["properties"]["n"].update(type="string"),
    lambda s: s["required"].append("words"),
    lambda s: s["required"].extend(["words"]),
    lambda s: s.__setitem__("required", ["n", "words"]),
    lambda s: s["properties"].pop("n") and s["properties"].__setitem__("n", {"type": "boolean"}),
    lambda s: s["properties"]["words"]["items"].setdefault("maxLength", 0),
]


def _loaded(tmp_path: Path) -> Any:
    (tmp_path / "typed.rules").write_text(_RULES)
    (tmp_path / "state.schema.json").write_text(json.dumps(_SCHEMA))
    rs = load_ruleset(tmp_path / "typed.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    return rs


def _verdict(run: Any) -> Any:
    try:
        return ("value", run())
    except RunError as exc:
        return ("refused", exc.kind, [(d.code, d.pointer) for d in exc.diagnostics])


@pytest.mark.parametrize("change", range(len(_CHANGES)))
def test_a_loaded_schema_changed_in_place_after_its_checks_gives_no_stale_verdict(tmp_path: Path, change: int) -> None:
    """Each state is checked (and run, on the typed backend) before the change; after it, every verdict is
    that of the schema as it now is, checked afresh (a plain copy: nothing kept of it). A loaded schema
    refuses the change, so the verdicts are the same as before it."""
    rs = _loaded(tmp_path)
    states = [{"n": 2, "words": ["ab", "c"]}, {"n": 2}, {"n": 2, "words": ["ab"], "x": 1}, {"n": "2"}]
    before = [(rs.state_schema_errors(s), _verdict(lambda s=s: rs.run(s))) for s in states]
    try:
        _CHANGES[change](rs.schema)
    except TypeError:
        pass
    now = json.loads(json.dumps(rs.schema))  # the schema as it now is (a plain copy, judged afresh)
    for state in states:
        fresh = schema_errors(state, now, "<state>")
        assert rs.state_schema_errors(state) == fresh
        assert certainly_valid(state, rs.schema) <= (fresh == [])
        assert (_verdict(lambda state=state: rs.run(state))[0] == "value") == (fresh == [])
    assert [(rs.state_schema_errors(s), _verdict(lambda s=s: rs.run(s))) for s in states] == before


def test_a_loaded_schema_is_read_only_and_the_files_own_value() -> None:
    """The loaded schema (and each object and array in it) refuses every change, while reading as the file's
    JSON does (``==``, ``json.dumps``); a copy or a pickle of it is read-only too."""
    rs = load_ruleset(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "standard.rules")
    schema = rs.schema
    assert schema is not None
    on_disk = json.loads(real_path(rs.program.entry.schema_path).read_text(encoding="utf-8"))
    assert schema == on_disk and json.dumps(schema, sort_keys=True) == json.dumps(on_disk, sort_keys=True)
    for copied in (copy.deepcopy(schema), copy.copy(schema), pickle.loads(pickle.dumps(schema))):
        assert copied == schema and type(copied) is type(schema)
        with pytest.raises(TypeError):
            copied["x"] = 1
    objects: list[Any] = [schema]
    seen = 0
    while objects:
        node = objects.pop()
        if isinstance(node, dict):
            changes: Any = [("__setitem__", "x", 1), ("pop", next(iter(node), "x")), ("clear",), ("update", {"x": 1}),
                            ("setdefault", "x", 1), ("popitem",), ("__delitem__", next(iter(node), "x")),
                            ("__ior__", {"x": 1})]
            objects.extend(node.values())
        elif isinstance(node, list):
            changes = [("append", 1), ("clear",), ("sort",), ("reverse",), ("extend", [1]), ("insert", 0, 1),
                       ("__setitem__", slice(None), []), ("pop",), ("remove", node[0] if node else 1),
                       ("__iadd__", [1]), ("__imul__", 2), ("__delitem__", 0)]
            objects.extend(node)
        else:
            continue
        seen += 1
        for name, *args in changes:
            with pytest.raises(TypeError):
                getattr(node, name)(*args)
    assert seen > 10
    assert json.loads(json.dumps(rs.schema)) == on_disk  # (unchanged by all that was tried)


def test_a_schema_a_caller_gives_is_judged_afresh_after_it_changes() -> None:
    """A schema that can change (not the loader's) keeps no verdict: changed between two checks, the second
    gives the changed schema's verdict."""
    schema = copy.deepcopy(_SCHEMA)
    state = {"n": 2}
    assert schema_errors(state, schema, "<state>") == [] and certainly_valid(state, schema)
    schema["properties"]["n"]["type"] = "string"
    assert [d.pointer for d in schema_errors(state, schema, "<state>")] == ["/n"]
    assert not certainly_valid(state, schema)
