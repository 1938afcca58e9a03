#!/usr/bin/env python3
"""Word Frequency: counts words in a text or a file (run by Toolhost once per call)."""

import json
import os
import re
import sys
from collections import Counter

WORD = re.compile(r"[\w'-]+", re.UNICODE)
STOP_WORDS = frozenset(
    """a an and are as at be but by for from has have he her his i in is it its of on or
    our she so that the their them they this to was we were what when which who will with
    you your""".split()
)


def progress(text: str) -> None:
    print(f"::progress:: {text}", file=sys.stderr, flush=True)


def fail(message: str) -> int:
    print(json.dumps({"content": [{"type": "text", "text": message}], "isError": True}))
    return 0


def read_input(params: dict) -> str | None:
    text, path = params.get("text"), params.get("path")
    if (text is None) == (path is None):
        raise ValueError(
            "Provide either text or path" if text is None else "Provide only one of text or path"
        )
    if text is not None:
        return str(text)
    path = os.path.join(os.environ.get("HOME", "."), path)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise ValueError(f"File not found: {path}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None


def main() -> int:
    params = json.load(sys.stdin)
    top = params.get("top", 10)
    if not isinstance(top, (int, float)) or not 1 <= top <= 1000 or int(top) != top:
        return fail("top must be between 1 and 1000")
    skip = params.get("skip_stop_words", True)
    try:
        text = read_input(params)
    except ValueError as e:
        return fail(str(e))
    progress(f"Counting words in {len(text):,} characters...")
    words = [w.lower().strip("'-") for w in WORD.findall(text)]
    words = [w for w in words if w and not (skip and w in STOP_WORDS)]
    counts = Counter(words)
    if not counts:
        print("No words found.")
        return 0
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: int(top)]
    total = len(words)
    width = max(len(w) for w, _ in ranked)
    note = " (stop words skipped)" if skip else ""
    lines = [f"{total:,} words, {len(counts):,} distinct{note}."]
    for i, (word, n) in enumerate(ranked, 1):
        lines.append(f"{i:3}. {word:<{width}}  {n:>5}  {100 * n / total:.1f}%")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # the agent gets a message, not a traceback
        print(f"Failed: {e}")
        sys.exit(1)
