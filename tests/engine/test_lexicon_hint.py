"""The unknown-lexicon error says how to add a lexicon, in words that suit an API user too (no path to send)."""

from __future__ import annotations

import pytest

from macondo_server.engine.lexicon import LexiconRegistry, UnknownLexiconError
from macondo_server.engine.settings import Settings


def test_unknown_lexicon_error_says_how_to_add_one(tmp_path):
    reg = LexiconRegistry(Settings.load(str(tmp_path)))
    with pytest.raises(UnknownLexiconError) as exc:
        reg.get("NOPE")
    text = str(exc.value)
    assert text.startswith("unknown lexicon 'NOPE' (available: ")
    assert "\n" not in text
    assert "NAME.kwg or NAME.txt" in text and "NAME.klv2" in text
    assert "--data-dir" in text and "MACONDO_DATA_DIR" in text
    assert "operator" in text          # an API user learns it is the server's side, not a request's field


def test_a_record_without_lexicon_pragma_is_read_with_the_default_and_a_warning():
    from macondo_server.engine.replay import lexicon_for_record
    from macondo_server.model.gcg import parse_gcg

    record = parse_gcg("#player1 a A\n#player2 b B\n>a: AEINQST 8G QI +22 22\n")
    name, warnings = lexicon_for_record(record, ["NWL20", "SCOWL70"], "SCOWL70")
    assert name == "SCOWL70"
    assert len(warnings) == 1 and "no #lexicon line" in warnings[0] and "SCOWL70" in warnings[0]
    assert "--lexicon" in warnings[0]
    assert lexicon_for_record(record, ["NWL20", "SCOWL70"], "SCOWL70", "NWL20") == ("NWL20", [])


def test_a_gzip_word_list_is_a_lexicon_like_its_text(tmp_path, monkeypatch):
    """NAME.txt.gz is listed and compiled as NAME.txt is, to the same word graph; a broken or oversized
    compressed list is one clear error naming the file."""
    import gzip

    from macondo_server.engine import lexicon as lexmod

    monkeypatch.setenv("MACONDO_CACHE_DIR", str(tmp_path / "cache"))
    words = "AA\nAB\nBA\nCAB\nCABS\nSCAB\n"
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir()
    packed.mkdir()
    (plain / "TINY.txt").write_text(words)
    (packed / "TINY.txt.gz").write_bytes(gzip.compress(words.encode()))
    (packed / "OTHER.txt.gz.bak").write_bytes(b"x")
    a = LexiconRegistry(Settings.load(str(plain))).get("TINY")
    reg = LexiconRegistry(Settings.load(str(packed)))
    assert "TINY" in reg.available() and not any("OTHER" in n or "." in n for n in reg.available())
    b = reg.get("TINY")
    assert b.source == "TINY.txt.gz (compiled)"
    assert a.kwg.to_bytes() == b.kwg.to_bytes() and len(b.kwg.words()) == 6
    assert reg.describe("TINY") == (False, "TINY.txt.gz (compiled)")

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "BROKEN.txt.gz").write_bytes(gzip.compress(words.encode())[:-9])
    (bad / "NOTGZ.txt.gz").write_bytes(b"AA\nAB\n")
    (bad / "HUGE.txt.gz").write_bytes(gzip.compress(b"AB\n" * 2000))
    monkeypatch.setattr(lexmod, "MAX_WORD_LIST_BYTES", 1000)
    reg = LexiconRegistry(Settings.load(str(bad)))
    for name, said in (("BROKEN", "not a whole gzip file"), ("NOTGZ", "not a whole gzip file"),
                       ("HUGE", "more than 0 MB of words")):
        with pytest.raises(lexmod.LexiconError) as exc:
            reg.get(name)
        text = str(exc.value)
        assert f"{name}.txt.gz" in text and said in text and "\n" not in text and str(bad) not in text
