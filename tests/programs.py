"""Random ruleset programs for differential testing (``tests/test_differential.py``).

``programs()`` is a Hypothesis strategy of (ruleset text, state, run options): a small ruleset that
checks without errors (names in scope, arities right, types mostly consistent) over a state whose
inputs are typed `any`, so that what the state holds may also make a run fail at run time. The
programs use every construct of the language: values, memoized functions (recursive ones too),
rules, tables (grids and cell overrides), lambdas made in loops, comprehensions of every kind with
one and two names, `let`, `if`, `??`, records, `with`, maps, sets, built-ins, decisions reading each
other (cycles settled by policies), procedures with `var`, `goto`, `require`, `emit`, `for`,
`break`, dice (rolled, compared, shifted, sorted) and module-free global names; records made by a
light function given to memos keyed by identity (a function that rolls, a decision), and a state-free
function called through a value at the depth limit.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

# kinds of values an expression is generated to have
INT, BOOL, STR, LIST, REC, MAP, SET, ANY = "int", "bool", "str", "list", "rec", "map", "set", "any"

INPUTS = {"n": INT, "xs": LIST, "s": STR, "m": MAP, "r": REC, "flag": BOOL}
DEFAULTS = {"n": "2", "xs": "[1, 2, 3]", "s": '"ab"', "m": '{"a" => 1, "b" => 2}', "r": "{a: 1, b: \"x\"}",
            "flag": "true"}

P, Q, COMMA, EMPTY = '"p"', '"q"', '","', '""'

json_scalars = st.one_of(st.integers(-5, 9), st.booleans(), st.none(), st.sampled_from(["a", "b", "ab", ""]))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)), max_leaves=8)


def _typed_state_value(kind: str) -> Any:
    if kind == INT:
        return st.integers(-3, 6)
    if kind == LIST:
        return st.lists(st.integers(-3, 6), max_size=5)
    if kind == STR:
        return st.sampled_from(["", "a", "ab", "b a", "xyz"])
    if kind == MAP:
        return st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(-2, 5), max_size=3)
    if kind == REC:
        return st.fixed_dictionaries({"a": st.integers(-2, 5), "b": st.sampled_from(["x", "y"])})
    return st.booleans()


@st.composite
def states(draw: Any) -> dict[str, Any]:
    """A state: each input present or not (then its default), usually of its kind, sometimes anything."""
    out: dict[str, Any] = {}
    for name, kind in INPUTS.items():
        choice = draw(st.integers(0, 9))
        if choice <= 6:
            out[name] = draw(_typed_state_value(kind))
        elif choice == 7:
            out[name] = draw(json_values)
    return out


class Gen:
    """Draws expressions of a kind, with the names in scope."""

    def __init__(self, draw: Any, dice: bool):
        self.draw = draw
        self.dice = dice
        self.n = 0
        self.functions: list[tuple[str, int]] = []  # (name, arity), int -> int
        self.rules: list[str] = []  # rules of one int, giving bool
        self.values: list[tuple[str, str]] = []  # (name, kind)
        # `mk`, a light `def` that makes a record (read by `per`, which rolls, and `rd`, a decision): two
        # equal records made by two calls of it are the same record, each rolled for or resolved once
        self.records = False
        # `reach(k)`, a recursion `k` deep that calls `sf`, a state-free function, through a value: its
        # call counts toward the depth limit, whatever its value (past 149, E005)
        self.deep = False

    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def pick(self, options: list[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def one_of(self, *makers: Any) -> str:
        """What one of ``makers`` (drawn) makes: only it draws."""
        return self.draw(st.sampled_from(makers))()  # type: ignore[no-any-return]

    def locals_of(self, env: dict[str, str], kind: str) -> list[str]:
        return [name for name, k in env.items() if k == kind]

    def expr(self, kind: str, env: dict[str, str], depth: int) -> str:
        leaves = self.leaves(kind, env)
        if depth <= 0 or self.draw(st.integers(0, 3)) == 0:
            return self.pick(leaves)
        maker = getattr(self, "e_" + kind)
        return maker(env, depth - 1)  # type: ignore[no-any-return]

    def leaves(self, kind: str, env: dict[str, str]) -> list[str]:
        found = self.locals_of(env, kind) + [n for n, k in INPUTS.items() if k == kind]
        found += [n for n, k in self.values if k == kind]
        base = {INT: ["0", "1", "3", "-2"], BOOL: ["true", "false"], STR: ['"a"', '""', '"b c"'],
                LIST: ["[]", "[1, 2]", "[3, 1, 2, 3]"], REC: ["{a: 1, b: \"x\"}"], MAP: ["{\"a\" => 1}"],
                SET: ["{1, 2}"], ANY: ["none", "1", '"a"']}[kind]
        return found + base

    # -- ints
    def e_int(self, env: dict[str, str], d: int) -> str:
        i = lambda: self.expr(INT, env, d)  # noqa: E731
        options = [
            lambda: f"({i()} + {i()})", lambda: f"({i()} - {i()})", lambda: f"({i()} * {i()})",
            lambda: f"({i()} // {self.pick(['2', '3', i()])})", lambda: f"({i()} % {self.pick(['2', '5', i()])})",
            lambda: f"(-{i()})", lambda: f"len({self.expr(LIST, env, d)})",
            lambda: f"sum({self.expr(LIST, env, d)})",
            lambda: f"(if {self.expr(BOOL, env, d)} then {i()} else {i()})",
            lambda: self.let(INT, env, d),
            lambda: f"max({self.expr(LIST, env, d)}, {i()})", lambda: f"min({self.expr(LIST, env, d)}, {i()})",
            lambda: f"({self.expr(MAP, env, d)}[{self.expr(STR, env, d)}] ?? {i()})",
            lambda: f"{self.expr(REC, env, d)}.a",
            lambda: f"count({self.expr(BOOL, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)})",
            # (a generated loop of the backend's: items it refuses, and two `for`s)
            lambda: f"count((if q > 1 then {self.pick(['n', 's', 'flag', 'xs'])} else q == 0) "
                    f"for q in {self.expr(LIST, env, d)})",
            lambda: f"sum({self.expr(INT, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)} "
                    f"if {self.expr(BOOL, {**env, 'q': INT}, d)})",
            lambda: f"sum((if q > w then {self.pick(['n', 's', 'flag', 'xs'])} else q * w) for q in {self.expr(LIST, env, d)} "
                    f"for w in {self.expr(LIST, env, d)})",
            lambda: f"len([q for q in {self.expr(LIST, env, d)} if {self.expr(BOOL, {**env, 'q': INT}, d)}])",
            lambda: f"fold({self.expr(LIST, env, d)}, {i()}, fn(acc, q) => {self.expr(INT, {**env, 'acc': INT, 'q': INT}, d)})",
            # (loops the backend writes where the built-in is called: a lambda made in one keeps its items)
            lambda: f"fold({self.expr(LIST, env, d)}, {i()}, fn(acc, q) => (let h = fn(w) => acc + w * q; "
                    f"h({self.expr(INT, {**env, 'acc': INT, 'q': INT}, d)})))",
            lambda: f"{self.pick(['max_by', 'min_by'])}({self.expr(LIST, env, d)}, "
                    f"fn(q) => {self.expr(INT, {**env, 'q': INT}, d)}, {i()})",
            # (the built-ins the backend writes as loops, given bodies of every shape)
            lambda: self.looped_call(INT, env, d), lambda: self.looped_call(INT, env, d),
            lambda: f"({self.expr(LIST, env, d)}[{i()}])",
            lambda: f"first({self.expr(LIST, env, d)}, {i()})",
            lambda: f"t2[{self.pick([P, Q, self.expr(STR, env, d)])}, {self.pick(['1', '2', i()])}] ?? 0",
            lambda: f"t1[{i()}] ?? 7",
            lambda: f"t3[{i()} + 0]",
            lambda: f"({{(\"a\", 1) => 5, (\"b\", 2) => 6, \"a\" => 7}}[({self.expr(STR, env, d)}, {i()})] ?? 0)",
            lambda: f"({self.expr(REC, env, d)}.a + {self.expr(REC, env, d)}.a)",
            lambda: f"abs({i()})",
            lambda: f"(int({self.expr(STR, env, d)}) ?? 0)",
            lambda: f"len({self.expr(STR, env, d)})",
            lambda: f"len(keys({self.expr(MAP, env, d)}))",
            lambda: f"len({self.expr(SET, env, d)})",
        ]
        if self.functions:
            def call() -> str:
                name, arity = self.pick(self.functions)
                return f"{name}({', '.join(i() for _ in range(arity))})"
            options += [call, call]
        # (first: a draw favours the first options)
        if self.deep:
            options[:0] = [lambda: f"reach({self.pick(['148', '149', '150', i()])})"]
        if self.records and self.dice:
            def twice() -> str:
                made = self.pick(self.leaves(INT, env))  # (one value: `mk` of it twice is one record)
                return f"(per(mk({made})) + per(mk({made})))"
            options[:0] = [twice]
        if self.dice:
            options += [lambda: f"roll({self.pick(['1d6', '2d6', '1d3'])})",
                        lambda: f"(roll(1d6) + {self.pick(['1', '-1', i()])})",
                        lambda: f"sorted([roll(1d3), roll(1d3)])[{self.pick(['0', '1'])}]"]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def let(self, kind: str, env: dict[str, str], d: int) -> str:
        vk = self.pick([INT, LIST, STR, BOOL, REC, ANY])
        name = self.fresh("l")
        value = self.expr(vk, env, d)
        return f"(let {name} = {value}; {self.expr(kind, {**env, name: vk}, d)})"

    # -- truth values
    def e_bool(self, env: dict[str, str], d: int) -> str:
        i = lambda: self.expr(INT, env, d)  # noqa: E731
        b = lambda: self.expr(BOOL, env, d)  # noqa: E731
        options = [
            lambda: f"({i()} < {i()})", lambda: f"({i()} >= {i()})", lambda: f"({i()} == {i()})",
            lambda: f"({self.expr(STR, env, d)} != {self.expr(STR, env, d)})",
            lambda: f"({i()} in {self.expr(LIST, env, d)})", lambda: f"({i()} not in {self.expr(SET, env, d)})",
            # a text in a list: of texts and a number, of the texts a split makes (the backend's charge of its length)
            lambda: f"({self.expr(STR, env, d)} in [{self.expr(STR, env, d)}, \"ab\", {i()}])",
            lambda: f"({self.expr(STR, env, d)} not in split({self.expr(STR, env, d)}, \"b\"))",
            lambda: f"(not {b()})", lambda: f"({b()} and {b()})", lambda: f"({b()} or {b()} or {b()})",
            lambda: f"any({self.expr(BOOL, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)})",
            lambda: f"all({self.expr(BOOL, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)})",
            lambda: f"any((if q > w then {self.pick(['n', 's', 'flag', 'xs'])} else q == w) for q in {self.expr(LIST, env, d)} "
                    f"for w in {self.expr(LIST, env, d)})",
            # (a loop the backend writes where `all`/`any` is called: items of any truth, one `for`)
            lambda: f"{self.pick(['all', 'any'])}((if q > 1 then {self.pick(['n', 's', 'flag', 'xs'])} else q != 0) "
                    f"for q in {self.expr(LIST, env, d)})",
            lambda: self.looped_call(BOOL, env, d),
            lambda: f"has({self.expr(MAP, env, d)}, {self.expr(STR, env, d)})",
            lambda: f"({self.expr(STR, env, d)} in {self.expr(MAP, env, d)})",
            lambda: self.let(BOOL, env, d),
            lambda: f"(if {b()} then {b()} else {b()})",
            # (in a list, so that the checker does not narrow a name it tests: `if m == none then group_by(m, ...)`
            # would be C004, a program no run is asked of)
            lambda: f"([{self.expr(ANY, env, d)}][0] == none)",
        ]
        if self.rules:
            options.append(lambda: f"{self.pick(self.rules)}({i()})")
        options.append(lambda: f"dec({self.pick(['0', '1', '2', i()])})")
        if self.records:
            options[:0] = [lambda: f"{self.pick(['rd(mk(', 're(('])}{i()}))"]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    # -- texts
    def e_str(self, env: dict[str, str], d: int) -> str:
        s = lambda: self.expr(STR, env, d)  # noqa: E731
        options = [
            lambda: f"({s()} + {s()})", lambda: f"str({self.expr(INT, env, d)})", lambda: f"upper({s()})",
            lambda: f"join([str(q) for q in {self.expr(LIST, env, d)}], {self.pick([COMMA, EMPTY])})",
            lambda: f"(if {self.expr(BOOL, env, d)} then {s()} else {s()})",
            lambda: f"{self.expr(REC, env, d)}.b", lambda: f"trim({s()})",
            lambda: f"replace({s()}, \"a\", {s()})", lambda: f"str({self.expr(BOOL, env, d)})",
            lambda: f"(first(split({s()}), \"-\") ?? \"-\")",
            # (a table's keys; the checker's did-you-mean, among texts or what the state holds)
            lambda: f"join(concat(rows(t2), columns(t2)), {self.pick([COMMA, EMPTY])})",
            lambda: f"(closest({s()}, {self.names(env, d)}) ?? {EMPTY})",
            lambda: self.looped_call(STR, env, d),
        ]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def names(self, env: dict[str, str], d: int) -> str:
        """What `closest` chooses among: texts, a table's keys, or what the state holds (a list of
        numbers, a text: refused at run time)."""
        return self.one_of(lambda: f"[{self.expr(STR, env, d)}, {P}, \"ab\"]", *[lambda v=v: v for v in ["rows(t2)", "xs", "s"]])

    # -- collections
    def e_list(self, env: dict[str, str], d: int) -> str:
        i = lambda: self.expr(INT, env, d)  # noqa: E731
        xs = lambda: self.expr(LIST, env, d)  # noqa: E731
        options = [
            lambda: f"[{', '.join(i() for _ in range(self.draw(st.integers(0, 3))))}]",
            lambda: f"[{self.expr(INT, {**env, 'q': INT}, d)} for q in {xs()}]",
            lambda: f"[q for q in {xs()} if {self.expr(BOOL, {**env, 'q': INT}, d)}]",
            lambda: f"[{self.expr(INT, {**env, 'q': INT, 'w': INT}, d)} for q in {xs()} for w in {xs()}]",
            lambda: f"sorted({xs()})", lambda: f"reverse({xs()})", lambda: f"range({self.pick(['3', '0', i()])})",
            lambda: f"{self.pick(['rows(t1)', 'columns(t2)'])}",
            lambda: f"concat({xs()}, {xs()})", lambda: f"unique({xs()})",
            lambda: f"sort_by({xs()}, fn(q) => {self.expr(INT, {**env, 'q': INT}, d)})",
            lambda: f"sorted({xs()}, fn(q) => [{self.expr(INT, {**env, 'q': INT}, d)}, q])",
            # lambdas made in a loop keep their own value of the loop's name
            lambda: f"[h({i()}) for h in [fn(q) => q + w for w in {xs()}]]",
            lambda: f"values({self.expr(MAP, env, d)})",
            lambda: f"slice({xs()}, {self.pick(['0', '1', i()])}, {self.pick(['2', i()])})",
            lambda: f"list({self.expr(SET, env, d)})",
            lambda: f"[k2 + v2 for k2, v2 in {{q => q * 2 for q in {xs()}}}]",
            lambda: f"[x2.index + x2.item for x2 in enumerate({xs()})]",
            # `enumerate` in a comprehension whose name is read only by its fields walks no records
            # (``backend.counted``): with a condition, a later `for` reading it, in a generator; read
            # whole, in a lambda, or over a set, a map, a text or a value of any kind, it is not
            lambda: f"[x2.item * x2.index for x2 in enumerate({xs()}) if x2.index > {i()}]",
            lambda: f"[x2.item + w for x2 in enumerate({xs()}) for w in range(x2.index)]",
            lambda: f"[count(x2.item > x2.index for x2 in enumerate({xs()}))]",
            lambda: f"[len(x2) + x2.index for x2 in enumerate({xs()})]",
            lambda: f"[h(x2.index) for x2 in enumerate({xs()}) for h in [fn(q) => q + x2.item]]",
            # (a value of no collection, a text too, only as an input the check cannot type: a literal it refuses, C004)
            lambda: f"[x2.index for x2 in enumerate({self.pick(['n', 'flag', 's', self.expr(self.pick([SET, MAP]), env, d)])})]",
            lambda: f"scan({xs()}, 0, fn(acc, q) => acc + q)",
            lambda: self.looped_call(LIST, env, d),
        ]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def e_rec(self, env: dict[str, str], d: int) -> str:
        options = [
            lambda: f"{{a: {self.expr(INT, env, d)}, b: {self.expr(STR, env, d)}}}",
            lambda: f"({self.expr(REC, env, d)} with {{a: {self.expr(INT, env, d)}}})",
            lambda: f"(if {self.expr(BOOL, env, d)} then {self.expr(REC, env, d)} else r)",
        ]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def e_map(self, env: dict[str, str], d: int) -> str:
        options = [
            lambda: f"{{str(q) => {self.expr(INT, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)}}}",
            lambda: f"{{{self.expr(STR, env, d)} => {self.expr(INT, env, d)}, \"z\" => 0}}",
            lambda: f"put({self.expr(MAP, env, d)}, {self.expr(STR, env, d)}, {self.expr(INT, env, d)})",
            lambda: f"merge({self.expr(MAP, env, d)}, {self.expr(MAP, env, d)})",
            lambda: f"{{k3 => len(v3) for k3, v3 in group_by({self.expr(LIST, env, d)}, fn(q) => str(q % 2))}}",
            lambda: f"{{str(k3) => v3 for k3, v3 in index_by({self.expr(LIST, env, d)}, "
                    f"fn(q) => {self.expr(INT, {**env, 'q': INT}, d)})}}",
        ]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def e_set(self, env: dict[str, str], d: int) -> str:
        options = [
            lambda: f"{{q % 3 for q in {self.expr(LIST, env, d)}}}",
            lambda: f"set({self.expr(LIST, env, d)})",
            lambda: f"union({self.expr(SET, env, d)}, {self.expr(SET, env, d)})",
            lambda: f"{{{self.expr(INT, env, d)}, {self.expr(INT, env, d)}}}",
        ]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def e_any(self, env: dict[str, str], d: int) -> str:
        return self.expr(self.pick([INT, STR, LIST, MAP, BOOL]), env, d)

    # -- the built-ins the backend writes as loops where they are called (``backend.looped``: `any`, `all`,
    # `count`, `sum` of a comprehension; `fold`, `scan`, `group_by`, `index_by`, `sorted`, `sort_by`,
    # `max_by`, `min_by` given a lambda), given every shape of body its writer meets
    def walked(self, env: dict[str, str], d: int) -> str:
        """What such a built-in walks: a list (empty or not), or an input of any kind (a set, map or text
        the state holds, or a value the built-in refuses)."""
        return self.one_of(*[lambda: self.expr(LIST, env, d)] * 2, *[lambda v=v: v for v in ["[]", "xs", "xs", "m", "s", "n"]])

    def item(self, name: str, env: dict[str, str], d: int, truth: bool | None = None) -> str:
        """A lambda's body or a comprehension's item, ``name`` the item: a literal (a number, text, none, a
        truth value, a list or record), the item alone, an outer name (an enclosing loop's item too), a
        call, another such built-in, a die, a collection (a key charged its walk), values of mixed kinds
        (which a built-in refuses to order, count or sum). ``truth``: only truth values (`count`), none
        (`sum`: the checker refuses a sum of them), else any."""
        inner = {**env, name: INT}
        literals = ["0", "-2", "3", '"k"', '""', "none", "[1, 2]", "[]", "{a: 1}", "{}"]
        mixed = ['"a"', "none", "flag", "xs", name, "[1]"]
        options = [
            lambda: self.pick(literals + ["true", "false"] if truth is None else literals),
            lambda: name,
            lambda: self.pick(self.leaves(self.pick([INT, STR, LIST, REC, ANY]), env)),
            lambda: self.called(name, inner, d),
            lambda: self.nested_loop(name, inner, d),
            lambda: f"[{name} % 2, {self.expr(INT, inner, d)}]",
            lambda: f"{{a: {name}, b: {self.expr(STR, inner, d)}}}",
            lambda: f"(if {name} > 1 then {self.pick(mixed)} else {name})",
            lambda: self.expr(INT, inner, d),
        ]
        if truth is False:  # (`sum`: numbers, or values of a kind the checker does not know)
            options = [lambda: self.pick(["0", "-2", "3", name, "n", "flag", "s", "xs"]),
                       lambda: self.pick(self.leaves(INT, env)), lambda: self.expr(INT, inner, d),
                       lambda: f"(if {name} > 1 then {self.pick(['flag', 'xs', 's'])} else {name})",
                       lambda: self.called(name, inner, d, numbers=True), lambda: self.nested_loop(name, inner, d, True)]
        else:
            options.append(lambda: self.pick(["true", "false", "flag"] + self.locals_of(env, BOOL)))
        if self.dice:
            options += [lambda: self.pick(["roll(1d3)", f"(roll(1d2) + {name})"] + [f"[{name}, roll(1d2)]"] * (truth is None))]
        if truth:  # (`count`: mostly truth values, else it refuses at the first item)
            options = [lambda: self.expr(BOOL, inner, d)] * 4 + options
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

    def called(self, name: str, env: dict[str, str], d: int, numbers: bool = False) -> str:
        """A call in a body: a definition, a built-in, a lambda held by a `let`, a table, a decision
        (``numbers``: only those of a number)."""
        made = [f"abs({name})", f"(t1[{name}] ?? 0)"] + ([] if numbers else [f"str({name})", f"dec({name})"])
        made += [f"{f}({', '.join([name] * arity)})" for f, arity in self.functions]
        made += [] if numbers else [f"{r}({name})" for r in self.rules]
        if self.records and not numbers:
            made.append(f"mk({name})")  # (a record a light function makes: keys of one identity)
        return self.one_of(lambda: self.pick(made), lambda: self.pick(made), lambda: f"len({self.expr(LIST, env, d)})",
                           lambda: f"(let h = fn(w) => w * {name}; h({self.expr(INT, env, d)}))")

    def nested_loop(self, outer: str, env: dict[str, str], d: int, numbers: bool = False) -> str:
        """Another looped built-in in a body, its item reading the outer one's (``numbers``: of a number)."""
        w = self.fresh("w")
        inner = {**env, w: INT}
        xs = lambda: self.walked(env, d)  # noqa: E731
        return self.draw(st.sampled_from([  # type: ignore[no-any-return]
            lambda: f"count({w} > {outer} for {w} in {xs()})",
            lambda: f"sum({w} * {outer} for {w} in {xs()} if {w} != {outer})",
            lambda: f"any({w} == {outer} for {w} in {xs()})",
            lambda: f"fold({xs()}, {outer}, fn(a2, {w}) => a2 + {w})",
            lambda: f"len(sort_by({xs()}, fn({w}) => {outer}))",
            lambda: f"max_by({xs()}, fn({w}) => {self.expr(INT, inner, 0)}, {outer})",
            lambda: f"len(group_by({xs()}, fn({w}) => {w} < {outer}))",
        ] if not numbers else [
            lambda: f"count({w} > {outer} for {w} in {xs()})",
            lambda: f"sum({w} * {outer} for {w} in {xs()} if {w} != {outer})",
            lambda: f"fold({xs()}, {outer}, fn(a2, {w}) => a2 + {w})",
            lambda: f"len(sort_by({xs()}, fn({w}) => {outer}))",
            lambda: f"max_by({xs()}, fn({w}) => {self.expr(INT, inner, 0)}, {outer})"]))()

    def comp_of(self, name: str, env: dict[str, str], d: int, truth: bool | None) -> str:
        """`ITEM for q in L [if C]`, sometimes with a second `for` (and its `if`)."""
        q = self.fresh("q")
        inner = {**env, q: INT}
        fors = f"for {q} in {self.walked(env, d)}"
        if self.draw(st.booleans()):
            fors += f" if {self.expr(BOOL, inner, d)}"
        if self.draw(st.integers(0, 2)) == 0:
            w = self.fresh("w")
            fors += f" for {w} in {self.walked(inner, d)}"
            inner = {**inner, w: INT}
            if self.draw(st.booleans()):
                fors += f" if {self.expr(BOOL, inner, d)}"
            item = self.item(self.pick([q, w]), inner, d, truth)
        else:
            item = self.item(q, env, d, truth)
        return f"{name}({item} {fors})"

    def looped_call(self, kind: str, env: dict[str, str], d: int) -> str:
        """A call of such a built-in of the kind ``kind`` (INT, BOOL, LIST, STR: the others' values shown)."""
        q, acc = self.fresh("q"), self.fresh("acc")
        key = lambda: self.item(q, env, d)  # noqa: E731
        xs = lambda: self.walked(env, d)  # noqa: E731
        if kind == BOOL:
            return self.comp_of(self.pick(["any", "all"]), env, d, None)
        if kind == LIST:
            return f"{self.pick(['sort_by', 'sorted'])}({xs()}, fn({q}) => {key()})"
        if kind == INT:
            body = lambda: self.one_of(lambda: acc, lambda: q, lambda: self.item(q, {**env, acc: INT}, d, False))  # noqa: E731
            options = [
                lambda: self.comp_of("count", env, d, True), lambda: self.comp_of("sum", env, d, False),
                lambda: f"fold({xs()}, {self.expr(INT, env, d)}, fn({acc}, {q}) => {body()})",
                lambda: f"{self.pick(['max_by', 'min_by'])}({xs()}, fn({q}) => {key()}, {self.expr(INT, env, d)})",
                lambda: f"len({self.pick(['group_by', 'index_by'])}({xs()}, fn({q}) => {key()}))"]
            return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]
        body = lambda: self.one_of(lambda: acc, lambda: q, lambda: self.item(q, {**env, acc: ANY}, d))  # noqa: E731
        start = lambda: self.pick(["0", "[]", "none", EMPTY])  # noqa: E731
        options = [
            lambda: f"fold({xs()}, {start()}, fn({acc}, {q}) => {body()})",
            lambda: f"scan({xs()}, {start()}, fn({acc}, {q}) => {body()})",
            lambda: f"{self.pick(['group_by', 'index_by', 'sort_by', 'sorted', 'max_by', 'min_by'])}({xs()}, "
                    f"fn({q}) => {key()})"]
        return f"str({self.draw(st.sampled_from(options))()})"


@st.composite
def programs(draw: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(ruleset text, state, run options)."""
    dice = draw(st.booleans()) and draw(st.booleans())
    g = Gen(draw, dice)
    depth = draw(st.integers(1, 3))
    lines = ['ruleset fuzz.program']
    for name in INPUTS:
        lines.append(f'input {name}: any at "/{name}" default {DEFAULTS[name]}')
    lines.append('table t2[k, j] -> int? cite "T" {\n  | k | 1 | 2 |\n  | p | 10 | 20 |\n  | q | - | 40 |\n}')
    lines.append('table t1[k] -> int? cite "T" {\n  | 0 | 5 |\n  | 1 | 6 |\n  | 2 | - |\n}')
    lines.append('table t3[k] -> int cite "T" {\n  | 0 | 5 |\n  | 1 | - |\n}')  # a miss is an error
    for _ in range(draw(st.integers(0, 2))):
        name = g.fresh("val")
        kind = g.pick([INT, LIST, STR, BOOL])
        lines.append(f"def {name} = {g.expr(kind, {}, depth)}")
        g.values.append((name, kind))
    for _ in range(draw(st.integers(0, 2))):
        name = g.fresh("fun")
        arity = draw(st.integers(1, 2))
        params = ["p", "p2"][:arity]
        body = g.expr(INT, {p: INT for p in params}, depth)
        lines.append(f"def {name}({', '.join(params)}) = {body}")
        g.functions.append((name, arity))
    if draw(st.booleans()):
        g.records = True
        lines.append("def mk(p) = {a: p, b: s}")  # (reading an input: not state-free, so a new record each call)
        if dice:
            lines.append("def per(x) = roll(1d3) + x.a")
        lines.append('decision rd(x) cite "D" = re(x.a)\ndecision re(k) cite "D" = not rd(mk(k))')
        lines.append('cycle rd cite "D" {\n  otherwise => settle cycle as true cite "D"\n}')
        lines.append('cycle re cite "D" {\n  otherwise => settle cycle as false cite "D"\n}')
    if draw(st.booleans()):
        g.deep = True
        lines.append("def sf(p) = p * 2 + 1\ndef via(f, p) = f(p)\ndef reach(k) = if k <= 0 then via(sf, k) else reach(k - 1)")
    if draw(st.booleans()):  # a recursive function with a base case
        lines.append("def down(k) = if k <= 0 then 0 else 1 + down(k - 1)")
        g.functions.append(("down", 1))
    for _ in range(draw(st.integers(0, 1))):
        name = g.fresh("rul")
        lines.append(f'rule {name}(p) cite "R" = {g.expr(BOOL, {"p": INT}, depth)}')
        g.rules.append(name)
    # decisions reading one another: a ring, and what each adds of its own
    ring = draw(st.integers(1, 3))
    own = g.expr(BOOL, {"k": INT}, 1)
    lines.append(f'decision dec(k) cite "D" = if k < 0 or k > 2 then false else '
                 f'({"not " if draw(st.booleans()) else ""}dec((k + 1) % {ring})) {g.pick(["and", "or"])} ({own})')
    policy = g.pick(['otherwise => settle cycle as false cite "D"',
                     'when len(cycle) > 1 => settle [cycle[0]] as true cite "D"\n'
                     '  otherwise => settle cycle as true cite "D"',
                     'when any(c.args[0] == 0 for c in cycle) => settle [c for c in cycle if c.args[0] == 0] as false cite "D"\n'
                     '  otherwise => settle cycle as false cite "D"'])
    lines.append(f"cycle dec cite \"D\" {{\n  {policy}\n}}")
    # a procedure
    steps = ["var acc = 0", "var seen = []", "var rec = r"]
    # a `var` holding a record, its field read, then given another value (maybe no record) and read again
    other = g.pick(['{a: 4, b: "y"}'] * 3 + ["r"] * 3 + ["3", "none"])
    steps.append('step zeroth cite "P" {\n    acc := rec.a\n    rec := ' + other + '\n    acc := acc + rec.a\n  }')
    steps.append(f'step first cite "P" {{\n    acc := {g.expr(INT, {}, 1)}\n'
                 f'    for q in {g.expr(LIST, {}, 1)} {{\n      if q > 2 {{ break }}\n      seen := append(seen, q)\n    }}\n'
                 f'    emit "began" {{acc: acc, n: len(seen)}}\n  }}')
    roll = ('let die = roll(1d6)\n    emit "rolled" {shown: shown(die)}\n'
            '    acc := acc + (if die >= 4 then 1 else 0)\n    ') if dice else ""
    steps.append(f'step second cite "P" {{\n    {roll}require {g.expr(BOOL, {"acc": INT}, 1)} else "no" cite "P"\n'
                 f'    if acc > 3 {{ goto last }}\n    acc := acc + 1\n  }}')
    steps.append('step third cite "P" {\n    if acc > 100 { stop }\n    acc := acc * 2\n  }')
    steps.append('step last cite "P" {\n    emit "done" {acc: acc}\n  }')
    lines.append('procedure proc cite "P" {\n  ' + "\n  ".join(steps) + "\n}")
    kind = g.pick([INT, BOOL, STR, LIST, REC, MAP, SET])
    lines.append(f"query main = {g.expr(kind, {}, depth + 1)}")
    lines.append("query run_proc = proc()")
    lines.append("query both = [main, dec(0), dec(1)]")
    more = []  # (`mk`, `reach`: drawn in expressions now and then, always here)
    if g.records:
        made = g.pick(g.leaves(INT, {}))
        more += [f"rd(mk({made}))"] + ([f"per(mk({made})) + per(mk({made}))"] if dice else [])
    if g.deep:
        more.append(f"reach({g.pick(['148', '149', '150'])})")
    if more:
        lines.append(f"query more = [{', '.join(more)}]")
    state = draw(states())
    options: dict[str, Any] = {"query": g.pick(["main", "main", "run_proc", "both", *(["more"] * 2 if more else [])])}
    mode = draw(st.sampled_from(["seed", "seed", "exact", "dice"])) if dice else "seed"
    if mode == "seed":
        options["seed"] = draw(st.integers(0, 5))
    elif mode == "exact":
        options["exact"] = True
    else:
        options["dice"] = draw(st.lists(st.integers(1, 6), max_size=8))
    if draw(st.integers(0, 3)) == 0:
        options["budget"] = draw(st.integers(1, 400))
    return "\n".join(lines) + "\n", state, options


# ---------------------------------------------------------------- the docs' own meaning
#
# For the part of the language docs/language.md defines exactly, an expression is drawn together with
# its expected value, computed here from the docs alone (never by the engines): `documented()` gives
# (expression text, expected JSON, dice) where the expected value is what the docs say, so that a
# misreading shared by both engines fails (tests/test_differential.py). Covered: integers and exact
# fractions (`/` is exact: 3/6 is 1/2, a whole one an integer; + - * and comparisons), truth values
# (and, or, not; a condition's truth: false, none, 0, "" and empty collections are false), texts (+,
# len, upper, lower, str of a number), lists (+, len, sorted in the order of values, first, last,
# reverse, sum, max, min), sets (walked in the order of values: list, first, comprehensions over
# them), comprehensions with a condition, `count` and `any` of generators, `if`, `let`, equality of
# kinds (a truth value is no number), `//` and `%` (floor division and its remainder, on fractions
# too), maps (literals and comprehensions keyed by numbers: entries in the order first put, the last
# value of a key kept; `m[k]` none when absent, `put`, `has`, `in`, `len`, `keys`, `values`, walking
# `for k, v in m`, JSON keys written in the notation), records (literals, `with`, fields, an absent
# one none, JSON objects), records and maps two kinds (maps keyed by texts too: `str` writes a record
# `{a: 1}` and a map `{"a" => 1}`, `{}` both; a record is never equal to a map, `{}` is both), and dice
# rolled in exact mode, by brute force over every face.

_WORDS = ["a", "b", "ab", "B", ""]


def _order(v: Any) -> Any:
    """docs/language.md, "Order of values": none, truth values, numbers, texts, lists."""
    if v is None:
        return (0, 0)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, Fraction)):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    return (4, tuple(_order(x) for x in v))


def _truth(v: Any) -> bool:
    """docs: "a condition is true unless it is false, none, 0, an empty text or an empty collection"."""
    return not (v is False or v is None or (type(v) is not bool and v == 0) or v == "" or v in ([], ()))


def _exact(v: Any) -> Any:
    return v.numerator if isinstance(v, Fraction) and v.denominator == 1 else v


def _floor_div(x: Any, y: Any) -> Any:
    """docs: `//` rounds the exact quotient down (toward minus infinity), on fractions too."""
    q = Fraction(x) / Fraction(y)
    return q.numerator // q.denominator  # (the floor of n/d, d > 0: by integers alone)


def _remainder(x: Any, y: Any) -> Any:
    """docs: `x % y` is `x - (x // y) * y`: of the divisor's sign."""
    return _exact(Fraction(x) - _floor_div(x, y) * Fraction(y))


class Entries:
    """A map of the model: its (key, value) entries in the order first put (a plain list: no Python
    dict decides anything), keys numbers here."""

    def __init__(self, pairs: list[tuple[Any, Any]] | None = None):
        self.pairs: list[tuple[Any, Any]] = []
        for k, v in pairs or []:
            self.put(k, v)

    def put(self, k: Any, v: Any) -> "Entries":
        """docs: a key put again keeps its place and takes the new value; a new one goes last."""
        for i, (k2, _) in enumerate(self.pairs):
            if k2 == k:
                self.pairs[i] = (k, v)
                return self
        self.pairs.append((k, v))
        return self

    def get(self, k: Any) -> Any:
        return next((v for k2, v in self.pairs if k2 == k), None)

    def copy(self) -> "Entries":
        return Entries(list(self.pairs))


class Fields(Entries):
    """A record of the model: its fields (texts) in the order written."""


def _same(a: Entries, b: Entries) -> bool:
    """docs, "Records and maps": a record and a map are never equal, but `{}` is both; two of a kind
    are equal when they have the same entries."""
    if not a.pairs or not b.pairs:
        return not a.pairs and not b.pairs
    return isinstance(a, Fields) == isinstance(b, Fields) and dict(a.pairs) == dict(b.pairs)


def _notation(v: Any) -> str:
    """docs, "Text of values", inside a value: a record `{a: 1}`, a map `{1 => 2}` or `{"a" => 1}`, `{}`."""
    if isinstance(v, Entries):
        if not v.pairs:
            return "{}"
        if isinstance(v, Fields):
            return "{" + ", ".join(f"{k}: {_notation(x)}" for k, x in v.pairs) + "}"
        return "{" + ", ".join(f"{_notation(k)} => {_notation(x)}" for k, x in v.pairs) + "}"
    if isinstance(v, str):
        return f'"{v}"'  # (the model's texts hold nothing escaped)
    return _number_text(v)


def _number_text(v: Any) -> str:
    """docs, "Text of values": `-1/2`, `3`."""
    return f"{v.numerator}/{v.denominator}" if isinstance(v, Fraction) else str(v)


def as_json(v: Any) -> Any:
    """The docs' JSON of a value: a fraction "n/d", a set an array in the order of values, a record
    an object, a map of numbers an object whose keys are the numbers written in the notation."""
    if isinstance(v, Fraction):
        return f"{v.numerator}/{v.denominator}"
    if isinstance(v, (set, frozenset)):
        return [as_json(x) for x in sorted(v, key=_order)]
    if isinstance(v, list):
        return [as_json(x) for x in v]
    if isinstance(v, Fields) or (isinstance(v, Entries) and all(isinstance(k, str) for k, _ in v.pairs)):
        return {k: as_json(x) for k, x in v.pairs}
    if isinstance(v, Entries):
        return {_number_text(k): as_json(x) for k, x in v.pairs}
    return v


class DocGen:
    """Expressions with their meaning: each maker returns (text, fn(env) -> value); env maps the
    comprehension's and let's names to values, and the dice rolled so far are drawn from ``faces``."""

    def __init__(self, draw: Any):
        self.draw, self.n, self.dice = draw, 0, []  # dice: the sides of each roll, in the order made
        self.quiet = 0  # inside a comprehension's body (evaluated once an item): no roll

    def pick(self, xs: list[Any]) -> Any:
        return self.draw(st.sampled_from(xs))

    def fresh(self) -> str:
        self.n += 1
        return f"z{self.n}"

    def num(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        names = [n for n, k in env.items() if k == INT]
        if d <= 0 or self.draw(st.integers(0, 3)) == 0:
            if names and self.draw(st.booleans()):
                n = self.pick(names)
                return n, lambda e, n=n: e[n]
            k = self.draw(st.integers(-3, 9))
            return (str(k) if k >= 0 else f"({k})"), lambda e, k=k: k
        op = self.pick(["+", "-", "*", "/", "//", "%", "len", "sum", "max", "if", "let", "roll", "map", "rec"])
        a = self.num(env, d - 1)
        # a divisor's text is written twice (`b * b + 1`): with no die, or its roll would be two
        self.quiet += op in ("/", "//", "%")
        b = self.num(env, d - 1)
        self.quiet -= op in ("/", "//", "%")
        if op in ("//", "%"):  # a divisor that is never 0, and sometimes a fraction or negative
            div = self.pick(["({0} * {0} + 1)", "(-({0} * {0} + 1))", "(({0} * {0} + 1) / 2)"])
            text, f = div.format(b[0]), {"({0} * {0} + 1)": lambda y: y * y + 1,
                                         "(-({0} * {0} + 1))": lambda y: -(y * y + 1),
                                         "(({0} * {0} + 1) / 2)": lambda y: Fraction(y * y + 1, 2)}[div]
            model = _floor_div if op == "//" else _remainder
            return f"({a[0]} {op} {text})", lambda e: _exact(model(a[1](e), f(b[1](e))))
        if op == "map":
            m = self.mapping(env, d - 1)
            how = self.pick(["get", "len", "sum"])
            if how == "get":
                return f"({m[0]}[{a[0]}] ?? {b[0]})", lambda e: (lambda v: b[1](e) if v is None else v)(
                    m[1](e).get(a[1](e)))
            if how == "len":
                return f"len({m[0]})", lambda e: len(m[1](e).pairs)
            return f"sum(values({m[0]}))", lambda e: _exact(sum((v for _, v in m[1](e).pairs), Fraction(0)))
        if op == "rec":
            r = self.record(env, d - 1)
            field = self.pick(["a", "b", "c"])
            return f"({r[0]}.{field} ?? {a[0]})", lambda e: (lambda v: a[1](e) if v is None else v)(
                r[1](e).get(field))
        if op in "+-*":
            f = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}[op]
            return f"({a[0]} {op} {b[0]})", lambda e: _exact(f(a[1](e), b[1](e)))
        if op == "/":  # a divisor that is never 0: its square plus one
            return (f"({a[0]} / ({b[0]} * {b[0]} + 1))",
                    lambda e: _exact(Fraction(a[1](e)) / (b[1](e) * b[1](e) + 1)))
        if op == "len":
            xs = self.lst(env, d - 1)
            return f"len({xs[0]})", lambda e: len(xs[1](e))
        if op == "sum":
            xs = self.lst(env, d - 1)
            return f"sum({xs[0]})", lambda e: _exact(sum(xs[1](e), Fraction(0)))
        if op == "max":
            xs = self.lst(env, d - 1)
            return f"max({xs[0]}, {a[0]})", lambda e: max(xs[1](e)) if xs[1](e) else a[1](e)
        if op == "if":
            c = self.cond(env, d - 1)
            return f"(if {c[0]} then {a[0]} else {b[0]})", lambda e: a[1](e) if _truth(c[1](e)) else b[1](e)
        if op == "let":
            name = self.fresh()
            body = self.num({**env, name: INT}, d - 1)
            return f"(let {name} = {a[0]}; {body[0]})", lambda e: body[1]({**e, name: a[1](e)})
        if self.quiet:
            return a
        sides = self.pick([2, 3])
        i = len(self.dice)
        self.dice.append(sides)
        return f"roll(1d{sides})", lambda e, i=i: e["#faces"][i]

    def cond(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        a, b = self.num(env, d), self.num(env, d)
        op = self.pick(["<", "<=", "==", "!=", "and", "not", "true==1", "in", "has", "kinds"])
        if op == "kinds":  # a record or a map of texts, compared with another
            x, y = (getattr(self, self.pick(["record", "words"]))(env, d - 1) for _ in range(2))
            return f"({x[0]} == {y[0]})", lambda e: _same(x[1](e), y[1](e))
        if op == "has":
            m = self.mapping(env, d - 1)
            if self.draw(st.booleans()):
                return f"has({m[0]}, {a[0]})", lambda e: m[1](e).get(a[1](e)) is not None
            return f"({a[0]} in {m[0]})", lambda e: m[1](e).get(a[1](e)) is not None
        if op in ("<", "<=", "==", "!="):
            f = {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, "==": lambda x, y: x == y,
                 "!=": lambda x, y: x != y}[op]
            return f"({a[0]} {op} {b[0]})", lambda e: f(a[1](e), b[1](e))
        if op == "and":
            c = self.cond(env, d - 1) if d > 0 else (f"({a[0]} > 0)", lambda e: a[1](e) > 0)
            return f"({c[0]} and {b[0]} > 1)", lambda e: _truth(c[1](e)) and b[1](e) > 1
        if op == "not":
            return f"(not {a[0]})", lambda e: not _truth(a[1](e))
        if op == "true==1":  # docs: "a truth value is never equal to a number"
            return f"((({a[0]}) > 0) == 1)", lambda e: False
        xs = self.lst(env, d)
        return f"({a[0]} in {xs[0]})", lambda e: a[1](e) in xs[1](e)

    def lst(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        if d <= 0 or self.draw(st.integers(0, 2)) == 0:
            items = [self.num(env, 0) for _ in range(self.draw(st.integers(0, 3)))]
            return "[" + ", ".join(t for t, _ in items) + "]", lambda e: [f(e) for _, f in items]
        op = self.pick(["+", "sorted", "reverse", "comp", "setcomp", "list_of_set", "keys", "entries"])
        if op == "keys":
            m = self.mapping(env, d - 1)
            return f"keys({m[0]})", lambda e: [k for k, _ in m[1](e).pairs]
        if op == "entries":  # `for k, v in m` walks the entries in their order
            m = self.mapping(env, d - 1)
            k, v = self.fresh(), self.fresh()
            return f"[{k} - {v} for {k}, {v} in {m[0]}]", lambda e: [_exact(x - y) for x, y in m[1](e).pairs]
        a = self.lst(env, d - 1)
        if op == "+":
            b = self.lst(env, d - 1)
            return f"({a[0]} + {b[0]})", lambda e: a[1](e) + b[1](e)
        if op == "sorted":
            return f"sorted({a[0]})", lambda e: sorted(a[1](e), key=_order)
        if op == "reverse":
            return f"reverse({a[0]})", lambda e: a[1](e)[::-1]
        name = self.fresh()
        inner = {**env, name: INT}
        self.quiet += 1
        elem, cond = self.num(inner, d - 1), self.cond(inner, d - 1)
        self.quiet -= 1
        if op == "comp":
            return (f"[{elem[0]} for {name} in {a[0]} if {cond[0]}]",
                    lambda e: [elem[1]({**e, name: x}) for x in a[1](e) if _truth(cond[1]({**e, name: x}))])
        if op == "setcomp":  # a set comprehension, then walked: the order of values
            return (f"list({{{elem[0]} for {name} in {a[0]} if {cond[0]}}})",
                    lambda e: sorted({elem[1]({**e, name: x}) for x in a[1](e)
                                      if _truth(cond[1]({**e, name: x}))}, key=_order))
        # a comprehension over a set walks it in the order of values
        return (f"[{elem[0]} for {name} in set({a[0]})]",
                lambda e: [elem[1]({**e, name: x}) for x in sorted(set(a[1](e)), key=_order)])

    def mapping(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        """A map keyed by numbers: a literal of distinct keys, a comprehension (a key met again keeps
        its place and takes the later value), or `put` into one."""
        how = self.pick(["literal", "comp", "put"]) if d > 0 else "literal"
        if how == "literal":
            n = self.draw(st.integers(0, 3))
            keys = self.draw(st.lists(st.integers(-2, 4), min_size=n, max_size=n, unique=True))
            vals = [self.num(env, 0) for _ in keys]
            if not keys:
                return "{}", lambda e: Entries()
            text = "{" + ", ".join(f"{k if k >= 0 else f'({k})'} => {v[0]}" for k, v in zip(keys, vals)) + "}"
            return text, lambda e: Entries([(k, v[1](e)) for k, v in zip(keys, vals)])
        if how == "comp":
            xs = self.lst(env, d - 1)
            name = self.fresh()
            inner = {**env, name: INT}
            self.quiet += 1
            key, val = self.num(inner, 0), self.num(inner, d - 1)
            self.quiet -= 1
            return (f"{{{key[0]} => {val[0]} for {name} in {xs[0]}}}",
                    lambda e: Entries([(key[1]({**e, name: x}), val[1]({**e, name: x})) for x in xs[1](e)]))
        m, k, v = self.mapping(env, d - 1), self.num(env, 0), self.num(env, d - 1)
        return f"put({m[0]}, {k[0]}, {v[0]})", lambda e: m[1](e).copy().put(k[1](e), v[1](e))

    def notation(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        """docs, "Text of values": `str` writes a record `{a: 1}`, a map `{1 => 2}` or `{"a" => 1}`, `{}`."""
        m = getattr(self, self.pick(["mapping", "record", "words"]))(env, d)
        return f"str({m[0]})", lambda e: _notation(m[1](e))

    def words(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        """A map keyed by texts (a map, not a record): a literal, or `put` into `{}`, which makes a map."""
        names = self.draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True))
        vals = [self.num(env, 0) for _ in names]
        if names and self.draw(st.booleans()):
            text = f'put({{}}, "{names[0]}", {vals[0][0]})'
            return text, lambda e: Entries([(names[0], vals[0][1](e))])
        text = "{" + ", ".join(f'"{n}" => {v[0]}' for n, v in zip(names, vals)) + "}"
        return text, lambda e: Entries([(n, v[1](e)) for n, v in zip(names, vals)])

    def record(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        """A record: a literal (fields in the order written), or `r with {...}` (fields changed in
        place, new ones after)."""
        if d <= 0 or self.draw(st.booleans()):
            names = self.draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True))
            vals = [self.num(env, 0) for _ in names]
            if not names:
                return "{}", lambda e: Fields()
            return ("{" + ", ".join(f"{n}: {v[0]}" for n, v in zip(names, vals)) + "}",
                    lambda e: Fields([(n, v[1](e)) for n, v in zip(names, vals)]))
        r = self.record(env, d - 1)
        names = self.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True))
        vals = [self.num(env, 0) for _ in names]
        changes = "{" + ", ".join(f"{n}: {v[0]}" for n, v in zip(names, vals)) + "}"

        def changed(e: dict[str, Any]) -> Any:
            out = r[1](e).copy()
            for n, v in zip(names, vals):
                out.put(n, v[1](e))
            return Fields(out.pairs)
        return f"({r[0]} with {changes})", changed

    def text(self, env: dict[str, str], d: int) -> tuple[str, Any]:
        if d <= 0 or self.draw(st.integers(0, 2)) == 0:
            w = self.pick(_WORDS)
            return f'"{w}"', lambda e: w
        a, b = self.text(env, d - 1), self.text(env, d - 1)
        op = self.pick(["+", "upper", "lower", "str", "join", "str_of"])
        if op == "str_of":
            return self.notation(env, d - 1)
        if op == "+":
            return f"({a[0]} + {b[0]})", lambda e: a[1](e) + b[1](e)
        if op in ("upper", "lower"):
            return f"{op}({a[0]})", lambda e: getattr(a[1](e), op)()
        if op == "str":  # docs: `str` writes a number in the notation: 1/2, -3
            n = self.num(env, d - 1)
            return (f"str({n[0]})", lambda e: (lambda v: f"{v.numerator}/{v.denominator}"
                                                if isinstance(v, Fraction) else str(v))(n[1](e)))
        xs = self.lst(env, d - 1)  # join of a set of texts: in the order of values (of the texts)
        name = self.fresh()
        return (f'join({{str({name}) for {name} in {xs[0]}}}, ",")',
                lambda e: ",".join(sorted({_number_text(v) for v in xs[1](e)}, key=_order)))


@st.composite
def documented(draw: Any) -> tuple[str, Any, list[int]]:
    """(expression, its expected JSON value or, with dice, {JSON of a result: probability}, the sides of
    its dice). With dice, the expectation is every combination of faces, equally likely, each
    evaluated as the docs say: the brute force the exact mode must agree with."""
    g = DocGen(draw)
    kind = draw(st.sampled_from(["num", "cond", "lst", "text", "mapping", "record", "words", "notation"]))
    text, fn = getattr(g, kind)({}, draw(st.integers(1, 3)))
    if not g.dice:
        return text, as_json(fn({"#faces": []})), []
    if len(g.dice) > 4:
        return text, None, g.dice
    dist: dict[str, Fraction] = {}
    total = 1
    for s in g.dice:
        total *= s
    for faces in itertools.product(*[range(1, s + 1) for s in g.dice]):
        key = json.dumps(as_json(fn({"#faces": list(faces)})), sort_keys=True)
        dist[key] = dist.get(key, Fraction(0)) + Fraction(1, total)
    return text, dist, g.dice
