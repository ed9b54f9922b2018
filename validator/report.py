"""Output formats for CI: SARIF 2.1.0, GitHub annotations, JUnit XML; and a text view of results."""

from __future__ import annotations

import json
from typing import Any
from html import escape as _escape

from .diagnostics import Diagnostic


def xml_text(value: str) -> str:
    """Text for an XML element (html.escape: xml.sax.saxutils would import urllib at start-up)."""
    return _escape(value, quote=False)


def xml_attr(value: str) -> str:
    """A quoted XML attribute value."""
    return '"' + _escape(value, quote=True) + '"'


def render_check(fmt: str, diags: list[Diagnostic], files: list[str]) -> str:
    if fmt == "sarif":
        return json.dumps(sarif(diags), indent=2) + "\n"
    if fmt == "github":
        return "".join(github_line(d) + "\n" for d in diags)
    return junit_check(diags, files)


def sarif(diags: list[Diagnostic]) -> dict[str, Any]:
    from .diagnostics import CODES

    used = sorted({d.code for d in diags})
    rules = [{"id": c, "shortDescription": {"text": CODES.get(c, ("error", c))[1]},
              "helpUri": f"docs/diagnostics.md#{c.lower()}"} for c in used]
    results = []
    for d in diags:
        region: dict[str, Any] = {}
        if d.span.line:
            region = {"startLine": d.span.line, "startColumn": max(1, d.span.col)}
            if d.span.end_line:
                region["endLine"] = d.span.end_line
                region["endColumn"] = max(1, d.span.end_col)
        loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": d.span.file}}}
        if region:
            loc["physicalLocation"]["region"] = region
        text = d.message + (f" (help: {d.help})" if d.help else "")
        results.append({"ruleId": d.code, "level": "error" if d.is_error else "warning",
                        "message": {"text": text}, "locations": [loc]})
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "ruleval", "informationUri": "https://example.invalid/ruleval",
                                      "rules": rules}},
                  "results": results}],
    }


def sarif_cases(outcomes: list[Any], warnings: list[Diagnostic]) -> dict[str, Any]:
    """SARIF for `ruleval test`: one result per failed, erroring or unexpectedly passing case, at
    the case's line, plus the warnings of the rulesets the cases use."""
    doc = sarif(warnings)
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    kinds = {"failed": "case failed", "error": "case could not run", "xpassed": "case marked xfail passed"}
    for status in sorted({o.status for o in outcomes if o.status in kinds}):
        rules.append({"id": f"case-{status}", "shortDescription": {"text": kinds[status]}})
    for o in outcomes:
        if o.status not in kinds:
            continue
        region = {"startLine": max(1, o.case.line), "startColumn": 1}
        doc["runs"][0]["results"].append({
            "ruleId": f"case-{o.status}", "level": "error",
            "message": {"text": f"{o.case.id}: {o.message}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": o.case.file}, "region": region}}]})
    return doc


def github_line(d: Diagnostic) -> str:
    kind = "error" if d.is_error else "warning"
    msg = d.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    where = f"file={d.span.file}"
    if d.span.line:
        where += f",line={d.span.line},col={d.span.col}"
        if d.span.end_line:
            where += f",endLine={d.span.end_line},endColumn={d.span.end_col}"
    return f"::{kind} {where},title={d.code}::{msg}"


def junit_check(diags: list[Diagnostic], files: list[str]) -> str:
    cases = []
    failures = 0
    for f in files:
        mine = [d for d in diags if d.span.file == f and d.is_error]
        body = ""
        if mine:
            failures += 1
            text = "\n".join(f"{d.span}: {d.code}: {d.message}" for d in mine)
            body = f'<failure message={xml_attr(mine[0].message)} type="{mine[0].code}">{xml_text(text)}</failure>'
        cases.append(f'    <testcase classname="ruleval.check" name={xml_attr(f)}>{body}</testcase>')
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites><testsuite name="ruleval check" tests="{len(files)}" failures="{failures}">\n'
            + "\n".join(cases) + "\n</testsuite></testsuites>\n")


def result_text(result: Any, indent: int = 0) -> str:
    """A readable, line-oriented view of a result (the JSON view is the default)."""
    pad = "  " * indent
    if isinstance(result, dict):
        lines = []
        for k, v in result.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:")
                lines.append(result_text(v, indent + 1))
            else:
                lines.append(f"{pad}{k}: {json.dumps(v, ensure_ascii=False)}")
        return "\n".join(lines)
    if isinstance(result, list):
        return "\n".join(f"{pad}- {json.dumps(x, ensure_ascii=False)}" for x in result)
    return pad + json.dumps(result, ensure_ascii=False)
