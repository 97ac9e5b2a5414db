"""PDF through web_fetch: its text with the ``pdf`` extra (pypdf), paged like any page; a
damaged PDF is one error answer; without the extra, ``unsupported_content_type``."""

from __future__ import annotations

import os

from tests.support.fakeserver import Reply

from .site import LOCAL, run_fetch

LINES = [f"Line {i:02d} of a PDF served by the test site" for i in range(40)]


def minimal_pdf(lines: list[str]) -> bytes:
    """A valid one-page PDF showing ``lines`` in Helvetica, written by hand (no library)."""
    shown = " ".join(f"({line}) Tj T*" for line in lines)
    stream = f"BT /F1 10 Tf 12 TL 72 760 Td {shown} ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
               b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream)]
    pdf = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    pdf += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(pdf)


def pdf_reply(body: bytes) -> Reply:
    """``body`` served as ``application/pdf``."""
    return Reply(200, {"Content-Type": "application/pdf"}, body)


def test_a_pdf_comes_back_as_its_text(site, isolated_home):
    site.routes["/paper.pdf"] = pdf_reply(minimal_pdf(LINES))
    result = run_fetch({"url": site.url + "/paper.pdf"}, web=LOCAL, home=isolated_home)
    assert result["status"] == 200 and result["content_type"] == "application/pdf"
    assert result["content"].split("\n")[:40] == LINES
    assert result["truncated"] is False and result["untrusted_content"] is True


def test_a_pdf_is_paged_like_any_page(site, isolated_home):
    site.routes["/paper.pdf"] = pdf_reply(minimal_pdf(LINES))
    url = site.url + "/paper.pdf"
    parts, start = [], 0
    while start is not None:
        part = run_fetch({"url": url, "start_index": start, "max_chars": 500}, web=LOCAL,
                         home=isolated_home)
        assert part["returned_chars"] <= 500
        parts.append(part["content"])
        start = part["next_start_index"]
    assert len(parts) > 3 and part["total_chars"] == len("".join(parts))
    assert "".join(parts).split("\n")[:40] == LINES
    assert site.paths() == ["/robots.txt", "/paper.pdf"]  # the other parts: from the cache


def test_a_damaged_pdf_is_one_clear_error(site, isolated_home):
    whole = minimal_pdf(LINES)
    for name, body in {"/cut.pdf": whole[:300], "/junk.pdf": b"%PDF-1.4\n" + b"\xff" * 200,
                       "/empty.pdf": b""}.items():
        site.routes[name] = pdf_reply(body)
        result = run_fetch({"url": site.url + name}, web=LOCAL, home=isolated_home)
        assert result.keys() == {"error", "error_code"}, name
        assert result["error_code"] == "unreadable_pdf" and "\n" not in result["error"]
        assert "damaged" in result["error"] and "Traceback" not in result["error"]


def test_pdf_without_the_extra_is_a_clear_unsupported_type(site, isolated_home, tmp_path):
    stub = tmp_path / "no-extra" / "pypdf"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(
        'raise ImportError("the test hides pypdf: the pdf extra is not installed")\n')
    path = os.pathsep.join(filter(None, [str(stub.parent), os.environ.get("PYTHONPATH")]))
    site.routes["/p.pdf"] = pdf_reply(minimal_pdf(LINES))
    result = run_fetch({"url": site.url + "/p.pdf"}, web=LOCAL, home=isolated_home,
                       env={"PYTHONPATH": path})
    assert result["error_code"] == "unsupported_content_type"
    assert "ikigai-tools-web[pdf]" in result["error"]
