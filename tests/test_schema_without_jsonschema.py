"""A schema's check without jsonschema (``state._surely_usable``, ``state._surely_conforms``): it may only say
"usable" of a schema jsonschema finds usable, and a data file it accepts without jsonschema must be one
jsonschema finds nothing in, with the format checkers as installed and with the optional packages they
use where these are installed (rfc3987, rfc3986-validator)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import json_paths, mutated
from validator.core import safeyaml
from validator.engine import state
from validator.engine.state import _search_pattern, _surely_conforms, _surely_usable, schema_errors, schema_problem
from validator.lang.metaschema import DRAFT_2020_12

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = {str(p.relative_to(ROOT)): json.loads(p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("schemas/*/*.json"))}
CLS = jsonschema.Draft202012Validator
FORMATS = jsonschema.FormatChecker()
FORMATS.checkers = {**CLS.FORMAT_CHECKER.checkers, "regex": (_search_pattern, (re.error,))}
SLOW = settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# texts near URIs: every character class of RFC 3986 and some it refuses
uri_texts = st.text(st.sampled_from("aZ09+-._~!$&'()*,;=:@/?#%[] \\\"<>^`{|}é\n"), max_size=12) | st.sampled_from([
    "urn:x:y", "https://json-schema.org/draft/2020-12/schema", "#/$defs/a", "a/b.json", "//host/p", "///p", "a:",
    "1a:b", "a:b:c", "./a:b", "http://[::1]/", "http://h:80/", "x#y#z", "%41", "http://a b"])


def _with_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check by jsonschema, as before the path without it."""
    monkeypatch.setattr(state, "_surely_usable", lambda schema, resources: False)


@SLOW
@given(value=uri_texts, fmt=st.sampled_from(["uri", "uri-reference", "regex", "date", "email"]))
def test_a_format_is_surely_met_only_where_jsonschema_as_installed_finds_it_met(value: str, fmt: str) -> None:
    if _surely_conforms(value, fmt):
        assert FORMATS.conforms(value, fmt), (value, fmt)


@pytest.mark.parametrize("package", ["rfc3987", "rfc3986_validator"])
@SLOW
@given(value=uri_texts, fmt=st.sampled_from(["uri", "uri-reference"]))
def test_a_uri_is_surely_met_only_where_the_optional_checkers_find_it_met(package: str, value: str, fmt: str) -> None:
    """jsonschema's checkers of `uri` and `uri-reference` where the packages they use are installed."""
    if package == "rfc3987":
        rfc3987 = pytest.importorskip("rfc3987")

        def accepts(v: str, rule: str) -> bool:
            return rfc3987.match(v, rule=rule) is not None
    else:
        from_package = pytest.importorskip("rfc3986_validator")

        def accepts(v: str, rule: str) -> bool:
            return bool(from_package.validate_rfc3986(v, rule=rule))
    if _surely_conforms(value, fmt):
        assert accepts(value, "URI" if fmt == "uri" else "URI_reference"), (value, fmt)


def test_the_values_the_bundled_schemas_name_surely_conform() -> None:
    """(else the bundled rulesets would still import jsonschema to check their schemas)"""
    for name, schema in SCHEMAS.items():
        assert _surely_usable(schema, {}), name
    assert _surely_conforms(DRAFT_2020_12, "uri") and _surely_conforms("#/$defs/x", "uri-reference")
    assert not _surely_conforms("a/b", "uri") and not _surely_conforms("http://[::1]/", "uri")


KEYWORDS = ["$id", "$schema", "$ref", "pattern", "type", "properties", "required", "enum", "format", "items",
            "$defs", "additionalProperties", "minimum", "$vocabulary", "patternProperties", "title"]
values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | uri_texts | st.sampled_from(["string", "object", "^[a-z]+$", "(", "a(?=b)"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=2), inner,
                                                                max_size=3), max_leaves=6)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@SLOW
@given(data=st.data())
def test_a_mutated_schema_is_surely_usable_only_when_jsonschema_finds_nothing(name: str, data: Any) -> None:
    path = data.draw(st.sampled_from(json_paths(SCHEMAS[name])))
    how = data.draw(st.sampled_from(["replace", "delete", "add"])) if path else "replace"
    schema = mutated(SCHEMAS[name], path, how, data.draw(values), data.draw(st.sampled_from(KEYWORDS)) if path else "")
    if _surely_usable(schema, {}):
        with pytest.MonkeyPatch.context() as mp:
            _with_jsonschema(mp)
            assert schema_problem(schema) is None, schema


def _data_files() -> list[tuple[Any, Any]]:
    """(a bundled data file's value, the schema it is imported with)."""
    found = []
    for rules in sorted(ROOT.glob("rulesets/diplomacy/*.rules")):
        m = re.search(r'import "([^"]+)" as \w+ with schema "([^"]+)"', rules.read_text(encoding="utf-8"))
        if m:
            data = (rules.parent / m.group(1)).read_text(encoding="utf-8")
            found.append((safeyaml.load(data), json.loads((rules.parent / m.group(2)).read_text(encoding="utf-8"))))
    return found[:3]


DATA = _data_files()


def test_there_are_data_files_to_draw_from() -> None:
    assert DATA


@SLOW
@given(data=st.data())
def test_a_data_file_gets_the_same_findings_with_or_without_jsonschema(data: Any) -> None:
    """Mutated data files of the bundled rulesets, each with its schema: the findings (S002 by jsonschema,
    or none) are the same as when jsonschema checks every schema and every file."""
    value, schema = data.draw(st.sampled_from(DATA))
    path = data.draw(st.sampled_from(json_paths(value)[:400]))
    how = data.draw(st.sampled_from(["replace", "delete", "add"])) if path else "replace"
    value = mutated(value, path, how, data.draw(values), "zz")
    fresh = json.loads(json.dumps(schema))  # (a new schema object: nothing kept from another run)
    now = schema_errors(value, fresh, "data.yaml")
    with pytest.MonkeyPatch.context() as mp:
        _with_jsonschema(mp)
        before = schema_errors(value, json.loads(json.dumps(schema)), "data.yaml")
    assert now == before


def test_a_check_of_the_bundled_rulesets_imports_no_jsonschema() -> None:
    """The point of the path: a cold check whose schemas and data files all pass never imports jsonschema (nor
    `referencing`, what it resolves references with)."""
    code = ("import sys; from validator.tools.cli import main; main(['check', 'rulesets/diplomacy/standard.rules', "
            "'--no-cache', '--jobs', '1']); print('jsonschema' in sys.modules or 'referencing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr
