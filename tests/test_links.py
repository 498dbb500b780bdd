"""Every link of the README and the docs resolves in a fresh clone: relative links to files that git keeps, and
`#anchors` to headings that exist, under GitHub's heading ids and, for the pages mkdocs builds (docs/), under
mkdocs' ids too. Markdown links, images, reference definitions and HTML `href`/`src` are checked; only http(s)
URLs are left out. Code blocks, code spans and HTML comments hold no links."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "experiments").glob("*/README.md")])

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(\S+)", re.M)
HTML = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """`text` without fenced blocks, HTML comments and code spans (blank lines keep line numbers)."""
    blank = lambda m: "\n" * m.group(0).count("\n")  # noqa: E731
    return CODE_SPAN.sub("", COMMENT.sub(blank, FENCE.sub(blank, text)))


def links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every link, image, reference definition and HTML href/src outside code."""
    body = prose(text)
    found = [(m.start(), m.group(1).strip("<>")) for rx in (INLINE, REFERENCE, HTML) for m in rx.finditer(body)]
    return sorted((body.count("\n", 0, at) + 1, target) for at, target in found)


def heading_text(raw: str) -> str:
    """A heading as rendered: code spans keep their text, links their label, emphasis markers go."""
    raw = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    return raw.replace("`", "").replace("*", "")


def github_slug(text: str) -> str:
    """GitHub's heading id (github-slugger): lower case, punctuation dropped, each space a hyphen."""
    text = text.lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return text.replace(" ", "-")


def mkdocs_slug(text: str) -> str:
    """Python-Markdown's toc id (mkdocs): ASCII only, punctuation dropped, runs of spaces and hyphens one hyphen."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def unique(slugs: list[str], sep: str) -> set[str]:
    """Ids as a page gets them: a repeated id takes a suffix (GitHub `-1`, Python-Markdown `_1`)."""
    seen: dict[str, int] = {}
    out = set()
    for s in slugs:
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}{sep}{n}")
        seen[s] = n + 1
    return out


@cache
def anchors(page: Path) -> tuple[frozenset[str], frozenset[str]]:
    """A page's heading ids: (GitHub's, mkdocs')."""
    texts = [heading_text(m.group(2)) for m in HEADING.finditer(FENCE.sub("", page.read_text()))]
    return (frozenset(unique([github_slug(t) for t in texts], "-")),
            frozenset(unique([mkdocs_slug(t) for t in texts], "_")))


@cache
def ignored(path: Path) -> bool:
    """Whether git ignores `path`, so a clone would not have it (False when git is not there)."""
    try:
        r = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, capture_output=True)
    except OSError:
        return False
    return r.returncode == 0


def problem(page: Path, target: str) -> str | None:
    """Why `target`, linked from `page`, would not resolve in a clone; None when it does."""
    if re.match(r"https?://", target):
        return None
    if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
        return "a URL scheme other than http(s)"
    path, _, fragment = target.partition("#")
    dest = page if not path else (page.parent / unquote(path)).resolve()
    if path:
        if path.startswith("/"):
            return "an absolute path (it would not resolve on GitHub or in the site)"
        if not dest.is_relative_to(ROOT):
            return "outside the repository"
        if not dest.exists():
            return "no such file"
        if ignored(dest):
            return "a file git ignores, which a clone does not have"
        if page.is_relative_to(DOCS) and not dest.is_relative_to(DOCS):
            return "outside docs/, which the mkdocs site does not hold (name the file in a code span instead)"
    if fragment:
        if dest.suffix != ".md" or not dest.is_file():
            return f"an anchor into {dest.name}, which is not a Markdown page"
        gh, mk = anchors(dest)
        if fragment not in gh:
            return f"no heading with GitHub's id #{fragment} in {dest.name}"
        if dest.is_relative_to(DOCS) and page.is_relative_to(DOCS) and fragment not in mk:
            return f"no heading with mkdocs' id #{fragment} in {dest.name}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_resolves(page):
    text = page.read_text()
    bad = [f"{page.relative_to(ROOT)}:{line}: ({target}) is {why}" for line, target in links(text)
           if (why := problem(page, target))]
    assert not bad, "\n".join(bad)


def test_the_pages_link_somewhere():
    # The scanner finds links at all (a regex that matched nothing would pass every page).
    readme = links((ROOT / "README.md").read_text())
    assert len(readme) > 20 and any(t.startswith("docs/guide/") for _, t in readme)


def test_the_checker_itself(tmp_path):
    text = ("# Top: the `fabricsim run` command\n\n## Against HPCC's ns-3 fork\n\n## Figs 4–8\n\n## Figs 4–8\n\n"
            "See [a](#against-hpccs-ns-3-fork), ![b](img/x.png \"t\"), [c](other.md#top-the-fabricsim-run-command),\n"
            "`[not](a link)`, <!-- [nor](this) -->, [d](https://example.com/x) and\n\n"
            "```text\n[never](this)\n```\n\n[ref]: ../up.md\n<img src=\"pic.png\">\n")
    assert links(text) == [(9, "#against-hpccs-ns-3-fork"), (9, "img/x.png"), (9, "other.md#top-the-fabricsim-run-command"),
                           (10, "https://example.com/x"), (16, "../up.md"), (17, "pic.png")]
    page = tmp_path / "p.md"
    page.write_text(text)
    gh, mk = anchors(page)
    assert {"against-hpccs-ns-3-fork", "top-the-fabricsim-run-command", "figs-48", "figs-48-1"} <= gh
    assert {"against-hpccs-ns-3-fork", "figs-48", "figs-48_1"} <= mk
    assert github_slug("Why the misses?  Two") == "why-the-misses--two"
    assert mkdocs_slug("Why the misses?  Two") == "why-the-misses-two"
    assert problem(page, "#figs-48") is None and problem(page, "#nope").startswith("no heading")
    assert problem(page, "missing.md") == "outside the repository"
    assert problem(ROOT / "README.md", "docs/nope.md") == "no such file"
    assert problem(ROOT / "README.md", "mailto:x@y.z") == "a URL scheme other than http(s)"
    assert problem(DOCS / "index.md", "../README.md").startswith("outside docs/")


def test_mkdocs_nav_lists_every_page():
    yaml = pytest.importorskip("yaml")  # PyYAML: dask's dependency
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]

    def pages(node) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [p for item in node for p in pages(item)]
        return [p for v in node.values() for p in pages(v)]

    listed = pages(nav)
    have = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == have and len(set(listed)) == len(listed)
