"""The web board in headless Chromium with other languages and the 21x21 board (web/test/languages.mjs): a
Catalan position with L·L, NY and QU tiles, each label inside its square, and its moves equal to `macondo gen`;
a move played with a tile order of multi-letter tiles in brackets and one typed without brackets, the positions
equal to `macondo commit`; a 21x21 position drawn as a 21x21 grid with its quadruple squares coloured and
labelled, its opening equal to `macondo gen` and played. MACONDO_WEB_DOCS_SHOTS=1 also copies the screenshots
docs/board-catalan.png and docs/board-super.png. Skipped where chromium, node/npm or the shared DISC2 and
CEL_super lexica are absent."""

from __future__ import annotations

import os
import shutil

import pytest
from test_connect_node import language_case
from test_web import SHOTS, _cli_json, drive_board, need_board

from conftest import ROOT, have_lexicon

EMPTY = "/".join(["15"] * 15)
SUPER_EMPTY = "/".join(["21"] * 21)
DOC_SHOTS = ("board-catalan", "board-super")      # shown by docs/web-board.md and docs/languages.md


@pytest.mark.skipif(not (have_lexicon("DISC2") and have_lexicon("CEL_super")),
                    reason="shared DISC2 / CEL_super lexica absent")
def test_board_in_catalan_and_on_the_super_board(capsys):
    need_board()
    written = language_case("magpie_cgp_roundtrip_catalan_cgp")["expect"]["written_cgp_equals"]
    catalan = f"{written} lex DISC2;"
    # the same board with L·L and NY swapped for an S and an N of the bag: the bag then holds them
    assert "CE[L·L]A4" in written and "BO[NY]1E" in written
    bag_cgp = catalan.replace("CE[L·L]A4", "CESA4").replace("BO[NY]1E", "BON1E")
    move, order = "3G PRISARA", "[L·L][NY]ÇE"
    empty = f"{EMPTY} A[L·L]?[QU]ESI/ 0/0 0 lex DISC2;"
    typed = "8B QUIL·LAiES"
    super_cgp = f"{SUPER_EMPTY} IONIZED/ 0/0 0 lex CEL_super;"
    env = {"MACONDO_CATALAN_CGP": catalan, "MACONDO_CATALAN_BAG_CGP": bag_cgp, "MACONDO_CATALAN_MOVE": move,
           "MACONDO_CATALAN_ORDER": order, "MACONDO_CATALAN_EMPTY_CGP": empty, "MACONDO_CATALAN_TYPED": typed,
           "MACONDO_SUPER_CGP": super_cgp}
    page = drive_board("languages.mjs", env, timeout=300)

    assert page["steps"] == ["board-catalan", "catalan-typed", "board-super"]
    for name in page["steps"]:
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    if os.environ.get("MACONDO_WEB_DOCS_SHOTS") == "1":
        for name in DOC_SHOTS:
            shutil.copyfile(SHOTS / f"{name}.png", ROOT / "docs" / f"{name}.png")

    # Catalan: 82 tiles on the 15x15 board, L·L, NY and QU each one square with its whole label inside it
    cat = page["catalan"]
    b = cat["board"]
    assert (b["dim"], b["layout"], b["squares"], b["rows"]) == (15, "standard15", 225, 15)
    assert b["columns"] == list("ABCDEFGHIJKLMNO")
    assert len(b["tiles"]) == 82 and cat["cgp"].split()[0] == written.split()[0]
    labels = {t["coord"]: t for t in b["tiles"]}
    assert labels["J6"]["label"] == "L·L" and labels["I9"]["label"] == "NY" and labels["D12"]["label"] == "QU"
    assert all(t["fits"] for t in b["tiles"]), [t for t in b["tiles"] if not t["fits"]]
    single = labels["A12"]["font"]
    assert labels["J6"]["font"] < labels["I9"]["font"] < single          # three letters set smaller than two
    assert sorted(t["coord"] for t in b["tiles"] if t["blank"]) == ["E6", "G15"]
    assert cat["racks"][0]["chips"] == list("AAIPRRS") and cat["racks"][0]["onTurn"]
    assert not cat["hint"]["hidden"] and all(f"[{t}]" in cat["hint"]["text"] for t in ("L·L", "NY", "QU"))
    # its moves equal `macondo gen`
    gen = _cli_json(["gen", catalan, "-n", "30", "--json"], capsys)
    assert [(m["move"], m["score"], m["equity"]) for m in page["catalanMoves"]] == \
        [(m["move"], str(m["score"]), f"{m['equity']:.3f}") for m in gen["moves"]]
    assert page["catalanPreview"] == list(gen["moves"][0]["move"].split()[1])

    # a tile order of multi-letter tiles: the position equals `macondo commit --tileorder`; the mover drew L·L
    # and NY, known to the opponent now that the bag is empty
    assert page["bag"]["need"] == 4 and "[L·L]" in page["bag"]["unseen"] and "[NY]" in page["bag"]["unseen"]
    commit = _cli_json(["commit", bag_cgp, move, "--tileorder", order, "--json"], capsys)
    played = page["bagPlayed"]
    assert played["error"] == "" and played["last"] == move and played["cgp"] == commit["cgp"]
    mover = next(r for r in played["racks"] if not r["onTurn"])
    assert mover["known"] and sorted(mover["chips"]) == sorted(["Ç", "E", "L·L", "NY"])
    assert sorted(mover["multi"]) == ["L·L", "NY"]

    # a move typed without brackets: the engine's notation back, QU and L·L one square each
    assert page["emptyRack"][0]["chips"] == ["?", "A", "E", "I", "L·L", "QU", "S"]
    assert page["emptyRack"][0]["multi"] == ["L·L", "QU"]
    t = page["typed"]
    assert t["error"] == "" and t["last"] == "8B [QU]I[L·L]AiES"
    row8 = sorted((x for x in t["board"]["tiles"] if x["last"]), key=lambda x: x["coord"])
    assert [(x["coord"], x["label"], x["blank"]) for x in row8] == [
        ("B8", "QU", False), ("C8", "I", False), ("D8", "L·L", False), ("E8", "A", False), ("F8", "I", True),
        ("G8", "E", False), ("H8", "S", False)]
    assert all(x["fits"] for x in row8)
    typed_commit = _cli_json(["commit", empty, typed, "--json"], capsys)
    assert typed_commit["cgp"].split()[0] == "15/15/15/15/15/15/15/1[QU]I[L·L]AiES7/15/15/15/15/15/15/15"

    # the 21x21 board: as large as the position, A to U, quadruple word and letter squares coloured and labelled
    s = page["superEmpty"]
    assert (s["dim"], s["layout"], s["squares"], s["rows"]) == (21, "standard21", 441, 21)
    assert s["columns"] == list("ABCDEFGHIJKLMNOPQRSTU")
    assert sorted(q["coord"] for q in s["qws"]) == ["A1", "A21", "U1", "U21"]
    assert {q["label"] for q in s["qws"]} == {"4W"} and {q["label"] for q in s["qls"]} == {"4L"}
    assert len(s["qls"]) == 8 and s["tws"] > 0 and s["dls"] > 0
    colours = {s["qws"][0]["colour"], s["qls"][0]["colour"]}
    assert len(colours) == 2 and "rgba(0, 0, 0, 0)" not in colours
    assert s["squareSize"][0] == pytest.approx(s["squareSize"][1], abs=0.5) and s["inPanel"]
    # its opening equals `macondo gen` (MAGPIE's: 11K IONIZED for 104), played on the board
    sgen = _cli_json(["gen", super_cgp, "-n", "30", "--json"], capsys)
    assert (page["superMoves"][0]["move"], page["superMoves"][0]["score"]) == ("11K IONIZED", "104")
    assert [m["move"] for m in page["superMoves"]] == [m["move"] for m in sgen["moves"]]
    sp = page["superPlayed"]
    assert sp["error"] == "" and sp["last"] == "11K IONIZED" and "+104" in sp["lastMove"]
    assert sorted((x["coord"], x["label"]) for x in sp["board"]["tiles"] if x["last"]) == \
        sorted(zip([f"{c}11" for c in "KLMNOPQ"], "IONIZED", strict=True))
    assert sp["board"]["dim"] == 21 and sp["board"]["inPanel"] and len(page["superReply"]) > 0
    # the page stays within the window (186 unseen tiles wrap)
    assert b["pageFits"] and s["pageFits"] and sp["board"]["pageFits"]
    assert page["consoleErrors"] == []
