"""A misbehaving MCP server over stdio, for the fault matrix.

Usage: fake_mcp.py MODE. It writes its pid to $FAKE_MCP_PID and a line per event to
$FAKE_MCP_LOG. MODE decides the fault:

  ok            answers everything (tool `work` echoes its arguments)
  hang-init     never answers `initialize`
  crash         exits (status 3) on `tools/call`, without answering
  hang-call     never answers `tools/call` (logs `notifications/cancelled`)
  malformed     answers `tools/call` with broken JSON-RPC, chosen by the argument `kind`
  bad-tool      lists one more tool, whose definition is invalid
  big           answers `tools/call` with a 50 MB text result (80 MB for kind `huge`)
  close-stdout  closes its stdout on `tools/call` and keeps running (reading stdin)
  slow-exit     as `ok`, but takes half a second to save its state once stdin closes
"""
import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
LOG = os.environ.get("FAKE_MCP_LOG")


def log(line):
    if LOG:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def raw(data):
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def forever():
    while True:
        time.sleep(1000)


if os.environ.get("FAKE_MCP_PID"):
    with open(os.environ["FAKE_MCP_PID"], "w") as f:
        f.write(str(os.getpid()))
log("started " + MODE)

TOOLS = [{
    "name": "work",
    "description": "does work",
    "inputSchema": {"type": "object", "properties": {"kind": {"type": "string"}}},
}]


def malformed(req_id, kind):
    if kind == "not-json":
        raw(b'{"jsonrpc": "2.0", "id": ' + str(req_id).encode() + b', "result": {"content": [\n')
    elif kind == "lone-surrogate":
        # As the TypeScript SDK writes it: `result` first, a string cut mid-emoji.
        raw(b'{"result": {"content": [{"type": "text", "text": "cut mid-emoji x\\ud83d"}]}, '
            b'"jsonrpc": "2.0", "id": ' + str(req_id).encode() + b'}\n')
    elif kind == "binary":
        raw(b"\xff\xfe\x00garbage\x80\n")
    elif kind == "result-not-object":
        send({"jsonrpc": "2.0", "id": req_id, "result": "just a string"})
    elif kind == "content-not-list":
        send({"jsonrpc": "2.0", "id": req_id, "result": {"content": 42}})
    elif kind == "error-without-message":
        send({"jsonrpc": "2.0", "id": req_id, "error": {"code": "not a number"}})
    elif kind == "wrong-id":
        send({"jsonrpc": "2.0", "id": 987654, "result": {"content": []}})
    elif kind == "wrong-version":
        send({"jsonrpc": "1.0", "id": req_id, "result": {"content": []}})
    elif kind == "array":
        send([{"jsonrpc": "2.0", "id": req_id, "result": {"content": []}}])
    elif kind == "unknown-block":
        send({"jsonrpc": "2.0", "id": req_id,
              "result": {"content": [{"type": "hologram", "data": 1}]}})
    else:
        send({"jsonrpc": "2.0", "id": req_id, "result": {"content": [{"type": "text", "text": "fine"}]}})


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        log("bad line from the client")
        continue
    method = msg.get("method")
    req_id = msg.get("id")
    log("got " + str(method))
    if method == "initialize":
        if MODE == "hang-init":
            forever()
        send({"jsonrpc": "2.0", "id": req_id, "result": {
            "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"},
        }})
    elif method == "tools/list":
        tools = TOOLS
        if MODE == "bad-tool":
            # A hint of the wrong type: one tool no strict reader accepts.
            # And one with an empty name (MCP requires one).
            tools = TOOLS + [{"name": "broken", "inputSchema": {"type": "object"},
                              "annotations": {"readOnlyHint": "yes"}},
                             {"name": "", "inputSchema": {"type": "object"}}]
        send({"jsonrpc": "2.0", "id": req_id, "result": {"tools": tools}})
    elif method == "tools/call":
        args = msg.get("params", {}).get("arguments") or {}
        if MODE == "crash":
            log("crashing")
            os._exit(3)
        elif MODE == "hang-call":
            log("hanging")
            continue
        elif MODE == "malformed":
            malformed(req_id, args.get("kind", ""))
        elif MODE == "big":
            size = 80 if args.get("kind") == "huge" else 50
            text = "x" * (size * 1024 * 1024)
            send({"jsonrpc": "2.0", "id": req_id,
                  "result": {"content": [{"type": "text", "text": text}]}})
        elif MODE == "close-stdout":
            log("closing stdout")
            sys.stdout.flush()
            os.close(1)
            # Keep running and keep reading: the process is alive, its stdout is gone.
            continue
        else:
            send({"jsonrpc": "2.0", "id": req_id, "result": {
                "content": [{"type": "text", "text": "done " + json.dumps(args, sort_keys=True)}]}})
    elif method == "notifications/cancelled":
        log("cancelled")
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": req_id, "result": {}})
    elif req_id is not None:
        send({"jsonrpc": "2.0", "id": req_id, "error": {"code": -32601, "message": "no such method"}})

log("stdin closed")
if MODE == "slow-exit":
    # Saving its state takes a moment: a client that kills it at once loses that.
    time.sleep(0.5)
    log("state saved")
# A server that ignores the end of its input keeps running (the client must kill it).
if MODE in ("close-stdout", "hang-call"):
    forever()
