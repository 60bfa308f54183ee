"""The server side alone: `headroom mcp` over raw pipes, no SDK (a newline-delimited JSON-RPC
client in the standard library). Usage: python3 bench/mcp_raw.py HEADROOM_BINARY. Prints the
median of 20 round trips of ping, tools/list and two tools/call."""
import subprocess, json, time, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def ask(m):
    p.stdin.write((json.dumps(m)+"\n").encode()); p.stdin.flush()
    return json.loads(p.stdout.readline())
ask({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}})
for meth, params in [("ping", None), ("tools/list", {}), ("tools/call", {"name":"run_list","arguments":{}}), ("tools/call", {"name":"limits","arguments":{}})]:
    ts=[]
    for i in range(20):
        m={"jsonrpc":"2.0","id":i+1,"method":meth}
        if params is not None: m["params"]=params
        t=time.perf_counter(); ask(m); ts.append((time.perf_counter()-t)*1e3)
    ts.sort(); print(meth, params and params.get("name"), "median %.2f ms" % ts[10])
p.stdin.close(); p.wait()
