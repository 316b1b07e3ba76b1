#!/usr/bin/env bash
# PreToolUse hook (Edit|Write|MultiEdit), bash + jq: refuse edits to secrets, lock files and
# git internals. Blocks by exit code 2 with the reason on stderr (Claude Code's protocol).
#
#   {"matcher": "Edit|Write|MultiEdit",
#    "hooks": [{"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR/examples/hooks/protect-files.sh\""}]}
set -euo pipefail

input="$(cat)"
tool="$(jq -r '.tool_name // ""' <<<"$input")"
path="$(jq -r '.tool_input.file_path // .tool_input.notebook_path // ""' <<<"$input")"
# Windows-style separators are normalised so `.git\config` is caught too.
path="${path//\\//}"

[ -z "$path" ] && exit 0

for pattern in '.env' 'package-lock.json' '.git/' 'id_rsa' '.pem'; do
  case "$path" in
    *"$pattern"*)
      echo "Blocked: $tool on $path touches a protected file (matched '$pattern'). Ask the user to make this change by hand." >&2
      exit 2
      ;;
  esac
done
exit 0
