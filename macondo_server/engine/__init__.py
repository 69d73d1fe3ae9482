"""The engine facade: settings, lexica, the Engine over the Cython core, and game replay."""
