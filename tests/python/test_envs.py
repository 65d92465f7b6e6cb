"""The Python package: PettingZoo and Gymnasium conformance, seeding, masks, the encodings
against the Rust agents, and scenario runs (docs/python.md). Run by scripts/test.sh."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import dhumbal

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _quiet():
    # PettingZoo's and Gymnasium's checkers warn about dict observations and infinite bounds.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("encoding", ["cards", "paper"])
@pytest.mark.parametrize("rules,players", [("paper", 4), ("simplified-2p", None), ("jhyap", 3)])
def test_pettingzoo_api(encoding, rules, players):
    from pettingzoo.test import api_test

    api_test(dhumbal.env(rules=rules, players=players, encoding=encoding), num_cycles=500)


@pytest.mark.parametrize("encoding", ["cards", "paper"])
def test_gymnasium_checker(encoding):
    from gymnasium.utils.env_checker import check_env

    for rules, players in [("paper", 4), ("simplified-2p", None)]:
        env = dhumbal.DhumbalEnv(rules=rules, players=players, encoding=encoding, invalid_action="penalize")
        check_env(env, skip_render_check=True)


def _play_aec(seed, steps=3000, encoding="cards"):
    env = dhumbal.raw_env(rules="jhyap", players=3, encoding=encoding)
    env.reset(seed=seed)
    rng = np.random.default_rng(7)
    trace = []
    for _ in range(steps):
        agent = env.agent_selection
        obs = env.observe(agent)
        if env.terminations[agent]:
            env.step(None)
            if not env.agents:
                env.reset(seed=seed + 1)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        a = int(rng.choice(legal))
        trace.append((agent, a, obs["observation"].sum(), env._cumulative_rewards[agent]))
        env.step(a)
    return trace


def test_seeding_is_reproducible_to_the_bit():
    assert _play_aec(11) == _play_aec(11)
    assert _play_aec(11) != _play_aec(12)

    def vec(seed):
        v = dhumbal.DhumbalVectorEnv(16, rules="paper", players=3, opponents=["aggressive", {"kind": "epsilon", "params": {"agent": "balanced", "epsilon": 0.3}}])
        obs, _ = v.reset(seed=seed)
        rng = np.random.default_rng(3)
        out = [obs["observation"].copy()]
        for _ in range(200):
            a = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
            obs, r, term, trunc, info = v.step(a)
            out.append((obs["observation"].copy(), r.copy(), term.copy()))
        return out

    a, b = vec(5), vec(5)
    assert all(np.array_equal(x[0] if isinstance(x, tuple) else x, y[0] if isinstance(y, tuple) else y) for x, y in zip(a, b))
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a[1:], b[1:]))


def test_a_vector_table_plays_the_games_a_single_table_plays():
    # Table 0 of a vector plays games 0, n, 2n...; a single table games 0, 1, 2...: game 0 is
    # the same game, with the same cards, in both.
    kw = dict(rules="simplified-2p", opponents=["aggressive"], encoding="paper")
    single = dhumbal.DhumbalEnv(**kw)
    obs, _ = single.reset(seed=99)
    vec = dhumbal.DhumbalVectorEnv(8, **kw)
    vobs, _ = vec.reset(seed=99)
    # The game takes 54 decisions; a cap, so that a game that never ends fails, not hangs.
    cap = 5_000
    for steps in range(1, cap + 1):
        assert np.array_equal(obs["observation"], vobs["observation"][0]), f"decision {steps}"
        assert np.array_equal(obs["action_mask"], vobs["action_mask"][0]), f"decision {steps}"
        actions = np.zeros(8, np.int64)
        obs, r, done, _, _ = single.step(0)
        vobs, vr, vdone, _, _ = vec.step(actions)
        assert r == vr[0] and done == vdone[0], f"decision {steps}: reward {r} / {vr[0]}, done {done} / {vdone[0]}"
        if done:
            break
    else:
        pytest.fail(f"game 0 of seed 99 did not end in {cap} decisions (single table and vector table 0)")
    # Many decisions compared, not one.
    assert steps > 20, steps


def _same(a, b, what=""):
    """Deep equality of nested lists, tuples, dicts and arrays (arrays bit for bit)."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, what
        assert a.tobytes() == b.tobytes(), what
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), what
        for k in a:
            _same(a[k], b[k], f"{what}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{what}[{i}]")
    else:
        assert a == b, (what, a, b)


def test_threads_change_no_result():
    # A vector's tables stepped on 1, 2 or 5 threads (37 tables: uneven shares) play the same
    # games move for move and return the same arrays: observations, action rows, masks,
    # rewards, ends, winners, seats, and what the tables say of themselves afterwards.
    n = 37

    def play(threads, encoding):
        v = dhumbal.DhumbalVectorEnv(
            n, rules="paper", players=3, encoding=encoding, opponents=["aggressive", "random"], threads=threads
        )
        assert v.num_threads == threads
        obs, info = v.reset(seed=21)
        rng = np.random.default_rng(5)
        out = []
        for _ in range(250):
            out.append(({k: x.copy() for k, x in obs.items()}, info["seat"].copy()))
            a = (rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1)
            # About half the tables draw their own random legal action (on their thread).
            a = np.where(rng.random(n) < 0.5, dhumbal.RANDOM_ACTION, a)
            obs, r, term, trunc, info = v.step(a)
            out.append((r.copy(), term.copy(), trunc.copy(), info.get("winner", np.full(n, -2)).copy(), info["action"].copy()))
        # The native tables leave a table given -1 as it was.
        t = v._tables
        t.step(np.where(np.arange(n) % 4 == 1, -1, dhumbal.RANDOM_ACTION), True)
        out.append({k: x.copy() for k, x in v._buf.batch().items()})
        out.append(v._buf.action.copy())
        out.append([(t.games_played(i), t.skipped(i), t.describe(i)) for i in range(n)])
        # Resets without a seed go on to each table's next game.
        obs, info = v.reset()
        out.append(({k: x.copy() for k, x in obs.items()}, info["seat"].copy()))
        return out

    for encoding in ["cards", "paper"]:
        one = play(1, encoding)
        # Games ended on the way (so that autoreset was crossed too).
        assert sum(int(x[1].sum()) for x in one[1:500:2]) > 20, encoding
        for threads in [2, 5]:
            _same(one, play(threads, encoding), f"{encoding}, {threads} threads")


def test_the_random_action_is_a_uniform_legal_draw_fixed_by_the_seed_and_the_game():
    # dhumbal.RANDOM_ACTION: each table draws a uniformly random legal action from its
    # learner's own seeded stream. The index it played comes back in infos["action"], and
    # playing those indices explicitly is the same game; a game's draws depend on the seed
    # and the game alone (not the table, the number of tables or the threads).
    kw = dict(rules="paper", players=4, encoding="cards")
    n = 48
    v = dhumbal.DhumbalVectorEnv(n, threads=2, **kw)
    twin = dhumbal.DhumbalVectorEnv(n, threads=1, **kw)
    obs, _ = v.reset(seed=17)
    twin.reset(seed=17)
    rng = np.random.default_rng(1)
    counts: dict[int, np.ndarray] = {}
    games = 0
    for step in range(400):
        legal = obs["action_mask"].sum(axis=1)
        # Some tables are given an index, the rest draw.
        given = (rng.random(n) * legal).astype(np.int64)
        a = np.where(rng.random(n) < 0.2, given, dhumbal.RANDOM_ACTION)
        obs, r, term, trunc, info = v.step(a)
        played = info["action"]
        assert np.array_equal(played[a >= 0], a[a >= 0]), step
        drawn = a == dhumbal.RANDOM_ACTION
        assert ((played[drawn] >= 0) & (played[drawn] < legal[drawn])).all(), step
        for k, x in zip(legal[drawn], played[drawn]):
            counts.setdefault(int(k), np.zeros(int(k), np.int64))[x] += 1
        # The twin, given the indices played, plays the same games.
        tobs, tr, tterm, _, tinfo = twin.step(played)
        assert np.array_equal(tinfo["action"], played), step
        for k in obs:
            assert np.array_equal(obs[k], tobs[k]), (step, k)
        assert np.array_equal(r, tr) and np.array_equal(term, tterm), step
        games += int(term.sum())
    assert games > 50, games
    # Uniform over the legal actions: every slot of the common sizes drawn about equally
    # often (seeded; a loose bound), the last one included.
    for k in [2, 3, 4]:
        c = counts[k]
        assert c.sum() > 200 * k and (abs(c / c.sum() - 1 / k) < 0.05).all(), (k, c)

    # Game 0 of a seed, every decision drawn: one table, table 0 of a vector of 8 (on 2 and 5
    # threads) and the single-table environment play it alike.
    def game0(env, tables):
        out = []
        if tables:
            obs, _ = env.reset(seed=40)
            for _ in range(500):
                out.append(obs["observation"][0].copy())
                obs, r, term, _, info = env.step(np.full(tables, dhumbal.RANDOM_ACTION))
                out.append((float(r[0]), int(info["action"][0])))
                if term[0]:
                    return out
        else:
            obs, _ = env.reset(seed=40)
            for _ in range(500):
                out.append(obs["observation"].copy())
                obs, r, done, _, info = env.step(dhumbal.RANDOM_ACTION)
                out.append((float(r), info["action"]))
                if done:
                    return out
        pytest.fail("game 0 did not end")

    one = game0(dhumbal.DhumbalVectorEnv(1, **kw), 1)
    assert len(one) > 20
    _same(one, game0(dhumbal.DhumbalVectorEnv(8, threads=2, **kw), 8), "8 tables, 2 threads")
    _same(one, game0(dhumbal.DhumbalVectorEnv(8, threads=5, **kw), 8), "8 tables, 5 threads")
    _same(one, game0(dhumbal.DhumbalEnv(**kw), 0), "single table")
    # With invalid_action="penalize" the random action is no invalid one (no penalty).
    p = dhumbal.DhumbalVectorEnv(4, invalid_action="penalize", reward="win", **kw)
    q = dhumbal.DhumbalVectorEnv(4, reward="win", **kw)
    p.reset(seed=2)
    q.reset(seed=2)
    for _ in range(30):
        x, y = p.step(np.full(4, dhumbal.RANDOM_ACTION)), q.step(np.full(4, dhumbal.RANDOM_ACTION))
        _same(x[:4], y[:4])
    # The AEC environment has no such action: it raises there.
    aec = dhumbal.env(**kw)
    aec.reset(seed=0)
    with pytest.raises(ValueError, match="not legal"):
        aec.step(dhumbal.RANDOM_ACTION)


def test_the_vector_releases_the_gil_while_its_tables_play():
    # Another Python thread runs during one long `reset` and during steps: it sleeps (letting
    # go of the GIL) and counts, which it can do only while the tables play without the GIL.
    import threading
    import time

    # 2,048 tables (each a coroutine with its own stack): long enough calls to count in.
    v = dhumbal.DhumbalVectorEnv(2048, rules="paper", players=4, encoding="cards", threads=1)
    count, stop = [0], threading.Event()

    def tick():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    t = threading.Thread(target=tick)
    t.start()
    try:
        while count[0] == 0:
            time.sleep(0.001)
        before = count[0]
        v.reset(seed=0)
        during_reset = count[0] - before
        actions = np.full(2048, dhumbal.RANDOM_ACTION, np.int64)
        before = count[0]
        for _ in range(5):
            v._tables.step(actions, True)
        during_steps = count[0] - before
    finally:
        stop.set()
        t.join()
    # Holding the GIL, the old build let the thread count 1 and 5 times.
    assert during_reset > 50 and during_steps > 50, (during_reset, during_steps)


def test_threaded_tables_refuse_an_illegal_action_and_change_nothing():
    kw = dict(rules="paper", players=4, encoding="cards")
    v = dhumbal.DhumbalVectorEnv(300, threads=2, **kw)
    twin = dhumbal.DhumbalVectorEnv(300, threads=1, **kw)
    obs, _ = v.reset(seed=3)
    twin.reset(seed=3)
    a = np.zeros(300, np.int64)
    # Table 250 is in the second thread's share: its illegal action moves no table.
    a[250] = int(np.flatnonzero(obs["action_mask"][250] == 0)[0])
    with pytest.raises(ValueError, match="table 250: action .* is not legal"):
        v.step(a)
    for _ in range(30):
        x, y = v.step(np.zeros(300, np.int64)), twin.step(np.zeros(300, np.int64))
        _same(x[:4], y[:4])
    with pytest.raises(ValueError, match="threads"):
        dhumbal.DhumbalVectorEnv(4, threads=0, **kw)
    # The default: one thread per 128 tables, at most the cores there are.
    assert dhumbal.DhumbalVectorEnv(8, **kw).num_threads == 1


def test_the_aec_wrapper_is_pettingzoos_in_every_answer():
    # `dhumbal.env` wraps the environment in a subclass of PettingZoo's OrderEnforcingWrapper
    # that reads the attributes of every step directly: the same checks before reset, and
    # the same game as PettingZoo's own wrapper, answer for answer.
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    fast = dhumbal.env(rules="paper", players=4, encoding="cards")
    slow = OrderEnforcingWrapper(dhumbal.raw_env(rules="paper", players=4, encoding="cards"))
    assert isinstance(fast, OrderEnforcingWrapper) and str(fast) == str(slow)
    for env in [fast, slow]:
        for name in ["agent_selection", "agents", "rewards", "terminations", "truncations", "infos"]:
            with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
                getattr(env, name)
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            env.last()
        with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before step"):
            env.step(0)
        with pytest.raises(AssertionError, match="before observe"):
            env.observe("player_0")

    def play(env):
        env.reset(seed=8)
        rng = np.random.default_rng(2)
        out = []
        for episode in range(3):
            for agent in env.agent_iter():
                obs, reward, term, trunc, info = env.last()
                out.append((agent, obs, reward, term, trunc, info, dict(env.rewards), dict(env._cumulative_rewards)))
                a = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
                env.step(a)
            out.append((list(env.agents), dict(env.terminations), dict(env.infos)))
            env.reset()
        return out

    a, b = play(fast), play(slow)
    assert len(a) > 100
    _same(a, b)


def test_arrays_bound_again_take_effect_at_the_next_reset():
    # Arrays bound after the tables started hold neither the pending decisions nor clean
    # feature rows: `step` refuses until a reset writes whole rows into them.
    from dhumbal._common import Buffers

    v = dhumbal.DhumbalVectorEnv(8, rules="paper", players=4, encoding="cards")
    twin = dhumbal.DhumbalVectorEnv(8, rules="paper", players=4, encoding="cards")
    v.reset(seed=5)
    for _ in range(3):
        v.step(np.zeros(8, np.int64))
    old = v._buf
    v._buf = Buffers(v._tables)
    for a in (v._buf.obs, v._buf.features, v._buf.mask):
        a.fill(7)  # what a reused or np.empty array may hold
    with pytest.raises(RuntimeError, match="bound since the last reset"):
        v._tables.step(np.zeros(8, np.int64), False)
    assert (old.mask.sum(axis=1) > 0).all()
    obs, _ = v.reset(seed=9)
    want, _ = twin.reset(seed=9)
    _same(obs, want)
    for _ in range(5):
        _same(v.step(np.zeros(8, np.int64))[:4], twin.step(np.zeros(8, np.int64))[:4])


def test_masked_random_play_never_makes_an_illegal_move():
    # 100,000 decisions by a uniformly random masked policy over all seats of 64 tables; the
    # engine checks every action and would raise on an illegal one.
    for rules, players, enc in [("paper", 4, "cards"), ("jhyap", 2, "paper"), ("yaniv", 5, "cards")]:
        v = dhumbal.DhumbalVectorEnv(64, rules=rules, players=players, encoding=enc)
        obs, _ = v.reset(seed=1)
        rng = np.random.default_rng(0)
        steps, games, last_slot = 0, 0, 0
        while steps < 100_000 // 3 + 1:
            mask = obs["action_mask"]
            legal = mask.sum(axis=1)
            assert (legal > 0).all()
            # The mask marks the decision's legal actions in the first slots and nothing past
            # them (docs/python.md); with `cards`, action rows past them are zero too.
            filled = np.arange(mask.shape[1]) < legal[:, None]
            assert np.array_equal(mask != 0, filled), (rules, steps)
            if "action_features" in obs:
                assert not obs["action_features"][~filled].any(), (rules, steps)
            u = rng.random(mask.shape) * mask
            a = u.argmax(axis=1)
            # The last marked slot is played too: a mask marking one slot too many would be
            # refused there.
            last_slot += int(((a == legal - 1) & (legal > 1)).sum())
            obs, r, term, trunc, info = v.step(a)
            games += int(term.sum())
            steps += 64
        # The engine accepted every masked action (it raises on an illegal one) through whole
        # games, the last legal slot included (seeded: 746, 6 and 21 games ended).
        assert games > 0 and last_slot > 1000, (rules, games, last_slot)


def test_an_illegal_action_raises_and_changes_nothing():
    # Every kind of illegal action (a slot the mask does not mark, a negative one, one past the
    # last slot) raises, and the table goes on exactly as a twin that was never given it.
    env = dhumbal.DhumbalEnv(rules="paper", players=2, encoding="paper")
    twin = dhumbal.DhumbalEnv(rules="paper", players=2, encoding="paper")
    obs, _ = env.reset(seed=4)
    twin.reset(seed=4)
    unmarked = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    for illegal in [unmarked, -1, -5, dhumbal.ACTION_SLOTS, 10**6]:
        with pytest.raises(ValueError, match="not legal"):
            env.step(illegal)
    # The engine's pending decision is the twin's (its legal actions, named by cards).
    assert env.legal_actions() == twin.legal_actions()
    for _ in range(6):
        a, b = env.step(0), twin.step(0)
        assert np.array_equal(a[0]["observation"], b[0]["observation"])
        assert np.array_equal(a[0]["action_mask"], b[0]["action_mask"])
        assert a[1:] == b[1:]
        if a[2]:
            break
    # The AEC environment likewise (the `cards` encoding: action rows compared too): after the
    # illegal actions, every agent's observation, mask and action rows, the rewards and the
    # legal actions the engine names are its twin's, and so are they move after move.
    aec = dhumbal.env(rules="paper", players=2, encoding="cards")
    aec_twin = dhumbal.env(rules="paper", players=2, encoding="cards")
    aec.reset(seed=4)
    aec_twin.reset(seed=4)

    def same_state(what):
        assert aec.agent_selection == aec_twin.agent_selection, what
        assert aec.unwrapped.legal_actions() == aec_twin.unwrapped.legal_actions(), what
        for agent in aec.possible_agents:
            a, b = aec.observe(agent), aec_twin.observe(agent)
            assert a.keys() == b.keys() == {"observation", "action_mask", "action_features"}, what
            for k in a:
                assert np.array_equal(a[k], b[k]), (what, agent, k)
        for field in ["rewards", "_cumulative_rewards", "terminations", "truncations", "infos"]:
            assert getattr(aec.unwrapped, field) == getattr(aec_twin.unwrapped, field), (what, field)

    mask = aec.observe(aec.agent_selection)["action_mask"]
    unmarked = int(np.flatnonzero(mask == 0)[0])
    for illegal in [unmarked, -1, dhumbal.ACTION_SLOTS, 10**6]:
        with pytest.raises(ValueError, match="not legal"):
            aec.step(illegal)
    same_state("after the illegal actions")
    for move in range(40):
        if aec.terminations[aec.agent_selection]:
            break
        legal = np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])
        a = int(legal[move % len(legal)])
        aec.step(a)
        aec_twin.step(a)
        same_state(f"move {move}")
    assert move > 5


def test_bad_settings_say_what_is_valid():
    with pytest.raises(ValueError, match="unknown encoding `pixels`; valid: cards, paper"):
        dhumbal.env(encoding="pixels")
    with pytest.raises(ValueError, match="opponents.0"):
        dhumbal.DhumbalEnv(rules="simplified-2p", opponents=[{"kind": "agressive"}])
    with pytest.raises(ValueError, match="rules: unknown field `hand_sise`; did you mean `hand_size`"):
        dhumbal.env(rules={"preset": "paper", "hand_sise": 5})
    # Fields the paper preset leaves unset are fields all the same.
    assert dhumbal.env(rules={"preset": "jhyap", "elimination_limit": 150, "max_rounds": 40}).unwrapped.possible_agents
    with pytest.raises(ValueError, match="2 given for a table of 2 players"):
        dhumbal.DhumbalEnv(rules="simplified-2p", opponents=["random", "random"])


def _mlp(sizes, seed):
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, 1 / np.sqrt(i), (o, i)).astype(np.float32), rng.normal(0, 0.1, o).astype(np.float32)) for i, o in zip(sizes, sizes[1:])]


def _same_games(ckpt, kind, encoding, seed):
    # Game g of a seed is the same cards in the AEC environment (the NumPy policy in both
    # seats) and in the Gymnasium one (NumPy in the learner's seat, the Rust agent of the same
    # checkpoint in the other): the games agree move for move only if the Rust agent saw
    # exactly what Python sees and chose as the NumPy policy does.
    policy = dhumbal.Policy(ckpt)
    assert policy.encoding == encoding
    aec = dhumbal.raw_env(rules="jhyap", players=2, encoding=encoding)
    aec.reset(seed=seed)
    moves = {0: [], 1: []}
    while not aec.terminations[aec.agent_selection]:
        agent = aec.agent_selection
        a = policy.act(aec.observe(agent))
        moves[int(agent[-1])].append(a)
        aec.step(a)
    winner = aec.infos["player_0"]["winner"]
    gym = dhumbal.DhumbalEnv(rules="jhyap", players=2, encoding=encoding, seat=0,
                             opponents=[{"kind": kind, "params": {"checkpoint": str(ckpt)}}])
    obs, _ = gym.reset(seed=seed)
    mine, done = [], False
    while not done:
        a = policy.act(obs)
        mine.append(a)
        obs, r, done, _, info = gym.step(a)
    assert mine == moves[0]
    assert info["winner"] == int(winner[-1])
    assert len(moves[1]) > 10


@pytest.mark.parametrize("encoding", ["cards", "paper"])
def test_a_network_saved_from_python_plays_as_the_rust_agent(tmp_path, encoding):
    # A random network saved from Python, seated as a Rust `ppo` agent.
    sizes = [117, 64, 128] if encoding == "paper" else [250 + 64, 64, 1]
    layers = _mlp(sizes, seed=3)
    ckpt = tmp_path / "net.safetensors"
    dhumbal.save_checkpoint(ckpt, layers, algorithm="ppo", encoding=encoding, rules="jhyap")
    meta, tensors = dhumbal.load_checkpoint(ckpt)
    assert meta["encoding"] == encoding and np.array_equal(tensors["policy.0.weight"], layers[0][0])
    _same_games(ckpt, "ppo", encoding, seed=21)
    # A network with a NaN is refused when saved (which layer), and when a file with one is
    # read (which tensor), never seated.
    broken = [(w.copy(), b.copy()) for w, b in layers]
    broken[1][1][0] = np.nan
    with pytest.raises(ValueError, match="layer 1: the bias holds a non-finite value"):
        dhumbal.save_checkpoint(tmp_path / "nan.safetensors", broken, algorithm="ppo", encoding=encoding, rules="jhyap")
    assert not (tmp_path / "nan.safetensors").exists()


@pytest.mark.parametrize("name,kind", [("ppo-cards-2p", "ppo"), ("dqn-paper-2p", "dqn"), ("ddqn-cards-2p", "ddqn")])
def test_a_network_trained_by_dhumbal_run_plays_in_python_as_in_rust(name, kind):
    ckpt = ROOT / "scenarios" / "learning" / "checkpoints" / "jhyap" / f"{name}.safetensors"
    for seed in (1, 2):
        _same_games(ckpt, kind, name.split("-")[1], seed)


def test_run_and_read_return_the_records(tmp_path):
    out = tmp_path / "run"
    outcome = dhumbal.run(ROOT / "scenarios" / "rhai-aggressive.yaml", out, rounds=64)
    assert isinstance(outcome, dhumbal.RunOutcome) and outcome.dir == str(out)
    assert [s.name for s in outcome.stages] == ["rhai-aggressive"] and outcome.rounds == outcome.rounds_now > 0
    df = outcome.records()
    assert df.height > 0 and {"stage", "deal", "seat", "agent", "won"} <= set(df.columns)
    again = dhumbal.read(out)
    assert again.equals(df)
    with pytest.raises(dhumbal.BadInput) as e:
        dhumbal.run(tmp_path / "missing.yaml", tmp_path / "x")
    assert e.value.code == 2 and "missing.yaml" in str(e.value)
    # The same folder again without force: refused as bad input, as dhumbal-run refuses it.
    with pytest.raises(dhumbal.BadInput) as e:
        dhumbal.run(ROOT / "scenarios" / "rhai-aggressive.yaml", out, rounds=64)
    assert e.value.code == 2 and "--force" in e.value.message
    # Stages seating different agents (their records' name enums differ) read as one table.
    champ = dhumbal.run(ROOT / "scenarios" / "championship.yaml", tmp_path / "c", rounds=2, report=False)
    assert [s.name for s in champ.stages] == ["rule-based", "search", "learning", "final"]
    assert champ.stage("final").winner in champ.stage("final").agents
    staged = champ.records()
    assert set(staged["stage"].unique()) == {"rule-based", "search", "learning", "final"}
    assert {"mcts", "ppo", "random", "aggressive"} <= set(staged["agent"].cast(str).unique())


def test_a_run_in_process_leaves_no_ctrl_c_handler_behind(tmp_path):
    # While a run plays, Ctrl-C stops it; once it returns, Ctrl-C is Python's again: two
    # SIGINTs are two KeyboardInterrupts, not the run's "second Ctrl-C quits with 130".
    code = f"""
import os, signal, time, dhumbal
dhumbal.run({str(ROOT / "scenarios" / "rhai-aggressive.yaml")!r}, {str(tmp_path / "run")!r}, rounds=8, report=False)
caught = 0
for _ in range(2):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    except KeyboardInterrupt:
        caught += 1
print("caught", caught)
"""
    import subprocess, sys
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("caught 2"), p.stdout + p.stderr


def test_a_stopped_run_raises_its_own_exception_and_resumes(tmp_path):
    # Ctrl-C while a run plays in this process: the engine stops between rounds with the
    # finished records kept and `dhumbal.run` raises `Interrupted` (exit code 130's meaning),
    # not a generic failure; `resume=True` then finishes it to the records of an uninterrupted
    # run.
    scenario = tmp_path / "long.yaml"
    scenario.write_text(json.dumps({
        "name": "long", "seed": 3, "deals": 400, "seating": "permute",
        "rules": {"preset": "paper", "players": 4},
        "agents": [{"kind": "ismcts", "params": {"iterations": 100}}, {"kind": "aggressive"}, {"kind": "balanced"}, {"kind": "random"}],
        "output": {"chunk_rounds": 64},
    }))
    out = tmp_path / "run"
    code = f"""
import os, signal, threading, dhumbal
threading.Timer(3.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    dhumbal.run({str(scenario)!r}, {str(out)!r}, report=False, threads=2)
    print("finished")
except dhumbal.Interrupted as e:
    print("interrupted", e.code, isinstance(e, dhumbal.RunError), "--resume" in e.message)
except KeyboardInterrupt:
    print("keyboard interrupt")
"""
    import subprocess, sys
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "interrupted 130 True True" in p.stdout, p.stdout + p.stderr
    resumed = dhumbal.run(scenario, out, report=False, resume=True, threads=2)
    assert 0 < resumed.rounds_now < resumed.rounds, resumed
    whole = dhumbal.run(scenario, tmp_path / "whole", report=False, threads=2)
    assert whole.rounds == resumed.rounds
    key = ["deal", "rotation", "round", "seat"]
    a = resumed.records().drop("decision_ns").sort(key)
    b = whole.records().drop("decision_ns").sort(key)
    assert a.equals(b)


def test_a_short_ppo_training_beats_random(tmp_path):
    # examples/python/ppo_masked.py, shortened: masked PPO on the vector environment against
    # `random` (paper rules, two players), then the policy seated in a scenario as `kind: ppo`.
    import sys

    sys.path.insert(0, str(ROOT / "examples" / "python"))
    import ppo_masked as ex

    before = ex.evaluate(ex.Agent(117, dhumbal.ACTION_SLOTS))
    agent = ex.train(120_000, seed=1, log=None)
    after = ex.evaluate(agent)
    assert after > 0.7 and after > before + 0.3, (before, after)
    ckpt = tmp_path / "policy.safetensors"
    dhumbal.save_checkpoint(ckpt, agent.policy, algorithm="ppo", encoding="paper", rules="paper")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(json.dumps({
        "name": "t", "seed": 3, "seating": "rotate", "rules": {"preset": "paper", "players": 2},
        "deals": 200, "agents": [{"id": "py", "kind": "ppo", "params": {"checkpoint": "policy.safetensors"}}, {"kind": "random"}],
    }))
    df = dhumbal.run(scenario, tmp_path / "run").records()
    rate = df.filter(df["agent"] == "py")["won"].mean()
    assert rate > 0.7, rate


def test_opponents_are_scenario_agent_entries_scripts_and_checkpoints_included():
    # A Rhai script (path relative to `base`, params checked against its declaration), a
    # search agent and a trained network, at one table; a bad script parameter is refused.
    env = dhumbal.DhumbalEnv(
        rules={"preset": "jhyap", "players": 4},
        opponents=[
            {"script": "heuristics/threshold.rhai", "params": {"take_at_most": 4}},
            {"kind": "ismcts", "params": {"iterations": 50}},
            {"kind": "ppo", "params": {"checkpoint": "learning/checkpoints/jhyap/ppo-cards-4p.safetensors"}},
        ],
        base=ROOT / "scenarios",
    )
    obs, info = env.reset(seed=2)
    done, steps = False, 0
    while not done:
        obs, r, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        steps += 1
    assert steps > 0 and 0 <= info["winner"] < 4
    with pytest.raises(ValueError, match="take_at_mots"):
        dhumbal.DhumbalEnv(rules={"preset": "jhyap", "players": 2}, base=ROOT / "scenarios",
                           opponents=[{"script": "heuristics/threshold.rhai", "params": {"take_at_mots": 4}}])


def test_resets_without_a_seed_go_on_through_the_seeds_games():
    # reset(seed=s) starts game 0 of s; each later reset without a seed starts the next game,
    # so seats rotate across episodes and the sequence is reproducible from the first seed.
    def seats_and_obs():
        env = dhumbal.DhumbalEnv(rules="yaniv", players=4, seat="rotate")
        out = []
        for k in range(6):
            obs, info = env.reset(seed=1) if k == 0 else env.reset()
            out.append((info["seat"], float(obs["observation"].sum())))
            if k % 2:
                obs, r, done, _, info = env.step(0)  # a reset mid-game abandons the game
        return out

    a, b = seats_and_obs(), seats_and_obs()
    assert a == b
    assert [s for s, _ in a] == [0, 1, 2, 3, 0, 1]
    with pytest.raises(ValueError, match="not legal"):
        v = dhumbal.DhumbalVectorEnv(4, rules="paper", players=2)
        v.reset(seed=0)
        v.step(np.array([0, -1, 0, 0]))
