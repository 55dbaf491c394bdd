"""The lab server's resources over every process a campaign ran against, resumes included.

Each time `lab evaluate` runs a campaign (the first time, and each `--resume`), the lab server is
a process of its own, sampled by evaluator/connection/monitor.py. Each run appends that process's
summary to `<report>.servers` as one JSON line when it ends, however it ends (done, failed,
Ctrl-C), so a resumed report's `resources` covers every process, not only the last; the file goes
with the journal once the report is complete. A process killed outright (SIGKILL) writes nothing:
`processes` counts the ones measured, and the report's `resumed` list says how often it ran.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path


def servers_path(report: Path) -> Path:
    return Path(str(report) + ".servers")


def record(path: Path, summary: Mapping) -> None:
    """Append one process's summary and make it durable before the campaign goes on."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(summary, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def recorded(path: Path) -> list[dict]:
    """Every whole line (a line cut short by a crash is not a summary)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out
