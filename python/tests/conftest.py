"""Shared fixtures: the `ndup` command line the module is checked against, and test texts."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _find_cli() -> list[str]:
    """The `ndup` binary: $NDUP_BIN, else the debug build of this checkout (built once here,
    so a stale binary is never compared)."""
    given = os.environ.get("NDUP_BIN")
    if given:
        return [given]
    subprocess.run(
        ["cargo", "build", "--quiet", "--bin", "ndup", "--manifest-path", str(ROOT / "Cargo.toml")],
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return [str(target / "debug" / "ndup")]


@pytest.fixture(scope="session")
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs `ndup ARGS...`; exit codes 0 and 1 (pairs found) are success."""
    command = _find_cli()

    def run(*args: str | os.PathLike[str], ok: tuple[int, ...] = (0, 1)) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*command, *map(str, args)], capture_output=True, text=True, encoding="utf-8"
        )
        if done.returncode not in ok:
            raise AssertionError(f"ndup {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}")
        return done

    return run


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def words(seed: int, n: int) -> str:
    """`n` pseudo-random words drawn from a vocabulary of 3000, the same for the same seed."""
    import random

    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(3000)}" for _ in range(n))


def corpus() -> list[tuple[str, str]]:
    """(id, text): groups of near copies at several similarities, exact copies (after
    normalization), unrelated texts, an empty one, Unicode and `ndup:ignore` markers."""
    texts: list[tuple[str, str]] = []
    for g in range(6):
        base = words(100 + g, 300)
        texts.append((f"g{g}-base", base))
        for i in range(1 + g % 3):
            edit = words(1000 * g + i, 5 + 25 * i)
            texts.append((f"g{g}-edit{i}", f"{base} {edit}"))
    copy = words(7, 200)
    texts.append(("copy-a", copy))
    texts.append(("copy-b", copy.upper().replace(" ", "  \n")))
    texts.append(("unicode-a", "Ｆｕｌｌ ｗｉｄｔｈ ﬁne café " + words(8, 150)))
    texts.append(("unicode-b", "full width fine café " + words(8, 150)))
    texts.append(("marked", words(9, 120) + "\nndup:ignore-start\nsecret\nndup:ignore-end\n"))
    texts.append(("marked-copy", words(9, 120)))
    texts.append(("long", words(10, 6000)))
    texts.append(("long-edit", words(10, 6000) + " tail"))
    texts.append(("empty", "   "))
    for u in range(4):
        texts.append((f"other{u}", words(500 + u, 80)))
    return texts
