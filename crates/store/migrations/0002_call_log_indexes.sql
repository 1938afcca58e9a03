-- The call log is read newest first (ORDER BY started_at DESC, id DESC), whole or
-- filtered by tool, agent, user or outcome, and bounded by start time. An index on
-- (filter column, started_at, id) serves each such page by reading its rows in order and
-- stopping after a page, however large the log; (tool, outcome, …) serves a tool's calls
-- that ended one way. (tool_calls_by_time already serves the log unfiltered; the old
-- (tool, started_at) gives way to (tool, started_at, id), which also orders ties.)
DROP INDEX tool_calls_by_tool;
CREATE INDEX tool_calls_by_tool ON tool_calls (tool, started_at, id);
CREATE INDEX tool_calls_by_tool_outcome ON tool_calls (tool, outcome, started_at, id);
CREATE INDEX tool_calls_by_agent ON tool_calls (agent_id, started_at, id);
CREATE INDEX tool_calls_by_principal ON tool_calls (principal, started_at, id);
CREATE INDEX tool_calls_by_outcome ON tool_calls (outcome, started_at, id);
