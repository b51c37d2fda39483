"""Render engines behind one protocol (``registry``: :class:`RenderBackend`, the engine registry),
what a render gives (``frame``), devices and GPU choice (``devices``), Cycles through Blender
(``blender``, the only bpy importer) and rendering recorded scene graphs again (``rerender``)."""
