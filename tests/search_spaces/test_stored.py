"""The `stored` family: programs named by their content, read back only when the content still
has that name, run as written; declared by no space, so no search draws it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search_spaces.domains import Digest
from search_spaces.registry import SpaceError, find_family
from search_spaces.stored import (
    DIGEST_LENGTH,
    PROGRAMS,
    STORED,
    ProgramStore,
    StoredFamily,
    StoredProgramError,
    digest_of,
)
from simcore.ga1.asm import to_text
from simcore.ga1.generator import default_params, general
from simcore.ga1.machine import Machine
from simcore.ga1.verify import verify_matmul
from simcore.shape import Shape

SHAPE, MACHINE = Shape(16, 24, 16), Machine(slots=6)


def stored(tmp_path: Path) -> tuple[StoredFamily, dict[str, object], str]:
    text = to_text(general(SHAPE, MACHINE, default_params(SHAPE, MACHINE)))
    store = ProgramStore.of_study(tmp_path)
    assert store.folder == tmp_path / PROGRAMS
    path = store.path(digest_of(text))
    path.parent.mkdir()
    path.write_text(text)
    return StoredFamily(store), {"program": digest_of(text)}, text


def test_a_stored_program_reads_back_as_written(tmp_path: Path) -> None:
    family, point, text = stored(tmp_path)
    program = family.program(point)
    assert to_text(program) == text
    assert family.slots_needed(point, SHAPE, MACHINE) == program.max_slot() + 1 <= MACHINE.slots
    assert family.violation(point, SHAPE, MACHINE) == 0
    assert family.params(SHAPE, 8)[0].domain.contains(point["program"])  # type: ignore[arg-type]
    assert verify_matmul(MACHINE, program, SHAPE)[0].ok


def test_a_changed_or_missing_program_is_refused(tmp_path: Path) -> None:
    family, point, text = stored(tmp_path)
    path = family.store.path(str(point["program"]))
    path.write_text(text + "# changed\n")
    with pytest.raises(StoredProgramError, match="does not match its name"):
        family.program(point)
    path.unlink()
    with pytest.raises(StoredProgramError, match="is missing"):
        family.program(point)
    with pytest.raises(StoredProgramError, match="not at hand"):
        StoredFamily().program(point)


def test_no_space_declares_it() -> None:
    assert StoredFamily.imported and StoredFamily.name == STORED
    with pytest.raises(SpaceError):
        find_family(STORED)


@given(st.text(max_size=40))
def test_a_digest_names_nothing_else(text: str) -> None:
    domain = Digest(DIGEST_LENGTH)
    assert domain.contains(digest_of(text))
    assert domain.values() == [] and domain.nearby(digest_of(text)) == []
    assert not domain.contains(digest_of(text).upper()) or digest_of(text).isdigit()
    assert not domain.contains(digest_of(text)[:-1]) and not domain.contains(3)
