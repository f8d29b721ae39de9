# Generates the ORC files of this folder with pyarrow (the C++ ORC writer)
# and expect.json, pyarrow's own read of them. Run with a Python that has
# pyarrow (the interop venv has 19.0.1): python gen.py
import datetime, decimal, json, random
import pyarrow as pa, pyarrow.orc as orc

random.seed(1)
n = 700
def maybe(v, i): return None if i % 7 == 3 else v
cols = {
 'b': pa.array([maybe(i % 3 == 0, i) for i in range(n)], pa.bool_()),
 'i8': pa.array([maybe((i*37) % 256 - 128, i) for i in range(n)], pa.int8()),
 'i16': pa.array([maybe(i*13 - 20000, i) for i in range(n)], pa.int16()),
 'i32': pa.array([maybe(random.randint(-2**31, 2**31-1) if i % 5 else 7, i) for i in range(n)], pa.int32()),
 'i64': pa.array([maybe(random.choice([i, -i*1000003, 2**62+i, random.randint(-2**63, 2**63-1), 5]), i) for i in range(n)], pa.int64()),
 'seq': pa.array(list(range(n)), pa.int64()),
 'f32': pa.array([maybe(i/3.0, i) for i in range(n)], pa.float32()),
 'f64': pa.array([maybe(i*1.5e10, i) for i in range(n)], pa.float64()),
 'sdict': pa.array([maybe(['a', 'bb', 'ccc'][i % 3], i) for i in range(n)], pa.string()),
 'sdirect': pa.array([maybe('x%d' % random.randint(0, 10**9), i) for i in range(n)], pa.string()),
 'bin': pa.array([maybe(bytes([i % 256])*(i % 5), i) for i in range(n)], pa.binary()),
 'dec': pa.array([maybe(decimal.Decimal(random.randint(-10**17, 10**17))/100, i) for i in range(n)], pa.decimal128(20, 2)),
 'dec38': pa.array([maybe(decimal.Decimal(random.randint(-10**37, 10**37))/10**6, i) for i in range(n)], pa.decimal128(38, 6)),
 'date': pa.array([maybe(datetime.date(1900, 1, 1)+datetime.timedelta(days=i*17), i) for i in range(n)], pa.date32()),
 'ts': pa.array([maybe(random.randint(-3*10**18, 3*10**18), i) for i in range(n)], pa.timestamp('ns')),
 'tsms': pa.array([maybe(random.randint(-3*10**12, 3*10**12)*1000000, i) for i in range(n)], pa.timestamp('ns')),
 'lst': pa.array([maybe([j for j in range(i % 4)], i) for i in range(n)], pa.list_(pa.int32())),
 'mp': pa.array([maybe([('k%d' % j, j*1.0) for j in range(i % 3)], i) for i in range(n)], pa.map_(pa.string(), pa.float64())),
 'st': pa.array([maybe({'x': maybe(i, i+1), 'y': 's%d' % (i % 10)}, i) for i in range(n)], pa.struct([('x', pa.int32()), ('y', pa.string())])),
}
t = pa.table(cols)
files = [
    ('none-direct.orc', dict(compression='uncompressed', dictionary_key_size_threshold=0, stripe_size=16*1024)),
    ('zlib-direct.orc', dict(compression='zlib', dictionary_key_size_threshold=0)),
    ('snappy-dict.orc', dict(compression='snappy', dictionary_key_size_threshold=1)),
    ('lz4-dict.orc', dict(compression='lz4', dictionary_key_size_threshold=1)),
    ('zstd-dict.orc', dict(compression='zstd', dictionary_key_size_threshold=1)),
    ('zstd-v011.orc', dict(compression='zstd', file_version='0.11', dictionary_key_size_threshold=1)),  # RLE v1
]
for name, kw in files:
    orc.write_table(t, name, **kw)
def enc(v):
    if v is None or isinstance(v, (bool, int, float, str)): return v
    if isinstance(v, bytes): return v.hex()
    if isinstance(v, decimal.Decimal): return str(v)
    if isinstance(v, dict): return [enc(v['x']), enc(v['y'])]
    if isinstance(v, (list, tuple)): return [enc(x) for x in v]
    return str(v)
back = orc.read_table('zstd-dict.orc')
d = back.to_pydict()
for c in ['ts', 'tsms', 'i64', 'seq']:
    d[c] = [None if v is None else str(v) for v in back.column(c).cast(pa.int64()).to_pylist()]
d['date'] = back.column('date').cast(pa.int32()).to_pylist()
for name, _ in files:
    assert orc.read_table(name).equals(back), name
json.dump({k: [enc(x) for x in v] for k, v in d.items()}, open('expect.json', 'w'), indent=None)
