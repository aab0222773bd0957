#!/usr/bin/env python3
"""House conventions the compiler does not check (docs/conventions.md), run by ctest.

  namespace   code under a folder declares its names in that folder's namespace
              (engine/core -> edge, engine/<m>/... -> edge::<m>[::...], remote/<m> -> edge::<m>,
              views/... -> edge::views, app/cli -> edge::cli, app/studio -> edge::studio);
              blocks holding only forward declarations may name any namespace.
  qstring-out no function returns bool and reports its error through a QString* parameter
              (views use edge::views::Result, views/models/result.h; engine Result/Status).
  error-test  a test that expects a failure (EXPECT_FALSE(x.ok()) and the like) also checks
              what the message says (x.message() or edge::test::fails_with).

Known violations not yet fixed are listed in tests/conventions/known_violations.txt, one per
line as `<check> <file> <detail>`. A new violation fails; so does a listed one that is gone (take
it off the list), so the list only shrinks.

Usage: check_conventions.py ROOT [--print]   (--print: list every current violation and exit 0)
"""
import re
import subprocess
import sys
from pathlib import Path

FWD = re.compile(r'^\s*(template\s*<[^>]*>\s*)?(class|struct|enum class|enum struct)\s+\w+(\s*:\s*\w+)?\s*;\s*(//.*)?$')


def expected_namespaces(path: str):
    parts = path.split('/')
    top = parts[0]
    if top == 'engine' and len(parts) >= 3:
        if parts[1] == 'core':
            return ('edge',)
        return ('edge::' + parts[1],)
    if top == 'remote' and len(parts) >= 3:
        return ('edge::' + parts[1],)
    if top == 'views':
        return ('edge::views',)
    if top == 'app' and len(parts) >= 3:
        return ('edge::' + {'cli': 'cli', 'studio': 'studio'}.get(parts[1], parts[1]),)
    return None


def strip_comments_and_strings(text: str) -> str:
    """text with comments, string and character literals blanked (newlines kept), so braces and
    `namespace` inside them are not mistaken for code."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != '\n':
                out[k] = ' '

    while i < n:
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                i += 1
                continue
            end = ')' + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            blank(i, j)
            i = j
        elif text[i] == '"' or (text[i] == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a number
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(n, j + 1)
            blank(i, j)
            i = j
        else:
            i += 1
    return ''.join(out)


NS_OPEN = re.compile(r'\bnamespace\s+([A-Za-z_][\w:]*)\s*\{|\bnamespace\s*\{|[{}]')


def namespace_blocks(text: str):
    """(name, body text) of each named namespace block that is not nested in another named one
    (nested namespaces, `namespace detail` inside `edge::kv`, take their parent's name)."""
    code = strip_comments_and_strings(text)
    stack = []  # per open brace: the namespace name, '' for an anonymous one, None for other braces
    for m in NS_OPEN.finditer(code):
        tok = m.group(0)
        if tok == '}':
            if stack:
                name, start = stack.pop()
                if name and not any(s[0] for s in stack):
                    yield name, code[start:m.start()]
            continue
        if tok == '{':
            stack.append((None, m.end()))
        elif m.group(1):
            stack.append((m.group(1), m.end()))
        else:
            stack.append(('', m.end()))


def check_namespace(path: str, text: str):
    want = expected_namespaces(path)
    if want is None:
        return []
    out = []
    for name, body in namespace_blocks(text):
        if name in ('fs',):
            continue
        ok = any(name == w or name.startswith(w + '::') for w in want)
        if ok:
            continue
        real = [l for l in body.split('\n') if l.strip()]
        if real and all(FWD.match(l) for l in real):
            continue  # forward declarations of another layer's types
        out.append(('namespace', path, f'{name} (expected {want[0]})'))
    return out


QSTR = re.compile(r'\bbool\s+(?:\w+::)*(\w+)\s*\(([^;{)]*)\bQString\s*\*', re.S)


def check_qstring_out(path: str, text: str):
    if not path.endswith(('.h', '.cpp')):
        return []
    seen = set()
    out = []
    for m in QSTR.finditer(text):
        fn = m.group(1)
        if fn not in seen:
            seen.add(fn)
            out.append(('qstring-out', path, fn))
    return out


TEST = re.compile(r'^(TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\)', re.M)
EXPECT_FAIL = re.compile(r'(EXPECT|ASSERT)_FALSE\(\s*[\w.\->()*\[\]]*?\.ok\(\)\s*\)|(EXPECT|ASSERT)_FALSE\(\s*\w+\s*\)')
# What counts as reading the message: a find() on it, a matcher, an equality, or the helper.
CHECKS_MSG = re.compile(r'message(\(\))?\.(find|contains|startsWith)\(|fails_with\(|failsWith\(|HasSubstr\(|'
                        r'(EXPECT|ASSERT)_(EQ|NE|THAT)\([^;]*message|'
                        r'expect_error\(|error_mentions|\.what\(\)\)\.find|find\([^;]*message')


class _Span:
    def __init__(self, start):
        self._start = start

    def start(self):
        return self._start


def failure_assertions(body: str):
    """Positions of EXPECT_FALSE(<expr>.ok()) / ASSERT_FALSE(...) / EXPECT_TRUE(!<expr>.ok())."""
    for m in re.finditer(r'\b(EXPECT|ASSERT)_(FALSE|TRUE)\(', body):
        depth, i, in_str = 1, m.end(), False
        while i < len(body) and depth:
            c = body[i]
            if in_str:
                if c == '\\':
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == '(':
                depth += 1
            elif c == ')':
                depth -= 1
            i += 1
        inner = body[m.end():i - 1].strip()
        if m.group(2) == 'TRUE':
            if not inner.startswith('!'):
                continue
            inner = inner[1:].strip()
        if re.search(r'\.ok\(\)$', inner) or re.search(r'\.ok\(\)\)$', inner):
            yield _Span(m.start())


def check_error_tests(path: str, text: str):
    if not path.startswith('tests/') or not path.endswith('.cpp'):
        return []
    out = []
    heads = list(TEST.finditer(text))
    for k, m in enumerate(heads):
        body = text[m.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        # Each expected failure must be followed, before the next one, by a look at its message.
        fails = list(failure_assertions(body))
        unread = 0
        for k2, f in enumerate(fails):
            end = fails[k2 + 1].start() if k2 + 1 < len(fails) else len(body)
            if not CHECKS_MSG.search(body[f.start():end]):
                unread += 1
        if unread:
            out.append(('error-test', path, f'{m.group(2)}.{m.group(3)} ({unread} unread)'))
    return out


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else '.').resolve()
    files = subprocess.run(['git', 'ls-files', '*.cpp', '*.h', '*.cu'], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    found = []
    for f in files:
        text = (root / f).read_text(encoding='utf-8', errors='replace')
        found += check_namespace(f, text)
        found += check_qstring_out(f, text)
        found += check_error_tests(f, text)
    cur = {' '.join(v) for v in found}
    if '--print' in sys.argv:
        for v in sorted(cur):
            print(v)
        return 0
    known_file = root / 'tests/conventions/known_violations.txt'
    known = set()
    if known_file.exists():
        for line in known_file.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith('#'):
                known.add(line)
    new = sorted(cur - known)
    gone = sorted(known - cur)
    for v in new:
        print('convention broken: ' + v)
    for v in gone:
        print('fixed, take it off tests/conventions/known_violations.txt: ' + v)
    by = {}
    for v in cur:
        by[v.split()[0]] = by.get(v.split()[0], 0) + 1
    print(f'{len(files)} files; violations: ' + ', '.join(f'{k} {n}' for k, n in sorted(by.items())) +
          f' (all listed as known: {not new}); {len(gone)} listed ones fixed')
    return 1 if new or gone else 0


if __name__ == '__main__':
    sys.exit(main())
