"""One record type for the public API: :class:`Record`.

A record class lists its fields as annotated class attributes, with their defaults::

    class Tool(Record):
        name: str
        path: Path | None = None

Records are built with keywords (positions work too, in field order), are frozen, compare
equal field by field, are weak-referenceable and have no tuple semantics: no indexing,
unpacking or iteration. Copy one with changes with ``record.replace(name=...)`` (also
``copy.replace(record, ...)`` from Python 3.13). Defining a record class costs a few
microseconds (a ``NamedTuple`` ~15 times as much, a dataclass ~100 times): every start-up
defines the tool records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing_extensions import Self, dataclass_transform
else:
    def dataclass_transform(**_options: Any) -> Any:
        """Type checkers only: at run time a record class needs nothing from it."""
        return lambda cls: cls

_MISSING: Any = object()


@dataclass_transform(frozen_default=True)
class Record:
    """The base of every public record: see the module's docstring."""

    __slots__ = ()
    _record_fields: ClassVar[dict[str, Any]] = {}
    """Each field's name and its default (``_MISSING`` for none), in order."""
    _record_defaults: ClassVar[dict[str, Any]] = {}
    """The fields that have a default, with it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(cls._record_fields)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                fields[name] = cls.__dict__.get(name, fields.get(name, _MISSING))
        cls._record_fields = fields
        cls._record_defaults = {name: default for name, default in fields.items()
                                if default is not _MISSING}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # dict operations in C, one check at the end: a warm start-up builds a few hundred
        values = object.__getattribute__(self, "__dict__")
        if args and not kwargs and len(args) == len(self._record_fields):
            values.update(zip(self._record_fields, args, strict=True))  # all by position
            return
        values.update(self._record_defaults)
        if args:
            values.update(self._positional(args, kwargs))
        values.update(kwargs)
        if values.keys() != self._record_fields.keys():
            raise TypeError(self._wrong(values))

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        fields = self._record_fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, "
                            f"{len(args)} were given")
        given = dict(zip(fields, args, strict=False))  # too many: refused above
        twice = given.keys() & kwargs.keys()
        if twice:
            raise TypeError(f"{type(self).__name__}() got a second value for argument "
                            f"'{min(twice)}'")
        return given

    def _wrong(self, values: dict[str, Any]) -> str:
        unknown = values.keys() - self._record_fields.keys()
        if unknown:
            return f"{type(self).__name__}() got an unexpected argument '{min(unknown)}'"
        missing = [name for name in self._record_fields if name not in values]
        return f"{type(self).__name__}() needs the argument '{missing[0]}'"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: make a changed copy with "
                             f".replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine = object.__getattribute__(self, "__dict__")
        theirs = object.__getattribute__(other, "__dict__")
        # the fields only: a functools.cached_property keeps its value beside them
        return all(mine[name] == theirs[name] for name in self._record_fields)

    def __hash__(self) -> int:
        values = object.__getattribute__(self, "__dict__")
        return hash((type(self), *(values[name] for name in self._record_fields)))

    def __repr__(self) -> str:
        values = object.__getattribute__(self, "__dict__")
        shown = ", ".join(f"{name}={values[name]!r}" for name in self._record_fields)
        return f"{type(self).__name__}({shown})"

    def replace(self, **changes: Any) -> Self:
        """A copy of this record with ``changes`` (field names and their new values)."""
        unknown = changes.keys() - self._record_fields.keys()
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field '{sorted(unknown)[0]}'")
        copy = object.__new__(type(self))
        mine = object.__getattribute__(self, "__dict__")
        values = object.__getattribute__(copy, "__dict__")
        values.update({name: mine[name] for name in self._record_fields})  # no cached values
        values.update(changes)
        return copy

    __replace__ = replace  # copy.replace(record, **changes), Python 3.13

    def _replace(self, **changes: Any) -> Self:
        """Deprecated (the named-tuple spelling, until ikigai 0.3): :meth:`replace`."""
        import warnings

        warnings.warn(f"{type(self).__name__}._replace() is deprecated; use .replace()",
                      DeprecationWarning, stacklevel=2)
        return self.replace(**changes)


def field_defaults(record: type[Record]) -> dict[str, Any]:
    """The fields of ``record`` that have a default, with it."""
    return dict(record._record_defaults)
