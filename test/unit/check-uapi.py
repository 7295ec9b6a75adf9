#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the constants of src/backends/native-uapi.h with the uapi headers the
kernel series in kernel/patches/ adds, and the nesting limit of
include/rgroup.h with the series', so that the library and the kernel
cannot drift apart. Needs no kernel: it reads the patch text.

Usage: check-uapi.py SOURCE_ROOT     exit 0 pass, 1 fail"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
header = open(os.path.join(root, 'src', 'backends', 'native-uapi.h')).read()
patches = sorted(glob.glob(os.path.join(root, 'kernel', 'patches', '*.patch')))

define = re.compile(r'^#\s*define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)(ULL|UL|U)?\b')

def values(lines):
    out = {}
    for line in lines:
        m = define.match(line.strip())
        if m:
            out[m.group(1)] = int(m.group(2), 0)
    return out

lib = values(header.splitlines())
kernel = {}
for p in patches:
    uapi = False
    for line in open(p, encoding='utf-8', errors='replace'):
        if line.startswith('+++ '):
            uapi = '/include/uapi/' in line
        elif uapi and line.startswith('+') and not line.startswith('+++'):
            kernel.update(values([line[1:]]))

names = [n for n in lib if n.startswith(('CLONE_NEWRGRP', 'PRIO_RGRP', 'PR_RGROUP'))]
failed = 0
if not patches:
    print('FAIL: no patches in kernel/patches')
    sys.exit(1)
for n in names:
    if n not in kernel:
        print(f'FAIL: {n} is in src/backends/native-uapi.h but in no uapi header of the series')
        failed += 1
    elif kernel[n] != lib[n]:
        print(f'FAIL: {n}: src/backends/native-uapi.h has {lib[n]:#x}, the series {kernel[n]:#x}')
        failed += 1
    else:
        print(f'ok   {n} = {lib[n]:#x}')
for n in kernel:
    if n.startswith(('CLONE_NEWRGRP', 'PRIO_RGRP', 'PR_RGROUP')) and n not in lib:
        print(f'FAIL: the series defines {n}, src/backends/native-uapi.h does not')
        failed += 1
# The nesting limit: the library's public one (include/rgroup.h) is the
# series' (a kernel-internal header, so any added line of the patches).
public = values(open(os.path.join(root, 'include', 'rgroup.h')).read().splitlines())
series_depth = None
for p in patches:
    for line in open(p, encoding='utf-8', errors='replace'):
        if line.startswith('+') and not line.startswith('+++'):
            series_depth = values([line[1:]]).get('RGROUP_MAX_DEPTH', series_depth)
names.append('RGROUP_MAX_DEPTH')
if series_depth is None or public.get('RGROUP_MAX_DEPTH') != series_depth:
    print(f"FAIL: RGROUP_MAX_DEPTH: include/rgroup.h has {public.get('RGROUP_MAX_DEPTH')}, the series {series_depth}")
    failed += 1
else:
    print(f'ok   RGROUP_MAX_DEPTH = {series_depth} (include/rgroup.h)')
print(f'{len(names) - failed} of {len(names)} constants agree' if not failed else f'{failed} mismatches')
sys.exit(1 if failed else 0)
