import importlib.util

import pytest

# The community fastmcp tests run only in the fastmcp environments (.build/venv-fastmcp*).
collect_ignore_glob = [] if importlib.util.find_spec("fastmcp") else ["test_fastmcp*.py"]
# The agent-framework tests run only in their environment (.build/venv-agents, which also has fastmcp).
if not all(importlib.util.find_spec(m) for m in ("pydantic_ai", "langchain", "agents")):
    collect_ignore_glob.append("test_agents*.py")
if importlib.util.find_spec("fastmcp"):
    import support  # noqa: F401 (imports fastmcp first, its authlib deprecation warnings silenced)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
