#!/usr/bin/env python3
"""Summarises an Autobahn fuzzing-client report (its index.json).

Prints the count of cases per behavior (OK, NON-STRICT, INFORMATIONAL,
UNIMPLEMENTED, FAILED) and per close behavior, names every case that is not
OK, and exits 1 if any case FAILED (its behavior or its close behavior), or
if the report holds no case; 0 otherwise.

Usage: autobahn_summary.py target/autobahn/report/index.json
"""
import collections
import json
import sys

BEHAVIORS = ["OK", "NON-STRICT", "INFORMATIONAL", "UNIMPLEMENTED", "FAILED"]


def case_key(case_id):
    """Sorts "1.1.10" after "1.1.9"."""
    return [int(p) if p.isdigit() else p for p in case_id.split(".")]


def main(path):
    with open(path) as f:
        index = json.load(f)
    failed = False
    total = 0
    for agent, cases in sorted(index.items()):
        total += len(cases)
        behavior = collections.Counter(c["behavior"] for c in cases.values())
        close = collections.Counter(c["behaviorClose"] for c in cases.values())
        print(f"autobahn: {agent}: {len(cases)} cases")
        for name, counter in (("behavior", behavior), ("close behavior", close)):
            known = [f"{b} {counter[b]}" for b in BEHAVIORS]
            other = [f"{b} {n}" for b, n in sorted(counter.items()) if b not in BEHAVIORS]
            print(f"  {name}: " + ", ".join(known + other))
        for case_id in sorted(cases, key=case_key):
            c = cases[case_id]
            if c["behavior"] == "OK" and c["behaviorClose"] in ("OK", "INFORMATIONAL"):
                continue
            print(
                f"  {case_id}: {c['behavior']} (close {c['behaviorClose']}, "
                f"code {c.get('remoteCloseCode')}, {c.get('duration')} ms) {c.get('reportfile', '')}"
            )
            failed |= "FAILED" in (c["behavior"], c["behaviorClose"])
    if total == 0:
        print("autobahn: the report holds no case", file=sys.stderr)
        return 1
    print("autobahn: " + ("FAILED cases above" if failed else "no case FAILED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
