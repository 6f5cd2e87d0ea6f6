#!/usr/bin/python3
"""Xapian as a peer of the scale benchmark (bench/scale.ts), run with Debian's python3-xapian.

  xapian_scale.py build <dir>              documents on stdin as JSON lines: {"title": ..., "text": ...}
  xapian_scale.py serve <dir> <queries>    queries file: kind TAB query per line

Build: Xapian's defaults for English text: a TermGenerator with the English (Porter2) stemmer and the
STEM_SOME strategy (every word indexed with its positions, its stem beside it with a Z prefix), no stop
list; the document's number as its data. The database is written with Xapian's default flush threshold and
then compacted into one (as the other engines end with one segment); the build's time includes the
compaction. Prints a JSON report.

Serve: each query parsed by Xapian's QueryParser with the same stemmer and strategy, OR as the default
operator and phrases on; BM25 with k1 1.2 and b 0.75; top 20. Every query kind is timed twice: with
Xapian's estimate of the total (get_mset's default) and with an exact total (checkatleast = every
document). The same warm-up as the other engines: every query once, untimed, before the timed passes.
"""
import json
import os
import resource
import shutil
import sys
import time

import xapian


def memory():
    """Peak and current resident set size of this process in bytes (the kernel's VmHWM and VmRSS)."""
    peak = rss = 0
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                peak = int(line.split()[1]) * 1024
            elif line.startswith('VmRSS:'):
                rss = int(line.split()[1]) * 1024
    return peak, rss


def cpu_ms():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1000


def directory_bytes(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def build(path):
    t0 = time.perf_counter()
    staging = path + '.staging'
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)
    db = xapian.WritableDatabase(staging, xapian.DB_CREATE_OR_OVERWRITE)
    generator = xapian.TermGenerator()
    generator.set_stemmer(xapian.Stem('english'))
    generator.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
    docs = 0
    stdin = open(sys.stdin.fileno(), encoding='utf-8', newline='\n', buffering=1 << 20)
    for line in stdin:
        d = json.loads(line)
        title, text = d.get('title', ''), d.get('text', '')
        doc = xapian.Document()
        generator.set_document(doc)
        generator.index_text(text if title == '' else title + '\n' + text)
        doc.set_data(str(docs))
        db.add_document(doc)
        docs += 1
    db.commit()
    db.compact(path)
    db.close()
    shutil.rmtree(staging, ignore_errors=True)
    print(json.dumps({'docs': docs, 'buildMs': (time.perf_counter() - t0) * 1000, 'buildCpuMs': cpu_ms(),
                      'peakRss': memory()[0], 'bytes': directory_bytes(path), 'segments': 1}))


def serve(path, queries_file):
    queries = []
    with open(queries_file, encoding='utf-8') as f:
        for line in f:
            kind, _, q = line.rstrip('\n').partition('\t')
            if q:
                queries.append((kind, q))
    rss_base = memory()[1]
    t0 = time.perf_counter()
    db = xapian.Database(path)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight(1.2, 0, 1, 0.75, 0.5))
    parser = xapian.QueryParser()
    parser.set_database(db)
    parser.set_stemmer(xapian.Stem('english'))
    parser.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    parser.set_default_op(xapian.Query.OP_OR)
    open_ms = (time.perf_counter() - t0) * 1000
    rss_open = memory()[1]
    every = db.get_doccount()
    flags = xapian.QueryParser.FLAG_PHRASE | xapian.QueryParser.FLAG_DEFAULT
    kinds = {}
    for kind, q in queries:
        kinds.setdefault(kind, []).append(q)
    def search(q, exact):
        enquire.set_query(parser.parse_query(q, flags))
        return enquire.get_mset(0, 20, every if exact else 0).get_matches_estimated()
    for _, q in queries:
        search(q, False)
    timings = []
    for exact in (False, True):
        for kind, texts in kinds.items():
            ms, cpu, totals = [], [], []
            for q in texts:
                c0 = time.thread_time()
                s = time.perf_counter()
                totals.append(search(q, exact))
                ms.append((time.perf_counter() - s) * 1000)
                cpu.append((time.thread_time() - c0) * 1000)
            timings.append({'kind': kind, 'exactTotal': exact, 'ms': ms, 'cpu': cpu, 'totals': totals})
    rss_after = memory()[1]
    db.close()
    print(json.dumps({'openMs': open_ms, 'rssBase': rss_base, 'rssOpen': rss_open, 'rssAfter': rss_after, 'timings': timings}))


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'build':
        build(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == 'serve':
        serve(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
