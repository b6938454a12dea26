"""Prose names only what exists: every repository path, Markdown anchor, doc section and ``fabricd`` module that a
doc, template or docstring names must be there: in backticks (``fabricd/x/y.py``, ``docs/z.md#anchor``,
``fabricd.x.y``), bare with a file suffix (docs/z.md), as a Markdown link, or as a quoted section (docs/z.md, "Title").

Read: docs/*.md, README.md, lab/README.md, the comments of templates/, and the docstrings and comments of fabricd/,
lab/fabricd_lab/, scripts/ and bench/. Skipped, as not paths of this repository:

- a pattern: a placeholder or a glob (``<id>``, ``*``, ``{a,b}``, ``...``);
- what the build makes (``fabricd/_data/``, ``build/``, ``out/``, ``.venv/``);
- a path in another repository: the line or the two before it name that repository (:data:`OTHER_REPOS`:
  ``sonic-net/sonic-mgmt `tests/pfcwd/...```); a doc citing a new repository's files adds its name there;
- the made-up examples of docs/ARCHITECTURE.md's walkthroughs (:data:`EXAMPLES`);
- entry-point groups (``fabricd.commands``) and file names (``fabricd.rules.yml``) that look like module names.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer
from typer import _click as click  # typer >= 0.24 carries its own click

REPO = Path(__file__).resolve().parents[2]

TOP = ("fabricd", "lab", "docs", "tests", "scripts", "bench", "templates", "exporters", "inventory")
"""Top-level directories a path reference starts with."""
TOP_FILES = ("README.md", "Makefile", "pyproject.toml")
PACKAGES = (REPO / "fabricd", REPO / "lab" / "fabricd_lab")
SUBPACKAGES = tuple(
    sorted({d.name for root in PACKAGES for d in root.iterdir() if (d / "__init__.py").is_file()} - set(TOP))
)
"""``intent/host.py`` names fabricd/intent/host.py: a path inside a package may leave the package out."""
UNKEPT = ("build/", "out/", ".venv/", "dist/", "fabricd/_data")
EXAMPLES = frozenset({"juniper_junos", "junos.py", "acme.py"})
"""Names docs/ARCHITECTURE.md's walkthroughs invent for a NOS or NIC family being added."""
ENTRY_POINT_GROUPS = frozenset(
    m
    for f in ("pyproject.toml", "lab/pyproject.toml")
    for m in re.findall(r'^\[project\.entry-points\."([^"]+)"\]', (REPO / f).read_text(encoding="utf-8"), re.M)
)
FILE_SUFFIXES = frozenset({"yml", "yaml", "json", "txt", "md", "prom", "j2", "toml"})

_TICKED = re.compile(r"``([^`\n]+)``|`([^`\n]+)`")
_MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
_BARE = re.compile(rf"(?<![\w/.-])((?:{'|'.join(TOP)})/[\w/.-]*\.(?:py|md|j2|yml|yaml|sh|toml|json|txt))(?:#([\w-]+))?")
_NAMED_IN = re.compile(r"\b([A-Z][a-z]+[A-Z]\w*) \(`{0,2}((?:fabricd|lab/fabricd_lab)/[\w/]+\.py)`{0,2}\)")
"""``HostScript (fabricd/render/host_script.py)``: a class named with the module that defines it."""
_BARE_IN_PACKAGE = re.compile(rf"(?<![\w/.$-])((?:{'|'.join(SUBPACKAGES)})/[\w/.-]*\.py)\b")
_SECTION = re.compile(r"((?:docs/)?[\w-]+\.md)(?:'s)?,? (?:sections? )?\"([^\"]+)\"")
_PATH = re.compile(
    rf"^(?:\./)?((?:{'|'.join(TOP)})/[\w./-]*|{'|'.join(re.escape(f) for f in TOP_FILES)})"
    r"(?:#([\w-]+))?(?::[\w.:,-]*)?$"
)
_IN_PACKAGE = re.compile(rf"^((?:{'|'.join(SUBPACKAGES)})/[\w./-]*)(?::[\w.:,-]*)?$")
_MODULE = re.compile(r"^~?(fabricd(?:_lab)?(?:\.\w+)+)(?:\(\))?$")
_PATTERN = re.compile(r"[<>*{}\[\]$]|\.\.\.")
OTHER_REPOS = (
    "sonic-mgmt",
    "sonic-utilities",
    "exporter-toolkit",
    "NexusProgrammability",
    "ntc-templates",
    "prometheus/prometheus",
    "netdevops.me",
)
"""Repositories whose files fabricd's prose cites by their own paths."""
_OTHER_REPO = re.compile(r"\b(?:" + "|".join(map(re.escape, OTHER_REPOS)) + r")\b")


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def _anchors(md: Path) -> frozenset[str]:
    out: list[str] = []
    fenced = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            base = _slug(line.lstrip("#"))
            n = out.count(base) if base in out else 0
            out.append(base if n == 0 else f"{base}-{n}")
    out += re.findall(r'<a (?:name|id)="([^"]+)"', md.read_text(encoding="utf-8"))
    return frozenset(out)


@cache
def _sections(md: Path) -> tuple[list[str], list[str]]:
    """The doc's headings, and its lines as a paragraph or list item lead-in reads (``- **Title.** text``), in lower
    case without Markdown emphasis."""
    fenced = False
    heads: list[str] = []
    leads: list[str] = []
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            plain = re.sub(r"`|\*\*", "", line).strip().lower()
            (heads if line.startswith("#") else leads).append(plain.lstrip("#- ").strip())
    return heads, leads


def _check_section(doc: str, title: str, here: Path) -> str | None:
    """A section named by its title: a heading of the doc contains it, or a paragraph or list item starts with it."""
    target = REPO / doc if "/" in doc else (here.parent / doc if here.suffix == ".md" else REPO / "docs" / doc)
    if not target.is_file():
        return None if "/" not in doc else f"{doc}: no such file"
    heads, leads = _sections(target)
    t = title.lower()
    if not any(t in h for h in heads) and not any(lead.startswith(t) for lead in leads):
        return f'{doc}, "{title}": no such section'
    return None


def _check_path(path: str, anchor: str | None) -> str | None:
    """Why ``path`` (with ``#anchor``) does not resolve, or None when it does."""
    path = path.rstrip("/.,")
    if path.startswith(UNKEPT) or _PATTERN.search(path) or EXAMPLES & set(path.split("/")):
        return None
    target = REPO / path
    if not target.exists():
        return f"{path}: no such file or directory"
    if anchor and target.suffix == ".md" and anchor not in _anchors(target):
        return f"{path}#{anchor}: no such section"
    return None


@cache
def _defines(module_file: Path, name: str) -> bool:
    """``name`` is defined at the top level of the module (a function, class, assignment or import)."""
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
        if isinstance(node, ast.Import | ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _module_file(parts: list[str]) -> Path | None:
    root = REPO / ("lab" if parts[0] == "fabricd_lab" else "")
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _check_module(dotted: str) -> str | None:
    """``fabricd.a.b`` is a module, or a module and a name it defines (``fabricd.a.b.name``, ``.Class.method``)."""
    if dotted in ENTRY_POINT_GROUPS or dotted.rsplit(".", 1)[-1] in FILE_SUFFIXES:
        return None
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        found = _module_file(parts[:n])
        if found is None:
            continue
        rest = parts[n:]
        if not rest or _defines(found, rest[0]):
            return None
        return f"{dotted}: {'.'.join(parts[:n])} defines no {rest[0]!r}"
    return f"{dotted}: no such module"


def _check_token(token: str, here: Path) -> str | None:
    token = token.strip()
    m = _PATH.match(token)
    if m:
        return _check_path(m.group(1), m.group(2))
    m = _IN_PACKAGE.match(token)
    if m:
        return _check_in_package(m.group(1))
    m = _MODULE.match(token)
    if m:
        return _check_module(m.group(1))
    return None


def _check_in_package(path: str) -> str | None:
    """``intent/host.py``, ``intent/host`` or ``intent/host.nic_intent`` (a module and a name it defines)."""
    path = path.rstrip("/.,")
    if _PATTERN.search(path) or EXAMPLES & set(path.split("/")) or any((r / path).exists() for r in PACKAGES):
        return None
    head, _, last = path.rpartition("/")
    stem, _, name = last.partition(".")
    for root in PACKAGES:
        module = root / head / f"{stem}.py"
        if module.is_file() and name and name not in ("py", "md") and _defines(module, name.split(".")[0]):
            return None
        if module.is_file() and not name:
            return None
    return f"{path}: in neither fabricd/ nor lab/fabricd_lab/"


def _check_link(link: str, here: Path) -> str | None:
    """A relative Markdown link: to a file beside the document (with an anchor), or an anchor of the document."""
    if re.match(r"^[a-z]+:", link) or _PATTERN.search(link):
        return None
    path, _, anchor = link.partition("#")
    target = (here.parent / path) if path else here
    if not target.exists():
        return f"{link}: no such file (from {here.relative_to(REPO)})"
    if anchor and target.suffix == ".md" and anchor not in _anchors(target):
        return f"{link}: no such section"
    return None


def _prose_of_markdown(md: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(md.read_text(encoding="utf-8").splitlines(), 1)


def _prose_of_python(py: Path) -> Iterator[tuple[int, str]]:
    """Docstrings and comments of a module, line by line."""
    text = py.read_text(encoding="utf-8")
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body and isinstance(node.body[0], ast.Expr):
                start = node.body[0].lineno
                for k, line in enumerate(doc.splitlines()):
                    yield start + k, line
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for k, line in enumerate(node.value.value.splitlines()):  # attribute docstrings
                yield node.lineno + k, line
    with py.open("rb") as fh:
        for tok in tokenize.tokenize(fh.readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string


def _prose_of_template(j2: Path) -> Iterator[tuple[int, str]]:
    """The template's comments (``{# ... #}``) and its header lines of shell or config comments."""
    text = j2.read_text(encoding="utf-8")
    for m in re.finditer(r"\{#(.*?)#\}", text, re.S):
        first = text.count("\n", 0, m.start()) + 1
        for k, line in enumerate(m.group(1).splitlines()):
            yield first + k, line
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("#", "!")) and not line.lstrip().startswith("{#"):
            yield i, line


def _documents() -> list[Path]:
    docs = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md", REPO / "lab" / "README.md"]
    templates = sorted((REPO / "templates").rglob("*.j2"))
    code = [p for top in ("fabricd", "lab/fabricd_lab", "scripts", "bench") for p in sorted((REPO / top).rglob("*.py"))]
    return [p for p in docs + templates + code if p.is_file()]


def _stale(doc: Path) -> list[str]:
    if doc.suffix == ".md":
        lines = _prose_of_markdown(doc)
    elif doc.suffix == ".j2":
        lines = _prose_of_template(doc)
    else:
        lines = _prose_of_python(doc)
    return [f"{doc.relative_to(REPO)}:{why}" for why in _stale_numbered(lines, doc)]


def _stale_lines(lines: list[str], doc: Path = REPO / "docs" / "nics.md") -> list[str]:
    """``_stale`` of Markdown text given as lines (for the checker's own test)."""
    return _stale_numbered(enumerate(lines, 1), doc)


def _stale_numbered(lines: Iterable[tuple[int, str]], doc: Path) -> list[str]:
    out = []
    recent: list[str] = []
    for lineno, line in lines:
        recent = [*recent[-2:], line]
        if any(_OTHER_REPO.search(seen) for seen in recent):
            continue  # names a path of another repository
        found = [_check_token(m.group(1) or m.group(2), doc) for m in _TICKED.finditer(line)]
        bare = _TICKED.sub("", line)
        found += [_check_path(m.group(1), m.group(2)) for m in _BARE.finditer(bare)]
        found += [_check_in_package(m.group(1)) for m in _BARE_IN_PACKAGE.finditer(bare)]
        found += [_check_section(m.group(1), m.group(2), doc) for m in _SECTION.finditer(line)]
        found += [
            f"{m.group(2)} defines no {m.group(1)}"
            for m in _NAMED_IN.finditer(line)
            if (REPO / m.group(2)).is_file() and not _defines(REPO / m.group(2), m.group(1))
        ]
        out += [f"{lineno}: {why}" for why in found if why]
        if doc.suffix == ".md":
            for m in _MD_LINK.finditer(line):
                why = _check_link(m.group(1), doc)
                if why:
                    out.append(f"{lineno}: {why}")
    return list(dict.fromkeys(out))  # a module docstring is read both as a docstring and as a string statement


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_path_section_and_module_exists(doc: Path) -> None:
    stale = _stale(doc)
    assert not stale, "stale references (rename them to what exists, or drop them):\n" + "\n".join(stale)


def test_the_checker_catches_what_it_is_for(tmp_path: Path) -> None:
    """The checker itself: a missing file, a missing section and a missing module name are each caught; patterns and
    what exists pass."""
    assert _check_token("fabricd/no/such.py", tmp_path) is not None
    assert _check_token("docs/nics.md#no-such-section", tmp_path) is not None
    assert _check_token("fabricd.intent.host.no_such_name", tmp_path) is not None
    assert _check_token("fabricd.no_such_module", tmp_path) is not None
    assert _check_token("fabricd/intent/host.py", tmp_path) is None
    assert _check_token("fabricd.intent.host.nic_intent", tmp_path) is None
    assert _check_token("fabricd/nos/<id>/spec.py", tmp_path) is None
    assert _check_token("README.md", tmp_path) is None
    assert _check_token("intent/host.py", tmp_path) is None
    assert _check_token("intent/no_such.py", tmp_path) is not None
    assert _check_token("intent/host.nic_intent", tmp_path) is None
    assert _check_token("intent/host.no_such_name", tmp_path) is not None
    assert _check_token("fabricd.commands", tmp_path) is None
    assert _stale_lines(["read from sonic-net/sonic-mgmt", "`tests/pfcwd/files/x.lua`"]) == []
    assert _stale_lines(
        [
            "see `fabricd/no/such.py`",
            "and [the guide](no-such.md)",
            "or docs/gone.md,",
            'as docs/ARCHITECTURE.md, "No such section" says',
        ]
    ) == [
        "1: fabricd/no/such.py: no such file or directory",
        "2: no-such.md: no such file (from docs/nics.md)",
        "3: docs/gone.md: no such file or directory",
        '4: docs/ARCHITECTURE.md, "No such section": no such section',
    ]
    assert _stale_lines(["see readers/switch/sonic.py, :class:`~fabricd.intent.host.NoSuchClass`"]) == [
        "1: fabricd.intent.host.NoSuchClass: fabricd.intent.host defines no 'NoSuchClass'",
        "1: readers/switch/sonic.py: in neither fabricd/ nor lab/fabricd_lab/",
    ]
    assert _stale_lines(["prints an EosSwitchIntent (fabricd/intent/switch.py)"]) == [
        "1: fabricd/intent/switch.py defines no EosSwitchIntent"
    ]


_COMMAND = re.compile(r"`(fabricd [^`]+)`")


def _flags(command: Any) -> set[str]:
    return {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)} | {"--help"}


def _check_command_line(root: Any, line: str) -> list[str]:
    """``fabricd a b --flag`` (one command of a shell line): the command path exists and has the flag."""
    words = line.split()[1:]
    command: Any = root
    path: list[str] = []
    for w in words:
        if w.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", w) or not hasattr(command, "get_command"):
            break
        sub = command.get_command(click.core.Context(command), w)
        if sub is None:
            return [f"`{line}`: {' '.join(['fabricd', *path])} has no command {w!r}"]
        command, path = sub, [*path, w]
    if hasattr(command, "get_command"):
        return []  # a group's options are not what a doc line shows
    known = _flags(command)
    named = {w.split("=")[0] for w in words if w.startswith("--")}
    return [f"`{line}`: fabricd {' '.join(path)} has no {f}" for f in sorted(named - known)]


def test_every_command_and_flag_in_the_docs_exists() -> None:
    """docs/*.md, README.md and lab/README.md name only commands and flags the CLI has (fabricd-lab's included)."""
    from fabricd.cli.main import build_app

    root = typer.main.get_command(build_app())
    assert _check_command_line(root, "fabricd validate --no-such-flag")  # the check itself
    assert _check_command_line(root, "fabricd host no-such-command")
    assert not _check_command_line(root, "fabricd host apply --hosts gpu1")
    docs = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md", REPO / "lab" / "README.md"]
    stale = []
    for doc in docs:
        for lineno, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in _COMMAND.finditer(text):
                for part in re.split(r"\s*(?:&&|\|\||;|\|(?!\\))\s*", m.group(1).replace("\\|", "|")):
                    if part.startswith("fabricd "):
                        stale += [f"{doc.relative_to(REPO)}:{lineno}: {why}" for why in _check_command_line(root, part)]
    assert not stale, "commands or flags the CLI does not have:\n" + "\n".join(stale)
