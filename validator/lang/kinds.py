"""How a value read from outside is made the kinds its declared type says (docs/language.md, "Records
and maps"): every JSON or YAML object is a record, except those a declared type says are maps. What
is read so: a state's inputs (``input x: T at "/p"``), a query's arguments given from outside (its
parameters' types) and a data import with a type (``import "f.yaml" as d: T``)."""

from __future__ import annotations

from typing import Any

from . import ast as A
from ..lib.values import Map


class DeclaredKinds:
    """How a value read from outside (a state, an argument, a data file) is made the kinds its
    declared type says: its JSON objects are records, except those the type declares `map[K, V]`, at
    any depth of `map`, `list` and the fields of the named records of a namespace (``records``), a
    record inside a list inside a record included. A value of another shape than declared is left as
    it is (the schemas and checks say what is wrong with it)."""

    def __init__(self, records: dict[str, A.RecordDecl]):
        self.records = records
        self._declares: dict[int, bool] = {}  # by the type's identity (the declarations hold them)
        self._fields: dict[str, list[A.FieldDecl]] = {}  # a record's fields that declare a map somewhere

    def declares_map(self, t: A.TypeRef) -> bool:
        """Whether ``t`` declares a map anywhere within it, named records' fields included."""
        found = self._declares.get(id(t))
        if found is None:
            found = self._declares[id(t)] = self._declares_map(t, frozenset())
        return found

    def _declares_map(self, t: A.TypeRef, seen: frozenset[str]) -> bool:
        if t.name == "map":
            return True
        record = self.records.get(t.name) if not t.args else None
        if record is not None:
            return t.name not in seen and any(self._declares_map(f.type, seen | {t.name}) for f in record.fields)
        return any(self._declares_map(a, seen) for a in t.args)

    def read(self, v: Any, t: A.TypeRef) -> Any:
        """``v`` with the maps ``t`` declares made maps (called where ``declares_map(t)``)."""
        if type(v) is dict:
            if t.name == "map" and len(t.args) == 2:
                inner = t.args[1]
                if self.declares_map(inner):
                    return Map((k, self.read(x, inner)) for k, x in v.items())
                return Map(v)
            if not t.args and t.name in self.records:
                fields = self._map_fields(t.name)
                out = dict(v)
                for f in fields:
                    if f.name in v:
                        out[f.name] = self.read(v[f.name], f.type)
                return out
        elif type(v) is list and t.name == "list" and len(t.args) == 1:
            inner = t.args[0]
            return [self.read(x, inner) for x in v] if self.declares_map(inner) else v
        return v

    def _map_fields(self, name: str) -> list[A.FieldDecl]:
        found = self._fields.get(name)
        if found is None:
            found = self._fields[name] = [f for f in self.records[name].fields if self.declares_map(f.type)]
        return found
