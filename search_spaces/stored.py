"""Programs imported whole: the `stored` family, whose one parameter is a program's content hash.

A schedule that is no point of a searched family (the exact solver's, simcore.ga1.exact) enters
a study as a program kept in the study's results folder, `programs/<digest>.asm`: the program in
the asm text format (simcore.ga1.asm), named by the first DIGEST_LENGTH hexadecimal digits of
the SHA-256 of that text. The family decodes a point by reading the file back, checking that its
content has that digest, and handing the program to the engine as written; it has no seeds, no
space declares it and no search draws it (Family.imported)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from search_spaces.base import GA1Family
from search_spaces.domains import Digest, Param, Point
from simcore.ga1.machine import Machine
from simcore.shape import Shape

if TYPE_CHECKING:  # numpy's programs and the compiled engine: loaded when a program is read
    from simcore.ga1.engine import Generator
    from simcore.ga1.program import Program

STORED = "stored"  # the family's name
PROGRAMS = "programs"  # the folder of a study's stored programs, in the study's results folder
DIGEST_LENGTH = 16  # hexadecimal digits of the SHA-256 that name a program
SUFFIX = ".asm"


class StoredProgramError(ValueError):
    """A stored program that is missing, unreadable, or whose content does not match its name."""


def digest_of(text: str) -> str:
    """The name of a program's text: the first DIGEST_LENGTH hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


@dataclass(frozen=True)
class ProgramStore:
    """The stored programs of one study: `folder`/<digest>.asm (None: no folder at hand)."""

    folder: Path | None = None

    @staticmethod
    def of_study(study_folder: Path | None) -> ProgramStore:
        return ProgramStore(study_folder / PROGRAMS if study_folder is not None else None)

    def path(self, digest: str) -> Path:
        if self.folder is None:
            raise StoredProgramError(
                f"stored program {digest}: the study's results folder is not at hand"
            )
        return self.folder / f"{digest}{SUFFIX}"

    def text(self, digest: str) -> str:
        """The program's text, checked against its name."""
        path = self.path(digest)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StoredProgramError(f"stored program {digest} is missing: no {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise StoredProgramError(f"stored program {path} cannot be read: {exc}") from None
        if digest_of(text) != digest:
            raise StoredProgramError(f"stored program {path} does not match its name (changed?)")
        return text

    def load(self, digest: str) -> Program:
        from simcore.ga1.asm import from_text
        from simcore.ga1.program import ProgramError

        try:
            return from_text(self.text(digest))
        except ProgramError as exc:
            raise StoredProgramError(f"stored program {digest}: {exc}") from None


class StoredFamily(GA1Family):
    """One program per point, read from the study's store and run as written."""

    name = STORED
    description = "a program imported whole (the exact solver's schedule), run as written"
    imported = True

    def __init__(self, store: ProgramStore | None = None) -> None:
        self.store = store if store is not None else ProgramStore()

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        return (
            Param(
                "program",
                Digest(DIGEST_LENGTH),
                f"the program's content hash: {PROGRAMS}/<program>{SUFFIX} in the study's folder",
            ),
        )

    def program(self, point: Point) -> Program:
        return self.store.load(str(point["program"]))

    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        return self.program(point).max_slot() + 1

    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        from simcore.ga1.engine import Materialised  # numba: loaded by what runs the engine

        return Materialised(shape, machine, lambda: self.program(point))
