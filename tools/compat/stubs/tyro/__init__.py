"""Stand-in for tyro (not installed here): ``tyro.cli(Args)`` builds the dataclass from the
command line, which is all cleanrl's programs ask of it. Flags are the fields' names with
hyphens or underscores (``--total-timesteps 2048``, ``--env_id=Pendulum-v1``); a bool field
takes ``--flag``/``--no-flag`` or ``--flag False``. No help text, subcommands or nesting."""
import dataclasses
import sys
import typing


def _convert(text, kind):
    if kind is bool:
        if text.lower() not in ("true", "false", "1", "0"):
            raise SystemExit(f"tyro stand-in: expected True/False, got {text!r}")
        return text.lower() in ("true", "1")
    if kind in (int, float, str):
        return kind(text)
    return text   # Optional/unions: kept as given


def cli(cls, args=None):
    argv = list(sys.argv[1:] if args is None else args)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    i = 0
    while i < len(argv):
        flag = argv[i]
        if not flag.startswith("--"):
            raise SystemExit(f"tyro stand-in: unexpected argument {flag!r}")
        name, eq, text = flag[2:].partition("=")
        name = name.replace("-", "_")
        negated = name.startswith("no_") and name[3:] in fields and name not in fields
        if negated:
            name = name[3:]
        if name not in fields:
            raise SystemExit(f"tyro stand-in: unknown flag {flag!r} for {cls.__name__}")
        kind = hints.get(name)
        if kind is bool and not eq and (i + 1 == len(argv) or argv[i + 1].startswith("--")):
            values[name] = not negated
        else:
            if not eq:
                i += 1
                text = argv[i]
            values[name] = _convert(text, kind)
        i += 1
    return cls(**values)
