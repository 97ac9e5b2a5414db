"""Content decoding bounded on the *decoded* size: a gzip bomb stops at the cap.

Only ``gzip`` and ``deflate`` are asked for (``Accept-Encoding``); zlib's ``max_length``
keeps every step's output small, so a 1000:1 chunk never lands in memory at once.
"""

from __future__ import annotations

import zlib

ACCEPT_ENCODING = "gzip, deflate"
STEP = 64 * 1024


class UnsupportedEncoding(Exception):
    """The server sent a content encoding this client did not ask for."""


class Decoder:
    """Decode one response body chunk by chunk, never past ``limit`` bytes in all.

    :param encoding: the ``Content-Encoding`` header (``""`` for none).
    :param limit: how many decoded bytes to keep; :attr:`full` says the cap was reached.
    """

    def __init__(self, encoding: str, limit: int) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._zlib = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 32)
        else:
            raise UnsupportedEncoding(f"content encoding {encoding!r} is not supported")
        self.limit = limit
        self.size = 0
        self.full = False

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of ``chunk`` that still fit under the limit."""
        if self._zlib is None:
            return self._keep(chunk)
        out = bytearray()
        data, piece = chunk, b"x"
        while (data or len(piece) == STEP) and not self.full:
            piece = self._zlib.decompress(data, STEP)  # more may be pending at STEP
            out += self._keep(piece)
            data = self._zlib.unconsumed_tail
        return bytes(out)

    def _keep(self, piece: bytes) -> bytes:
        room = self.limit - self.size
        if len(piece) > room:
            self.full = True
            piece = piece[:room]
        self.size += len(piece)
        return piece
