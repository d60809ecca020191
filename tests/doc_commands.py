#!/usr/bin/python3
"""doc_commands.py - every tilebench command the README and docs/*.md show in a shell block
(```sh) is a real command line: each is run with --help appended (getopt parses every flag
before --help; an unknown flag or command exits 2), and `list` ones, which need no GPU, are
run as written where the files they name exist. The binary's path (build/bin/tilebench or tilebench) becomes $TB.
   doc_commands.py        (environment: TB, TB_SRC)"""
import glob, os, re, shlex, subprocess, sys

tb, src = os.environ["TB"], os.environ["TB_SRC"]
ok = bad = 0
for path in [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs/*.md"))):
    name = os.path.relpath(path, src)
    text = open(path).read()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            for part in re.split(r"\s*(?:&&|\|\||\||;)\s*", line):
                try:
                    words = shlex.split(part)
                except ValueError:
                    continue
                if not words or not (words[0].endswith("bin/tilebench") or words[0] == "tilebench"):
                    continue
                if len(words) < 2:
                    continue
                runs = [[tb] + words[1:] + ["--help"]]
                paths = [w for w in words[2:] if "/" in w or w.endswith(".so")]
                if words[1] == "list" and all(os.path.exists(os.path.join(src, w)) for w in paths):
                    runs.append([tb] + words[1:])   # as written, where its files exist here
                for argv in runs:
                    r = subprocess.run(argv, capture_output=True, text=True, cwd=src)
                    shown = " ".join(words[1:4])
                    if r.returncode == 0:
                        ok += 1
                    else:
                        print(f"FAIL doc-cmd {name}: '{part}'{' (as written)' if '--help' not in argv else ''} "
                              f"exits {r.returncode}: {r.stderr.strip()[:200]}")
                        bad += 1
print(f"{ok} passed, {bad} failed")
sys.exit(1 if bad else 0)
