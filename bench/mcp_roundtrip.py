"""Start-up and one call's round trip of `headroom mcp` against the official Python SDK's
own server (MCPServer, one `echo` tool, the SDK's example shape), both driven by the SDK's
stdio client. Usage: python bench/mcp_roundtrip.py HEADROOM_BINARY [ROUNDS] [--json]
(a python with the `mcp` package; .ci/run makes one). Prints medians in ms; with --json, one
object a case with every sample (bench/all.py's input)."""

import asyncio
import importlib.metadata
import json
import os
import statistics
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PEER = '''
from mcp.server.mcpserver import MCPServer
app = MCPServer("peer")
@app.tool()
def echo(text: str) -> str:
    return text
app.run()
'''


async def once(params, tool, args):
    t0 = time.perf_counter()
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            t1 = time.perf_counter()
            await s.call_tool(tool, args)
            t2 = time.perf_counter()
            await s.call_tool(tool, args)
            t3 = time.perf_counter()
    return (t1 - t0) * 1e3, (t3 - t2) * 1e3


async def main():
    as_json = "--json" in sys.argv
    argv = [a for a in sys.argv if a != "--json"]
    exe, rounds = argv[1], int(argv[2]) if len(argv) > 2 else 10
    # The peer's script lives only as long as the run: removed however the run ends (a
    # failed call, Ctrl-C), not left in the temp dir for each run of all.py.
    with tempfile.TemporaryDirectory(prefix="hr-mcp-peer-") as tmp:
        peer = os.path.join(tmp, "peer.py")
        with open(peer, "w") as f:
            f.write(PEER)
        await run_cases(exe, rounds, peer, as_json)


async def run_cases(exe, rounds, peer, as_json):
    cases = [
        ("headroom mcp (limits)", StdioServerParameters(command=exe, args=["mcp"]), "limits", {}),
        # A tool that does no work of its own, as the peer's echo does none.
        ("headroom mcp (run_list)", StdioServerParameters(command=exe, args=["mcp"]), "run_list", {}),
        ("Python SDK MCPServer (echo)", StdioServerParameters(command=sys.executable, args=[peer]), "echo", {"text": "x"}),
    ]
    for name, params, tool, args in cases:
        starts, calls = [], []
        for _ in range(rounds):
            s, c = await once(params, tool, args)
            starts.append(s)
            calls.append(c)
        if as_json:
            sdk = importlib.metadata.version("mcp")
            print(json.dumps({"name": name, "sdk": sdk, "starts": starts, "calls": calls}), flush=True)
            continue
        print(f"{name}: start-up to initialized {statistics.median(starts):.1f} ms, "
              f"a call's round trip {statistics.median(calls):.2f} ms (median of {rounds})")


asyncio.run(main())
