"""Independent slow references used by the tests (pure Python, no engine code of their own: the engine's
objects they need are passed in)."""

from __future__ import annotations


def enc(word: str) -> bytes:
    return bytes(ord(c) - 64 for c in word)


def dec(data: bytes) -> str:
    return "".join("@" if b == 0 else chr(b + 64) for b in data)


def gaddag_strings(word: bytes) -> set[bytes]:
    """reverse(w), and reverse(w[:k]) + sep + w[k:] for k = 1..n-1: the GADDAG's rotations."""
    n = len(word)
    out = {word[::-1]}
    for k in range(1, n):
        out.add(word[:k][::-1] + b"\x00" + word[k:])
    return out


def brute_force_moves(board_rows, rack, words, ld, layout_premium, bingo_bonus=50, start=(7, 7)):
    """Every legal placement by trying every word at every square and direction (no GADDAG).

    board_rows: list of lists of machine letters (0 empty, |0x80 blank); rack: machine letters (0 blank);
    words: set of machine-letter bytes; layout_premium(r, c) -> (letter_mult, word_mult).
    Returns {(row, col, vertical, tiles): score}; one-tile plays appear once (across when they form an
    across word); on an empty board only across plays."""
    dim = len(board_rows)
    empty = all(t == 0 for row in board_rows for t in row)
    rack_counts = [0] * 64
    for t in rack:
        rack_counts[t] += 1
    by_len: dict[int, list[bytes]] = {}
    for w in words:
        by_len.setdefault(len(w), []).append(w)

    def tile(r, c):
        return board_rows[r][c] if 0 <= r < dim and 0 <= c < dim else 0

    def face(t):
        return 0 if t & 0x80 else ld.score(t)

    out = {}
    for vertical in (False, True):
        if empty and vertical:
            continue
        dr, dc = (1, 0) if vertical else (0, 1)
        for r0 in range(dim):
            for c0 in range(dim):
                if tile(r0 - dr, c0 - dc):
                    continue
                for length, ws in by_len.items():
                    r1, c1 = r0 + dr * (length - 1), c0 + dc * (length - 1)
                    if r1 >= dim or c1 >= dim or tile(r1 + dr, c1 + dc):
                        continue
                    squares = [(r0 + dr * i, c0 + dc * i) for i in range(length)]
                    for w in ws:
                        ok = True
                        new_idx = []
                        for i, (r, c) in enumerate(squares):
                            t = tile(r, c)
                            if t:
                                if (t & 0x7F) != w[i]:
                                    ok = False
                                    break
                            else:
                                new_idx.append(i)
                        if not ok or not new_idx or len(new_idx) > len(rack):
                            continue
                        if empty:
                            if start not in [squares[i] for i in new_idx]:
                                continue
                        else:
                            touches = False
                            for i in new_idx:
                                r, c = squares[i]
                                if tile(r - 1, c) or tile(r + 1, c) or tile(r, c - 1) or tile(r, c + 1):
                                    touches = True
                                    break
                            if not touches:
                                continue
                        # cross words
                        cross = []
                        for i in new_idx:
                            r, c = squares[i]
                            pr, pc = (0, 1) if vertical else (1, 0)
                            before, after = [], []
                            rr, cc = r - pr, c - pc
                            while tile(rr, cc):
                                before.insert(0, tile(rr, cc))
                                rr, cc = rr - pr, cc - pc
                            rr, cc = r + pr, c + pc
                            while tile(rr, cc):
                                after.append(tile(rr, cc))
                                rr, cc = rr + pr, cc + pc
                            if before or after:
                                cw = bytes([t & 0x7F for t in before] + [w[i]] + [t & 0x7F for t in after])
                                if cw not in words:
                                    ok = False
                                    break
                                cross.append((i, before, after))
                        if not ok:
                            continue
                        if len(new_idx) == 1 and vertical:
                            r, c = squares[new_idx[0]]
                            if tile(r, c - 1) or tile(r, c + 1):
                                continue  # counted by the across pass
                        # every way to cover the new letters with rack tiles (blanks as any letter)
                        for mask in range(1 << len(new_idx)):
                            need = rack_counts[:]
                            blanks = 0
                            for k, i in enumerate(new_idx):
                                if mask >> k & 1:
                                    blanks += 1
                                else:
                                    need[w[i]] -= 1
                            if blanks > rack_counts[0] or min(need) < 0:
                                continue
                            tiles = []
                            for i in range(length):
                                if i in new_idx:
                                    k = new_idx.index(i)
                                    tiles.append(w[i] | 0x80 if mask >> k & 1 else w[i])
                                else:
                                    tiles.append(0)
                            # score
                            main, wm, cross_total = 0, 1, 0
                            for i, (r, c) in enumerate(squares):
                                if tiles[i]:
                                    lm, m = layout_premium(r, c)
                                    main += face(tiles[i]) * lm
                                    wm *= m
                                else:
                                    main += face(tile(r, c))
                            for i, before, after in cross:
                                r, c = squares[i]
                                lm, m = layout_premium(r, c)
                                cross_total += (sum(face(t) for t in before + after) + face(tiles[i]) * lm) * m
                            score = main * wm + cross_total + (bingo_bonus if len(new_idx) == 7 else 0)
                            out[(r0, c0, vertical, tuple(tiles))] = score
    return out


def minimax_spread(game, gen, depth: int) -> int:
    """Plain minimax over every legal move (no pruning, no table, no move ordering): the final spread for the
    player on turn of `game` (an engine Game in solver mode, empty bag) after `depth` plies or the end of the
    game, whichever comes first. Moves come from `gen` (a MoveGen) and the tree is walked with the game's own
    play and undo; the game is left as it was."""
    p = game.on_turn
    sc = game.scores
    if game.game_over or depth == 0:
        return sc[p] - sc[1 - p]
    gen.generate(game.board, game.rack(p), 0, game.rack(1 - p), mode="all", sort=False)
    best = None
    for kind, row, col, vert, tiles, score, *_ in gen.moves():
        game.play(kind, row, col, vert, tiles, score)
        v = -minimax_spread(game, gen, depth - 1)
        game.undo()
        best = v if best is None else max(best, v)
    assert best is not None, "no legal move (not even a pass)"
    return best
