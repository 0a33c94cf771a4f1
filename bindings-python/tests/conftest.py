import importlib.util

import pytest

# The community fastmcp tests run only in the fastmcp environments (.build/venv-fastmcp*).
collect_ignore_glob = [] if importlib.util.find_spec("fastmcp") else ["test_fastmcp*.py"]
if not collect_ignore_glob:
    import support  # noqa: F401 (imports fastmcp first, its authlib deprecation warnings silenced)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
