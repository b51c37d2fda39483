"""People in the loop: annotation tasks out (``tasks``), crowd answers in (``answers``), human
baseline, agreement and disputed items (``agreement``, ``report``). See docs/annotation.md."""
