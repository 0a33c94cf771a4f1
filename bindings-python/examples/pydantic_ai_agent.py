"""A Pydantic AI agent that lists and reads an MCP server's resources through mcplens' tools:
MCPLENS_MODEL=openai:gpt-5 python pydantic_ai_agent.py python server.py"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_ai import Agent
from pydantic_ai.models import Model

from mcplens.integrations.pydantic_ai import McplensToolset


async def ask(question: str, model: Model | str, command: list[str]) -> str:
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        # The resource tools, offered while a server has resources; also an MCPToolset, a fastmcp.Client.
        agent = Agent(model, toolsets=[McplensToolset(sessions={"docs": session})])
        return (await agent.run(question)).output


if __name__ == "__main__":
    print(asyncio.run(ask("What does note 42 say?", os.environ["MCPLENS_MODEL"], sys.argv[1:])))
