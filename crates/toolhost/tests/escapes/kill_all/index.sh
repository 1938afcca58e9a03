sleep 30 &
child=$!
if [ "$TOOL_PARAM_TARGET" = all ]; then
  kill -9 -1
else
  kill -9 "$child"
fi
wait "$child" 2>/dev/null
echo "survived"
