#!/usr/bin/env python3
"""A participant of a served study as a bot, through the JSON API (docs/studies.md); and a
load test of many at once. Python's standard library only.

    python3 scripts/study-client.py http://127.0.0.1:8080 --code P01
    python3 scripts/study-client.py http://127.0.0.1:8080 --signup --participants 50

Each bot signs in (or signs up), then, until its games are over, asks for the state's legal
actions and answers: the advisor's hint when the study gives hints and --follow-hints is on,
else a simple rule (call when allowed, otherwise the discard that sheds the most cards and a
draw from the stock). Every action's round trip (post to the next decision's state, the
agents' moves included) is timed; with several participants the median and the 99th
percentile are printed, with the decisions made and the failures.
"""

import argparse
import json
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request


class Refused(Exception):
    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


def call(base, method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        try:
            message = json.load(e).get("error", "")
        except ValueError:
            message = str(e)
        raise Refused(e.code, message) from None


def choose(view):
    """A simple rule: call when the call is legal, else shed the most cards, else draw."""
    legal = view["legal"]
    for i, a in enumerate(legal):
        if a["kind"] == "call" and a["text"] == "call":
            return i
    discards = [(len(a["cards"]), i) for i, a in enumerate(legal) if a["kind"] == "discard"]
    if discards:
        return max(discards)[1]
    for i, a in enumerate(legal):
        if a["kind"] == "draw":
            return i
    return 0


def play(base, code=None, signup=False, access_code=None, follow_hints=False, times=None):
    """Plays one participant's games; returns (code, decisions made, results)."""
    if signup:
        body = {"consent": True}
        if access_code:
            body["access_code"] = access_code
        r = call(base, "POST", "/api/signup", body)
    else:
        r = call(base, "POST", "/api/signin", {"code": code, "consent": True})
    code, token, state = r["participant"], r["token"], r["state"]
    made = 0
    while state["status"] == "play":
        index = choose(state)
        if follow_hints and state["hints"]:
            h = call(base, "POST", f"/api/participants/{code}/hint", {"seq": state["seq"]}, token)
            if h["hint"].get("choice") is not None:
                index = h["hint"]["choice"]
        start = time.perf_counter()
        r = call(
            base,
            "POST",
            f"/api/participants/{code}/action",
            {"seq": state["seq"], "action": index},
            token,
        )
        if times is not None:
            times.append(time.perf_counter() - start)
        state = r["state"]
        made += 1
    if state["status"] != "done":
        raise RuntimeError(f"{code}: the session ended as {state['status']}: {state}")
    return code, made, state["results"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("url", help="the server, e.g. http://127.0.0.1:8080")
    p.add_argument("--code", action="append", default=[], help="a participant code (repeatable)")
    p.add_argument("--signup", action="store_true", help="sign up for new codes instead")
    p.add_argument("--access-code", help="the study's access code for sign-up")
    p.add_argument("--participants", type=int, default=1, help="with --signup: how many at once")
    p.add_argument("--follow-hints", action="store_true", help="play the advisor's hints")
    a = p.parse_args()
    base = a.url.rstrip("/")
    who = [None] * a.participants if a.signup else a.code
    if not who:
        p.error("give --code CODE (repeatable) or --signup")
    times, done, failures = [], [], []
    lock = threading.Lock()

    def one(code):
        mine = []
        try:
            result = play(base, code, a.signup, a.access_code, a.follow_hints, mine)
            with lock:
                done.append(result)
                times.extend(mine)
        except Exception as e:  # a bot's failure is counted and shown, the others go on
            with lock:
                failures.append(f"{code or 'sign-up'}: {e}")

    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(c,)) for c in who]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    for code, made, results in sorted(done):
        won = sum(1 for r in results if r["won"])
        print(f"{code}: {made} decisions, {len(results)} games, won {won}")
    if times:
        ms = sorted(t * 1000 for t in times)
        p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
        print(
            f"{len(done)} participants, {len(ms)} decisions in {wall:.1f} s: round trip "
            f"median {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms"
        )
    for f in failures:
        print("failed:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
