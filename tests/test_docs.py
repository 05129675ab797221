"""The README and the docs/ pages it links: every relative link and anchor resolves, every page is linked from the
README, and the Quickstart holds the test command .ci/run runs.

Markdown is read with markdown-it-py (the parser rich and Textual use); anchors are GitHub's heading slugs.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_MD = MarkdownIt("commonmark").enable("table")


def _tokens(path: Path) -> list[Token]:
    return _MD.parse(path.read_text(encoding="utf-8"))


def _inline_text(token: Token) -> str:
    return "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation and symbols dropped (hyphens and underscores kept),
    each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file; a repeated heading gets -1, -2 … as on GitHub."""
    tokens = _tokens(path)
    seen: Counter[str] = Counter()
    out: set[str] = set()
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type != "heading_open":
            continue
        base = slug(_inline_text(inline))
        out.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    return out


def links(path: Path) -> list[str]:
    """The target of every link and image of a Markdown file, as written."""
    found: list[str] = []

    def walk(tokens: list[Token]) -> None:
        for t in tokens:
            if t.type == "link_open":
                found.append(str(t.attrs["href"]))
            elif t.type == "image":
                found.append(str(t.attrs["src"]))
            if t.children:
                walk(t.children)

    walk(_tokens(path))
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``path`` whose file is missing (or outside ``root``, the repository) or whose anchor is
    not a heading of its target."""
    bad: list[str] = []
    for href in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", href):  # https:, mailto: … : not ours to check offline
            continue
        file_part, _, anchor = href.partition("#")
        target = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not target.is_relative_to(root) or not target.exists():
            bad.append(f"{href}: no such file")
        elif anchor and (target.suffix != ".md" or unquote(anchor) not in anchors(target)):
            bad.append(f"{href}: no heading '{anchor}' in {target.relative_to(root).as_posix()}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    """The check itself: a missing file, a missing anchor, a repeated heading's anchor and a link out of the
    repository are each reported."""
    (tmp_path / "README.md").write_text("# Title\n\n## Quickstart\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# A title: with `code`\n\n## Twice\n\n## Twice\n\n"
        "[ok](#a-title-with-code) [ok](#twice-1) [ok](../README.md#quickstart) [ok](https://example.org/x#y)\n"
        "[bad](missing.md) [bad](#twice-2) [bad](../README.md#no-such-heading) ![bad](../screenshots/none.svg)\n"
        "[bad](../../outside.md)\n",
        encoding="utf-8",
    )
    (tmp_path.parent / "outside.md").write_text("# Outside\n", encoding="utf-8")
    assert broken_links(page, tmp_path) == [
        "missing.md: no such file",
        "#twice-2: no heading 'twice-2' in docs/page.md",
        "../README.md#no-such-heading: no heading 'no-such-heading' in README.md",
        "../screenshots/none.svg: no such file",
        "../../outside.md: no such file",
    ]


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / href.partition("#")[0]).resolve() for href in links(ROOT / "README.md")}
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []


def test_the_quickstart_holds_the_test_command_ci_runs() -> None:
    """.ci/run runs the README's test command verbatim: the command it runs is a line of the Quickstart's code."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line.strip() for line in reversed(ci.splitlines()) if "pytest" in line and not line.startswith("#"))
    tokens = _tokens(ROOT / "README.md")
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and t.content == "Quickstart")
    end = next((i for i, t in enumerate(tokens[start + 1 :], start + 1) if t.type == "heading_open"), len(tokens))
    code = [t.content for t in tokens[start:end] if t.type == "fence"]
    assert any(line.split("#")[0].strip() == command for block in code for line in block.splitlines()), (command, code)
    assert 'readme = "README.md"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
