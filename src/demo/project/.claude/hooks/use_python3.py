#!/usr/bin/env python3
"""PreToolUse hook: rewrites `python ...` to `python3 ...` in Bash commands.

Written the way Claude Code users write hooks: JSON on stdin, JSON on stdout.
"""
import json
import re
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
fixed = re.sub(r"(^|[;&|]\s*)python(\s)", r"\1python3\2", command)
if fixed != command:
    json.dump(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {**event["tool_input"], "command": fixed},
                "additionalContext": "The hook rewrote `python` to `python3`, the name Python 3 has everywhere (`python` may be missing, or Python 2).",
            }
        },
        sys.stdout,
    )
sys.exit(0)
