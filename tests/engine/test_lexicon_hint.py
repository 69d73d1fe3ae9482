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
