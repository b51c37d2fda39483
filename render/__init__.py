"""Scene sampling (pure Python), the Blender adapter (the only bpy importer) and the render CLI."""
