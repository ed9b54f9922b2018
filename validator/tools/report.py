"""Output formats for CI: SARIF 2.1.0, GitHub annotations, JUnit XML; and a text view of results."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence
from html import escape as _escape

from ..core.diagnostics import Diagnostic, visible


def xml_text(value: str) -> str:
    """Text for an XML element (html.escape: xml.sax.saxutils would import urllib at start-up).
    Characters XML 1.0 forbids (controls, lone surrogates, U+FFFE/U+FFFF) are shown as escapes
    (``visible``): an unparsable report would hide every result in it."""
    return _escape(visible(value), quote=False)


def xml_attr(value: str) -> str:
    """A quoted XML attribute value; line breaks and tabs kept as character references (a parser
    would turn them into spaces)."""
    text = _escape(visible(value), quote=True)
    return '"' + text.replace("\n", "&#10;").replace("\t", "&#9;") + '"'


MAX_SVG_NUMBER = 1e7  # the largest size or coordinate a drawing takes: a picture's pixels, not arithmetic


def svg_number(value: Any, default: float) -> float:
    """A number a drawing gives for a size, a width or a place, as the float SVG writes; ``default``
    for what is no number, or none a picture can hold (an integer of 400 digits, which Python cannot
    make a float; infinity): such a drawing is drawn with the default, never a crash."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    if isinstance(value, int) and not -MAX_SVG_NUMBER <= value <= MAX_SVG_NUMBER:
        return default
    number = float(value)
    return number if -MAX_SVG_NUMBER <= number <= MAX_SVG_NUMBER else default  # (NaN fails both)


def github_data(text: str) -> str:
    """The message of a GitHub workflow command, escaped as GitHub's runner unescapes it: ``%`` first,
    then CR and LF, so no text can end the command and start another line (``::warning ...``)."""
    return visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A property value of a workflow command (``file=``, ``title=``): also ``:`` and ``,``, which would
    otherwise end the value and add properties of the attacker's choosing."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(kind: str, message: str, file: str, line: int = 0, col: int = 0, end_line: int = 0,
                   end_col: int = 0, title: str | None = None) -> str:
    """One ``::error``/``::warning`` annotation line."""
    props = [f"file={github_property(file)}"]
    if line:
        props.append(f"line={line}")
        if col:
            props.append(f"col={col}")
        if end_line:
            props += [f"endLine={end_line}", f"endColumn={end_col}"]
    if title is not None:
        props.append(f"title={github_property(title)}")
    return f"::{kind} {','.join(props)}::{github_data(message)}"


def render_check(fmt: str, diags: list[Diagnostic], files: list[str]) -> str:
    if fmt == "sarif":
        return json.dumps(sarif(diags), indent=2) + "\n"
    if fmt == "github":
        return "".join(github_line(d) + "\n" for d in diags)
    return junit_check(diags, files)


def sarif(diags: list[Diagnostic]) -> dict[str, Any]:
    from ..core.diagnostics import CODES

    used = sorted({d.code for d in diags})
    rules = [{"id": c, "shortDescription": {"text": CODES.get(c, ("error", c))[1]},
              "helpUri": f"docs/diagnostics.md#{c.lower()}"} for c in used]
    results = []
    for d in diags:
        text = d.message + (f" (help: {d.help})" if d.help else "")
        result = {"ruleId": d.code, "level": "error" if d.is_error else "warning",
                  "message": {"text": text}, "locations": [sarif_location(d.span)]}
        if d.related:  # (as the text's notes and JSON's `related`: another place the finding concerns)
            result["relatedLocations"] = [{**sarif_location(r.span), "id": i, "message": {"text": r.message}}
                                          for i, r in enumerate(d.related)]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "ruleval", "rules": rules}},  # (no `informationUri`: optional)
                  "results": results}],
    }


def sarif_location(span: Any) -> dict[str, Any]:
    """A span as a SARIF ``location``: its file and, where it has one, its region."""
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": sarif_uri(span.file)}}}
    if span.line:
        region = {"startLine": span.line, "startColumn": max(1, span.col)}
        if span.end_line:
            region["endLine"] = span.end_line
            region["endColumn"] = max(1, span.end_col)
        loc["physicalLocation"]["region"] = region
    return loc


def sarif_uri(shown: str) -> str:
    """A shown path as SARIF's `artifactLocation.uri` (a URI reference): a relative path as it is (relative
    to the working folder, as SARIF consumers such as GitHub's resolve it), an absolute one as a `file:`
    URI (docs/diagnostics.md, "Paths")."""
    return Path(shown).as_uri() if os.path.isabs(shown) and "#" not in shown else shown


def sarif_cases(outcomes: list[Any], warnings: list[Diagnostic], file_diags: Sequence[Diagnostic] = ()) -> dict[str, Any]:
    """SARIF for `ruleval test`: one result per failed, erroring or unexpectedly passing case, at
    what failed in it (the value expected, the field or state value at fault) where that is found, else
    the case's line, plus the warnings of the rulesets the cases use and what was wrong with the case
    files themselves (``file_diags``: S004, S005)."""
    doc = sarif(list(file_diags) + list(warnings))
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    kinds = {"failed": "case failed", "error": "case could not run", "xpassed": "case marked xfail passed"}
    for status in sorted({o.status for o in outcomes if o.status in kinds}):
        rules.append({"id": f"case-{status}", "shortDescription": {"text": kinds[status]}})
    for o in outcomes:
        if o.status not in kinds:
            continue
        line, col = o.at or (o.case.line, 1)
        region = {"startLine": max(1, line), "startColumn": max(1, col)}
        doc["runs"][0]["results"].append({
            "ruleId": f"case-{o.status}", "level": "error",
            "message": {"text": f"{o.case.id}: {o.message}" + (f" (help: {o.help})" if o.help else "")},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": sarif_uri(o.case.file)}, "region": region}}]})
    return doc


def github_line(d: Diagnostic) -> str:
    return github_command("error" if d.is_error else "warning", d.message, d.span.file, d.span.line, d.span.col,
                          d.span.end_line, d.span.end_col, title=d.code)


def junit_check(diags: list[Diagnostic], files: list[str]) -> str:
    """One test case per file checked, and per file an error names that no ruleset came from (a FIFO
    in a folder walked, an unreadable file): every error that sets the exit code is a failure here."""
    cases = []
    failures = 0
    files = list(dict.fromkeys(files + [d.span.file for d in diags if d.is_error]))
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
