"""A run's records read by pandas and DuckDB as one table (docs/records.md, "The dataset
`rounds/`"; docs/python.md, `dhumbal.read(..., frame="pandas")`), value for value what
Polars, the project's reference reader, reads, and the documented example queries run as
written. Run by scripts/test.sh."""

from __future__ import annotations

import csv
import json
import math
import pathlib
import re

import duckdb
import pandas as pd
import polars as pl
import pytest

import dhumbal

ROOT = pathlib.Path(__file__).resolve().parents[2]
KEY = ["stage", "deal", "rotation", "round", "seat"]
ENUMS = ["stage", "agent", "end_reason"]
# Small parts (output.chunk_rounds), so that every stage's dataset is several files. The
# stages seat different agents (their name enums differ) and score differently (coins,
# points: points_delta, eliminated and game_won are filled only there). The run folder is
# `reports/championship` with a stage `final` so that docs/records.md's example, which reads
# `reports/championship/final/rounds`, runs unchanged from the folder above it.
STAGED = {
    "name": "records", "seed": 11, "seating": "rotate", "output": {"chunk_rounds": 40},
    "stages": [
        {"name": "groups", "games": 6, "rules": {"preset": "jhyap", "players": 3},
         "agents": [{"kind": "balanced"}, {"kind": "random"}, {"kind": "opportunistic"}]},
        {"name": "final", "deals": 48, "rules": {"preset": "paper", "players": 4},
         "agents": [{"kind": "aggressive"}, {"kind": "random"}, {"kind": "conservative"}, {"kind": "balanced"}]},
    ],
}
SINGLE = {
    "name": "single", "seed": 3, "seating": "rotate", "output": {"chunk_rounds": 50}, "deals": 40,
    "rules": {"preset": "paper", "players": 3},
    "agents": [{"kind": "opportunistic"}, {"kind": "random"}, {"kind": "aggressive"}],
}


def _run(folder: pathlib.Path, scenario: dict, out: pathlib.Path, **kw):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario['name']}.yaml"
    path.write_text(json.dumps(scenario))
    frame = kw.pop("frame", "polars")
    return dhumbal.run(path, out, report=False, **kw).records(frame=frame)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("records")
    staged = base / "reports" / "championship"
    _run(base, STAGED, staged)
    single = base / "single"
    single_df = _run(base, SINGLE, single, frame="pandas")
    for rounds in [staged / "groups" / "rounds", staged / "final" / "rounds", single / "rounds"]:
        assert len(list(rounds.glob("*.parquet"))) >= 3, f"{rounds}: one part; the test needs several"
    return {"base": base, "staged": staged, "single": single, "single_df": single_df}


# Rows as plain Python values (enums as strings, nulls as None), to compare readers whose
# types differ (pandas holds the nullable u64 `decision_ns` as float64 with NaN for null).

def _pl_rows(df: pl.DataFrame, sort: bool = True):
    df = df.with_columns([pl.col(c).cast(pl.String) for c in ENUMS])
    if sort:
        df = df.sort(KEY)
    return df.columns, df.rows()


def _pd_rows(df: pd.DataFrame, sort: bool = True):
    if sort:
        df = df.sort_values(KEY, kind="stable")
    cols = []
    for c in df.columns:
        values = df[c].tolist()
        cols.append([None if isinstance(v, float) and math.isnan(v) else v for v in values])
    return list(df.columns), list(zip(*cols))


def _duck_rows(glob: str):
    cur = duckdb.connect().execute(f"SELECT * FROM read_parquet('{glob}') ORDER BY {', '.join(KEY)}")
    return [d[0] for d in cur.description], cur.fetchall()


def _summary(path: pathlib.Path):
    # summary.csv, written by the run from its own tallies: an independent count per agent.
    with open(path, newline="") as f:
        return {r["agent"]: r for r in csv.DictReader(f)}


def _same_rows(got, want, what):
    (gcols, grows), (wcols, wrows) = got, want
    assert gcols == wcols, f"{what}: columns {gcols} != {wcols}"
    assert len(grows) == len(wrows), f"{what}: {len(grows)} rows, Polars reads {len(wrows)}"
    for i, (g, w) in enumerate(zip(grows, wrows)):
        assert g == w, f"{what}: row {i} differs: {dict(zip(gcols, g))} != {dict(zip(wcols, w))}"


def _wins(stage_dir: pathlib.Path, rounds_glob: str, pandas_df: pd.DataFrame, polars_df: pl.DataFrame):
    """Per agent (wins, rounds[, games won]) by each reader's own API, against summary.csv."""
    summary = _summary(stage_dir / "summary.csv")
    points = "game_wins" in next(iter(summary.values())) and int(next(iter(summary.values()))["games"]) > 0
    want = {a: (int(r["wins"]), int(r["rounds"])) + ((int(r["game_wins"]),) if points else ()) for a, r in summary.items()}
    aggs = [pl.col("won").sum(), pl.len()] + ([pl.col("game_won").sum()] if points else [])
    by_polars = {r[0]: tuple(r[1:]) for r in polars_df.group_by(pl.col("agent").cast(pl.String)).agg(aggs).rows()}
    g = pandas_df.groupby("agent", observed=True)
    by_pandas = {a: (int(w), int(n)) + ((int(gw),) if points else ())
                 for a, w, n, gw in zip(g.size().index, g["won"].sum(), g.size(), g["game_won"].sum())}
    sql = "SELECT agent, sum(won::INT), count(*)" + (", sum(game_won::INT)" if points else "")
    by_duckdb = {r[0]: tuple(r[1:]) for r in duckdb.connect().execute(f"{sql} FROM read_parquet('{rounds_glob}') GROUP BY agent").fetchall()}
    assert by_polars == want, ("polars", by_polars, want)
    assert by_pandas == want, ("pandas", by_pandas, want)
    assert by_duckdb == want, ("duckdb", by_duckdb, want)
    assert sum(w[1] for w in want.values()) == polars_df.height == len(pandas_df)
    return want


@pytest.mark.parametrize("stage", ["groups", "final"])
def test_pandas_and_duckdb_read_a_stages_parts_as_polars_does(runs, stage):
    stage_dir = runs["staged"] / stage
    rounds = stage_dir / "rounds"
    ref = pl.read_parquet(rounds / "*.parquet")
    assert ref.height > 0 and set(ref["stage"].cast(pl.String).unique()) == {stage}
    # Null and filled decision times both occur (one deal in 16 is timed): nulls are compared.
    assert 0 < ref["decision_ns"].null_count() < ref.height
    frame = pd.read_parquet(rounds)  # the folder, as docs/records.md reads it
    _same_rows(_pd_rows(frame), _pl_rows(ref), f"pd.read_parquet({stage})")
    _same_rows(_duck_rows(f"{rounds}/*.parquet"), _pl_rows(ref), f"duckdb read_parquet({stage})")
    wins = _wins(stage_dir, f"{rounds}/*.parquet", frame, ref)
    assert len(wins) == len(STAGED["stages"][["groups", "final"].index(stage)]["agents"])
    # docs/records.md: the names are enums, pandas `category`; the rest integers and booleans.
    for c in ENUMS:
        assert isinstance(frame[c].dtype, pd.CategoricalDtype), (c, frame[c].dtype)
    for c in ["starter", "won", "called", "call_success", "eliminated", "game_won"]:
        assert pd.api.types.is_bool_dtype(frame[c]), (c, frame[c].dtype)
    for c in ["deal", "rotation", "round", "seat", "coin_delta", "points_delta", "standing", "turns", "decisions"]:
        assert pd.api.types.is_integer_dtype(frame[c]), (c, frame[c].dtype)
    # The stages really differ: coins move only in the coin stage, points only in the other.
    moved = "points_delta" if stage == "groups" else "coin_delta"
    still = "coin_delta" if stage == "groups" else "points_delta"
    assert (frame[moved] != 0).any() and (frame[still] == 0).all()


def test_every_stage_reads_as_one_table(runs):
    out = runs["staged"]
    ref = dhumbal.read(out)
    assert set(ref["stage"].unique()) == {"groups", "final"}
    # dhumbal.read(frame="pandas") reads the same files in the same order: rows compared in order.
    frame = dhumbal.read(out, frame="pandas")
    assert isinstance(frame, pd.DataFrame)
    _same_rows(_pd_rows(frame, sort=False), _pl_rows(ref, sort=False), "dhumbal.read(frame='pandas')")
    # DuckDB over every stage's parts at once.
    _same_rows(_duck_rows(f"{out}/*/rounds/*.parquet"), _pl_rows(ref), "duckdb read_parquet(*/rounds)")
    per_stage = {s: _summary(out / s / "summary.csv") for s in ("groups", "final")}
    assert ref.height == len(frame) == sum(int(r["rounds"]) for s in per_stage.values() for r in s.values())


def test_a_single_stage_run_reads_as_one_table(runs):
    # Without stages the dataset is <out>/rounds/; `run(frame="pandas")` returns pandas.
    out, got = runs["single"], runs["single_df"]
    assert isinstance(got, pd.DataFrame)
    ref = dhumbal.read(out)
    assert ref.equals(pl.read_parquet(out / "rounds" / "*.parquet"))
    _same_rows(_pd_rows(got, sort=False), _pl_rows(ref, sort=False), "dhumbal.run(frame='pandas')")
    _same_rows(_pd_rows(pd.read_parquet(out / "rounds")), _pl_rows(ref), "pd.read_parquet(rounds)")
    _same_rows(_duck_rows(f"{out}/rounds/*.parquet"), _pl_rows(ref), "duckdb read_parquet(rounds)")
    _wins(out, f"{out}/rounds/*.parquet", got, ref)
    assert ref.height == 40 * 3 * 3  # deals x rotations x seats


def _doc_block(doc: str, after: str) -> list[str]:
    """The lines of the first ```python block after `after` in a doc, verbatim."""
    text = (ROOT / "docs" / doc).read_text()
    start = text.index(after)
    block = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert block, f"docs/{doc}: no python block after {after!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_documented_readers_run_as_written(runs, monkeypatch):
    # docs/records.md's three readers, taken from the doc itself (not copied), run from the
    # folder that holds reports/championship/: one table each, the same rows, and DuckDB's
    # per-agent mean of `won` equal to Polars' and pandas'.
    lines = _doc_block("records.md", "Any Parquet reader reads the folder as one table")
    lines = [line for line in lines if not line.startswith("import ")]
    assert len(lines) == 3 and lines[0].startswith("pl.") and lines[1].startswith("pd.") and lines[2].startswith("duckdb."), lines
    monkeypatch.chdir(runs["base"])
    ns = {"pl": pl, "pd": pd, "duckdb": duckdb}
    polars_df, pandas_df, relation = (eval(line, ns) for line in lines)
    ref = pl.read_parquet(runs["staged"] / "final" / "rounds" / "*.parquet")
    assert polars_df.equals(ref)
    _same_rows(_pd_rows(pandas_df), _pl_rows(ref), "docs/records.md pandas line")
    got = dict(relation.fetchall())
    want = {a: w for a, w in ref.group_by(pl.col("agent").cast(pl.String)).agg(pl.col("won").mean()).rows()}
    by_pandas = pandas_df.groupby("agent", observed=True)["won"].mean().to_dict()
    assert set(got) == set(want) == set(by_pandas) and len(want) == 4
    for a in want:
        assert got[a] == pytest.approx(want[a], abs=1e-12) and by_pandas[a] == pytest.approx(want[a], abs=1e-12), (a, got, want, by_pandas)
    # The run's own count, so that the three cannot agree on a wrong table.
    summary = _summary(runs["staged"] / "final" / "summary.csv")
    assert {a: float(r["win_rate"]) for a, r in summary.items()} == pytest.approx(want, abs=1e-12)


def test_the_documented_polars_query_over_a_whole_run(runs):
    # docs/python.md's query (the middle line of "Scenarios from Python", taken from the doc)
    # on `dhumbal.read` of a staged run, against pandas on `read(frame="pandas")`.
    lines = _doc_block("python.md", "## Scenarios from Python")
    query = next(line.split("#")[0].strip() for line in lines if line.startswith("df.group_by"))
    df = dhumbal.read(runs["staged"])
    got = {(s, a): w for s, a, w in eval(query, {"pl": pl, "df": df}).rows()}
    frame = dhumbal.read(runs["staged"], frame="pandas")
    want = frame.groupby(["stage", "agent"], observed=True)["won"].mean().to_dict()
    assert set(got) == set(want) and len(want) == 7
    assert got == pytest.approx(want, abs=1e-12)


def _rewrite_part(path: pathlib.Path, change=lambda t: t):
    """Part `path` rewritten by pyarrow's writer (dictionaries, no delta pages; another
    writer's layout, as an older build's or a user's tool's), its footer entry kept."""
    import pyarrow.parquet as pq

    footer = pq.ParquetFile(path).metadata.metadata
    t = change(pq.read_table(path))
    pq.write_table(t.replace_schema_metadata({b"dhumbal-run": footer[b"dhumbal-run"]}), path)


def _as_categorical(t):
    """The enum columns as plain categoricals (no Polars enum metadata), their categories in
    reverse order: what pandas writes for a `category` column."""
    import pyarrow as pa

    for name in ENUMS:
        s = t.column(name).cast(pa.string()).to_pylist()
        cats = sorted(set(s), reverse=True)
        d = pa.DictionaryArray.from_arrays(pa.array([cats.index(x) for x in s], pa.int32()), pa.array(cats))
        t = t.set_column(t.schema.get_field_index(name), pa.field(name, d.type), d)
    return t


def _null_agent(t):
    import pyarrow as pa

    col = t.column("agent").combine_chunks()
    keys = col.indices.to_pylist()
    keys[3] = None
    d = pa.DictionaryArray.from_arrays(pa.array(keys, col.indices.type), col.dictionary, ordered=True)
    return t.set_column(t.schema.get_field_index("agent"), t.schema.field("agent"), d)


def test_parts_from_other_writers_report_as_ours(runs, tmp_path, capfd):
    # A stage whose parts were written by different writers (one rewritten by pyarrow, one
    # with its enum columns as plain categoricals in another order) reports exactly as the
    # stage its build wrote; an agent left empty is refused, naming the part and the column.
    import shutil

    from dhumbal import _native

    ours = tmp_path / "ours"
    shutil.copytree(runs["single"], ours)
    assert _native.cli(["report", str(ours), "--force"]) == 0
    parts = sorted((ours / "rounds").glob("*.parquet"))
    mixed = tmp_path / "mixed"
    shutil.copytree(runs["single"], mixed)
    _rewrite_part(mixed / "rounds" / parts[0].name)
    _rewrite_part(mixed / "rounds" / parts[1].name, _as_categorical)
    assert _native.cli(["report", str(mixed), "--force"]) == 0
    for name in ["stats.json", "summary.csv"]:
        assert (mixed / name).read_text() == (ours / name).read_text(), name
    _rewrite_part(mixed / "rounds" / parts[2].name, _null_agent)
    capfd.readouterr()
    assert _native.cli(["report", str(mixed), "--force"]) == 2
    err = capfd.readouterr().err
    assert parts[2].name in err and "column `agent` has an empty value" in err, err
