#!/usr/bin/env python3
"""{{label}}: run by Toolhost once per call.

The protocol:
- the parameters arrive on stdin as one JSON object (and each as TOOL_PARAM_<NAME>);
- what you print to stdout is the result text; to return several blocks or an error,
  print one JSON object instead: {"content": [{"type": "text", "text": "..."}], "isError": true};
- a stderr line starting with "::progress::" is a progress update the agent sees;
  anything else on stderr goes to the logs only;
- exiting with a non-zero status makes the call an error.
"""

import json
import sys


def progress(text: str) -> None:
    print(f"::progress:: {text}", file=sys.stderr, flush=True)


def main() -> int:
    params = json.load(sys.stdin)
    name = str(params.get("name", "")).strip()
    if not name:
        print("`name` is empty: pass the name of the person to greet.")
        return 1
    progress(f"Greeting {name}...")
    ending = "!" if params.get("style") == "excited" else "."
    print(f"Hello, {name}{ending}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # report, don't crash with a traceback the agent can't use
        print(f"Failed: {e}")
        sys.exit(1)
