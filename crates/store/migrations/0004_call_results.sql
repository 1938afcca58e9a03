-- The call log keeps each call's result for the console's history: the result as JSON
-- (MCP content blocks, isError, structuredContent), already redacted by the runtime and
-- cut by the host to a bounded size (see the host's `CallRecord::result_for_log`). NULL
-- for calls that never had one (refused, abandoned) and for rows written before this.
ALTER TABLE tool_calls ADD COLUMN result TEXT;
