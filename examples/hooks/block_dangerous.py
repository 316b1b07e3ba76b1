#!/usr/bin/env python3
"""PreToolUse hook (Bash), python3: deny destructive shell commands, ask about risky ones.

Answers with JSON on stdout (hookSpecificOutput.permissionDecision) and exit 0, the structured
form of Claude Code's protocol; prints nothing when it has no opinion.

    {"matcher": "Bash",
     "hooks": [{"type": "command", "command": "python3 \\"$CLAUDE_PROJECT_DIR/examples/hooks/block_dangerous.py\\""}]}
"""
import json
import re
import sys

DENY = [
    (r"\brm\s+(-[a-zA-Z]*r[a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*r)\w*\s+(/|~|\$HOME)(\s|$)", "recursive delete of / or the home directory"),
    (r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b", "piping a download into a shell"),
    (r"\bgit\s+push\b.*(--force|-f)\b.*\b(main|master)\b", "force-push to the main branch"),
    (r"\bmkfs(\.\w+)?\b", "formatting a filesystem"),
    (r":\(\)\s*\{\s*:\|:&\s*\};:", "fork bomb"),
]
ASK = [
    (r"\bgit\s+reset\s+--hard\b", "git reset --hard discards uncommitted work"),
    (r"\bgit\s+clean\s+-[a-zA-Z]*f", "git clean -f deletes untracked files"),
]


def decide(decision, reason):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
    sys.exit(0)


def main():
    try:
        data = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"block_dangerous.py: invalid JSON on stdin: {e}", file=sys.stderr)
        sys.exit(1)
    if data.get("tool_name") != "Bash":
        sys.exit(0)
    command = data.get("tool_input", {}).get("command", "")
    for pattern, why in DENY:
        if re.search(pattern, command):
            decide("deny", f"[block_dangerous] {why}: refusing `{command}`")
    for pattern, why in ASK:
        if re.search(pattern, command):
            decide("ask", f"[block_dangerous] {why}")
    sys.exit(0)


if __name__ == "__main__":
    main()
