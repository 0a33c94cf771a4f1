"""Checks the demo's output for the lines that prove each step worked (run by `make test-demo`)."""

import json
import re
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    out = f.read()
checks = [
    ("the agent discovered the templates", r"catalog status ok, 1 templates, 1 resources"),
    ("the tool output lists the template", r'\{"resourceTemplates":\[\{"uriTemplate":"notes://\{topic\}/\{id\}"'),
    ("a concrete URI was read", r'read notes://rust/1 → "Ownership makes memory safety'),
    ("list_changed refreshed the catalog", r"after list_changed: catalog status ok, 2 templates"),
    ("the refreshed output has the new template", r'"uriTemplate":"topics://meetings/\{id\}"'),
    ("the tracker recorded reads", r"mcp:resources/read\s+1\s"),
    ("the tracker recorded tool calls", r"mcp:tools/call\s+2\s"),
    ("the tracker recorded the template listings", r"mcp:resources/templates/list\s+\d+\s"),
    ("per-URI figures", r"notes://rust/1\s+1\s"),
    ("server-everything templates listed", r"everything\s+demo://resource/dynamic/text/\{resourceId\}"),
    ("check passed on the demo server", r"No problems: clients will list everything"),
    ("the demo finished", r"demo: done"),
    ("the report of its own events was written", r"report of the demo's own events: \S+demo-report\.html\n?$"),
]
failed = [name for name, pattern in checks if not re.search(pattern, out)]
# The tool output lines must be valid JSON.
for line in out.splitlines():
    if line.startswith('{"resourceTemplates"'):
        json.loads(line)
# The report holds at least the events the summary counted (the check in step 4 adds more).
report = re.search(r"report of the demo's own events: (\S+)\s*$", out)
summarized = re.search(r"^(\d+) events$", out, re.M)
if report and summarized:
    with open(report.group(1), encoding="utf-8") as f:
        page = f.read()
    shown = re.search(r'data-metric="events" data-value="(\d+)"', page)
    if not shown or int(shown.group(1)) < int(summarized.group(1)):
        failed.append(f"a report of at least {summarized.group(1)} events (it shows {shown and shown.group(1)})")
    for section in ("overview", "over-time", "methods", "tools", "resources", "templates", "clients"):
        if f'id="{section}"' not in page:
            failed.append(f"the report's {section} section")
if failed:
    print(out)
    print("demo output is missing:", ", ".join(failed))
    sys.exit(1)
print(f"demo output: {len(checks)} checks passed")
