"""The question engine: family files (data) instantiated on scene graphs by executing programs.

Entry points for other stages:

- :func:`questions.executor.execute_program` answers a CLEVR-form program on a scene graph;
- :func:`questions.families.load_families` returns the validated families by id;
- ``python -m questions`` writes ``questions.json``; ``python -m questions validate`` checks family files.
"""
