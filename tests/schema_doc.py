#!/usr/bin/python3
"""schema_doc.py - docs/schema.md against the schema itself: for every table of a database
the store creates (make_fixture_db, the store's own code path), the column list under its
"### `table`" heading must name exactly the table's columns, in order. Run by CTest (label cli).
   schema_doc.py MAKE_FIXTURE_DB SCHEMA_MD"""
import re, sqlite3, subprocess, sys, tempfile, os

make, doc = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    db = os.path.join(d, "s.db")
    subprocess.run([make, db], check=True, stdout=subprocess.DEVNULL)
    c = sqlite3.connect(db)
    tables = [r[0] for r in c.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    cols = {t: [r[1] for r in c.execute(f"PRAGMA table_info({t})")] for t in tables}
    c.close()
text = open(doc).read()
ok = bad = 0
for t in tables:
    m = re.search(r"^### `%s`.*?$(.*?)(?=^#)" % re.escape(t), text, re.S | re.M)
    if not m:
        print(f"FAIL schema-doc {t}: no '### `{t}`' section in docs/schema.md"); bad += 1; continue
    documented = []
    for first in re.findall(r"^\| (`[^|]*`) \|", m.group(1), re.M):   # a row's first cell
        documented += re.findall(r"`([a-z_0-9]+)`", first)
    if documented == cols[t]:
        print(f"ok   schema-doc {t}: {len(documented)} columns"); ok += 1
    else:
        missing = [x for x in cols[t] if x not in documented]
        extra = [x for x in documented if x not in cols[t]]
        print(f"FAIL schema-doc {t}: schema {cols[t]} vs documented {documented} "
              f"(missing {missing}, not in the schema {extra})"); bad += 1
print(f"{ok} passed, {bad} failed")
sys.exit(1 if bad else 0)
