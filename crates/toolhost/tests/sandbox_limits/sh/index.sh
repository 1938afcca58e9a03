#!/usr/bin/env bash
eval "$TOOL_PARAM_CMD"
