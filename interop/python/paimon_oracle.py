"""pypaimon twin of the Java oracle (interop/java): prints the same canonical JSON lines.

Usage: python paimon_oracle.py read --warehouse W --table db.t [--snapshot N | --tag T]
       python paimon_oracle.py changelog --warehouse W --table db.t --from F --to T
       python paimon_oracle.py version

The canonical JSON form is defined in interop/README.md; this is its Python implementation.
"""

import argparse
import base64
import datetime
import decimal
import functools
import json
import math
import sys


# Enough digits for any DECIMAL (precision <= 38) at any scale <= 38, exact or an error.
_DECIMALS = decimal.Context(prec=80, traps=[decimal.InvalidOperation, decimal.Inexact, decimal.Overflow])


def canonical(value, paimon_type):
    """Converts one value as pyarrow returns it (as_py) into its canonical JSON value."""
    if value is None:
        return None
    t = str(paimon_type).upper()
    base = t.split("(")[0].split(" ")[0].split("<")[0]
    if base == "BOOLEAN":
        return bool(value)
    if base in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT"):
        return int(value)
    if base in ("FLOAT", "DOUBLE"):
        f = float(value)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if base in ("CHAR", "VARCHAR", "STRING"):
        return str(value)
    if base in ("BINARY", "VARBINARY", "BYTES"):
        return base64.b64encode(bytes(value)).decode("ascii")
    if base == "DECIMAL":
        scale = int(t.split("(")[1].rstrip(")").split(")")[0].split(",")[1]) if "," in t else 0
        # Our own context: the default one keeps 28 digits and DECIMAL has up to 38. Inexact
        # traps too, so a value with more fraction digits than the scale fails, not rounds.
        d = decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-scale, context=_DECIMALS),
                                            context=_DECIMALS)
        return format(d, "f")
    if base == "DATE":
        if isinstance(value, int):
            value = datetime.date(1970, 1, 1) + datetime.timedelta(days=value)
        return value.isoformat()
    if base == "TIME":
        if isinstance(value, int):
            ms = value
        else:
            ms = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        s, milli = divmod(ms, 1000)
        return "%02d:%02d:%02d.%03d" % (s // 3600, (s // 60) % 60, s % 60, milli)
    if base in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _timestamp(value)
    if base == "ARRAY":
        return [canonical(v, paimon_type.element) for v in value]
    if base in ("MAP", "MULTISET"):
        pairs = [[canonical(k, paimon_type.key), canonical(v, paimon_type.value)] for k, v in value]
        pairs.sort(key=lambda p: json.dumps(p[0], separators=(",", ":")))
        return pairs
    if base == "ROW":
        return {f.name: canonical(value.get(f.name), f.type) for f in paimon_type.fields}
    return str(value)


def _timestamp(value):
    nanos = 0
    if hasattr(value, "nanosecond"):  # pandas.Timestamp
        nanos = value.nanosecond
        value = value.to_pydatetime(warn=False)
    if getattr(value, "tzinfo", None) is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    frac = value.microsecond * 1000 + nanos
    return "%04d-%02d-%02dT%02d:%02d:%02d.%09d" % (
        value.year, value.month, value.day, value.hour, value.minute, value.second, frac)


def _cmp_json(a, b):
    if a is None or b is None:
        return (a is not None) - (b is not None)
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return (a > b) - (a < b)
    if isinstance(a, bool) and isinstance(b, bool):
        return (a > b) - (a < b)
    sa = json.dumps(a, separators=(",", ":"), ensure_ascii=False)
    sb = json.dumps(b, separators=(",", ":"), ensure_ascii=False)
    # Java compares String.toString() of the JSON node by UTF-16 code units.
    ua, ub = sa.encode("utf-16-be"), sb.encode("utf-16-be")
    return (ua > ub) - (ua < ub)


def _table(args):
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": args.warehouse})
    table = catalog.get_table(args.table)
    travel = {}
    if args.snapshot is not None:
        travel["scan.snapshot-id"] = str(args.snapshot)
    if args.tag is not None:
        travel["scan.tag-name"] = args.tag
    if travel:
        table = table.copy(travel)
    return table


def read(args, out):
    table = _table(args)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    arrow = rb.new_read().to_arrow(splits)
    fields = table.fields
    rows = []
    if arrow is not None:
        columns = {name: arrow.column(name).to_pylist() for name in arrow.column_names}
        for i in range(arrow.num_rows):
            rows.append({f.name: canonical(columns[f.name][i], f.type) for f in fields})
    keys = list(table.primary_keys) or [f.name for f in fields]

    def cmp(a, b):
        for k in keys:
            c = _cmp_json(a.get(k), b.get(k))
            if c:
                return c
        return 0

    rows.sort(key=functools.cmp_to_key(cmp))
    for r in rows:
        out.write(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
        out.write("\n")


def changelog(args, out):
    """The changelog snapshots (from, to] hold, read by pypaimon's own streaming reader.

    pypaimon's AsyncStreamingTableScan (the Python twin of Java's DataTableStreamScan) is started
    at the first snapshot of the range that has a changelog manifest list (as Java's incremental
    CHANGELOG scan, OVERWRITE snapshots are skipped) and consumed plan by plan until the last one;
    its diff-based catch-up is switched off (diff_threshold), so each plan is one snapshot's
    changelog files. Each split is read on its own with the row kind column, and each row is
    printed in read order as canonical JSON plus "_kind", "_snapshot" and "_bucket", like the
    Java oracle's changelog verb.
    """
    from pypaimon.read.streaming_table_scan import AsyncStreamingTableScan
    from pypaimon.read.table_read import ROW_KIND_COLUMN

    table = _table(args)
    sm = table.snapshot_manager()
    wanted = []
    for sid in range(args.from_ + 1, args.to + 1):
        snap = sm.get_snapshot_by_id(sid)
        if snap is None:
            raise ValueError("snapshot %d does not exist" % sid)
        if snap.changelog_manifest_list and snap.commit_kind != "OVERWRITE":
            wanted.append(sid)
    if not wanted:
        return
    read = table.new_stream_read_builder().with_include_row_kind(True).new_read()
    scan = AsyncStreamingTableScan(table, poll_interval_ms=50, prefetch_enabled=False,
                                   diff_threshold=1 << 62)
    scan.next_snapshot_id = wanted[0]
    fields = table.fields
    part_names = list(table.partition_keys)
    seen = []
    for plan in scan.stream_sync():
        sid = plan.snapshot_id
        if sid not in wanted:
            raise ValueError("streaming scan returned snapshot %r, expected one of %s" % (sid, wanted))
        seen.append(sid)

        def split_key(sp):
            part = sp.partition
            vals = [json.dumps(part.get_field(i) if hasattr(part, "get_field") else None, default=str)
                    for i in range(len(part_names))]
            return (vals, sp.bucket)

        for sp in sorted(plan.splits(), key=split_key):
            arrow = read.to_arrow([sp])
            if arrow is None:
                continue
            columns = {name: arrow.column(name).to_pylist() for name in arrow.column_names}
            for i in range(arrow.num_rows):
                row = {f.name: canonical(columns[f.name][i], f.type) for f in fields}
                row["_kind"] = columns[ROW_KIND_COLUMN][i]
                row["_snapshot"] = sid
                row["_bucket"] = sp.bucket
                out.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False))
                out.write("\n")
        if sid == wanted[-1]:
            break
    if seen != [w for w in wanted if w in seen] or seen[-1] != wanted[-1]:
        raise ValueError("streaming scan planned snapshots %s, expected %s" % (seen, wanted))


BATCH_END = "__compactd_batch_end"


def batch(out):
    """Runs many verbs in one process (importing pypaimon costs seconds). Same framing as the
    Java oracle: each stdin line {"verb":"read","flags":{...}}; each verb's output lines are
    followed by {"__compactd_batch_end":i,"ok":true} or {...,"ok":false,"error":...}."""
    import traceback

    for i, line in enumerate(l for l in sys.stdin if l.strip()):
        req = json.loads(line)
        end = {BATCH_END: i, "ok": True}
        try:
            verb = req.get("verb")
            if verb not in ("read", "changelog"):
                raise ValueError("batch supports only read and changelog, got %r" % verb)
            flags = req.get("flags", {})
            ns = argparse.Namespace(
                warehouse=flags["warehouse"], table=flags["table"],
                snapshot=int(flags["snapshot"]) if "snapshot" in flags else None,
                tag=flags.get("tag"),
                from_=int(flags["from"]) if "from" in flags else None,
                to=int(flags["to"]) if "to" in flags else None)
            (read if verb == "read" else changelog)(ns, out)
        except NotImplementedError as e:
            end.update(ok=False, unsupported=True, error="unsupported: %s" % e)
        except Exception:
            end.update(ok=False, error=traceback.format_exc())
        out.write(json.dumps(end) + "\n")
        out.flush()


def main(argv):
    p = argparse.ArgumentParser(prog="paimon_oracle")
    p.add_argument("verb", choices=["read", "changelog", "version", "batch"])
    p.add_argument("--warehouse")
    p.add_argument("--table")
    p.add_argument("--snapshot", type=int)
    p.add_argument("--tag")
    p.add_argument("--from", dest="from_", type=int)
    p.add_argument("--to", type=int)
    args = p.parse_args(argv)
    if args.verb == "version":
        import importlib.metadata
        print(json.dumps({"pypaimon": importlib.metadata.version("pypaimon")}))
        return 0
    if args.verb == "batch":
        batch(sys.stdout)
        return 0
    if not args.warehouse or not args.table:
        p.error("%s needs --warehouse and --table" % args.verb)
    if args.verb == "changelog" and (args.from_ is None or args.to is None):
        p.error("changelog needs --from and --to")
    try:
        (read if args.verb == "read" else changelog)(args, sys.stdout)
    except NotImplementedError as e:
        # pypaimon refuses some table configurations outright; exit code 3 tells the Go
        # wrapper "unsupported" apart from a crash.
        print("unsupported: %s" % e, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
