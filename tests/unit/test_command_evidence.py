"""What the store's commands show (memory_regression/harness/command_evidence.py), from MONITOR's lines as a server
writes them (memory_regression/harness/store_commands.py): steps, where the trim runs, a read then a whole write."""

import redis

from memory_regression.harness.command_evidence import (listing, lost_update_cause, read_then_write, rewrite_cause,
    steps, trim_placement, written_by_several)
from memory_regression.harness.store_commands import Call, Command, CommandLog, command_log, parse


def commands(*lines: str) -> list[Command]:
    """``client: ARGS`` lines, a client "lua" for the commands a script ran (its caller's)."""
    found, caller = [], ""
    for at, line in enumerate(lines):
        client, _, text = line.partition(": ")
        args = tuple(text.split())
        if client == "lua":
            found.append(Command(float(at), caller, args, scripted=True))
            continue
        caller = client if args[0] in ("EVALSHA", "EVAL", "FCALL") else caller
        found.append(Command(float(at), client, args))
    return found


def test_a_monitor_line_is_parsed_with_its_escapes():
    line = r'+1796527060.261516 [3 127.0.0.1:60138] "RPUSH" "k" "a\n\"quoted\" \xc3 b"'
    assert parse(line) == (1796527060.261516, 3, "127.0.0.1:60138", ("RPUSH", "k", 'a\n"quoted" \xc3 b'))
    assert parse("+OK") is None


def test_a_transaction_and_a_script_are_one_step_each_and_a_pipeline_is_two():
    found = steps(commands("a: MULTI", "a: RPUSH k m", "b: LRANGE k 0 -1", "a: LTRIM k -5 -1", "a: EXEC",
                           "a: EVALSHA f00 1 z m", "lua: ZADD z 1 m", "lua: ZREMRANGEBYRANK z 0 -6",
                           "a: RPUSH k n", "a: LTRIM k -5 -1"))
    assert [(step.kind, step.text()) for step in found] == [
        ("transaction", "MULTI: RPUSH k m, LTRIM k -5 -1; EXEC"), ("command", "LRANGE k 0 -1"),
        ("script", "EVALSHA f00 1 z m [ZADD z 1 m, ZREMRANGEBYRANK z 0 -6]"), ("command", "RPUSH k n"),
        ("command", "LTRIM k -5 -1")]


def test_the_trim_is_with_the_push_in_a_transaction_a_script_or_one_xadd_and_apart_in_a_pipeline():
    assert trim_placement(commands("a: MULTI", "a: RPUSH k m", "a: LTRIM k -5 -1", "a: EXEC")).together
    script = trim_placement(commands("a: INCR seq", "a: EVALSHA f00 1 z m", "lua: ZADD z 1 m",
                                     "lua: ZREMRANGEBYRANK z 0 -6"))
    assert script.together and script.example == "EVALSHA f00 1 z m [ZADD z 1 m, ZREMRANGEBYRANK z 0 -6]"
    assert trim_placement(commands("a: XADD s MAXLEN 5 * role user")).together
    apart = trim_placement(commands("a: MULTI", "a: RPUSH k m", "a: EXEC", "b: LRANGE k 0 -1", "a: LTRIM k -5 -1"))
    assert not apart.together and apart.example == "MULTI: RPUSH k m; EXEC and LTRIM k -5 -1"
    assert trim_placement(commands("a: RPUSH k m", "a: LRANGE k 0 -1")) is None
    pooled = trim_placement(commands("a: MULTI", "a: RPUSH k m", "a: EXEC", "b: RPUSH other x", "c: LLEN k",
                                     "b: LTRIM k -5 -1"))   # Agent Framework's, its calls spread over a pool
    assert pooled.example == "MULTI: RPUSH k m; EXEC and LTRIM k -5 -1"
    assert trim_placement(commands("a: LTRIM k -5 -1")).example == "LTRIM k -5 -1"


def test_a_read_then_a_whole_write_of_the_same_key_on_one_connection_unless_watched():
    x = frozenset({"x"})   # the message appended, which the write of the history holds
    assert read_then_write(commands("a: GET d", "b: GET d", "a: SET d x"), x) == "GET d, then SET d x"
    assert read_then_write(commands("a: WATCH d", "a: GET d", "a: MULTI", "a: SET d x", "a: EXEC"), x) is None
    assert read_then_write(commands("a: GET d", "a: WATCH d", "a: MULTI", "a: SET d x", "a: EXEC"), x) == (
        "GET d, then MULTI: SET d x; EXEC")   # watched after the read: what it read may have changed already
    assert read_then_write(commands("a: GET d", "a: SET other x", "b: SET d y"), x) is None
    assert read_then_write(commands("a: RPUSH k m", "a: LRANGE k 0 -1"), x) is None
    # a record beside the history (Strands' session document), or a write only where the key is absent: no lost update
    assert read_then_write(commands("a: GET session", "a: SET session {updated}"), x) is None
    assert read_then_write(commands("a: GET session", "a: SET session x NX"), x) is None


def test_messages_written_under_one_key_by_several_connections_are_named():
    """Strands' managers in several processes: each gives its message the index it keeps, and they collide."""
    texts = frozenset({"w1#1", "w2#1"})
    assert written_by_several(commands("a: SET s:msg:0 {w1#1}", "b: SET s:msg:0 {w2#1}"), texts) == (
        "SET s:msg:0 {w2#1} from 2 connections")
    assert written_by_several(commands("a: SET s:msg:0 w1#1", "b: SET s:msg:1 w2#1"), texts) is None
    assert written_by_several(commands("a: SET session {}", "b: SET session {}"), texts) is None   # no message
    log = CommandLog()
    log._commands = commands("a: SET s:msg:0 w1#1", "b: SET s:msg:0 w2#1")
    assert "wrote messages under the same key (SET s:msg:0 w2#1 from 2 connections)" in lost_update_cause(
        log, True, texts)


def test_a_rewrite_is_named_from_the_steps_of_the_compaction_and_listed_as_possible_without_them():
    log = CommandLog()
    log._commands = commands("a: LRANGE k 0 -1", "b: RPUSH k m", "a: MULTI", "a: DEL k", "a: RPUSH k s", "a: EXEC")
    log.calls = [Call("compact", "s1", -0.5, 6.0, alone=False)]
    assert rewrite_cause(log, "compact").startswith("it wrote the session back as it had read it (MULTI: DEL k, "
                                                    "RPUSH k s;")
    log._commands = commands("a: LRANGE k 0 -1", "b: RPUSH k m", "a: LTRIM k 6 -1")
    assert rewrite_cause(log, "compact").startswith("its commands show no step that replaced a key whole: "
                                                    "possible causes")
    assert rewrite_cause(None, "compact").startswith("possible causes: it wrote the session back")


def test_the_listing_counts_by_name_and_shows_the_last_calls_that_ran_alone():
    log = CommandLog()
    log._commands = commands("a: MULTI", "a: RPUSH k m", "a: LTRIM k -5 -1", "a: EXEC", "a: LRANGE k 0 -1",
                             "a: LRANGE k 0 -1")
    log.calls = [Call("append", "s1", -0.5, 3.5), Call("load", "s1", 3.9, 4.1),
                 Call("load", "s2", 4.5, 5.5, alone=False)]
    assert listing(log).splitlines() == [
        "the store's commands on the scenario's database (MONITOR, 6 in all): LRANGE 2, RPUSH 1, LTRIM 1",
        "its last calls:", "  append('s1'): MULTI: RPUSH k m, LTRIM k -5 -1; EXEC", "  load('s1'): LRANGE k 0 -1"]


def test_the_listing_shows_the_calls_on_the_session_the_failure_names_else_those_up_to_the_one_that_raised():
    """The operation that went wrong: the calls on the session a failure names, though others came after;
    without one, the last call that raised and the calls on its session before it."""
    log = CommandLog()
    log._commands = commands("a: RPUSH ka m", "a: RPUSH kb m", "a: LRANGE ka 0 -1", "a: LRANGE kb 0 -1",
                             "a: RPUSH kb n")
    log.calls = [Call("append", "a", -0.5, 0.5), Call("append", "b", 0.9, 1.1), Call("load", "a", 1.9, 2.1),
                 Call("load", "b", 2.9, 3.1), Call("append", "b", 3.9, 4.1, raised="TimeoutError")]
    assert listing(log, "session 'a' lost a message").splitlines()[1:] == [
        "its calls on 'a', which the failure names:", "  append('a'): RPUSH ka m", "  load('a'): LRANGE ka 0 -1"]
    assert listing(log, "the store raised TimeoutError").splitlines()[1:] == [
        "its last call that raised, append('b'), and its calls on that session before it:",
        "  append('b'): RPUSH kb m", "  load('b'): LRANGE kb 0 -1", "  append('b') (raised TimeoutError): RPUSH kb n"]
    log.calls = [Call("append", "a", -0.5, 5.0, alone=False), Call("load", "b", 0.5, 4.5, alone=False)]
    assert listing(log, "session 'a' lost a message").splitlines()[1:] == [
        "its calls on 'a', which the failure names: they ran beside other calls, whose commands cannot be told from "
        "theirs"]


def test_the_log_keeps_the_stores_commands_on_its_database_with_what_their_scripts_ran(redis_server):
    """MONITOR on a real server: the suite's user and other databases left out, a script's commands its
    caller's, everything the server ran before the read is in it, and a store user like the suite's gives no log."""
    admin = redis_server.client()
    admin.execute_command("ACL", "SETUSER", "suite", "on", ">secret", "~*", "+@all")
    suite_url, store_url = redis_server.url(3, "suite:secret"), redis_server.url(3)
    suite = redis.Redis.from_url(suite_url, decode_responses=True)
    assert command_log({"": suite}, store_url, store_url) is None
    log = command_log({"": suite}, suite_url, store_url)
    try:
        store = redis.Redis.from_url(store_url)
        script = "redis.call('RPUSH', KEYS[1], ARGV[1]) redis.call('LTRIM', KEYS[1], -5, -1)"
        with log.watch("append", ("s1", "user", "hi")):
            store.eval(script, 1, "k", "a b")
        redis.Redis.from_url(redis_server.url(4)).set("elsewhere", 1)
        suite.lrange("k", 0, -1)
        found = [(c.name, c.args[1:], c.scripted) for c in log.read() if c.name not in ("HELLO", "SELECT")]
        assert found == [("EVAL", (script, "1", "k", "a b"), False), ("RPUSH", ("k", "a b"), True),
                         ("LTRIM", ("k", "-5", "-1"), True)]
        assert trim_placement(log.read()).together
        assert "append('s1'): EVAL" in listing(log)
    finally:
        log.close()
