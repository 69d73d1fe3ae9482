# Self-play between two static-equity bots. One AutoplayWorker per thread; each game runs with the GIL
# released. Game g's tiles come from a seed derived from (seed, g) only, so results do not depend on
# thread timing.
cimport cython
from libc.stdint cimport uint8_t, uint64_t
from engine_cy.common cimport RACK_SIZE
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.game cimport Game
from engine_cy.move cimport Move, MOVE_PLACE
from engine_cy.movegen cimport MoveGen, RECORD_BEST
from engine_cy.cross_set cimport cross_set_all
from engine_cy.rng cimport splitmix64

cdef enum:
    MAX_TURNS = 400


def game_seed(uint64_t seed, uint64_t index):
    """The tile seed of game `index` (pairs share one: index // 2)."""
    cdef uint64_t st = seed ^ (index * 0x9E3779B97F4A7C15ULL)
    return splitmix64(&st)


@cython.final
cdef class AutoplayWorker:
    """One thread's game and bots. bot 0 and bot 1 may use different lexica and leaves."""
    cdef Game game
    cdef MoveGen gen0, gen1
    cdef Kwg kwg0, kwg1
    cdef bint same_lexicon
    cdef int bingos[2]
    cdef int turns
    cdef public bint stop

    def __init__(self, Kwg kwg1, Klv klv1, Kwg kwg2, Klv klv2, LetterDistribution ld, Board board,
                 int bingo_bonus=50):
        self.game = Game(kwg1, ld, board, 0, bingo_bonus, 6)
        self.gen0 = MoveGen(kwg1, ld, klv1, bingo_bonus)
        self.gen1 = MoveGen(kwg2, ld, klv2, bingo_bonus)
        self.gen0.bind(board)
        self.gen1.bind(board)
        self.kwg0 = kwg1
        self.kwg1 = kwg2
        self.same_lexicon = kwg1 is kwg2
        self.stop = False

    cdef void recompute_cross(self, int bot) noexcept nogil:
        """Cross-sets for the bot's own lexicon (only when the two bots use different lexica)."""
        if bot == 0:
            cross_set_all(self.game.board, self.kwg0.nodes, self.kwg0.dawg_root, self.kwg0.gaddag_root,
                          self.game.scores_tbl, self.game.all_letters)
        else:
            cross_set_all(self.game.board, self.kwg1.nodes, self.kwg1.dawg_root, self.kwg1.gaddag_root,
                          self.game.scores_tbl, self.game.all_letters)

    cdef int play_game_c(self, uint64_t seed, int first_bot) except -1 nogil:
        cdef int seat, bot, opp_value
        cdef Move m
        self.game.reset_c(seed)
        self.game.draw_c(0, RACK_SIZE, NULL)
        self.game.draw_c(1, RACK_SIZE, NULL)
        self.bingos[0] = 0
        self.bingos[1] = 0
        self.turns = 0
        while not self.game.over and self.turns < MAX_TURNS and not self.stop:
            seat = self.game.on_turn
            bot = (first_bot + seat) % 2
            if not self.same_lexicon:
                self.recompute_cross(bot)
            opp_value = self.game.rack_value(1 - seat) if self.game.bag_n == 0 else -1
            if bot == 0:
                self.gen0.gen_c(&self.game.racks[seat][0], self.game.bag_n, opp_value, RECORD_BEST, 0, False)
                m = self.gen0.move_buf[0]
            else:
                self.gen1.gen_c(&self.game.racks[seat][0], self.game.bag_n, opp_value, RECORD_BEST, 0, False)
                m = self.gen1.move_buf[0]
            if m.kind == MOVE_PLACE and m.n_tiles == RACK_SIZE:
                self.bingos[bot] += 1
            self.game.play_c(&m)
            self.turns += 1
        return 0

    def game_state(self):
        """The worker's Game (for writing the last game's history)."""
        return self.game

    def play(self, uint64_t seed, int first_bot):
        """Play one game; returns (scores by bot, bingos by bot, turns, end reason)."""
        cdef int s0, s1
        with nogil:
            self.play_game_c(seed, first_bot)
        s0 = self.game.score[0]
        s1 = self.game.score[1]
        # seat 0 is played by first_bot
        by_bot = (s0, s1) if first_bot == 0 else (s1, s0)
        return by_bot, (self.bingos[0], self.bingos[1]), self.turns, self.game.end_reason_name
