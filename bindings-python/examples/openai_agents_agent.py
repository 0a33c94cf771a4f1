"""An OpenAI Agents SDK agent that lists and reads an MCP server's resources through mcplens' tools:
OPENAI_API_KEY=… MCPLENS_MODEL=gpt-5 python openai_agents_agent.py python server.py"""

import asyncio
import os
import sys

from agents import Agent, Model, Runner
from agents.mcp import MCPServerStdio

from mcplens.integrations.openai_agents import tools


async def ask(question: str, model: Model | str, command: list[str]) -> str:
    async with MCPServerStdio({"command": command[0], "args": command[1:]}) as server:
        # Function tools over the server's session, enabled while a server has resources.
        agent = Agent(name="reader", model=model, tools=tools(sessions={"docs": server}))
        return str((await Runner.run(agent, question)).final_output)


if __name__ == "__main__":
    print(asyncio.run(ask("What does note 42 say?", os.environ["MCPLENS_MODEL"], sys.argv[1:])))
