"""The Python examples of the client's documentation (clients/python/README.md, docs/clients.md) run as
written against a live server (only the address changed): the bot plays a whole game with the engine, whose
moves `engine_move` plays into the record, and writes it as GCG."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from macondo_server.model.gcg import parse_gcg

from conftest import ROOT, have_lexicon

DOCUMENTS = [ROOT / "clients" / "python" / "README.md", ROOT / "docs" / "clients.md"]
ADDRESS = "127.0.0.1:50051"
# the documents live in the checkout; a test run against an installed package has only the tests
HAVE_DOCUMENTS = all(p.is_file() for p in DOCUMENTS)
pytestmark = pytest.mark.skipif(not HAVE_DOCUMENTS, reason="the client's documents are not beside the tests")


def _examples() -> list[tuple[str, int, str]]:
    out: list[tuple[str, int, str]] = []
    if not HAVE_DOCUMENTS:
        return out
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            line = text[:m.start()].count("\n") + 1
            out.append((path.relative_to(ROOT).as_posix(), line, m.group(1)))
    return out


EXAMPLES = _examples()


def test_the_documents_hold_a_complete_bot():
    bots = [code for _, _, code in EXAMPLES if "engine_move" in code]
    assert len(bots) == 2
    for code in bots:
        for call in ("create_game(", "engine_move(", "play_move(", "export_game(", "MacondoError"):
            assert call in code, call


@pytest.mark.parametrize("doc,line,code", EXAMPLES, ids=[f"{d}:{n}" for d, n, _ in EXAMPLES])
def test_example_runs(server, tmp_path, monkeypatch, doc, line, code):
    for lexicon in re.findall(r"lex ([A-Z0-9_]+);", code):
        if not have_lexicon(lexicon) and lexicon != "SCOWL70":
            pytest.skip(f"the example needs the shared lexicon {lexicon}")
    assert ADDRESS in code, "an example talks to the documented address"
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.replace(ADDRESS, f"127.0.0.1:{server.port}"), f"{doc}:{line}", "exec"),
             {"__name__": "__main__"})
    printed = out.getvalue()
    assert printed.strip()
    if "engine_move" not in code:
        return
    # the bot: a whole game, no error caught, the engine's moves played by engine_move alone
    assert not re.search(r"^[A-Z_]+: .* \(reason ", printed, re.M), printed
    assert re.search(r"'mybot': \d+, 'engine': \d+\} (standard|consecutive_zeros)$", printed, re.M), printed
    record = parse_gcg(Path(tmp_path / "mybot-vs-engine.gcg").read_text(encoding="utf-8"))
    engine_moves = [e for e in record.events if e.nick == "engine" and e.type in ("play", "pass", "exchange")]
    assert len(engine_moves) == printed.count("engine played ") > 0
    mine = [e for e in record.events if e.nick == "mybot" and e.type in ("play", "pass", "exchange")]
    assert abs(len(mine) - len(engine_moves)) <= 1
