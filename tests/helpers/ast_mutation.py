"""Faults put into Python source by function and syntax-tree node, for the mutation tests.

A `Rewrite` names a module, a function in it (by qualified name) and a pattern: one Python
expression or statement, in which `$name` stands for any expression (the same `$name` twice
must match the same expression). Inside that function, every node that matches the pattern is
replaced by `by`, with each `$name` put back; `branch` narrows the search to one arm of the `if`
whose test matches it. Nested functions and classes are not searched: they have names of their
own ("outer.inner", "Class.method").

Patterns are compared as syntax trees, never as text: formatting, comments, parentheses, line
breaks and where a statement sits in its function do not matter, and a read (`x[i]`) never
matches an assignment to it (`x[i] = ...`). A rewrite that matches nothing, or not the number of
times it expects, raises MutationError, so a refactor that removes a mutant's target fails
loudly instead of testing an unmutated copy.
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

META = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
META_PREFIX = "__meta_"  # `$x` is parsed as this name; no real code names a variable so
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
IGNORED_FIELDS = frozenset({"type_comment", "kind"})  # no meaning for the program
POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


class MutationError(AssertionError):
    """A rewrite's target is not in the source as expected: the source changed under it."""


@dataclass(frozen=True)
class Rewrite:
    """In `function` of `module` (dotted, below the package: "ga1.timing"), replace each node
    matching `find` by `by`. `function` is a qualified name ("run_timing", "Class.method"), or ""
    for the module's own statements. `by` is an expression when `find` is one, else zero or more
    statements ("" deletes). `branch` is an `if` test: only that `if`'s body (arm="else": its
    else arm) is searched. `count` is how many matches to expect (None: at least one)."""

    module: str
    function: str
    find: str
    by: str
    branch: str = ""
    arm: Literal["body", "else"] = "body"
    count: int | None = None

    def where(self) -> str:
        inside = f" in the {self.arm} of `if {self.branch}`" if self.branch else ""
        return f"{self.module}:{self.function or '<module>'}{inside}: {self.find!r}"


def parse_pattern(text: str) -> ast.expr | list[ast.stmt]:
    """An expression pattern (a node), or a statement pattern (a list of statements)."""
    source = META.sub(lambda m: META_PREFIX + m.group(1), textwrap.dedent(text).strip())
    body = ast.parse(source).body
    if len(body) == 1 and isinstance(body[0], ast.Expr):
        return body[0].value
    return body


def matches(pattern: ast.AST, node: ast.AST, bound: dict[str, ast.AST]) -> bool:
    """Whether `node` has the shape of `pattern`, binding its `$names` in `bound`."""
    if isinstance(pattern, ast.Name) and pattern.id.startswith(META_PREFIX):
        if not isinstance(node, ast.expr):
            return False
        if pattern.id in bound:
            return ast.dump(bound[pattern.id]) == ast.dump(node)
        bound[pattern.id] = node
        return True
    if type(pattern) is not type(node):
        return False
    for field in pattern._fields:
        if field in IGNORED_FIELDS:
            continue
        want, got = getattr(pattern, field, None), getattr(node, field, None)
        if isinstance(want, list):
            if not isinstance(got, list) or len(want) != len(got):
                return False
            if not all(_same_value(w, g, bound) for w, g in zip(want, got, strict=True)):
                return False
        elif not _same_value(want, got, bound):
            return False
    return True


def _same_value(want: object, got: object, bound: dict[str, ast.AST]) -> bool:
    if isinstance(want, ast.AST):
        return isinstance(got, ast.AST) and matches(want, got, bound)
    return type(want) is type(got) and want == got  # 1 == True, but not as a constant


def _filled(template: ast.AST, bound: dict[str, ast.AST], at: ast.AST, where: str) -> ast.AST:
    """A copy of `template` placed at `at`'s position, each `$name` replaced by what it matched."""
    made = copy.deepcopy(template)
    for node in ast.walk(made):
        for name in POSITIONS:
            if hasattr(at, name):
                setattr(node, name, getattr(at, name))

    class Fill(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if not node.id.startswith(META_PREFIX):
                return node
            if node.id not in bound:
                raise MutationError(
                    f"${node.id[len(META_PREFIX) :]} is not in the pattern: {where}"
                )
            return copy.deepcopy(bound[node.id])

    return Fill().visit(made)


class _Replace(ast.NodeTransformer):
    """Replaces, outermost first, every node of one scope that matches the pattern."""

    def __init__(
        self, find: ast.expr | list[ast.stmt], by: ast.expr | list[ast.stmt], where: str
    ) -> None:
        self.find, self.by, self.where, self.count = find, by, where, 0

    def visit(self, node: ast.AST) -> ast.AST | list[ast.stmt]:
        if isinstance(node, DEFINITIONS):
            return node  # a nested definition has a qualified name of its own
        bound: dict[str, ast.AST] = {}
        if (
            isinstance(self.find, ast.expr)
            and isinstance(node, ast.expr)
            and matches(self.find, node, bound)
        ):
            self.count += 1
            return _filled(self.by, bound, node, self.where)  # type: ignore[arg-type]
        if (
            isinstance(self.find, list)
            and isinstance(node, ast.stmt)
            and matches(self.find[0], node, bound)
        ):
            self.count += 1
            by: list[ast.stmt] = self.by  # type: ignore[assignment]
            return [_filled(s, bound, node, self.where) for s in by]  # type: ignore[misc]
        return self.generic_visit(node)

    def statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        holder = ast.Module(body=body, type_ignores=[])
        self.generic_visit(holder)
        return holder.body


def definitions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and class, nested ones as "outer.inner"."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, DEFINITIONS):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from definitions(node, name + ".")
        else:
            yield from definitions(node, prefix)


def _scope_owner(tree: ast.Module, rewrite: Rewrite) -> ast.AST:
    if not rewrite.function:
        return tree
    found = [node for name, node in definitions(tree) if name == rewrite.function]
    if len(found) != 1:
        raise MutationError(
            f"function defined {len(found)} times (expected once): {rewrite.where()}"
        )
    return found[0]


def _own_nodes(owner: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body (or a module's statements), nested definitions left out."""
    stack = list(owner.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, DEFINITIONS):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _arm(owner: ast.AST, rewrite: Rewrite) -> tuple[ast.AST, str]:
    """The node and field holding the statements to search."""
    if not rewrite.branch:
        return owner, "body"
    test = parse_pattern(rewrite.branch)
    if not isinstance(test, ast.expr):
        raise MutationError(f"a branch is an `if` test, an expression: {rewrite.where()}")
    ifs = [
        node
        for node in _own_nodes(owner)
        if isinstance(node, ast.If) and matches(test, node.test, {})
    ]
    if len(ifs) != 1:
        raise MutationError(f"branch found {len(ifs)} times (expected once): {rewrite.where()}")
    return ifs[0], "body" if rewrite.arm == "body" else "orelse"


def apply_rewrite(tree: ast.Module, rewrite: Rewrite) -> int:
    """Apply one rewrite to `tree` in place; the number of nodes replaced."""
    find, by = parse_pattern(rewrite.find), parse_pattern(rewrite.by)
    if isinstance(find, list) and len(find) != 1:
        raise MutationError(f"a pattern is one expression or one statement: {rewrite.where()}")
    if isinstance(find, ast.expr) and not isinstance(by, ast.expr):
        raise MutationError(f"an expression is replaced by an expression: {rewrite.where()}")
    if isinstance(find, list) and isinstance(by, ast.expr):
        by = [ast.Expr(by)]
    holder, field = _arm(_scope_owner(tree, rewrite), rewrite)
    replace = _Replace(find, by, rewrite.where())
    setattr(holder, field, replace.statements(getattr(holder, field)))
    if replace.count == 0 or (rewrite.count is not None and replace.count != rewrite.count):
        expected = "at least once" if rewrite.count is None else f"{rewrite.count} times"
        raise MutationError(
            f"pattern found {replace.count} times (expected {expected}): {rewrite.where()}"
        )
    return replace.count


def mutated_tree(
    source: str, rewrites: Iterable[Rewrite], filename: str = "<source>"
) -> ast.Module:
    """The module's syntax tree with every rewrite applied, in order, ready to compile."""
    tree = ast.parse(source, filename)
    for rewrite in rewrites:
        apply_rewrite(tree, rewrite)
    for node in ast.walk(tree):  # a block whose statements were all deleted still needs one
        if isinstance(node, (*DEFINITIONS, ast.If, ast.For, ast.While, ast.With)) and not node.body:
            node.body = [ast.copy_location(ast.Pass(), node)]
    return ast.fix_missing_locations(tree)
