#!/usr/bin/env node
// UserPromptSubmit hook, node: refuse prompts that carry credentials, and give the model a
// short reminder otherwise.
//
// Blocks with JSON `{"decision": "block", "reason": ...}` (the prompt is erased and the reason
// shown to the user); otherwise adds `additionalContext`.
//
//   {"hooks": [{"type": "command", "command": "node \"$CLAUDE_PROJECT_DIR/examples/hooks/prompt-guard.js\""}]}
'use strict';

const SECRETS = [
  [/\bAKIA[0-9A-Z]{16}\b/, 'an AWS access key id'],
  [/\bsk-[A-Za-z0-9_-]{20,}\b/, 'an API secret key'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a private key'],
  [/\bghp_[A-Za-z0-9]{36}\b/, 'a GitHub token'],
];

let raw = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { raw += chunk; });
process.stdin.on('end', () => {
  let input;
  try {
    input = JSON.parse(raw);
  } catch (e) {
    process.stderr.write(`prompt-guard: invalid JSON on stdin: ${e.message}\n`);
    process.exit(1);
  }
  const prompt = String(input.prompt || '');
  for (const [pattern, what] of SECRETS) {
    if (pattern.test(prompt)) {
      process.stdout.write(JSON.stringify({
        decision: 'block',
        reason: `Your prompt contains ${what}; it was not sent. Remove it and rotate the credential.`,
      }));
      process.exit(0);
    }
  }
  process.stdout.write(JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'UserPromptSubmit',
      additionalContext: `prompt-guard: ${prompt.length} characters checked, no credentials found (session ${input.session_id}).`,
    },
  }));
});
