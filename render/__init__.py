"""The render stage: scene sampling and scene graphs (pure Python: ``sampler``, ``camera``,
``relations``, ``scene_graph``), render engines behind one protocol (``engines``; Cycles in
``blender``, the only bpy importer), the worker that renders a scene index to files (``worker``,
``outputs``), the farm that spreads indices over processes, Ray actors and shards (``farm``,
``scheduler``, ``workers``, ``ray_executor``, ``shards``, ``executors``), and the CLI with its
``merge`` and ``verify`` subcommands (``cli``, ``runs``, ``merge``, ``verify``)."""
