"""Whether `ruleval check` says exactly the same here as in another checkout: for a change meant to make
checking faster and nothing else (the parser, the YAML reader, the data-file checks, lazy imports).

Run from the repository root: `python -m bench.same_check OTHER_TREE`. Every `.rules` file under
rulesets/, tests/, docs/ and bench/ (as this checkout has them) is checked alone, in a fresh process of each
tree, with the check cache off (`RULEVAL_NO_CACHE=1`, `--jobs 1`), in the text and the JSON formats; and so
are the folders rulesets/ and tests/ whole. Each tree runs from its own folder, on its own copy of the files
(the path is the same in both: files the other tree lacks are said and skipped). Compared: standard output,
standard error and the exit code, byte for byte. Every difference is printed; exit 1 if there is one, else 0.
`--only FILE...` checks those files alone (paths under this checkout; in both formats), not the folders.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("rulesets", "tests", "docs", "bench")


def _run(tree: Path, args: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    proc = subprocess.run([sys.executable, "-m", "validator", "check", *args, "--jobs", "1"], cwd=tree, env=env,
                          capture_output=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of ruleval")
    ap.add_argument("--jobs", type=int, default=2, help="checks run at once")
    ap.add_argument("--only", nargs="+", metavar="FILE", help="check these files alone (paths under this checkout)")
    args = ap.parse_args(argv)
    other = args.other.resolve()
    files = sorted(args.only or (str(p.relative_to(ROOT)) for folder in FOLDERS
                                 for p in (ROOT / folder).rglob("*.rules")))
    missing = [f for f in files if not (other / f).is_file()]
    for f in missing:
        print(f"  (not in {other}: {f})")
    cases = [[f, *fmt] for f in files if f not in missing for fmt in ([], ["--format", "json"])]
    if not args.only:
        cases += [["rulesets"], ["tests"], ["rulesets", "--format", "json"]]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RULEVAL_NO_CACHE": "1", "RULEVAL_CACHE_DIR": tmp, "PYTHONHASHSEED": "0"}
        env.pop("PYTHONPATH", None)  # (each tree runs its own code: `-m validator` from its folder)
        with ThreadPoolExecutor(args.jobs) as pool:
            here = list(pool.map(lambda c: _run(ROOT, c, env), cases))
            there = list(pool.map(lambda c: _run(other, c, env), cases))
    differ = 0
    for case, a, b in zip(cases, here, there):
        if a != b:
            differ += 1
            print(f"DIFFERENT: ruleval check {' '.join(case)}")
            for what, x, y in (("exit", a[0], b[0]), ("stdout", a[1], b[1]), ("stderr", a[2], b[2])):
                if x != y:
                    print(f"  {what}: here {x!r:.600}\n  {what}: there {y!r:.600}")
    print(f"same_check: {len(cases) - differ} of {len(cases)} checks said the same in {ROOT} and {other} "
          f"({len(files) - len(missing)} .rules files; exit codes {sorted({r[0] for r in here})})")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
