"""HTML to markdown on the shapes documentation generators write (no network)."""

from __future__ import annotations

from ikigai_tools_web.fetch.extract import LARGE, html_to_markdown

SPHINX_HEADING = ('<div role="main"><h2><a class="toc-backref" href="#id5">Option Decorator</a>'
                  '<a class="headerlink" href="#option-decorator" title="Link">¶</a></h2>'
                  "<p>Text of a section long enough to count as the content of the page.</p>"
                  "<pre>x = 1</pre></div>")


def test_sphinx_permalinks_and_backlinks_leave_plain_headings():
    markdown = html_to_markdown(f"<html><body>{SPHINX_HEADING}</body></html>", "https://e/").markdown
    assert "## Option Decorator\n" in markdown and "¶" not in markdown


def test_a_code_block_showing_a_fence_is_fenced_with_more_backticks():
    page = ("<html><body><nav>Home</nav><main><h1>Fences</h1><p>Write a block like this:</p>"
            "<pre>```python\nprint(1)\n```</pre><h2>Then</h2><p>More.</p></main></body></html>")
    markdown = html_to_markdown(page, "https://e/").markdown
    assert "````\n```python\nprint(1)\n```\n````" in markdown


def test_a_large_page_is_converted_a_slice_at_a_time_and_loses_no_section():
    sections = "".join(f"<h2>Section {i}</h2><p>{'Words of the section. ' * 40}</p>"
                       f"<pre>print({i})</pre>" for i in range(300))
    page = f"<html><body><nav>Site menu</nav><main>{sections}</main></body></html>"
    assert len(page) > LARGE
    extracted = html_to_markdown(page, "https://e/")
    assert extracted.sliced is True and "Site menu" not in extracted.markdown
    for i in range(300):
        assert f"## Section {i}\n" in extracted.markdown
        assert f"```\nprint({i})\n```" in extracted.markdown
