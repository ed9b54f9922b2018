"""DPjudge-style `.map` files (the map format of the PyPI `diplomacy` package) read and converted
into ruleval's map data (`rulesets/diplomacy/maps/`); see `import_map.py` and `mapfile.py`."""
