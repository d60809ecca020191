#!/usr/bin/python3
"""ci_templates.py - the CI templates a user copies (scripts/ci/*.yml) are valid YAML and name
only real tilebench commands and flags: every command line in them that runs tilebench is run
again here, with its binary replaced by $TB and --help appended, and must exit 0 (getopt parses
every flag before --help; an unknown flag exits 2). Needs python3-yaml (Debian)."""
import glob, os, shlex, subprocess, sys, yaml

tb = os.environ["TB"]
src = os.environ["TB_SRC"]
ok = bad = 0

def commands(doc):
    """every shell text of a GitHub workflow (steps' run) or a GitLab job (script lists)"""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "run" and isinstance(v, str):
                yield v
            elif k == "script" and isinstance(v, list):
                for line in v:
                    yield line
            else:
                yield from commands(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from commands(v)

for path in sorted(glob.glob(os.path.join(src, "scripts/ci/*.yml"))):
    name = os.path.relpath(path, src)
    try:
        doc = yaml.safe_load(open(path))
    except yaml.YAMLError as e:
        print(f"FAIL ci-1 {name}: not valid YAML: {e}"); bad += 1; continue
    print(f"ok   ci-1 {name}: valid YAML"); ok += 1
    found = 0
    for text in commands(doc):
        for line in text.replace("\\\n", " ").splitlines() if "\n" in text.strip() else [text]:
            words = shlex.split(line)
            if not words or not words[0].endswith("bin/tilebench"):
                continue
            found += 1
            argv = [tb] + words[1:] + ["--help"]
            r = subprocess.run(argv, capture_output=True, text=True)
            if r.returncode == 0 and "usage: tilebench" in r.stdout:
                print(f"ok   ci-2 {name}: {' '.join(words[:2])} ... parses"); ok += 1
            else:
                print(f"FAIL ci-2 {name}: {line!r} exits {r.returncode}: {r.stderr.strip()}"); bad += 1
    if found == 0:
        print(f"FAIL ci-3 {name}: no tilebench command line found"); bad += 1
    else:
        print(f"ok   ci-3 {name}: {found} tilebench command lines"); ok += 1
print(f"{ok} passed, {bad} failed")
sys.exit(1 if bad else 0)
