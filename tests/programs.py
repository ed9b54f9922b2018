"""Random ruleset programs for differential testing (``tests/test_differential.py``).

``programs()`` is a Hypothesis strategy of (ruleset text, state, run options): a small ruleset that
checks without errors (names in scope, arities right, types mostly consistent) over a state whose
inputs are typed `any`, so that what the state holds may also make a run fail at run time. The
programs use every construct of the language: values, memoized functions (recursive ones too),
rules, tables (grids and cell overrides), lambdas made in loops, comprehensions of every kind with
one and two names, `let`, `if`, `??`, records, `with`, maps, sets, built-ins, decisions reading each
other (cycles settled by policies), procedures with `var`, `goto`, `require`, `emit`, `for`,
`break`, dice (rolled, compared, shifted, sorted) and module-free global names.
"""

from __future__ import annotations

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

    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def pick(self, options: list[Any]) -> Any:
        return self.draw(st.sampled_from(options))

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
            lambda: f"len([q for q in {self.expr(LIST, env, d)} if {self.expr(BOOL, {**env, 'q': INT}, d)}])",
            lambda: f"fold({self.expr(LIST, env, d)}, {i()}, fn(acc, q) => {self.expr(INT, {**env, 'acc': INT, 'q': INT}, d)})",
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
            lambda: f"(not {b()})", lambda: f"({b()} and {b()})", lambda: f"({b()} or {b()} or {b()})",
            lambda: f"any({self.expr(BOOL, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)})",
            lambda: f"all({self.expr(BOOL, {**env, 'q': INT}, d)} for q in {self.expr(LIST, env, d)})",
            lambda: f"has({self.expr(MAP, env, d)}, {self.expr(STR, env, d)})",
            lambda: f"({self.expr(STR, env, d)} in {self.expr(MAP, env, d)})",
            lambda: self.let(BOOL, env, d),
            lambda: f"(if {b()} then {b()} else {b()})",
            lambda: f"(({self.expr(ANY, env, d)}) == none)",
        ]
        if self.rules:
            options.append(lambda: f"{self.pick(self.rules)}({i()})")
        options.append(lambda: f"dec({self.pick(['0', '1', '2', i()])})")
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
        ]
        return self.draw(st.sampled_from(options))()  # type: ignore[no-any-return]

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
            lambda: f"concat({xs()}, {xs()})", lambda: f"unique({xs()})",
            lambda: f"sort_by({xs()}, fn(q) => {self.expr(INT, {**env, 'q': INT}, d)})",
            # lambdas made in a loop keep their own value of the loop's name
            lambda: f"[h({i()}) for h in [fn(q) => q + w for w in {xs()}]]",
            lambda: f"values({self.expr(MAP, env, d)})",
            lambda: f"slice({xs()}, {self.pick(['0', '1', i()])}, {self.pick(['2', i()])})",
            lambda: f"list({self.expr(SET, env, d)})",
            lambda: f"[k2 + v2 for k2, v2 in {{q => q * 2 for q in {xs()}}}]",
            lambda: f"[x2.index + x2.item for x2 in enumerate({xs()})]",
            lambda: f"scan({xs()}, 0, fn(acc, q) => acc + q)",
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
    state = draw(states())
    options: dict[str, Any] = {"query": g.pick(["main", "main", "run_proc", "both"])}
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
