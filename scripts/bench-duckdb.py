"""DuckDB as a second reference in `make bench` (see docs/perf.md).

  python bench-duckdb.py run   --threads N --files IN.json --out FILE [--engine dedup|widepu]
  python bench-duckdb.py check --ours FILE.json --theirs OUT.parquet [--engine ...]

run: the compaction DuckDB can do of one bucket's level-0 Parquet files (the
KeyValue files Paimon writes: _KEY_<k>, _SEQUENCE_NUMBER, _VALUE_KIND, then
the value columns), written as one zstd Parquet file:
  dedup  - the latest record of each key (row_number over _SEQUENCE_NUMBER);
  widepu - the partial-update merge of the multi-stream table: per sequence
           group s<g> (its sequence field s<g>_ts), the group's columns of the
           record with the highest s<g>_ts.
check: the rows of compactd's output files (JSON list on --ours) and of
DuckDB's output, compared as multisets on the user's columns; prints JSON.
"""
import argparse
import json
import re

import duckdb


def files_sql(paths):
    return "read_parquet([" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "])"


def columns(con, src):
    return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]


def query(con, src, engine):
    cols = columns(con, src)
    keys = [c for c in cols if c.startswith("_KEY_")]
    if engine == "dedup":
        part = ", ".join(f'"{k}"' for k in keys)
        return (f"SELECT * FROM {src} QUALIFY row_number() OVER "
                f"(PARTITION BY {part} ORDER BY _SEQUENCE_NUMBER DESC) = 1")
    groups = {}
    for c in cols:
        m = re.fullmatch(r"s(\d+)_(ts|c\d+)", c)
        if m:
            groups.setdefault(int(m.group(1)), []).append(c)
    if not groups:
        raise SystemExit("widepu: no s<g>_ts sequence groups in the input columns")
    plain = [c for c in cols if c not in keys and c not in ("_SEQUENCE_NUMBER", "_VALUE_KIND")
             and not any(c in g for g in groups.values())]
    sel = [f'"{k}"' for k in keys]
    sel.append("max(_SEQUENCE_NUMBER) AS _SEQUENCE_NUMBER")
    sel.append("CAST(0 AS TINYINT) AS _VALUE_KIND")
    sel += [f'arg_max("{c}", _SEQUENCE_NUMBER) AS "{c}"' for c in plain]
    for g, gc in sorted(groups.items()):
        pack = ", ".join(f'"{c}" := "{c}"' for c in gc)
        sel.append(f"arg_max(struct_pack({pack}), s{g}_ts) FILTER (WHERE s{g}_ts IS NOT NULL) AS g{g}")
    inner = f"SELECT {', '.join(sel)} FROM {src} GROUP BY {', '.join(sel[:len(keys)])}"
    outer = [f'"{c}"' for c in keys] + ["_SEQUENCE_NUMBER", "_VALUE_KIND"] + [f'"{c}"' for c in plain]
    for g, gc in sorted(groups.items()):
        outer += [f'g{g}."{c}" AS "{c}"' for c in gc]
    return f"SELECT {', '.join(outer)} FROM ({inner})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["run", "check"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--engine", choices=["dedup", "widepu"], default="dedup")
    ap.add_argument("--files")
    ap.add_argument("--ours")
    ap.add_argument("--theirs")
    a = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    if a.mode == "run":
        with open(a.files) as f:
            src = files_sql(json.load(f))
        out = a.out.replace("'", "''")
        con.execute(f"COPY ({query(con, src, a.engine)}) TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
        rows = con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0]
        print(json.dumps({"rows": rows}))
        return
    with open(a.ours) as f:
        ours = files_sql(json.load(f))
    theirs = files_sql([a.theirs])
    # User columns only: the sequence number a merge keeps is engine-specific.
    cols = [c for c in columns(con, ours) if c not in ("_SEQUENCE_NUMBER", "_VALUE_KIND")]
    sel = ", ".join(f'"{c}"' for c in cols)
    only_ours = con.execute(f"SELECT count(*) FROM (SELECT {sel} FROM {ours} EXCEPT ALL SELECT {sel} FROM {theirs})").fetchone()[0]
    only_theirs = con.execute(f"SELECT count(*) FROM (SELECT {sel} FROM {theirs} EXCEPT ALL SELECT {sel} FROM {ours})").fetchone()[0]
    n_ours = con.execute(f"SELECT count(*) FROM {ours}").fetchone()[0]
    n_theirs = con.execute(f"SELECT count(*) FROM {theirs}").fetchone()[0]
    print(json.dumps({"ours": n_ours, "theirs": n_theirs, "onlyOurs": only_ours, "onlyTheirs": only_theirs}))


if __name__ == "__main__":
    main()
