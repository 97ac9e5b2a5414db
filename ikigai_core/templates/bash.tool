#!/usr/bin/env bash
# The {{name}} tool: shout TEXT back in capitals (needs jq).
# Try it: ikigai tool test {{name}} '{"text": "hi"}'
set -euo pipefail
fail() { printf '{{name}}: %s\n' "$1" >&2; exit "${2:-1}"; }
case "${1-}" in
  --schema) cat <<'JSON'
{"name": "{{name}}", "description": "Shout TEXT back in capitals.",
 "parameters": {"type": "object", "required": ["text"], "properties": {
   "text": {"type": "string", "description": "what to shout."},
   "times": {"type": "integer", "description": "how many times to say it.", "default": 1}}}}
JSON
    exit 0 ;;
  -h|--help) echo "usage: {{program}} [--schema] < ARGUMENTS.json"; exit 0 ;;
  ?*) fail "unexpected argument '$1'; usage: {{program}} [--schema] < ARGUMENTS.json" 2 ;;
esac
args=$(cat)
[ -n "${args//[[:space:]]/}" ] || fail "expected a JSON object on stdin, got nothing"
problem=$(jq -r '
  if type != "object" then "expected a JSON object on stdin, got \(type)"
  elif .text == null then "missing required field '"'text'"'"
  elif (.text | type) != "string" then "field '"'text'"' must be a string"
  elif (.times // 1 | type != "number" or . != floor) then "field '"'times'"' must be an integer"
  else empty end' <<<"$args" 2>/dev/null) || fail "invalid JSON on stdin"
[ -z "$problem" ] || fail "$problem"
jq -cj 'if (.text | test("^\\s*$")) then
    {error: "text is empty: give some words to shout", error_code: "EMPTY_TEXT"}
  else (.text | ascii_upcase) as $t | {output: ([range(.times // 1) | $t] | join(" "))} end' \
  <<<"$args"
