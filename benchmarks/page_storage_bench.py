"""How often a reload in headless Chromium finds a page's storage empty: localStorage and the tab's
sessionStorage, for a page opened from a file and the same page served on loopback, side by side.

Why the annotation page keeps its work twice (docs/annotation.md): Chromium 156 has given a page
opened from a file an empty localStorage after a reload, while the tab's sessionStorage kept it.

    python benchmarks/page_storage_bench.py --trials 30

Each trial is a fresh browser with a fresh profile: open the page, write one value to both stores,
reload, read both back. Prints one line per way of opening the page, and exits 1 when the tab's
copy was ever lost (what the page relies on).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from headless_chromium import ChromiumPage, find_chromium  # noqa: E402

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><p id="read"></p><script>
document.getElementById("read").textContent = JSON.stringify(
  {local: localStorage.getItem("work"), session: sessionStorage.getItem("work")});
</script></body></html>
"""
WRITE = "localStorage.setItem('work', 'kept'); sessionStorage.setItem('work', 'kept')"
READ = "JSON.parse(document.getElementById('read').textContent)"


def quiet_server(folder: Path) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address) -> None:
            pass  # a browser closed mid-reply (its favicon request, at the end of a trial)

    server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def lost_after_reload(chromium: str, url: str, trials: int) -> Counter[str]:
    """Per store, the trials whose reload found it empty."""
    lost: Counter[str] = Counter()
    for _ in range(trials):
        with ChromiumPage(chromium) as page:
            page.open_url(url)
            page.evaluate(WRITE)
            page.reload()
            read = page.evaluate(READ)
            lost.update(store for store in ("local", "session") if read[store] != "kept")
    return lost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30, help="browsers per way of opening the page (default 30)")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("page_storage_bench: Chromium is not installed (make browser)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ruclevr-storage-") as folder:
        page = Path(folder) / "page.html"
        page.write_text(PAGE, encoding="utf-8")
        server = quiet_server(Path(folder))
        try:
            ways = {"file://": page.as_uri(), "http://127.0.0.1": f"http://127.0.0.1:{server.server_port}/page.html"}
            results = {way: lost_after_reload(chromium, url, args.trials) for way, url in ways.items()}
        finally:
            server.shutdown()
    for way, lost in results.items():
        print(f"{way:18} localStorage empty after reload: {lost['local']:3d}/{args.trials}   "
              f"sessionStorage empty: {lost['session']:3d}/{args.trials}")
    return 1 if any(lost["session"] for lost in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
