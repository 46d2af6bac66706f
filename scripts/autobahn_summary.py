#!/usr/bin/env python3
"""Summarises an Autobahn fuzzing-client report (its index.json).

Prints the count of cases per behavior (OK, NON-STRICT, INFORMATIONAL,
UNIMPLEMENTED, FAILED, and any other the suite reports) and per close
behavior, names every case that is not OK, and exits 1 unless every case
passed, or if the report holds no case; 0 otherwise.

A case passes on an allow-list, not by the absence of "FAILED": the suite
has other bad outcomes (UNCLEAN, WRONG CODE, FAILED BY CLIENT, NO_CLOSE,
...), and a new one must fail the run too. Its behavior must be OK,
NON-STRICT (allowed by the RFC, not the strictest reading) or INFORMATIONAL
(no verdict), and its close behavior OK or INFORMATIONAL. UNIMPLEMENTED
passes only for the permessage-deflate cases (12.*, 13.*), which mino does
not negotiate.

Usage: autobahn_summary.py target/autobahn/report/index.json
       autobahn_summary.py --self-test
"""
import collections
import json
import sys

BEHAVIORS = ["OK", "NON-STRICT", "INFORMATIONAL", "UNIMPLEMENTED", "FAILED"]
# What a case's behavior and its close behavior may be.
PASSING = {"OK", "NON-STRICT", "INFORMATIONAL"}
PASSING_CLOSE = {"OK", "INFORMATIONAL"}
# Compression: mino does not negotiate permessage-deflate.
UNNEGOTIATED = ("12.", "13.")


def passes(case_id, case):
    """True when the case's outcome is on the allow-list."""
    behavior, close = case.get("behavior"), case.get("behaviorClose")
    if behavior == "UNIMPLEMENTED" and case_id.startswith(UNNEGOTIATED):
        return True
    return behavior in PASSING and close in PASSING_CLOSE


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
        behavior = collections.Counter(c.get("behavior") for c in cases.values())
        close = collections.Counter(c.get("behaviorClose") for c in cases.values())
        print(f"autobahn: {agent}: {len(cases)} cases")
        for name, counter in (("behavior", behavior), ("close behavior", close)):
            known = [f"{b} {counter[b]}" for b in BEHAVIORS]
            other = [f"{b} {n}" for b, n in sorted(counter.items(), key=str) if b not in BEHAVIORS]
            print(f"  {name}: " + ", ".join(known + other))
        for case_id in sorted(cases, key=case_key):
            c = cases[case_id]
            if c.get("behavior") == "OK" and c.get("behaviorClose") == "OK":
                continue
            ok = passes(case_id, c)
            print(
                f"  {case_id}: {c.get('behavior')} (close {c.get('behaviorClose')}, "
                f"code {c.get('remoteCloseCode')}, {c.get('duration')} ms) {c.get('reportfile', '')}"
                + ("" if ok else "  <- fails the run")
            )
            failed |= not ok
    if total == 0:
        print("autobahn: the report holds no case", file=sys.stderr)
        return 1
    print("autobahn: " + ("cases above fail the run" if failed else "every case passed"))
    return 1 if failed else 0


def self_test():
    """The gate against made-up reports: each bad outcome fails, the good ones pass."""
    import contextlib
    import io
    import os
    import tempfile

    def run(cases):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "index.json")
            with open(path, "w") as f:
                json.dump({"mino": cases}, f)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                return main(path)

    def case(behavior, close="OK"):
        return {"behavior": behavior, "behaviorClose": close, "remoteCloseCode": 1000, "duration": 1}

    good = {"1.1.1": case("OK"), "6.4.3": case("NON-STRICT"), "7.13.1": case("INFORMATIONAL", "INFORMATIONAL"),
            "12.1.1": case("UNIMPLEMENTED")}
    assert run(good) == 0, "OK, NON-STRICT, INFORMATIONAL and unnegotiated compression pass"
    assert run({}) == 1, "an empty report fails"
    bad = [case("FAILED"), case("OK", "FAILED"), case("OK", "UNCLEAN"), case("OK", "WRONG CODE"),
           case("OK", "FAILED BY CLIENT"), case("OK", "NO_CLOSE"), case("UNIMPLEMENTED"), case("SOMETHING NEW"),
           {"behavior": "OK"}]
    for c in bad:
        assert run(dict(good, **{"5.1": c})) == 1, f"{c} must fail the run"
    print(f"autobahn_summary.py: self-test passed ({len(bad)} bad outcomes fail, good ones pass)")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main(sys.argv[1]))
