#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every symbol librgroup.so exports has the version node of the release
that added it.

Usage: check-versions.py LIBRARY SOURCE_DIR

The release that added a symbol is written in abi/symbols and checked
against what the history says:
  - the library: its exports are exactly the table's symbols, each at
    RGROUP_<release> (RGROUP_PRIVATE_<release> for rgroup__ names), each
    the default version (no compatibility versions);
  - the newest baseline, abi/librgroup-X.Y.Z.abi (the release as tagged):
    a symbol it has was added in X.Y or before, one it lacks after X.Y;
  - the releases in abi/releases, in a git checkout: a symbol's release
    is that of the first release whose librgroup.map (at the commit the
    release was made from) lists it, and one no release lists comes
    after the newest; a tag vX.Y.Z that is there must point to its
    release's commit;
  - debian/librgroup0.symbols, if there: the same symbols, each at the
    same node, with a minimal version of that release.
Exit 0 pass, 1 fail, 77 skip (a git checkout without the releases'
commits, a shallow clone; a failure under RGROUP_TEST_STRICT=1).
"""
import glob
import os
import re
import subprocess
import sys

errors = []


def fail(msg):
    errors.append(msg)
    print("FAIL: " + msg)


def rel_key(rel):
    return tuple(int(x) for x in rel.split("."))


def node_of(name, rel):
    return ("RGROUP_PRIVATE_" if name.startswith("rgroup__") else "RGROUP_") + rel


def exports(lib):
    """{name: (node, default)} of the symbols the library defines."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].rstrip(":").isdigit() or f[6] in ("UND", "ABS") or f[4] == "LOCAL":
            continue
        m = re.fullmatch(r"([^@]+)(@@?)(.+)", f[7])
        if not m:
            fail(f"{f[7]} is exported without a version node")
            continue
        syms[m.group(1)] = (m.group(3), m.group(2) == "@@")
    return syms


def table(path):
    rows = {}
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) != 2 or not re.fullmatch(r"\d+\.\d+", f[1]):
            fail(f"{path}:{n}: want 'SYMBOL X.Y', got '{line}'")
            continue
        if f[0] in rows:
            fail(f"{path}:{n}: {f[0]} listed twice")
        rows[f[0]] = f[1]
    return rows


def map_names(text):
    """The global names a version script lists, whatever node."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    names = set()
    for m in re.finditer(r"\{(.*?)\}", text, flags=re.S):
        body = m.group(1).split("local:", 1)[0]
        names.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*;", body))
    return names


def git(src, *args):
    return subprocess.run(["git", "-C", src] + list(args), capture_output=True, text=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    lib, src = sys.argv[1], sys.argv[2]
    tab_path = os.path.join(src, "abi", "symbols")
    tab = table(tab_path)
    syms = exports(lib)
    print(f"{lib}: {len(syms)} symbols exported; {tab_path}: {len(tab)}")

    # The library against the table.
    for name, (node, default) in sorted(syms.items()):
        if name not in tab:
            fail(f"{name}@{node} is exported but not in abi/symbols: add it with the "
                 "release that adds it (the next one, if it is new) and put it in that node")
            continue
        want = node_of(name, tab[name])
        if node != want:
            fail(f"{name} is exported at {node}; it was added in {tab[name]}, so its node is {want}")
        if not default:
            fail(f"{name}@{node} is not the default version (a compatibility symbol nobody planned)")
    for name in sorted(set(tab) - set(syms)):
        fail(f"{name} is in abi/symbols but not exported: a removed symbol breaks every program that uses it")

    # The table against the newest baseline.
    bases = sorted(glob.glob(os.path.join(src, "abi", "librgroup-*.abi")),
                   key=lambda p: rel_key(re.search(r"-(\d+\.\d+\.\d+)\.abi$", p).group(1)))
    if not bases:
        fail("no baseline abi/librgroup-X.Y.Z.abi")
    else:
        base = bases[-1]
        brel = ".".join(re.search(r"-(\d+)\.(\d+)\.\d+\.abi$", base).groups())
        in_base = set(re.findall(r"<elf-symbol name='([^']+)'", open(base).read()))
        print(f"baseline {os.path.basename(base)}: {len(in_base)} symbols of release {brel}")
        for name, rel in sorted(tab.items()):
            if name in in_base and rel_key(rel) > rel_key(brel):
                fail(f"abi/symbols says {name} came with {rel}, but release {brel} had it")
            if name not in in_base and rel_key(rel) <= rel_key(brel):
                fail(f"abi/symbols says {name} came with {rel}, but release {brel} did not have it: "
                     f"it belongs to a release after {brel}")

    # The table against Debian's symbols file. A symbol of a release not
    # yet made (after the newest baseline) is first packaged by the
    # packaging's own upstream version (debian/changelog), which is its
    # minimal version there: Debian's tools take no version above the
    # package's.
    def unreleased(rel, minver):
        cl = os.path.join(src, "debian", "changelog")
        m = re.match(r"^\S+ \(([^)-]+)-", open(cl).readline()) if os.path.exists(cl) else None
        return bool(bases) and m is not None and minver == m.group(1) and rel_key(rel) > rel_key(brel)

    deb = os.path.join(src, "debian", "librgroup0.symbols")
    if os.path.exists(deb):
        seen = set()
        for line in open(deb):
            m = re.match(r"^ (\S+)@(\S+) (\S+)", line)
            if not m or m.group(2).startswith("RGROUP_") and m.group(1) == m.group(2):
                continue
            name, node, minver = m.groups()
            seen.add(name)
            rel = tab.get(name)
            if rel is None:
                fail(f"debian/librgroup0.symbols lists {name}, abi/symbols does not")
            elif node != node_of(name, rel) or not (minver.startswith(rel + ".") or unreleased(rel, minver)):
                fail(f"debian/librgroup0.symbols: {name}@{node} {minver}; abi/symbols: "
                     f"{node_of(name, rel)}, release {rel}")
        for name in sorted(set(tab) - seen):
            fail(f"{name} is in abi/symbols but not in debian/librgroup0.symbols")
        print(f"debian/librgroup0.symbols: {len(seen)} symbols")

    # The table against the released history.
    skip = None
    releases = []
    for n, line in enumerate(open(os.path.join(src, "abi", "releases")), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) != 2 or not re.fullmatch(r"\d+\.\d+\.\d+", f[0]) or not re.fullmatch(r"[0-9a-f]{40}", f[1]):
            fail(f"abi/releases:{n}: want 'X.Y.Z COMMIT', got '{line}'")
            continue
        releases.append((f[0], f[1]))
    releases.sort(key=lambda r: rel_key(r[0]))
    if git(src, "rev-parse", "--git-dir").returncode != 0:
        print("not a git checkout: the releases' maps are not compared (the baseline was)")
    else:
        first = {}
        for ver, commit in releases:
            tag = git(src, "rev-parse", "-q", "--verify", f"v{ver}^{{commit}}")
            if tag.returncode == 0 and tag.stdout.strip() != commit:
                fail(f"tag v{ver} points to {tag.stdout.strip()}, abi/releases says {commit}")
            if git(src, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
                skip = (f"this git checkout lacks commit {commit} of release {ver} "
                        "(a shallow clone?): git fetch --unshallow, then run again")
                continue
            files = git(src, "ls-tree", "-r", "--name-only", commit).stdout.split()
            maps = [f for f in files if os.path.basename(f) == "librgroup.map"]
            if len(maps) != 1:
                fail(f"release {ver} ({commit[:12]}): {len(maps)} librgroup.map files")
                continue
            names = map_names(git(src, "show", f"{commit}:{maps[0]}").stdout)
            rel = ".".join(ver.split(".")[:2])
            print(f"release {ver} ({commit[:12]}{', tag v' + ver if tag.returncode == 0 else ''}): "
                  f"{len(names)} symbols in {maps[0]}")
            for n in names:
                first.setdefault(n, rel)
        if releases and not skip:
            newest = ".".join(releases[-1][0].split(".")[:2])
            for name, rel in sorted(tab.items()):
                if name in first and first[name] != rel:
                    fail(f"abi/symbols says {name} came with {rel}; the releases say {first[name]}")
                if name not in first and rel_key(rel) <= rel_key(newest):
                    fail(f"abi/symbols says {name} came with {rel}, but no release up to {newest} "
                         f"has it: it belongs to the release after {newest}")
        if bases and releases and releases[-1][0] != re.search(r"-(\d+\.\d+\.\d+)\.abi$", bases[-1]).group(1):
            fail(f"the newest release in abi/releases is {releases[-1][0]}, the newest baseline "
                 f"{os.path.basename(bases[-1])}")

    if errors:
        print(f"{len(errors)} problem(s)")
        return 1
    if skip:
        print("SKIP: " + skip)
        strict = os.environ.get("RGROUP_TEST_STRICT", "0") not in ("", "0")
        return 1 if strict else 77
    print("every exported symbol is at the version node of the release that added it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
