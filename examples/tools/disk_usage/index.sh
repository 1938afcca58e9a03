#!/usr/bin/env bash
# Disk Usage: the size of a folder and its largest entries (run by Toolhost once per call).
set -euo pipefail

fail() {
    # An error result: one JSON object on stdout.
    local message=${1//\\/\\\\}
    message=${message//\"/\\\"}
    printf '{"content": [{"type": "text", "text": "%s"}], "isError": true}\n' "$message"
    exit 0
}

target=${TOOL_PARAM_PATH:-$HOME}
case $target in
    /*) ;;
    *) target="$HOME/$target" ;;
esac
top=${TOOL_PARAM_TOP:-10}
[[ $top =~ ^[0-9]+$ ]] && ((top >= 1 && top <= 100)) || fail "top must be a whole number between 1 and 100"
[[ -e $target ]] || fail "No such file or folder: $target"

echo "::progress:: Measuring $target..." >&2
total=$(du -sh -- "$target" 2>/dev/null | cut -f1)
if [[ -d $target ]]; then
    files=$(find "$target" -type f 2>/dev/null | wc -l)
    printf '%s: %s in %s files\n' "$target" "$total" "$(printf "%'d" "$files")"
    # Direct entries, largest first; sizes in KiB for sorting, shown human-readable.
    find "$target" -mindepth 1 -maxdepth 1 -print0 2>/dev/null |
        xargs -0 -r du -sk -- 2>/dev/null |
        sort -rn -k1,1 |
        head -n "$top" |
        while IFS=$'\t' read -r kib entry; do
            printf '  %6s  %s\n' "$(numfmt --to=iec --from-unit=1024 "$kib")" "${entry##*/}"
        done
else
    printf '%s: %s\n' "$target" "$total"
fi
