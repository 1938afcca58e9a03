if err=$(dd if=/dev/zero of="$TOOL_PARAM_DIR/fill" bs=1M count="$TOOL_PARAM_MB" 2>&1); then
  echo "wrote $TOOL_PARAM_MB MiB"
else
  echo "$err"
  exit 1
fi
