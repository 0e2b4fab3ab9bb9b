"""The sandbox a candidate judge's prompt template renders in, with a budget no task can break.

A template is written in the browser, and a template is a program: a short one can loop for
hours or build a string of gigabytes, and it may branch on its task, so that the sample task
it was checked with renders in a millisecond and a real one does not. So:

- Jinja's immutable sandbox: no attribute of a Python object beyond the plain data given, no
  mutation (and no ``namespace``, the one mutable accumulator a template could grow in a loop).
- A budget of characters and elements for the whole render. Every way a template makes text
  or sequences counts against it before the memory is taken: ranges, repetition (``*``),
  adding (``+``), string formatting (``%``, ``format``, ``str.format``), joining (``~``), every
  call, every method of a string or a list (``ljust``, ``replace``, ``join``...: a width or
  count past MAX_ARGUMENT is refused, the rest bounded from the arguments before the method
  runs and counted after), every filter (the same), and everything the template outputs.
- Only the filters a prompt needs, each with a known bound; any other filter is refused, when
  the template is added and when it renders. ``random`` is not among them: a judge whose
  prompt changes between two asks of the same edit is not one judge.

A render that still escapes (a deep loop over the instruction's characters, say) is stopped by
the time and memory limits of the process it renders in (pipeline/guarded_render.py).
"""

import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from jinja2 import StrictUndefined, Template, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.filters import FILTERS
from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment, SecurityError

# Characters and elements one render may make in all: a real prompt makes a few thousand.
WORK_BUDGET = 1_000_000
# What one call (a macro's, a method's) costs the budget: a prompt makes a few dozen calls.
CALL_COST = 10
# A filter's width or count: no prompt pads or repeats past the longest prompt allowed.
MAX_ARGUMENT = 200_000
# What each filter may give, at most, from its input's size n and its arguments (ints as
# widths): checked before it runs. The rest of Jinja's filters are not offered.
_BOUNDS: dict[str, Callable[..., int]] = {
    **dict.fromkeys(("upper", "lower", "title", "capitalize", "trim", "striptags", "e",
                     "escape", "forceescape", "string", "safe", "urlencode", "reverse",
                     "unique", "list", "sort", "dictsort", "first", "last",
                     "default", "d", "int", "float", "round", "abs", "length", "count",
                     "wordcount", "truncate", "tojson", "attr", "map", "select", "reject",
                     "selectattr", "rejectattr", "sum", "min", "max", "items", "filesizeformat",
                     "pprint", "bool"), lambda n, *_: 6 * n + 64),
    "join": lambda n, *a: _size_of(a[0] if a else "") * n + n * 64,
    "replace": lambda n, *a: n + (n + 1) * _size_of(a[1] if len(a) > 1 else ""),
    "center": lambda n, *a: n + _int(a[0] if a else 80),
    "indent": lambda n, *a: n + (n + 1) * _int(a[0] if a else 4, text=True),
    "wordwrap": lambda n, *a: 2 * n + 64,
    "batch": lambda n, *a: 2 * n + 64,
    "slice": lambda n, *a: 2 * n + 64,
    "format": lambda n, *a: n + _format_widths(a) + sum(_size_of(x) for x in a),
}
# Widths in %-formats and {}-formats: "%0400000000d", "{:>400000000}".
_PERCENT_WIDTH = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACE_WIDTH = re.compile(r"\{[^{}]*?:[^{}]*?(\d+)(?:\.(\d+))?[^{}]*\}")

_spent: ContextVar[list[int] | None] = ContextVar("judge_template_work", default=None)


def spend(elements: int) -> None:
    spent = _spent.get()
    if spent is None:
        return
    spent[0] += max(elements, 0)
    if spent[0] > WORK_BUDGET:
        raise SecurityError(f"the template makes more than {WORK_BUDGET:,} characters and "
                            "elements in all")


def _size_of(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return len(str(value)) if isinstance(value, int | float) else 64


def _int(value: Any, *, text: bool = False) -> int:
    if isinstance(value, str):
        return len(value) if text else 0
    if isinstance(value, int) and value > MAX_ARGUMENT:
        raise SecurityError(f"a width or count of {value:,}: at most {MAX_ARGUMENT:,}")
    return int(value) if isinstance(value, int) else 0


def _format_widths(values: Iterable[Any]) -> int:
    """The widths a format string asks for, refused past MAX_ARGUMENT."""
    total = 0
    for value in values:
        if not isinstance(value, str):
            continue
        for match in [*_PERCENT_WIDTH.finditer(value), *_BRACE_WIDTH.finditer(value)]:
            for group in match.groups():
                if group == "*":
                    raise SecurityError("a format width taken from its arguments")
                if group:
                    total += _int(int(group))
    return total


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    bound = _BOUNDS[name]

    # Jinja passes the environment or the context first to the filters marked so.
    skip = 1 if hasattr(function, "jinja_pass_arg") else 0

    def run(*args: Any, **kwargs: Any) -> Any:
        value = args[skip] if len(args) > skip else ""
        rest = args[skip + 1:]
        for argument in (*rest, *kwargs.values()):
            if isinstance(argument, int) and not isinstance(argument, bool):
                _int(argument)
        spend(bound(_size_of(value), *rest, *kwargs.values()))
        found = function(*args, **kwargs)
        if isinstance(found, str | list | tuple):
            spend(len(found))
        return found

    for attribute in ("jinja_pass_arg",):  # keep Jinja's pass_context / pass_environment mark
        if hasattr(function, attribute):
            setattr(run, attribute, getattr(function, attribute))
    return run


def _method_bound(owner: str | list[Any] | tuple[Any, ...] | dict[Any, Any], name: str,
                  arguments: list[Any]) -> int:
    """What a method of a string or a sequence may make at most, before it runs; a width or
    a count past MAX_ARGUMENT is refused."""
    for argument in arguments:
        if isinstance(argument, int) and not isinstance(argument, bool):
            _int(argument)
    n = _size_of(owner)
    if name in ("format", "format_map"):
        return _format_widths([owner]) + sum(_size_of(a) for a in arguments)
    if name == "replace":
        new = arguments[1] if len(arguments) > 1 else ""
        return n + (n + 1) * _size_of(new)
    if name == "expandtabs":
        width = arguments[0] if arguments and isinstance(arguments[0], int) else 8
        return n * max(1, width)
    if name == "join" and arguments and hasattr(arguments[0], "__len__"):
        parts = arguments[0]
        return sum(_size_of(p) for p in parts) + n * len(parts)
    return n + sum(a if isinstance(a, int) and not isinstance(a, bool) else _size_of(a)
                   for a in arguments)


def _range(*args: int) -> range:
    made = range(*args)
    if len(made) > MAX_RANGE:
        raise SecurityError(f"a range of more than {MAX_RANGE:,} items")
    spend(len(made))
    return made


class _Generator(CodeGenerator):
    """Jinja's compiler, with ``~`` joined through the budget (it is no interceptable
    operator: a macro that doubles its argument forty times would take terabytes)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


class Bounded(ImmutableSandboxedEnvironment):
    """The sandbox, with every way of making text or sequences counted against the budget."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})
    code_generator_class = _Generator

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
            raise SecurityError("a power above 64")
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, str | list | tuple) and isinstance(times, int):
                    spend(len(sequence) * times)
        if operator == "+":
            spend(sum(len(x) for x in (left, right) if isinstance(x, str | list | tuple)))
        if operator == "%" and isinstance(left, str):
            spend(len(left) + _format_widths([left]) + sum(
                _size_of(x) for x in (right if isinstance(right, tuple) else (right,))))
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any,
             **kwargs: Any) -> Any:
        # A macro that calls itself twice, forty deep, makes no string at all; a call is
        # counted as CALL_COST elements, so that the budget ends it before the clock does.
        spend(CALL_COST)
        owner = getattr(__obj, "__self__", None)
        if not isinstance(owner, str | list | tuple | dict):
            return super().call(__context, __obj, *args, **kwargs)
        # A method of the data: ``instruction.ljust(10**8)`` makes 100 MB in one call.
        spend(_method_bound(owner, getattr(__obj, "__name__", ""), [*args, *kwargs.values()]))
        found = super().call(__context, __obj, *args, **kwargs)
        if isinstance(found, str | list | tuple):
            spend(len(found))
        return found

    @staticmethod
    def concat(parts: Iterable[str]) -> str:
        """Every piece the template, a macro or a block outputs, counted as it comes: a loop
        of 100,000 that outputs the instruction makes no call and no operator at all."""
        pieces = []
        for part in parts:
            spend(len(part))
            pieces.append(part)
        return "".join(pieces)

    @staticmethod
    def bounded_concat(parts: Iterable[Any]) -> str:
        pieces = [str(p) for p in parts]
        spend(sum(len(p) for p in pieces))
        return "".join(pieces)


sandbox = Bounded(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                  keep_trailing_newline=False, autoescape=False)
sandbox.globals = {"range": _range, "dict": dict}
sandbox.filters = {name: _bounded_filter(name, FILTERS[name]) for name in _BOUNDS
                   if name in FILTERS}


def refusals(template: str) -> list[str]:
    """What makes a template unusable for any task, read from its syntax: a filter this
    sandbox does not offer, or a constant width or count past MAX_ARGUMENT."""
    found = []
    tree = sandbox.parse(template)
    for node in tree.find_all(nodes.Filter):
        if node.name not in sandbox.filters:
            found.append(f"the filter {node.name!r} is not offered to judge templates "
                         f"(offered: {', '.join(sorted(sandbox.filters))})")
    for constant in tree.find_all(nodes.Const):
        if isinstance(constant.value, int) and not isinstance(constant.value, bool) and \
                constant.value > MAX_ARGUMENT:
            found.append(f"the number {constant.value:,} is past what any prompt needs "
                         f"(at most {MAX_ARGUMENT:,})")
        if isinstance(constant.value, str):
            try:
                _format_widths([constant.value])
            except SecurityError as refused:
                found.append(str(refused))
    for name in tree.find_all(nodes.Name):
        if name.name == "namespace":
            found.append("namespace() is not offered to judge templates")
    return list(dict.fromkeys(found))


def render_bounded(template: str | Template, context: dict[str, Any]) -> str:
    """The template (its text, or compiled by ``sandbox``) rendered within the budget
    (SecurityError past it)."""
    budget = _spent.set([0])
    try:
        compiled = sandbox.from_string(template) if isinstance(template, str) else template
        return compiled.render(context)
    finally:
        _spent.reset(budget)
