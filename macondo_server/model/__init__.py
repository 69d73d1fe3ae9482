"""The data model: positions, moves, coordinates, tiles and their text formats (CGP, move notation, GCG).

The lowest Python layer: it imports only the Cython core's alphabet and board.
"""
