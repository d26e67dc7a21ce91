"""The docs stand alone: every link and every repository path they name exists, and none cites a text kept outside.

README.md and docs/*.md are read as text (nothing is rendered). A relative markdown link, ``[..](path)`` or
``![..](path)``, must point at an existing file (its ``#anchor`` stripped). A path in backticks (a code span or a
fenced block) that starts with one of the repository's top-level entries must exist, unless it is written at run
time (``GENERATED``, each with the reason). Papers are cited by author, title and year, never by a file kept beside
the repository (a ``seeds/`` or ``shared/`` folder, "seed 003").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# What a repository path in the docs starts with: the top-level entries a reader can open.
TOP_LEVEL_DIRS = ("agreement/", "plugin/", "tests/", "bench/", "docs/", "docker/", "deploy/", "examples/", "var/")
TOP_LEVEL_FILES = ("Makefile", "BENCHMARKS.md", "README.md", "setup.cfg", "pyproject.toml")
SUFFIXES = (".py", ".md", ".yml", ".yaml", ".ini", ".json", ".xml", ".csv", ".png", ".toml", ".cfg", ".html", ".txt")

# Paths the docs name that do not exist in a checkout, each with why.
GENERATED = {
    "var/demo/report.html": "the admin report `make demo` writes when annotation ends",
    "var/demo/service.secret": "the service's secret `make demo` writes when it starts the service",
    "docker/.env": "the user's copy of docker/.env.example, holding their secrets; never committed",
}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...
OUTSIDE = [
    (re.compile(r"\bseeds?/"), "a seeds/ folder"),
    (re.compile(r"\bshared/"), "a shared/ folder"),
    (re.compile(r"\bseeds?[ _-]?(?:0\d\d|00N)\b", re.IGNORECASE), "a text by its seed number"),
    (re.compile(r"\bseeds'|\bseeds? (?:texts?|documents?|papers?|files?)\b", re.IGNORECASE), "the seed texts"),
]


def _prose(path: Path) -> str:
    """The doc without its fenced code blocks (commands and JSON, where a bracket is not a link)."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def links(path: Path) -> list[str]:
    """The relative link targets of a doc, anchors stripped; external links and bare anchors left out."""
    targets = []
    for match in LINK.finditer(_prose(path)):
        target = match.group(1)
        if EXTERNAL.match(target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def repository_paths(path: Path) -> list[str]:
    """The repository paths a doc names in backticks: inline code spans, and the words of its fenced code blocks.

    A word counts when it starts with a top-level entry and looks like a path (has a ``/`` or a known file suffix).
    A trailing ``:line``, ``::test`` or punctuation is dropped.
    """
    text = path.read_text(encoding="utf-8")
    spans = [match.group(1) for match in CODE.finditer(FENCE.sub("", text))]
    spans += [match.group(0) for match in FENCE.finditer(text)]
    found = []
    for span in spans:
        for word in span.split():
            word = re.sub(r"(::\S*|:\d+(-\d+)?)$", "", word.strip("\"'()[],;.:$`"))
            if word in TOP_LEVEL_FILES or (word.startswith(TOP_LEVEL_DIRS + TOP_LEVEL_FILES)
                                           and ("/" in word or word.endswith(SUFFIXES))):
                found.append(word)
    return found


def _exists(word: str) -> bool:
    word = re.sub(r"<[^<>/]+>", "*", word)  # a placeholder (`tests/plugin/<part>/`): some such path exists
    if any(char in word for char in "*?["):
        return any(ROOT.glob(word))
    return (ROOT / word).exists()


@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_every_relative_link_points_at_a_file(doc):
    missing = [target for target in links(doc) if not (doc.parent / target).exists()]
    assert not missing, f"{_name(doc)} links to what is not in the repository: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_every_repository_path_in_backticks_exists(doc):
    missing = sorted({word for word in repository_paths(doc) if word not in GENERATED and not _exists(word)})
    assert not missing, f"{_name(doc)} names paths that are not in the repository: {missing}"


def test_every_generated_path_is_named_by_a_doc():
    named = {word for doc in DOCS for word in repository_paths(doc)}
    assert not set(GENERATED) - named, "a path no doc names any more: drop it from GENERATED"


@pytest.mark.parametrize("doc", DOCS, ids=_name)
def test_no_doc_cites_a_text_kept_outside_the_repository(doc):
    text = doc.read_text(encoding="utf-8")
    found = [f"{what}: {match.group(0)!r} (line {text.count(chr(10), 0, match.start()) + 1})"
             for pattern, what in OUTSIDE for match in pattern.finditer(text)]
    assert not found, f"{_name(doc)} cites what is not in the repository (cite a paper by author, title, year): {found}"


def test_the_checks_find_what_they_look_for(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("See [a](missing.md#part), ![b](img.png), [c](https://example.org) and [d](#here).\n"
                   "Run `tests/test_docs.py::test_x`, `plugin/cli.py:82`, `python -m x`, `Makefile`, `serve.md` and "
                   "`deploy/uwsgi.ini`.\n```\n[not](a-link.md) cp docker/.env.example docker/.env\n```\n"
                   "seed 003 and seeds/000.txt\n", encoding="utf-8")
    assert links(doc) == ["missing.md", "img.png"]
    assert repository_paths(doc) == ["tests/test_docs.py", "plugin/cli.py", "Makefile", "deploy/uwsgi.ini",
                                     "docker/.env.example", "docker/.env"]
    assert [what for pattern, what in OUTSIDE if pattern.search(doc.read_text())] == [
        "a seeds/ folder", "a text by its seed number"]
