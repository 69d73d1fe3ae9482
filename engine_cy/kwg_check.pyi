# Type stub of the Cython module engine_cy.kwg_check (kwg_check.pyx): the load-time check of KWG bytes.
# Its checking function is C-level only (cimported by engine_cy.kwg); Python sees the error and the limits.

KWG_MAX_NODES: int
KWG_MAX_TILE: int
KWG_MAX_WORD_LEN: int
KWG_MAX_WORDS: int
KWG_MAX_COUNT: int

class LexiconFormatError(ValueError):
    """A KWG or KLV file breaks the format (or the limits the engine relies on); the message names the defect
    and, where there is one, the node."""
