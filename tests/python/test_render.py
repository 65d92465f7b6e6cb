"""Rendering (docs/python.md, Rendering): `render_mode="ansi"` returns, and `"human"` prints,
the text of `dhumbal-run show`'s renderer: the table as the agent to act sees it, with its
legal actions by index; never another seat's hidden cards. Run by scripts/test.sh."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import dhumbal

SUITS = "♠♥♦♣"
CARD = re.compile(r"(?:10|[A2-9JQK])[♠♥♦♣]|Jk[12]")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _rows(text: str) -> dict[int, str]:
    """The seat rows of a rendered table, by seat."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^  (▸| ) (\d) ", line)
        if m:
            rows[int(m.group(2))] = line
    return rows


def _cards(action: str) -> list[str]:
    """The cards an action names (`discard [9♥ 9♠]`, `take 5♦ from the pile`)."""
    return CARD.findall(action)


def _check_decision(text: str, seat: int, legal: list[str], known: dict[int, set[str]] | None) -> None:
    """`known`: the cards each other seat is known to hold (None: not checked)."""
    assert "\x1b" not in text, text
    lines = text.splitlines()
    assert re.match(rf"^round \d+ · turn \d+ · seat {seat} \(\S+\) to (call|discard|pick)$", lines[0]), text
    rows = _rows(text)
    assert rows[seat].startswith(f"  ▸ {seat} "), text
    for s, row in rows.items():
        if s == seat:
            continue
        assert not row.startswith("  ▸"), text
        # Face down, but for the cards the seat took from the pile (public).
        assert re.search(r"\(\d+\)$", row) or "out of the game" in row, row
        if known is not None:
            assert set(_cards(row)) <= known.get(s, set()), (row, known)
    # The acting seat's hand holds every card it may discard.
    for a in legal:
        if a.startswith("discard "):
            for c in _cards(a):
                assert c in _cards(rows[seat]), (c, rows[seat])
    pile = next(line for line in lines if line.startswith("    pile "))
    assert "stock" in pile, text
    # At a pick, the cards on offer.
    offered = [c for a in legal if a.startswith("take ") for c in _cards(a)]
    if offered:
        assert pile.split(" · may take ")[1].split(" · ")[0] == " ".join(offered), (pile, legal)
    else:
        assert "may take" not in pile, (pile, legal)
    # The legal actions, numbered by the action index that plays them.
    at = lines.index("  legal actions (action index, then action):")
    numbered = [re.sub(r"^\s+\d+\s+", "", line).rstrip() for line in lines[at + 1 :]]
    assert numbered == legal, (numbered, legal)
    for i, line in enumerate(lines[at + 1 :]):
        assert int(line.split()[0]) == i


def test_aec_ansi_renders_the_acting_agents_view_and_the_end():
    env = dhumbal.raw_env(rules="jhyap", players=3, render_mode="ansi")
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    known: dict[int, set[str]] = {}
    steps = 0
    for agent in env.agent_iter(max_iter=4000):
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            text = env.render()
            assert text.startswith("game over: seat "), text
            assert f"seat {int(info['winner'].split('_')[1])} wins" in text, text
            break
        seat = int(agent.split("_")[1])
        legal = env.legal_actions()
        _check_decision(env.render(), seat, legal, known)
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        taken = legal[action]
        if taken.startswith("take "):
            known.setdefault(seat, set()).update(_cards(taken))
        elif taken.startswith("discard "):
            known.get(seat, set()).difference_update(_cards(taken))
        env.step(action)
        steps += 1
    else:
        pytest.fail("the game did not end")
    assert steps > 10


def test_human_prints_what_ansi_returns(capsys):
    human = dhumbal.raw_env(rules="paper", players=4, render_mode="human")
    ansi = dhumbal.raw_env(rules="paper", players=4, render_mode="ansi")
    human.reset(seed=9)
    ansi.reset(seed=9)
    # Printed at reset; not a terminal here, so no colour.
    assert capsys.readouterr().out == ansi.render() + "\n"
    assert human.render() is None
    assert capsys.readouterr().out == ansi.render() + "\n"
    human.step(0)
    ansi.step(0)
    assert capsys.readouterr().out == ansi.render() + "\n"


def test_no_render_mode_renders_nothing_and_keeps_nothing():
    env = dhumbal.raw_env(rules="paper", players=4)
    env.reset(seed=1)
    assert env.render() is None
    # The native tables kept no view to draw.
    assert env._tables.render(0) == "(rendering was off at this decision)"


def test_gymnasium_renders_the_learners_view():
    env = dhumbal.DhumbalEnv(
        rules="paper", players=4, opponents=["aggressive", "conservative", "random"], seat=2, render_mode="ansi"
    )
    obs, info = env.reset(seed=3)
    assert info["seat"] == 2
    text = env.render()
    # The opponents played before: what they took is not followed here.
    _check_decision(text, 2, env.legal_actions(), None)
    rows = _rows(text)
    assert " 2 learner " in rows[2] and " 0 aggressive " in rows[0] and " 3 random " in rows[3], text
    assert "coins" in rows[0], text
    done = False
    while not done:
        action = int(np.flatnonzero(obs["action_mask"])[0])
        obs, reward, done, truncated, info = env.step(action)
        if not done:
            assert re.match(r"^round \d+ · turn \d+ · seat 2 \(learner\) to ", env.render()), env.render()
    assert env.render().startswith(f"game over: seat {info['winner']} wins"), env.render()
    with pytest.raises(ValueError, match="render_mode"):
        dhumbal.DhumbalEnv(render_mode="rgb_array")


def test_gymnasium_checker_with_rendering():
    from gymnasium.utils.env_checker import check_env

    env = dhumbal.DhumbalEnv(rules="paper", players=4, render_mode="ansi", invalid_action="penalize")
    check_env(env)


def test_colour_only_when_asked():
    env = dhumbal.raw_env(rules="paper", players=4, render_mode="ansi")
    env.reset(seed=2)
    plain = env.unwrapped._tables.render(0, False)
    coloured = env.unwrapped._tables.render(0, True)
    assert "\x1b" not in plain
    assert "\x1b[2m▒" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    if any(s in plain for s in "♥♦"):
        assert re.search(r"\x1b\[31m(?:10|[A2-9JQK])[♥♦]\x1b\[0m", coloured), coloured
