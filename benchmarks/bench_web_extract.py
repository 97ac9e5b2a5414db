"""web_fetch's extraction quality on real documentation pages (no network).

Run: ``python benchmarks/bench_web_extract.py`` (or ``python benchmarks/run.py web_extract``).
The corpus is ``ikigai_tools/web/tests/pages/`` (its SOURCES.md: Click's docs built with
Sphinx, Python-Markdown's with MkDocs, from their sdists). For each page the truth is its
main content element (Sphinx's and MkDocs' ``role="main"``): a code block survives when its
text is in the markdown, a heading when its text is a markdown heading. Boilerplate is the
share of the markdown's characters that repeats text of the navigation, sidebars and footer.
Targets (issue 24): >= 95 % of code blocks, >= 90 % of headings, boilerplate far from
dominating (here: <= 10 %).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from bs4 import BeautifulSoup
from ikigai_tools_web.fetch.extract import html_to_markdown

PAGES = Path(__file__).resolve().parent.parent / "ikigai_tools" / "web" / "tests" / "pages"
CHROME = ("nav", "footer", "header", ".sphinxsidebar", ".related", ".footer",
          '[role="navigation"]', ".navbar", "#toc-collapse", ".bs-sidebar")


def words(text: str) -> str:
    """``text`` without backticks and with its whitespace collapsed (markdown re-wraps,
    indents and fences code; a block that shows a fence fences itself with more)."""
    return " ".join(text.replace("`", "").split())


def figures(path: Path) -> tuple[int, int, int, int, int, int]:
    """Code blocks (found, total), headings (found, total), boilerplate and markdown chars."""
    html = path.read_text(encoding="utf-8")
    markdown = html_to_markdown(html, "https://example.org/" + path.name).markdown
    flat = words(markdown)
    soup = BeautifulSoup(html, "html.parser")
    main = soup.find(attrs={"role": "main"}) or soup.body
    codes = [words(pre.get_text()) for pre in main.find_all("pre") if pre.get_text().strip()]
    code_found = sum(code in flat for code in codes)
    md_headings = {words(re.sub(r"[#*\\]", "", line)) for line in markdown.splitlines()
                   if line.startswith("#")}
    heads = [words(re.sub(r"[¶\uf0c1*\\]", "", h.get_text()))
             for h in main.find_all(re.compile(r"^h[1-6]$"))]
    head_found = sum(h in md_headings for h in heads)
    body = words(main.get_text(" "))
    phrases = {words(line) for sel in CHROME for el in soup.select(sel)
               for line in el.get_text("\n").splitlines() if len(words(line)) >= 20}
    boiler = sum(len(p) for p in phrases if p in flat and p not in body)
    return code_found, len(codes), head_found, len(heads), boiler, len(markdown)


def main() -> int:
    """Print each corpus's figures and the total; exit 1 when a target is missed."""
    totals = [0] * 6
    for corpus in sorted(p for p in PAGES.iterdir() if p.is_dir()):
        sums = [0] * 6
        pages = sorted(corpus.glob("*.html"))
        for page in pages:
            sums = [a + b for a, b in zip(sums, figures(page), strict=True)]
        totals = [a + b for a, b in zip(totals, sums, strict=True)]
        print(f"{corpus.name}: {len(pages)} pages, code blocks {sums[0]}/{sums[1]}, "
              f"headings {sums[2]}/{sums[3]}, boilerplate {sums[4] / sums[5]:.1%}", flush=True)
    code, heads, boiler = totals[0] / totals[1], totals[2] / totals[3], totals[4] / totals[5]
    passed = code >= 0.95 and heads >= 0.90 and boiler <= 0.10
    print(f"web_fetch extraction: code blocks {code:.1%} (target >= 95 %), headings "
          f"{heads:.1%} (>= 90 %), boilerplate {boiler:.1%} of the markdown (<= 10 %): "
          f"{'PASS' if passed else 'FAIL'}", flush=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
