"""What a user attaches to a prompt (issue 27, "Input"): an image (``--image FILE``, or
``@shot.png`` in a chat message) goes to the model natively; a text file named with
``@path`` goes as its text. Every file is read as hostile: a regular file, under a size
cap, an image known by its first bytes (never its name), text that is UTF-8; anything
else is one :class:`~ikigai_core.errors.UsageError` line naming the file and the fix.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core.attachments import MAX_ATTACHMENT_BYTES, Attachment
from ikigai_core.errors import UsageError

if TYPE_CHECKING:
    from ikigai_core.providers import Provider

MAX_IMAGE_BYTES = MAX_ATTACHMENT_BYTES
"""The largest image a prompt may attach (3.75 MiB: its base64 fits every provider's
limit for one image, Anthropic's 5 MB the smallest)."""
MAX_TEXT_BYTES = 256 * 1024
"""The largest text file ``@path`` attaches (about 64k tokens)."""
IMAGE_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF",
               "image/webp": "WebP"}
"""The image types ikigai recognises, with the names users know them by."""
MENTION = re.compile(r"(?<!\S)@(\S+)")
"""``@path`` at the start of a message or after a space (so ``me@example.com`` is not one)."""
TRAILING = ".,;:!?)]}'\""
"""Punctuation that may end a sentence after an ``@path`` without being part of it."""


def image_type(data: bytes) -> str | None:
    """The media type of ``data`` when it is a PNG, JPEG, GIF or WebP image (by its first
    bytes), else ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _read(path: Path, shown: str, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (``shown`` as the user named it), at most
    ``limit`` of them; else one line saying why not."""
    try:  # non-blocking: opening a FIFO must not wait for a writer
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:
            info = os.fstat(file.fileno())  # the file opened, not a path swapped since
            if not stat.S_ISREG(info.st_mode):
                raise UsageError(f"{shown} is not a file; name a file to attach")
            if info.st_size > limit:
                raise UsageError(f"{shown} is too large to attach ({_size(info.st_size)}; "
                                 f"the most is {_size(limit)})")
            data = file.read(limit + 1)
    except FileNotFoundError:
        raise UsageError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{shown} is a directory; name a file to attach") from None
    except OSError as exc:
        raise UsageError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew while being read
        raise UsageError(f"{shown} is too large to attach (the most is {_size(limit)})")
    return data


def _size(count: int) -> str:
    return f"{count / 1024 / 1024:.2f} MiB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KiB"


def read_image(path: Path, shown: str | None = None) -> Attachment:
    """The image in the file ``path`` (``--image FILE``); a missing, unreadable, too large
    (:data:`MAX_IMAGE_BYTES`) file, or one that is not a PNG, JPEG, GIF or WebP image, is
    a :class:`UsageError`."""
    shown = shown or str(path)
    data = _read(path, shown, MAX_IMAGE_BYTES)
    kind = image_type(data)
    if kind is None:
        raise UsageError(f"{shown} is not an image ikigai can send "
                         f"({', '.join(IMAGE_NAMES.values())})")
    return Attachment(kind, data)


@dataclass(frozen=True)
class Prompt:
    """A message with what it attached.

    :param text: the text to send: as typed, then each text file's, in a ``<file>`` block.
    :param images: the images attached, in order.
    :param files: the ``@path`` names attached (images and text), as typed.
    """

    text: str
    images: tuple[Attachment, ...] = ()
    files: tuple[str, ...] = ()


def with_mentions(text: str, cwd: Path, images: Sequence[Attachment] = ()) -> Prompt:
    """``text`` with the files its ``@path`` words name (relative to ``cwd``, ``~``
    expanded) attached after ``images``: an image natively, another file as its text.

    An ``@word`` naming no file is left as text when it has no ``/`` or ``.`` (``@bob``);
    one that looks like a path is a :class:`UsageError` (a typo must not send the prompt
    without the file). Each file is attached once.
    """
    found: list[Attachment] = list(images)
    blocks: list[str] = []
    names: list[str] = []
    for match in MENTION.finditer(text):
        name = _existing(match.group(1), cwd)
        if name is None or name in names:
            continue
        names.append(name)
        path = cwd / Path(name).expanduser()
        data = _read(path, f"@{name}", max(MAX_IMAGE_BYTES, MAX_TEXT_BYTES))
        kind = image_type(data)
        if kind is not None:
            found.append(Attachment(kind, data))
            continue
        if len(data) > MAX_TEXT_BYTES:
            raise UsageError(f"@{name} is too large to attach as text ({_size(len(data))}; "
                             f"the most is {_size(MAX_TEXT_BYTES)})")
        if b"\0" in data:
            raise UsageError(f"@{name} is neither text nor an image ikigai can send")
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"@{name} is not UTF-8 text (nor an image ikigai can "
                             "send)") from None
        blocks.append(f'<file path="{name}">\n{content.rstrip(chr(10))}\n</file>')
    full = "\n\n".join([text, *blocks])
    return Prompt(full, tuple(found), tuple(names))


def _existing(word: str, cwd: Path) -> str | None:
    """The file name ``@word`` means: itself, or without the punctuation ending a
    sentence; ``None`` for a word that names nothing and does not look like a path."""
    for name in dict.fromkeys((word, word.rstrip(TRAILING))):
        if name and (cwd / Path(name).expanduser()).exists():
            return name
    if "/" in word or "." in word.rstrip(TRAILING):
        raise UsageError(f"@{word.rstrip(TRAILING)}: no such file in {cwd} (an @ word names "
                         "a file to attach)")
    return None


def check_images(provider: Provider, model: str, images: Sequence[Attachment]) -> None:
    """Refuse, before anything is sent, images ``provider``'s ``model`` cannot read: one
    line naming the provider or model, the type, and what to do."""
    if not images:
        return
    if not provider.image_types:
        raise UsageError(f"provider '{provider.name}' takes no images; attach them with a "
                         "provider that does (--provider)")
    if not provider.takes_images(model):
        raise UsageError(f"model '{model}' of provider '{provider.name}' reads no images; "
                         "choose one that does (--model, or /model in chat)")
    for image in images:
        if image.mime_type not in provider.image_types:
            taken = ", ".join(IMAGE_NAMES.get(kind, kind) for kind in provider.image_types)
            raise UsageError(f"provider '{provider.name}' takes no "
                             f"{IMAGE_NAMES.get(image.mime_type, image.mime_type)} images "
                             f"(it takes {taken}); convert the image")
