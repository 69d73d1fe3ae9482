from engine_cy.common cimport ml_t, MAX_ALPHABET
from libc.stdint cimport int32_t

cdef class LetterDistribution:
    cdef readonly str name
    cdef readonly int size                 # number of machine letters incl. blank (English: 27)
    cdef int32_t counts[MAX_ALPHABET]      # tiles of each letter in the bag at the start
    cdef int32_t scores[MAX_ALPHABET]      # face value in points (blank 0)
    cdef bint vowels[MAX_ALPHABET]
    cdef readonly list labels              # label of each machine letter ("?" for 0)
    cdef readonly list lower_labels        # lowercase (blank) form of each label ("?" for 0)
    cdef readonly dict _index              # label -> machine letter
    cdef readonly dict _lower_index        # lowercase form -> machine letter (letters only)
    cdef readonly list multi               # multi-letter labels, longest first
    cdef readonly frozenset _multi_forms   # multi-letter labels and their lowercase forms
    cdef readonly list _bare               # (label, lowercase) of the multi-letter tiles read without brackets
