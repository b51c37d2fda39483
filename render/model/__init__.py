"""The scene model, pure Python (no bpy): scene sampling and conditions, the camera, spatial
relations, scene graphs, render settings and visibility judged from an instance mask."""
