"""The interpreter knows no game: no game word appears in validator/ (code, comments, docstrings,
messages, and the playground's page: its HTML, CSS and JavaScript). Game knowledge belongs in
rulesets/ and the data they load."""

from __future__ import annotations

import re
from pathlib import Path

VALIDATOR = Path(__file__).resolve().parent.parent / "validator"

# Words of the three bundled families (and their usual synonyms) that would betray game knowledge, also
# inside a name made of words (`diplomacy_throughput`): only a letter next to one makes it another word.
GAME_WORDS = re.compile(
    r"(?<![a-z])(army|armies|fleet|fleets|convoy\w*|cavalry|infantry|artillery|camel\w*|elephant\w*|lancer\w*|"
    r"intercept\w*|fortress\w*|fortif\w*|siege\w*|besieg\w*|diplomacy|jomini|here ?i ?stand|ottoman|hapsburg|"
    r"province\w*|supply.?cent\w*|dislodg\w*|standoff\w*|bounce\w*|datc|telescope|storms|road march)(?![a-z])",
    re.IGNORECASE,
)


SCANNED = {".py", ".js", ".html", ".css", ".lark", ".json", ".yaml", ".md"}


def test_validator_has_no_game_words() -> None:
    hits = []
    files = [p for p in VALIDATOR.rglob("*") if p.suffix in SCANNED and p.is_file()]
    assert any(p.suffix == ".js" for p in files)  # the page is scanned too
    for path in sorted(files):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = GAME_WORDS.search(line)
            if m:
                hits.append(f"{path.name}:{lineno}: {m.group(0)!r} in {line.strip()[:80]}")
    assert not hits, "game words in validator/:\n" + "\n".join(hits)
