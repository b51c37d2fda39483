"""Acceptability filter: scores Russian questions (RuCoLA classifier, morphological checker or none),
keeps the acceptable ones and explains every rejection. Run it as ``python -m filter``."""
