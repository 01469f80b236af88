"""The one conversion module between the wire (``sixnimmt.v1``) and the domain (``referee.rules``).

The referee server converts requests, events and results to the wire here; the SDK converts
them back here. A game's views and events convert through one generic :class:`Codec`, compiled
from the game's record types (named tuples, dataclasses) and its protobuf messages, which match
field by field. A new game declares its codec (its view and event types, its field in the
envelope, what does not map by name) and registers it with :func:`register`; see
docs/architecture.md ("The wire codec") and docs/protocol.md.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message

from referee.faults import FaultKind, FaultNotice
from referee.rules.core import Action, Decision, DecisionKind, Event, Outcome, Termination, View
from referee.rules.errors import RulesError
from referee.rules.spec import GameSpec, installed_games, named_game
from sixnimmt.v1 import game_pb2, referee_pb2

PROTOCOL_VERSION = 1
TOKEN_METADATA = "sixnimmt-token"
"""The ``Play`` call's metadata key that names the bot's token (or API key) before any message:
the referee then admits the stream within that token's own limits (docs/protocol.md, "Admission")."""

PLUGIN = "plugin"
"""The field of ``DecisionRequest`` and ``MatchEvent`` beside their ``view`` and ``payload`` oneofs
(``google.protobuf.Any``) that carries a game not in game.proto: its own messages, packed. A
plugin game declares ``Codec(variants, PLUGIN, …, view_message=…, event_message=…)``."""

_log = logging.getLogger("sixnimmt.games")

KIND_TO_WIRE: dict[DecisionKind, int] = {
    DecisionKind.CARD: game_pb2.DECISION_KIND_CARD,
    DecisionKind.ROW: game_pb2.DECISION_KIND_ROW,
    DecisionKind.CARD_ROW: game_pb2.DECISION_KIND_CARD_ROW,
    DecisionKind.CARDS: game_pb2.DECISION_KIND_CARDS,
    DecisionKind.LUCK: game_pb2.DECISION_KIND_LUCK,
    DecisionKind.ACTION_CARD: game_pb2.DECISION_KIND_ACTION_CARD,
    DecisionKind.PILE: game_pb2.DECISION_KIND_PILE,
}
KIND_FROM_WIRE: dict[int, DecisionKind] = {v: k for k, v in KIND_TO_WIRE.items()}


class WireError(RulesError):
    """A wire message that does not convert to a domain value."""


# -- actions ---------------------------------------------------------------------------------


def action_to_wire(action: Action, out: game_pb2.Action) -> None:
    """Write an action into ``out``."""
    if isinstance(action, tuple):
        out.tuple.values.extend(action)
    else:
        out.number = action


def action_from_wire(message: game_pb2.Action) -> Action:
    """An action from the wire; a missing action is a :class:`WireError`."""
    which = message.WhichOneof("value")
    if which == "number":
        return message.number
    if which == "tuple":
        return tuple(message.tuple.values)
    raise WireError("the reply holds no action")


# -- the generic codec -----------------------------------------------------------------------
#
# A game's view and events are records (named tuples, dataclasses) whose fields map to the fields
# of the same name in the game's protobuf messages. From the records' annotations and the messages'
# descriptors, each record type is compiled once into a pair of plain Python functions (source
# text, built and exec'd here), so converting a message looks up no field, no annotation and no
# descriptor: it is the code one would write by hand.


@dataclass(frozen=True)
class Special:
    """A record field converted by the game's own code instead of by name.

    ``to_wire(record, message)`` writes the field (it may read the rest of the record) into the
    record's message; ``from_wire(message)`` reads the field's value back. ``wire_fields`` are
    the message fields it writes, so that every message field is accounted for.
    """

    to_wire: Callable[[Any, Any], None]
    from_wire: Callable[[Any], Any]
    wire_fields: tuple[str, ...] = ()


_FD = descriptor.FieldDescriptor
_SCALAR_TYPES: dict[int, type] = {
    _FD.CPPTYPE_INT32: int,
    _FD.CPPTYPE_INT64: int,
    _FD.CPPTYPE_UINT32: int,
    _FD.CPPTYPE_UINT64: int,
    _FD.CPPTYPE_ENUM: int,
    _FD.CPPTYPE_BOOL: bool,
    _FD.CPPTYPE_STRING: str,
    _FD.CPPTYPE_DOUBLE: float,
    _FD.CPPTYPE_FLOAT: float,
}
_MISSING = object()
"""A key no record field is: the shared part's cache starts empty."""


# -- the wire format itself, for messages assembled as bytes ----------------------------------
#
# The referee sends its Updates as bytes it puts together itself: a step's table encoded once and
# spliced into each seat's request, a step's events encoded once for every connection. Protobuf
# writes a message's fields in the order of their numbers, each as its tag and value; these
# helpers write the same bytes (tests/referee prove them equal to SerializeToString's).

_VARINTS: list[bytes] = []
for _n in range(1 << 14):
    _VARINTS.append(bytes([_n]) if _n < 0x80 else bytes([(_n & 0x7F) | 0x80, _n >> 7]))
del _n


def _varint_long(value: int) -> bytes:
    if 16384 <= value < 1 << 21:  # past the table (a request id): three bytes, written at once
        return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80, value >> 14))
    if value < 0:
        value += 1 << 64  # int32 and int64 are sign-extended to ten bytes
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint(value: int) -> bytes:
    """A varint: an integer field's value, a length or a tag."""
    return _VARINTS[value] if 0 <= value < 16384 else _varint_long(value)


def packed(values: Sequence[int]) -> bytes:
    """The varints of a packed repeated integer field's values, one after another."""
    try:
        data = bytes(values)  # every value below 128 is its own varint
    except (ValueError, TypeError):
        pass
    else:
        if data.isascii():
            return data
    return b"".join([varint(value) for value in values])


def _string(key: bytes, text: str) -> bytes:
    data = text.encode()
    return key + varint(len(data)) + data


def tag(number: int, wire_type: int) -> bytes:
    """A field's key: its number and wire type (0 varint, 2 length-delimited)."""
    return varint(number << 3 | wire_type)


_VARINT_TYPES = frozenset(
    {_FD.TYPE_INT32, _FD.TYPE_INT64, _FD.TYPE_UINT32, _FD.TYPE_UINT64, _FD.TYPE_ENUM, _FD.TYPE_BOOL}
)


class _NoBytes(Exception):
    """A record the bytes writer does not encode by hand: its requests are built as messages."""


def _record_fields(cls: type) -> list[tuple[str, Any]]:
    """A record type's fields in order, with their resolved annotations."""
    hints = typing.get_type_hints(cls)
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls)]
    elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
        names = list(cls._fields)
    else:
        raise TypeError(f"{cls.__name__} is neither a named tuple nor a dataclass")
    return [(name, hints[name]) for name in names]


def _is_record(annotation: Any) -> bool:
    return isinstance(annotation, type) and (
        dataclasses.is_dataclass(annotation)
        or (issubclass(annotation, tuple) and hasattr(annotation, "_fields"))
    )


def _optional(annotation: Any) -> Any:
    """``X`` for ``X | None``, else ``None``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0]
    return None


def _tuple_args(annotation: Any) -> tuple[Any, ...] | None:
    if typing.get_origin(annotation) is tuple:
        return typing.get_args(annotation)
    return None


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def message_class(message_type: descriptor.Descriptor) -> type[Message]:
    """The generated Python class of a message descriptor."""
    cls: type[Message] = message_factory.GetMessageClass(message_type)
    return cls


class _Compiler:
    """Writes the source of the converters of one game, one function per record type and direction."""

    def __init__(
        self, names: Mapping[type, Mapping[str, str]], special: Mapping[type, Mapping[str, Special]]
    ) -> None:
        self.names = names
        self.special = special
        self.scope: dict[str, Any] = {
            "_new": tuple.__new__,
            "WireError": WireError,
            "_V": _VARINTS,
            "_vl": _varint_long,
            "_pk": packed,
            "_str": _string,
        }
        self.lines: list[str] = []
        self._count = 0
        self._nested: dict[tuple[type, str], tuple[str, str]] = {}
        self._bytes_nested: dict[tuple[type, str], str] = {}

    def fresh(self, stem: str) -> str:
        self._count += 1
        return f"_{stem}{self._count}"

    def constant(self, value: Any, stem: str) -> str:
        name = self.fresh(stem)
        self.scope[name] = value
        return name

    def build(self) -> dict[str, Any]:
        source = "\n".join(self.lines) + "\n"
        exec(compile(source, "<referee.wire generated codec>", "exec"), self.scope)
        self.scope["__source__"] = source
        return self.scope

    # -- the field plan: which message field each record field goes to -------------------------

    def plan(
        self, cls: type, message_type: descriptor.Descriptor, given: Sequence[str] = ()
    ) -> list[tuple[str, Any, descriptor.FieldDescriptor | Special | None]]:
        """Each record field with its annotation and message field (or its :class:`Special`;
        ``None`` for a field the caller passes in); every message field must be covered once."""
        names = self.names.get(cls, {})
        special = self.special.get(cls, {})
        unknown = (set(names) | set(special)) - {name for name, _ in _record_fields(cls)}
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
        by_name = message_type.fields_by_name
        plan: list[tuple[str, Any, descriptor.FieldDescriptor | Special | None]] = []
        covered: list[str] = []
        for name, annotation in _record_fields(cls):
            if name in given:
                plan.append((name, annotation, None))
            elif name in special:
                plan.append((name, annotation, special[name]))
                covered.extend(special[name].wire_fields)
            else:
                wire_name = names.get(name, name)
                if wire_name not in by_name:
                    raise TypeError(
                        f"{cls.__name__}.{name} has no field {wire_name!r} in {message_type.full_name}: "
                        "add it to the message, map it to another field (names) or convert it (special)"
                    )
                plan.append((name, annotation, by_name[wire_name]))
                covered.append(wire_name)
        missing = [f.name for f in message_type.fields if f.name not in covered]
        twice = sorted({name for name in covered if covered.count(name) > 1})
        if missing or twice:
            raise TypeError(
                f"{message_type.full_name} and {cls.__name__} differ: "
                f"fields of no record field: {missing}, fields of two: {twice}"
            )
        return plan

    # -- domain → wire -------------------------------------------------------------------------

    def write_value(self, out: list[str], pad: str, annotation: Any, field: descriptor.FieldDescriptor,
                    value: str, message: str, where: str) -> None:  # fmt: skip
        """Statements writing ``value`` (an expression, evaluated once) into ``message.<field>``."""
        name = field.name
        inner = _optional(annotation)
        if field.is_repeated:
            args = _tuple_args(annotation)
            if args is None or len(args) != 2 or args[1] is not Ellipsis:
                raise TypeError(f"{where}: a repeated field needs a tuple[X, ...], got {annotation}")
            item = args[0]
            if field.cpp_type != _FD.CPPTYPE_MESSAGE:
                self.check_scalar(item, field, where)
                out.append(f"{pad}{message}.{name}.extend({value})")
                return
            add, x = self.fresh("add"), self.fresh("x")
            out.append(f"{pad}{add} = {message}.{name}.add")
            sub = field.message_type
            item_args = _tuple_args(item)
            if _is_record(item):
                writer, _ = self.nested(item, sub)
                out.append(f"{pad}for {x} in {value}:")
                out.append(f"{pad}    {writer}({x}, {add}())")
            elif item_args and len(item_args) == 2 and item_args[1] is Ellipsis:
                (only,) = self.only_repeated(sub, item_args[0], where)
                out.append(f"{pad}for {x} in {value}:")
                out.append(f"{pad}    {add}().{only}.extend({x})")
            elif item_args:
                fields = self.positional(sub, item_args, where)
                parts = [self.fresh("p") for _ in fields]
                keywords = ", ".join(f"{f}={p}" for f, p in zip(fields, parts, strict=True))
                out.append(f"{pad}for {', '.join(parts)}, in {value}:")
                out.append(f"{pad}    {add}({keywords})")
            else:
                raise TypeError(f"{where}: no wire form for items of {annotation}")
            return
        if field.cpp_type == _FD.CPPTYPE_MESSAGE:
            target = annotation
            v = self.fresh("v")
            out.append(f"{pad}{v} = {value}")
            if inner is not None:
                if not field.has_presence:
                    raise TypeError(f"{where}: an optional value needs a field with presence")
                target = inner
                out.append(f"{pad}if {v} is not None:")
                pad += "    "
            s = self.fresh("s")
            out.append(f"{pad}{s} = {message}.{name}")
            out.append(f"{pad}{s}.SetInParent()")
            args = _tuple_args(target)
            if _is_record(target):
                writer, _ = self.nested(target, field.message_type)
                out.append(f"{pad}{writer}({v}, {s})")
            elif args and Ellipsis not in args:
                fields = self.positional(field.message_type, args, where)
                out.append(f"{pad}{', '.join(f'{s}.{f}' for f in fields)}, = {v}")
            else:
                raise TypeError(f"{where}: no wire form for {annotation} as a message")
            return
        if inner is not None:
            if not field.has_presence:
                raise TypeError(f"{where}: an optional value needs an optional field")
            self.check_scalar(inner, field, where)
            v = self.fresh("v")
            out.append(f"{pad}{v} = {value}")
            out.append(f"{pad}if {v} is not None:")
            out.append(f"{pad}    {message}.{name} = {v}")
            return
        self.check_scalar(annotation, field, where)
        out.append(f"{pad}{message}.{name} = {value}")

    # -- wire → domain -------------------------------------------------------------------------

    def read_value(self, annotation: Any, field: descriptor.FieldDescriptor, message: str, where: str) -> str:
        """An expression reading ``message.<field>`` as a value of ``annotation``."""
        name = field.name
        inner = _optional(annotation)
        if field.is_repeated:
            (item, _) = _tuple_args(annotation)  # type: ignore[misc]
            if field.cpp_type != _FD.CPPTYPE_MESSAGE:
                return f"tuple({message}.{name})"
            r = self.fresh("r")
            sub = field.message_type
            item_args = _tuple_args(item)
            if _is_record(item):
                _, reader = self.nested(item, sub)
                return f"tuple([{reader}({r}) for {r} in {message}.{name}])"
            if item_args and len(item_args) == 2 and item_args[1] is Ellipsis:
                (only,) = self.only_repeated(sub, item_args[0], where)
                return f"tuple([tuple({r}.{only}) for {r} in {message}.{name}])"
            fields = self.positional(sub, item_args or (), where)
            return f"tuple([({', '.join(f'{r}.{f}' for f in fields)},) for {r} in {message}.{name}])"
        target = annotation if inner is None else inner
        if field.cpp_type == _FD.CPPTYPE_MESSAGE:
            args = _tuple_args(target)
            if _is_record(target):
                _, reader = self.nested(target, field.message_type)
                read = f"{reader}({message}.{name})"
            else:
                fields = self.positional(field.message_type, args or (), where)
                read = f"({', '.join(f'{message}.{name}.{f}' for f in fields)},)"
        else:
            read = f"{message}.{name}"
        if inner is not None:
            return f"({read} if {message}.HasField({name!r}) else None)"
        return read

    # -- shapes ----------------------------------------------------------------------------------

    def check_scalar(self, annotation: Any, field: descriptor.FieldDescriptor, where: str) -> None:
        expected = _SCALAR_TYPES.get(field.cpp_type)
        if expected is None or annotation is not expected:
            raise TypeError(f"{where}: {annotation} does not fit the wire field {field.full_name}")

    def only_repeated(self, message_type: descriptor.Descriptor, item: Any, where: str) -> tuple[str]:
        """A message of one repeated scalar field (``Cards``) holds a ``tuple[X, ...]``."""
        fields = message_type.fields
        if len(fields) != 1 or not fields[0].is_repeated or fields[0].cpp_type == _FD.CPPTYPE_MESSAGE:
            raise TypeError(f"{where}: {message_type.full_name} is not a message of one repeated field")
        self.check_scalar(item, fields[0], where)
        return (fields[0].name,)

    def positional(self, message_type: descriptor.Descriptor, items: Sequence[Any], where: str) -> list[str]:
        """A fixed-length tuple's items are a message's fields in their order."""
        fields = message_type.fields
        if len(fields) != len(items) or Ellipsis in items:
            raise TypeError(f"{where}: {len(items)} values do not fit the {len(fields)} fields of "
                            f"{message_type.full_name}")  # fmt: skip
        for annotation, field in zip(items, fields, strict=True):
            if field.is_repeated:
                raise TypeError(f"{where}: {field.full_name} is repeated, a tuple's item is not")
            self.check_scalar(annotation, field, where)
        return [f.name for f in fields]

    def nested(self, cls: type, message_type: descriptor.Descriptor) -> tuple[str, str]:
        """The writer and reader of a record inside another record's message."""
        key = (cls, message_type.full_name)
        if key not in self._nested:
            names = (self.fresh(f"write_{cls.__name__}"), self.fresh(f"read_{cls.__name__}"))
            self._nested[key] = names
            self.record(cls, message_type, names[0], names[1])
        return self._nested[key]

    # -- one record type -------------------------------------------------------------------------

    def record(
        self,
        cls: type,
        message_type: descriptor.Descriptor,
        writer: str,
        reader: str,
        *,
        path: str = "",
        given: Sequence[str] = (),
        shared: Sequence[str] = (),
        checked: bool = True,
    ) -> None:
        """Define ``writer(record, out)`` and ``reader(message, *given)`` for one record type.

        ``path`` is the attribute path from ``out`` (and the reader's message) to the record's
        message. ``shared`` fields are the same objects for every seat asked in one step: their
        wire form is built once, kept while those objects stay the same, and copied. A
        ``checked`` writer refuses a record of another type (an event's writer is found by type).
        """
        plan = self.plan(cls, message_type, given)
        kind = cls.__name__
        c = self.constant(cls, kind)
        unknown = set(shared) - {name for name, _, _ in plan}
        if unknown:
            raise TypeError(f"{kind} has no field {', '.join(sorted(unknown))} to share")
        record_tuple = not dataclasses.is_dataclass(cls)
        local = {name: f"o_{name}" for name, _, _ in plan}
        body: list[str] = [f"def {writer}(o, out):"]
        if checked:
            body.append(f"    if o.__class__ is not {c}:")
            body.append(f"        raise WireError(f'no wire form for {{o.__class__.__name__}} as {kind}')")
        if record_tuple:
            body.append(f"    {', '.join(local[name] for name, _, _ in plan)}, = o")
        else:
            body.extend(f"    {local[name]} = o.{name}" for name, _, _ in plan if name not in given)
        m = "m"
        body.append(f"    {m} = out{path}")
        head = [f"def {writer}_own(o, out):", *body[1:], f"    {m}.SetInParent()"]
        own = [name for name, _, _ in plan if name not in shared]
        if not any(
            isinstance(field, descriptor.FieldDescriptor)
            and not field.is_repeated
            and field.cpp_type != _FD.CPPTYPE_MESSAGE
            and _optional(annotation) is None
            for name, annotation, field in plan
            if name in own
        ):
            # Present even when empty: assigning any field of it would do the same.
            body.append(f"    {m}.SetInParent()")

        def write(out: list[str], pad: str, fields: Sequence[str], target: str) -> None:
            for name, annotation, field in plan:
                if name not in fields:
                    continue
                if isinstance(field, Special):
                    hook = self.constant(field.to_wire, f"special_{name}")
                    out.append(f"{pad}{hook}(o, {target})")
                elif field is not None:
                    self.write_value(out, pad, annotation, field, local[name], target, f"{kind}.{name}")

        if shared:
            cell = self.constant([(*(_MISSING for _ in shared), None)], "shared")
            table = self.constant(message_class(message_type), "table")
            checks = " or ".join(f"{local[name]} is not c[{i}]" for i, name in enumerate(shared))
            body.append(f"    c = {cell}[0]")
            body.append(f"    if {checks}:")
            body.append(f"        t = {table}()")
            write(body, "        ", shared, "t")
            body.append(f"        c = ({', '.join(local[name] for name in shared)}, t)")
            body.append(f"        {cell}[0] = c")
            body.append(f"    {m}.CopyFrom(c[-1])")
            # The same without the table (Hello.table_once): another request of the step holds it.
            write(head, "    ", own, m)
            self.lines.extend(head)
        write(body, "    ", own, m)
        self.lines.extend(body)

        reads = []
        for name, annotation, field in plan:
            if field is None:
                reads.append(name)
            elif isinstance(field, Special):
                reads.append(f"{self.constant(field.from_wire, f'special_{name}')}(m)")
            else:
                reads.append(self.read_value(annotation, field, "m", f"{kind}.{name}"))
        self.lines.append(f"def {reader}(message{''.join(', ' + g for g in given)}):")
        self.lines.append(f"    m = message{path}")
        self.lines.append(self._construct(c, reads, record_tuple))
        if shared:
            # Table-once: the table fields read once (a tuple), and a view from its own fields and them.
            names = [name for name, _, _ in plan]
            table_names = [name for name in names if name in shared]
            self.lines.append(f"def {reader}_table(message):")
            self.lines.append(f"    m = message{path}")
            self.lines.append(f"    return ({', '.join(reads[names.index(name)] for name in table_names)},)")
            mixed = [
                f"table[{table_names.index(name)}]" if name in shared else read
                for name, read in zip(names, reads, strict=True)
            ]
            self.lines.append(f"def {reader}_own(message{''.join(', ' + g for g in given)}, table):")
            self.lines.append(f"    m = message{path}")
            self.lines.append(self._construct(c, mixed, record_tuple))

    # -- domain → bytes ------------------------------------------------------------------------
    #
    # The same record written as the bytes of its message (what SerializeToString gives), for the
    # referee's Updates: no message objects, and the shared (table) fields encoded once per step.
    # Wire types and shapes it does not write by hand raise _NoBytes: the codec then has no
    # ``view_bytes`` and its requests are built as messages and serialized.

    def vi(self, value: str) -> str:
        """An expression: the varint of ``value`` (an expression, evaluated once), a small one
        taken from the table rather than by a call."""
        n = self.fresh("n")
        return f"(_V[{n}] if 0 <= ({n} := {value}) < 16384 else _vl({n}))"

    @staticmethod
    def bytes_kind(field: descriptor.FieldDescriptor) -> str:
        if field.type in _VARINT_TYPES:
            return "varint"
        if field.type == _FD.TYPE_STRING:
            return "string"
        raise _NoBytes(field.full_name)

    def scalar_bytes(self, field: descriptor.FieldDescriptor, value: str, always: bool) -> str:
        """An expression: the encoded field holding ``value`` (a name), or ``b""`` for an unset one."""
        kind = self.bytes_kind(field)
        key = self.constant(tag(field.number, 0 if kind == "varint" else 2), "tag")
        expr = f"{key} + {self.vi(value)}" if kind == "varint" else f"_str({key}, {value})"
        return f"({expr})" if always else f"({expr} if {value} else b'')"

    def fields_bytes(self, message_type: descriptor.Descriptor, items: Sequence[Any], values: Sequence[str],
                     where: str) -> str:  # fmt: skip
        """An expression: a small message's fields (a positional tuple's items) encoded, as the
        protobuf writer does when each is assigned: a field with presence is always written."""
        names = self.positional(message_type, items, where)
        fields = [message_type.fields_by_name[name] for name in names]
        parts = [
            self.scalar_bytes(field, value, field.has_presence)
            for field, value in zip(fields, values, strict=True)
        ]
        return " + ".join(parts) if parts else "b''"

    def bytes_value(self, out: list[str], pad: str, annotation: Any, field: descriptor.FieldDescriptor,
                    value: str, target: str, where: str) -> None:  # fmt: skip
        """Statements appending the encoded ``message.<field>`` holding ``value`` to ``target``."""
        inner = _optional(annotation)
        key = self.constant(tag(field.number, 2), "tag")
        if field.is_repeated:
            args = _tuple_args(annotation)
            if args is None or len(args) != 2 or args[1] is not Ellipsis:
                raise TypeError(f"{where}: a repeated field needs a tuple[X, ...], got {annotation}")
            item = args[0]
            x, c = self.fresh("x"), self.fresh("c")
            if field.cpp_type != _FD.CPPTYPE_MESSAGE:
                if self.bytes_kind(field) == "varint":
                    if not field.is_packed:
                        raise _NoBytes(field.full_name)
                    out.append(f"{pad}if {value}:")
                    out.append(f"{pad}    {c} = _pk({value})")
                    out.append(f"{pad}    {target}.append({key} + {self.vi(f'len({c})')} + {c})")
                else:
                    out.append(f"{pad}for {x} in {value}:")
                    out.append(f"{pad}    {target}.append(_str({key}, {x}))")
                return
            sub = field.message_type
            item_args = _tuple_args(item)
            if _is_record(item):
                writer = self.bytes_nested(item, sub)
                out.append(f"{pad}for {x} in {value}:")
                out.append(f"{pad}    {c} = {writer}({x})")
                out.append(f"{pad}    {target}.append({key} + {self.vi(f'len({c})')} + {c})")
            elif item_args and len(item_args) == 2 and item_args[1] is Ellipsis:
                (only,) = self.only_repeated(sub, item_args[0], where)
                inner_field = sub.fields_by_name[only]
                if self.bytes_kind(inner_field) != "varint" or not inner_field.is_packed:
                    raise _NoBytes(inner_field.full_name)
                inner_key = self.constant(tag(inner_field.number, 2), "tag")
                empty = self.constant(tag(field.number, 2) + b"\0", "empty")
                p = self.fresh("p")
                out.append(f"{pad}for {x} in {value}:")
                out.append(f"{pad}    if {x}:")
                out.append(f"{pad}        {p} = _pk({x})")
                out.append(f"{pad}        {c} = {inner_key} + {self.vi(f'len({p})')} + {p}")
                out.append(f"{pad}        {target}.append({key} + {self.vi(f'len({c})')} + {c})")
                out.append(f"{pad}    else:")
                out.append(f"{pad}        {target}.append({empty})")
            elif item_args:
                parts = [self.fresh("p") for _ in item_args]
                expr = self.fields_bytes(sub, item_args, parts, where)
                out.append(f"{pad}for {', '.join(parts)}, in {value}:")
                out.append(f"{pad}    {c} = {expr}")
                out.append(f"{pad}    {target}.append({key} + {self.vi(f'len({c})')} + {c})")
            else:
                raise TypeError(f"{where}: no wire form for items of {annotation}")
            return
        if field.cpp_type == _FD.CPPTYPE_MESSAGE:
            shape = annotation if inner is None else inner
            v, c = self.fresh("v"), self.fresh("c")
            out.append(f"{pad}{v} = {value}")
            if inner is not None:
                out.append(f"{pad}if {v} is not None:")
                pad += "    "
            args = _tuple_args(shape)
            if _is_record(shape):
                out.append(f"{pad}{c} = {self.bytes_nested(shape, field.message_type)}({v})")
            elif args and Ellipsis not in args:
                parts = [self.fresh("p") for _ in args]
                out.append(f"{pad}{', '.join(parts)}, = {v}")
                out.append(f"{pad}{c} = {self.fields_bytes(field.message_type, args, parts, where)}")
            else:
                raise TypeError(f"{where}: no wire form for {annotation} as a message")
            out.append(f"{pad}{target}.append({key} + {self.vi(f'len({c})')} + {c})")
            return
        v = self.fresh("v")
        out.append(f"{pad}{v} = {value}")
        if inner is not None:
            out.append(f"{pad}if {v} is not None:")
            out.append(f"{pad}    {target}.append({self.scalar_bytes(field, v, True)})")
        elif field.has_presence:
            out.append(f"{pad}{target}.append({self.scalar_bytes(field, v, True)})")
        else:
            out.append(f"{pad}if {v}:")
            out.append(f"{pad}    {target}.append({self.scalar_bytes(field, v, True)})")

    def bytes_nested(self, cls: type, message_type: descriptor.Descriptor) -> str:
        """The bytes writer of a record inside another record's message."""
        key = (cls, message_type.full_name)
        if key not in self._bytes_nested:
            name = self.fresh(f"bytes_{cls.__name__}")
            self._bytes_nested[key] = name
            try:
                self.bytes_record(cls, message_type, name)
            except BaseException:
                del self._bytes_nested[key]
                raise
        return self._bytes_nested[key]

    def bytes_record(self, cls: type, message_type: descriptor.Descriptor, name: str, *,
                     given: Sequence[str] = (), shared: Sequence[str] = ()) -> None:  # fmt: skip
        """Define ``name(o)`` (with ``shared``: ``name(o, table)``), the bytes of a record's message:
        its fields in the order of their numbers, as the protobuf writer puts them. With
        ``shared`` the runs of shared fields are encoded once while their objects stay the same,
        and written only when ``table`` is true (Hello.table_once leaves them out)."""
        plan = self.plan(cls, message_type, given)
        numbers = sorted(f.number for f in message_type.fields)
        items: list[tuple[int, str, Any, descriptor.FieldDescriptor | Special]] = []
        for field_name, annotation, field in plan:
            if field is None:
                continue
            if isinstance(field, Special):
                own = sorted(message_type.fields_by_name[w].number for w in field.wire_fields)
                at = numbers.index(own[0]) if own else -1
                if not own or numbers[at : at + len(own)] != own:
                    raise _NoBytes(f"{cls.__name__}.{field_name}")  # its fields are not one run
                items.append((own[0], field_name, annotation, field))
            else:
                items.append((field.number, field_name, annotation, field))
        items.sort(key=lambda item: item[0])
        runs: list[tuple[bool, list[tuple[int, str, Any, descriptor.FieldDescriptor | Special]]]] = []
        for item in items:
            table = item[1] in shared
            if runs and runs[-1][0] == table:
                runs[-1][1].append(item)
            else:
                runs.append((table, [item]))
        record_tuple = not dataclasses.is_dataclass(cls)
        local = {field_name: f"o_{field_name}" for field_name, _, _ in plan}
        message = self.constant(message_class(message_type), "message")

        def write(out: list[str], pad: str, run: Sequence[Any], target: str) -> None:
            for _, field_name, annotation, field in run:
                if isinstance(field, Special):
                    hook, t = self.constant(field.to_wire, f"special_{field_name}"), self.fresh("t")
                    out.append(f"{pad}{t} = {message}()")
                    out.append(f"{pad}{hook}(o, {t})")
                    out.append(f"{pad}{target}.append({t}.SerializeToString())")
                else:
                    self.bytes_value(out, pad, annotation, field, local[field_name], target,
                                     f"{cls.__name__}.{field_name}")  # fmt: skip

        c = self.constant(cls, cls.__name__)
        body = [f"def {name}(o, table=True):" if shared else f"def {name}(o):"]
        body.append(f"    if o.__class__ is not {c}:")
        body.append(
            f"        raise WireError(f'no wire form for {{o.__class__.__name__}} as {cls.__name__}')"
        )
        if record_tuple:
            body.append(f"    {', '.join(local[field_name] for field_name, _, _ in plan)}, = o")
        else:
            body.extend(f"    {local[n]} = o.{n}" for n, _, _ in plan if n not in given)
        body.append("    b = []")
        tables = [run for table, run in runs if table]
        if tables:
            cell = self.constant([(*(_MISSING for _ in shared), None)], "shared")
            checks = " or ".join(f"{local[n]} is not c[{i}]" for i, n in enumerate(shared))
            body.append("    if table:")
            body.append(f"        c = {cell}[0]")
            body.append(f"        if {checks}:")
            done = []
            for run in tables:
                r = self.fresh("r")
                body.append(f"            {r} = []")
                write(body, "            ", run, r)
                done.append(f"b''.join({r})")
            body.append(f"            c = ({', '.join(local[n] for n in shared)}, {', '.join(done)},)")
            body.append(f"            {cell}[0] = c")
        at = len(shared)
        for table, run in runs:
            if table:
                body.append("    if table:")
                body.append(f"        b.append(c[{at}])")
                at += 1
            else:
                write(body, "    ", run, "b")
        body.append("    return b''.join(b)")
        self.lines.extend(body)

    @staticmethod
    def _construct(c: str, reads: Sequence[str], record_tuple: bool) -> str:
        if record_tuple:
            return f"    return _new({c}, ({', '.join(reads)},))"
        return f"    return {c}({', '.join(reads)})"


class Codec:
    """Converts one game's views and events, compiled from a declaration.

    ``field`` is the game's field in the ``view`` oneof of ``DecisionRequest`` and the ``payload``
    oneof of ``MatchEvent``; the messages it names are the view's and the events' wire types. The
    view's fields map to the view message's fields of the same name; each event type maps to the
    field of the event message's oneof named after it (``CardPlaced`` → ``card_placed``), whose
    message holds its fields by name. A view's ``decision`` comes from the request. ``names``
    maps a record field to a message field of another name, ``special`` converts a field by hand,
    ``event_fields`` names an event type's oneof field, and ``shared`` lists view fields that are
    the same objects for every seat of a step (their wire form is built once and copied).
    """

    def __init__(
        self,
        variants: Sequence[str],
        field: str,
        view: type,
        events: Sequence[type],
        *,
        shared: Sequence[str] = (),
        names: Mapping[type, Mapping[str, str]] | None = None,
        special: Mapping[type, Mapping[str, Special]] | None = None,
        event_fields: Mapping[type, str] | None = None,
        view_message: Any = None,
        event_message: Any = None,
        _twin: Codec | None = None,
    ) -> None:
        self.variants = tuple(variants)
        self.variant = self.variants[0]
        self.view_field = field
        self.view = view
        self.events = tuple(events)
        if _twin is not None:  # named(): not copy.copy, which a compiled class (referee.accel) refuses
            self._adopt(_twin)
            return
        compiler = _Compiler(names or {}, special or {})
        plugin = field == PLUGIN
        if plugin:
            if view_message is None or event_message is None:
                raise TypeError(f"a game in the {PLUGIN!r} field names its view_message and event_message")
            view_type = getattr(view_message, "DESCRIPTOR", view_message)
            event_type = getattr(event_message, "DESCRIPTOR", event_message)
            view_path, event_path = "", ""
        else:
            request, event = game_pb2.DecisionRequest.DESCRIPTOR, game_pb2.MatchEvent.DESCRIPTOR
            for message, oneof_name in ((request, "view"), (event, "payload")):
                if field not in {f.name for f in message.oneofs_by_name[oneof_name].fields}:
                    raise TypeError(f"{message.full_name}.{oneof_name} has no field {field!r} (game.proto)")
            view_type = game_pb2.DecisionRequest.DESCRIPTOR.fields_by_name[field].message_type
            event_type = game_pb2.MatchEvent.DESCRIPTOR.fields_by_name[field].message_type
            view_path, event_path = f".{field}", f".{field}"
        self.keys = (
            (f"{PLUGIN}:{view_type.full_name}", f"{PLUGIN}:{event_type.full_name}") if plugin else (field,)
        )
        """What :func:`view_from_wire` and :func:`event_from_wire` find this codec by."""
        given = ("decision",) if "decision" in {name for name, _ in _record_fields(view)} else ()
        compiler.record(view, view_type, "view_to_wire", "view_from_wire", path=view_path, given=given,
                        shared=shared)  # fmt: skip
        encodes = not plugin
        if encodes:
            try:
                compiler.bytes_record(view, view_type, "view_bytes", given=given, shared=shared)
            except _NoBytes:
                encodes = False
        if len(event_type.oneofs) != 1:
            raise TypeError(f"{event_type.full_name} must hold its events in one oneof")
        (oneof,) = event_type.oneofs
        self.oneof = oneof.name
        wanted = {f.name: f for f in oneof.fields}
        fields: dict[type, str] = {}
        for cls in self.events:
            name = (event_fields or {}).get(cls) or _camel_to_snake(cls.__name__)
            if name not in wanted:
                raise TypeError(
                    f"event {cls.__name__} has no field {name!r} in {event_type.full_name}.{oneof.name}"
                )
            if name in fields.values():
                raise TypeError(f"two event types for {event_type.full_name}.{name}")
            fields[cls] = name
        if set(fields.values()) != set(wanted):
            raise TypeError(f"{event_type.full_name}.{oneof.name} holds events not declared: "
                            f"{sorted(set(wanted) - set(fields.values()))}")  # fmt: skip
        for cls, name in fields.items():
            compiler.record(cls, wanted[name].message_type, f"write_{name}", f"read_{name}",
                            path=f"{event_path}.{name}", checked=False)  # fmt: skip
        scope = compiler.build()
        self.source: str = scope["__source__"]
        """The generated converters, for reading."""
        self.view_to_wire: Callable[[View, game_pb2.DecisionRequest], None] = scope["view_to_wire"]
        """Write a seat's view into a request (its ``view`` oneof)."""
        read_view = scope["view_from_wire"]
        self.view_from_wire: Callable[[game_pb2.DecisionRequest, Decision], View] = (
            read_view if given else lambda message, decision: read_view(message)
        )
        """The view a request holds, with the decision it asks for."""
        self.view_to_wire_own: Callable[[View, game_pb2.DecisionRequest], None] | None = None
        """Write a seat's view without its table (``shared``) fields: ``None`` for a game without
        them, or a plugin game (Hello.table_once then sends every view whole)."""
        self.view_table: Callable[[game_pb2.DecisionRequest], tuple[Any, ...]] | None = None
        """The table fields of a request's view, read once for every view that names it."""
        self.view_with_table: Callable[[game_pb2.DecisionRequest, Decision, tuple[Any, ...]], View] | None = (
            None
        )
        """The view of a request whose table fields are the given ones (:attr:`view_table`)."""
        if shared and not plugin:
            own_reader = scope["view_from_wire_own"]
            self.view_to_wire_own = scope["view_to_wire_own"]
            self.view_table = scope["view_from_wire_table"]
            self.view_with_table = (
                own_reader if given else lambda message, decision, table: own_reader(message, table)
            )
        self.view_bytes: Callable[..., bytes] | None = scope["view_bytes"] if encodes else None
        """The bytes of a seat's view message (``view_bytes(view)``; with table fields,
        ``view_bytes(view, table)``, ``table=False`` leaving them out): what ``view_to_wire`` writes,
        serialized. ``None`` for a game whose view it does not encode (a plugin game's, one with a
        wire type or a special field it cannot place): its requests are built as messages."""
        self.view_tag = (
            b"" if plugin else tag(game_pb2.DecisionRequest.DESCRIPTOR.fields_by_name[field].number, 2)
        )
        """The key of the game's field in ``DecisionRequest``'s ``view`` oneof."""
        self._writers: dict[type, Callable[[Event, game_pb2.MatchEvent], None]] = {
            cls: scope[f"write_{name}"] for cls, name in fields.items()
        }
        self._readers: dict[str, Callable[[Any], Event]] = {
            name: scope[f"read_{name}"] for name in fields.values()
        }
        self._event_class: Any = None
        if plugin:
            self._pack(message_class(view_type), message_class(event_type))

    def _pack(self, view_class: Any, event_class: Any) -> None:
        """A plugin game's converters: its own messages, packed into the ``plugin`` Any fields."""
        write_view, read_view = self.view_to_wire, self.view_from_wire

        def view_to_wire(view: View, out: game_pb2.DecisionRequest) -> None:
            inner = view_class()
            write_view(view, inner)
            out.plugin.Pack(inner)

        def view_from_wire(message: game_pb2.DecisionRequest, decision: Decision) -> View:
            inner = view_class()
            if not message.plugin.Unpack(inner):
                raise WireError(f"request {message.id} holds no {view_class.DESCRIPTOR.full_name}")
            return read_view(inner, decision)

        def packed(write: Callable[[Event, Any], None]) -> Callable[[Event, game_pb2.MatchEvent], None]:
            def event_to_wire(event: Event, out: game_pb2.MatchEvent) -> None:
                inner = event_class()
                write(event, inner)
                out.plugin.Pack(inner)

            return event_to_wire

        self.view_to_wire, self.view_from_wire = view_to_wire, view_from_wire
        self._writers = {cls: packed(write) for cls, write in self._writers.items()}
        self._event_class = event_class

    def _adopt(self, twin: Codec) -> None:
        """Take ``twin``'s converters as they are (:meth:`named`)."""
        self.keys = twin.keys
        self.oneof = twin.oneof
        self.source = twin.source
        self.view_to_wire, self.view_from_wire = twin.view_to_wire, twin.view_from_wire
        self.view_to_wire_own, self.view_table = twin.view_to_wire_own, twin.view_table
        self.view_with_table, self.view_bytes = twin.view_with_table, twin.view_bytes
        self.view_tag = twin.view_tag
        self._writers, self._readers = twin._writers, twin._readers
        self._event_class = twin._event_class

    def named(self, variant: str) -> Codec:
        """This codec as the codec of one of its variants (the same converters)."""
        twin = Codec(self.variants, self.view_field, self.view, self.events, _twin=self)
        twin.variant = variant
        return twin

    def event_to_wire(self, event: Event, out: game_pb2.MatchEvent) -> None:
        """Write an event into ``out`` (its ``payload`` oneof)."""
        writer = self._writers.get(type(event))
        if writer is None:
            raise WireError(f"no wire form for {self.variant} event {type(event).__name__}")
        writer(event, out)

    def events_to_wire(self, match_id: str, step: int, events: Sequence[Event]) -> list[game_pb2.MatchEvent]:
        """One message for each of a step's events."""
        writers = self._writers
        messages = []
        for event in events:
            writer = writers.get(type(event))
            if writer is None:
                raise WireError(f"no wire form for {self.variant} event {type(event).__name__}")
            message = game_pb2.MatchEvent(match_id=match_id, step=step)
            writer(event, message)
            messages.append(message)
        return messages

    def event_from_wire(self, message: game_pb2.MatchEvent) -> Event:
        """The event a message holds."""
        if self._event_class is not None:
            inner = self._event_class()
            if not message.plugin.Unpack(inner):
                raise WireError(f"event of {self.variant} holds no {inner.DESCRIPTOR.full_name}")
            message = inner
            which = inner.WhichOneof(self.oneof)
        else:
            which = getattr(message, self.view_field).WhichOneof(self.oneof)
        reader = self._readers.get(which or "")
        if reader is None:
            raise WireError(f"unknown {self.variant} event {which!r}")
        return reader(message)


# -- the codecs by variant -------------------------------------------------------------------

CODECS: dict[str, Codec] = {}
"""Codecs by variant name."""

_CODEC_BY_FIELD: dict[str, Codec] = {}


def register(game: Codec) -> None:
    """Make a game's codec the codec of each of its variants."""
    taken = [variant for variant in game.variants if variant in CODECS]
    if taken:
        raise ValueError(f"variant {taken[0]!r} has a codec already")
    for variant in game.variants:
        CODECS[variant] = game.named(variant)
    for key in game.keys:
        _CODEC_BY_FIELD.setdefault(key, CODECS[game.variants[0]])


def _key(field: str | None, message: Any) -> str:
    """What a received view or event's codec is registered by: its oneof field, or for a plugin
    game the message its Any packs (the type URL's last part)."""
    if field is None and message.HasField(PLUGIN):
        return f"{PLUGIN}:{message.plugin.type_url.rpartition('/')[2]}"
    return field or ""


_loaded: set[str] = set()
"""The games whose codec modules were imported (or failed to)."""


def load_codecs() -> None:
    """Import every installed game's codec module (its ``GameSpec.codec``), which registers it,
    once per game. A game whose codec fails to load says so in one line and is not served."""
    for game in installed_games():
        _load_codec(game)


def _load_codec(game: GameSpec) -> None:
    if game.name in _loaded:
        return
    _loaded.add(game.name)
    if not game.codec:
        return
    try:
        importlib.import_module(game.codec)
    except Exception as error:  # one broken game must not stop the others
        message = str(error).splitlines()[0] if str(error) else ""
        _log.warning("game %r: its codec %s failed to load: %s: %s", game.name, game.codec,
                     type(error).__name__, message)  # fmt: skip


def _load_for(key: str) -> Codec | None:
    """The codec registered by ``key`` once every installed game's codec is loaded."""
    load_codecs()
    return _CODEC_BY_FIELD.get(key)


def codec(variant: str) -> Codec:
    """The codec of a variant; a variant without one cannot be played over the wire yet.

    Only the variant's own game is loaded when its spec declares the variant's name: a bot
    process that plays classic never imports another game's codec or engine.
    """
    found = CODECS.get(variant)
    if found is not None:
        return found
    game = named_game(variant)
    if game is not None:
        _load_codec(game)
    if variant not in CODECS:
        load_codecs()
    try:
        return CODECS[variant]
    except KeyError:
        raise WireError(f"variant {variant!r} has no wire codec yet") from None


# -- requests, events, starts and overs ------------------------------------------------------


def request_to_wire(
    request_id: int,
    match_id: str,
    variant: str,
    decision: Decision,
    view: View,
    deadline_ms: int,
    bank_ms: int,
    out: game_pb2.DecisionRequest,
    table_from: int = 0,
) -> bool:
    """Write a decision request with the seat's view into ``out``.

    With ``table_from`` (the id of a request of the same step in the same Update, for a
    connection that asked for ``table_once``), the view's table fields are left out and
    ``out.table_from`` names that request, when the game's view has table fields. Returns
    whether the table was left out.
    """
    out.id = request_id
    out.match_id = match_id
    out.seat = decision.seat
    out.kind = KIND_TO_WIRE[decision.kind]  # type: ignore[assignment]
    options = decision.options
    if options and isinstance(options[0], tuple):
        for option in options:
            out.tuple_options.add().values.extend(option)
    else:
        out.options.extend(options)
    out.deadline_ms = deadline_ms
    out.time_bank_ms = bank_ms
    game = codec(variant)
    if table_from and game.view_to_wire_own is not None:
        game.view_to_wire_own(view, out)
        out.table_from = table_from
        return True
    game.view_to_wire(view, out)
    return False


_KIND_BYTES: dict[DecisionKind, bytes] = {
    kind: b"\x20" + varint(value) for kind, value in KIND_TO_WIRE.items()
}
"""``DecisionRequest.kind`` (field 4) of each decision kind, encoded."""
_NO_TUPLE = b"\x32\x00"
_times: dict[tuple[int, int], bytes] = {}
"""``deadline_ms`` and ``time_bank_ms`` (fields 7 and 8), encoded, by their values (a bounded cache)."""


def _times_bytes(deadline_ms: int, bank_ms: int) -> bytes:
    times = _times.get((deadline_ms, bank_ms))
    if times is None:
        if len(_times) >= 4096:
            _times.clear()
        times = _times[(deadline_ms, bank_ms)] = (b"\x38" + varint(deadline_ms) if deadline_ms else b"") + (
            b"\x40" + varint(bank_ms) if bank_ms else b""
        )
    return times


class RequestWriter:
    """Writes the decision requests of one match as bytes: what :func:`request_bytes` returns.

    The match's codec and its encoded id are looked up once, when the match starts on a
    connection, not for every request (:class:`referee.server.connection.Connection` keeps one
    per match).
    """

    __slots__ = ("_encode", "_game", "_key", "_own", "_tag", "match_id", "variant")

    def __init__(self, match_id: str, variant: str) -> None:
        self.match_id = match_id
        self.variant = variant
        game = self._game = codec(variant)
        self._encode = game.view_bytes
        self._own = game.view_to_wire_own is not None
        self._tag = game.view_tag
        data = match_id.encode()
        self._key = b"\x12" + varint(len(data)) + data if data else b""

    def __call__(
        self,
        request_id: int,
        decision: Decision,
        view: View,
        deadline_ms: int,
        bank_ms: int,
        table_from: int = 0,
    ) -> bytes:
        """The bytes of one request (see :func:`request_bytes`)."""
        encode = self._encode
        if encode is None:
            out = game_pb2.DecisionRequest()
            request_to_wire(
                request_id, self.match_id, self.variant, decision, view, deadline_ms, bank_ms, out, table_from
            )
            data: bytes = out.SerializeToString()
            return data
        seat = decision.seat
        parts = [
            (b"\x08" + (_VARINTS[request_id] if request_id < 16384 else _varint_long(request_id)))
            if request_id
            else b"",
            self._key,
            b"\x18" + varint(seat) if seat else b"",
            _KIND_BYTES[decision.kind],
        ]
        options = decision.options
        if options and isinstance(options[0], tuple):
            for option in options:
                if option:
                    values = packed(option)  # type: ignore[arg-type]
                    item = b"\x0a" + varint(len(values)) + values
                    parts.append(b"\x32" + varint(len(item)) + item)
                else:
                    parts.append(_NO_TUPLE)
        elif options:
            values = packed(options)  # type: ignore[arg-type]
            parts.append(b"\x2a" + varint(len(values)) + values)
        times = _times.get((deadline_ms, bank_ms))
        parts.append(times if times is not None else _times_bytes(deadline_ms, bank_ms))
        if table_from and self._own:
            body = encode(view, False)
            parts.append(self._tag + varint(len(body)) + body)
            parts.append(b"\x80\x01" + varint(table_from))
        else:
            body = encode(view)
            parts.append(self._tag + varint(len(body)) + body)
        return b"".join(parts)


def request_bytes(
    request_id: int,
    match_id: str,
    variant: str,
    decision: Decision,
    view: View,
    deadline_ms: int,
    bank_ms: int,
    table_from: int = 0,
) -> bytes:
    """The bytes of the request :func:`request_to_wire` writes (its ``SerializeToString()``).

    Written by hand from the game's compiled :attr:`Codec.view_bytes` (:class:`RequestWriter`):
    no message object, and the table of a step encoded once for all its seats. A game without
    ``view_bytes`` gets its request built as a message and serialized.
    """
    return RequestWriter(match_id, variant)(request_id, decision, view, deadline_ms, bank_ms, table_from)


def decision_from_wire(message: game_pb2.DecisionRequest) -> Decision:
    """The decision a request asks for, with its legal options."""
    kind = KIND_FROM_WIRE.get(message.kind)
    if kind is None:
        raise WireError(f"unknown decision kind {message.kind}")
    options: tuple[Action, ...]
    if message.tuple_options:
        options = tuple(tuple(o.values) for o in message.tuple_options)
    else:
        options = tuple(message.options)
    return Decision(message.seat, kind, options)


def view_from_wire(message: game_pb2.DecisionRequest) -> View:
    """The typed view of a request, its decision included."""
    field = message.WhichOneof("view")
    codec_ = _CODEC_BY_FIELD.get(_key(field, message)) or _load_for(_key(field, message))
    if codec_ is None:
        raise WireError(f"request {message.id} holds no view this SDK knows ({field!r})")
    return codec_.view_from_wire(message, decision_from_wire(message))


class UpdateViews:
    """The views of one Update's requests, for a connection that asked for ``table_once``.

    A request with ``table_from`` takes its table fields from the request it names (an earlier
    one of the same Update); each table is read once, and every view of it shares its values.
    Without ``table_from`` a request reads as :func:`view_from_wire` reads it.
    """

    def __init__(self, requests: Sequence[game_pb2.DecisionRequest]) -> None:
        self._named: dict[int, game_pb2.DecisionRequest] = {}
        self._tables: dict[int, tuple[Any, ...]] = {}
        wanted = {r.table_from for r in requests if r.table_from}
        if wanted:
            self._named = {r.id: r for r in requests if r.id in wanted}

    def view(self, message: game_pb2.DecisionRequest) -> View:
        """The typed view of ``message``, its decision included."""
        source = message.table_from or (message.id if message.id in self._named else 0)
        if not source:
            return view_from_wire(message)
        holder = self._named.get(source)
        if holder is None:
            raise WireError(f"request {message.id} takes its table from request {source}, not in this Update")
        field = message.WhichOneof("view")
        game = _CODEC_BY_FIELD.get(_key(field, message)) or _load_for(_key(field, message))
        if game is None or game.view_table is None or game.view_with_table is None:
            raise WireError(f"request {message.id} holds no view with a table this SDK knows ({field!r})")
        table = self._tables.get(source)
        if table is None:
            table = self._tables[source] = game.view_table(holder)
        return game.view_with_table(message, decision_from_wire(message), table)


_last_events: tuple[Sequence[Event], list[game_pb2.MatchEvent]] | None = None


def events_to_wire(variant: str, match_id: str, step: int, events: Sequence[Event], out: Any) -> None:
    """Append the wire form of ``events`` to the repeated field ``out``.

    A step's events go to every connection in the match: they are converted once (for the
    same ``events`` object) and copied.
    """
    global _last_events
    last = _last_events  # once: a referee on another thread may replace it meanwhile
    if last is None or last[0] is not events:
        last = _last_events = (events, codec(variant).events_to_wire(match_id, step, events))
    out.extend(last[1])


_last_event_bytes: tuple[Sequence[Event], list[bytes]] | None = None


def events_bytes(variant: str, match_id: str, step: int, events: Sequence[Event]) -> list[bytes]:
    """The bytes of each message :func:`events_to_wire` writes for a step's events; encoded once
    for every connection of the match (for the same ``events`` object)."""
    global _last_event_bytes
    last = _last_event_bytes  # once: a referee on another thread may replace it meanwhile
    if last is None or last[0] is not events:
        messages = codec(variant).events_to_wire(match_id, step, events)
        last = _last_event_bytes = (events, [message.SerializeToString() for message in messages])
    return last[1]


def event_from_wire(message: game_pb2.MatchEvent) -> Event:
    """A domain event from the wire."""
    field = message.WhichOneof("payload")
    codec_ = _CODEC_BY_FIELD.get(_key(field, message)) or _load_for(_key(field, message))
    if codec_ is None:
        raise WireError(f"event of unknown variant payload {field!r}")
    return codec_.event_from_wire(message)


_last_config: tuple[Any, str] = (None, "")
"""The last config :func:`start_to_wire` wrote, and its JSON (configs are never mutated)."""


def start_to_wire(
    match_id: str,
    seat: int,
    variant: str,
    config: dict[str, Any],
    seat_seed: int,
    seat_names: Sequence[str],
    out: referee_pb2.GameStart,
) -> None:
    """Write a game start into ``out``."""
    out.match_id = match_id
    out.seat = seat
    out.variant = variant
    global _last_config
    last = _last_config  # once: a referee on another thread may replace it meanwhile
    if last[0] is not config:  # a match's seats start one after another: its config once
        last = _last_config = (config, json.dumps(config, sort_keys=True))
    out.config_json = last[1]
    out.seat_seed = seat_seed
    out.seat_names.extend(seat_names)


def start_bytes(
    match_id: str,
    seat: int,
    variant: str,
    config: dict[str, Any],
    seat_seed: int,
    seat_names: Sequence[str],
) -> bytes:
    """The bytes of the ``GameStart`` :func:`start_to_wire` writes (its ``SerializeToString()``);
    the config's JSON encoded once for every start of the same config object (a driver hands
    every match of the same config one object: ``referee.driver.match``)."""
    global _last_config
    last = _last_config  # once: a referee on another thread may replace it meanwhile
    if last[0] is not config:
        last = _last_config = (config, json.dumps(config, sort_keys=True))
    return b"".join(
        [
            _string(b"\x0a", match_id) if match_id else b"",
            b"\x10" + varint(seat) if seat else b"",
            _string(b"\x1a", variant) if variant else b"",
            _string(b"\x22", last[1]) if last[1] else b"",
            b"\x28" + varint(seat_seed) if seat_seed else b"",
            *[_string(b"\x32", name) for name in seat_names],
        ]
    )


def over_bytes(match_id: str, seat: int, outcome: Outcome) -> bytes:
    """The bytes of the ``GameOver`` :func:`over_to_wire` writes (its ``SerializeToString()``)."""
    parts = [_string(b"\x0a", match_id) if match_id else b"", b"\x10" + varint(seat) if seat else b""]
    for key, values in ((b"\x1a", outcome.scores), (b"\x22", outcome.ranks)):
        if values:
            data = b"".join([varint(value) for value in values])
            parts.append(key + varint(len(data)) + data)
    termination = outcome.termination.value
    if termination:
        parts.append(_string(b"\x2a", termination))
    return b"".join(parts)


def over_to_wire(match_id: str, seat: int, outcome: Outcome, out: referee_pb2.GameOver) -> None:
    """Write a game over into ``out``."""
    out.match_id = match_id
    out.seat = seat
    out.scores.extend(outcome.scores)
    out.ranks.extend(outcome.ranks)
    out.termination = outcome.termination.value


_UPDATE_FIELDS = (b"\x0a", b"\x12", b"\x1a", b"\x22", b"\x2a")
"""The keys of ``Update.starts``, ``events``, ``requests``, ``overs`` and ``faults`` (fields 1–5)."""


def update_bytes(
    starts: Sequence[bytes],
    events: Sequence[bytes],
    requests: Sequence[bytes],
    overs: Sequence[bytes],
    faults: Sequence[bytes],
) -> bytes:
    """The bytes of ``RefereeMessage{update{…}}`` holding these messages, each given as its bytes
    (``SerializeToString()``, :func:`request_bytes`, :func:`events_bytes`), in this order."""
    parts: list[bytes] = []
    for key, messages in zip(_UPDATE_FIELDS, (starts, events, requests, overs, faults), strict=True):
        for message in messages:
            parts.append(key + varint(len(message)) + message)
    body = b"".join(parts)
    return b"\x12" + varint(len(body)) + body


def outcome_from_wire(message: referee_pb2.GameOver) -> Outcome:
    """The outcome a game-over message announces."""
    return Outcome(tuple(message.scores), tuple(message.ranks), Termination(message.termination))


FAULT_TO_WIRE: dict[FaultKind, int] = {
    FaultKind.TIMEOUT: game_pb2.FAULT_KIND_TIMEOUT,
    FaultKind.CRASH: game_pb2.FAULT_KIND_CRASH,
    FaultKind.DISCONNECT: game_pb2.FAULT_KIND_DISCONNECT,
    FaultKind.ILLEGAL: game_pb2.FAULT_KIND_ILLEGAL,
    FaultKind.PROTOCOL: game_pb2.FAULT_KIND_PROTOCOL,
    FaultKind.EXCEPTION: game_pb2.FAULT_KIND_EXCEPTION,
}
FAULT_FROM_WIRE: dict[int, FaultKind] = {v: k for k, v in FAULT_TO_WIRE.items()}


def fault_notice_to_wire(notice: FaultNotice, out: referee_pb2.FaultNotice) -> None:
    """Write a fault notice into ``out``."""
    out.kind = FAULT_TO_WIRE[notice.kind]  # type: ignore[assignment]
    out.request_id = notice.request_id
    out.match_id = notice.match_id
    out.seat = notice.seat
    out.reason = notice.reason


def fault_notice_from_wire(message: referee_pb2.FaultNotice) -> FaultNotice:
    """A fault notice from the wire (an unknown kind reads as a protocol fault)."""
    kind = FAULT_FROM_WIRE.get(message.kind, FaultKind.PROTOCOL)
    return FaultNotice(kind, message.match_id, message.seat, message.request_id, message.reason)


STATUS_TO_WIRE: dict[str, int] = {
    "waiting": game_pb2.MATCH_STATUS_WAITING,
    "running": game_pb2.MATCH_STATUS_RUNNING,
    "finished": game_pb2.MATCH_STATUS_FINISHED,
    "aborted": game_pb2.MATCH_STATUS_ABORTED,
}
STATUS_FROM_WIRE: dict[int, str] = {v: k for k, v in STATUS_TO_WIRE.items()}


def seat_result_to_wire(
    seat: int,
    entrant: str,
    score: int,
    rank: int,
    faults: dict[FaultKind, int],
    *,
    defaulted: int,
    decisions: int,
    forfeited: bool,
    think_ms: int,
    out: game_pb2.SeatResult,
    reasons: dict[tuple[FaultKind, str], int] | None = None,
) -> None:
    """Write one seat's result into ``out``."""
    out.seat = seat
    out.entrant = entrant
    out.score = score
    out.rank = rank
    for kind, count in sorted(faults.items()):
        out.faults.add(kind=FAULT_TO_WIRE[FaultKind(kind)], count=count)
    for (kind, reason), count in (reasons or {}).items():
        out.reasons.add(kind=FAULT_TO_WIRE[kind], reason=reason, count=count)
    out.defaulted = defaulted
    out.decisions = decisions
    out.forfeited = forfeited
    out.think_ms = think_ms


def seat_faults_from_wire(message: game_pb2.SeatResult) -> dict[FaultKind, int]:
    """A seat result's faults by kind (a :class:`FaultKind` is its name as a string)."""
    return {FAULT_FROM_WIRE[f.kind]: f.count for f in message.faults if f.kind in FAULT_FROM_WIRE}


def seat_reasons_from_wire(message: game_pb2.SeatResult) -> list[tuple[FaultKind, str, int]]:
    """A seat result's fault reasons: (kind, reason, count)."""
    return [
        (FAULT_FROM_WIRE[r.kind], r.reason, r.count) for r in message.reasons if r.kind in FAULT_FROM_WIRE
    ]
