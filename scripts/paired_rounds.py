"""The rounds both cells of a scenario counted, read from a benchgate results
file: the pairing scripts/window-subsets.py and scripts/run-delay-analysis.py
re-read kept runs by (benchgate pairs by round the same way). Standard library
only; imported, not run."""

import json


def paired_rounds(path):
    """For each scenario of exactly two cells (side by side, or base vs head),
    `(scenario, cells, rounds, trials)`: `trials[k]` maps a round to cell k's
    successful trial of it, `rounds` lists the rounds both have, in order."""
    with open(path) as f:
        run = json.load(f)
    scenarios = {}
    for cell in run["results"]:
        scenarios.setdefault(cell["scenario"], []).append(cell)
    for scenario, cells in scenarios.items():
        if len(cells) != 2:
            continue
        trials = [
            {t["round"]: t for t in c["trials"] if t.get("metrics") and not t.get("failure")}
            for c in cells
        ]
        yield scenario, cells, sorted(set(trials[0]) & set(trials[1])), trials
