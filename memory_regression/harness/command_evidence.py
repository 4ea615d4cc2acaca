"""What a store's commands (:mod:`.store_commands`) show of how it works, in words a diagnosis can use.

Each connection's commands are cut into :class:`Step` s, what the server ran as one: a MULTI/EXEC
transaction, a script with the commands it ran, or one command. On those steps:

- :func:`trim_placement`: whether the store trims in the step that adds the message (one
  transaction, one script, one ``XADD ... MAXLEN``), or in a step of its own after it, where a
  reader between the two sees too many;
- :func:`read_then_write`: whether it reads a key and later replaces it whole (GET, then SET) in
  another step, unwatched, with a message in the write, where appends that overlap overwrite each
  other (a lost update); :func:`written_by_several`: whether several connections write messages
  under one key, each replacing the last;
- :func:`listing`: the commands of the store's last calls, for a failure's details (bounded).

A diagnosis names a mechanism only when these show it; without a log it lists the possible causes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from .store_commands import SCRIPT_COMMANDS, Call, Command, CommandLog

# commands that add a message to a key; those that cut a key down to a window; reads of a whole
# value; writes that replace a whole value
ADDS = frozenset({"RPUSH", "LPUSH", "RPUSHX", "LPUSHX", "LINSERT", "XADD", "ZADD", "HSET", "HMSET", "HSETNX", "SADD",
                  "SET", "SETEX", "PSETEX", "MSET", "APPEND", "JSON.SET", "JSON.ARRAPPEND", "JSON.ARRINSERT",
                  "JSON.MERGE"})
TRIMS = frozenset({"LTRIM", "ZREMRANGEBYRANK", "ZREMRANGEBYSCORE", "ZREMRANGEBYLEX", "ZPOPMIN", "ZPOPMAX", "LPOP",
                   "RPOP", "XTRIM", "XDEL", "JSON.ARRTRIM", "JSON.ARRPOP", "LREM", "ZREM", "HDEL"})
READS = frozenset({"GET", "LRANGE", "ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "HGETALL", "HGET", "HMGET", "JSON.GET",
                   "XRANGE", "XREVRANGE", "SMEMBERS", "MGET", "LINDEX"})
REPLACES = frozenset({"SET", "SETEX", "PSETEX", "MSET", "JSON.SET", "DEL", "UNLINK", "RENAME", "HSET", "HMSET"})
STREAM_TRIM_OPTIONS = frozenset({"MAXLEN", "MINID"})
HANDSHAKES = frozenset({"HELLO", "AUTH", "SELECT", "CLIENT", "PING"})   # a connection's, not a call's
SHOWN_ARGS = 4          # arguments of a command shown, after its name
SHOWN_WIDTH = 40        # characters of an argument shown
SHOWN_CALLS = 4         # the store's last calls listed
SHOWN_STEPS = 8         # steps of a call listed
SHOWN_NAMES = 12        # command names counted in the listing


@dataclass(frozen=True)
class Step:
    """What the server ran as one for one connection: ``kind`` "transaction" (MULTI ... EXEC),
    "script" (its call and the commands it ran) or "command"."""

    kind: str
    commands: tuple[Command, ...]

    def names(self) -> list[str]:
        return [c.name for c in self.commands if c.name not in ("MULTI", "EXEC")]

    def adds(self) -> bool:
        return any(name in ADDS for name in self.names())

    def trims(self) -> bool:
        return any(c.name in TRIMS or (c.name == "XADD" and _stream_trim(c)) for c in self.commands)

    def keys_written(self) -> set[str]:
        """The keys the step replaced whole (a write only where the key is absent, SET ... NX, replaces none)."""
        return {c.args[1] for c in self.commands if c.name in REPLACES and len(c.args) > 1 and not _if_absent(c)}

    def holds(self, texts: frozenset[str]) -> bool:
        """Whether what the step sent holds one of ``texts`` (a message's content), as sent."""
        return any(_holds(command, texts) for command in self.commands)

    def text(self) -> str:
        if self.kind == "command":
            return shown_command(self.commands[0])
        shown = [shown_command(c) for c in self.commands if c.name not in ("MULTI", "EXEC")]
        if self.kind == "transaction":
            return f"MULTI: {', '.join(shown)}; EXEC"
        return f"{shown[0]} [{', '.join(shown[1:]) or 'no command'}]"


def _if_absent(command: Command) -> bool:
    """A write that leaves a key that exists as it is: SET ... NX, JSON.SET ... NX."""
    options = command.args[3:] if command.name == "SET" else command.args[4:] if command.name == "JSON.SET" else ()
    return any(option.upper() == "NX" for option in options)


def _holds(command: Command, texts: frozenset[str]) -> bool:
    return any(text in argument for argument in command.args[2:] for text in texts)


def _stream_trim(command: Command) -> bool:
    return any(arg.upper() in STREAM_TRIM_OPTIONS for arg in command.args[2:4])


def shown_command(command: Command) -> str:
    """A command as a listing shows it: its name and first arguments, each cut short."""
    args = [_cut(arg) for arg in command.args[1:1 + SHOWN_ARGS]]
    more = len(command.args) - 1 - SHOWN_ARGS
    return " ".join([command.name, *args, *([f"(+{more})"] if more > 0 else [])])


def _cut(arg: str) -> str:
    arg = arg.replace("\n", "\\n")
    shown = arg if len(arg) <= SHOWN_WIDTH else arg[:SHOWN_WIDTH - 1] + "…"
    return repr(shown) if (" " in shown or not shown) else shown


def steps(commands: Iterable[Command]) -> list[Step]:
    """Each connection's commands as the steps the server ran them in, in the order they began."""
    done: list[tuple[float, Step]] = []
    open_: dict[str, tuple[str, list[Command]]] = {}

    def close(client: str) -> None:
        kind, held = open_.pop(client)
        done.append((held[0].time, Step(kind, tuple(held))))
    for command in commands:
        client, name = command.client, command.name
        kind = open_.get(client, ("", []))[0]
        if kind == "transaction":
            open_[client][1].append(command)
            if name in ("EXEC", "DISCARD"):
                close(client)
            continue
        if kind == "script" and command.scripted:
            open_[client][1].append(command)
            continue
        if kind:
            close(client)
        if name == "MULTI":
            open_[client] = ("transaction", [command])
        elif name in SCRIPT_COMMANDS:
            open_[client] = ("script", [command])
        else:
            done.append((command.time, Step("command", (command,))))
    for client in list(open_):
        close(client)
    return [step for _, step in sorted(done, key=lambda pair: pair[0])]


@dataclass(frozen=True)
class Placement:
    """Where the store's trim runs: ``together`` (in the step that adds: one transaction, script or
    command) or not, shown by ``example`` (the steps, in words)."""

    together: bool
    example: str


def trim_placement(commands: Iterable[Command]) -> Placement | None:
    """Whether every trim ran in the step that added (``together``), or the first that did not, with the
    last step that added to its key before it (on any connection: a pool spreads one call's commands over
    several, and other calls' commands come between, so nothing is said of what ran between the two);
    None when the store trimmed nothing."""
    together, pushed = None, {}   # key -> the last step that added to it
    for step in steps(commands):
        if step.trims() and step.adds():
            together = together or Placement(True, step.text())
        elif step.trims():
            push = next((pushed[key] for key in _keys(step) if key in pushed), None)
            return Placement(False, f"{push.text()} and {step.text()}" if push else step.text())
        if step.adds():
            pushed.update(dict.fromkeys(_keys(step), step))
    return together


def _keys(step: Step) -> list[str]:
    """The keys a step's commands name first (a script's: those its commands name)."""
    return [c.args[1] for c in step.commands if len(c.args) > 1 and c.name not in SCRIPT_COMMANDS | {"MULTI", "EXEC"}]


def read_then_write(commands: Iterable[Command], texts: frozenset[str]) -> str | None:
    """A key the store read in one step and replaced whole in a later step of the same connection,
    unwatched (no WATCH of it before the read, through the write's EXEC), with a message's content
    (one of ``texts``) in what the write sent, so that it is the history that was rewritten, not a
    record beside it: appends that overlap then overwrite each other. In words; else None."""
    read: dict[tuple[str, str], Step] = {}
    watched: set[tuple[str, str]] = set()
    for step in steps(commands):
        client = step.commands[0].client
        for command in step.commands:
            if command.name == "WATCH":
                watched.update((client, key) for key in command.args[1:])
        first = step.commands[0]
        if step.kind == "command" and first.name in READS and len(first.args) > 1:
            if (client, first.args[1]) not in watched:
                read[(client, first.args[1])] = step
        elif step.holds(texts):
            for key in step.keys_written():
                if (client, key) in read:
                    return f"{read[(client, key)].text()}, then {step.text()}"
        if step.kind == "transaction" or first.name == "UNWATCH":   # EXEC and DISCARD end every WATCH
            watched = {pair for pair in watched if pair[0] != client}
    return None


def written_by_several(commands: Iterable[Command], texts: frozenset[str]) -> str | None:
    """A key written whole by several connections, each time with a message's content (one of ``texts``):
    writers that give their messages the same key, where the last one written replaces the others. In
    words; else None."""
    writers: dict[str, dict[str, Command]] = {}   # key -> connection -> its write
    for command in commands:
        if command.name in REPLACES and len(command.args) > 2 and not _if_absent(command) and _holds(command, texts):
            writers.setdefault(command.args[1], {})[command.client] = command
            if len(writers[command.args[1]]) > 1:
                return f"{shown_command(command)} from {len(writers[command.args[1]])} connections"
    return None


def over_window_cause(log: CommandLog | None) -> str:
    """Why readers loaded more than the window while writers appended, as far as the store's commands show."""
    placement = trim_placement(log.read()) if log is not None else None
    if placement is not None and not placement.together:
        return (f"the trim runs after the push, not with it: the store sent {placement.example} as separate steps, so "
                "a reader between the two sees too many; push and trim in one MULTI/EXEC or Lua script")
    others = ("its window is larger than the scenario's or counted otherwise (another counter, or the summary or "
              "system message left out), or its load adds messages from a second source")
    if placement is not None:
        return (f"its push and trim run as one step ({placement.example}), which no reader can come between: "
                f"possible causes: {others}")
    if log is not None:
        return f"the store sent no trim command (no LTRIM, ZREMRANGEBYRANK, XTRIM, ...): possible causes: {others}"
    return (f"possible causes: the trim runs after the push, not with it (RPUSH, then LTRIM in a second round trip), "
            f"or {others} (the store's commands were not logged: run on a server the suite starts to tell)")


def lost_update_cause(log: CommandLog | None, alone_intact: bool, texts: frozenset[str]) -> str:
    """Why messages appended by several writers at once went missing, as far as the store's commands show
    (``texts``: the contents of the messages appended, which a write of the history holds)."""
    control = "though one writer appending as many loses none: " if alone_intact else ""
    commands = log.read() if log is not None else []
    found = read_then_write(commands, texts) if log is not None else None
    if found:
        return (f"{control}appends that overlap overwrite each other: the store reads the session and writes it "
                f"back whole in another step ({found}), so a writer overwrites what another wrote in between (a lost "
                "update)")
    shared = written_by_several(commands, texts) if log is not None else None
    if shared:
        return (f"{control}appends that overlap overwrite each other: writers on several connections wrote messages "
                f"under the same key ({shared}), and the last one written replaced the others: each writer chooses a "
                "message's key on its own (possible causes: an index or counter it keeps in its process, or reads "
                "before another writer has written)")
    causes = ("a read-modify-write across connections or keys the log does not pair, a trim whose range came from a "
              "stale length, a delete" if log is not None else
              "a read-modify-write (GET, then SET) that overwrites what another writer wrote in between (a lost "
              "update), a trim whose range came from a stale length")
    alone = "" if alone_intact else ", or the store loses messages even with one writer"
    return f"{control}appends that overlap lose messages: possible causes: {causes}{alone}"


def rewrite_cause(log: CommandLog | None, member: str) -> str:
    """Why messages appended while the store's ``member`` (compact) ran were lost, as far as the
    commands sent during its last call show: the steps that replaced a key whole, or the possible causes."""
    call = next((call for call in reversed(log.calls) if call.member == member and call.end), None) if log else None
    if call is not None:
        replaced = [step.text() for step in steps(during(call, log.read())) if step.keys_written()]
        if replaced:
            return (f"it wrote the session back as it had read it ({'; '.join(replaced[:2])}), over what was "
                    "appended meanwhile (a lost update)")
    seen = "its commands show no step that replaced a key whole: " if call is not None else ""
    return (f"{seen}possible causes: it wrote the session back as it had read it, over what was appended meanwhile "
            "(a lost update), or it removed more than the messages it summarised")


def writes_of(log: CommandLog, call: Call) -> str | None:
    """The steps that add a message the server ran while ``call`` ran, in words; None when none did."""
    added = [step.text() for step in steps(during(call, log.read())) if step.adds()]
    return "; ".join(added[:2]) or None


def during(call: Call, commands: list[Command]) -> list[Command]:
    """The commands sent while ``call`` ran."""
    return [c for c in commands if call.start <= c.time <= call.end]


def listing(log: CommandLog, failure: str = "") -> str:
    """The store's commands for a failure's details: counted by name, then those of the operation that
    went wrong, step by step (:func:`wrong_calls`)."""
    commands = log.read()
    total = len(commands) + log.overflow
    if not total:
        return "the store's commands on the scenario's database (MONITOR): none"
    counts = Counter(c.name for c in commands
                     if c.name not in HANDSHAKES and c.name not in ("MULTI", "EXEC")).most_common(SHOWN_NAMES)
    lines = [f"the store's commands on the scenario's database (MONITOR, {total:,} in all): "
             + ", ".join(f"{name} {count:,}" for name, count in counts)]
    which, calls = wrong_calls(log.calls, failure)
    if which:
        lines.append(which + (":" if calls else ""))
    for call in calls:
        shown = [step for step in steps(during(call, commands))
                 if step.kind != "command" or step.commands[0].name not in HANDSHAKES]
        raised = f" (raised {call.raised})" if call.raised else ""
        lines.append(f"  {call.text()}{raised}: " + ("no command" if not shown else "; ".join(
            step.text() for step in shown[:SHOWN_STEPS]) + (f"; ... {len(shown) - SHOWN_STEPS} more steps"
                                                            if len(shown) > SHOWN_STEPS else "")))
    return "\n".join(lines)


def wrong_calls(calls: list[Call], failure: str) -> tuple[str, list[Call]]:
    """The calls of the operation that went wrong, and how they were picked: those on the sessions the
    failure names; else the last call that raised, with the calls on its session before it; else the last
    calls. Only calls that ran alone are listed (the commands of calls that overlap cannot be told apart)."""
    finished = [call for call in calls if call.end]
    named = {call.session for call in finished if call.session and repr(call.session) in failure}
    raised = next((call for call in reversed(finished) if call.raised), None)
    if named:
        picked = [call for call in finished if call.session in named]
        which = f"its calls on {', '.join(map(repr, sorted(named)[:3]))}, which the failure names"
    elif raised is not None:
        picked = [call for call in finished if call.session == raised.session and call.start <= raised.start]
        which = f"its last call that raised, {raised.text()}, and its calls on that session before it"
    else:
        picked, which = finished, "its last calls"
    alone = [call for call in picked if call.alone][-SHOWN_CALLS:]
    if picked and not alone:
        return f"{which}: they ran beside other calls, whose commands cannot be told from theirs", []
    return (which if alone else ""), alone
