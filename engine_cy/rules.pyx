# The rules applied to one given play (not generated ones): its score, the words it forms, and whether it is
# legal. For checking and scoring plays that come from outside the move generator (a client's move, a game
# record); the generator scores and checks its own plays incrementally.
from engine_cy.common cimport RACK_SIZE
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.alphabet cimport LetterDistribution


def _walk_words(Board board, int row, int col, bint vertical, tiles):
    """(main word squares, [cross word squares per new tile]) for a placement; squares as (r, c, ml, new)."""
    cdef int dim = board.dim, i, r, c, rr, cc
    cdef int dr = 1 if vertical else 0, dc = 0 if vertical else 1
    n = len(tiles)
    if n == 0:
        raise ValueError("a placement needs tiles")
    if row < 0 or col < 0 or row + dr * (n - 1) >= dim or col + dc * (n - 1) >= dim:
        raise ValueError("the play runs off the board")
    main = []
    # extend over tiles touching the ends, so the main word is whole
    r, c = row - dr, col - dc
    before = []
    while 0 <= r < dim and 0 <= c < dim and board.get(r, c) != 0:
        before.insert(0, (r, c, board.get(r, c), False))
        r -= dr
        c -= dc
    main.extend(before)
    crosses = []
    for i in range(n):
        r, c = row + dr * i, col + dc * i
        t = tiles[i]
        if t == 0:
            if board.get(r, c) == 0:
                raise ValueError("a played-through square is empty")
            main.append((r, c, board.get(r, c), False))
            continue
        if board.get(r, c) != 0:
            raise ValueError("a new tile is placed on an occupied square")
        main.append((r, c, t, True))
        cw = []
        rr, cc = r - dc, c - dr
        while 0 <= rr < dim and 0 <= cc < dim and board.get(rr, cc) != 0:
            cw.insert(0, (rr, cc, board.get(rr, cc), False))
            rr -= dc
            cc -= dr
        cw.append((r, c, t, True))
        rr, cc = r + dc, c + dr
        while 0 <= rr < dim and 0 <= cc < dim and board.get(rr, cc) != 0:
            cw.append((rr, cc, board.get(rr, cc), False))
            rr += dc
            cc += dr
        if len(cw) > 1:
            crosses.append(cw)
    r, c = row + dr * n, col + dc * n
    while 0 <= r < dim and 0 <= c < dim and board.get(r, c) != 0:
        main.append((r, c, board.get(r, c), False))
        r += dr
        c += dc
    return main, crosses


def _word_score(Board board, LetterDistribution ld, squares):
    cdef int total = 0, mult = 1, lm, wm, val
    for (r, c, t, new) in squares:
        val = 0 if (t & 0x80) else ld.scores[t]
        if new:
            lm = board.letter_mult[0][r * board.dim + c]
            wm = board.word_mult[0][r * board.dim + c]
            total += val * lm
            mult *= wm
        else:
            total += val
    return total * mult


def score_play(Board board, LetterDistribution ld, int row, int col, bint vertical, tiles, int bingo_bonus=50):
    """Score of a placement (tiles per square, 0 = played-through), valid words or not: main word plus
    every cross word, premiums on new tiles only, blanks 0, bingo bonus for 7 tiles."""
    main, crosses = _walk_words(board, row, col, vertical, tiles)
    score = (_word_score(board, ld, main) if len(main) > 1 else 0)
    for cw in crosses:
        score += _word_score(board, ld, cw)
    if sum(1 for t in tiles if t) == RACK_SIZE:
        score += bingo_bonus
    return score


def formed_words(Board board, int row, int col, bint vertical, tiles):
    """Words a placement forms, main word first, then cross words in board order (machine letters)."""
    main, crosses = _walk_words(board, row, col, vertical, tiles)
    out = []
    if len(main) > 1:
        out.append(bytes([t & 0x7F for (_, _, t, _) in main]))
    for cw in crosses:
        out.append(bytes([t & 0x7F for (_, _, t, _) in cw]))
    return out


def play_error(Board board, Kwg kwg, LetterDistribution ld, int row, int col, bint vertical, tiles):
    """Why a placement is illegal (a message), or None: it must cover the start square on an empty board,
    else touch a tile; every word it forms must be in the lexicon."""
    cdef int i, r, c, dim = board.dim
    try:
        words = formed_words(board, row, col, vertical, tiles)
    except ValueError as exc:
        return str(exc)
    new = [(row + i * vertical, col + i * (not vertical)) for i, t in enumerate(tiles) if t]
    if not new:
        return "the play places no tiles"
    if board.n_tiles == 0:
        if (board.start_row, board.start_col) not in new:
            return "the first play must cover the centre square"
        if len(tiles) < 2:
            return "the first play must form a word of at least two letters"
    else:
        touches = False
        for r, c in new:
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < dim and 0 <= cc < dim and board.get(rr, cc) != 0:
                    touches = True
        if not touches:
            return "the play does not touch any tile on the board"
    if not words:
        return "the play forms no word"
    for w in words:
        if not kwg.contains(w):
            return f"{''.join(ld.label(t) for t in w)} is not a word in the lexicon"
    return None
