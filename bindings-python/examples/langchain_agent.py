"""A LangChain agent that lists and reads an MCP server's resources through mcplens' tools:
MCPLENS_MODEL=openai:gpt-5 python langchain_agent.py python server.py"""

import asyncio
import os
import sys

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcplens.integrations.langchain import McplensMiddleware


async def ask(question: str, model: BaseChatModel, command: list[str]) -> str:
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        # Registers the resource tools; each model call gets them while a server has resources.
        agent = create_agent(model, middleware=[McplensMiddleware(sessions={"docs": session})])
        result = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
        return str(result["messages"][-1].content)


if __name__ == "__main__":
    model = init_chat_model(os.environ["MCPLENS_MODEL"])
    print(asyncio.run(ask("What does note 42 say?", model, sys.argv[1:])))
