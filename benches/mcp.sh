#!/usr/bin/env bash
# MCP benchmark: round trips over stdio and HTTP against a minimal server on the official
# TypeScript SDK (same run, same client), and throughput with 32 concurrent HTTP clients.
# Extra arguments go to bench.mjs: --calls N, --clients N, --per-client N.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d tests/mcp-clients/node_modules/@modelcontextprotocol/sdk ]; then
  (cd tests/mcp-clients && npm ci --no-audit --no-fund --loglevel=error)
fi
cargo build --release -p toolhost
exec node benches/mcp/bench.mjs "$@"
