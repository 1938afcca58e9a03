# A new session that ignores the signals of a hang-up or a polite stop…
setsid nohup bash -c "trap '' TERM HUP; exec -a '$TOOL_PARAM_TAG' sleep 600" >/dev/null 2>&1 &
# …and a grandchild whose parent is gone before the tool returns (a double fork).
(bash -c "exec -a '$TOOL_PARAM_TAG' sleep 600" >/dev/null 2>&1 &) &
# Return once both run, so that the test knows there was something to outlive the call.
for _ in $(seq 100); do
  [ "$(pgrep -c -f "^$TOOL_PARAM_TAG")" = 2 ] && break
  sleep 0.05
done
echo "left $(pgrep -c -f "^$TOOL_PARAM_TAG") behind"
