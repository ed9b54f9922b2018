"""The bundled rulesets ship inside the installed package and a variant in any folder extends them
by a stable name, `extends "bundled:FAMILY/NAME.rules"` (issue 22); a variant's clause catalogue
extends its base's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from validator import load_ruleset

ROOT = Path(__file__).resolve().parent.parent

CHAOS = """\
ruleset my.chaos "build anywhere, from my own folder"
extends "bundled:diplomacy/standard.rules"
clauses "clauses.yaml"

override rule build_problem(pw, p, owners, held) cite "CHAOS-1" =
  if owners[p] != pw then upper(p) + " is not owned by " + pw
  elif p in held then upper(p) + " is occupied"
  else none
"""
STATE = {"phase": {"season": "winter", "year": 1901, "type": "adjustment"},
         "units": [{"power": "france", "type": "army", "location": "par"}],
         "supply_centers": {"par": "france", "mun": "france"}, "orders": [{"power": "france", "order": "BUILD A MUN"}]}


def _variant(folder: Path) -> Path:
    (folder / "ruleval.toml").write_text("")
    (folder / "clauses.yaml").write_text('clauses:\n  CHAOS-1: "a power builds in any supply centre it owns"\n')
    (folder / "chaos.rules").write_text(CHAOS)
    return folder / "chaos.rules"


def test_a_variant_in_its_own_folder_extends_a_bundled_ruleset(tmp_path: Path) -> None:
    rs = load_ruleset(_variant(tmp_path))
    assert rs.ok, [d.render() if hasattr(d, "render") else d.message for d in rs.diagnostics]
    # its catalogue adds CHAOS-1 to the base's clauses (the base's rules still cite theirs)
    assert rs.clauses is not None and "CHAOS-1" in rs.clauses and "DIP-R1" in rs.clauses
    out = rs.run(STATE)
    assert out["orders"][0]["status"] == "succeeds"
    assert {"power": "france", "type": "army", "location": "mun"} in out["units"]


def test_an_unknown_bundled_name_lists_the_bundled_rulesets(tmp_path: Path, cli) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "bad.rules").write_text('ruleset my.bad "x"\nextends "bundled:diplomacy/nope.rules"\n')
    r = cli("check", str(tmp_path / "bad.rules"))
    assert r.code == 1 and "error[C005]" in r.err and "bundled:diplomacy/standard.rules" in r.err


def test_a_misspelt_bundled_name_suggests_the_close_one(tmp_path: Path, cli) -> None:
    """`extends "bundled:diplomacy/standrd.rules"` listed all 27 bundled rulesets for the reader to find
    the slip in: the close name comes first, as for any unknown name."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "bad.rules").write_text('ruleset my.bad "x"\nextends "bundled:diplomacy/standrd.rules"\n')
    r = cli("check", str(tmp_path / "bad.rules"))
    said = " ".join(r.err.split())
    assert r.code == 1 and "error[C005]" in r.err, r.err
    assert "did you mean `bundled:diplomacy/standard.rules`?" in said, r.err


def test_a_variant_s_import_under_another_name_than_its_base_s_says_so(tmp_path: Path, cli) -> None:
    """A designer's map imported `as mapp` (the base reads `map`) left the standard map in play, with
    only "import `mapp` is never used": the warning names the base's import it may have meant to re-bind."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "m.yaml").write_text((ROOT / "rulesets" / "diplomacy" / "teaching_map.yaml").read_text())
    (tmp_path / "v.rules").write_text('ruleset my.v "x"\nextends "bundled:diplomacy/standard.rules"\n'
                                      'import "m.yaml" as mapp\n')
    r = cli("check", str(tmp_path / "v.rules"))
    said = " ".join(r.err.split())
    assert "warning[W103]: import `mapp` is never used" in r.err, r.err
    assert "did you mean `map`, the name the extended ruleset imports its data as" in said, r.err


@pytest.mark.parametrize("ref", ["standard.rules", "diplomacy/standard.rules"])
def test_a_bundled_ruleset_named_as_a_file_of_ones_own_folder_suggests_its_bundled_name(tmp_path: Path, cli,
                                                                                       ref: str) -> None:
    """A variant in its own folder copying `extends "standard.rules"` from a bundled variant found no
    file and said only where it looked: the bundled ruleset of that name is suggested."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "bad.rules").write_text(f'ruleset my.bad "x"\nextends "{ref}"\nimport "m.yaml" as map\n')
    (tmp_path / "m.yaml").write_text("{}\n")
    r = cli("check", str(tmp_path / "bad.rules"))
    assert "W103" not in r.err, r.err  # (`map` is for the base, which was not found: not "never used")
    said = " ".join(r.err.split())  # (the help is wrapped at 100 columns)
    assert r.code == 1 and "error[C005]" in r.err, r.err
    assert "did you mean `bundled:diplomacy/standard.rules`, the ruleset shipped with ruleval?" in said, r.err
    (tmp_path / "other.rules").write_text('ruleset my.other "x"\nextends "no_such_name.rules"\n')
    assert "did you mean" not in cli("check", str(tmp_path / "other.rules")).err


def test_a_bundled_name_cannot_leave_the_bundle(tmp_path: Path, cli) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "bad.rules").write_text('ruleset my.bad "x"\nextends "bundled:../../../../etc/passwd"\n')
    r = cli("check", str(tmp_path / "bad.rules"))
    assert r.code == 1 and "error[C007]" in r.err


def test_a_variant_catalogue_that_restates_a_clause_replaces_its_text(tmp_path: Path) -> None:
    folder = tmp_path
    _variant(folder)
    (folder / "clauses.yaml").write_text('clauses:\n  CHAOS-1: "x"\n'
                                         '  DIP-R1: "retreats and builds, as this variant reads them"\n')
    rs = load_ruleset(folder / "chaos.rules")
    assert rs.ok and rs.clauses is not None and rs.clauses["DIP-R1"].startswith("retreats and builds, as this")


@pytest.mark.slow  # builds and installs a wheel
def test_the_installed_package_ships_the_bundled_rulesets(tmp_path: Path) -> None:
    """Build the wheel, install it alone into a folder and run a variant that extends a bundled
    ruleset from another folder, with that installed copy of ruleval."""
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("ruleval-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.relative_to(ROOT).as_posix() for top in ("rulesets", "schemas") for p in (ROOT / top).rglob("*")
               if p.is_file() and p.suffix in (".rules", ".yaml", ".yml", ".json")}
    assert {f"validator/bundled/{p}" for p in shipped} <= names
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    work = tmp_path / "work"
    work.mkdir()
    variant = _variant(work)
    (work / "s.json").write_text(json.dumps(STATE))
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = ("import sys, validator; assert validator.__file__.startswith(sys.argv[1]), validator.__file__; "
            "from validator.tools.cli import main; sys.exit(main(sys.argv[2:]))")
    r = subprocess.run([sys.executable, "-c", code, str(target), "run", "--format", "json", str(variant), "--state", "s.json"],
                       cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["orders"][0]["status"] == "succeeds"
    assert "validator/bundled/rulesets" not in r.stderr


@pytest.mark.parametrize("name", ["diplomacy/standard.rules", "his/his.rules", "jomini/re.rules"])
def test_every_family_can_be_extended_by_name(tmp_path: Path, name: str) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "v.rules").write_text(f'ruleset my.v "a variant"\nextends "bundled:{name}"\n')
    assert load_ruleset(tmp_path / "v.rules").ok
