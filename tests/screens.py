"""Screenshots of the playground kept as test artefacts (tests/artefacts/screenshots/, not committed)
and compared with a committed coarse signature of each (tests/fixtures/screenshots/NAME.json) for gross
changes only: the mean colour of each cell of an 8 x 6 grid. A blank page, a board drawn elsewhere
or a missing picture changes it; a moved label does not. `UPDATE_GOLDEN=1` records new signatures."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ARTEFACTS = ROOT / "artefacts" / "screenshots"
SIGNATURES = ROOT / "fixtures" / "screenshots"  # NAME.json each
GRID = (8, 6)
TOLERANCE = 24.0  # mean difference per channel, out of 255, over the grid


def pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows (RGB or RGBA bytes) of an 8-bit, non-interlaced PNG, as Chromium writes."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, data, width, height, kind = 8, b"", 0, 0, 0
    while pos < len(png):
        length, tag = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if tag == b"IHDR":
            width, height, depth, kind, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and kind in (2, 6) and interlace == 0, (depth, kind, interlace)
        elif tag == b"IDAT":
            data += body
        pos += 12 + length
    raw = zlib.decompress(data)
    size = 3 if kind == 2 else 4
    stride = width * size
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind_of_filter = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - size] if i >= size else 0
            b = prev[i]
            c = prev[i - size] if i >= size else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + a) & 255
            elif kind_of_filter == 2:
                line[i] = (line[i] + b) & 255
            elif kind_of_filter == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind_of_filter == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def signature(png: bytes) -> list[list[int]]:
    width, height, rows = pixels(png)
    size = len(rows[0]) // width if rows else 3
    cols, lines = GRID
    out = []
    for gy in range(lines):
        for gx in range(cols):
            total = [0, 0, 0]
            count = 0
            for y in range(gy * height // lines, (gy + 1) * height // lines, 4):
                row = rows[y]
                for x in range(gx * width // cols, (gx + 1) * width // cols, 4):
                    for k in range(3):
                        total[k] += row[x * size + k]
                    count += 1
            out.append([t // max(count, 1) for t in total])
    return out


def keep(name: str, png: bytes) -> None:
    """Keep the screenshot as an artefact and compare its signature with the recorded one."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    (ARTEFACTS / f"{name}.png").write_bytes(png)
    got = signature(png)
    path = SIGNATURES / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        SIGNATURES.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got) + "\n", encoding="utf-8")
        return
    assert path.is_file(), f"no recorded signature for the screenshot `{name}`: run with UPDATE_GOLDEN=1"
    want = json.loads(path.read_text(encoding="utf-8"))
    diff = sum(abs(a - b) for cell_a, cell_b in zip(got, want) for a, b in zip(cell_a, cell_b)) / (3 * len(want))
    assert diff <= TOLERANCE, f"the screenshot `{name}` changed grossly ({diff:.1f} > {TOLERANCE}): see {ARTEFACTS / name}.png"
