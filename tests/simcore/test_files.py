"""The strict reader (simcore.files): special files, sizes, encodings and parser bounds, each
refused in one line naming the file; and a table of every kind of TOML read as tomllib reads it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.files import (
    MOST_KEY_SEGMENTS,
    MOST_NESTING,
    FileError,
    parse_json,
    parse_toml,
    read_bytes,
    read_text,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LIMIT = 1 << 16


def _refused(path: Path | str, *fragments: str) -> str:
    with pytest.raises(FileError) as caught:
        read_text(path, "table", LIMIT)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    for fragment in fragments:
        assert fragment in message
    return message


def test_a_regular_utf8_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes("\ufeffname = 'π'\n".encode())
    assert read_text(path, "table", LIMIT) == "name = 'π'\n"  # a byte-order mark is dropped


def test_special_files_are_refused_before_reading(tmp_path: Path) -> None:
    _refused("/dev/zero", "a device, not a regular file")
    _refused(tmp_path, "a folder")
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    _refused(link, "a device")
    _refused(tmp_path / "missing", "cannot read table", "No such file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _refused(fifo, "a FIFO")  # the check comes before any open: no writer is ever needed


def test_a_larger_file_is_refused_and_never_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"a" * (LIMIT + 1))
    _refused(path, f"{LIMIT + 1} bytes, more than the {LIMIT}")
    assert len(read_bytes(path, "table", LIMIT + 1)) == LIMIT + 1


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"name = 1\n\0\0\0", "not a text file (a NUL byte at byte 9)"),
        ("name = 1\n".encode("utf-16"), "is UTF-16 text, not UTF-8"),
        ("name = 1\n".encode("utf-32"), "is UTF-32 text, not UTF-8"),
        (b"name = '\xff'\n", "not UTF-8 text (byte 8: invalid start byte)"),
    ],
)
def test_binary_and_other_encodings_are_refused(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes(content)
    _refused(path, fragment)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a = " + "[" * 100_000 + "]" * 100_000, f"nested more than {MOST_NESTING} deep"),
        ("a = " + "{b = " * 500 + "1" + "}" * 500, "nested more than"),
        ("a." * 10_000 + "b = 1", f"a dotted key of more than {MOST_KEY_SEGMENTS} parts"),
        ("[" + "a." * 10_000 + "b]", "a dotted key of more than"),
        ("word_bits = " + "9" * 5000, "an integer of 5000 digits"),
        ("word_bits = " + "9_" * 100 + "9", "an integer of 101 digits"),
        ("a = [1, 2", "not valid TOML"),
    ],
)
def test_toml_past_the_bounds_is_refused_in_one_line(text: str, fragment: str) -> None:
    with pytest.raises(FileError) as caught:
        parse_toml(text, "t.toml")
    message = str(caught.value)
    assert message.startswith("t.toml: ") and fragment in message and "\n" not in message


def test_toml_within_the_bounds_is_tomllibs() -> None:
    text = (
        "a = "
        + "[" * MOST_NESTING
        + "]" * MOST_NESTING
        + "\n"
        + "b." * (MOST_KEY_SEGMENTS - 2)
        + "c = 1\n"
        + "d = 1.5\ne = 1979-05-27T07:32:00.999-07:00\nf = [1.5, 2.5, 3.25]\n"
        + 'g = "[[[ a.b.c.d \\" ]]]"\nh = \'\'\'\n[[[.\'.\'.]]]\'\'\'\ni = """x\\"""" # ]]]\n'
        + "j = "
        + "9" * 18
        + "\nk = 0."
        + "1" * 60
        + "\n"
    )
    assert parse_toml(text, "t") == tomllib.loads(text)


def _toml_value(value: object) -> str:
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


_scalars = st.one_of(
    st.integers(-(10**18), 10**18),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(alphabet=st.sampled_from("ab.[]{}'\"#\\= \t"), max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="xyz.[", min_size=1, max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(alphabet="pq.]", min_size=1, max_size=4), _values, max_size=4))
def test_any_toml_within_the_bounds_reads_as_tomllib_reads_it(document: dict) -> None:
    text = "".join(f"{json.dumps(key)} = {_toml_value(value)}\n" for key, value in document.items())
    assert parse_toml(text, "t") == tomllib.loads(text)


def test_json_nesting_and_integers_are_bounded() -> None:
    assert parse_json('{"a": [1, "[[[[", {"b": 2}]}', "j") == {"a": [1, "[[[[", {"b": 2}]}
    with pytest.raises(FileError, match=r"^j: nested 100000 deep, at most"):
        parse_json("[" * 100_000 + "]" * 100_000, "j")
    with pytest.raises(FileError, match=r"^j: not valid JSON: an integer has 5000 digits"):
        parse_json("9" * 5000, "j")
    with pytest.raises(FileError, match=r"^j: not valid JSON"):
        parse_json("{", "j")


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        ("shape", "1" * 5000 + "x8x8", "shape dimension M has 5000 digits, at most 40"),
        ("shape", "8x8x" + "9" * 41, "shape dimension N has 41 digits"),
        ("shape", "x" * 20_000, "(20000 characters): expected MxKxN"),
        ("machine", "slots=" + "9" * 5000, "machine parameter slots has 5000 digits"),
        ("array", "9" * 5000 + "x8", "array rows has 5000 digits"),
        ("schedule", "2x2:" + "9" * 5000, "buffers has 5000 digits"),
    ],
)
def test_numbers_of_any_length_are_refused_in_one_line(
    parse: str, text: str, expected: str
) -> None:
    from simcore.ga1.machine import parse_overrides
    from simcore.ga1.schedules import parse_schedule
    from simcore.shape import parse_shape
    from simcore.systolic.tie import parse_array

    readers = {
        "shape": parse_shape,
        "machine": parse_overrides,
        "array": parse_array,
        "schedule": parse_schedule,
    }
    with pytest.raises(ValueError) as caught:
        readers[parse](text)
    message = str(caught.value)
    assert expected in message and "\n" not in message and len(message) < 200


def test_leading_zeros_are_not_digits() -> None:
    from simcore.shape import Shape, parse_int, parse_shape

    assert parse_shape("8x8x" + "0" * 5000 + "8") == Shape(8, 8, 8)
    assert (parse_int("-007", "x"), parse_int("+0", "x")) == (-7, 0)
    with pytest.raises(ValueError, match="x needs an integer, got '1_000'"):
        parse_int("1_000", "x")


def test_an_output_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    from simcore.files import check_writable

    results = tmp_path / "results"
    check_writable(tmp_path / "x.json", "--out")  # an existing folder
    check_writable(results / "optimum" / "x.json", "--out", may_create=results)
    assert not results.exists()  # nothing is created
    for path, fragment in (
        (Path("/nonexistent/x.json"), "the folder /nonexistent does not exist"),
        (tmp_path / "a" / "b.json", "does not exist"),
        (Path("/dev/null"), "a device, not a regular file"),
        (tmp_path, "a folder, not a regular file"),
    ):
        with pytest.raises(FileError, match=fragment):
            check_writable(path, "--out", may_create=results)
    (tmp_path / "file").write_text("")
    with pytest.raises(FileError, match="is a file, not a folder"):
        check_writable(tmp_path / "file" / "x.json", "--out")
    assert not Path("/nonexistent").exists()


def test_what_follows_a_string_is_read() -> None:
    """A bracket right after a string closes what it opened: seventy one-string arrays are
    seventy arrays, not seventy levels of nesting."""
    text = "".join(f"[t{i}]\nholds = [\"a\"]\nname = 'b'\n" for i in range(70))
    assert parse_toml(text, "t") == tomllib.loads(text)
