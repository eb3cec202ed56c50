"""The layers stay honest (DESIGNS.md, rule 6): reads in selectors, writes in services;
annotation never imports the services of quality or media_pipeline, nor frontend; the
pure cores import no Django; quality never imports frontend."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def files(package: str) -> list[Path]:
    return [p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts]


def offenders(package: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    found = {}
    for path in files(package):
        bad = sorted(n for n in imported(path) if n.startswith(forbidden))
        if bad:
            found[str(path.relative_to(ROOT))] = bad
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("annotation", ("quality.services", "quality.designs", "media_pipeline.services",
                        "media_pipeline.tasks", "frontend")),
        ("quality", ("frontend",)),
        ("media_pipeline", ("frontend", "quality")),
        ("quality/stats", ("django", "annotation", "media_pipeline", "frontend", "config")),
        ("media_pipeline/ffmpeg", ("django", "annotation", "quality", "frontend")),
        ("media_pipeline/metrics", ("django", "annotation", "quality", "frontend")),
    ],
)  # fmt: skip
def test_a_layer_imports_nothing_above_it(package, forbidden):
    assert offenders(package, forbidden) == {}


def test_selectors_read_and_never_import_a_service():
    for path in [ROOT / "annotation/selectors.py", ROOT / "quality/selectors.py"]:
        assert not [n for n in imported(path) if ".services" in n], path
