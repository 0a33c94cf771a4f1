import importlib.metadata
import importlib.util

import pytest

# The community fastmcp tests run only in the fastmcp environments (.build/venv-fastmcp*).
collect_ignore_glob = [] if importlib.util.find_spec("fastmcp") else ["test_fastmcp*.py"]
# The agent-framework tests run only in their environment (.build/venv-agents, which also has fastmcp).
if not all(importlib.util.find_spec(m) for m in ("pydantic_ai", "langchain", "agents")):
    collect_ignore_glob.append("test_agents*.py")
# The tests that use no SDK (the shared vectors, the pure API) run once, on the 2.x line: make test
# runs the suite on both `mcp` majors, and theirs would be the same run twice.
SDK_INDEPENDENT = [
    "test_api.py",
    "test_catalog_vectors.py",
    "test_refresher_vectors.py",
    "test_templates.py",
    "test_tracking_vectors.py",
    "test_vectors.py",
]
if importlib.util.find_spec("mcp") and importlib.metadata.version("mcp").startswith("1."):
    collect_ignore_glob += SDK_INDEPENDENT
if importlib.util.find_spec("fastmcp"):
    import support  # noqa: F401 (imports fastmcp first, its authlib deprecation warnings silenced)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
