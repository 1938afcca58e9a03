tag="fork-many-$TOOL_CALL_ID"
started=0
for ((i = 0; i < TOOL_PARAM_N; i++)); do
  (exec -a "$tag" sleep 60) 2>/dev/null &
  if [ $? -ne 0 ]; then break; fi
  started=$((started + 1))
done
echo "started $started"
