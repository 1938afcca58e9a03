// {{label}}: the entry file, loaded on the tool's first call.
// It must export `execute` by name and return a ToolResult. Never throw: return
// `isError: true` with a message the agent can act on.

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  name: string;
  style?: 'plain' | 'excited';
};

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    if (signal?.aborted) return err('Cancelled before it started.');
    const name = params.name.trim();
    if (!name) return err('`name` is empty: pass the name of the person to greet.');
    onUpdate?.({ content: [{ type: 'text', text: `Greeting ${name}...` }] });
    return ok(`Hello, ${name}${params.style === 'excited' ? '!' : '.'}`);
  } catch (e) {
    return err(`Failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
