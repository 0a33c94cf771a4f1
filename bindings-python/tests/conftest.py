import importlib.util

import pytest

# The community fastmcp tests run only in the fastmcp environments (.build/venv-fastmcp*).
collect_ignore_glob = [] if importlib.util.find_spec("fastmcp") else ["test_fastmcp*.py"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
