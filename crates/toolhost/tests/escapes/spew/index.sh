if [ "$TOOL_PARAM_BYTES" -lt 0 ]; then
  yes "spew spew spew spew"
else
  head -c "$TOOL_PARAM_BYTES" /dev/zero | tr '\0' 'x'
fi
