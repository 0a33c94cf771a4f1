"""Every code block in README.md is executed by the test suite (run by `make test-readme`).

- ```rust blocks run as doctests of the core (`core/src/lib.rs` includes README.md).
- ```python / ```js blocks must be preceded by `<!-- file: PATH -->` and equal that file verbatim; the
  file is an example the package's tests run.
- ```json blocks likewise (a host configuration a test launches as the host would).
- ```sh blocks may only hold commands CI runs (`make demo`, `make test`), or be preceded by
  `<!-- test-dist -->`: `make test-dist` runs that block line by line (packaging/test_dist.py).
"""

import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text(encoding="utf-8")
blocks = list(
    re.finditer(
        r"(?:<!-- file: (?P<file>\S+) -->\n|(?P<dist><!-- test-dist -->\n))?```(?P<lang>\w*)\n(?P<body>.*?)```", readme, re.S
    )
)
problems = []
counts: dict[str, int] = {}
for b in blocks:
    lang, body, file = b["lang"], b["body"], b["file"]
    counts[lang] = counts.get(lang, 0) + 1
    if lang == "rust":
        continue
    if lang == "sh" and b["dist"]:
        continue
    if lang == "sh":
        for line in body.splitlines():
            command = line.split("#")[0].strip()
            if command and command not in ("make demo", "make test"):
                problems.append(f"sh block runs {command!r}, which CI does not run")
        continue
    if lang in ("python", "js", "json"):
        if not file:
            problems.append(f"a {lang} block has no <!-- file: … --> marker")
            continue
        text = (root / file).read_text(encoding="utf-8")
        if text.rstrip() != body.rstrip():
            problems.append(f"the {lang} block differs from {file}")
        continue
    problems.append(f"a code block of language {lang!r} is not executed by any test")
if problems:
    sys.exit("README.md: " + "; ".join(problems))
print(f"README.md: {sum(counts.values())} code blocks, all executed ({counts})")
