"""Drive `headroom mcp` with the official MCP Python SDK: long calls, the session's end.

Run by tests/integration/mcp.rs with one argument, a JSON file:
  {"server": [argv], "env": {...}, "work": DIR, "state": HEADROOM_HOME}
Prints "ok" last; every check raises on failure.
"""

import asyncio
import datetime
import json
import os
import signal
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat", errors="replace") as f:
            s = f.read()
    except FileNotFoundError:
        return False
    return s[s.rindex(")") + 2] != "Z"


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


async def wait_for(cond, what, bound=30):
    end = time.monotonic() + bound
    while not cond():
        check(time.monotonic() < end, f"timed out: {what}")
        await asyncio.sleep(0.02)


def stubborn(pidfile):
    """A command that ignores SIGTERM and notes its pid."""
    return ["sh", "-c", f"trap '' TERM; echo $$ > {pidfile}; exec sleep 600"]


def pid_in(path):
    try:
        return int(open(path).read())
    except (OSError, ValueError):
        return None


def params(cfg, *extra):
    return StdioServerParameters(command=cfg["server"][0], args=cfg["server"][1:] + list(extra), env=cfg["env"])


async def concurrent_cancel_progress_and_the_spec_shutdown(cfg):
    work = cfg["work"]
    updated = []

    async def on_message(m):
        if getattr(m, "method", None) == "notifications/resources/updated" or "resources/updated" in repr(m):
            updated.append(m)

    pid_a = os.path.join(work, "a.pid")
    async with stdio_client(params(cfg)) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as s:
            await s.initialize()
            # Control: a normal run completes with its output, as text and as JSON.
            r = await s.call_tool("run_limited", {"command": ["sh", "-c", "echo hi"], "limit": 64})
            check(not r.is_error and r.structured_content["stdout_tail"] == "hi\n", f"{r}")
            check(json.loads(r.content[0].text) == r.structured_content, "the JSON as text too")
            check(r.content[1].text.startswith("exit 0"), f"the summary second: {r.content[1].text!r}")
            # The command's own stderr, byte for byte, even lines that look like run's.
            look = '{"type":"warning","at":"x","message":"mine"}'
            r = await s.call_tool("run_limited", {"command": ["sh", "-c", f"echo '{look}' >&2"], "limit": 64})
            check(r.structured_content["stderr_tail"] == look + "\n", f"stderr {r.structured_content['stderr_tail']!r}")
            check(r.structured_content["summary"]["type"] == "summary", "run's own summary still read")
            # Bad values are tool errors; numeric strings are integers.
            r = await s.call_tool("park", {"pid": "not-a-pid"})
            check(r.is_error and "usage" in r.content[0].text, f"{r}")
            r = await s.call_tool("top", {"pid": str(os.getpid())})
            check(not r.is_error, f"top with a numeric string: {r}")

            # Progress during a long call.
            seen = []

            async def progress(p, total, message):
                seen.append(p)

            r = await s.call_tool("run_limited", {"command": ["sleep", "2.5"], "limit": 64}, progress_callback=progress)
            check(not r.is_error and len(seen) >= 1, f"progress {seen}")
            check(seen == sorted(seen), f"progress increases: {seen}")

            # A cancelled call: its tree is ended, and no answer comes for it.
            pid_c = os.path.join(work, "c.pid")
            task = asyncio.create_task(s.call_tool("run_limited", {"command": stubborn(pid_c), "limit": 64, "grace": "1s"}))
            await wait_for(lambda: pid_in(pid_c), "the cancelled command started")
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            await wait_for(lambda: not alive(pid_in(pid_c)), "the cancelled call's tree ended", 20)

            # Resources: listed, read, subscribed; a hang recorded is an update.
            res = await s.list_resources()
            uris = {str(x.uri) for x in res.resources}
            check({"headroom://reading", "headroom://hangs/events", "headroom://config"} <= uris, f"{uris}")
            rr = await s.read_resource("headroom://reading")
            check(json.loads(rr.contents[0].text)["schema"].startswith("headroom.probe/"), f"{rr}")
            await s.subscribe_resource("headroom://hangs/events")
            await asyncio.sleep(2.5)  # the watcher's first look, the baseline
            now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            ev = {"type": "detected", "at": now, "identity": "t", "name": "T", "pid": 4242,
                  "bundle_path": "/Applications/T.app", "kind": "app"}
            with open(os.path.join(cfg["state"], "hangs-events.jsonl"), "a") as f:
                f.write(json.dumps(ev) + "\n")
            await wait_for(lambda: updated, "notifications/resources/updated", 20)

            # A long call does not hold the others up: ping and a tool answer while it runs.
            long = asyncio.create_task(s.call_tool("run_limited", {"command": stubborn(pid_a), "limit": 64, "grace": "1s", "timeout": "10m"}))
            await wait_for(lambda: pid_in(pid_a), "the long command started")
            await asyncio.wait_for(s.send_ping(), 5)
            r = await asyncio.wait_for(s.call_tool("limits", {}), 10)
            check(r.structured_content["schema"].startswith("headroom.limits/"), "limits while run_limited runs")
            check(alive(pid_in(pid_a)) and not long.done(), "the long call still runs")
            # Leaving the block: the SDK's shutdown (close stdin, SIGTERM, SIGKILL).
    try:
        await long
    except BaseException:
        pass
    await wait_for(lambda: not alive(pid_in(pid_a)), "the run ended with the session", 20)


async def the_server_killed_mid_call(cfg):
    pid_b = os.path.join(cfg["work"], "b.pid")
    async with stdio_client(params(cfg)) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            task = asyncio.create_task(s.call_tool("run_limited", {"command": stubborn(pid_b), "limit": 64, "grace": "1s"}))
            await wait_for(lambda: pid_in(pid_b), "the command started")
            server = [p for p in children(os.getpid()) if alive(p)]
            check(len(server) == 1, f"the server {server}")
            os.kill(server[0], signal.SIGKILL)
            await wait_for(lambda: not alive(pid_in(pid_b)), "the run ended its tree when the server died", 20)
            task.cancel()


async def tasks(cfg):
    """run_start / run_status / run_terminate / run_list, and a task left running ending
    with the session."""
    work = cfg["work"]
    pid_t, pid_u = os.path.join(work, "t.pid"), os.path.join(work, "u.pid")

    async def status(s, tid):
        r = await s.call_tool("run_status", {"task_id": tid})
        check(not r.is_error, f"run_status: {r}")
        check(json.loads(r.content[0].text) == r.structured_content, "the JSON as text too")
        return r.structured_content

    async def until_ended(s, tid, bound=30):
        end = time.monotonic() + bound
        while True:
            st = await status(s, tid)
            if st["state"] == "ended":
                return st
            check(time.monotonic() < end, f"task {tid} still running: {st}")
            await asyncio.sleep(0.1)

    async with stdio_client(params(cfg)) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            # Control: a task that ends by itself, with its exit, output and peak.
            r = await s.call_tool("run_start", {"command": ["sh", "-c", "echo done; echo err >&2"], "limit": 64})
            check(not r.is_error and r.structured_content["task_id"], f"run_start: {r}")
            st = await until_ended(s, r.structured_content["task_id"])
            check(st["exit_code"] == 0 and st["stdout_tail"] == "done\n" and st["stderr_tail"] == "err\n", f"{st}")
            check(st["peak_footprint_bytes"] is not None and st["result"]["capped"] is False, f"{st}")
            # A long one answers at once; its status shows it running with its output so far.
            cmd = ["sh", "-c", f"trap '' TERM; echo $$ > {pid_t}; echo started; exec sleep 600"]
            t0 = time.monotonic()
            r = await s.call_tool("run_start", {"command": cmd, "limit": 64, "grace": "1s"})
            check(time.monotonic() - t0 < 10, "run_start answers at once")
            tid = r.structured_content["task_id"]
            await wait_for(lambda: pid_in(pid_t), "the task started")
            end = time.monotonic() + 20
            while (st := await status(s, tid))["stdout_tail"] != "started\n":
                check(time.monotonic() < end, f"output so far: {st}")
                await asyncio.sleep(0.1)
            check(st["state"] == "running" and st["exit_code"] is None and st["pid"], f"{st}")
            listed = (await s.call_tool("run_list", {})).structured_content["tasks"]
            check([t["task_id"] for t in listed][-1] == tid and listed[-1]["state"] == "running", f"{listed}")
            # run_terminate ends its tree (a command that ignores SIGTERM: SIGKILL after grace).
            r = await s.call_tool("run_terminate", {"task_id": tid})
            st = r.structured_content
            check(not r.is_error and st["state"] == "ended" and st["exit_code"] == 137, f"terminated: {st}")
            check(not alive(pid_in(pid_t)), "the terminated task's tree is gone")
            # Bad ids and values are tool errors.
            r = await s.call_tool("run_status", {"task_id": "task-999"})
            check(r.is_error and "no task" in r.content[0].text, f"{r}")
            r = await s.call_tool("run_start", {"command": ["true"], "limit": "lots"})
            check(r.is_error and "usage" in r.content[0].text, f"{r}")
            # One left running ends with the session (the SDK's shutdown).
            cmd = ["sh", "-c", f"trap '' TERM; echo $$ > {pid_u}; exec sleep 600"]
            await s.call_tool("run_start", {"command": cmd, "limit": 64, "grace": "1s"})
            await wait_for(lambda: pid_in(pid_u), "the last task started")
    await wait_for(lambda: not alive(pid_in(pid_u)), "the task ended with the session", 30)


async def selections(cfg):
    # Read only: no acting tool, no run; doctor starts nothing and says so.
    async with stdio_client(params(cfg, "--tools", "read")) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            check("run_limited" not in names and "park" not in names and "doctor" in names, f"{names}")
            check(not [n for n in names if n.startswith("run_")], f"no task tools without run: {names}")
            check("run_limited" not in init.instructions and "park_tree" not in init.instructions, init.instructions)
            r = await s.call_tool("doctor", {})
            checks = {c["name"]: c for c in r.structured_content["checks"]}
            for n in ("processes", "child.cpu", "login-item", "notifications"):
                check(checks[n]["outcome"] == "skipped" and "no process" in checks[n]["note"], f"{checks[n]}")
    # An allowlist: `kill` is not on it, so run_limited cannot stop the agent with it.
    async with stdio_client(params(cfg, "--config", cfg["allow_config"])) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            r = await s.call_tool("run_limited", {"command": ["kill", "-STOP", str(os.getpid())], "limit": 64})
            check(r.is_error and "not-in-run-allow" in r.content[0].text, f"{r}")
            r = await s.call_tool("run_start", {"command": ["kill", "-STOP", str(os.getpid())], "limit": 64})
            check(r.is_error and "not-in-run-allow" in r.content[0].text, f"run_start: {r}")
            r = await s.call_tool("run_limited", {"command": ["sh", "-c", "echo allowed"], "limit": 64})
            check(not r.is_error and r.structured_content["stdout_tail"] == "allowed\n", f"control: {r}")


async def main():
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    await concurrent_cancel_progress_and_the_spec_shutdown(cfg)
    await the_server_killed_mid_call(cfg)
    await tasks(cfg)
    await selections(cfg)
    print("ok")


asyncio.run(main())
