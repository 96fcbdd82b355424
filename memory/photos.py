"""Where the photos of image memories live: one folder per person under ``vision.photo_dir``,
one file per photo, named by the photo's content hash (the same photo sent twice is one file
and one memory). Files are written whole (temporary file, fsync, rename) with mode 0600; the
Qdrant point (``schema.PHOTO``) says which file is its photo.

Formats are recognised by their bytes, never by what the sender declared: JPEG (what camera
boards send), PNG and WebP.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from memory.identity import PERSON_PATTERN
from memory.schema import Memory, PersonId

FORMATS = ((b"\xff\xd8\xff", "image/jpeg", "jpg"), (b"\x89PNG\r\n\x1a\n", "image/png", "png"))


class NotAnImage(ValueError):
    """The bytes are no photo format Hearth keeps."""


def image_format(data: bytes) -> tuple[str, str]:
    """(content type, file extension) of a photo, from its first bytes."""
    for magic, content_type, extension in FORMATS:
        if data.startswith(magic):
            return content_type, extension
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp", "webp"
    raise NotAnImage("the file is not a JPEG, PNG or WebP image")


def photo_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class SavedPhoto:
    name: str  # file name inside the person's folder
    content_type: str
    created: bool  # False: the same photo was already kept


class PhotoFiles:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _folder(self, person: PersonId) -> Path:
        if not PERSON_PATTERN.fullmatch(person):
            raise ValueError(f"not a person id: {person!r}")
        return self.root / person

    def path(self, person: PersonId, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"not a photo file name: {name!r}")
        return self._folder(person) / name

    def save(self, person: PersonId, data: bytes) -> SavedPhoto:
        """Keep ``data`` (raises ``NotAnImage`` for anything but a photo)."""
        content_type, extension = image_format(data)
        name = f"{photo_key(data)}.{extension}"
        target = self.path(person, name)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if target.exists():
            return SavedPhoto(name, content_type, created=False)
        partial = target.with_name(f".{name}.part")
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        partial.replace(target)
        return SavedPhoto(name, content_type, created=True)

    def read(self, person: PersonId, name: str) -> bytes | None:
        try:
            return self.path(person, name).read_bytes()
        except FileNotFoundError:
            return None

    def delete(self, person: PersonId, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(person, name).unlink()

    def drop(self, memory: Memory) -> None:
        """The photo of ``memory`` if it is an image memory (any other memory: nothing)."""
        if memory.photo is not None:
            self.delete(memory.person, memory.photo.file)

    def delete_person(self, person: PersonId) -> int:
        """Every photo of ``person``; returns how many files went."""
        folder = self._folder(person)
        if not folder.is_dir():
            return 0
        count = sum(1 for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        shutil.rmtree(folder, ignore_errors=True)
        return count
