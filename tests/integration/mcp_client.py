"""Drive `headroom mcp` with the official MCP Python SDK (stdio client), as an agent would.

Run by tests/integration/mcp.rs with one argument, a JSON file:
  {"server": [argv of the server], "env": {...}, "leaker": PID, "leaker_name": NAME,
   "leaker_zombies": N, "tree": [PIDS, root first], "foreign": PID or null,
   "hog": [argv of a command that grows past 64 MiB]}
Every check raises on failure; the last line printed is "ok" and a JSON summary.
"""

import asyncio
import json
import os
import sys

from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def state(pid):
    try:
        with open(f"/proc/{pid}/stat", errors="replace") as f:
            s = f.read()
    except FileNotFoundError:
        return None
    return s[s.rindex(")") + 2]


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", errors="replace") as f:
                    s = f.read()
            except OSError:
                continue
            if int(s[s.rindex(")") + 2 :].split()[1]) == pid:
                out.append(int(d))
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def call(session, name, args, *, error=False):
    r = await session.call_tool(name, args)
    # The JSON first (when there is a report), then the summary; errors have one block.
    texts = [c.text for c in r.content if c.type == "text"]
    text = texts[-1] if texts else ""
    if r.structured_content is not None:
        check(json.loads(texts[0]) == r.structured_content, f"{name}: the JSON as text")
    check(bool(r.is_error) == error, f"{name}({args}): isError={r.is_error}: {text}")
    return r, text


async def legacy(cfg, schemas):
    """The 2025-11-25 session: initialize, list, call."""
    params = StdioServerParameters(command=cfg["server"][0], args=cfg["server"][1:], env=cfg["env"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            check(init.protocol_version == "2025-11-25", f"version {init.protocol_version}")
            check(init.server_info.name == "headroom", "server name")
            tools = (await s.list_tools()).tools
            names = [t.name for t in tools]
            for t in tools:
                # Both schemas are valid JSON Schema (2020-12).
                Draft202012Validator.check_schema(t.input_schema)
                Draft202012Validator.check_schema(t.output_schema)
                check(t.annotations is not None, f"{t.name} has annotations")
                schemas[t.name] = t.output_schema
            check(
                {"probe", "doctor", "explain_reap", "park_tree", "wake_tree", "run_limited"} <= set(names),
                f"tools {names}",
            )
            # hangs_check asks the macOS WindowServer: not offered here, and a call anyway is
            # an error saying why. Control: hangs_events is offered and answers.
            check("hangs_check" not in names and "hangs_events" in names, f"tools {names}")
            check("hangs_check" not in init.instructions, init.instructions)
            try:
                await s.call_tool("hangs_check", {})
                raise AssertionError("hangs_check answered where there is no WindowServer")
            except MCPError as e:
                check("WindowServer" in str(e) and "not offered" in str(e), f"hangs_check: {e}")
            await call(s, "hangs_events", {})
            check(next(t for t in tools if t.name == "probe").annotations.read_only_hint is True, "probe reads")
            check(next(t for t in tools if t.name == "doctor").annotations.read_only_hint is True, "doctor reads")
            check(next(t for t in tools if t.name == "park").annotations.destructive_hint is True, "park acts")

            # probe: the SDK validates structuredContent against outputSchema; check it here too.
            r, text = await call(s, "probe", {"no_history": True})
            Draft202012Validator(schemas["probe"]).validate(r.structured_content)
            check(r.structured_content["schema"] == "headroom.probe/2", "probe schema name")
            check(text.startswith("level "), f"probe text {text!r}")

            # doctor: the same report as `doctor --json`, valid against its outputSchema; a
            # mismatch is a finding (exit 1), not a tool error.
            r, text = await call(s, "doctor", {})
            Draft202012Validator(schemas["doctor"]).validate(r.structured_content)
            doc = r.structured_content
            check(doc["schema"] == "headroom.doctor/1", "doctor schema name")
            check(doc["ok"] + doc["mismatches"] + doc["skipped"] == len(doc["checks"]), f"doctor counts {doc}")
            check(text.startswith(f"{doc['ok']} ok, {doc['mismatches']} mismatch"), f"doctor text {text!r}")
            zombies = next(c for c in doc["checks"] if c["name"] == "zombies")
            check(zombies["outcome"] == "ok", f"doctor zombies {zombies}")
            if cfg["foreign"]:
                # A private uid: exactly the leaker's zombies.
                check(zombies["headroom"] == str(cfg["leaker_zombies"]), f"doctor zombies {zombies}")

            # explain_reap on the test's own leaker: the configured allowlist names it.
            r, _ = await call(s, "explain_reap", {})
            Draft202012Validator(schemas["explain_reap"]).validate(r.structured_content)
            rep = r.structured_content
            check(rep["dry_run"] is True and rep["targets"] == [], "a dry run")
            mine = [p for p in rep["parents"] if p["pid"] == cfg["leaker"]]
            check(len(mine) == 1, f"leaker {cfg['leaker']} in {rep['parents']}")
            check(mine[0]["verdict"] == "target", f"leaker verdict {mine[0]}")
            check(mine[0]["zombies"] == cfg["leaker_zombies"], f"leaker zombies {mine[0]}")
            # Narrowing: a deny pattern the agent adds spares it, with the rule's name.
            r, _ = await call(s, "explain_reap", {"deny": [cfg["leaker_name"]]})
            mine = [p for p in r.structured_content["parents"] if p["pid"] == cfg["leaker"]]
            check(mine[0]["reason"] == "not-permitted-by-policy", f"denied leaker {mine[0]}")
            # ...and a larger min_zombies than configured narrows too.
            r, _ = await call(s, "explain_reap", {"min_zombies": cfg["leaker_zombies"] + 1})
            mine = [p for p in r.structured_content["parents"] if p["pid"] == cfg["leaker"]]
            check(mine[0]["reason"] == "below-zombie-threshold", f"threshold {mine[0]}")
            check(state(cfg["leaker"]) in ("S", "R"), "the leaker was not signalled")

            # park_tree / wake_tree on a tree the test owns.
            root = cfg["tree"][0]
            r, _ = await call(s, "park_tree", {"pid": root})
            Draft202012Validator(schemas["park_tree"]).validate(r.structured_content)
            check(r.structured_content["changed"] == len(cfg["tree"]), f"parked {r.structured_content}")
            for p in cfg["tree"]:
                check(state(p) == "T", f"pid {p} stopped")
            r, _ = await call(s, "wake_tree", {"pid": root})
            check(r.structured_content["changed"] == len(cfg["tree"]), f"woken {r.structured_content}")
            for p in cfg["tree"]:
                check(state(p) != "T", f"pid {p} running again")

            # Refusals: results with isError naming the rule, nothing signalled.
            _, text = await call(s, "park", {"pid": 1}, error=True)
            check(text.startswith("refused (init-process)"), text)
            _, text = await call(s, "park", {"pid": os.getpid()}, error=True)
            check(text.startswith("refused (protected-ancestor)"), f"the agent itself: {text}")
            check(state(os.getpid()) != "T", "the client still runs")
            # The server itself (headroom): a child of this client.
            server = [p for p in children(os.getpid()) if cmdline(p)[-1:] == ["mcp"]]
            check(len(server) == 1, f"the server among the client's children: {server}")
            _, text = await call(s, "park", {"pid": server[0]}, error=True)
            check(text.startswith("refused (protected-ancestor)"), f"the server itself: {text}")
            check(state(server[0]) != "T", "the server still runs")
            if cfg["foreign"]:
                _, text = await call(s, "park", {"pid": cfg["foreign"]}, error=True)
                check(text.startswith("refused (foreign-uid)"), text)
            _, text = await call(s, "wake", {"pid": 0}, error=True)
            check("init-process" in text, text)

            # run_limited: over its limit it is capped, with its peak.
            r, text = await call(s, "run_limited", {"command": cfg["hog"], "limit": "64M", "grace": "1s", "timeout": "60s"})
            Draft202012Validator(schemas["run_limited"]).validate(r.structured_content)
            rl = r.structured_content
            check(rl["capped"] is True and rl["exit_code"] in (137, 143), f"capped: {rl}")
            check(rl["peak_footprint_bytes"] >= 64 << 20, f"peak {rl['peak_footprint_bytes']}")
            check(rl["timed_out"] is False, "not a timeout")
            check('"type"' not in rl["stderr_tail"], f"run's records left out: {rl['stderr_tail']!r}")
            # ...and past its timeout it is ended and says so, with the tail of its output.
            cmd = ["sh", "-c", "echo to-stdout; echo to-stderr >&2; exec sleep 60"]
            r, text = await call(s, "run_limited", {"command": cmd, "limit": 256, "timeout": "2s", "grace": "1s"})
            rl = r.structured_content
            check(rl["timed_out"] is True and rl["capped"] is False, f"timeout: {rl}")
            check(rl["exit_code"] == 143, f"ended by SIGTERM: {rl}")
            check("timed out" in text, text)
            check(rl["stdout_tail"] == "to-stdout\n", f"stdout tail {rl['stdout_tail']!r}")
            check(rl["stderr_tail"] == "to-stderr\n", f"stderr tail, run's records left out: {rl['stderr_tail']!r}")
            # The command runs in the server's working directory, or in `cwd` when given.
            r, _ = await call(s, "run_limited", {"command": ["pwd"], "limit": 64})
            check(r.structured_content["stdout_tail"] == os.getcwd() + "\n", f"default cwd: {r.structured_content}")
            here = os.path.realpath("/tmp")
            r, _ = await call(s, "run_limited", {"command": ["pwd"], "limit": 64, "cwd": here})
            check(r.structured_content["stdout_tail"] == here + "\n", f"cwd: {r.structured_content}")
            check(r.structured_content["cwd"] == here, f"cwd reported: {r.structured_content}")
            # A command that does not exist: run's 127, as an error.
            r, text = await call(s, "run_limited", {"command": ["/nonexistent/cmd"], "limit": 64}, error=True)
            check(r.structured_content["exit_code"] == 127, f"{r.structured_content}")
            return names


async def stateless(cfg):
    """The 2026-07-28 style: server/discover, then requests with the version in _meta."""
    params = StdioServerParameters(command=cfg["server"][0], args=cfg["server"][1:], env=cfg["env"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            d = await s.discover()
            check("2026-07-28" in d.supported_versions, f"{d.supported_versions}")
            tools = (await s.list_tools()).tools
            r, _ = await call(s, "limits", {})
            check(r.structured_content["schema"] == "headroom.limits/2", "limits schema")
            return len(tools)


async def main():
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    schemas = {}
    names = await legacy(cfg, schemas)
    n = await stateless(cfg)
    check(n == len(names), "the same tools either way")
    print("ok")
    print(json.dumps({"tools": names}))


asyncio.run(main())
