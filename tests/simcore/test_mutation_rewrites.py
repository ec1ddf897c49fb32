"""The mutation tests' rewrites (tests/helpers/ast_mutation.py): they match syntax, never text,
and a target that is gone fails loudly instead of testing an unmutated copy."""

from __future__ import annotations

import ast

import pytest

from tests.helpers.ast_mutation import MutationError, Rewrite, apply_rewrite, mutated_tree
from tests.helpers.simcore_copies import load_simcore_copy


@pytest.mark.parametrize(
    "rewrite, message",
    [
        (Rewrite("ga1.timing", "run_timing", "this_name_is_not_there", "0"), "found 0 times"),
        (Rewrite("ga1.timing", "run_timming", "stores", "0"), "defined 0 times"),
        (
            Rewrite("ga1.timing", "run_timing", "stores += 1", "stores += 2", count=2),
            r"found 1 times \(expected 2",
        ),
        (
            Rewrite("ga1.timing", "run_timing", "last_read[s0]", "0", branch="op == LAOD"),
            "branch found 0 times",
        ),
        (Rewrite("timming", "run_timing", "stores", "0"), "no such simcore module"),
    ],
)
def test_a_missing_mutation_target_fails_loudly(rewrite: Rewrite, message: str) -> None:
    with pytest.raises(MutationError, match=message):
        load_simcore_copy((rewrite,))


SAMPLE = """
def f(xs, i):
    total = xs[i] + 1  # a comment
    xs[i] = total
    if i > 0:
        total = max(total,
                    xs[i])
    def inner():
        return xs[i]
    return total
"""


def _applied(source: str, rewrite: Rewrite) -> str:
    return ast.unparse(mutated_tree(source, (rewrite,)))


def test_a_pattern_matches_syntax_not_text() -> None:
    # Reads only (never the assignment to xs[i]); across line breaks; not in the nested function;
    # the same on the source formatted otherwise (no comments, one line per statement).
    read = Rewrite("m", "f", "xs[i]", "0")
    assert _applied(SAMPLE, read) == _applied(ast.unparse(ast.parse(SAMPLE)), read)
    assert apply_rewrite(ast.parse(SAMPLE), read) == 2
    assert "return xs[i]" in _applied(SAMPLE, read) and "xs[i] = total" in _applied(SAMPLE, read)
    assert apply_rewrite(ast.parse(SAMPLE), Rewrite("m", "f.inner", "xs[i]", "0")) == 1
    assert apply_rewrite(ast.parse(SAMPLE), Rewrite("m", "f", "xs[i]", "0", branch="i > 0")) == 1
    # $names bind any expression and are put back; the same $name must match the same expression.
    assert "max(total, xs[i], 7)" in _applied(
        SAMPLE, Rewrite("m", "f", "max($a, $b)", "max($a, $b, 7)")
    )
    with pytest.raises(MutationError, match="found 0 times"):
        apply_rewrite(ast.parse(SAMPLE), Rewrite("m", "f", "max($a, $a)", "0"))
    assert "if i > 0:\n        pass" in _applied(
        SAMPLE, Rewrite("m", "f", "total = max($a, $b)", "")
    )
