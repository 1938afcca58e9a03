#!/usr/bin/env bash
# {{label}}: run by Toolhost once per call.
#
# The protocol:
# - each parameter is in TOOL_PARAM_<NAME> (and all of them as one JSON object on stdin);
# - what you print to stdout is the result text;
# - a stderr line starting with "::progress::" is a progress update the agent sees;
#   anything else on stderr goes to the logs only;
# - exiting with a non-zero status makes the call an error.
set -euo pipefail

name="${TOOL_PARAM_NAME:-}"
style="${TOOL_PARAM_STYLE:-plain}"

if [ -z "$name" ]; then
  echo '`name` is empty: pass the name of the person to greet.'
  exit 1
fi

echo "::progress:: Greeting ${name}..." >&2
if [ "$style" = "excited" ]; then
  echo "Hello, ${name}!"
else
  echo "Hello, ${name}."
fi
