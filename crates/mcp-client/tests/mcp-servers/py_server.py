"""An MCP server on the official Python SDK, over Streamable HTTP, requiring a bearer token.

Usage: python py_server.py PORT TOKEN [HEADER=VALUE]
(with HEADER=VALUE, that header is required too).
"""

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("py-test")


@server.tool(description="Multiply two numbers.")
def multiply(a: float, b: float) -> str:
    return str(a * b)


@server.tool(description="Say hello.")
def greet(name: str) -> str:
    return f"Hello, {name}!"


def main() -> None:
    port, token = int(sys.argv[1]), sys.argv[2]
    header, _, value = (sys.argv[3] if len(sys.argv) > 3 else "").partition("=")
    app = server.streamable_http_app()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            wrong_header = header and headers.get(header.lower().encode()) != value.encode()
            if headers.get(b"authorization") != f"Bearer {token}".encode() or wrong_header:
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token or header"})
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
